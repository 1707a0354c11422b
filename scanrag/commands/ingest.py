"""``scanrag ingest PDF...``: read PDFs, print one summary line per file, optionally save them."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ingest",
        help="ingest PDFs: text, words, layout blocks, printed labels, OCR fallback",
        description=(
            "Ingest each PDF and print one line per file: pages, OCR pages and seconds. A file "
            "that cannot be read is reported and the others still run (exit code 1)."
        ),
    )
    parser.add_argument("pdfs", nargs="+", metavar="PDF", type=Path, help="PDF files")
    parser.add_argument(
        "--out", type=Path, help="write OUT/<file>.json per document (and page PNGs, see --dpi)"
    )
    parser.add_argument(
        "--dpi",
        type=int,
        default=None,
        help="render every page to OUT/pages at this resolution (needs --out)",
    )
    parser.add_argument(
        "--ocr",
        choices=("auto", "never", "force"),
        default="auto",
        help="auto: OCR image pages without a text layer (default); force: every page",
    )
    parser.add_argument("--ocr-language", default="eng", help="Tesseract language(s), eng+deu")
    parser.add_argument(
        "--tables",
        choices=("fast", "full", "off"),
        default="fast",
        help="table detection: fast layout heuristic (default), full PyMuPDF finder, off",
    )
    parser.add_argument("--password", help="password for encrypted PDFs")
    parser.add_argument(
        "--render", action="store_true", help="render every page to OUT/pages (at 144 dpi)"
    )
    parser.add_argument(
        "--progress-every",
        type=float,
        default=PROGRESS_EVERY_S,
        metavar="SECONDS",
        help="without a terminal, a progress line on stderr this often (default 30)",
    )
    parser.set_defaults(func=run)


DEFAULT_DPI = 144
PROGRESS_EVERY_S = 30.0


def _summary(name: str, pages: int, ocr_pages: int, bad_pages: list[str], seconds: float) -> str:
    line = f"{name}: {_count(pages, 'page')}, {_count(ocr_pages, 'OCR page')}, {seconds:.2f} s"
    if bad_pages:
        line += f", {_count(len(bad_pages), 'unreadable page')} ({'; '.join(bad_pages)})"
    return line


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _check(args: argparse.Namespace) -> str | None:
    """The argument error, if any."""
    if args.dpi is not None and args.dpi <= 0:
        return f"--dpi must be positive, got {args.dpi}"
    if args.progress_every <= 0:
        return f"--progress-every must be positive, got {args.progress_every}"
    if (args.render or args.dpi is not None) and args.out is None:
        return "rendering pages (--dpi or --render) needs --out"
    return None


def run(args: argparse.Namespace) -> int:
    from scanrag.documents import IngestError, PageRenderer, ingest_pdf, save_document

    problem = _check(args)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from scanrag.documents.parallel import warm_pool_for

    warm_pool_for(list(args.pdfs))  # several long files: read by worker processes once it is up
    render = args.render or args.dpi is not None
    dpi = args.dpi or DEFAULT_DPI
    renderer = PageRenderer(args.out / "pages", dpi=dpi, password=args.password) if render else None
    from scanrag.runner.progress import RunProgress

    failed = 0
    progress = RunProgress(None, interval_s=args.progress_every)
    with progress.stage("ingest", len(args.pdfs)) as stage:
        for path in args.pdfs:
            line = _ingest_one(path, args, renderer, ingest_pdf, save_document, IngestError)
            ok = not line.startswith(f"{path.name}: FAILED")
            failed += int(not ok)
            print(line)
            stage.advance(error=not ok)
    if failed:
        print(f"{failed} of {len(args.pdfs)} files failed", file=sys.stderr)
    return 1 if failed else 0


def _ingest_one(
    path: Path, args: argparse.Namespace, renderer: Any, ingest: Any, save: Any, error: Any
) -> str:
    """Ingest one file (and write its outputs); its summary line, or why it failed."""
    start = time.perf_counter()
    try:
        document = ingest(
            path,
            ocr=args.ocr,
            ocr_language=args.ocr_language,
            tables=args.tables,
            password=args.password,
        )
    except error as exc:
        return f"{path.name}: FAILED {type(exc).__name__}: {exc}"
    except Exception as exc:  # one file must not stop the batch
        return f"{path.name}: FAILED cannot read: {type(exc).__name__}: {exc}"
    try:
        if args.out is not None:
            save(document, args.out / f"{path.name}.json")
        if renderer is not None:
            for page in document.pages:
                renderer.render(document, page.number)
    except Exception as exc:
        return f"{path.name}: FAILED writing output: {type(exc).__name__}: {exc}"
    bad = [f"page {page.number}: {page.error}" for page in document.pages if page.error]
    seconds = time.perf_counter() - start
    return _summary(path.name, document.num_pages, len(document.ocr_pages), bad, seconds)
