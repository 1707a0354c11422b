"""Plot data (layout bins, funnel, recall@k, oracle ablation) and the PNG files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from PIL import Image

from evaluation.report import plots
from evaluation.report.data import find_group, load_run


@pytest.fixture(scope="module")
def groups(finished_run: Path) -> list:
    return load_run(finished_run).groups


def test_layout_bins_from_the_scorer_match_the_fallback(groups: list) -> None:
    for group in groups:
        stored = plots.layout_bins(group)
        computed = plots.layout_bins(dataclasses.replace(group, summary=None))
        for factor in ("count", "span", "clusters"):
            for label, cell in stored[factor].items():
                assert {k: cell[k] for k in ("n", "answered", "correct")} == {
                    k: computed[factor][label][k] for k in ("n", "answered", "correct")
                }
    oracle = plots.layout_bins(find_group(groups, "oracle_pages"))
    assert oracle["count"]["1"]["accuracy"] == 1.0 and oracle["count"]["2"]["answered"] == 2


def test_funnel_is_cumulative_and_ends_at_accuracy(groups: list) -> None:
    for group in groups:
        stages = plots.funnel(group)
        assert [s for s, _ in stages] == ["pages", "regions", "facts", "answer"]
        shares = [v for _, v in stages]
        assert shares == sorted(shares, reverse=True)
        assert shares[-1] <= group.metric("answer.accuracy").value + 1e-9
    oracle = dict(plots.funnel(find_group(groups, "oracle_pages")))
    # multi-page questions cite only their first gold page: 4 of 6 find every gold page
    assert oracle["pages"] == pytest.approx(4 / 6)


def test_recall_at_k_comes_from_the_retrieve_steps(groups: list) -> None:
    topk = find_group(groups, "topk_rag+bm25")
    ranked = plots.rankings(topk)
    assert set(ranked) == set(topk.trajectories) and all(len(r) == 1 for r in ranked.values())
    samples = topk.run.samples
    expected = sum(
        len(set(ranked[s][:1]) & set(samples[s].gold_pages)) / len(samples[s].gold_pages)
        for s in ranked
    ) / len(ranked)
    assert plots.recall_curve(topk) == {1: pytest.approx(expected)}
    assert plots.recall_curve(find_group(groups, "full_doc")) == {}


def test_plot_files(groups: list, tmp_path: Path) -> None:
    made = {
        "layout": plots.plot_layout(groups, tmp_path / "layout.png"),
        "funnel": plots.plot_funnel(groups, tmp_path / "funnel.png"),
        "recall": plots.plot_recall(groups, [groups[0].run], tmp_path / "recall.png"),
        "oracle": plots.plot_oracle(groups, groups[0], "answer.accuracy", tmp_path / "o.png"),
    }
    for name, path in made.items():
        assert path is not None and path.is_file(), name
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width >= 500 and image.height >= 300
    standard = [g for g in groups if not g.strategy.startswith("oracle")]
    assert plots.plot_oracle(standard, None, "answer.accuracy", tmp_path / "x.png") is None
    assert (
        plots.plot_recall([find_group(groups, "full_doc")], [groups[0].run], tmp_path / "r.png")
        is None
    )


def test_ablation_order_and_stored_retrieval(run_copy: Path, tmp_path: Path) -> None:
    run = load_run(run_copy)
    topk = find_group(run.groups, "topk_rag+bm25")
    chosen = plots.ablation_groups(run.groups, topk)
    assert [g.key for g in chosen] == ["topk_rag+bm25", "oracle_pages"]
    assert [g.key for g in plots.ablation_groups(run.groups, None)] == [
        "full_doc",
        "topk_rag+bm25",
        "oracle_pages",
    ]
    payload = {"retrievers": {"bm25": {"macro": {"recall@1": 0.4, "recall@5": 0.9, "mrr@5": 1}}}}
    (run_copy / "retrieval.json").write_text(json.dumps(payload))
    assert plots.stored_retrieval(run) == {"report-test: bm25 (retrieval eval)": {1: 0.4, 5: 0.9}}
    only_full = [find_group(run.groups, "full_doc")]
    assert plots.plot_recall(only_full, [run], tmp_path / "r.png") is not None
