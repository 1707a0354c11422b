"""Import DocScope's own inference output (``infer.jsonl`` of ``code/infer/run_infer.py``)
as a ScanRAG run folder that ``scanrag score`` and ``scanrag report`` read.

One ``infer.jsonl`` line is ``{question_id, model, model_raw, thinking, parsed, infer_usage,
status}``; ``status`` is ``"ok"`` or ``"error: ..."`` (then only ``question_id``, ``model`` and
``status`` are present). Each record becomes one trajectory
(:mod:`scanrag.evaluation.docscope.infer_record`):

* the record itself (status, model, ``parsed``) is kept in ``metadata["docscope_infer"]``, so
  the official scoring profile reads exactly what DocScope's scorers read; a record without
  a ``parsed`` block is parsed again with :mod:`scanrag.evaluation.docscope.official.parser`;
* the reply is ``raw_output``; pages, regions, facts, citations and answer are filled from
  ``parsed`` by our rules (a page outside the document or a box outside [0, 1]² makes the
  citation invalid, with the reason kept), so the paper profile scores it like any of our
  trajectories;
* a record whose status is not ``ok`` is a ``model_error`` trajectory; usage goes under
  ``reader``.

Samples come from the benchmark file through the ``docscope`` loader (its ``bbox_units`` and
``split`` options passed on; without ``bbox_units`` the loader's default applies). Lines that
are not JSON are skipped as DocScope's readers skip them, and reported; when a question id
repeats, the last record wins (reported). The run folder gets ``samples.jsonl``, ``datasets.json``,
``trajectories.jsonl`` and ``manifest.json`` (no ``config.resolved.yaml``: nothing was run
here, so scoring uses its defaults and the command's options); an existing run folder with
trajectories is never overwritten.

``profile="official"`` imports the population DocScope's released scorers score: the
benchmark is loaded with the loader's official profile (rows kept as the released code reads
them, samples asking for the official scoring profile); every record is kept, a repeated
question id as its own item (``<id>#2``, ``<id>#3``... with ``metadata["repeat_of"]``), a
question id missing from the benchmark as an item with no gold (its record's ``gold_answer``
and ``gold_pages`` if any, as the released scorers read them), and a record without a
``parsed`` block is read as having none. The manifest records the number of JSON lines of the
file (``summarize_eval.py``'s ``infer.n``) and the grid cell.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from scanrag.evaluation.docscope.gold import NOT_IN_BENCHMARK
from scanrag.evaluation.docscope.infer_record import trajectory_from_record
from scanrag.evaluation.docscope.official.population import official_items
from scanrag.evaluation.docscope.profiles import OFFICIAL_NAME, PROFILES
from scanrag.hashing import file_sha256
from scanrag.schemas import (
    Sample,
    Status,
)


class InferImportError(ValueError):
    """The inputs cannot be imported (missing file, run folder in use)."""


class ImportReport(BaseModel):
    out_dir: Path
    records: int = 0
    ok: int = 0
    errors: int = 0
    samples: int = 0
    profile: str = "paper"
    json_lines: int = 0
    unknown_questions: list[str] = Field(default_factory=list)
    duplicates: list[str] = Field(default_factory=list)
    bad_lines: list[int] = Field(default_factory=list)
    dropped_benchmark_rows: list[str] = Field(default_factory=list)
    missing_pdfs: list[str] = Field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"{self.records} records ({self.ok} ok, {self.errors} inference errors), "
            f"{self.samples} samples → {self.out_dir}"
        ]
        official = self.profile == OFFICIAL_NAME
        notes = {
            "lines that are not JSON (skipped)": [str(n) for n in self.bad_lines],
            (
                "question ids seen again (each record scored, as officially)"
                if official
                else "question ids seen twice (last record kept)"
            ): self.duplicates,
            (
                "question ids not in the benchmark (scored with no gold, as officially)"
                if official
                else "question ids not in the benchmark (scored as skipped)"
            ): self.unknown_questions,
            "benchmark rows the loader dropped": self.dropped_benchmark_rows,
            "PDFs not found (region judging will fail for them)": self.missing_pdfs,
        }
        for label, items in notes.items():
            if items:
                shown = ", ".join(items[:5]) + (", ..." if len(items) > 5 else "")
                out.append(f"warning: {len(items)} {label}: {shown}")
        return out


class InferFile(BaseModel):
    """The lines of an ``infer.jsonl``: every JSON object with its line number, the numbers of
    the lines that are not JSON objects, and how many lines are JSON at all (the released
    summary's ``infer.n``)."""

    records: list[tuple[int, dict[str, Any]]] = Field(default_factory=list)
    bad: list[int] = Field(default_factory=list)
    json_lines: int = 0


def read_lines(path: Path) -> InferFile:
    out = InferFile()
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                out.bad.append(number)
                continue
            out.json_lines += 1
            if isinstance(record, dict):
                out.records.append((number, record))
            else:
                out.bad.append(number)
    return out


def read_infer(path: Path) -> tuple[dict[str, dict[str, Any]], list[int], list[str]]:
    """Records by question id (last wins), numbers of unreadable lines, repeated ids."""
    lines = read_lines(path)
    records: dict[str, dict[str, Any]] = {}
    bad = list(lines.bad)
    repeated: list[str] = []
    for number, record in lines.records:
        if not record.get("question_id"):
            bad.append(number)
            continue
        qid = str(record["question_id"])
        if qid in records:
            repeated.append(qid)
        records[qid] = record
    return records, sorted(bad), repeated


def _num_pages(path: Path) -> int | None:
    from scanrag.datasets import DatasetError, page_count

    try:
        return page_count(path)
    except (DatasetError, OSError):
        return None


def _refuse_empty(infer: Path, lines: InferFile, profile: str) -> None:
    """Refuse a file with nothing to import (no JSON object; under the paper profile, none
    with a ``question_id``) before any folder is made."""
    if profile == OFFICIAL_NAME:
        usable, bad = lines.records, lines.bad
    else:
        usable = [(n, r) for n, r in lines.records if r.get("question_id")]
        bad = sorted([*lines.bad, *(n for n, r in lines.records if not r.get("question_id"))])
    if usable:
        return
    shown = ", ".join(str(n) for n in bad[:5]) + (", ..." if len(bad) > 5 else "")
    what = "JSON objects" if profile == OFFICIAL_NAME else "JSON objects with a question_id"
    detail = f"; lines {shown} are not {what}" if bad else ""
    raise InferImportError(f"{infer} holds no inference record{detail}; nothing to import")


def _paper_items(
    infer: Path, samples: Mapping[str, Sample], report: ImportReport
) -> list[tuple[dict[str, Any], Sample | None]]:
    records, bad, repeated = read_infer(infer)
    report.bad_lines, report.duplicates = bad, repeated
    items: list[tuple[dict[str, Any], Sample | None]] = []
    for qid, record in records.items():
        if qid not in samples:
            report.unknown_questions.append(qid)
        items.append((record, samples.get(qid)))
    return items


def import_infer(
    infer: str | Path,
    benchmark: str | Path,
    out_dir: str | Path,
    *,
    pdf_dir: str | Path | None = None,
    split: str | None = None,
    bbox_units: str | None = None,
    run_key: str | None = None,
    profile: str = "paper",
) -> ImportReport:
    """Write a run folder for ``infer`` scored against ``benchmark``; returns what happened."""
    from scanrag.datasets import DatasetError, load_dataset
    from scanrag.rundir import RunDir

    infer, out = Path(infer), Path(out_dir)
    run = RunDir(out)
    if profile not in PROFILES:
        raise InferImportError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    if not infer.is_file():
        raise InferImportError(
            f"{infer} not found" if not infer.exists() else f"{infer} is not a file"
        )
    if out.exists() and not out.is_dir():
        raise InferImportError(f"--out {out} is a file; give a folder for the new run")
    if run.file(RunDir.TRAJECTORIES).exists():
        raise InferImportError(
            f"{out} already holds a run ({RunDir.TRAJECTORIES}); choose another --out"
        )
    try:
        lines = read_lines(infer)
    except (OSError, UnicodeDecodeError) as exc:
        raise InferImportError(f"cannot read {infer}: {exc}") from exc
    _refuse_empty(infer, lines, profile)
    options: dict[str, Any] = {"validate": False, "split": split}
    if bbox_units is not None:
        options["bbox_units"] = bbox_units
    if profile == OFFICIAL_NAME:
        options["profile"] = OFFICIAL_NAME
    try:
        dataset = load_dataset("docscope", benchmark, pdf_dir, **options)
    except (DatasetError, TypeError, ValueError) as exc:
        raise InferImportError(f"cannot load the benchmark: {exc}") from exc
    samples = {s.id: s for s in dataset.samples}
    report = ImportReport(out_dir=out, profile=profile, json_lines=lines.json_lines)
    report.dropped_benchmark_rows = [f"{d.id or d.row}: {d.reason}" for d in dataset.report.dropped]
    items: list[tuple[dict[str, Any], Sample | None]]
    if profile == OFFICIAL_NAME:
        items = list(
            official_items(lines.records, samples, report.duplicates, report.unknown_questions)
        )
        report.bad_lines = list(lines.bad)
    else:
        items = _paper_items(infer, samples, report)
    report.records = len(items)
    if profile != OFFICIAL_NAME and not any(sample is not None for _, sample in items):
        raise InferImportError(
            f"none of the {len(items)} records of {infer} names a question of {benchmark} "
            f"(first: {items[0][0].get('question_id')!r}); is it the benchmark the inference "
            "ran on?"
        )
    pages_of: dict[str, int | None] = {}
    trajectories = []
    for record, sample in items:
        num_pages = None
        if sample is not None and not sample.metadata.get(NOT_IN_BENCHMARK):
            doc = sample.doc_ids[0]
            if doc not in pages_of:
                pages_of[doc] = _num_pages(dataset.pdf_dir / doc)
                if pages_of[doc] is None:
                    report.missing_pdfs.append(doc)
            num_pages = pages_of[doc]
        traj = trajectory_from_record(
            record,
            sample,
            num_pages=num_pages,
            run_key=run_key,
            sample_id=sample.id if sample is not None else None,
        )
        report.ok += traj.status != Status.MODEL_ERROR
        trajectories.append(traj)
    report.errors = report.records - report.ok
    kept = [s for _, s in items if s is not None]
    report.samples = len(kept)
    out.mkdir(parents=True, exist_ok=True)
    run.write_samples(kept)
    run.write_rows(RunDir.TRAJECTORIES, trajectories)
    run.write_json(
        RunDir.DATASETS,
        [
            {
                "name": dataset.name,
                "source": str(dataset.source),
                "loader": "docscope",
                "options": {"profile": profile},
                "pdf_dir": str(dataset.pdf_dir),
                "report": dataset.report.model_dump(mode="json"),
                "sample_ids": [s.id for s in kept],
                "input_errors": {},
            }
        ],
    )
    run.write_json(
        RunDir.MANIFEST,
        {
            "imported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "importer": "scanrag import docscope-infer",
            "profile": profile,
            "infer": {"path": str(infer), "sha256": file_sha256(infer), "lines": lines.json_lines},
            "run_keys": sorted({t.run_key or t.strategy for t in trajectories}),
            "benchmark": {
                "path": str(benchmark),
                "sha256": file_sha256(dataset.source or benchmark),
            },
            "split": split,
            "bbox_units": bbox_units,
            "samples": report.samples,
        },
    )
    return report
