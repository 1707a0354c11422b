"""``scanrag.agents.scan.merge_records``: what map windows record on their own trajectories is
folded into the item's trajectory in window order."""

from __future__ import annotations

from scanrag.agents.common import add_step
from scanrag.agents.scan import merge_records
from scanrag.schemas import Status, Trajectory, Usage


def _window(index: int, *, tokens: int, error: str | None = None) -> Trajectory:
    part = Trajectory(sample_id="q1", strategy="scan")
    add_step(part, "map", {"window": index, "pages": [index + 1]}, seconds=0.5)
    part.add_usage("map", Usage(prompt_tokens=tokens, completion_tokens=1, calls=1))
    part.timings["map"] = 0.25
    part.models["reader"] = "m"
    part.prompt_hashes["map"] = "h"
    part.metadata["context_fallbacks"] = [{"window": index}]
    part.metadata["cited_page_cap"] = {f"doc{index}": index}
    if error:
        part.fail(Status.MODEL_ERROR, error)
    return part


def test_records_fold_in_window_order() -> None:
    trajectory = Trajectory(sample_id="q1", strategy="scan")
    add_step(trajectory, "prepare", {})
    trajectory.metadata["context_fallbacks"] = [{"window": "before"}]
    merge_records(trajectory, [_window(0, tokens=10), _window(1, tokens=5, error="overflow")])
    assert [(s.kind, s.data.get("window")) for s in trajectory.steps] == [
        ("prepare", None), ("map", 0), ("map", 1),
    ]  # fmt: skip
    usage = trajectory.usage["map"]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (15, 2, 2)
    assert trajectory.timings["map"] == 0.5
    assert trajectory.models == {"reader": "m"} and trajectory.prompt_hashes == {"map": "h"}
    assert trajectory.metadata["context_fallbacks"] == [
        {"window": "before"}, {"window": 0}, {"window": 1},
    ]  # fmt: skip
    assert trajectory.metadata["cited_page_cap"] == {"doc0": 0, "doc1": 1}
    assert trajectory.status == Status.MODEL_ERROR and trajectory.errors == ["overflow"]


def test_clean_records_leave_the_status_alone() -> None:
    trajectory = Trajectory(sample_id="q1", strategy="scan")
    merge_records(trajectory, [_window(0, tokens=1)])
    assert trajectory.status == Status.OK and trajectory.errors == []


def test_the_windows_reductions_are_folded_in() -> None:
    from scanrag.schemas import Reduction

    trajectory = Trajectory(sample_id="q1", strategy="scan")
    part = _window(0, tokens=3)
    part.reduce(Reduction(kind="context", stage="map", cause="window", pages_cut=[1]))
    merge_records(trajectory, [part, _window(1, tokens=3)])
    assert [r.pages_cut for r in trajectory.reductions] == [[1]] and trajectory.degraded
