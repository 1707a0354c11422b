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
        "--out", type=Path, help="write OUT/<file>.json per document (and PNGs with --render)"
    )
    parser.add_argument("--dpi", type=int, default=144, help="render resolution (default 144)")
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
        "--render", action="store_true", help="also render every page to OUT/pages at --dpi"
    )
    parser.set_defaults(func=run)


def _summary(name: str, pages: int, ocr_pages: int, page_errors: int, seconds: float) -> str:
    line = f"{name}: {_count(pages, 'page')}, {_count(ocr_pages, 'OCR page')}, {seconds:.2f} s"
    if page_errors:
        line += f", {_count(page_errors, 'unreadable page')}"
    return line


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def run(args: argparse.Namespace) -> int:
    from scanrag.documents import IngestError, PageRenderer, ingest_pdf, save_document

    if args.dpi <= 0:
        print(f"error: --dpi must be positive, got {args.dpi}", file=sys.stderr)
        return 2
    if args.render and args.out is None:
        print("error: --render needs --out", file=sys.stderr)
        return 2
    renderer = (
        PageRenderer(args.out / "pages", dpi=args.dpi, password=args.password)
        if args.render
        else None
    )
    failed = 0
    for path in args.pdfs:
        start = time.perf_counter()
        try:
            document = ingest_pdf(
                path,
                ocr=args.ocr,
                ocr_language=args.ocr_language,
                tables=args.tables,
                password=args.password,
            )
            if args.out is not None:
                save_document(document, args.out / f"{path.name}.json")
            if renderer is not None:
                for page in document.pages:
                    renderer.render(document, page.number)
        except IngestError as exc:
            failed += 1
            print(f"{path.name}: FAILED {type(exc).__name__}: {exc}")
            continue
        except OSError as exc:
            failed += 1
            print(f"{path.name}: FAILED cannot write output: {exc}")
            continue
        errors = sum(1 for page in document.pages if page.error)
        seconds = time.perf_counter() - start
        print(_summary(path.name, document.num_pages, len(document.ocr_pages), errors, seconds))
    if failed:
        print(f"{failed} of {len(args.pdfs)} files failed", file=sys.stderr)
    return 1 if failed else 0
