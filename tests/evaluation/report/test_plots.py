"""Plot data (layout bins, funnel, recall@k, oracle ablation) and the PNG files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from PIL import Image

from scanrag.evaluation.report import plots
from scanrag.evaluation.report.data import find_group, load_run


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


def test_wilson_intervals() -> None:
    from scanrag.evaluation.report.breakdown import wilson

    low, high = wilson(1, 1)
    assert low == pytest.approx(0.2065, abs=1e-3) and high == 1.0  # one item: wide, not 0→1
    low, high = wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-3) and high == pytest.approx(0.7634, abs=1e-3)
    assert wilson(0, 0) == (None, None)


def test_breakdown_bins_have_n_and_intervals(groups: list) -> None:
    from scanrag.evaluation.report.breakdown import breakdown_fields, breakdowns

    data = breakdowns(groups)
    assert set(data) == {"doc_type", "evidence_sources", "answer_format", "evidence_pages"}
    oracle = {b.label: b for b in data["evidence_pages"]["oracle_pages"]}
    assert sum(b.n for b in oracle.values()) == 6 and all(
        b.accuracy == 1.0 for b in oracle.values()
    )
    full = data["doc_type"]["full_doc"]
    samples = groups[0].run.samples.values()
    types = {breakdown_fields(s)["doc_type"] for s in samples}
    assert {b.label for b in full} == types
    for b in full:
        assert b.low is not None and b.high is not None and b.low <= b.accuracy <= b.high
    sources = sum(len(breakdown_fields(s)["evidence_sources"]) for s in samples)
    assert sum(b.n for b in data["evidence_sources"]["full_doc"]) == sources  # each source counts


def test_string_evidence_sources_are_decoded() -> None:
    from scanrag.evaluation.report.breakdown import breakdown_fields
    from scanrag.schemas import Sample

    sample = Sample(
        id="x",
        doc_ids=["d.pdf"],
        question="?",
        metadata={"evidence_sources": "['Chart', 'Table']", "doc_type": "Brochure"},
    )
    fields = breakdown_fields(sample)
    assert fields["evidence_sources"] == ["Chart", "Table"] and fields["doc_type"] == "Brochure"


def test_layout_cells_carry_n_and_intervals(groups: list) -> None:
    cells = plots.layout_cells(groups)
    count = {b.label: b for b in cells["count"]["oracle_pages"]}
    assert count["2"].n == 2 and count["2"].low is not None and count["2"].high == 1.0


def test_recall_ticks_are_integers_and_lines_differ() -> None:
    curves = {"a": {1: 0.5, 2: 0.7, 3: 0.9}, "b": {1: 0.5, 2: 0.7, 3: 0.9}}
    fig = plots.recall_figure(curves, {"run: bm25 (retrieval eval)": {1: 0.4, 5: 0.9}})
    ax = fig.axes[0]
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)
    lines = ax.get_lines()
    styles = {(line.get_marker(), line.get_linestyle()) for line in lines}
    assert len(styles) == len(lines) == 3  # identical curves stay distinguishable
    a, b = (list(line.get_xdata()) for line in lines[:2])
    assert a != b  # dodged sideways
    one = plots.recall_figure({"a": {1: 0.5}}, {}).axes[0]
    assert [t for t in one.get_xticks() if 0.5 <= t <= 1.5] == [1.0]


def test_cost_latency_and_breakdown_files(groups: list, tmp_path: Path) -> None:
    from scanrag.evaluation.report import plots_more

    made = [
        plots_more.plot_cost_latency(groups, "answer.accuracy", tmp_path / "c.png"),
        plots_more.plot_breakdowns(groups, tmp_path / "b.png"),
    ]
    for path in made:
        assert path is not None
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width >= 1000
    assert plots_more.plot_cost_latency(groups, None, tmp_path / "n.png") is None


def crowded_cost_plot(path: Path, monkeypatch: pytest.MonkeyPatch, n: int = 5) -> Path:
    """``cost_latency`` for ``n`` cells at (almost) the same accuracy, cost and latency: the
    case where labels used to print over each other."""
    from types import SimpleNamespace

    from scanrag.evaluation.report import plots_more
    from scanrag.evaluation.report.measures import GroupCost

    cells = [f"topk_rag+hybrid@reader=model-{i}" for i in range(n)]
    costs = {
        label: GroupCost(items=10, usd_per_q=1e-4 * (1 + i / 100), model_seconds_per_q=2.0)
        for i, label in enumerate(cells)
    }
    monkeypatch.setattr(plots_more, "group_cost", lambda g: costs[g.label])
    groups = [
        SimpleNamespace(
            label=label,
            metric=lambda name, i=i: SimpleNamespace(
                value=0.5 + i / 200, low=0.3, high=0.7, errors=i % 2
            ),
        )
        for i, label in enumerate(cells)
    ]
    written = plots_more.plot_cost_latency(groups, "answer.accuracy", path)  # type: ignore[arg-type]
    assert written == path
    return path


def test_point_labels_do_not_overprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Five cells on one spot: every label takes a free place (leader lines where set apart)
    inside its axes; the SVG keeps each label as text under its own id."""
    from matplotlib.text import Annotation, Text

    from scanrag.evaluation.report import plotkit

    figures = []
    real_save = plotkit.save
    monkeypatch.setattr(plotkit, "save", lambda fig, p: figures.append(fig) or real_save(fig, p))
    path = crowded_cost_plot(tmp_path / "cost_latency.png", monkeypatch)
    (fig,) = figures
    fig.canvas.draw()  # measured as drawn on screen (the SVG save drew at 72 dpi)
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        labels = [a for a in ax.texts if isinstance(a, Annotation) and a.get_gid()]
        assert len(labels) == 5
        boxes = [Text.get_window_extent(a, renderer) for a in labels]  # text, not leader
        frame = ax.get_window_extent(renderer)
        for i, a in enumerate(boxes):
            assert frame.x0 <= a.x0 and a.x1 <= frame.x1 and frame.y0 <= a.y0 and a.y1 <= frame.y1
            for b in boxes[i + 1 :]:
                assert not a.overlaps(b), (a, b)
        assert any(a.arrow_patch is not None for a in labels)  # some set apart, with a leader
    svg = path.with_suffix(".svg").read_text()
    for tag in ("cost", "latency"):
        for i in range(5):
            assert f'id="{plotkit.LABEL_PREFIX}-{tag}-{i}"' in svg
    assert "<text" in svg and "topk_rag+hybrid@reader=model-0" in svg
