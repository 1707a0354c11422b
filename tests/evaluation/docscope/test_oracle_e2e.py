"""End to end: trajectories built from exact gold score perfectly on every DocScope stage.

The scripted judges are not rubber stamps: the region judge says covered only when a red box
listed in its prompt equals the gold box, and the fact judge says consistent only when the
fact's text is one of the evidence units in its prompt, so a broken page filter, box
selection or evidence-unit rule shows up as a score below 1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scanrag.evaluation.base import StatsOptions
from scanrag.evaluation.documents import DocumentSource
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.evaluation.stage import score_run, summarize
from scanrag.llm import ChatRequest, ScriptedModel
from scanrag.schemas import Citation, Fact, Sample, Trajectory
from scanrag.untrusted import read_quoted

SCORERS = ["pages", "region", "region_geometry", "fact", "answer", "answer_rules", "layout"]
_GOLD = re.compile(r"^(GOLD\[\d+\]): element=\S+, box=(\[[^\]]*\])", re.MULTILINE)


def judge_reply(request: ChatRequest) -> str:
    text = request.messages[-1].text
    if request.stage == "judge.region":
        red = text.split("Red boxes on this page", 1)[1]
        items = [
            {"id": gid, "label": "covered" if box in red else "not_covered"}
            for gid, box in _GOLD.findall(text)
        ]
        return json.dumps({"items": items})
    if request.stage == "judge.fact":
        inputs = read_quoted(text)
        facts = next(v for k, v in inputs.items() if k.startswith("Reference facts"))
        units = set(next(v for k, v in inputs.items() if k.startswith("Evidence units")).values())
        items = [
            {"id": fid, "label": "consistent" if fact in units else "not_consistent"}
            for fid, fact in facts.items()
        ]
        return json.dumps({"items": items})
    gold = re.search(r"Reference answer: (.*)", text).group(1)  # type: ignore[union-attr]
    answer = re.search(r"System answer: (.*)", text).group(1)  # type: ignore[union-attr]
    return json.dumps({"consistent": gold.strip() == answer.strip()})


def oracle(sample: Sample) -> Trajectory:
    return Trajectory(
        sample_id=sample.id,
        strategy="oracle",
        run_key="oracle",
        pages=list(sample.gold_pages),
        regions=list(sample.gold_regions),
        citations=[
            Citation(
                sentence=f.text,
                page=f.page,
                doc_page="none",
                bbox=f.bbox.as_list() if f.bbox else None,
            )
            for f in sample.gold_facts
        ],
        answer=sample.answer if sample.answerable else "Unanswerable",
    )


def no_evidence(sample: Sample) -> Trajectory:
    return Trajectory(sample_id=sample.id, strategy="blind", run_key="blind", answer="no idea")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Sample], Path]:
    from scanrag.datasets import load_generic
    from scanrag.synth import generate_corpus

    out = generate_corpus(
        tmp_path_factory.mktemp("e1") / "corpus",
        seed=3,
        n_docs=2,
        min_pages=10,
        max_pages=12,
        questions_per_doc=4,
        scan_docs=0,
    )
    dataset = load_generic(out / "samples.jsonl", out / "pdfs")
    return [s for s in dataset.samples if s.task == "qa"], out / "pdfs"


async def test_oracle_trajectories_score_perfectly(corpus, tmp_path: Path) -> None:
    samples, pdfs = corpus
    assert samples and all(s.gold_regions and s.gold_facts for s in samples if s.answerable)
    llm = ScriptedModel(responder=judge_reply)
    ctx = JudgeContext(
        llm=llm,
        config=JudgeConfig(default_model="scripted/oracle-judge"),
        documents=DocumentSource([pdfs], cache_dir=tmp_path / "cache", dpi=50),
    )
    trajectories = [oracle(s) for s in samples] + [no_evidence(s) for s in samples]
    rows = await score_run(trajectories, samples, SCORERS, ctx)
    assert all(r.status in ("ok", "skipped") for r in rows), [r.reason for r in rows if r.failed]
    summary = summarize(rows, samples, stats=StatsOptions(n_resamples=0))
    good = {k: m.value for k, m in summary.groups["oracle"].metrics.items()}
    for name in (
        "pages.precision",
        "pages.recall",
        "pages.f1",
        "region.strict_precision",
        "region.strict_recall",
        "region.strict_f1",
        "region.lenient_f1",
        "region_geometry.iou",
        "region_geometry.iom",
        "region_geometry.gt_recall",
        "fact.consistency",
        "answer.accuracy",
        "answer_rules.accuracy",
        "completeness.complete_rate",
        "completeness.complete_rate_geometric",
    ):
        assert good[name] == pytest.approx(1.0), name
    bad = {k: m.value for k, m in summary.groups["blind"].metrics.items()}
    assert bad["pages.recall"] == 0.0 and bad["answer_rules.accuracy"] == 0.0
    assert bad["region.strict_f1"] is None  # no correct page: nothing to ground
    region_calls = [r for r in llm.requests if r.stage == "judge.region"]
    pages_with_regions = sum(len({g.page for g in s.gold_regions}) for s in samples)
    assert len(region_calls) == pages_with_regions  # one call per page, only for the oracle


async def test_shifted_boxes_and_wrong_citations_are_caught(corpus, tmp_path: Path) -> None:
    samples, pdfs = corpus
    ctx = JudgeContext(
        llm=ScriptedModel(responder=judge_reply),
        config=JudgeConfig(default_model="scripted/oracle-judge"),
        documents=DocumentSource([pdfs], cache_dir=tmp_path / "cache", dpi=50),
    )
    broken = []
    for s in samples:
        t = oracle(s)
        t.regions = [
            r.model_copy(update={"bbox": r.bbox.model_copy(update={"y2": r.bbox.y1 + 0.001})})
            for r in t.regions
        ]
        t.citations = [c.model_copy(update={"page": (c.page or 0) + 1}) for c in t.citations]
        t.facts = [Fact(page=1, text="unrelated")]
        broken.append(t)
    rows = await score_run(broken, samples, ["region", "region_geometry", "fact"], ctx)
    summary = summarize(rows, samples, stats=StatsOptions(n_resamples=0))
    m = {k: v.value for k, v in summary.groups["oracle"].metrics.items()}
    assert m["region.strict_recall"] == 0.0
    assert m["region_geometry.gt_recall"] < 0.1
    assert m["fact.consistency"] < 0.5
