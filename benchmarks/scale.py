"""Scale figures: memory against corpus size, ingestion on every core, 10k-item runs, Ray.

    python benchmarks/scale.py [--quick] [--parts memory,ingest,runner,ray] [--work DIR]
        [--memory-pages 3000,18000,60000] [--ingest-generated 2 --ingest-pages 150]
        [--runner-items 10000 --kill-at 5000 --concurrency 8 --delay 0.3]
        [--ray-pages 3000 --dense-pages 180] [--repeats 3]

``--quick`` is a smoke run of every part at a small size (a few hundred pages, 90 items, one
repeat, no dense build, no real PDFs; about a minute): its figures prove the script works and
mean nothing as measurements. Options given beside it still apply.

Each part prints its figures and ``key=value`` lines (see the part's module):

* ``memory`` (:mod:`scale_memory`): peak RSS of ``scanrag retrieve eval --retrievers bm25``
  on generated corpora of the given page counts, and what it holds beyond the BM25 index,
  per page (target ≤ 10 KB per page);
* ``ingest`` (:mod:`scale_ingest`): ingestion against raw single-thread PyMuPDF, with the
  worker pool (target ≥ 1.6×) and in one process (target ≥ 0.9×), byte-identical output;
* ``runner`` (:mod:`scale_runner`): a 10,000-item run with a 300 ms simulated model
  (efficiency ≥ 0.95, RSS growth < 50 MB) and a resume after ``kill -9`` (first new row ≤ 5 s);
* ``ray`` (:mod:`scale_ray`): ingest + BM25 build on a local 2-CPU Ray against one
  single-threaded process (target ≥ 1.6×, identical results), and the dense build's ratio.

Generated corpora are kept under ``--work`` (default: a folder in the system's temporary
directory) and reused. The last line printed is the machine's load average: every figure
here is measured on whatever the machine's other tenants leave.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scale_corpus  # noqa: E402

REPO = HERE.parent
DEFAULT_PDF_DIR = REPO.parent / "shared" / "data" / "mmlb-dev" / "pdfs"
PARTS = ("memory", "ingest", "runner", "ray")
QUICK = {
    "memory_pages": "300,900",
    "pages_per_doc": 30,
    "pdf_dir": None,
    "ingest_generated": 1,
    "ingest_pages": 24,
    "runner_items": 90,
    "kill_at": 30,
    "concurrency": 2,
    "delay": 0.2,
    "ray_pages": 120,
    "dense_pages": 0,
    "repeats": 1,
}


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def run_memory(work: Path, sizes: Sequence[int], pages_per_doc: int) -> None:
    import scale_memory

    print(scale_memory.HEADER)
    rows = []
    for pages in sizes:
        corpus = work / f"corpus-{pages}-{pages_per_doc}"
        scale_corpus.generate(corpus, pages, pages_per_doc)
        rows.append(scale_memory.measure(corpus))
        scale_memory.print_row(rows[-1])
    scale_memory.print_slopes(rows)


def run_ingest(work: Path, pdf_dir: Path | None, generated: int, pages: int, repeats: int) -> None:
    import scale_ingest

    folder = work / "ingest"
    folder.mkdir(parents=True, exist_ok=True)
    paths = scale_ingest.batch(folder, pdf_dir, generated, pages)
    scale_ingest.print_ingest(scale_ingest.measure(paths, repeats))


def run_runner(items: int, kill_at: int, concurrency: int, delay: float) -> None:
    import scale_runner

    scale_runner.print_runner(scale_runner.measure(items, concurrency, delay, kill_at))


def run_ray(work: Path, pages: int, dense_pages: int, pages_per_doc: int, repeats: int) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        print("ray: not installed (pip install 'ray[default]'); part skipped")
        return
    import scale_ray

    corpus = work / f"corpus-{pages}-{pages_per_doc}"
    scale_corpus.generate(corpus, pages, pages_per_doc)
    paths = sorted((corpus / "pdfs").glob("*.pdf"))
    dense = paths[: max(0, dense_pages // pages_per_doc)] if dense_pages else []
    scale_ray.print_ray(scale_ray.measure(paths, dense, repeats))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run of every part")
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--work", type=Path, default=None, help="where corpora are kept")
    parser.add_argument("--memory-pages", default="3000,18000,60000")
    parser.add_argument("--pages-per-doc", type=int, default=60)
    parser.add_argument("--pdf-dir", type=Path, default=DEFAULT_PDF_DIR)
    parser.add_argument("--ingest-generated", type=int, default=2)
    parser.add_argument("--ingest-pages", type=int, default=150)
    parser.add_argument("--runner-items", type=int, default=10_000)
    parser.add_argument("--kill-at", type=int, default=5_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.3)
    parser.add_argument("--ray-pages", type=int, default=3000)
    parser.add_argument("--dense-pages", type=int, default=180)
    parser.add_argument("--repeats", type=int, default=3)
    if parser.parse_known_args(argv)[0].quick:
        parser.set_defaults(**QUICK)
    args = parser.parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)  # figures show as each part finishes
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown parts {unknown}; known: {', '.join(PARTS)}")
    with tempfile.TemporaryDirectory(prefix="scanrag-scale-") as tmp:
        default = Path(tmp) if args.quick else Path(tempfile.gettempdir()) / "scanrag-scale"
        work = args.work or default
        work.mkdir(parents=True, exist_ok=True)
        run_parts(args, parts, work)
    return 0


def run_parts(args: argparse.Namespace, parts: Sequence[str], work: Path) -> None:
    started = time.perf_counter()
    if "memory" in parts:
        run_memory(work, _ints(args.memory_pages), args.pages_per_doc)
    if "ingest" in parts:
        run_ingest(work, args.pdf_dir, args.ingest_generated, args.ingest_pages, args.repeats)
    if "runner" in parts:
        run_runner(args.runner_items, args.kill_at, args.concurrency, args.delay)
    if "ray" in parts:
        run_ray(work, args.ray_pages, args.dense_pages, args.pages_per_doc, args.repeats)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"elapsed={time.perf_counter() - started:.0f}s load_average={load}")


if __name__ == "__main__":
    sys.exit(main())
