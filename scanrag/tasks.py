"""The task table: what each task type asks of a reader and how it is scored by default.

A sample's ``task`` names one entry of :data:`~scanrag.registry.TASKS`. The entry says which
reader instructions the agents use (``prompt``), which fields a structured reply lists and
requires (``fields``, ``required``), what extra input an item carries (``given``) and which
scorers run when a config names none (``scorers``). Prompts and scorers are named, never
imported, so the kernel depends on nothing above it.

A new task type is one :class:`TaskSpec` registered in the ``scanrag.tasks`` entry-point group
(or with ``TASKS.register(name)(lambda: spec)``), plus its prompt and scorer::

    [project.entry-points."scanrag.tasks"]
    table_check = "my_package.tasks:TABLE_CHECK"
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scanrag.registry import SCORERS, TASKS, UnknownNameError

DEFAULT_TASK = "qa"


class TaskSpec(BaseModel):
    """One task type. ``prompt`` is the key of the agents' built-in reader instructions
    (``"qa"``...) or ``"module:attr"`` naming a mapping ``{"citations": text, "json": text}``."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    prompt: str
    fields: tuple[str, ...] = Field(
        description="Reply fields a JSON reader lists, in order: the answer (or verdict) first, "
        "so a reply cut by the token limit still carries it."
    )
    required: tuple[str, ...] = Field(description="Reply fields a JSON reader must give.")
    given: tuple[str, ...] = Field(
        default=(), description='Extra item input: "candidate" (an answer and chain to check).'
    )
    scorers: tuple[str, ...] = Field(default=(), description="Scorers run by default.")

    @property
    def reports_issues(self) -> bool:
        """Whether a reply lists errors found (``issues``) rather than only an answer."""
        return "issues" in self.fields


_DOCSCOPE_SCORERS = (
    "pages",
    "retrieval",  # recall@k of the retrieve steps, beside the cited pages
    "region",
    "region_geometry",
    "fact",
    "answer",
    "answer_rules",
    "completeness",
    "layout",
)

# The built-in task types (registered as ``scanrag.tasks`` entry points in pyproject.toml).
QA = TaskSpec(
    name="qa",
    description="DocScope / MMLongBench-Doc style question answering",
    prompt="qa",
    fields=("answer", "pages", "facts", "regions"),
    required=("answer", "pages", "facts"),
    # mmlongbench scores only samples with a MMLongBench-Doc answer format (no rows else)
    scorers=(*_DOCSCOPE_SCORERS, "faithfulness", "mmlongbench"),
)
ERROR_DETECTION = TaskSpec(
    name="error_detection",
    description="ScholScan target-free error finding",
    prompt="error_detection",
    fields=("answer", "issues", "pages", "facts"),
    required=("answer", "issues"),
    scorers=("scholscan",),
)
FIND = TaskSpec(
    name="find",
    description="SIN-Bench: build the evidence chain for a query",
    prompt="find",
    fields=("answer", "evidence_chain", "pages", "facts"),
    required=("answer", "evidence_chain"),
    scorers=("sinbench",),
)
VERIFY = TaskSpec(
    name="verify",
    description="SIN-Bench: is a chain sufficient for an answer",
    prompt="verify",
    fields=("verdict", "answer", "evidence_chain"),
    required=("verdict",),
    given=("candidate",),
    scorers=("sinbench",),
)
CHAIN_QA = TaskSpec(
    name="chain_qa",
    description="SIN-Bench: answer plus evidence chain",
    prompt="chain_qa",
    fields=("answer", "evidence_chain", "pages", "facts"),
    required=("answer", "evidence_chain"),
    scorers=("faithfulness", "sinbench"),
)
SUMMARY = TaskSpec(
    name="summary",
    description="SIN-Bench: claims, each with anchors",
    prompt="summary",
    fields=("answer", "evidence_chain"),
    required=("answer", "evidence_chain"),
    scorers=("faithfulness", "sinbench"),
)
BUILTIN_TASKS = (QA, ERROR_DETECTION, FIND, VERIFY, CHAIN_QA, SUMMARY)


def task_names() -> list[str]:
    """Every registered task type, sorted."""
    return TASKS.names()


def check_task(name: Any) -> str:
    """``name`` if it is a registered task type; ``ValueError`` listing the known ones."""
    if not isinstance(name, str) or name not in TASKS:
        raise ValueError(f"task {name!r} is not one of {', '.join(task_names())}")
    return name


def task_spec(name: str) -> TaskSpec:
    """The entry for ``name`` (:class:`UnknownNameError` lists the known task types).

    An entry point may name a :class:`TaskSpec` or a function returning one.
    """
    entry = TASKS.get(name)
    spec = entry if isinstance(entry, TaskSpec) else entry()
    if not isinstance(spec, TaskSpec):
        raise TypeError(f"task type {name!r} is a {type(spec).__name__}, not a TaskSpec")
    return spec


def task_spec_or_default(name: str) -> TaskSpec:
    """The entry for ``name``, or the QA entry for a name no one registered."""
    try:
        return task_spec(name)
    except UnknownNameError:
        return task_spec(DEFAULT_TASK)


def default_scorers(tasks: Any) -> list[str]:
    """The default scorers of ``tasks`` (unknown task types contribute none), deduplicated."""
    names: dict[str, None] = {}
    for task in tasks:
        if task in TASKS:
            names.update(dict.fromkeys(task_spec(task).scorers))
    return list(names)


def default_scorer_names(tasks: Any) -> list[str]:
    """The default scorers of ``tasks`` (:func:`default_scorers`) that are registered, in
    registry order: the scorers a run uses when its config names none."""
    wanted = set(default_scorers(tasks))
    return [name for name in SCORERS.names() if name in wanted]
