"""Messages the report must get right: why an item page lists no model call, why the oracle
ablation is not drawn, and intervals over too few items."""

from __future__ import annotations

from types import SimpleNamespace

from scanrag.evaluation.base import StatsOptions, mean_metric
from scanrag.evaluation.report.plots import oracle_missing
from scanrag.evaluation.report.table import MetricCell, cell_text
from scanrag.evaluation.report.viewer_calls import steps_html
from scanrag.evaluation.stats import MIN_INTERVAL_ITEMS, interval_text
from scanrag.schemas import Status, Trajectory, Usage


def test_an_item_failed_before_its_reader_says_no_call_was_made() -> None:
    """``on_degraded: fail``: the item never called a model; its page must not blame an old
    trajectory format."""
    trajectory = Trajectory(sample_id="q", strategy="full_doc").fail(
        Status.DEGRADED, "on_degraded: fail: page_cap (runner.page_caps.max_pages=60)"
    )
    html = steps_html(_with_step(trajectory))
    assert "written before calls were recorded" not in html
    assert "No model call was made: the item ended as degraded before calling a model" in html
    assert "on_degraded: fail" in html


def test_an_old_trajectory_whose_usage_counts_calls_says_they_were_not_kept() -> None:
    trajectory = _with_step(Trajectory(sample_id="q", strategy="full_doc"))
    trajectory.usage = {"reader": Usage(calls=1, prompt_tokens=10)}
    assert "written before calls were recorded" in steps_html(trajectory)
    trajectory.usage = {}
    assert "No model call was made for this item." in steps_html(trajectory)


def _with_step(trajectory: Trajectory) -> Trajectory:
    from scanrag.agents.common import add_step

    add_step(trajectory, "prepare", {"doc_id": "d"})
    return trajectory


def _group(label: str, strategy: str) -> SimpleNamespace:
    return SimpleNamespace(label=label, strategy=strategy)


def test_the_oracle_ablation_says_which_oracle_ran_and_what_it_lacks() -> None:
    standard, oracle = _group("full_doc", "full_doc"), _group("oracle_pages", "oracle_pages")
    groups = [standard, oracle]
    assert oracle_missing([standard], None, "answer.accuracy") == (
        "no oracle strategy (oracle_pages/regions/facts) ran"
    )
    ran = oracle_missing(groups, None, "answer.accuracy")  # type: ignore[arg-type]
    assert ran.startswith("oracle_pages ran") and "answer.accuracy" in ran
    bare = oracle_missing(groups, None, None)  # type: ignore[arg-type]
    assert bare == "oracle_pages ran, but no cell has an accuracy metric"


def test_an_interval_over_too_few_items_is_not_computed_and_says_so() -> None:
    stats = StatsOptions(n_resamples=200)
    one = mean_metric([0.0], stats)
    assert one.n == 1 and one.low is None and one.high is None and one.value == 0.0
    enough = mean_metric([0.0, 1.0] * MIN_INTERVAL_ITEMS, stats)
    assert enough.low is not None and enough.high is not None
    assert interval_text(one.low, one.high, one.n) == "n too small"
    assert interval_text(None, None, 0) == "—"
    assert cell_text(MetricCell(value=0.0, n=1)) == "0.000 (n too small)"
    stored = MetricCell(value=0.0, low=0.0, high=0.0, n=1)  # a summary of an older version
    assert cell_text(stored) == "0.000 (n too small)"
    cell = MetricCell(value=0.5, low=0.2, high=0.8, n=10)
    assert cell_text(cell) == "0.500 [0.200, 0.800]"
