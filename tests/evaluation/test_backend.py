"""The built-in scoring backend: plan, score and summarize, each from one ScoringJob."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from scanrag.evaluation.backend import EvaluationBackend
from scanrag.evaluation.schemas import ScoreRow
from scanrag.llm import ModelError, ScriptedModel
from scanrag.protocols import ScoringBackend, ScoringJob
from scanrag.schemas import Sample, Trajectory


def job(n: int = 2, **changes) -> ScoringJob:
    samples = {
        f"q{i}": Sample(id=f"q{i}", doc_ids=["d.pdf"], question="?", answer="12", gold_pages=[1])
        for i in range(n)
    }
    trajectories = [
        Trajectory(sample_id=f"q{i}", strategy="s", run_key="cell", pages=[1], answer="twelve")
        for i in range(n)
    ]
    base = ScoringJob(
        trajectories=trajectories,
        samples=samples,
        scorers=["pages", "answer"],
        judges={"default": "scripted/j"},
        resamples=0,
    )
    return replace(base, **changes)


def test_it_is_a_scoring_backend() -> None:
    assert isinstance(EvaluationBackend(), ScoringBackend)


def test_plan_checks_the_judges_and_plans_nothing_when_they_are_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("{nope}", encoding="utf-8")
    wrong = job(judges={"nobody": "m"}, judge_prompts={"answer": str(bad)})
    plan = EvaluationBackend().plan(wrong)
    assert not plan.pending
    assert plan.problems[0].startswith("models.judges.nobody: unknown judge role 'nobody'")
    assert plan.problems[1].startswith("scoring.judge_prompts.answer: ")
    assert "unknown fields nope" in plan.problems[1]
    # without trajectories it only checks: an unknown scorer is the kernel's to report
    assert EvaluationBackend().plan(job(trajectories=(), scorers=["no_such"])).problems == []


async def test_plan_score_plan_then_summarize() -> None:
    backend = EvaluationBackend()
    rows: list[ScoreRow] = []
    llm = ScriptedModel(responder=lambda r: '{"consistent": true}')
    first = job(llm=llm, on_row=rows.append)
    assert [(t.sample_id, s) for t, s in backend.plan(first).pending] == [
        ("q0", "pages"),
        ("q0", "answer"),
        ("q1", "pages"),
        ("q1", "answer"),
    ]
    await backend.score(first)
    written = [r.model_dump(mode="json") for r in rows]
    assert len(written) == 4 and len(llm.requests) == 2
    assert not backend.plan(replace(first, rows=written)).pending
    summary = backend.summarize(replace(first, rows=written))
    assert summary["headline"]["cell"]["answer.accuracy"] == 1.0
    assert summary["detail"]["n_resamples"] == 0


async def test_retry_failed_is_the_reuse_policy() -> None:
    rows: list[ScoreRow] = []
    llm = ScriptedModel([ModelError("j", "down"), '{"consistent": true}'])
    first = job(n=1, scorers=["answer"], llm=llm, on_row=rows.append)
    await EvaluationBackend().score(first)
    assert rows[0].status == "judge_error"
    again = replace(first, rows=[rows[0].model_dump(mode="json")])
    assert not EvaluationBackend().plan(again).pending
    retry = replace(again, retry_failed=True)
    assert [s for _, s in EvaluationBackend().plan(retry).pending] == ["answer"]
    await EvaluationBackend().score(retry)
    assert rows[-1].status == "ok"


def test_chunks_of_one_setup_share_the_judge_context(tmp_path: Path) -> None:
    backend = EvaluationBackend()
    whole = job(n=4, pdf_dirs=[tmp_path], cache_dir=tmp_path)
    first, second = (replace(whole, trajectories=whole.trajectories[i : i + 2]) for i in (0, 2))
    ctx = backend.judge_context(first)
    assert backend.judge_context(second) is ctx  # opened documents are kept between chunks
    other = backend.judge_context(replace(whole, judges={"default": "scripted/other"}))
    assert other is not ctx and other.config.default_model == "scripted/other"
    assert backend.judge_context(replace(whole, llm=ScriptedModel())) is not ctx


async def test_a_checked_job_is_scored_and_summarized_from_the_bound_scorers(
    monkeypatch,
) -> None:
    """``plan`` binds the job's scorers (and the aggregate-only ones that depend on them);
    scoring and the summary then build from them without asking the registry."""
    from scanrag.registry import SCORERS

    backend = EvaluationBackend()
    assert backend.plan(job(trajectories=())).problems == []
    assert {"pages", "answer"} <= set(backend.table.factories)

    def asked(*args, **kwargs):
        raise AssertionError(f"the registry was asked for {args} after the check")

    for method in ("get", "create", "names"):
        monkeypatch.setattr(SCORERS, method, asked)
    rows: list[ScoreRow] = []
    llm = ScriptedModel(responder=lambda r: '{"consistent": true}')
    first = job(llm=llm, on_row=rows.append)
    await backend.score(first)
    summary = backend.summarize(replace(first, rows=[r.model_dump(mode="json") for r in rows]))
    assert summary["headline"]["cell"]["answer.accuracy"] == 1.0
    assert summary["headline"]["cell"]["pages.recall"] == 1.0
