"""The part of the graph state every strategy shares.

A strategy graph carries only plain JSON in its state: the trajectory built so far (as its
JSON dump), the pages chosen for a read, the agent's loop variables, the scan's windows and
their results. What does not change during a run and is not JSON — the sample, the loaded
documents, the model client, the retriever, the runner's settings — travels as LangGraph's
run context (:class:`scanrag.agents.scope.ItemContext`), so one compiled graph serves every item and
a checkpointed state can be saved and resumed as it is.

:class:`StrategyState` holds what every graph reads (the trajectory, the stop flag); each
strategy adds its own keys in a TypedDict of its own, next to its nodes
(:class:`scanrag.agents.baseline.ReadState`, :class:`scanrag.agents.scan.MapReduceState`,
:class:`scanrag.agents.agentic.AgenticState`), so a new strategy does not edit this module. All keys
are optional (``total=False``). The TypedDicts come
from ``typing_extensions`` so that pydantic can build their JSON schemas on Python 3.11
(LangGraph's ``get_input_jsonschema`` / ``get_output_jsonschema``, LangGraph Studio's panels).
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

PageKey = tuple[str, int]
"""A page to read, as (document id, page number); see ``Scope.page_refs``."""


class StrategyState(TypedDict, total=False):
    """Graph state keys of every strategy (plain JSON, so any graph can be checkpointed)."""

    trajectory: dict[str, Any]
    """The trajectory so far, as ``Trajectory.model_dump(mode="json")``."""
    stop: bool
    """Set by a node after which nothing more can run (missing document, retriever error)."""
