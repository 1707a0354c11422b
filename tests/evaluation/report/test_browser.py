"""The report in real headless Chromium: the table is in the DOM, overlays and plots load, errors
look different from wrong answers, the question list filters, sorts and searches (state in the
address), a question page shows the raw reply and the prompt; screenshots.

Chromium runs with no network features (``--disable-background-networking`` and friends) on
``file://`` URLs. ``--virtual-time-budget`` lets the page finish loading images before the DOM
is dumped; each ``<img>`` of the report sets ``data-loaded="1"`` in its ``onload`` handler.
"""

from __future__ import annotations

import os
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


def test_viewer_overlays_load_and_show_both_colors(report_dir: Path, tmp_path: Path) -> None:
    page = report_dir / "q" / "q0001.html"
    dom = chromium(page, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom")
    overlays = re.findall(r'<img src="\.\./img/[^"]+"[^>]*>', dom)
    assert overlays and all('data-loaded="1"' in tag for tag in overlays)
    shot = tmp_path / "q0001.png"  # tall enough for every cell's section (config order)
    chromium(page, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,6000")
    with Image.open(shot) as image:
        pixels = list(image.convert("RGB").getdata())
    green = sum(1 for r, g, b in pixels if g > 120 and r < 90 and b < 90)
    red = sum(1 for r, g, b in pixels if r > 170 and g < 70 and b < 70)
    assert green > 200 and red > 50, (green, red)


PURPLE = (107, 63, 160)  # the error badge


def _shot(page: str, profile: Path, target: Path, height: int = 1600) -> Image.Image:
    size = f"--window-size=1280,{height}"
    chromium_url(page, profile, "--virtual-time-budget=5000", f"--screenshot={target}", size)
    _keep(target)
    return Image.open(target).convert("RGB")


def _keep(path: Path) -> None:
    """Copy a screenshot to $SCANRAG_SCREENSHOTS, to look at: ``SCANRAG_SCREENSHOTS=DIR
    pytest -m browser``."""
    keep = os.environ.get("SCANRAG_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)


def _bottom(image: Image.Image, height: int) -> Image.Image:
    """The last ``height`` pixels of a page's content (white below it is cut off)."""
    box = image.convert("L").point(lambda v: 255 if v < 250 else 0).getbbox()
    end = box[3] if box else image.height
    return image.crop((0, max(0, end - height), image.width, end))


def chromium_url(url: str, profile: Path, *extra: str) -> str:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    command = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _count(image: Image.Image, color: tuple[int, int, int], tol: int = 30) -> int:
    return sum(
        1 for p in image.getdata() if all(abs(a - b) <= tol for a, b in zip(p, color, strict=True))
    )


def test_errors_look_different_from_wrong_answers(error_report: Path, tmp_path: Path) -> None:
    index = error_report / "index.html"
    whole = _shot(index.resolve().as_uri(), tmp_path / "p", tmp_path / "errors.png", 7000)
    top, listing = whole.crop((0, 0, 1280, 900)), _bottom(whole, 700)
    listing.save(tmp_path / "errors_list.png")
    _keep(tmp_path / "errors_list.png")
    assert _count(top, PURPLE) > 150  # error badges and error counts in the comparison
    assert _count(listing, PURPLE) > 300  # a badge per failed cell of the question list
    assert _count(listing, (192, 0, 0), tol=40) > 20  # wrong answers stay red crosses
    dom = chromium_url(
        index.resolve().as_uri(), tmp_path / "p", "--virtual-time-budget=3000", "--dump-dom"
    )
    assert dom.count('data-outcome="error"') == 6 and dom.count('data-outcome="unanswered"') == 3


def test_filter_sort_and_search_work_in_the_browser(error_report: Path, tmp_path: Path) -> None:
    url = (error_report / "index.html").resolve().as_uri()

    def visible(fragment: str) -> list[str]:
        dom = chromium_url(
            url + fragment, tmp_path / "p", "--virtual-time-budget=3000", "--dump-dom"
        )
        rows = re.findall(r'<tr data-search="(synth-[\w-]+)[^"]*"( hidden="")?>', dom)
        return [sid for sid, hidden in rows if not hidden]

    assert visible("") == [f"synth-s3-d0{d}-q0{q}" for d in (0, 1) for q in (1, 2, 3)]
    assert visible("#outcome=error&cell=full_doc&sort=1:desc") == [
        "synth-s3-d00-q02",
        "synth-s3-d00-q01",
    ]
    assert visible("#outcome=kind:unparsed") == ["synth-s3-d00-q02"]
    assert visible("#outcome=unanswered") == ["synth-s3-d00-q03"]
    assert visible("#q=orchard") == ["synth-s3-d00-q02"]
    by_outcome = visible("#cell=topk_rag%2Bbm25&sort=8:asc")  # correct first, errors last
    assert by_outcome[-2:] == ["synth-s3-d00-q01", "synth-s3-d00-q02"]
    shot = _shot(url + "#outcome=not-correct&sort=1:desc", tmp_path / "p", tmp_path / "f.png", 7000)
    listing = _bottom(shot, 700)  # the window is taller than the page: the list is at its end
    listing.save(tmp_path / "filtered_list.png")
    _keep(tmp_path / "filtered_list.png")
    assert _count(listing, PURPLE) > 150  # the failed items, shown first after sorting


def test_question_page_shows_reply_and_prompt(error_report: Path, tmp_path: Path) -> None:
    page = error_report / "q" / "q0002.html"
    opened = page.with_name("q0002_open.html")  # the same page with the prompt expanded
    opened.write_text(
        page.read_text(encoding="utf-8").replace('<details class="prompt">', "<details open>")
    )
    dom = chromium_url(
        opened.resolve().as_uri(), tmp_path / "p", "--virtual-time-budget=3000", "--dump-dom"
    )
    assert "Hmm &lt;b&gt;not sure&lt;/b&gt;" in dom and "<b>not sure</b>" not in dom
    assert "Question: In Table 4" in dom
    shot = _shot(opened.resolve().as_uri(), tmp_path / "p", tmp_path / "question_prompt.png")
    assert _count(shot, PURPLE) > 50  # the unparsed badge at the top of each cell
    assert _count(shot, (246, 246, 248), tol=2) > 20000  # the reply and prompt blocks


WIDTHS = (1280, 2560)
PROBE = """<script>window.addEventListener('load', function () {{
  var out = (function () {{ {body} }})();
  var pre = document.createElement('pre'); pre.id = 'probe';
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
}});</script>"""


def measure(page: Path, body: str, width: int, profile: Path) -> object:
    """Run ``body`` (JavaScript returning a JSON value) in ``page`` once it has loaded, in a
    ``width`` px wide window; returns the value. The page is copied beside itself with the
    probe added, so its relative links still resolve."""
    import json

    probe = page.with_name(f".probe-{width}-{page.name}")
    text = page.read_text(encoding="utf-8")
    probe.write_text(text.replace("</body>", PROBE.format(body=body) + "</body>"), "utf-8")
    dom = chromium(
        probe, profile, f"--window-size={width},1600", "--virtual-time-budget=5000", "--dump-dom"
    )
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.DOTALL)
    assert found is not None, dom[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


TABLES = """
  return Array.from(document.querySelectorAll('table[id^="comparison"]')).map(function (t) {
    var box = t.parentNode;
    return {id: t.id, table: t.scrollWidth, box: box.clientWidth,
            scrolls: box.scrollWidth > box.clientWidth + 1};
  }).concat([{id: 'body', table: document.body.clientWidth, box: window.innerWidth,
              scrolls: document.documentElement.scrollWidth > window.innerWidth + 1}]);
"""


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_uses_the_window_and_the_tables_do_not_scroll(
    report_dir: Path, tmp_path: Path, width: int
) -> None:
    """No 1,400 px cap: the page takes the window's width, and each comparison table (outcomes
    and answers, evidence, cost and time) fits it without a horizontal scroll bar."""
    found = measure(report_dir / "index.html", TABLES, width, tmp_path / "profile")
    assert isinstance(found, list)
    tables = {t["id"]: t for t in found}
    assert {"comparison", "comparison-evidence", "comparison-cost"} <= set(tables)
    assert not [t for t in found if t["scrolls"]], found
    assert tables["body"]["table"] > width - 100  # the page is as wide as the window


LABELS = """
  var boxes = Array.from(document.querySelectorAll('g[id^="point-label-"]')).map(function (g) {
    var r = g.getBoundingClientRect();
    return {id: g.id, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
  });
  var overlaps = [];
  boxes.forEach(function (a, i) { boxes.slice(i + 1).forEach(function (b) {
    var w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
    var h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
    if (w > 0.5 && h > 0.5) overlaps.push([a.id, b.id]);
  }); });
  return {labels: boxes.length, overlaps: overlaps,
          empty: boxes.filter(function (b) { return b.x1 - b.x0 < 1; }).length};
"""


@pytest.mark.parametrize("width", WIDTHS)
def test_cost_and_latency_labels_do_not_overlap_in_the_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """Five cells on one spot (the case that overprinted): the label boxes Chromium lays out
    from the SVG's text overlap nowhere, at either window width."""
    from test_plots import crowded_cost_plot

    svg = crowded_cost_plot(tmp_path / "cost_latency.png", monkeypatch).with_suffix(".svg")
    page = tmp_path / "plot.html"
    inline = svg.read_text(encoding="utf-8").split("?>", 1)[-1]
    page.write_text(
        f'<html><body style="margin:0"><div style="width:100%">{inline}</div></body></html>',
        encoding="utf-8",
    )
    found = measure(page, LABELS, width, tmp_path / "profile")
    assert isinstance(found, dict)
    assert found["labels"] == 10 and found["empty"] == 0, found
    assert found["overlaps"] == [], found


def test_the_report_shows_the_svg_plots(report_dir: Path) -> None:
    index = (report_dir / "index.html").read_text(encoding="utf-8")
    assert '<img src="plots/cost_latency.svg"' in index
    svg = (report_dir / "plots" / "cost_latency.svg").read_text(encoding="utf-8")
    assert svg.count('id="point-label-cost-') == 3 and "<text" in svg
