"""The report in real headless Chromium: the table is in the DOM, overlays load, screenshots.

Chromium runs with no network features (``--disable-background-networking`` and friends) on
``file://`` URLs. ``--virtual-time-budget`` lets the page finish loading images before the DOM
is dumped; each ``<img>`` of the report sets ``data-loaded="1"`` in its ``onload`` handler.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium(page: Path, profile: Path, *extra: str) -> str:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    command = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_index_table_and_plots_render(report_dir: Path, tmp_path: Path) -> None:
    dom = chromium(
        report_dir / "index.html", tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom"
    )
    assert '<table id="comparison">' in dom
    for label in ("full_doc", "oracle_pages", "topk_rag+bm25"):
        assert label in dom
    plots = re.findall(r'<img src="plots/[^"]+"[^>]*>', dom)
    assert len(plots) == 6 and all('data-loaded="1"' in tag for tag in plots)
    shot = tmp_path / "index.png"
    chromium(
        report_dir / "index.html",
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1280,2000",
    )
    with Image.open(shot) as image:
        assert image.size == (1280, 2000)


def test_viewer_overlays_load_and_show_both_colours(report_dir: Path, tmp_path: Path) -> None:
    page = report_dir / "q" / "q0001.html"
    dom = chromium(page, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom")
    overlays = re.findall(r'<img src="\.\./img/[^"]+"[^>]*>', dom)
    assert overlays and all('data-loaded="1"' in tag for tag in overlays)
    shot = tmp_path / "q0001.png"
    chromium(page, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,2000")
    with Image.open(shot) as image:
        pixels = list(image.convert("RGB").getdata())
    green = sum(1 for r, g, b in pixels if g > 120 and r < 90 and b < 90)
    red = sum(1 for r, g, b in pixels if r > 170 and g < 70 and b < 70)
    assert green > 200 and red > 50, (green, red)
