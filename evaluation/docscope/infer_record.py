"""One record of DocScope's ``infer.jsonl`` as a ScanRAG trajectory (what
:mod:`scanrag.evaluation.docscope.importer` does for every line of the file).

The record itself (status, model, ``parsed``) is kept in ``metadata["docscope_infer"]`` for the
official scoring profile; pages, regions, facts, citations and answer are filled from
``parsed`` by our validity rules (a page outside the document or a box outside [0, 1]² makes
the citation invalid, with the reason kept); a record without a ``parsed`` block is parsed
again with :mod:`scanrag.evaluation.docscope.official.parser`; a status other than ``ok`` is a
``model_error`` trajectory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from scanrag.evaluation.docscope.official.parser import parse_official
from scanrag.evaluation.docscope.official.view import INFER_KEY
from scanrag.schemas import (
    UNANSWERABLE,
    BBox,
    Citation,
    Fact,
    Region,
    Sample,
    Status,
    Trajectory,
    Usage,
)

STRATEGY = "docscope_infer"
_UNANSWERABLE = re.compile(r"^\W*(?:unanswerable|not answerable)\W*$", re.IGNORECASE)


def _answer(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = re.sub(r"\s+", " ", value).strip()
    if not text:
        return None
    return UNANSWERABLE if _UNANSWERABLE.match(text) else text


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, Mapping):
        return None
    prompt = value.get("prompt_tokens")
    completion = value.get("completion_tokens")
    return Usage(
        calls=1,
        prompt_tokens=int(prompt) if isinstance(prompt, int) else 0,
        completion_tokens=int(completion) if isinstance(completion, int) else 0,
    )


def _span(raw: str, start: Any, end: Any) -> str:
    if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(raw):
        return raw[start:end]
    return ""


def _fill(traj: Trajectory, parsed: Mapping[str, Any], raw: str, num_pages: int | None) -> None:
    """Our trajectory fields from the released ``parsed`` block, by our validity rules."""
    pages: set[int] = set()
    for item in parsed.get("citations") or []:
        if not isinstance(item, Mapping) or not isinstance(item.get("page"), int):
            continue
        page = int(item["page"])
        numbers = item.get("bbox") if isinstance(item.get("bbox"), list) else None
        citation = Citation(
            sentence=str(item.get("sentence") or ""),
            raw=_span(raw, item.get("span_start"), item.get("span_end")),
            page=page,
            doc_page=str(item.get("doc_page")) if item.get("doc_page") is not None else None,
            bbox=[float(v) for v in numbers] if numbers is not None else None,
        )
        traj.citations.append(citation)
        if page < 1 or (num_pages is not None and page > num_pages):
            citation.valid = False
            citation.reason = f"page {page} out of range 1..{num_pages or '?'}"
            continue
        pages.add(page)
        box: BBox | None = None
        if citation.bbox is not None:
            try:
                box = BBox.from_list(citation.bbox)
            except ValueError as exc:
                citation.valid, citation.reason = False, str(exc).splitlines()[0]
        index = None
        if box is not None:
            region = Region(page=page, bbox=box)
            if region not in traj.regions:
                traj.regions.append(region)
            index = traj.regions.index(region)
        text = citation.sentence.strip()
        fact = Fact(page=page, text=text, bbox=box, region_index=index)
        if text and fact not in traj.facts:
            traj.facts.append(fact)
    traj.pages = sorted(pages)
    traj.answer = _answer(parsed.get("answer"))


def trajectory_from_record(
    record: Mapping[str, Any],
    sample: Sample | None,
    *,
    num_pages: int | None = None,
    run_key: str | None = None,
    sample_id: str | None = None,
) -> Trajectory:
    """One ``infer.jsonl`` record as a trajectory (see the module docstring); ``sample_id``
    overrides the record's question id (a repeated record's own item)."""
    qid = sample_id or str(record.get("question_id"))
    model = str(record.get("model") or "unknown")
    status = str(record.get("status"))
    raw = record.get("model_raw") if isinstance(record.get("model_raw"), str) else None
    kept: dict[str, Any] = {"status": status, "model": model}
    traj = Trajectory(
        sample_id=qid,
        strategy=STRATEGY,
        run_key=run_key or f"{STRATEGY}/{model}",
        doc_ids=list(sample.doc_ids[:1]) if sample is not None else [],
        raw_output=raw,
        models={"reader": model},
    )
    usage = _usage(record.get("infer_usage"))
    if usage is not None:
        traj.usage["reader"] = usage
    if isinstance(record.get("thinking"), str) and record["thinking"]:
        kept["thinking_chars"] = len(record["thinking"])
    if status != "ok":
        traj.metadata[INFER_KEY] = kept
        return traj.fail(Status.MODEL_ERROR, status)
    parsed = record.get("parsed")
    kept["parsed"] = dict(parsed) if isinstance(parsed, Mapping) else {}
    if not isinstance(parsed, Mapping):  # our fields from a parse; the official view sees none
        parsed = parse_official(raw or "").model_dump()
        kept["parsed_by"] = "scanrag official parser (the record had no parsed block)"
    traj.metadata[INFER_KEY] = kept
    traj.metadata["parser"] = "docscope_infer"
    _fill(traj, parsed, raw or "", num_pages)
    if traj.answer is None and not traj.pages:
        traj.fail(Status.UNPARSED, "no answer tag and no usable citation in the reply")
    return traj
