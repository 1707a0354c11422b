"""The scoring stage: only missing pairs are scored, failures never lose work, summaries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from scanrag.evaluation.backend import EvaluationBackend
from scanrag.evaluation.base import PureScorer, Scorer, StatsOptions, mean_metric, split_rows
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.evaluation.schemas import AggregateResult, ScoreRow
from scanrag.evaluation.stage import latest_rows, score_run, summarize
from scanrag.llm import ModelError, ScriptedModel
from scanrag.protocols import ScoringJob
from scanrag.registry import SCORERS
from scanrag.rundir import RunDir
from scanrag.schemas import Sample, Trajectory

NO_CI = StatsOptions(n_resamples=0)


def sample(i: int, **kw) -> Sample:
    data = {"id": f"q{i}", "doc_ids": ["d.pdf"], "question": "?", "answer": "12", "gold_pages": [1]}
    return Sample(**(data | kw))


def traj(i: int, key: str = "cell", **kw) -> Trajectory:
    data = {"sample_id": f"q{i}", "strategy": "s", "run_key": key, "pages": [1], "answer": "12"}
    return Trajectory(**(data | kw))


def ctx(llm: ScriptedModel) -> JudgeContext:
    return JudgeContext(llm=llm, config=JudgeConfig(default_model="scripted/j"))


class Boom(PureScorer):
    name = "boom_test"

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        if trajectory.sample_id == "q1":
            raise RuntimeError("scorer bug")
        return self.new_row(trajectory, sample, metrics={"x": 1.0})

    def aggregate(self, rows, group, stats):  # type: ignore[no-untyped-def]
        usable, failed, _ = split_rows(rows)
        return AggregateResult(
            metrics={"x": mean_metric([1.0 for _ in usable], stats, excluded=failed)}
        )


@pytest.fixture
def boom() -> Iterator[None]:
    SCORERS.register("boom_test")(Boom)
    yield
    SCORERS.unregister("boom_test")


async def test_second_run_scores_nothing_and_a_lost_row_is_redone() -> None:
    llm = ScriptedModel(responder=lambda r: '{"consistent": true}')
    samples = [sample(i) for i in range(3)]
    trajs = [traj(i, answer="twelve") for i in range(3)]
    written: list[ScoreRow] = []
    rows = await score_run(trajs, samples, ["pages", "answer"], ctx(llm), on_row=written.append)
    assert len(rows) == 6 and written == rows and len(llm.requests) == 3
    again = await score_run(trajs, samples, ["pages", "answer"], ctx(llm), rows)
    assert again == [] and len(llm.requests) == 3
    kept = [r for r in rows if not (r.sample_id == "q2" and r.scorer == "answer")]
    redo = await score_run(trajs, samples, ["pages", "answer"], ctx(llm), kept)
    assert [(r.sample_id, r.scorer) for r in redo] == [("q2", "answer")]
    assert len(llm.requests) == 4


async def test_json_rows_count_as_existing() -> None:
    rows = await score_run([traj(0)], [sample(0)], ["pages"])
    dumped = [r.model_dump(mode="json") for r in rows]
    assert await score_run([traj(0)], [sample(0)], ["pages"], None, dumped) == []


async def test_retry_failed_rescores_failed_rows() -> None:
    llm = ScriptedModel([ModelError("j", "down"), '{"consistent": true}'])
    first = await score_run([traj(0, answer="twelve")], [sample(0)], ["answer"], ctx(llm))
    assert first[0].status == "judge_error"
    same = await score_run([traj(0, answer="twelve")], [sample(0)], ["answer"], ctx(llm), first)
    assert same == []
    retried = await score_run(
        [traj(0, answer="twelve")], [sample(0)], ["answer"], ctx(llm), first, retry_failed=True
    )
    assert retried[0].status == "ok" and retried[0].metrics["correct"] == 1.0
    assert latest_rows([*first, *retried])[("cell", "q0", "answer")].status == "ok"


async def test_stale_rows_are_rescored_and_current_ones_kept() -> None:
    llm = ScriptedModel(responder=lambda r: '{"consistent": true}')
    first = await score_run([traj(0, answer="twelve")], [sample(0)], ["answer"], ctx(llm))
    assert first[0].basis is not None and len(llm.requests) == 1
    # same trajectory, sample and judge: nothing to do
    assert (
        await score_run([traj(0, answer="twelve")], [sample(0)], ["answer"], ctx(llm), first) == []
    )
    # another judge model, a re-run trajectory, a corrected gold: each is scored again
    other = JudgeContext(llm=llm, config=JudgeConfig(default_model="scripted/other"))
    judged = await score_run([traj(0, answer="twelve")], [sample(0)], ["answer"], other, first)
    assert [r.judges[0].model for r in judged] == ["scripted/other"]
    rerun = await score_run([traj(0, answer="13")], [sample(0)], ["answer"], ctx(llm), first)
    regold = await score_run(
        [traj(0, answer="twelve")], [sample(0, answer="twelve")], ["answer"], ctx(llm), first
    )
    assert len(rerun) == len(regold) == 1 and len(llm.requests) == 3
    assert regold[0].details["method"] == "exact_match"  # the new gold matches without a call
    # rows written before bases existed count as current
    legacy = [r.model_copy(update={"basis": None}) for r in first]
    assert await score_run([traj(0, answer="13")], [sample(0)], ["answer"], ctx(llm), legacy) == []


async def test_a_raising_scorer_is_a_recorded_row_counted_in_the_summary(boom: None) -> None:
    written: list[ScoreRow] = []
    samples = [sample(i) for i in range(3)]
    trajs = [traj(i) for i in range(3)]
    rows = await score_run(trajs, samples, ["boom_test", "pages"], on_row=written.append)
    assert len(written) == len(rows) == 6  # no pair is dropped, the raising one included
    broken = next(r for r in rows if r.status == "scorer_error")
    assert (broken.sample_id, broken.scorer) == ("q1", "boom_test") and broken.failed
    assert broken.reason == "RuntimeError: scorer bug"
    assert broken.details["exception"] == "RuntimeError"
    assert "in compute" in broken.details["traceback"]
    assert broken.metrics == {} and broken.basis is not None
    group = summarize(rows, samples, stats=NO_CI).groups["cell"]
    assert group.status["boom_test"] == {"ok": 2, "scorer_error": 1}
    failures = group.judge_errors["boom_test"]
    assert (failures.judged, failures.failed, failures.causes) == (3, 1, {"scorer": 1})
    assert not failures.all_failed and "pages" not in group.judge_errors
    # a plain re-run keeps the row; --retry-failed scores the pair again
    assert await score_run(trajs, samples, ["boom_test"], None, rows) == []
    again = await score_run(trajs, samples, ["boom_test"], None, rows, retry_failed=True)
    assert [(r.sample_id, r.status) for r in again] == [("q1", "scorer_error")]


async def test_unknown_sample_and_task_filter() -> None:
    find = sample(1, task="find")
    rows = await score_run([traj(0), traj(1), traj(9)], [sample(0), find], ["pages"])
    by_id = {r.sample_id: r for r in rows}
    assert set(by_id) == {"q0", "q9"}  # the "find" sample is not a DocScope item
    assert by_id["q9"].status == "skipped" and "no sample" in (by_id["q9"].reason or "")


async def test_last_trajectory_per_key_wins() -> None:
    rows = await score_run([traj(0, pages=[5]), traj(0, pages=[1])], [sample(0)], ["pages"])
    assert len(rows) == 1 and rows[0].metrics["f1"] == 1.0


async def test_summarize_groups_and_prefixes() -> None:
    samples = [sample(i) for i in range(4)]
    trajs = [traj(i, "a", pages=[1]) for i in range(4)] + [
        traj(i, "b", pages=[2]) for i in range(4)
    ]
    rows = await score_run(trajs, samples, ["pages", "answer_rules", "layout"])
    summary = summarize(rows, samples, stats=NO_CI)
    assert set(summary.groups) == {"a", "b"}
    a, b = summary.groups["a"], summary.groups["b"]
    assert a.metrics["pages.f1"].value == 1.0 and b.metrics["pages.f1"].value == 0.0
    assert a.metrics["answer_rules.accuracy"].value == 1.0
    assert "completeness.complete_rate" in a.metrics  # aggregate-only scorer joins in
    assert a.items == 4 and a.status["pages"] == {"ok": 4}
    assert a.tables["layout.bins"]["count"]["1"]["accuracy"] == 1.0
    flat = summary.flat(headline_only=True)
    assert flat["a"]["pages.f1"] == 1.0 and "pages.macro_f1" not in flat["a"]
    job = ScoringJob(rows=[r.model_dump(mode="json") for r in rows], resamples=0)
    data = EvaluationBackend().summarize(job)["detail"]
    assert data["groups"]["b"]["metrics"]["pages.recall"]["value"] == 0.0


def test_summarize_counts_rows_of_unregistered_scorers() -> None:
    row = ScoreRow(sample_id="q", strategy="s", scorer="gone_scorer", metrics={"x": 1.0})
    summary = summarize([row], stats=NO_CI)
    assert summary.groups["s"].status == {"gone_scorer": {"ok": 1}}
    assert summary.groups["s"].metrics == {}


def test_score_rows_ignore_a_torn_tail(tmp_path: Path) -> None:
    assert RunDir(tmp_path).score_rows() == []  # no scores.jsonl yet
    row = ScoreRow(sample_id="q", strategy="s", scorer="pages")
    path = tmp_path / RunDir.SCORES
    path.write_text(row.model_dump_json() + "\n" + '{"sample_id": "q2", "stra')
    assert [r["sample_id"] for r in RunDir(tmp_path).score_rows()] == ["q"]


def test_scorer_base_refuses_rows_for_aggregate_only() -> None:
    assert isinstance(SCORERS.create("completeness"), Scorer)
    with pytest.raises(ValueError):
        ScoreRow.model_validate({"sample_id": "q", "strategy": "s", "scorer": "x", "status": "bad"})


async def test_the_backend_builds_the_judges_from_the_job(tmp_path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page()
    doc.save(tmp_path / "d.pdf")
    llm = ScriptedModel(responder=lambda r: '{"consistent": false}')
    rows: list[ScoreRow] = []
    job = ScoringJob(
        trajectories=[traj(0, answer="thirteen")],
        samples={"q0": sample(0, gold_pages=[1])},
        scorers=["answer", "layout"],
        params={"layout": {}},
        judges={"default": "scripted/j"},
        llm=llm,
        pdf_dirs=[tmp_path],
        cache_dir=tmp_path / "cache",
        on_row=rows.append,
    )
    await EvaluationBackend().score(job)
    by = {r.scorer: r for r in rows}
    assert by["answer"].metrics["correct"] == 0.0 and llm.requests[0].model == "scripted/j"
    assert by["layout"].metrics["position"] == 1.0  # page count found in the job's PDF folder


class BrokenAggregate(PureScorer):
    """Scores every item; its aggregate raises (a scorer bug past the item level)."""

    name = "broken_aggregate_test"

    def compute(
        self, trajectory: Trajectory, sample: Sample, judge: JudgeContext | None = None
    ) -> ScoreRow:
        return self.new_row(trajectory, sample, metrics={"x": 1.0})

    def aggregate(self, rows, group, stats):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("division by zero in the aggregate")


@pytest.fixture
def broken_aggregate() -> Iterator[None]:
    SCORERS.register("broken_aggregate_test")(BrokenAggregate)
    yield
    SCORERS.unregister("broken_aggregate_test")


async def test_a_raising_aggregate_is_recorded_and_the_rest_summarized(
    broken_aggregate: None,
) -> None:
    samples = [sample(i) for i in range(2)]
    rows = await score_run([traj(i) for i in range(2)], samples, ["broken_aggregate_test", "pages"])
    group = summarize(rows, samples, stats=NO_CI).groups["cell"]
    assert group.aggregate_errors == {
        "broken_aggregate_test": "ZeroDivisionError: division by zero in the aggregate"
    }
    assert group.status["broken_aggregate_test"] == {"ok": 2}  # its rows still counted
    assert not any(name.startswith("broken_aggregate_test.") for name in group.metrics)
    assert group.metrics["pages.f1"].value is not None  # the other scorer is summarized
