"""``scanrag retrieve eval``: compare page retrievers on a dataset.

    scanrag retrieve eval --dataset PATH.jsonl [--pdf-dir DIR] --retrievers bm25,dense,hybrid
                          --k 1,3,5,10 [--json] [--cache-dir DIR] [--set dense.model=NAME]
                          [--by source|FIELD]

Each name in ``--retrievers`` is a registered retriever, or an alias whose registered type is
set with ``--set NAME.type=TYPE``; ``--set`` parameters apply to that name, also where a
composite lists it (``--set hybrid.retrievers=["bm25","bge"]``). Rows are read with the
generic dataset loader (``id, doc, question, answer, evidence_pages``; other fields are
ignored here). Every PDF is ingested into the page store (under ``--cache-dir`` when given,
together with the built indexes, else in a temporary folder; pages are read on demand), each
retriever indexes all documents once, and each question searches its own document. The
table has one row per retriever: Recall, Precision, Hit, MRR and nDCG at each k (values for
the ks in order, separated by "/"), index build seconds and query latency p50/p95. When the
questions come from several sources (a file mixing mmlb and financebench rows, say: see
``scanrag.evaluation.retrieval.evaluate.sample_groups``), one more table per retriever gives the
figures per source; ``--by FIELD`` groups on another metadata field instead (``--by
evidence_sources``: per evidence modality). ``--json`` prints the same numbers as one JSON
object, with each question's returned pages and first gold rank per retriever
(``per_question``), so two runs can be compared question by question.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

_METRICS = (("recall", "R"), ("precision", "P"), ("hit", "Hit"), ("mrr", "MRR"), ("ndcg", "nDCG"))


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("retrieve", help="evaluate page retrievers")
    actions = parser.add_subparsers(dest="retrieve_action", metavar="ACTION")
    ev = actions.add_parser("eval", help="score retrievers against gold pages")
    ev.add_argument("--dataset", required=True, type=Path, help="generic-format JSONL file")
    ev.add_argument("--pdf-dir", type=Path, default=None, help="folder of the PDFs")
    ev.add_argument("--retrievers", default="bm25,dense,hybrid", help="comma-separated names")
    ev.add_argument("--k", default="1,3,5,10", help="comma-separated cut-offs")
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    ev.add_argument("--cache-dir", type=Path, default=None, help="cache documents and indexes")
    ev.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME.KEY=VALUE",
        help="retriever parameter (VALUE parsed as JSON when it can be), e.g. bm25.k1=1.2; "
        "NAME.type=TYPE makes NAME an alias of the registered retriever TYPE",
    )
    ev.add_argument("--ocr", choices=("auto", "never", "force"), default="auto")
    ev.add_argument(
        "--limit",
        type=int,
        default=None,
        help="only the first N questions (indexes still hold every document of the dataset)",
    )
    ev.add_argument(
        "--progress-every",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="without a terminal, a progress line on stderr this often (default 30)",
    )
    ev.add_argument(
        "--by",
        default="source",
        metavar="FIELD",
        help="metadata field for per-source figures (default: source, else the id prefix)",
    )
    ev.set_defaults(func=run_eval)
    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def parse_ks(text: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise ValueError(f"--k takes comma-separated integers, got {text!r}") from exc
    if not ks or ks[0] < 1:
        raise ValueError(f"--k values must be positive, got {text!r}")
    return ks


def parse_settings(items: list[str]) -> dict[str, dict[str, Any]]:
    """``["dense.model=x", "hybrid.weights=[1,2]"]`` → ``{"dense": {"model": "x"}, ...}``."""
    settings: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        name, dot, param = key.partition(".")
        if not sep or not dot or not name or not param:
            raise ValueError(f"--set takes NAME.KEY=VALUE, got {item!r}")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        settings.setdefault(name.strip(), {})[param.strip()] = value
    return settings


def run_eval(args: argparse.Namespace) -> int:
    from scanrag.registry import RETRIEVERS, UnknownNameError

    try:
        ks = parse_ks(args.k)
        settings = parse_settings(args.set)
        names = [n.strip() for n in args.retrievers.split(",") if n.strip()]
        for name in names:
            RETRIEVERS.get(settings.get(name, {}).get("type", name))
    except (ValueError, UnknownNameError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from scanrag.evaluation.retrieval.evaluate import alias_specs, evaluate_retrievers

    # every retriever's parameters, composites' components included, before any ingestion
    problems = alias_specs(names, settings).problems(skip=["samples"])
    if problems:
        print("error: retriever parameters:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    from scanrag.datasets import DatasetError, load_generic

    try:
        dataset = load_generic(args.dataset, args.pdf_dir)
    except DatasetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    problem = _report_dropped(dataset, args.dataset)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from scanrag.runner.progress import RunProgress

    samples = dataset.samples[: args.limit] if args.limit else dataset.samples
    progress = RunProgress(
        None, interval_s=args.progress_every if args.progress_every > 0 else None
    )
    with contextlib.ExitStack() as stack:
        if args.cache_dir is not None:
            store_dir = args.cache_dir / "documents"
        else:  # page files for this evaluation only
            store_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="scanrag-")))
        # every document of the dataset, whatever --limit selects: index statistics (BM25's
        # idf, avgdl) must not depend on which questions are asked
        doc_names = sorted({s.primary_doc for s in dataset.samples})
        with progress.stage("ingest", len(doc_names)) as stage:
            documents, failures = _ingest(
                dataset.samples, dataset.pdf_dir, store_dir, args.ocr, stage.advance
            )
        for failure in failures:
            print(f"warning: {failure}", file=sys.stderr)
        usable = sum(1 for s in samples if s.primary_doc in documents)
        with progress.stage("retrieve", usable * len(names)) as stage:
            result = evaluate_retrievers(
                samples,
                documents,
                names,
                ks,
                params=settings,
                cache_dir=args.cache_dir,
                dataset=str(args.dataset),
                group_by=args.by or None,
                advance=stage.advance,
                progress=lambda line: print(line, file=sys.stderr, flush=True),
                phase=stage.set_doing,
            )
    payload = result.model_dump(mode="json")
    payload["dropped_rows"] = len(dataset.report.dropped)
    if args.json:
        print(json.dumps(payload, indent=2))
    elif result.retrievers:
        _print_table(payload)
    for name, error in result.failed.items():
        print(f"error: retriever {name!r} failed: {error}", file=sys.stderr)
    if not result.failed:
        return 0
    return 1 if result.retrievers else 2


def _report_dropped(dataset: Any, path: Path) -> str | None:
    """Warn on stderr about the rows the loader dropped (a missing PDF, a bad field: their
    questions are never scored); the error message when no row is left to evaluate."""
    report = dataset.report
    if report.rows_read == 0:
        return f"{path} holds no rows (the file is empty or blank)"
    if not report.dropped:
        return None
    reasons = "; ".join(f"row {d.row}: {d.reason}" for d in report.dropped[:3])
    more = f"; and {len(report.dropped) - 3} more" if len(report.dropped) > 3 else ""
    if not dataset.samples:
        return (
            f"the loader dropped every one of the {report.rows_read} rows of {path} "
            f"({reasons}{more}); nothing to evaluate (is --pdf-dir right?)"
        )
    print(
        f"warning: {len(report.dropped)} of the {report.rows_read} rows were dropped and are "
        f"not scored ({reasons}{more})",
        file=sys.stderr,
    )
    return None


def _ingest(
    samples: list[Any],
    pdf_dir: Path,
    store_dir: Path,
    ocr: Any,
    advance: Callable[..., None] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Every primary document, its pages in the page store under ``store_dir`` (read on
    demand, never all held in memory); ``advance`` is called once per document."""
    from scanrag.documents import DocumentStore

    names = sorted({s.primary_doc for s in samples})
    by_path = {pdf_dir / name: name for name in names}
    documents, failures = {}, []
    for path, outcome in DocumentStore(store_dir).ingest_many(list(by_path), ocr=ocr):
        if isinstance(outcome, Exception):  # one unreadable PDF must not stop the evaluation
            failures.append(f"{by_path[path]}: {outcome}; its questions are skipped")
        else:
            documents[by_path[path]] = outcome
        if advance is not None:
            advance(error=isinstance(outcome, Exception))
    return dict(sorted(documents.items())), failures


def _print_table(payload: dict[str, Any]) -> None:
    from rich.table import Table

    from scanrag.runner.summary_table import table_console

    ks = payload["ks"]
    suffix = "/".join(map(str, ks))
    table = Table(
        title=f"{payload['dataset']}: {payload['n_scored']} questions scored, "
        f"{payload['n_without_gold']} without gold pages, {payload['n_skipped']} skipped"
        + (f", {payload['dropped_rows']} rows dropped" if payload.get("dropped_rows") else "")
    )
    table.add_column("retriever")
    for _, short in _METRICS:
        table.add_column(f"{short}@{suffix}", justify="right", overflow="fold")
    for column in ("build s", "p50 ms", "p95 ms"):
        table.add_column(column, justify="right")
    for name, run in payload["retrievers"].items():
        cells = [
            "/".join(f"{run['macro'].get(f'{metric}@{k}', 0.0):.3f}" for k in ks)
            for metric, _ in _METRICS
        ]
        build = f"{run['build_s']:.2f}" + (" (cached)" if run["index_cached"] else "")
        table.add_row(
            name, *cells, build, f"{run['latency_p50_ms']:.1f}", f"{run['latency_p95_ms']:.1f}"
        )
    tables = [table, *([_group_table(payload)] if payload.get("groups") else [])]
    console = table_console(*tables)
    for printed in tables:
        console.print(printed)


def _group_table(payload: dict[str, Any]) -> Any:
    from rich.table import Table

    ks = payload["ks"]
    suffix = "/".join(map(str, ks))
    table = Table(title=f"per {payload['group_by']} (questions scored per group)")
    table.add_column("retriever")
    table.add_column(payload["group_by"])
    table.add_column("n", justify="right")
    for _, short in _METRICS:
        table.add_column(f"{short}@{suffix}", justify="right", overflow="fold")
    for name, run in payload["retrievers"].items():
        for group, figures in run["by_group"].items():
            cells = [
                "/".join(f"{figures.get(f'{metric}@{k}', 0.0):.3f}" for k in ks)
                for metric, _ in _METRICS
            ]
            table.add_row(name, group, str(payload["groups"].get(group, 0)), *cells)
    return table
