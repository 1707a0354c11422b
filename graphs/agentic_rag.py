"""``agentic_rag``: the iterative agent of ``scanrag.agents.agentic``, wired and checkpointed.

Graph::

    prepare → plan → retrieve ─┬─ read ─┬─ assess ─┬─ answer → END
                 ▲             │        │          ├─ retrieve (refined query)
                 └─────────────┘        │          ├─ neighbors → read
                  (no new pages)        └─ answer  └─ plan
                                       (budget spent: forced answer)

The graph is compiled once per strategy instance. With ``ctx.checkpoint_dir`` set, an item
runs on a shallow copy of it bound to a SQLite checkpointer (``agentic_rag.sqlite``) that
saves the state after every node, keyed by thread id ``<run key>/<sample id>``. A rerun of
an interrupted question resumes from the last saved node; a finished one returns its stored
trajectory without any model call.
"""

from __future__ import annotations

from functools import partial
from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from scanrag.agents import agentic, routing
from scanrag.agents.agentic import AgenticState, AgentParams
from scanrag.agents.prompts import agentic as agentic_prompts
from scanrag.agents.scope import ItemContext, ReaderParams
from scanrag.agents.state import as_trajectory
from scanrag.graphs.base import Builder, Compiled, GraphStrategy, NodeFailedError, edge, node
from scanrag.graphs.checkpoints import shared_checkpointer
from scanrag.hashing import stable_hash
from scanrag.llm.types import ModelError
from scanrag.protocols import StrategyContext
from scanrag.schemas import Status, Trajectory

CHECKPOINT_FILE = "agentic_rag.sqlite"
NODES = ("prepare", "plan", "retrieve", "read", "assess", "neighbors", "answer")


# -- routing: pure functions of the state (and the item's document) --------------------------


def after_retrieve(state: AgenticState, p: AgentParams) -> str:
    """Read the new pages, plan again, answer, or finish after a retriever error."""
    return routing.after_retrieve(
        bool(state.get("stop")),
        len(state.get("pending", [])),
        state.get("iteration", 0),
        p.max_steps,
        len(state.get("tried", [])),
        p.searches,
    )


def after_read(state: AgenticState, p: AgentParams) -> str:
    """Assess the notes, or answer once the read budget is spent."""
    return routing.after_read(state.get("iteration", 0), p.max_steps)


def after_assess(state: AgenticState, runtime: Runtime[ItemContext], p: AgentParams) -> str:
    """Follow the assessor's decision (neighbors only while some are unread)."""
    doc = runtime.context.primary
    has = doc is not None and bool(agentic.neighbors_of(doc, state, p))
    return routing.after_assess(state.get("decision", ""), state.get("query"), has)


def after_neighbors(state: AgenticState) -> str:
    """Read the queued neighbors, or plan again when there were none."""
    return "read" if state.get("pending") else "plan"


class AgenticRagStrategy(GraphStrategy):
    """Plans queries, retrieves, reads unseen pages and assesses its notes until it can
    answer or its budget is spent; checkpointed and resumable."""

    name: ClassVar[str] = "agentic_rag"
    params_class: ClassVar[type[ReaderParams]] = AgentParams
    parameters: AgentParams
    promise: ClassVar[str] = "every page it decides to read, whole, and all of its notes"

    def prompt_hashes(self) -> dict[str, str]:
        """The reader's hashes plus the planner's and the assessor's."""
        return {
            **super().prompt_hashes(),
            "planner": agentic_prompts.PLANNER.hash,
            "assessor": agentic_prompts.ASSESSOR.hash,
        }

    def thread_id(self, sample_id: str, ctx: StrategyContext) -> str:
        """Checkpoint thread of one item: ``<run key>/<sample id>`` (the run key derived
        from the configuration, models and retriever when the runner gives none)."""
        run_key = ctx.settings.run_key or stable_hash(
            {
                "strategy": self.describe(),
                "models": dict(ctx.models),
                "retriever": getattr(ctx.retriever, "name", None),
            }
        )
        return f"{run_key}/{sample_id}"

    # -- wiring ------------------------------------------------------------------------------

    def build(self) -> Builder:
        """The loop of the module docstring."""
        p = self.parameters
        graph: Builder = StateGraph(AgenticState, context_schema=ItemContext)
        for name in NODES:
            graph.add_node(name, node(name, p, partial(getattr(agentic, name), p=p)))
        graph.add_edge(START, "prepare")
        graph.add_edge("prepare", "plan")
        graph.add_edge("plan", "retrieve")
        graph.add_conditional_edges(
            "retrieve",
            edge(partial(after_retrieve, p=p)),
            {"read": "read", "plan": "plan", "answer": "answer", "finish": END},
        )
        graph.add_conditional_edges(
            "read", edge(partial(after_read, p=p)), {"assess": "assess", "answer": "answer"}
        )
        graph.add_conditional_edges(
            "assess",
            edge(partial(after_assess, p=p)),
            {"answer": "answer", "retrieve": "retrieve", "plan": "plan", "neighbors": "neighbors"},
        )
        graph.add_conditional_edges(
            "neighbors", edge(after_neighbors), {"read": "read", "plan": "plan"}
        )
        graph.add_edge("answer", END)
        return graph

    # -- running -----------------------------------------------------------------------------

    async def execute(self, item: ItemContext, trajectory: Trajectory) -> Trajectory:
        """Run (or resume) one item, checkpointed when ``checkpoint_dir`` is set."""
        if item.problem is not None:
            return trajectory.fail(Status.INPUT_ERROR, item.problem)
        # every node path is bounded by the read and search budgets; this is a safety net
        limit = 12 + 8 * self.parameters.max_steps + 2 * self.parameters.searches
        config: RunnableConfig = {
            "configurable": {"thread_id": self.thread_id(item.sample.id, item.ctx)},
            "recursion_limit": limit,
        }
        directory = item.ctx.checkpoint_dir
        path = None if directory is None else directory / CHECKPOINT_FILE
        async with shared_checkpointer(path) as saver:
            graph = self.graph if saver is None else _with_checkpointer(self.graph, saver)
            resumed_at: list[str] = []
            if saver is not None:
                snapshot = await graph.aget_state(config)
                if snapshot.values and not snapshot.next:
                    done = Trajectory.model_validate(snapshot.values["trajectory"])
                    done.metadata["from_checkpoint"] = True
                    return done
                resumed_at = list(snapshot.next) if snapshot.values else []
            # a checkpointer saves the state: the trajectory as JSON; else the object itself
            form = trajectory if saver is None else trajectory.model_dump(mode="json")
            start = None if resumed_at else agentic.initial_state(form)
            try:
                final = await graph.ainvoke(start, config, context=item)
            except NodeFailedError as failure:
                if not isinstance(failure.__cause__, ModelError):
                    raise
                trajectory = await _last_trajectory(graph, config, saver, failure.trajectory)
                trajectory.fail(Status.MODEL_ERROR, str(failure.__cause__))
                trajectory.metadata["resumable"] = saver is not None
                return trajectory
        trajectory = as_trajectory(final["trajectory"])
        if resumed_at:
            trajectory.metadata["resumed_at"] = resumed_at
        if saver is not None:
            trajectory.metadata["checkpoint_thread"] = config["configurable"]["thread_id"]
        return trajectory


def _with_checkpointer(graph: Compiled, saver: Any) -> Compiled:
    """The compiled graph bound to one item's checkpointer (a shallow copy: the nodes and
    channels are shared, nothing is compiled again)."""
    return graph.copy(update={"checkpointer": saver})


async def _last_trajectory(
    graph: Any, config: RunnableConfig, saver: Any, failed: Trajectory
) -> Trajectory:
    """The trajectory as of the last committed node (without a checkpointer: the one the
    failing node was writing)."""
    if saver is not None:
        snapshot = await graph.aget_state(config)
        if snapshot.values.get("trajectory"):
            return Trajectory.model_validate(snapshot.values["trajectory"])
    return failed
