"""The one graph state every strategy shares.

A strategy graph carries only plain JSON in its state: the trajectory built so far (as its
JSON dump), the pages chosen for a read, the agent's loop variables, the scan's windows and
their results. What does not change during a run and is not JSON — the sample, the loaded
documents, the model client, the retriever, the runner's settings — travels as LangGraph's
run context (:class:`agents.scope.ItemContext`), so one compiled graph serves every item and
a checkpointed state can be saved and resumed as it is.

Each strategy uses the keys it needs; all are optional (``total=False``). The TypedDicts come
from ``typing_extensions`` so that pydantic can build their JSON schemas on Python 3.11
(LangGraph's ``get_input_jsonschema`` / ``get_output_jsonschema``, LangGraph Studio's panels).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

PageKey = tuple[str, int]
"""A page to read, as (document id, page number); see ``Scope.page_refs``."""


class WindowTask(TypedDict):
    """One scan window handed to a map node: its position and its pages."""

    index: int
    pages: list[int]


class StrategyState(TypedDict, total=False):
    """Graph state of every strategy (plain JSON, so any graph can be checkpointed)."""

    trajectory: dict[str, Any]
    """The trajectory so far, as ``Trajectory.model_dump(mode="json")``."""
    stop: bool
    """Set by a node after which nothing more can run (missing document, retriever error)."""

    # single-read strategies (full_doc, topk_rag, oracles)
    refs: list[PageKey]
    priority: list[int]
    extra: str

    # scan
    windows: list[list[int]]
    window: WindowTask
    results: Annotated[list[dict[str, Any]], operator.add]

    # agentic_rag
    query: str | None
    tried: list[str]
    seen: list[int]
    pending: list[int]
    read_pages: list[int]
    notes: list[dict[str, Any]]
    iteration: int
    decision: str
