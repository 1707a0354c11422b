"""``agentic_rag``: the iterative agent of ``agents.agentic``, wired and checkpointed.

Graph::

    prepare → plan → retrieve ─┬─ read ─┬─ assess ─┬─ answer → END
                 ▲             │        │          ├─ retrieve (refined query)
                 └─────────────┘        │          ├─ neighbors → read
                  (no new pages)        └─ answer  └─ plan
                                       (budget spent: forced answer)

With ``ctx.checkpoint_dir`` set, state is saved after every node in a SQLite checkpointer
(``agentic_rag.sqlite``), keyed by thread id ``<run key>/<sample id>``. A rerun of an
interrupted question resumes from the last saved node; a finished one returns its stored
trajectory without any model call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from agents import agentic, routing
from agents.agentic import AgentParams, AgentState
from agents.common import InputProblemError, add_step, resolve_documents
from agents.evidence import ParseContext
from agents.prompts import agentic as agentic_prompts
from agents.scope import Scope
from graphs.base import GraphStrategy
from scanrag.hashing import stable_hash
from scanrag.llm.types import ModelError
from scanrag.schemas import Status, Trajectory

CHECKPOINT_FILE = "agentic_rag.sqlite"


class AgenticRagStrategy(GraphStrategy):
    name: ClassVar[str] = "agentic_rag"

    def __init__(
        self,
        *,
        k: int = 5,
        pages_per_step: int = 3,
        max_steps: int = 3,
        plan_first: bool = True,
        planner_max_tokens: int = 64,
        assessor_max_tokens: int = 96,
        max_searches: int | None = None,
        **reader: Any,
    ) -> None:
        super().__init__(**reader)
        self.agent = AgentParams(
            k=k,
            pages_per_step=pages_per_step,
            max_steps=max_steps,
            max_searches=max_searches,
            plan_first=plan_first,
            planner_max_tokens=planner_max_tokens,
            assessor_max_tokens=assessor_max_tokens,
        )

    def params(self) -> dict[str, Any]:
        return {**self.agent.as_dict(), **super().params()}

    def prompt_hashes(self) -> dict[str, str]:
        return {
            **super().prompt_hashes(),
            "planner": agentic_prompts.PLANNER.hash,
            "assessor": agentic_prompts.ASSESSOR.hash,
        }

    def thread_id(self, scope: Scope) -> str:
        run_key = scope.ctx.settings.get("run_key") or stable_hash(
            {
                "strategy": self.describe(),
                "models": dict(scope.ctx.models),
                "retriever": getattr(scope.ctx.retriever, "name", None),
            }
        )
        return f"{run_key}/{scope.sample.id}"

    # -- wiring ------------------------------------------------------------------------------

    def build(self, scope: Scope) -> StateGraph:
        p = self.agent

        def node(fn: Any) -> Any:
            async def run(state: AgentState) -> dict[str, Any]:
                return dict(await fn(scope, state, p))

            return run

        async def prepare(state: AgentState) -> dict[str, Any]:
            trajectory = agentic.load(scope, state)
            add_step(
                trajectory,
                "prepare",
                {
                    "doc_id": scope.doc.id,
                    "num_pages": scope.doc.num_pages,
                    "max_steps": p.max_steps,
                },
            )
            return {"trajectory": agentic.dump(trajectory)}

        def after_retrieve(state: AgentState) -> str:
            return routing.after_retrieve(
                bool(state.get("stop")),
                len(state.get("pending", [])),
                state.get("iteration", 0),
                p.max_steps,
                len(state.get("tried", [])),
                p.searches,
            )

        def after_read(state: AgentState) -> str:
            return routing.after_read(state.get("iteration", 0), p.max_steps)

        def after_assess(state: AgentState) -> str:
            has = bool(agentic.neighbours_of(scope, state, p))
            return routing.after_assess(state.get("decision", ""), state.get("query"), has)

        def after_neighbors(state: AgentState) -> str:
            return "read" if state.get("pending") else "plan"

        graph = StateGraph(AgentState)
        graph.add_node("prepare", prepare)
        for name in ("plan", "retrieve", "read", "assess", "neighbors", "answer"):
            graph.add_node(name, node(getattr(agentic, name)))
        graph.add_edge(START, "prepare")
        graph.add_edge("prepare", "plan")
        graph.add_edge("plan", "retrieve")
        graph.add_conditional_edges(
            "retrieve",
            after_retrieve,
            {"read": "read", "plan": "plan", "answer": "answer", "finish": END},
        )
        graph.add_conditional_edges("read", after_read, {"assess": "assess", "answer": "answer"})
        graph.add_conditional_edges(
            "assess",
            after_assess,
            {"answer": "answer", "retrieve": "retrieve", "plan": "plan", "neighbors": "neighbors"},
        )
        graph.add_conditional_edges("neighbors", after_neighbors, {"read": "read", "plan": "plan"})
        graph.add_edge("answer", END)
        return graph

    # -- running -----------------------------------------------------------------------------

    async def execute(self, scope: Scope) -> Trajectory:
        try:
            scope.primary, scope.others = resolve_documents(scope.sample, scope.ctx)
        except InputProblemError as exc:
            return scope.trajectory.fail(Status.INPUT_ERROR, str(exc))
        scope.parse_ctx = ParseContext.for_documents(scope.primary, scope.others)
        # every node path is bounded by the read and search budgets; this is a safety net
        limit = 12 + 8 * self.agent.max_steps + 2 * self.agent.searches
        config: RunnableConfig = {
            "configurable": {"thread_id": self.thread_id(scope)},
            "recursion_limit": limit,
        }
        async with _checkpointer(scope.ctx.checkpoint_dir) as saver:
            graph = self.build(scope).compile(checkpointer=saver)
            resumed_at: list[str] = []
            if saver is not None:
                snapshot = await graph.aget_state(config)
                if snapshot.values and not snapshot.next:
                    done = Trajectory.model_validate(snapshot.values["trajectory"])
                    done.metadata["from_checkpoint"] = True
                    return done
                resumed_at = list(snapshot.next) if snapshot.values else []
            try:
                if resumed_at:
                    final = await graph.ainvoke(None, config)
                else:
                    final = await graph.ainvoke(agentic.initial_state(scope), config)
            except ModelError as exc:
                trajectory = await _last_trajectory(graph, config, saver, scope)
                trajectory.fail(Status.MODEL_ERROR, str(exc))
                trajectory.metadata["resumable"] = saver is not None
                return trajectory
        trajectory = Trajectory.model_validate(final["trajectory"])
        if resumed_at:
            trajectory.metadata["resumed_at"] = resumed_at
        if saver is not None:
            trajectory.metadata["checkpoint_thread"] = config["configurable"]["thread_id"]
        return trajectory


async def _last_trajectory(
    graph: Any, config: RunnableConfig, saver: Any, scope: Scope
) -> Trajectory:
    """The trajectory as of the last committed node (or the scope's, without a checkpointer)."""
    if saver is not None:
        snapshot = await graph.aget_state(config)
        if snapshot.values.get("trajectory"):
            return Trajectory.model_validate(snapshot.values["trajectory"])
    return scope.trajectory


@asynccontextmanager
async def _checkpointer(directory: Path | None) -> AsyncIterator[Any]:
    if directory is None:
        yield None
        return
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    directory.mkdir(parents=True, exist_ok=True)
    async with aiosqlite.connect(str(directory / CHECKPOINT_FILE), timeout=60) as conn:
        yield AsyncSqliteSaver(conn)
