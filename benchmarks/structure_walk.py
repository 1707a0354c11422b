"""Two dynamic walks through the project's code, traced with ``sys.setprofile``.

Definitions (the figures ``benchmarks/structure.py`` prints and tests/benchmarks/
test_structure.py holds to their targets):

* a **project frame** runs code from a file of the project's source folders (``scanrag/`` and
  the folders pyproject.toml installs under it); library and standard-library frames are
  transparent: a project function that calls pydantic which calls back into a project
  validator is, for the walk, a call from the first function into the validator.
* a **stop** is one project function (one code object) entered at least once on the walk,
  however often. Comprehensions and generator expressions (``<listcomp>``, ``<genexpr>`` ...)
  belong to the function that holds them (Python 3.12 inlines them), so they are no stops.
* **files** are the distinct project files holding the stops.
* **returns**: the walk visits files in time order — at every call into a walk frame the
  current file becomes the callee's, at every return the caller's (its nearest project
  frame on the walk). Consecutive repeats merged, a visit to a file visited before is a
  return: ``returns = visits - files``. Leaving ``reader.py`` for ``planning.py`` and coming
  back is one return.

The walks, on the calling thread only:

* **read path**: one question through ``topk_rag`` (k=3, a six-page document, a fixed
  ranking, a scripted reader with a 32,768-token window so the prompt is counted against it)
  — everything that runs inside the graph's ``read`` node, from the moment LangGraph hands
  the node its state to the state update it returns: planning → context → model call → parse
  → trajectory. The model client's methods (``chat``, ``context_window_of``,
  ``count_prompt_tokens``) are one stop each; what runs inside them is the provider's side
  and not followed. The scripted model answers without suspending, so the node runs in one
  event-loop step (checked: a node that suspended would count its re-entries as returns).
* **config walk**: ``start_run`` of a small config (a generic dataset of one two-page PDF, a
  bm25 retriever, ``topk_rag`` with k=1, a scripted reader, the pure scorers ``answer_rules``
  and ``pages``) up to the registries that turn a config's names into components
  (retrievers, strategies, scorers, dataset loaders, stage backends): the walk frames are the
  project frames on the call stack of some call of a ``Registry`` method made from outside
  ``scanrag/registry.py``, from ``start_run`` down to and including that method; what the
  registry does inside (entry points, the factory) is not followed. Frames of tasks the
  event loop runs reach ``start_run`` through the loop, so a task's stops are its own
  coroutine chain.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_overhead import CITED, FixedRetriever, report_document

FOLDED = ("<listcomp>", "<genexpr>", "<dictcomp>", "<setcomp>")
RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


@dataclass
class WalkFigures:
    """A walk's counts and what they were counted from."""

    stops: list[tuple[str, str]]  # (file, function), in order of first entry
    visits: list[str]  # files in the order the walk visited them, repeats merged
    parents: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # in the DFS

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys(self.visits))

    @property
    def returns(self) -> int:
        return len(self.visits) - len(self.files)

    def entries(self) -> dict[str, int]:
        """How often the walk entered each file."""
        counts: dict[str, int] = {}
        for name in self.visits:
            counts[name] = counts.get(name, 0) + 1
        return counts

    def summary(self) -> str:
        return f"{len(self.stops)} stops in {len(self.files)} files, {self.returns} returns"

    def below(self, stop: tuple[str, str]) -> list[tuple[str, str]]:
        """The stops the walk reached through ``stop`` (itself not included)."""
        found = []
        for other in self.stops:
            up = self.parents.get(other)
            while up is not None and up != stop:
                up = self.parents.get(up)
            if up == stop:
                found.append(other)
        return found


@dataclass
class _Event:
    kind: str  # "call" or "return"
    frame: int  # serial number of the frame instance
    parent: int | None  # serial of the nearest project frame below it (its caller), if any


@dataclass
class Tracer:
    """Records the call and return events of project frames on this thread."""

    folders: Sequence[Path]
    root: Path
    events: list[_Event] = field(default_factory=list)
    code_of: dict[int, CodeType] = field(default_factory=dict)  # serial → code
    _alive: dict[int, int] = field(default_factory=dict)  # id(frame) → serial
    _held: list[FrameType] = field(default_factory=list)  # suspended frames keep their id
    _project: dict[str, str | None] = field(default_factory=dict)  # co_filename → relative

    def relative(self, filename: str) -> str | None:
        """``filename`` relative to the repository when it is a project file, else ``None``."""
        if filename not in self._project:
            path = Path(filename)
            inside = path.suffix == ".py" and any(path.is_relative_to(f) for f in self.folders)
            self._project[filename] = str(path.relative_to(self.root)) if inside else None
        return self._project[filename]

    def project(self, frame: FrameType) -> bool:
        code = frame.f_code
        return code.co_name not in FOLDED and self.relative(code.co_filename) is not None

    def serial(self, frame: FrameType) -> int | None:
        return self._alive.get(id(frame))

    def caller(self, frame: FrameType) -> int | None:
        """Serial of the nearest live project frame below ``frame``."""
        back = frame.f_back
        while back is not None:
            found = self._alive.get(id(back))
            if found is not None and self.project(back):
                return found
            back = back.f_back
        return None

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return") or not self.project(frame):
            return
        if event == "call":
            serial = self._alive.get(id(frame))
            if serial is None or self.code_of[serial] is not frame.f_code:
                serial = len(self.code_of)
                self._alive[id(frame)] = serial
                self.code_of[serial] = frame.f_code
                if frame.f_code.co_flags & RESUMABLE:
                    self._held.append(frame)
            self.events.append(_Event("call", serial, self.caller(frame)))
            return
        serial = self._alive.get(id(frame))
        if serial is None:
            return
        self.events.append(_Event("return", serial, self.caller(frame)))
        if not frame.f_code.co_flags & RESUMABLE:  # a plain function's frame ends here
            del self._alive[id(frame)]

    def run(self, call: Callable[[], Any]) -> Any:
        sys.setprofile(self.profile)
        try:
            return call()
        finally:
            sys.setprofile(None)

    def name(self, serial: int) -> tuple[str, str]:
        code = self.code_of[serial]
        return (self.relative(code.co_filename) or "?", code.co_qualname)


def figures(tracer: Tracer, walk: set[int], root: int) -> WalkFigures:
    """The walk over the frames in ``walk`` from the frame ``root``: depth first through the
    call graph of their functions (an edge caller → callee for every call between two walk
    frames, in the order each edge was first taken), each function expanded once, where it
    was first reached. Entering a callee and coming back to its caller are visits to their
    files; repeated calls (a loop over pages, rows...) add nothing."""
    callees: dict[CodeType, dict[CodeType, None]] = {}
    for event in tracer.events:
        if event.kind == "call" and event.frame in walk and event.parent in walk:
            caller = tracer.code_of[event.parent]  # type: ignore[index]
            callees.setdefault(caller, {})[tracer.code_of[event.frame]] = None
    start = tracer.code_of[root]
    stops: dict[CodeType, None] = {start: None}
    parents: dict[CodeType, CodeType] = {}
    visits: list[str] = []

    def visit(code: CodeType) -> None:
        file = tracer.relative(code.co_filename) or "?"
        if not visits or visits[-1] != file:
            visits.append(file)

    visit(start)
    stack = [(start, iter(callees.get(start, ())))]
    while stack:
        pending = stack[-1][1]
        callee = next(pending, None)
        if callee is None:
            stack.pop()
            if stack:
                visit(stack[-1][0])
            continue
        if callee in stops:
            continue
        stops[callee] = None
        parents[callee] = stack[-1][0]
        visit(callee)
        stack.append((callee, iter(callees.get(callee, ()))))

    def name(code: CodeType) -> tuple[str, str]:
        return (tracer.relative(code.co_filename) or "?", code.co_qualname)

    tree = {name(child): name(parent) for child, parent in parents.items()}
    return WalkFigures([name(c) for c in stops], visits, tree)


def descendants(tracer: Tracer, roots: set[int], cut: set[int]) -> set[int]:
    """``roots`` and every project frame called beneath them, not beneath a ``cut`` frame
    (which is kept itself)."""
    inside = set(roots)
    for event in tracer.events:
        if event.kind == "call" and event.parent in inside and event.parent not in cut:
            inside.add(event.frame)
    return inside


# --------------------------------------------------------------------------- the read path

MODEL_METHODS = ("chat", "context_window_of", "count_prompt_tokens")


def _node_function(strategy: Any, name: str) -> Callable[..., Any]:
    """The function LangGraph calls for node ``name`` of the strategy's compiled graph."""
    runnable = strategy.graph.builder.nodes[name].runnable
    return runnable.afunc or runnable.func  # type: ignore[no-any-return]


def _is_function_frame(frame_locals: dict[str, Any], function: Callable[..., Any]) -> bool:
    """Whether a frame of ``function``'s code runs ``function`` itself (not another closure
    of the same code): its free variables hold the same objects."""
    names = function.__code__.co_freevars
    cells = function.__closure__ or ()
    pairs = zip(names, cells, strict=True)
    return all(frame_locals.get(n, cell) is cell.cell_contents for n, cell in pairs)


def read_walk(folders: Sequence[Path], root: Path) -> WalkFigures:
    """The read path of one question through ``topk_rag`` (see the module docstring)."""
    from scanrag.llm import ScriptedModel
    from scanrag.protocols import StrategyContext
    from scanrag.registry import STRATEGIES
    from scanrag.schemas import Sample

    strategy = STRATEGIES.create("topk_rag", k=3)
    model = ScriptedModel(responder=lambda request: CITED, context_window=32768)
    sample = Sample(
        id="q1",
        doc_ids=["report.pdf"],
        question="What value does page 3 report?",
        answer="30",
        gold_pages=[3],
    )
    ctx = StrategyContext(
        llm=model,
        documents={"report.pdf": report_document()},
        models={"reader": "scripted/reader"},
        retriever=FixedRetriever(),
    )
    read_node = _node_function(strategy, "read")
    asyncio.run(strategy.run(sample, ctx))  # warm: the graph compiled, modules imported
    tracer = Tracer(folders, root)
    starts: list[int] = []
    models: set[int] = set()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        tracer.profile(frame, event, arg)
        if event != "call":
            return
        if frame.f_code is read_node.__code__ and _is_function_frame(frame.f_locals, read_node):
            starts.append(tracer.serial(frame))  # type: ignore[arg-type]
        elif frame.f_code.co_name in MODEL_METHODS and frame.f_locals.get("self") is model:
            models.add(tracer.serial(frame))  # type: ignore[arg-type]

    sys.setprofile(profile)
    try:
        trajectory = asyncio.run(strategy.run(sample, ctx))
    finally:
        sys.setprofile(None)
    if trajectory.status.value != "ok":
        raise RuntimeError(f"the walk's item ended {trajectory.status.value}")
    if len(starts) != 1:
        raise RuntimeError(f"the read node was entered {len(starts)} times (suspended?)")
    walk = descendants(tracer, set(starts), models)
    return figures(tracer, walk, starts[0])


# --------------------------------------------------------------------------- the config walk

CONFIG_REGISTRIES = ("RETRIEVERS", "STRATEGIES", "SCORERS", "LOADERS", "BACKENDS")


def _dataset(folder: Path) -> Path:
    """One two-page PDF and two questions on it, in the generic format."""
    import pymupdf

    pdf_dir = folder / "pdfs"
    pdf_dir.mkdir(parents=True)
    pdf = pymupdf.open()
    rows = []
    for p in (1, 2):
        page = pdf.new_page()
        page.insert_text((72, 100), f"Section {p}. The value of item P{p} is v{p}.")
        rows.append(
            {
                "id": f"q{p}",
                "doc": "doc.pdf",
                "question": f"What is the value of item P{p}?",
                "answer": f"v{p}",
                "answer_format": "Str",
                "evidence_pages": [p],
            }
        )
    pdf.save(pdf_dir / "doc.pdf")
    pdf.close()
    path = folder / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _config(folder: Path) -> dict[str, Any]:
    return {
        "name": "structure",
        "datasets": [
            {"name": "toy", "path": str(_dataset(folder)), "pdf_dir": str(folder / "pdfs")}
        ],
        "retrievers": {"bm25": {}},
        "strategies": [{"name": "topk_rag", "retriever": "bm25", "params": {"k": 1}}],
        "models": {"agents": {"reader": "scripted/structure"}},
        "runner": {
            "cache_dir": str(folder / "cache"),
            "runs_dir": str(folder / "runs"),
            "progress": False,
        },
        "scoring": {"scorers": ["answer_rules", "pages"], "resamples": 0},
    }


def config_walk(folders: Sequence[Path], root: Path) -> WalkFigures:
    """``start_run`` of a small config up to the registries (see the module docstring)."""
    from scanrag import registry
    from scanrag.config import config_from_dict
    from scanrag.llm import ScriptedModel
    from scanrag.runner import start_run

    tables = {id(getattr(registry, name)) for name in CONFIG_REGISTRIES}
    methods = {getattr(registry.Registry, name).__code__ for name in ("get", "create", "names")} | {
        registry.Registry.__contains__.__code__
    }
    model = ScriptedModel(responder=lambda request: "It is v1 [page=1]. <answer>v1</answer>")
    with tempfile.TemporaryDirectory(prefix="scanrag-structure-") as tmp:
        config = config_from_dict(_config(Path(tmp)))
        tracer = Tracer(folders, root)
        lookups: list[int] = []
        starts: list[int] = []

        def profile(frame: FrameType, event: str, arg: Any) -> None:
            tracer.profile(frame, event, arg)
            if event != "call":
                return
            code = frame.f_code
            if code is start_run.__code__:
                starts.append(tracer.serial(frame))  # type: ignore[arg-type]
            elif code in methods and id(frame.f_locals.get("self")) in tables:
                back = frame.f_back
                if back is not None and back.f_code.co_filename != code.co_filename:
                    lookups.append(tracer.serial(frame))  # type: ignore[arg-type]

        sys.setprofile(profile)
        try:
            result = start_run(config, llm=model, log=None)
        finally:
            sys.setprofile(None)
    if result.exit_code != 0:
        raise RuntimeError(f"the config walk's run ended with exit code {result.exit_code}")
    parents = {e.frame: e.parent for e in tracer.events if e.kind == "call"}
    if len(starts) != 1:
        raise RuntimeError(f"start_run was entered {len(starts)} times")
    walk: set[int] = set()
    for lookup in lookups:
        chain = _chain(lookup, parents)
        if starts[0] in chain:
            walk.update(chain[: chain.index(starts[0]) + 1])
    return figures(tracer, walk, starts[0])


def _chain(serial: int, parents: dict[int, int | None]) -> list[int]:
    chain = [serial]
    while (parent := parents.get(chain[-1])) is not None:
        chain.append(parent)
    return chain


READ_PARTS = (
    ("rendering the pages", ("agents/context.py", "build_input")),
    ("parsing the reply", ("agents/reader.py", "parse_reply")),
)


def describe(
    label: str,
    walk: WalkFigures,
    targets: tuple[int, int],
    verbose: bool,
    parts: Sequence[tuple[str, tuple[str, str]]] = (),
) -> None:
    """Print a walk's figures, how often it entered each file, the stops below the entries
    of ``parts`` (leaf components of the walk) and (``verbose``) every stop."""
    stops, files = targets
    print(f"{label}: {walk.summary()} (target: <= {stops} stops in <= {files} files)")
    entries = walk.entries()
    listed = ", ".join(f"{name} x{entries[name]}" for name in walk.files)
    print(f"  files entered: {listed}")
    for part, stop in parts:
        if stop in walk.stops:
            inner = walk.below(stop)
            files = {file for file, _ in inner}
            print(f"  of which below {stop[1]} ({part}): {len(inner)} stops in {len(files)} files")
    if verbose:
        for file, function in walk.stops:
            print(f"    {file}: {function}")
