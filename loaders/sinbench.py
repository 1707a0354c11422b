"""SIN-Bench task files ``data/task/{FIND,QA,SUM,VER}.jsonl``.

Common fields: ``task`` (``FIND``, ``QA``, ``SUM``, ``VER``), ``task_id`` (unique within a
task), ``paper_id`` (e.g. ``"1711.06655"`` or ``"PMC3169552"``), ``image_dir`` (the paper's
figure folder) and ``evidence``: a list of ``{"image": "<xN>", "text": ...}`` pairs, a visual
anchor and the text span it supports (stored as a list or as a JSON string). Per task:

* ``FIND`` → task ``find``: ``question``; the evidence is the gold chain.
* ``QA`` → ``chain_qa``: ``question``, ``answer`` and the evidence chain.
* ``SUM`` → ``summary``: no question; ``summary`` holds the gold claims as anchor/text pairs.
  The sample's question is a fixed instruction (:data:`SUMMARY_QUESTION`).
* ``VER`` → ``verify``: ``question`` (the query with a candidate chain written out),
  ``answer`` ``"True"``/``"False"`` (also stored as ``metadata["verdict"]``), the evidence
  chain, and sometimes ``original_question``.

The interleaved paper text (``paper.jsonl``) is not published, so a sample's document is
``<paper_id>.pdf`` in the PDF folder (supply the papers yourself, or load with
``validate=False``). Anchors keep their ``<xN>`` spelling; the chain's pages are unknown.
Sample ids are ``sinbench/<task>-<task_id>`` (``sinbench/find-4``); a row without a
``task_id`` gets ``sinbench/<task>-<hash>``, a hash of its paper, question and evidence, so its
id does not depend on where the row sits in the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scanrag.datasets.base import Dataset, DatasetError
from scanrag.datasets.fields import content_id
from scanrag.datasets.sources import (
    LoadState,
    RowError,
    as_text,
    default_pdf_dir,
    file_name,
    finish_load,
    maybe_json,
    new_sample,
    read_records,
)
from scanrag.parsing import parse_verdict
from scanrag.schemas import EvidencePair, Sample

# SIN-Bench's task names → task types of the task table (scanrag.tasks).
TASKS: dict[str, str] = {
    "FIND": "find",
    "QA": "chain_qa",
    "SUM": "summary",
    "VER": "verify",
}
TASK_FILES = tuple(f"{name}.jsonl" for name in TASKS)
SUMMARY_QUESTION = (
    "Summarize the paper as a list of claims, each supported by the figures it relies on "
    "(cite them by their <xN> markers)."
)
_OWN = frozenset(
    {"task", "task_id", "paper_id", "question", "answer", "evidence", "summary", "image_dir"}
)


def _chain(value: Any, field: str) -> list[EvidencePair]:
    items = maybe_json(value)
    if items is None:
        return []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise RowError(f"{field} must be a list of {{image, text}} objects")
    pairs: list[EvidencePair] = []
    for j, item in enumerate(items):
        anchor = item.get("image", item.get("anchor"))
        if isinstance(anchor, list):
            anchor = ", ".join(str(a) for a in anchor)
        if not isinstance(anchor, str) or not anchor.strip():
            raise RowError(f"{field}[{j}] has no image anchor")
        pairs.append(EvidencePair(anchor=anchor.strip(), text=as_text(item.get("text") or "")))
    return pairs


def _verdict(answer: Any) -> bool:
    verdict = parse_verdict(as_text(answer), strict=True)
    if verdict is not None:
        return verdict
    raise RowError(f"VER answer must be True or False, got {answer!r}")


def _task_name(row: dict[str, Any], fallback: str | None) -> str:
    raw = row.get("task") or fallback
    name = str(raw).strip().upper() if raw is not None else ""
    if name not in TASKS:
        raise RowError(f"task {raw!r} is not one of {', '.join(TASKS)}")
    return name


def sample_id(row: dict[str, Any], task: str, question: str) -> str:
    """``sinbench/<task>-<task_id>``, or a content hash where the row has no ``task_id``."""
    prefix = f"sinbench/{TASKS[task]}-"
    task_id = row.get("task_id")
    if task_id is not None and as_text(task_id).strip():
        return prefix + as_text(task_id).strip()
    evidence = row.get("summary", row.get("evidence")) if task == "SUM" else row.get("evidence")
    return content_id(prefix, as_text(row.get("paper_id")), question, as_text(evidence or ""))


def sample_from_sinbench(
    row: dict[str, Any], task_hint: str | None = None, doc_suffix: str = ".pdf"
) -> Sample:
    """One task-file row as a :class:`Sample`; raises :class:`RowError`."""
    task = _task_name(row, task_hint)
    paper = row.get("paper_id")
    if paper is None or not as_text(paper).strip():
        raise RowError("missing field 'paper_id'")
    metadata = {k: v for k, v in row.items() if k not in _OWN}
    metadata["paper_id"] = as_text(paper).strip()
    if row.get("image_dir"):
        metadata["image_dir"] = row["image_dir"]
    question = row.get("question")
    answer = row.get("answer")
    if task == "SUM":
        chain = _chain(row.get("summary", row.get("evidence")), "summary")
        question = question or SUMMARY_QUESTION
        metadata["question_source"] = "fixed summary instruction"
    else:
        chain = _chain(row.get("evidence"), "evidence")
    if not isinstance(question, str) or not question.strip():
        raise RowError("missing field 'question'")
    if task == "VER":
        metadata["verdict"] = _verdict(answer)
    if task in ("FIND", "QA", "SUM") and not chain:
        raise RowError(f"{task} row has no evidence chain")
    return new_sample(
        id=sample_id(row, task, question),
        doc_ids=[file_name(metadata["paper_id"], doc_suffix)],
        question=question,
        answer=None if answer is None else as_text(answer),
        gold_chain=chain,
        task=TASKS[task],
        category=row.get("new_domain") or row.get("domain"),
        metadata=metadata,
    )


def task_files(path: Path) -> list[Path]:
    """The task files behind ``path``: the file itself, or every ``{FIND,QA,SUM,VER}.jsonl``
    inside the folder (or inside its ``task/`` subfolder)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DatasetError(f"dataset file not found: {path}")
    for folder in (path, path / "task"):
        found = [folder / name for name in TASK_FILES if (folder / name).is_file()]
        if found:
            return found
    raise DatasetError(f"{path} holds none of {', '.join(TASK_FILES)}")


def _hint(source: Path) -> str | None:
    stem = source.stem.upper()
    return stem if stem in TASKS else None


def load_sinbench(
    path: str | os.PathLike[str],
    pdf_dir: str | os.PathLike[str] | None = None,
    *,
    validate: bool = True,
    name: str | None = None,
    tasks: Iterable[str] | None = None,
    doc_suffix: str = ".pdf",
    allow_outside_pdf_dir: bool = False,
) -> Dataset:
    """Load one SIN-Bench task file, or every task file in a folder.

    ``tasks`` keeps only some tasks (``["FIND", "QA"]``; the others are not read).
    ``pdf_dir`` defaults to ``pdfs/`` next to the files or one level up. With several files a
    dropped row's ``row`` is its line index within its own file, and the reason names the file.
    """
    root = Path(path)
    files = task_files(root)
    wanted = {t.strip().upper() for t in tasks} if tasks is not None else set(TASKS)
    unknown = wanted - set(TASKS)
    if unknown:
        raise DatasetError(f"unknown SIN-Bench task(s) {sorted(unknown)}; known: {list(TASKS)}")
    folder = Path(pdf_dir) if pdf_dir is not None else default_pdf_dir(files[0])
    state = LoadState()
    for source in files:
        hint = _hint(source)
        if hint is not None and hint not in wanted:
            continue
        prefix = f"{source.name}: " if len(files) > 1 else ""
        for index, row in state.read(read_records(source)):
            try:
                sample = sample_from_sinbench(row, hint, doc_suffix)
            except RowError as exc:
                state.drop(index, row.get("task_id"), prefix + str(exc))
                continue
            if _task_name(row, hint) not in wanted:
                state.report.rows_read -= 1  # a task the caller did not ask for
                continue
            state.parsed.append((index, sample))
    return finish_load(
        state,
        name=name or "sin-bench",
        source=root,
        pdf_dir=folder,
        loader="sinbench",
        validate=validate,
        allow_outside=allow_outside_pdf_dir,
    )
