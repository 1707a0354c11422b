"""``scanrag import docscope-infer INFER.jsonl --benchmark benchmark.json --out RUN_DIR``.

Turns the ``infer.jsonl`` written by DocScope's own ``run_infer.py`` into a run folder;
``scanrag score RUN_DIR`` then scores it (with ``--profile official`` every record counts as
DocScope's released scorers count it and the scorers use the official profile; add the
``*_official`` scorers, e.g. ``--scorers pages,region,fact,answer,pages_official,
region_official,fact_official,answer_official``, to see both profiles side by side) and
``scanrag report RUN_DIR`` reports it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_USAGE = 0, 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "import",
        help="turn another tool's output into a run folder (docscope-infer)",
        description="Turn another tool's output into a ScanRAG run folder.",
    )
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    infer = kinds.add_parser(
        "docscope-infer",
        help="infer.jsonl written by DocScope's run_infer.py",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    infer.add_argument("infer", type=Path, metavar="INFER.jsonl")
    infer.add_argument("--benchmark", type=Path, required=True, help="DocScope benchmark.json")
    infer.add_argument("--out", type=Path, required=True, metavar="RUN_DIR", help="new run folder")
    infer.add_argument("--pdf-dir", type=Path, help="PDF folder (default: the loader's)")
    infer.add_argument("--split", choices=["test", "dev"], help="keep one split")
    infer.add_argument("--bbox-units", help="how benchmark boxes are written (loader option)")
    infer.add_argument("--run-key", help="grid-cell name (default: docscope_infer/<model>)")
    infer.add_argument(
        "--profile",
        choices=["paper", "official"],
        default="paper",
        help="official: keep every record and benchmark row as DocScope's released scorers "
        "do, and score them with the official profile by default (docs/docscope-scoring.md)",
    )
    infer.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from scanrag.evaluation.docscope.importer import InferImportError, import_infer

    try:
        report = import_infer(
            args.infer,
            args.benchmark,
            args.out,
            pdf_dir=args.pdf_dir,
            split=args.split,
            bbox_units=args.bbox_units,
            run_key=args.run_key,
            profile=args.profile,
        )
    except InferImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    lines = report.lines()
    print(lines[0])
    for line in lines[1:]:
        print(line, file=sys.stderr)
    return EXIT_OK
