"""What the official profile reads from a trajectory, and how it reads a judge's reply.

DocScope's released scorers read an ``infer.jsonl`` record: its ``status``, the raw reply
``model_raw`` and the ``parsed`` block. :func:`official_view` gives the same fields for any
trajectory:

* imported from ``infer.jsonl`` (``metadata["docscope_infer"]``, see
  :mod:`scanrag.evaluation.docscope.importer`): the record's own ``parsed`` block and status;
* written by our free-text reader (``metadata["parser"] == "citations"``): the raw reply run
  through :mod:`scanrag.evaluation.docscope.official.parser`; when the strategy adopted evidence
  gathered in earlier steps (``metadata["evidence_source"]``), those citations are added,
  since the final reply alone does not hold them;
* anything else (JSON output, no raw reply): the trajectory's own citations, pages and answer.

Inference errors. The released scorers leave out every record whose status is not ``ok``
(the model call failed); a reply that could not be parsed is still ``ok`` there. So a
trajectory counts here when its status is ``ok`` or ``unparsed`` and is left out otherwise.

Judge replies. The released scorers take the first of: the whole reply as JSON, a fenced
block holding one object, the text from the first ``{`` to the last ``}``; an answer verdict
must be a JSON boolean, and each gold box or fact is looked up by its exact id with a label
from the exact label set. Anything else makes that one box or fact a ``judge_parse_error``.

Judge requests (:func:`official_judge`, the profile's ``call_shape``): ``json`` (the default)
asks for JSON with ``response_format`` (the open schema :class:`AnyReply`) and the configured
seed and temperature, so a judge that supports structured output cannot answer in prose;
``official`` sends what the released scripts send (:func:`official_request`): no
``response_format``, no seed, the cap as ``max_completion_tokens`` (2048), temperature 0 for
the text judges and none for the region judge. A prose reply is then possible, and is the
``judge_parse_error`` the released code records.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scanrag.evaluation.docscope.official.parser import is_normalized, parse_official
from scanrag.evaluation.judging import unreadable
from scanrag.schemas import Status, Trajectory

INFER_KEY = "docscope_infer"
OK_STATUSES = frozenset({Status.OK.value, Status.UNPARSED.value})
JUDGE_MAX_TOKENS = 2048  # every released judge call asks for at most 2048 tokens
REGION_ROLE = "region"  # the released region judge sends no temperature
_FENCED_OBJECT = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


Page = int | float | str  # a cited page as written in a ``parsed`` block (ints, normally)


class ViewCitation(BaseModel):
    page: Page
    bbox: list[int | float] = Field(default_factory=list)
    is_normalized: bool = False


class OfficialView(BaseModel):
    """A trajectory as the released scorers would see its ``infer.jsonl`` record."""

    ok: bool
    status: str
    raw: str = ""
    answer: str | None = None
    has_answer_tag: bool = False
    predicted_pages: list[Page] = Field(default_factory=list)
    citations: list[ViewCitation] = Field(default_factory=list)
    source: str

    def boxes_on(self, page: Page) -> tuple[list[list[int | float]], list[list[int | float]]]:
        """Four-number boxes cited on ``page``, as written and duplicates kept: (drawn,
        skipped), where only boxes flagged ``is_normalized`` (every number in [-0.01, 1.5]
        when the parser set it) are drawn."""
        drawn: list[list[int | float]] = []
        skipped: list[list[int | float]] = []
        for citation in self.citations:
            if citation.page != page or len(citation.bbox) != 4:
                continue
            (drawn if citation.is_normalized else skipped).append(list(citation.bbox))
        return drawn, skipped

    @property
    def model_answer(self) -> str:
        """What the answer judge sees: the tagged answer, else the whole reply."""
        if self.has_answer_tag and self.answer:
            return self.answer
        return self.raw


def _page(value: Any) -> Page | None:
    """A page value as the released code compares it (``==``); containers and flags are none."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    return value


def _numbers(value: Any) -> list[int | float]:
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, int | float) and not isinstance(v, bool)]


def _from_dicts(items: Iterable[Any]) -> list[ViewCitation]:
    """Citations of a ``parsed`` block; a citation without the ``is_normalized`` flag is not
    drawn (the released scorer reads a missing flag as false)."""
    out = []
    for item in items:
        if not isinstance(item, Mapping) or (page := _page(item.get("page"))) is None:
            continue
        bbox = _numbers(item.get("bbox"))
        if isinstance(item.get("bbox"), list) and len(bbox) != len(item["bbox"]):
            bbox = []  # a box with a non-number in it is neither drawn nor skipped
        flag = bool(item.get("is_normalized", False))
        out.append(ViewCitation(page=page, bbox=bbox, is_normalized=flag))
    return out


def _from_trajectory(trajectory: Trajectory) -> list[ViewCitation]:
    out = []
    for citation in trajectory.citations:
        if citation.page is None:
            continue
        bbox = [float(v) for v in citation.bbox] if citation.bbox is not None else []
        out.append(ViewCitation(page=citation.page, bbox=bbox, is_normalized=is_normalized(bbox)))
    return out


def _sorted_pages(values: Iterable[Any]) -> list[Page]:
    pages = {p for v in values if (p := _page(v)) is not None}
    return sorted(pages, key=lambda p: (isinstance(p, str), str(p) if isinstance(p, str) else p))


def official_view(trajectory: Trajectory) -> OfficialView:
    """The fields the official profile scores (see the module docstring for the sources)."""
    record = trajectory.metadata.get(INFER_KEY)
    raw = trajectory.raw_output or ""
    if isinstance(record, Mapping):
        status = str(record.get("status"))
        parsed = record.get("parsed") if isinstance(record.get("parsed"), Mapping) else {}
        assert isinstance(parsed, Mapping)
        answer = parsed.get("answer")
        pages = parsed.get("predicted_pages")
        return OfficialView(
            ok=status == "ok",
            status=status,
            raw=raw,
            answer=answer if isinstance(answer, str) else None,
            has_answer_tag=bool(parsed.get("has_answer_tag")),
            predicted_pages=_sorted_pages(pages if isinstance(pages, list) else []),
            citations=_from_dicts(parsed.get("citations") or []),
            source="infer_jsonl",
        )
    status = trajectory.status.value
    if trajectory.metadata.get("parser") == "citations" and trajectory.raw_output is not None:
        parsed_reply = parse_official(raw)
        citations = _from_dicts(c.model_dump() for c in parsed_reply.citations)
        source = "official_parser"
        if trajectory.metadata.get("evidence_source"):
            seen = {(c.page, tuple(c.bbox)) for c in citations}
            extra = [c for c in _from_trajectory(trajectory) if (c.page, tuple(c.bbox)) not in seen]
            citations += extra
            source = "official_parser+adopted_evidence"
        return OfficialView(
            ok=status in OK_STATUSES,
            status=status,
            raw=raw,
            answer=parsed_reply.answer,
            has_answer_tag=parsed_reply.has_answer_tag,
            predicted_pages=_sorted_pages(c.page for c in citations),
            citations=citations,
            source=source,
        )
    citations = _from_trajectory(trajectory)
    pages = [c.page for c in citations] + list(trajectory.pages)
    return OfficialView(
        ok=status in OK_STATUSES,
        status=status,
        raw=raw or (trajectory.answer or ""),
        answer=trajectory.answer,
        has_answer_tag=trajectory.answer is not None,
        predicted_pages=_sorted_pages(pages),
        citations=citations,
        source="trajectory",
    )


# --------------------------------------------------------------------------- judge replies


class AnyReply(BaseModel):
    """Any JSON object: the official profile reads the reply itself (:func:`reply_object`)."""

    model_config = ConfigDict(extra="allow")


def official_request(role: str) -> dict[str, Any]:
    """The request fields a released judge call sets (beyond the model, the messages and
    ``max_tokens``): no seed, the token cap under ``max_completion_tokens``, temperature 0
    (none for the region judge); no ``response_format`` (a free-text call)."""
    temperature = None if role == REGION_ROLE else 0.0
    return {"seed": None, "temperature": temperature, "token_param": "max_completion_tokens"}


async def official_judge(
    ctx: Any,
    role: str,
    messages: Sequence[Any],
    prompt_hash: str,
    key: str | None = None,
    max_tokens: int | None = JUDGE_MAX_TOKENS,
    shape: str = "json",
) -> tuple[Any, dict[str, Any] | None]:
    """One judge call as the released scorers make it (at most 2048 tokens, no second try),
    in the request ``shape`` (``json`` or ``official``, see the module docstring): the record,
    and the reply's JSON object (``None`` when no reply came; ``{}`` when it holds none, the
    record then a ``judge_parse_error``)."""
    if shape == "official":
        limit = max_tokens if max_tokens is not None else JUDGE_MAX_TOKENS
        record = await ctx.ask(
            role, messages, prompt_hash, key=key, max_tokens=limit, overrides=official_request(role)
        )
        if record.status != "ok" or record.raw is None:
            return record, None
        reply = reply_object(record.raw)
        if not reply:
            unreadable(record, "no JSON object in the reply, as the released parser reads it")
        return record, reply
    record, _ = await ctx.judge(
        role, messages, AnyReply, prompt_hash, key=key, max_tokens=max_tokens, parse_retry=False
    )
    if record.status == "judge_error" or record.raw is None:
        return record, None
    return record, reply_object(record.raw)


async def judge_items(
    ctx: Any,
    role: str,
    messages: Sequence[Any],
    prompt_hash: str,
    key: str,
    ids: Sequence[str],
    allowed: frozenset[str],
    max_tokens: int | None = JUDGE_MAX_TOKENS,
    shape: str = "json",
) -> tuple[Any, list[tuple[str, str | None, str | None]]]:
    """One call labelling several items (gold boxes, facts): the record and, per id,
    (status, label, reason); a failed call gives every item the call's status."""
    record, reply = await official_judge(ctx, role, messages, prompt_hash, key, max_tokens, shape)
    if reply is None:
        status = record.status if record.status != "ok" else "judge_error"
        return record, [(status, None, None)] * len(ids)
    return record, [
        ("ok" if label is not None else "judge_parse_error", label, reason)
        for label, reason in labels_by_id(reply, ids, allowed)
    ]


def reply_object(text: str | None) -> dict[str, Any]:
    """The JSON object the released scorers read from a judge reply (``{}`` if none)."""
    text = (text or "").strip()
    if not text:
        return {}
    candidates = [text]
    fenced = _FENCED_OBJECT.search(text)
    if fenced:
        candidates.append(fenced.group(1))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        return value if isinstance(value, dict) else {}
    return {}


def labels_by_id(
    reply: Mapping[str, Any], ids: Sequence[str], allowed: frozenset[str]
) -> list[tuple[str | None, str | None]]:
    """(label, reason) per id, in order: ``label`` is ``None`` when the id is missing or its
    label is not exactly one of ``allowed``."""
    items = reply.get("items")
    by_id: dict[Any, Mapping[str, Any]] = {}
    if isinstance(items, list):
        for item in items:
            if isinstance(item, Mapping):
                by_id[item.get("id")] = item
    out: list[tuple[str | None, str | None]] = []
    for ident in ids:
        item = by_id.get(ident) or {}
        label = item.get("label")
        reason = item.get("reason")
        ok = isinstance(label, str) and label in allowed
        out.append((label if ok else None, reason if isinstance(reason, str) else None))
    return out


def verdict(reply: Mapping[str, Any]) -> tuple[bool | None, str]:
    """The answer judge's ``consistent`` (only a JSON boolean counts) and its reason."""
    value = reply.get("consistent")
    reason = reply.get("reason") or reply.get("reasoning") or ""
    return (value if isinstance(value, bool) else None), str(reason)
