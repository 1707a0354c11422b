"""JSON-schema reader output, for small and local models that follow a schema better than a
citation grammar.

The model returns one JSON object (``ReaderOutput``); each list item is validated on its own,
so one bad box or page does not discard the rest. Facts and regions go through the same
:class:`agents.evidence.EvidenceBuilder` as free-text citations, which is why both paths give
identical trajectories for the same content. A reply that holds no JSON object falls back to
the citation parser (tags and citations only, no bare-text answer); if that finds nothing
either, the item is unparsed with its raw text kept.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agents.citations import parse_citations
from agents.evidence import (
    CitedStatement,
    EvidenceBuilder,
    ParseContext,
    ParsedOutput,
    format_citation,
    normalize_answer,
)
from agents.tags import canonical_text, verdict_word
from scanrag.schemas import EvidencePair, ReportedIssue, TaskType
from scanrag.tasks import task_names, task_spec_or_default

PARSER = "json"


class RegionOut(BaseModel):
    page: int = Field(description="Global 1-based page number.")
    bbox: list[float] = Field(description="[x1, y1, x2, y2], fractions of the page, 0..1.")
    element_type: str = Field(default="text", description="text, table, figure, chart, list ...")
    doc: str | None = Field(default=None, description="Document name, when several are given.")


class LocationOut(RegionOut):
    """Where a reported error is: a region plus the label printed on its page (the free-text
    path's citations carry it too)."""

    doc_page: str | None = Field(default=None, description="Label printed on the page.")


class FactOut(BaseModel):
    page: int
    text: str = Field(description="One factual statement read from the page.")
    bbox: list[float] | None = None
    doc_page: str | None = Field(default=None, description="Label printed on the page.")
    doc: str | None = None


class IssueOut(BaseModel):
    description: str
    family: str | None = None
    pages: list[int] = Field(default_factory=list)
    locations: list[LocationOut] = Field(default_factory=list)
    reasoning_steps: list[str] = Field(default_factory=list)


class AnchorOut(BaseModel):
    anchor: str = Field(description='Figure or table anchor, e.g. "Fig. 2".')
    text: str = Field(default="", description="The text span that goes with the anchor.")
    page: int | None = None


class ReaderOutput(BaseModel):
    """Everything a reader may return; each task asks for its own subset."""

    pages: list[int] = Field(default_factory=list)
    regions: list[RegionOut] = Field(default_factory=list)
    facts: list[FactOut] = Field(default_factory=list)
    answer: str | None = None
    issues: list[IssueOut] = Field(default_factory=list)
    evidence_chain: list[AnchorOut] = Field(default_factory=list)
    verdict: bool | None = None


# Fields a task's schema lists (first) and requires (second) come from the task table
# (scanrag.tasks: TaskSpec.fields / .required); unknown tasks get the QA ones.
# The listed order is the order of the reply's fields under constrained decoding (required
# fields first): a short answer comes before the long fact lists, so a reply cut by the token
# limit still carries it.
def task_fields(task: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    spec = task_spec_or_default(task)
    return spec.fields, spec.required


TASK_FIELDS = {name: task_fields(name) for name in task_names()}  # the table at import time


def schema_for(task: TaskType | str) -> dict[str, Any]:
    """The JSON schema a reader must follow for ``task`` (unknown tasks get the QA one)."""
    listed, required = task_fields(task)
    full = ReaderOutput.model_json_schema()
    properties = {name: full["properties"][name] for name in listed}
    all_defs = full.get("$defs", {})
    used: set[str] = set()
    pending = set(re.findall(r"#/\$defs/(\w+)", json.dumps(properties)))
    while pending:  # definitions referenced by definitions too (IssueOut → RegionOut)
        name = pending.pop()
        used.add(name)
        pending |= set(re.findall(r"#/\$defs/(\w+)", json.dumps(all_defs[name]))) - used
    schema: dict[str, Any] = {
        "title": f"ReaderOutput_{task}",
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
            return f"[{render(node.get('items', {}))}]"
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
_FENCE = re.compile(r"```(?:json)?\s*([\s\S]*?)```", re.IGNORECASE)


def extract_json(text: str) -> tuple[dict[str, Any] | None, bool]:
    """The first JSON object in ``text`` and whether it had to be repaired (closed).

    Objects are tried from the first ``{`` on. One that does not parse is closed where a token
    limit cut it off before any later ``{`` is tried, so a truncated reply keeps its outer
    object (answer and every complete fact) instead of yielding one of its nested objects.
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for start in [i for i, ch in enumerate(candidate) if ch == "{"][:50]:
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except json.JSONDecodeError:
                repaired = _repaired(candidate[start:])
                if repaired is not None:
                    return repaired, True
                continue
            if isinstance(value, dict):
                return value, False
    return None, False


def _repaired(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(_close_truncated(text))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _close_truncated(text: str) -> str:
    """Close the strings, lists and objects a reply cut off by a token limit left open.

    An element of a list that the cut went through (a fact whose text or box stops midway)
    is dropped whole: the outermost open list keeps its complete elements only. A scalar value
    of an object cut midway is kept as far as it goes when it is a string (the answer), and
    dropped with its key when it is not (a number such as ``0.``).
    """
    stack: list[list[Any]] = []  # [closer, start offset, offset of its last own comma]
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            stack.append(["]" if ch == "[" else "}", i, None])
        elif ch in "]}" and stack:
            stack.pop()
        elif ch == "," and stack:
            stack[-1][2] = i
    lists = [d for d, entry in enumerate(stack) if entry[0] == "]"]
    if lists:
        depth = lists[0]
        _, start, comma = stack[depth]
        last = text[(comma if comma is not None else start) + 1 :]
        if depth < len(stack) - 1 or in_string or not _complete_scalar(last):
            text = text[: comma if comma is not None else start + 1]
            del stack[depth + 1 :]
            in_string = False
    out = text + ('"' if in_string else "")
    if not in_string:
        out = _drop_partial_value(out)
    out = re.sub(r"[,:\s]*$", "", out)
    if out.endswith('"') and stack[-1:] and stack[-1][0] == "}":
        # A dangling key without its value: drop it.
        out = re.sub(r'([{,])\s*"[^"]*"$', lambda m: "{" if m.group(1) == "{" else "", out)
    return out + "".join(entry[0] for entry in reversed(stack))


def _complete_scalar(text: str) -> bool:
    """Whether ``text`` (the end of a list) is empty or one complete JSON scalar."""
    stripped = text.strip()
    if not stripped or stripped.startswith(('"', "{", "[")):
        return True  # strings and containers are handled by the caller
    try:
        json.loads(stripped)
    except json.JSONDecodeError:
        return False
    return True


def _drop_partial_value(text: str) -> str:
    """Remove a number or literal cut midway after the last ``:`` (``"score": 0.``)."""
    match = re.search(r":\s*([^\s\"\[\]{},:][^\"\[\]{},:]*)$", text)
    if match and not _complete_scalar(match.group(1)):
        return text[: match.start(1)]
    return text


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
    answer_text = None if answer is None else normalize_answer(_as_text(answer))
    return builder.output(
        PARSER,
        answer=answer_text,
        issues=issues,
        evidence_chain=chain,
        verdict=_verdict(data.get("verdict")),
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


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(_as_text(v) for v in value)
    return json.dumps(value) if isinstance(value, dict) else str(value)


def _verdict(value: Any) -> bool | None:
    if isinstance(value, bool) or value is None:
        return value
    return verdict_word(str(value))


def parse_structured(text: str, context: ParseContext | None = None) -> ParsedOutput:
    """Parse a JSON reply; without a JSON object, fall back to tags and citations."""
    data, repaired = extract_json(text if isinstance(text, str) else str(text))
    if data is None:
        fallback = parse_citations(text, context, allow_bare=False)
        fallback.notes["json_missing"] = True
        fallback.parser = f"{PARSER}->citations"
        return fallback
    parsed = from_data(data, context)
    if repaired:
        parsed.notes["json_repaired"] = True
    return parsed
