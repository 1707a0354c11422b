"""The structured output every strategy emits and every scorer reads.

A trajectory is y = (pages, regions, facts, answer) plus the record of how it was produced:
the raw model output, the parsed citations (valid or not, with reasons), ordered steps,
usage per stage, timings and a status. Its schema is versioned by ``TRAJECTORY_SCHEMA``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator

from scanrag.schemas.geometry import Fact, Region
from scanrag.schemas.reduction import Reduction
from scanrag.schemas.sample import EvidencePair

TRAJECTORY_SCHEMA = "1.2"


class Status(StrEnum):
    """Outcome of one item. Anything but ``ok`` keeps the raw output and an error message."""

    OK = "ok"
    UNPARSED = "unparsed"  # the model answered but nothing usable could be parsed
    TRUNCATED = "truncated"  # the reply hit the token limit before it gave an answer
    MODEL_ERROR = "model_error"  # the provider failed after retries
    INPUT_ERROR = "input_error"  # bad sample or document (missing PDF, pages out of range)
    RETRIEVER_ERROR = "retriever_error"
    BUDGET_EXHAUSTED = "budget_exhausted"
    INTERNAL_ERROR = "internal_error"
    DEGRADED = "degraded"  # input reduced below the strategy's promise (on_degraded: fail)


class ParseStatus(StrEnum):
    """How the final reply was read (``Trajectory.parse``), next to the item's ``status``.

    ``clean``: in the requested format. ``repaired``: a JSON object cut by the token limit (or
    with a stray trailing comma) was closed and read. ``fallback``: the JSON path got a
    free-text reply and read it with the citation grammar (answer tag or "Answer:" line).
    ``bare_text``: the reply ignored the format; its prose as a whole is the answer.
    ``ambiguous``: the reply gives two or more different final answers; none is taken (the
    item is ``unparsed``). ``none``: nothing usable was read.
    """

    CLEAN = "clean"
    REPAIRED = "repaired"
    FALLBACK = "fallback"
    BARE_TEXT = "bare_text"
    AMBIGUOUS = "ambiguous"
    NONE = "none"


class Usage(BaseModel):
    """Model usage of one stage (or of a whole item, when summed)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cached_calls: int = 0

    def add(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            cached_calls=self.cached_calls + other.cached_calls,
        )

    @classmethod
    def sum(cls, items: Iterable[Usage | Mapping[str, Any]]) -> Usage:
        """The total of ``items``: usages, or their JSON mappings (as read from a row)."""
        total = cls()
        for item in items:
            total = total.add(item if isinstance(item, Usage) else cls.model_validate(item))
        return total

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class PageHit(BaseModel):
    """One retrieved page."""

    doc_id: str
    page: int = Field(ge=1)
    score: float
    rank: int = Field(ge=1)
    regions: list[Region] = Field(default_factory=list)


class Citation(BaseModel):
    """A citation as the model wrote it, with the sentence it closes.

    Invalid citations are kept (``valid=False``) with the reason, never dropped.
    ``bbox`` holds the raw numbers as written, which may lie outside [0, 1].
    """

    sentence: str
    raw: str = ""
    page: int | None = None
    doc_page: str | None = None
    bbox: list[float] | None = None
    doc_id: str | None = None
    valid: bool = True
    reason: str | None = None


class Step(BaseModel):
    """One recorded step of a strategy (plan, retrieve, read, assess, map, reduce, answer...)."""

    index: int = Field(ge=0)
    kind: str
    data: dict[str, Any] = Field(default_factory=dict)
    seconds: float = 0.0


class PromptPart(BaseModel):
    """One piece of the user message of a recorded model call (see :class:`ModelCall`)."""

    kind: Literal["text", "page", "image"] = "text"
    text: str = Field(
        default="",
        description="The text as sent, cut to a cap; a page's marker line and a preview of "
        "its text; an image's file name.",
    )
    chars: int = Field(default=0, ge=0, description="Length of the full text in characters.")
    page: int | None = Field(default=None, description="The page a page or image part shows.")


class ModelCall(BaseModel):
    """One model call of a strategy: what was sent, what came back, what it cost.

    Rows stay small: page text is kept as its marker line and a short preview (``chars`` is
    the full length), page images as file names, other text and the reply up to a cap, and a
    system prompt repeating an earlier call's is stored once (``system_of`` names that call).
    """

    index: int = Field(ge=0)
    step: int | None = Field(
        default=None, description="Index of the step the call belongs to (the next one added)."
    )
    stage: str
    role: str
    model: str
    prompt_hash: str | None = None
    system: str | None = Field(
        default=None, description="The system prompt; None when system_of names an earlier call."
    )
    system_of: int | None = Field(
        default=None, description="Index of an earlier call with the same system prompt."
    )
    user: list[PromptPart] = Field(default_factory=list)
    reply: str | None = Field(default=None, description="The raw reply, cut to a cap.")
    reply_chars: int = Field(default=0, ge=0, description="Length of the full reply.")
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = Field(
        default=0.0,
        description="Seconds the model worked on the call (the client's latency_s: the "
        "successful attempt, queueing and retries excluded).",
    )
    seconds: float = Field(default=0.0, description="Wall seconds the strategy waited.")
    cached: bool = False
    cached_from: str | None = Field(
        default=None,
        description="For a reply replayed from the response cache: the run that "
        "first got it (its folder name), when the cache recorded one.",
    )
    error: str | None = Field(default=None, description="Why the call failed, if it did.")


class ReportedIssue(BaseModel):
    """An error a scan-style strategy reports (ScholScan task)."""

    description: str
    family: str | None = None
    pages: list[int] = Field(default_factory=list)
    locations: list[Region] = Field(default_factory=list)
    reasoning_steps: list[str] = Field(default_factory=list)


class Trajectory(BaseModel):
    """What one strategy produced for one sample."""

    schema_version: str = TRAJECTORY_SCHEMA
    sample_id: str
    strategy: str
    run_key: str | None = Field(
        default=None, description="Identifies the grid cell (strategy + retriever + model)."
    )
    doc_ids: list[str] = Field(default_factory=list)
    pages: list[Annotated[int, Field(ge=1)]] = Field(
        default_factory=list, description="Evidence pages: global 1-based physical pages."
    )
    regions: list[Region] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    answer: str | None = None
    raw_output: str | None = None
    citations: list[Citation] = Field(default_factory=list)
    evidence_chain: list[EvidencePair] = Field(default_factory=list)
    issues: list[ReportedIssue] = Field(default_factory=list)
    verdict: bool | None = Field(default=None, description="Verify-task yes/no decision.")
    steps: list[Step] = Field(default_factory=list)
    calls: list[ModelCall] = Field(
        default_factory=list, description="The model calls, with prompts and raw replies."
    )
    usage: dict[str, Usage] = Field(default_factory=dict, description="Usage per stage.")
    timings: dict[str, float] = Field(
        default_factory=dict,
        description="Seconds per stage; total: the whole item (wall), model and wait: its "
        "model calls' model time and the time spent waiting around them.",
    )
    models: dict[str, str] = Field(default_factory=dict, description="Model per role.")
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    status: Status = Status.OK
    parse: ParseStatus | None = Field(
        default=None, description="How the final reply was read; None when nothing was read."
    )
    errors: list[str] = Field(default_factory=list)
    reductions: list[Reduction] = Field(
        default_factory=list,
        description="What the strategy cut from its input and why (page caps, character caps, "
        "images, context planning, notes, windows).",
    )
    degraded: bool = Field(
        default=False,
        description="Some reduction took the input below what the strategy promises.",
    )
    gold_pages_dropped: list[int] = Field(
        default_factory=list,
        description="Gold evidence pages (primary document) a reduction left out of every call.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("schema_version")
    @classmethod
    def _known_major_version(cls, version: str) -> str:
        """Rows of another major schema version cannot be read as this one."""
        if version.split(".")[0] != TRAJECTORY_SCHEMA.split(".")[0]:
            raise ValueError(
                f"trajectory schema {version} is not readable by this version of scanrag "
                f"(schema {TRAJECTORY_SCHEMA}); re-run the items or use a matching scanrag"
            )
        return version

    @property
    def total_usage(self) -> Usage:
        return Usage.sum(self.usage.values())

    def add_usage(self, stage: str, usage: Usage) -> None:
        self.usage[stage] = self.usage.get(stage, Usage()).add(usage)

    def reduce(self, reduction: Reduction) -> Reduction:
        """Record a cut of the input; a degrading one marks the item ``degraded``."""
        self.reductions.append(reduction)
        self.degraded = self.degraded or reduction.degrading
        return reduction

    @property
    def replayed_calls(self) -> int:
        """Model calls answered from the response cache (from the usage of every stage)."""
        return self.total_usage.cached_calls

    @property
    def replayed_from(self) -> list[str]:
        """The runs the recorded calls replayed came from (first seen first)."""
        return list(dict.fromkeys(c.cached_from for c in self.calls if c.cached_from))

    def fail(self, status: Status, message: str) -> Trajectory:
        """Record a failure in place and return self."""
        self.status = status
        self.errors.append(message)
        return self
