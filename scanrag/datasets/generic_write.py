"""Writing samples in the generic JSONL format (:mod:`scanrag.datasets.generic`): one row a
sample, the inverse of :func:`~scanrag.datasets.generic.sample_from_row`, so a written file
loads back to the same samples."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scanrag.datasets.generic import RESERVED
from scanrag.schemas import Fact, Region, Sample

__all__ = ["sample_to_row", "write_generic"]


def _region_row(region: Region) -> dict[str, Any]:
    out: dict[str, Any] = {
        "page": region.page,
        "bbox": region.bbox.as_list(),
        "element_type": region.element_type,
    }
    if region.text is not None:
        out["text"] = region.text
    if region.doc_id is not None:
        out["doc"] = region.doc_id
    return out


def _fact_row(fact: Fact) -> dict[str, Any]:
    out: dict[str, Any] = {"page": fact.page, "text": fact.text}
    if fact.bbox is not None:
        out["bbox"] = fact.bbox.as_list()
    if fact.region_index is not None:
        out["region_index"] = fact.region_index
    if fact.doc_id is not None:
        out["doc"] = fact.doc_id
    return out


def sample_to_row(sample: Sample) -> dict[str, Any]:
    """One generic-format row for ``sample`` (inverse of :func:`sample_from_row`)."""
    row: dict[str, Any] = {"id": sample.id}
    if len(sample.doc_ids) == 1:
        row["doc"] = sample.doc_ids[0]
    else:
        row["docs"] = list(sample.doc_ids)
    row["question"] = sample.question
    row["answer"] = sample.answer
    row["answer_format"] = sample.answer_format
    row["answerable"] = sample.answerable
    row["evidence_pages"] = list(sample.gold_pages)
    clashing = {k: v for k, v in sample.metadata.items() if k in RESERVED}
    row.update({k: v for k, v in sample.metadata.items() if k not in RESERVED})
    if sample.cited_doc_ids:
        row["cited_docs"] = list(sample.cited_doc_ids)
    if sample.gold_regions:
        row["gold_regions"] = [_region_row(r) for r in sample.gold_regions]
    if sample.gold_facts:
        row["gold_facts"] = [_fact_row(f) for f in sample.gold_facts]
    if sample.gold_chain:
        row["gold_chain"] = [p.model_dump() for p in sample.gold_chain]
    if sample.gold_errors:
        row["gold_errors"] = [
            {
                "family": e.family,
                "description": e.description,
                "pages": list(e.pages),
                "locations": [_region_row(r) for r in e.locations],
                "reasoning_steps": list(e.reasoning_steps),
            }
            for e in sample.gold_errors
        ]
    if sample.gold_explanation is not None:
        row["gold_explanation"] = sample.gold_explanation
    if sample.task != "qa":
        row["task"] = sample.task
    if sample.category is not None:
        row["category"] = sample.category
    if clashing:
        row["metadata"] = clashing
    return row


def write_generic(samples: Iterable[Sample], path: str | os.PathLike[str]) -> Path:
    """Write ``samples`` as generic-format JSONL (UTF-8, one object a line); returns the path.

    The file is written to a temporary name and renamed, so a crash never leaves half a file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for sample in samples:
            fh.write(json.dumps(sample_to_row(sample), ensure_ascii=False) + "\n")
    os.replace(tmp, target)
    return target
