"""Shared wiring of the strategy graphs and the ``Strategy`` wrapper around them.

Every strategy compiles its LangGraph graph once, on first use, from its constructor
parameters (``GraphStrategy.graph``); each item then runs through that same compiled graph
with its own inputs: the trajectory and the loop variables in the strategy's state (a
TypedDict beside its nodes that extends :class:`scanrag.agents.state.StrategyState`), the sample,
documents, model client, retriever and settings in LangGraph's run context
(:class:`scanrag.agents.scope.ItemContext`). Nothing about an item is kept on the strategy, so one
instance serves any number of concurrent items.

``GraphStrategy.run`` never raises for a per-item failure: a missing document, a retriever
error or a model error ends as a trajectory status; anything unexpected becomes
``internal_error`` with its message. Node logic lives in ``agents``; this package only wires.
"""

from __future__ import annotations

import inspect
import itertools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar, TypeAlias

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from scanrag.agents import routing
from scanrag.agents.baseline import ReadState, prepare
from scanrag.agents.common import new_trajectory
from scanrag.agents.prompts.reader import PROMPT_HASH as READER_PROMPTS
from scanrag.agents.prompts.reader import reader_prompt
from scanrag.agents.reductions import DegradedInputError
from scanrag.agents.scope import ItemContext, ReaderParams, Scope
from scanrag.agents.state import StrategyState, as_trajectory, in_form_of
from scanrag.llm.types import ModelError
from scanrag.params import checked
from scanrag.protocols import RunSettings, StrategyContext
from scanrag.schemas import Sample, Status, Trajectory
from scanrag.tasks import DEFAULT_TASK, task_spec

Node = Any
"""A LangGraph node callable (typed loosely: ``add_node``'s overloads want its own protocols)."""

Logic = Callable[[Scope, Any], dict[str, Any] | Awaitable[dict[str, Any]]]
"""Node logic from ``agents``: ``(scope, state) -> update`` (sync or async), parameters bound."""

Builder: TypeAlias = "StateGraph[Any, ItemContext, Any, Any]"
"""An uncompiled strategy graph: shared state, item context."""

Compiled: TypeAlias = "CompiledStateGraph[Any, ItemContext, Any, Any]"
"""A compiled strategy graph."""


class NodeFailedError(Exception):
    """A node raised: ``__cause__`` is what it raised and ``trajectory`` what it had recorded
    until then (steps, usage, the failing call's model and timing)."""

    def __init__(self, node: str, trajectory: Trajectory) -> None:
        super().__init__(f"node {node!r} failed")
        self.node = node
        self.trajectory = trajectory


def open_scope(state: StrategyState, runtime: Runtime[ItemContext], reader: ReaderParams) -> Scope:
    """The node's view of its item: the run context plus the state's trajectory."""
    item = runtime.context
    if not isinstance(item, ItemContext):
        raise TypeError(
            "strategy graphs run with context=ItemContext.resolve(sample, ctx) "
            "(GraphStrategy.run passes it)"
        )
    return Scope(item, as_trajectory(state["trajectory"]), reader)


def node(name: str, reader: ReaderParams, logic: Logic) -> Node:
    """Wrap node logic for LangGraph: open the scope, run the logic, store the trajectory
    back into the state (in the form it came in: the object, or JSON for a checkpointer) with
    the logic's update. A failure is re-raised as :class:`NodeFailedError` (nothing is
    committed, so a checkpointed graph reruns the node)."""

    # ``state: Any``: LangGraph reads a node's input keys from its first annotation, and
    # every node sees its graph's whole state (the strategy's own type).
    async def run(state: Any, runtime: Runtime[ItemContext]) -> dict[str, Any]:
        scope = open_scope(state, runtime, reader)
        try:
            update = logic(scope, state)
            if inspect.isawaitable(update):
                update = await update
        except Exception as exc:
            raise NodeFailedError(name, scope.trajectory) from exc
        return {**update, "trajectory": in_form_of(scope.trajectory, state["trajectory"])}

    run.__name__ = name
    return run


def edge(route: Callable[..., Any]) -> Node:
    """A routing function (pure, sync) as a conditional edge that LangGraph runs inline: it
    would run a sync callable of an async graph on a worker thread, one hop per decision.
    ``route`` takes the state, and the run's ``runtime`` when it names that parameter."""
    if "runtime" in inspect.signature(route).parameters:

        async def decide_with_runtime(state: Any, runtime: Runtime[ItemContext]) -> Any:
            return route(state, runtime=runtime)

        decide_with_runtime.__name__ = _name_of(route)
        return decide_with_runtime

    async def decide(state: Any) -> Any:  # the whole state, as for nodes
        return route(state)

    decide.__name__ = _name_of(route)
    return decide


def _name_of(route: Callable[..., Any]) -> str:
    return str(
        getattr(route, "__name__", None)
        or getattr(getattr(route, "func", None), "__name__", "route")
    )


def stopped(state: StrategyState) -> str:
    """Route on ``stop``: :data:`routing.FINISH` once a node has ended the item."""
    return routing.after_prepare(bool(state.get("stop")))


def linear_graph(
    reader: ReaderParams, steps: Sequence[tuple[str, Logic]], state: type[Any] = ReadState
) -> Builder:
    """``prepare`` then ``steps`` in order; any step that sets ``stop`` ends the run. ``state``
    is the graph's state type (the single-read strategies' one by default)."""
    graph: Builder = StateGraph(state, context_schema=ItemContext)
    named = [("prepare", prepare), *steps]
    for name, logic in named:
        graph.add_node(name, node(name, reader, logic))
    graph.add_edge(START, "prepare")
    names = [name for name, _ in named]
    for current, following in itertools.pairwise(names):
        graph.add_conditional_edges(
            current, edge(stopped), {routing.PROCEED: following, routing.FINISH: END}
        )
    graph.add_edge(names[-1], END)
    return graph


class GraphStrategy:
    """Base of every strategy: its parameters, ``describe``, the compiled graph and a
    failure-proof ``run``.

    A subclass names its parameter class (``params_class``: :class:`ReaderParams` or a class
    extending it), which owns the names, types and rules of its keyword parameters: a run's
    preflight checks a config's values against it without building anything
    (:func:`scanrag.params.param_problems`), the constructor builds it into
    :attr:`parameters` (refused values raise :class:`~scanrag.params.ParamProblemsError`, a
    ``ValueError``). A subclass implements :meth:`build` (the graph for its parameters, from
    node logic in ``agents``); :attr:`graph` compiles it once per instance.
    """

    name: ClassVar[str] = "graph"
    params_class: ClassVar[type[ReaderParams]] = ReaderParams
    promise: ClassVar[str] = "the pages it chooses, whole"
    page_capped: ClassVar[bool] = False  # reads the primary document up to the page cap

    def __init__(self, **params: Any) -> None:
        self.parameters = checked(self.params_class, params)

    # -- description -------------------------------------------------------------------------

    def params(self) -> dict[str, Any]:
        """The parameters, as recorded in run manifests."""
        return self.parameters.model_dump()

    def prompt_hashes(self) -> dict[str, str]:
        """Hashes of the prompt templates this configuration uses."""
        return {
            "reader": reader_prompt(self.parameters.output, task_spec(DEFAULT_TASK)).hash,
            "reader_prompts": READER_PROMPTS,
        }

    def describe(self) -> dict[str, Any]:
        """Name, parameters and prompt hashes (what a run key is derived from), and what the
        strategy promises to give its reader."""
        return {
            "name": self.name,
            "params": self.params(),
            "prompt_hashes": self.prompt_hashes(),
            "promise": self.promise,
        }

    def caps(self, settings: RunSettings) -> dict[str, int]:
        """The caps this strategy's input is read under, with the runner's ``settings``
        (``pages``: the page cap when it bounds what is read; ``chars_per_page``;
        ``images`` for image modalities)."""
        reader = self.parameters
        out: dict[str, int] = {}
        pages = reader.page_cap if reader.page_cap is not None else settings.max_pages
        if self.page_capped and pages:
            out["pages"] = int(pages)
        chars = reader.max_chars_per_page or settings.max_chars_per_page
        if chars:
            out["chars_per_page"] = int(chars)
        images = reader.max_images or settings.max_images
        if reader.modality != "text" and images:
            out["images"] = int(images)
        return out

    def cap_label(self, settings: RunSettings) -> str:
        """The caps as a table label shows them: ``≤60p ≤2000c/p ≤8img``."""
        return cap_label(self.caps(settings))

    # -- the graph ---------------------------------------------------------------------------

    def build(self) -> Builder:
        """The uncompiled graph for this configuration (the strategy's state type, context
        ``ItemContext``)."""
        raise NotImplementedError

    @cached_property
    def graph(self) -> Compiled:
        """The compiled graph, built once per instance and shared by every item."""
        return self.build().compile(name=self.name)

    def run_config(self) -> RunnableConfig:
        """LangGraph config for one item's run (e.g. ``max_concurrency``)."""
        return {}

    # -- running -----------------------------------------------------------------------------

    async def run(self, sample: Sample, ctx: StrategyContext) -> Trajectory:
        """One item: its trajectory, whatever happens (failures are statuses)."""
        started = time.perf_counter()
        trajectory = new_trajectory(self.name, sample)
        try:
            trajectory = await self.execute(ItemContext.resolve(sample, ctx), trajectory)
        except NodeFailedError as failure:
            trajectory = failure.trajectory
            _record_failure(trajectory, failure.__cause__ or failure)
        except Exception as exc:  # never let one item take the run down
            _record_failure(trajectory, exc)
        trajectory.timings["total"] = round(time.perf_counter() - started, 4)
        return trajectory

    async def execute(self, item: ItemContext, trajectory: Trajectory) -> Trajectory:
        """Run the compiled graph on one item, the trajectory object handed from node to node
        in its state."""
        state: StrategyState = {"trajectory": trajectory, "stop": False}
        final = await self.graph.ainvoke(state, self.run_config(), context=item)
        return as_trajectory(final["trajectory"])


CAP_UNITS = {"pages": "p", "chars_per_page": "c/p", "images": "img", "windows": "w"}


def cap_label(caps: Mapping[str, int]) -> str:
    """``≤60p ≤2000c/p``: caps in table form (empty without any)."""
    return " ".join(f"≤{n}{CAP_UNITS.get(name, name)}" for name, n in caps.items())


def _record_failure(trajectory: Trajectory, exc: BaseException) -> None:
    if isinstance(exc, DegradedInputError):  # runner.on_degraded: fail
        if trajectory.status != Status.DEGRADED:
            trajectory.fail(Status.DEGRADED, str(exc))
    elif isinstance(exc, ModelError):
        trajectory.fail(Status.MODEL_ERROR, str(exc))
    else:
        trajectory.fail(Status.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
