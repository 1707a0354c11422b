"""The part of the graph state every strategy shares.

A strategy graph's state holds the trajectory built so far, the pages chosen for a read, the
agent's loop variables, the scan's windows and their results — everything but the trajectory
plain JSON. The trajectory travels in the form its run started with (:data:`TrajectoryValue`):
the live :class:`~scanrag.schemas.Trajectory` in-process (``GraphStrategy.run``: nodes hand
the object along), its JSON dump where the state is saved (``agentic_rag``'s checkpointer)
or sent (LangGraph's server); each node gives it back in the form it got
(:func:`as_trajectory`, :func:`in_form_of`). What does not change during a run and is not
JSON — the sample, the loaded documents, the model client, the retriever, the runner's
settings — travels as LangGraph's run context (:class:`scanrag.agents.scope.ItemContext`), so
one compiled graph serves every item and a checkpointed state can be saved and resumed as it is.

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

from scanrag.schemas import Trajectory

PageKey = tuple[str, int]
"""A page to read, as (document id, page number); see ``Scope.page_refs``."""

TrajectoryValue = Trajectory | dict[str, Any]
"""A trajectory in a graph's state: the object, or ``Trajectory.model_dump(mode="json")``."""


def as_trajectory(value: TrajectoryValue) -> Trajectory:
    """The trajectory object of a state's value (the object itself when it is one)."""
    return value if isinstance(value, Trajectory) else Trajectory.model_validate(value)


def in_form_of(trajectory: Trajectory, given: TrajectoryValue) -> TrajectoryValue:
    """``trajectory`` in the form ``given`` has: the object, or its JSON dump."""
    return trajectory if isinstance(given, Trajectory) else trajectory.model_dump(mode="json")


class StrategyState(TypedDict, total=False):
    """Graph state keys of every strategy (any graph can be checkpointed: give it the
    trajectory as JSON)."""

    trajectory: TrajectoryValue
    """The trajectory so far (:data:`TrajectoryValue`)."""
    stop: bool
    """Set by a node after which nothing more can run (missing document, retriever error)."""
