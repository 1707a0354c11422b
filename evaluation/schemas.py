"""Records written by the scoring stage: judge calls, per-item score rows and run summaries.

A :class:`ScoreRow` is one (trajectory, scorer) pair. Its ``status`` says whether the metrics
can be trusted: a part whose judge failed (``judge_error``, ``judge_parse_error``) or whose
page image could not be rendered (``render_failed``) or whose scorer raised (``scorer_error``,
with the exception's type and message) gets ``None`` metrics and is left out of every
aggregate, where it is counted as excluded; it is never scored as 0. Each failed row has a
cause (:data:`FAILURE_CAUSES`, :func:`scanrag.evaluation.failures.row_cause`). ``partial`` means
some judged parts of the item (pages, sentences) failed and were excluded while the others
count. ``skipped`` means the scorer does not apply (an unanswerable question for a page
metric, no vision judge for the region judge); ``reason`` says why.

A row also carries its item's side: ``item_status`` (the trajectory's status: ``ok`` or an
error kind), ``answered`` (whether it gave its task's output) and ``dataset``; from those and
a ``correct`` metric, ``outcome`` classifies the item (:mod:`scanrag.evaluation.outcomes`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field, model_validator

from scanrag.evaluation.outcomes import Outcome, is_error, item_outcome
from scanrag.schemas import Usage

SCORE_SCHEMA = "1.0"

JudgeStatus = Literal["ok", "judge_error", "judge_parse_error", "render_failed", "skipped"]
ItemStatus = Literal[
    "ok", "partial", "judge_error", "judge_parse_error", "render_failed", "scorer_error", "skipped"
]
FAILED_STATUSES: frozenset[str] = frozenset(
    {"judge_error", "judge_parse_error", "render_failed", "scorer_error"}
)
# Why a row failed: the judge's reply could not be read (``parse``), it hit its token cap
# (``length``), the call failed (``transport``), the request was refused before sending as too
# long for the judge's context (``not_sent``), a page image could not be rendered
# (``render``), or the scorer raised (``scorer``).
FailureCause = Literal["parse", "length", "transport", "not_sent", "render", "scorer"]
FAILURE_CAUSES: tuple[str, ...] = ("parse", "length", "transport", "not_sent", "render", "scorer")

RowKey = tuple[str, str, str]


class JudgeRecord(BaseModel):
    """One judged part of an item: the call made (or why none was made) and what came back.

    ``key`` names the part (``"page=3"``, ``"sentence=2"``); ``raw`` is the text of the last
    attempt and ``parsed`` its validated JSON. ``attempts`` counts model calls (0 when no
    call was made: a validity gate, a skip, a render failure). ``finish_reason`` is the
    provider's for the last reply (``length``: it hit its token cap); ``cause`` says why a
    failed record failed.
    """

    role: str
    model: str | None = None
    prompt_hash: str | None = None
    status: JudgeStatus = "ok"
    key: str | None = None
    raw: str | None = None
    parsed: Any = None
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    attempts: int = 0
    finish_reason: str | None = None
    cause: FailureCause | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES


class ScoreRow(BaseModel):
    """The result of one scorer on one trajectory.

    ``metrics`` hold per-item values (``None`` where undefined or excluded); ``counts`` hold
    the additive quantities micro aggregates sum over items (true positives, covered gold
    boxes...); ``details`` hold per-part labels for inspection and for derived aggregates.
    ``usage`` maps a stage name (``judge.region``) to the judge usage of this row, the shape
    trajectories use, so run summaries can add both up.
    """

    schema_version: str = SCORE_SCHEMA
    sample_id: str
    run_key: str | None = None
    strategy: str
    scorer: str
    dataset: str | None = Field(default=None, description="The dataset the sample came from.")
    item_status: str = Field(
        default="ok",
        description="The trajectory's status: ok, or the kind of error it ended in "
        "(model_error, unparsed, truncated ...); an error's missing outputs are scored as wrong.",
    )
    answered: bool | None = Field(
        default=None, description="Whether the trajectory gave its task's output (an answer...)."
    )
    status: ItemStatus = "ok"
    reason: str | None = None
    metrics: dict[str, float | None] = Field(default_factory=dict)
    counts: dict[str, float] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)
    judges: list[JudgeRecord] = Field(default_factory=list)
    usage: dict[str, Usage] = Field(default_factory=dict)
    basis: str | None = Field(
        default=None,
        description="Hash of what the row was computed from (trajectory, sample, scorer "
        "parameters, judge models); a row whose basis no longer matches is scored again.",
    )

    @model_validator(mode="before")
    @classmethod
    def _legacy_item_status(cls, data: Any) -> Any:
        """Rows written before ``item_status`` kept it in ``details.trajectory_status``."""
        if isinstance(data, dict) and "item_status" not in data:
            details = data.get("details")
            if isinstance(details, dict) and details.get("trajectory_status"):
                data = {**data, "item_status": str(details["trajectory_status"])}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> Outcome | None:
        """The item's outcome as far as this row tells: ``error`` or ``unanswered`` from the
        item side; ``correct``/``wrong`` from a usable ``correct`` metric; else ``None``."""
        value = self.metrics.get("correct") if self.usable else None
        result = item_outcome(
            self.item_status, self.answered, None if value is None else value >= 1.0
        )
        return None if result is Outcome.UNSCORED else result

    @property
    def item_error(self) -> bool:
        """True when the item's trajectory ended in an error."""
        return is_error(self.item_status)

    @property
    def group(self) -> str:
        """The grid cell this row belongs to: ``run_key``, or the strategy name without one."""
        return self.run_key or self.strategy

    @property
    def key(self) -> RowKey:
        return (self.group, self.sample_id, self.scorer)

    @property
    def usable(self) -> bool:
        """True when the row contributes to aggregates (fully or partly)."""
        return self.status in ("ok", "partial")

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES

    def add_judge(self, record: JudgeRecord) -> JudgeRecord:
        """Append ``record`` and add its usage under ``judge.<role>``."""
        self.judges.append(record)
        if record.attempts:
            stage = f"judge.{record.role}"
            self.usage[stage] = self.usage.get(stage, Usage()).add(record.usage)
        return record


def row_key(row: ScoreRow | dict[str, Any]) -> RowKey:
    """``(group, sample_id, scorer)`` of a row or of its JSON form."""
    if isinstance(row, ScoreRow):
        return row.key
    group = str(row.get("run_key") or row.get("strategy") or "")
    return (group, str(row["sample_id"]), str(row["scorer"]))


class MetricSummary(BaseModel):
    """One aggregate metric of one grid cell.

    ``n`` is the number of items that contributed; ``excluded`` the items (or, for ``partial``
    rows, the items with at least one part) left out because a judge or render failed;
    ``skipped`` the items the scorer did not apply to; ``errors`` how many of the ``n`` items
    ended in an error (model, parse, input ...) and count as wrong. ``low``/``high`` are the
    percentile bootstrap interval (``None`` when not computed or undefined).
    """

    value: float | None = None
    n: int = 0
    excluded: int = 0
    skipped: int = 0
    low: float | None = None
    high: float | None = None
    ci: float | None = None
    headline: bool = False
    errors: int | None = Field(
        default=None,
        description="How many of the n items ended in an error (they count as wrong); None "
        "when not counted.",
    )


class AggregateResult(BaseModel):
    """What a scorer's ``aggregate`` returns: named metrics plus free-form tables."""

    metrics: dict[str, MetricSummary] = Field(default_factory=dict)
    tables: dict[str, Any] = Field(default_factory=dict)


class FailureCounts(BaseModel):
    """One scorer's failed rows in one grid cell, by cause.

    ``judged`` counts the items the scorer tried to judge (a judge call made, or refused
    before sending) or compute (a scorer without judges: every row not skipped), plus rows
    whose scorer raised; ``failed`` those that failed (excluded from every metric);
    ``causes`` the failed ones by :data:`FAILURE_CAUSES`.
    """

    judged: int = 0
    failed: int = 0
    causes: dict[str, int] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def all_failed(self) -> bool:
        """Every item the scorer judged failed (``scanrag score`` and ``run`` exit 5)."""
        return self.judged > 0 and self.failed >= self.judged


class GroupSummary(BaseModel):
    """Every scorer's aggregates for one grid cell (run key)."""

    group: str
    strategy: str
    items: int = 0
    status: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Row status counts per scorer."
    )
    item_status: dict[str, int] = Field(
        default_factory=dict, description="Items per trajectory status (ok or an error kind)."
    )
    judge_errors: dict[str, FailureCounts] = Field(
        default_factory=dict,
        description="Per scorer with failed rows: items judged, failed, and failed by cause "
        "(parse, length, transport, not_sent, render, scorer).",
    )
    metrics: dict[str, MetricSummary] = Field(
        default_factory=dict, description='Keyed "<scorer>.<metric>".'
    )
    tables: dict[str, Any] = Field(default_factory=dict, description='Keyed "<scorer>.<table>".')
    aggregate_errors: dict[str, str] = Field(
        default_factory=dict,
        description="Per scorer whose aggregate raised in this cell: the exception's type and "
        "message. Its rows stay counted in status; it has no metrics here.",
    )


class Summary(BaseModel):
    """Aggregates of a whole scores file, one :class:`GroupSummary` per grid cell."""

    schema_version: str = SCORE_SCHEMA
    groups: dict[str, GroupSummary] = Field(default_factory=dict)
    scorers: list[str] = Field(default_factory=list)
    judges: dict[str, list[str]] = Field(
        default_factory=dict, description="Judge models and prompt hashes seen, per role."
    )
    n_resamples: int = 0
    seed: int = 0

    def flat(self, headline_only: bool = False) -> dict[str, dict[str, float | None]]:
        """``{group: {"<scorer>.<metric>": value}}`` for tables and run summaries."""
        return {
            name: {
                key: m.value for key, m in group.metrics.items() if m.headline or not headline_only
            }
            for name, group in self.groups.items()
        }
