"""``scanrag synth OUT_DIR``: write a seeded synthetic long-document corpus."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "synth",
        help="generate a synthetic PDF corpus with exact gold evidence",
        description=(
            "Write OUT_DIR/pdfs/*.pdf, OUT_DIR/samples.jsonl (generic dataset format) and "
            "OUT_DIR/manifest.json. The same seed gives byte-identical files."
        ),
    )
    parser.add_argument("out_dir", metavar="OUT_DIR", help="folder to write the corpus into")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--docs", type=int, default=4, help="number of PDFs (default 4)")
    parser.add_argument("--min-pages", type=int, default=20, help="fewest pages (default 20)")
    parser.add_argument("--max-pages", type=int, default=40, help="most pages (default 40)")
    parser.add_argument(
        "--questions", type=int, default=6, help="QA questions per document (default 6)"
    )
    parser.add_argument(
        "--scan-docs",
        type=int,
        default=1,
        help="documents with planted inconsistencies, counted within --docs (default 1)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from scanrag.synth import generate_corpus, read_manifest

    start = time.perf_counter()
    try:
        out = generate_corpus(
            args.out_dir,
            seed=args.seed,
            n_docs=args.docs,
            min_pages=args.min_pages,
            max_pages=args.max_pages,
            questions_per_doc=args.questions,
            scan_docs=args.scan_docs,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write {args.out_dir}: {exc}", file=sys.stderr)
        return 1
    manifest = read_manifest(out) or {}
    docs = manifest.get("documents", [])
    pages = sum(int(d["pages"]) for d in docs)
    count = manifest.get("samples", {}).get("count", 0)
    for doc in docs:
        print(f"{doc['file']}: {doc['pages']} pages ({doc['topic']})")
    elapsed = time.perf_counter() - start
    print(f"wrote {len(docs)} PDFs ({pages} pages) and {count} samples to {out} in {elapsed:.1f} s")
    return 0
