"""Fixtures shared by every test package. Package-specific fixtures live in tests/<pkg>/."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
MAX_SLOWNESS = 20.0  # past this a test that waits on a server had better fail than wait


def machine_slowness() -> float:
    """How many times slower than idle this machine runs now, for tests that wait on a
    model server: runnable processes per core (the 1-minute load average over the cores),
    at least 1, at most :data:`MAX_SLOWNESS`. A 135M model's 2,000-token prompt takes a few
    seconds idle and over two minutes at a load of 16 on 2 cores."""
    load = os.getloadavg()[0]
    return min(MAX_SLOWNESS, max(1.0, load / (os.cpu_count() or 1)))


def sized(seconds: float) -> float:
    """``seconds`` (a wait that suffices on an idle machine) scaled to the machine's
    slowness now: the waits of server tests grow with the load instead of failing."""
    return seconds * machine_slowness()


def load_bench_script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module named ``bench_<name>`` (the scripts are not a
    package; registered in ``sys.modules`` because dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(
        f"bench_{name}", REPO / "benchmarks" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def bench_script() -> Callable[[str], ModuleType]:
    """Loads a benchmark script by name (:func:`load_bench_script`)."""
    return load_bench_script


@pytest.fixture(autouse=True)
def _registered_secrets_forgotten() -> Any:
    """Values registered with the scrubber (keys a test's config reads) stay in their test."""
    yield
    from scanrag.scrub import forget_registered_secrets

    forget_registered_secrets()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def mmlb_dir(shared_dir: Path) -> Path:
    """The 12 real MMLongBench-Doc PDFs and 101 questions (read in place, never copied)."""
    path = shared_dir / "data" / "mmlb-dev"
    if not (path / "questions.jsonl").is_file():
        pytest.skip("mmlb-dev data missing")
    return path


@pytest.fixture(scope="session")
def formats_dir(shared_dir: Path) -> Path:
    return shared_dir / "data" / "formats"


# --------------------------------------------------------------------------- datasets and loaders
# Small PDFs made with PyMuPDF and a JSONL writer (tests/scanrag/datasets, tests/loaders).


def make_pdf(path: Path, pages: int) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for number in range(pages):
        page = doc.new_page(width=300, height=400)
        page.insert_text((40, 60), f"Page body {number + 1}", fontsize=11)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    doc.close()
    return path


@pytest.fixture
def pdf_factory() -> Callable[[Path, int], Path]:
    """``make(path, pages)`` writes a small PDF with that many pages."""
    return make_pdf


@pytest.fixture
def pdf_dir(tmp_path: Path) -> Path:
    """``pdfs/`` with ``a.pdf`` (5 pages) and ``b.pdf`` (3 pages)."""
    folder = tmp_path / "pdfs"
    make_pdf(folder / "a.pdf", 5)
    make_pdf(folder / "b.pdf", 3)
    return folder


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[[list[Any], str], Path]:
    """Write rows (dicts are JSON-encoded, strings written verbatim) to ``tmp_path/name``."""

    def write(rows: list[Any], name: str = "questions.jsonl") -> Path:
        path = tmp_path / name
        lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return write
