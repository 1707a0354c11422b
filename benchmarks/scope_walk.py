"""Follow one item's scope from ``scanrag.agents.baseline.read_ranked``: where its task goes.

Runs ``read_ranked`` once (a schema-built document, one QA sample, a scripted reader) under a
profiler and records, in call order, every call of a project function that receives what the
node's ``scope`` carries: the ``Scope`` itself, its ``ItemContext``, the ``StrategyContext``,
the ``Sample``, the sample's task (a parameter named ``task`` holding the task's name, or the
task table's ``TaskSpec``) or the reader's ``ReaderSpec``. A task name counts under a
parameter named ``task`` or ``name`` (``task_spec(name)``). Prints

* stops: those calls, in order (``file:function``), and their count;
* files: the distinct files they are in;
* task lookups: the stops in ``scanrag/tasks.py`` (the task table read again);
* climbs back up: how often the walk goes from a lower layer back to a higher one
  (scanrag → indexes → retrievers → agents → graphs), e.g. ``scanrag/tasks.py`` then
  ``agents/prompts/reader.py``: a value handed down to be looked up and handed back.

Run from a checkout's root (any version with ``scanrag.agents.scope.ItemContext``)::

    python benchmarks/scope_walk.py [--cold]

``--cold`` clears the prompt caches first (the first item of a run); by default the prompts
are built once beforehand, as for every later item.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from pathlib import Path
from typing import Any

ROOT = Path.cwd().resolve()
LAYERS = ("scanrag", "indexes", "retrievers", "agents", "graphs")
REPLY = "Value 30 is reported [page=3, bbox=[0.1, 0.1, 0.9, 0.2]]. <answer>30</answer>"


def _document() -> Any:
    from scanrag.schemas import Document, Page

    pages = [
        Page(number=i, doc_page=str(i), width=612, height=792, text=f"Page {i}: value {i * 10}.")
        for i in range(1, 7)
    ]
    return Document(id="d" * 16, name="report.pdf", sha256="d" * 64, num_pages=6, pages=pages)


def _scope() -> tuple[Any, Any]:
    from scanrag.agents.scope import ItemContext, ReaderParams, Scope
    from scanrag.llm import ScriptedModel
    from scanrag.protocols import StrategyContext
    from scanrag.schemas import Sample, Trajectory

    doc = _document()
    sample = Sample(id="q1", doc_ids=["report.pdf"], question="What value is on page 3?")
    llm = ScriptedModel([REPLY])
    ctx = StrategyContext(llm=llm, documents={"report.pdf": doc}, models={"reader": "scripted/x"})
    item = ItemContext.resolve(sample, ctx)
    scope = Scope(item, Trajectory(sample_id=sample.id, strategy="topk_rag"), ReaderParams())
    state = {"refs": [(doc.id, 3), (doc.id, 2)], "priority": [1, 2]}
    return scope, state


def _layer(path: str) -> int:
    top = path.split("/", 1)[0]
    return LAYERS.index(top) if top in LAYERS else -1


def walk(cold: bool) -> list[str]:
    from scanrag.agents import baseline
    from scanrag.agents.prompts import reader as prompts
    from scanrag.agents.reader import ReaderSpec
    from scanrag.tasks import TaskSpec

    scope, state = _scope()
    task_name = scope.sample.task
    tracked = [scope, scope.item, scope.ctx, scope.sample]
    if cold:
        prompts.reader_prompt.cache_clear()
    stops: list[str] = []

    def carries(name: str, value: Any) -> bool:
        if any(value is t for t in tracked) or isinstance(value, ReaderSpec):
            return True
        if name in ("task", "name") and isinstance(value, str) and value == task_name:
            return True
        return isinstance(value, TaskSpec)

    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        path = Path(code.co_filename)
        if not path.is_relative_to(ROOT) or {"tests", ".venv", "benchmarks"} & set(
            path.relative_to(ROOT).parts[:1]
        ):
            return
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if any(carries(n, frame.f_locals.get(n)) for n in names):
            stops.append(f"{path.relative_to(ROOT)}:{code.co_name}")

    sys.setprofile(profile)
    try:
        asyncio.run(baseline.read_ranked(scope, state))
    finally:
        sys.setprofile(None)
    assert scope.trajectory.answer == "30", scope.trajectory.errors
    return stops


def climbs(stops: list[str]) -> int:
    layers = [_layer(s.split(":")[0]) for s in stops]
    return sum(1 for a, b in itertools.pairwise(layers) if 0 <= a < b)


def main() -> None:
    cold = "--cold" in sys.argv[1:]
    if not cold:
        walk(cold=False)  # build the prompts once, as the first item of a run does
    stops = walk(cold)
    files = sorted({s.split(":")[0] for s in stops})
    print(
        "scope walk from scanrag.agents.baseline.read_ranked "
        f"({'cold' if cold else 'warm'} prompts)"
    )
    lookups = sum(1 for s in stops if s.startswith("scanrag/tasks.py:"))
    print(
        f"stops: {len(stops)}  files: {len(files)}  task lookups: {lookups}  "
        f"climbs back up: {climbs(stops)}"
    )
    for stop in stops:
        print(f"  {stop}")


if __name__ == "__main__":
    main()
