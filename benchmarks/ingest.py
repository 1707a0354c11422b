"""Ingestion throughput and memory.

Times ScanRAG ingestion (no rendering, no OCR) against a bare PyMuPDF loop
``for page in doc: page.get_text("words")`` on the same PDFs: generated ones plus every PDF in
the real-document folder. Repeats are interleaved and the best of N is kept for each side.
Then measures peak RSS of a fresh process that ingests a generated 500-page PDF.

    python benchmarks/ingest.py [--pdf-dir DIR] [--repeats 5] [--pages 200] [--busy N]

The last line printed is ``ratio=<scanrag pages/s ÷ raw pages/s>`` on wall-clock time (target
≥ 0.9 with the other cores busy, ≥ 1.5 on an idle 2-core machine) for the batch API
(``ingest_many``), whose worker pool reads long documents on the CPUs free when a batch starts,
or reads them here when fewer than two are (``scanrag.documents.parallel``). ``--busy N`` keeps
N other processes spinning on a CPU each while everything is measured (the machine "with the
other core busy"); the load average is printed beside the figures. ``ratio_one_process`` is
``ingest_pdf`` one document at a time in this process only, and ``ratio_cpu_one_process`` the
same on CPU time, steadier on a shared machine. Peak RSS target is < 1 GiB (a fresh process,
``ingest_pdf``).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PDF_DIR = REPO.parent / "shared" / "data" / "mmlb-dev" / "pdfs"
_WORDS = [
    "retrieval",
    "evidence",
    "page",
    "region",
    "answer",
    "model",
    "figure",
    "table",
    "study",
    "result",
    "method",
    "data",
    "sample",
    "value",
    "growth",
    "report",
    "analysis",
    "section",
    "summary",
    "metric",
    "score",
    "budget",
    "revenue",
]


def generate_pdf(path: Path, pages: int, seed: int = 0, rich: bool = True) -> Path:
    """A PDF of ``pages`` letter pages: heading, paragraphs, a printed page number and, when
    ``rich``, a ruled table and a raster image on alternating pages."""
    import pymupdf

    rng = random.Random(seed)
    doc = pymupdf.open()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 48), False)
    pix.clear_with(180)
    for number in range(1, pages + 1):
        page = doc.new_page(width=612, height=792)
        page.insert_text((72, 80), f"Section {number}: {rng.choice(_WORDS).title()}", fontsize=16)
        body = " ".join(rng.choice(_WORDS) for _ in range(260))
        page.insert_textbox(pymupdf.Rect(72, 100, 540, 400), body, fontsize=10)
        if rich and number % 2 == 0:
            top = 420
            for r in range(6):
                for c in range(4):
                    cell = f"{rng.randint(10, 999)}.{rng.randint(0, 9)}" if r else f"Col {c}"
                    page.insert_text((80 + c * 110, top + 14 + r * 18), cell, fontsize=9)
                page.draw_line((76, top + 18 * r), (516, top + 18 * r))
        elif rich:
            page.insert_image(pymupdf.Rect(150, 430, 450, 650), pixmap=pix)
        page.insert_text((300, 760), str(number), fontsize=10)
    doc.save(path, garbage=3, deflate=True)
    doc.close()
    return path


def raw_loop(paths: Sequence[Path]) -> int:
    import pymupdf

    count = 0
    for path in paths:
        with pymupdf.open(path) as doc:
            for page in doc:
                page.get_text("words")
                count += 1
    return count


def scanrag_loop(paths: Sequence[Path]) -> int:
    """The batch API: long documents are read by the worker pool it starts (see
    ``scanrag.documents.parallel``); the warm-up pass starts it."""
    from scanrag.documents import ingest_many

    return sum(d.num_pages for d in ingest_many(paths, ocr="never").documents)


def scanrag_sequential_loop(paths: Sequence[Path]) -> int:
    """One document at a time in this process (``ingest_pdf`` with no pool running)."""
    from scanrag.documents import ingest_pdf
    from scanrag.documents.parallel import shutdown_pool

    shutdown_pool()
    return sum(ingest_pdf(path, ocr="never").num_pages for path in paths)


def scanrag_no_tables_loop(paths: Sequence[Path]) -> int:
    from scanrag.documents import ingest_many

    return sum(d.num_pages for d in ingest_many(paths, ocr="never", tables="off").documents)


@dataclass
class Timing:
    pages: int = 0
    wall: float = float("inf")  # best wall-clock seconds
    cpu: float = float("inf")  # best CPU seconds of this process (all threads)


def best_of(
    fns: dict[str, Callable[[Sequence[Path]], int]], paths: Sequence[Path], repeats: int
) -> dict[str, Timing]:
    """Best wall and CPU time per function, running them interleaved ``repeats`` times (after
    one warm-up pass each). CPU time is less disturbed by other processes on a busy machine."""
    for fn in fns.values():
        fn(paths)
    best = {name: Timing() for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            wall, cpu = time.perf_counter(), time.process_time()
            pages = fn(paths)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            timing = best[name]
            timing.pages = pages
            timing.wall, timing.cpu = min(timing.wall, wall), min(timing.cpu, cpu)
    return best


_RSS_CHILD = """
import resource, sys, time
from scanrag.documents import ingest_pdf
start = time.perf_counter()
doc = ingest_pdf(sys.argv[1], ocr="never")
words = sum(len(p.words) for p in doc.pages)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
print(doc.num_pages, words, elapsed, peak)
"""


def peak_rss(pdf: Path) -> tuple[int, int, float, float]:
    out = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD, str(pdf)],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    ).stdout.split()
    return int(out[0]), int(out[1]), float(out[2]), int(out[3]) / 1024


class Busy:
    """``count`` processes that each keep one CPU busy until the block ends."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.children: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Busy:
        for _ in range(self.count):
            self.children.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        time.sleep(0.5 if self.count else 0)  # let the load show in /proc/stat
        return self

    def __exit__(self, *exc: object) -> None:
        for child in self.children:
            child.kill()
            child.wait()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pdf-dir",
        type=Path,
        default=Path(os.environ.get("SCANRAG_BENCH_PDFS", DEFAULT_PDF_DIR)),
        help="folder of real PDFs to include (env SCANRAG_BENCH_PDFS)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pages", type=int, default=200, help="pages of the generated PDF")
    parser.add_argument("--rss-pages", type=int, default=500)
    parser.add_argument("--skip-rss", action="store_true")
    parser.add_argument("--busy", type=int, default=0, help="processes spinning meanwhile")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()

    with tempfile.TemporaryDirectory(prefix="scanrag-bench-") as tmp, Busy(args.busy):
        work = Path(tmp)
        paths = [generate_pdf(work / f"generated-{args.pages}.pdf", args.pages)]
        real = sorted(args.pdf_dir.glob("*.pdf")) if args.pdf_dir.is_dir() else []
        if not real:
            print(f"note: no PDFs found in {args.pdf_dir}; generated PDFs only")
        paths += real
        fns = {"raw": raw_loop, "scanrag": scanrag_loop, "no_tables": scanrag_no_tables_loop}
        best = best_of(fns, paths, args.repeats)
        from scanrag.documents.parallel import shutdown_pool

        shutdown_pool()
        one = best_of({"raw": raw_loop, "seq": scanrag_sequential_loop}, paths, args.repeats)
        raw, ours, no_tables, seq = best["raw"], best["scanrag"], best["no_tables"], one["seq"]
        raw = raw if raw.wall <= one["raw"].wall else one["raw"]
        if raw.pages != ours.pages or raw.pages != seq.pages:
            raise SystemExit(f"page counts differ: raw {raw.pages}, scanrag {ours.pages}")
        pages = raw.pages
        print(f"files={len(paths)} pages={pages} repeats={args.repeats} (best of, interleaved)")
        load = " ".join(f"{v:.2f}" for v in (*load_before, *os.getloadavg()))
        print(f"load before/after: {load}; {args.busy} busy process(es) beside")
        rows = (
            ("raw get_text('words')      ", raw),
            ("scanrag ingest_many        ", ours),
            ("  same, tables='off'       ", no_tables),
            ("scanrag ingest_pdf, 1 proc ", seq),
        )
        for label, t in rows:
            print(
                f"{label}: {pages / t.wall:8.1f} pages/s wall ({t.wall:.3f} s), "
                f"{pages / t.cpu:8.1f} pages/s CPU of this process ({t.cpu:.3f} s)"
            )
        print(f"ratio_tables_off={raw.wall / no_tables.wall:.3f}")
        print(f"ratio_one_process={raw.wall / seq.wall:.3f}")
        print(f"ratio_cpu_one_process={raw.cpu / seq.cpu:.3f}")
        if not args.skip_rss:
            big = generate_pdf(work / f"generated-{args.rss_pages}.pdf", args.rss_pages, seed=1)
            big_pages, words, seconds, peak_mib = peak_rss(big)
            verdict = "ok" if peak_mib < 1024 else "OVER 1 GiB"
            print(
                f"peak RSS ingesting {big_pages} pages ({words} words, {seconds:.2f} s): "
                f"{peak_mib:.0f} MiB ({verdict})"
            )
        print(f"ratio={raw.wall / ours.wall:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
