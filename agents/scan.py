"""Node logic of the ``scan`` strategy: map over every window of pages, then reduce.

Map: each window of the primary document (cross-paper items: only the citing paper; the cited
papers go in whole) is read on its own for cited notes, or for candidate errors when the task
is error detection. A window too long for the model is split in two (``chunk`` fallback, down
to single pages, which are then truncated). A window whose call fails is recorded and skipped.

Each map window records its steps, usage and timings on a trajectory of its own (windows run
concurrently and share nothing); the reduce node folds those records into the item's
trajectory in window order (``merge_records``) before it writes the answer.

Reduce: one call writes the final reply from all notes, in the task's output format. Notes
too long for the model are trimmed window by window (``truncate_notes`` fallback). A final
reply without usable citations takes the evidence the map steps cited; an error-detection
reply without issues takes the map steps' candidate issues.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import asdict
from typing import Annotated, Any, Literal

from typing_extensions import TypedDict

from scanrag.agents.common import add_step, task_input
from scanrag.agents.evidence import ParsedOutput, adopt_evidence, merge_citations
from scanrag.agents.notes import next_limit, notes_section, render_notes, trim_blocks
from scanrag.agents.planning import ReaderSpec
from scanrag.agents.prompts.reader import reader_prompt
from scanrag.agents.prompts.scan import NOTHING, map_prompt
from scanrag.agents.reader import read_pages
from scanrag.agents.reductions import notes_trimmed
from scanrag.agents.reply import apply_output
from scanrag.agents.scope import AtLeastOne, ReaderParams, Scope
from scanrag.agents.state import StrategyState, as_trajectory, in_form_of
from scanrag.llm.types import ContextOverflowError, ModelError
from scanrag.schemas import Citation, Reduction, ReportedIssue, Status, Trajectory

CitedPlace = Literal["map", "reduce", "both"]
EMPTY_NOTES = "(nothing relevant on these pages)"
REDUCE_TRIMS = 3
NOTES_CAUSE = "the notes of every window did not fit; each window's notes were cut"


class ScanParams(ReaderParams):
    """Window layout and map-call settings (the parameters of ``scan``, then the reader's)."""

    window: AtLeastOne = 2
    stride: AtLeastOne | None = None
    max_windows: AtLeastOne | None = None
    cited_docs_in: CitedPlace = "map"
    map_max_tokens: AtLeastOne = 512
    concurrency: AtLeastOne = 4


# --------------------------------------------------------------------------- nodes


class WindowTask(TypedDict):
    """One scan window handed to a map node: its position and its pages."""

    index: int
    pages: list[int]


class MapReduceState(StrategyState, total=False):
    """Graph state of ``scan``: the windows, the one a map node works on, and the map
    results (each map node appends its own)."""

    windows: list[list[int]]
    window: WindowTask
    results: Annotated[list[dict[str, Any]], operator.add]


def prepare(scope: Scope, state: MapReduceState, p: ScanParams) -> dict[str, Any]:
    """Record the item's documents and lay out the windows; stop when a document is missing."""
    if not scope.prepare():
        return {"stop": True}
    return {"windows": plan_windows(scope, p)}


async def map_task(scope: Scope, state: MapReduceState, p: ScanParams) -> dict[str, Any]:
    """Map one window (``state["window"]``); ``scope.trajectory`` is the window's own record,
    returned with the result for ``reduce_windows`` to fold in."""
    window = state["window"]
    result = await map_window(scope, window["index"], window["pages"], p)
    result["record"] = in_form_of(scope.trajectory, state["trajectory"])
    return {"results": [result]}


async def reduce_windows(scope: Scope, state: MapReduceState, p: ScanParams) -> dict[str, Any]:
    """Fold the windows' records into the trajectory, then write the final reply."""
    results = sorted(state.get("results", []), key=lambda r: r["index"])
    merge_records(scope.trajectory, [as_trajectory(r["record"]) for r in results])
    order_map_steps(scope)
    await reduce(scope, [{k: v for k, v in r.items() if k != "record"} for r in results], p)
    return {}


def merge_records(trajectory: Trajectory, records: Sequence[Trajectory]) -> None:
    """Fold what map windows recorded on their own trajectories into ``trajectory``: steps
    (renumbered later by ``order_map_steps``), usage and seconds per stage, models, prompt
    hashes, metadata (lists extended, mappings merged) and failures."""
    for part in records:
        _merge_calls(trajectory, part)
        trajectory.steps.extend(part.steps)
        for stage, usage in part.usage.items():
            trajectory.add_usage(stage, usage)
        for reduction in part.reductions:
            trajectory.reduce(reduction)
        for stage, seconds in part.timings.items():
            trajectory.timings[stage] = round(trajectory.timings.get(stage, 0.0) + seconds, 4)
        trajectory.models.update(part.models)
        trajectory.prompt_hashes.update(part.prompt_hashes)
        _merge_metadata(trajectory.metadata, part.metadata)
        if part.status != Status.OK:
            trajectory.status = part.status
            trajectory.errors.extend(part.errors)


def _merge_calls(trajectory: Trajectory, part: Trajectory) -> None:
    """Append a window's call records (what was sent, cost, whether and from which run a
    reply was replayed) with their indices moved past the calls already there; a call's
    ``step`` becomes the position its step takes in ``trajectory.steps`` (renumbered with the
    steps by ``order_map_steps``), ``None`` when the window added no step for it."""
    calls, steps = len(trajectory.calls), len(trajectory.steps)
    for call in part.calls:
        step = call.step
        trajectory.calls.append(
            call.model_copy(
                update={
                    "index": call.index + calls,
                    "system_of": None if call.system_of is None else call.system_of + calls,
                    "step": steps + step if step is not None and step < len(part.steps) else None,
                }
            )
        )


def _merge_metadata(into: dict[str, Any], part: dict[str, Any]) -> None:
    for key, value in part.items():
        current = into.get(key)
        if isinstance(current, list) and isinstance(value, list):
            current.extend(value)
        elif isinstance(current, dict) and isinstance(value, dict):
            _merge_metadata(current, value)
        else:
            into[key] = value


# --------------------------------------------------------------------------- logic


def plan_windows(scope: Scope, p: ScanParams) -> list[list[int]]:
    """The windows to map (at most ``max_windows``), recorded as the ``select`` step."""
    from scanrag.agents.routing import windows

    all_windows = windows(scope.doc.num_pages, p.window, p.stride)
    kept = all_windows[: p.max_windows] if p.max_windows else all_windows
    data: dict[str, Any] = {"windows": kept, "size": p.window, "stride": p.stride or p.window}
    if len(kept) < len(all_windows):
        data["skipped_windows"] = len(all_windows) - len(kept)
        seen = {page for window in kept for page in window}
        left = sorted({page for w in all_windows[len(kept) :] for page in w} - seen)
        scope.trajectory.reduce(
            Reduction(
                kind="windows",
                stage="select",
                cause=f"max_windows={p.max_windows}",
                pages_dropped=left,
                limit=p.max_windows,
            )
        )
    scope.cited_refs()  # records what the page cap leaves out of the cited documents
    add_step(scope.trajectory, "select", data)
    return kept


def _map_spec(scope: Scope, p: ScanParams) -> ReaderSpec:
    spec = scope.spec("truncate", stage="map")
    return ReaderSpec(**{**asdict(spec), "max_tokens": p.map_max_tokens})


def _is_nothing(parsed: ParsedOutput) -> bool:
    return (parsed.answer or "").strip(" .").upper() == NOTHING


async def map_window(scope: Scope, index: int, pages: list[int], p: ScanParams) -> dict[str, Any]:
    """Read one window; returns its notes, cited evidence and candidate issues."""
    cited = scope.cited_refs(record=False) if p.cited_docs_in in ("map", "both") else []
    try:
        result = await read_pages(
            scope.ctx,
            scope.trajectory,
            scope.refs(pages) + cited,
            question=scope.sample.question,
            task=scope.task,
            spec=_map_spec(scope, p),
            options=scope.options(),
            parse_ctx=scope.parse_ctx,
            task_input=task_input(scope.sample, scope.task),
            prompt=map_prompt(scope.params.output, scope.task),
            step_kind="map",
            step_data={"window": index},
            on_failure="raise_all" if len(pages) > 1 else "raise",
        )
    except ContextOverflowError as exc:
        half = len(pages) // 2
        parts = [pages[:half], pages[half:]]
        add_step(
            scope.trajectory,
            "fallback",
            {"stage": "map", "window": index, "trigger": "overflow", "mode": "chunk",
             "pages": pages, "split": parts, "error": str(exc)[:300]},
        )  # fmt: skip
        results = [await map_window(scope, index, part, p) for part in parts]
        return _merge_results(index, pages, results)
    except ModelError as exc:
        data = {"stage": "map", "window": index, "error": str(exc)}
        add_step(scope.trajectory, "model_error", data)
        return {"index": index, "pages": pages, "status": "error", "error": str(exc)}
    parsed = result.parsed
    if parsed is None:
        return {"index": index, "pages": pages, "status": "error", "error": result.error or ""}
    if _is_nothing(parsed):
        parsed.answer = None
    return {
        "index": index,
        "pages": pages,
        "status": "ok",
        "notes": render_notes(parsed, empty=EMPTY_NOTES, primary_id=scope.doc.id),
        "citations": [c.model_dump(mode="json") for c in parsed.valid_citations],
        "issues": [i.model_dump(mode="json") for i in parsed.issues],
    }


def _merge_results(index: int, pages: list[int], parts: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in parts if r["status"] == "ok"]
    return {
        "index": index,
        "pages": pages,
        "status": "ok" if ok else "error",
        "chunked": True,
        "notes": "\n".join(r["notes"] for r in ok if r["notes"] != EMPTY_NOTES) or EMPTY_NOTES,
        "citations": [c for r in ok for c in r["citations"]],
        "issues": [i for r in ok for i in r["issues"]],
        "error": "; ".join(r.get("error", "") for r in parts if r["status"] != "ok"),
    }


def order_map_steps(scope: Scope) -> None:
    """Map steps finish in any order; list them by window, then renumber all steps."""
    steps = scope.trajectory.steps
    fixed = [s for s in steps if "window" not in s.data]
    mapped = sorted(
        (s for s in steps if "window" in s.data), key=lambda s: (s.data["window"], s.index)
    )
    ordered = fixed[:2] + mapped + fixed[2:] if len(fixed) >= 2 else fixed + mapped
    new_index = {id(step): i for i, step in enumerate(ordered)}
    moved = {position: new_index[id(step)] for position, step in enumerate(steps)}
    for i, step in enumerate(ordered):
        step.index = i
    scope.trajectory.steps = ordered
    for call in scope.trajectory.calls:
        if call.step is not None:
            call.step = moved.get(call.step, call.step)


async def reduce(scope: Scope, results: list[dict[str, Any]], p: ScanParams) -> None:
    """Write the final reply from the notes of every window."""
    trajectory = scope.trajectory
    results = sorted(results, key=lambda r: r["index"])
    ok = [r for r in results if r["status"] == "ok"]
    trajectory.metadata["map"] = {
        "windows": len(results),
        "failed": [r["index"] for r in results if r["status"] != "ok"],
        "empty": [r["index"] for r in ok if r["notes"] == EMPTY_NOTES],
    }
    if not ok:
        trajectory.fail(Status.MODEL_ERROR, "every map window failed")
        return
    blocks = [(r["pages"], r["notes"]) for r in ok if r["notes"] != EMPTY_NOTES]
    cited = scope.cited_refs(record=False) if p.cited_docs_in in ("reduce", "both") else []
    limit: int | None = None
    for attempt in range(REDUCE_TRIMS + 1):
        notes = notes_section(trim_blocks(blocks, limit)) or "(no window held relevant notes)\n\n"
        try:
            result = await read_pages(
                scope.ctx,
                trajectory,
                cited,
                question=scope.sample.question,
                task=scope.task,
                spec=scope.spec("truncate", stage="reduce"),
                options=scope.options(),
                parse_ctx=scope.parse_ctx,
                extra=notes,
                task_input=task_input(scope.sample, scope.task),
                prompt=reader_prompt(scope.params.output, scope.task, "notes"),
                step_kind="reduce",
                step_data={"windows": len(ok), "notes_chars": len(notes)},
                on_failure="raise_overflow" if attempt < REDUCE_TRIMS else "record",
            )
        except ContextOverflowError:
            limit = next_limit(blocks, limit)
            data = {"stage": "reduce", "trigger": "overflow", "mode": "truncate_notes"}
            add_step(trajectory, "fallback", {**data, "max_chars_per_window": limit})
            continue
        notes_trimmed(
            trajectory, blocks, limit, stage="reduce", cause=f"context window: {NOTES_CAUSE}"
        )
        if result.parsed is not None and result.raw is not None:
            apply_output(trajectory, result.parsed, result.raw)
            _adopt_map_evidence(scope, ok)
        return


def _adopt_map_evidence(scope: Scope, ok: list[dict[str, Any]]) -> None:
    trajectory = scope.trajectory
    citations = [Citation.model_validate(c) for r in ok for c in r["citations"]]
    adopt_evidence(trajectory, merge_citations(scope.parse_ctx, citations), "map steps")
    if scope.task.reports_issues and not trajectory.issues:
        issues = [ReportedIssue.model_validate(i) for r in ok for i in r["issues"]]
        unique: dict[str, ReportedIssue] = {}
        for issue in issues:
            unique.setdefault(issue.description, issue)
        if unique:
            trajectory.issues = list(unique.values())
            trajectory.metadata["issues_source"] = "map steps"
