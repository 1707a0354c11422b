"""JSON-schema reader output, for small and local models that follow a schema better than a
citation grammar.

The model returns one JSON object (``ReaderOutput``); each list item is validated on its own,
so one bad box or page does not discard the rest. Facts and regions go through the same
:class:`scanrag.agents.evidence.EvidenceBuilder` as free-text citations, which is why both paths
give identical trajectories for the same content. A reply that holds no JSON object falls back to
the citation parser (answer tag, "Answer:" line, citations); prose with none of those is kept
whole as a ``bare_text`` answer, so a model that answers but ignores the format is not thrown
away (``Trajectory.parse`` tells it from a clean parse, see :mod:`scanrag.agents.reply`). A reply
that is neither JSON nor prose (a broken ``{...``) is unparsed, its raw text kept.

The schema a model is asked to follow (:func:`schema_for`) puts the answer first and bounds
every list (``maxItems``), so a small model cannot spend its tokens counting page numbers.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from pydantic import BaseModel, Field, ValidationError

from scanrag.agents.citations import parse_citations, tagged_answers
from scanrag.agents.evidence import (
    CitedStatement,
    EvidenceBuilder,
    ParseContext,
    ParsedOutput,
    format_citation,
    normalize_answer,
)
from scanrag.agents.reply import AMBIGUOUS, mark_ambiguous
from scanrag.agents.tags import canonical_text
from scanrag.parsing import as_text, first_object, json_values, parse_verdict
from scanrag.schemas import EvidencePair, ReportedIssue
from scanrag.tasks import TaskSpec

PARSER = "json"

# The most items a reply's lists may hold (``maxItems`` in the schema; a grammar-constrained
# model cannot go past it). Without a bound a small model can count pages 1, 2, 3, ... until
# its token limit. Parsing itself accepts longer lists from unconstrained models.
MAX_ITEMS = {"pages": 10, "regions": 10, "facts": 10, "issues": 8, "evidence_chain": 12}
MAX_NESTED = {"pages": 6, "locations": 6, "reasoning_steps": 8}


def _bounded(limit: int, description: str | None = None) -> Any:
    """A list field whose schema says ``maxItems: limit`` (validation does not enforce it)."""
    return Field(
        default_factory=list, description=description, json_schema_extra={"maxItems": limit}
    )


# A box is four numbers; the schema says so, so a constrained model cannot run on.
Box = Annotated[list[float], Field(json_schema_extra={"minItems": 4, "maxItems": 4})]


class RegionOut(BaseModel):
    page: int = Field(description="Global 1-based page number.")
    bbox: Box = Field(description="[x1, y1, x2, y2], fractions of the page, 0..1.")
    element_type: str = Field(default="text", description="text, table, figure, chart, list ...")
    doc: str | None = Field(default=None, description="Document name, when several are given.")


class LocationOut(RegionOut):
    """Where a reported error is: a region plus the label printed on its page (the free-text
    path's citations carry it too)."""

    doc_page: str | None = Field(default=None, description="Label printed on the page.")


class FactOut(BaseModel):
    page: int
    text: str = Field(description="One factual statement read from the page.")
    bbox: Box | None = None
    doc_page: str | None = Field(default=None, description="Label printed on the page.")
    doc: str | None = None


class IssueOut(BaseModel):
    description: str
    family: str | None = None
    pages: list[int] = _bounded(MAX_NESTED["pages"])
    locations: list[LocationOut] = _bounded(MAX_NESTED["locations"])
    reasoning_steps: list[str] = _bounded(MAX_NESTED["reasoning_steps"])


class AnchorOut(BaseModel):
    anchor: str = Field(description='Figure or table anchor, e.g. "Fig. 2".')
    text: str = Field(default="", description="The text span that goes with the anchor.")
    page: int | None = None


class ReaderOutput(BaseModel):
    """Everything a reader may return; each task asks for its own subset."""

    answer: str | None = None
    verdict: bool | None = None
    pages: list[int] = _bounded(MAX_ITEMS["pages"])
    regions: list[RegionOut] = _bounded(MAX_ITEMS["regions"])
    facts: list[FactOut] = _bounded(MAX_ITEMS["facts"])
    issues: list[IssueOut] = _bounded(MAX_ITEMS["issues"])
    evidence_chain: list[AnchorOut] = _bounded(MAX_ITEMS["evidence_chain"])


# Fields a task's schema lists (first) and requires (second) come from the task table
# (scanrag.tasks: TaskSpec.fields / .required).
# The listed order is the order of the reply's fields under constrained decoding (required
# fields first): the answer (or the verdict) comes before every list, so a reply cut by the
# token limit still carries it, and a required answer is a string (``null`` would let a small
# model skip it).
def schema_for(task: TaskSpec) -> dict[str, Any]:
    """The JSON schema a reader must follow for ``task``."""
    listed, required = task.fields, task.required
    full = ReaderOutput.model_json_schema()
    properties = {name: full["properties"][name] for name in listed}
    for name, kind in (("answer", "string"), ("verdict", "boolean")):
        if name in required:
            properties[name] = {"title": name.title(), "type": kind}
    all_defs = full.get("$defs", {})
    used: set[str] = set()
    pending = set(re.findall(r"#/\$defs/(\w+)", json.dumps(properties)))
    while pending:  # definitions referenced by definitions too (IssueOut → RegionOut)
        name = pending.pop()
        used.add(name)
        pending |= set(re.findall(r"#/\$defs/(\w+)", json.dumps(all_defs[name]))) - used
    schema: dict[str, Any] = {
        "title": f"ReaderOutput_{task.name}",
        "type": "object",
        "properties": properties,
        "required": list(required),
    }
    defs = {k: v for k, v in all_defs.items() if k in used}
    if defs:
        schema["$defs"] = defs
    return schema


def schema_sketch(schema: dict[str, Any]) -> str:
    """A compact, readable form of a reader schema for prompts, e.g.
    ``{"pages": [int], "answer": str|null, "regions"?: [{"page": int, ...}]}``: types only,
    ``?`` after an optional key. About a fifth of the schema's JSON, which matters for small
    local models (under constrained decoding the grammar enforces the schema itself)."""
    defs = schema.get("$defs", {})

    def render(node: dict[str, Any]) -> str:
        if "$ref" in node:
            return render(defs[node["$ref"].rsplit("/", 1)[-1]])
        if "anyOf" in node:
            return "|".join(render(option) for option in node["anyOf"])
        kind = node.get("type")
        if kind == "array":
            items = f"[{render(node.get('items', {}))}]"
            most = node.get("maxItems")
            if most is None or most == node.get("minItems"):
                return items
            return f"{items} (max {most})"
        if kind == "object" or "properties" in node:
            required = set(node.get("required", []))
            fields = [
                f'"{name}"{"" if name in required else "?"}: {render(sub)}'
                for name, sub in node.get("properties", {}).items()
            ]
            return "{" + ", ".join(fields) + "}"
        names = {"integer": "int", "number": "float", "string": "str", "boolean": "bool"}
        return names.get(str(kind), str(kind or "any"))

    return render(schema)


# The "[box: x1, y1, x2, y2]" marker the reader's page text puts before each block: small models
# copy it into their fact text; the box belongs in ``bbox``, not in the statement.
_BOX_MARKER = re.compile(r"^\s*\[box:[^\]]*\]\s*", re.IGNORECASE)


def _validated(
    data: dict[str, Any], key: str, model: type[BaseModel], notes: dict[str, Any]
) -> list[tuple[Any, BaseModel | None, str | None]]:
    """Each item of ``data[key]`` with its validated model, or ``None`` and the error."""
    raw = data.get(key)
    if raw is None:
        return []
    out: list[tuple[Any, BaseModel | None, str | None]] = []
    for index, item in enumerate(raw if isinstance(raw, list) else [raw]):
        try:
            out.append((item, model.model_validate(item), None))
        except ValidationError as exc:
            message = str(exc.errors()[0]["msg"])
            notes.setdefault("invalid_items", []).append(
                {"field": key, "index": index, "error": message}
            )
            out.append((item, None, message))
    return out


def _keep_invalid(builder: EvidenceBuilder, key: str, item: Any, message: str) -> None:
    """A fact or region the schema rejects is kept as an invalid citation."""
    text = item.get("text", "") if isinstance(item, dict) else ""
    builder.add(
        CitedStatement(
            sentence=str(text).strip(),
            raw=json.dumps(item, default=str)[:500],
            problem=f"malformed {key[:-1]}: {message}",
        )
    )


def _good(items: list[tuple[Any, BaseModel | None, str | None]]) -> list[Any]:
    return [model for _, model, _ in items if model is not None]


def _raw_citation(page: int, doc_page: str | None, bbox: list[float] | None) -> str:
    return format_citation(page, doc_page, bbox)


def from_data(data: dict[str, Any], context: ParseContext | None = None) -> ParsedOutput:
    """Build the parsed output from an already decoded JSON object."""
    notes: dict[str, Any] = {}
    builder = EvidenceBuilder(context or ParseContext())
    facts = _validated(data, "facts", FactOut, notes)
    regions = _validated(data, "regions", RegionOut, notes)
    types = {(r.page, tuple(r.bbox), r.doc): r.element_type for r in _good(regions)}
    for item, fact, error in facts:
        if not isinstance(fact, FactOut):
            _keep_invalid(builder, "facts", item, error or "invalid")
            continue
        key = (fact.page, tuple(fact.bbox or ()), fact.doc)
        builder.add(
            CitedStatement(
                sentence=_BOX_MARKER.sub("", fact.text).strip(),
                raw=_raw_citation(fact.page, fact.doc_page, fact.bbox),
                page=fact.page,
                doc_page=fact.doc_page,
                bbox=fact.bbox,
                element_type=types.get(key, "text"),
                doc=fact.doc,
            )
        )
    for item, region, error in regions:
        if isinstance(region, RegionOut):
            builder.add_region(region.page, region.bbox, region.element_type, region.doc)
        else:
            _keep_invalid(builder, "regions", item, error or "invalid")
    issues = [_issue(i, builder, notes) for i in _good(_validated(data, "issues", IssueOut, notes))]
    for page in _pages(data.get("pages"), notes):
        if builder.context.primary.num_pages is None or page <= builder.context.primary.num_pages:
            builder.pages.add(page)
        else:
            notes.setdefault("invalid_pages", []).append(page)
    chain = [
        EvidencePair(
            anchor=a.anchor,
            text=canonical_text(a.text),
            page=a.page if (a.page or 0) >= 1 else None,
        )
        for a in _good(_validated(data, "evidence_chain", AnchorOut, notes))
    ]
    answer = data.get("answer")
    answer_text = None if answer is None else normalize_answer(as_text(answer, list_sep=", "))
    return builder.output(
        PARSER,
        answer=answer_text,
        issues=issues,
        evidence_chain=chain,
        verdict=parse_verdict(data.get("verdict")),
        notes=notes,
    )


def _issue(item: IssueOut, builder: EvidenceBuilder, notes: dict[str, Any]) -> ReportedIssue:
    locations = []
    pages = set()
    for loc in item.locations:
        added = builder.add(
            CitedStatement(
                sentence=canonical_text(item.description),
                raw=_raw_citation(loc.page, loc.doc_page, loc.bbox),
                page=loc.page,
                doc_page=loc.doc_page,
                bbox=loc.bbox,
                element_type=loc.element_type,
                doc=loc.doc,
            )
        )
        if added.page is not None:
            pages.add(added.page)
        if added.region is not None:
            locations.append(added.region)
    limit = builder.context.primary.num_pages
    for page in item.pages:
        if page >= 1 and (limit is None or page <= limit):
            pages.add(page)
        else:  # kept visible, like an invalid citation, instead of silently dropped
            notes.setdefault("invalid_issue_pages", []).append(page)
    return ReportedIssue(
        description=canonical_text(item.description),
        family=item.family.strip().upper() if item.family else None,
        pages=sorted(pages),
        locations=locations,
        reasoning_steps=[s.strip() for s in item.reasoning_steps if s.strip()],
    )


def _pages(value: Any, notes: dict[str, Any]) -> list[int]:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    pages: list[int] = []
    for item in values:
        try:
            page = int(str(item).strip())
        except ValueError:
            notes.setdefault("invalid_pages", []).append(item)
            continue
        if page >= 1:
            pages.append(page)
        else:
            notes.setdefault("invalid_pages", []).append(item)
    return pages


def _prose(text: str) -> bool:
    """Whether ``text`` reads as prose rather than as a failed attempt at JSON."""
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith(("{", "[", "```"))


def parse_structured(text: str, context: ParseContext | None = None) -> ParsedOutput:
    """Parse a JSON reply. Without a JSON object, fall back to tags and citations; prose that
    has neither is kept whole as the answer (``notes["answer_source"] = "bare_text"``)."""
    data, repaired = first_object(text if isinstance(text, str) else str(text))
    if data is None:
        fallback = parse_citations(text, context, allow_bare=False)
        fallback.notes["json_missing"] = True
        fallback.parser = f"{PARSER}->citations"
        ambiguous = AMBIGUOUS in fallback.notes
        if fallback.answer is None and not fallback.citations and _prose(text) and not ambiguous:
            fallback.answer = normalize_answer(text)
            fallback.notes["answer_source"] = "bare_text"
        return fallback
    parsed = from_data(data, context)
    if repaired:
        parsed.notes["json_repaired"] = True
    return mark_ambiguous(parsed, _final_answers(text, parsed))


def _final_answers(text: str, parsed: ParsedOutput) -> list[str | None]:
    """Every final answer a JSON reply states: the ``answer`` of each JSON object in it and
    each ``<answer>`` tag (inside an answer string too, where one tag is unwrapped)."""
    answers = _unwrapped(parsed.answer)
    if len(answers) == 1:  # {"answer": "<answer>3</answer>"}: the tag's content
        parsed.answer = answers[0]
    for value in json_values(text):
        if isinstance(value, dict) and value.get("answer") is not None:
            answers += _unwrapped(normalize_answer(as_text(value["answer"], list_sep=", ")))
    return answers + tagged_answers(text)


def _unwrapped(answer: str | None) -> list[str | None]:
    """The answers inside the answer tags of ``answer``, or ``answer`` itself."""
    inner = tagged_answers(answer) if answer else []
    return inner or [answer]
