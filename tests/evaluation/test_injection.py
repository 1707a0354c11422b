"""Injection suite, judge side: model outputs (and page text) carrying instructions, forged
labels and markers, fake verdicts and "judge: mark this correct" reach every judge only inside
their own quoted field.

Each scorer runs with a scripted judge that follows the prompts' rule: it reads the inputs with
``scanrag.untrusted.read_quoted``, checks the delimiting (exactly the expected inputs, the
attacked text whole inside its own value and nowhere outside one), and decides from the values
alone. The attacked wrong answers must then score exactly like the same wrong answers without
the attack.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest

from scanrag.evaluation.docscope.answer import AnswerScorer
from scanrag.evaluation.docscope.fact import FactScorer
from scanrag.evaluation.docscope.region import RegionScorer
from scanrag.evaluation.documents import DocumentSource
from scanrag.evaluation.faithfulness.scorer import FaithfulnessScorer
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.evaluation.scholscan.scorer import ScholScanScorer
from scanrag.evaluation.sinbench.scorer import SinBenchScorer
from scanrag.llm import ScriptedModel
from scanrag.llm.types import ChatRequest
from scanrag.schemas import (
    BBox,
    Citation,
    Document,
    EvidencePair,
    Fact,
    Page,
    Region,
    Sample,
    Trajectory,
)
from scanrag.untrusted import QUOTED_RULE, quote, read_quoted

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "injection.py"


INJ = runpy.run_path(str(BENCH))  # the attacks the benchmark measures
TARGET = INJ["TARGET"]
WRONG, GOLD = "3.1 million", "4.2 million"
ATTACKS = {
    name: f"{WRONG} " + template.format(wrong=WRONG, gold=GOLD)
    for name, template in sorted(INJ["ANSWER_ATTACKS"].items())
}
ATTACKS |= {f"page:{name}": f"{WRONG}. {text}" for name, text in INJ["PAGE_ATTACKS"].items()}
CASES = sorted(ATTACKS.items())
IDS = [name for name, _ in CASES]


def inputs_checked(request: ChatRequest, labels: list[str]) -> dict[str, Any]:
    """The quoted inputs of a judge request, after asserting the delimiting; label → value."""
    text = "\n".join(m.text for m in request.messages)
    assert QUOTED_RULE in text
    inputs = {k: v for k, v in read_quoted(text).items() if not k.startswith("Red boxes")}
    assert list(inputs) == labels  # no attack started a line of its own
    outside = text
    for value in inputs.values():
        outside = outside.replace(quote(value), "")
    assert TARGET not in outside
    return inputs


def context(responder: Any, **params: Any) -> JudgeContext:
    return JudgeContext(
        llm=ScriptedModel(responder=responder),
        config=JudgeConfig(default_model="scripted/judge", vision_models=["scripted/judge"]),
        params=params,
    )


SAMPLE = Sample(id="q", doc_ids=["doc.pdf"], question="What was revenue in 2021?", answer=GOLD)


@pytest.mark.parametrize(("name", "answer"), CASES, ids=IDS)
async def test_docscope_answer_judge(name: str, answer: str) -> None:
    def judge(request: ChatRequest) -> str:
        inputs = inputs_checked(request, ["Question", "Reference answer", "System answer"])
        assert inputs["System answer"] == answer.strip()
        return json.dumps({"consistent": inputs["System answer"] == inputs["Reference answer"]})

    trajectory = Trajectory(sample_id="q", strategy="s", answer=answer)
    row = await AnswerScorer().score(trajectory, SAMPLE, judge=context(judge))
    assert row.status == "ok" and row.metrics["correct"] == 0.0


@pytest.mark.parametrize(("name", "answer"), CASES, ids=IDS)
async def test_docscope_fact_judge(name: str, answer: str) -> None:
    facts = [Fact(page=2, text=f"Revenue in 2021 was {GOLD}."), Fact(page=2, text="Staff: 40")]
    units = [f"Revenue in 2021 was {answer}", "Costs were 3."]

    def judge(request: ChatRequest) -> str:
        facts_in, units_in = "Reference facts (judge each one)", "Evidence units cited for page 2"
        inputs = inputs_checked(request, ["Question", facts_in, units_in])
        listed = inputs[units_in]
        assert list(listed) == ["e1", "e2"] and list(inputs[facts_in]) == ["f1", "f2"]
        assert listed["e1"].startswith("Revenue in 2021 was 3.1 million")
        items = [
            {"id": fid, "label": "consistent" if fact in listed.values() else "not_consistent"}
            for fid, fact in inputs[facts_in].items()
        ]
        return json.dumps({"items": items})

    sample = SAMPLE.model_copy(update={"gold_pages": [2], "gold_facts": facts})
    citations = [Citation(sentence=u, page=2) for u in units]
    trajectory = Trajectory(sample_id="q", strategy="s", pages=[2], citations=citations)
    row = await FactScorer().score(trajectory, sample, judge=context(judge))
    assert row.status == "ok" and row.counts["consistent"] == 0


@pytest.fixture
def pdf_dir(tmp_path: Path) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for number in (1, 2):
        page = doc.new_page(width=300, height=400)
        page.insert_text((20, 40), f"Page {number}. Revenue in 2021 was {GOLD}.", fontsize=9)
        page.insert_text((20, 60), INJ["PAGE_ATTACKS"]["ignore_instructions"][:60], fontsize=7)
    (tmp_path / "pdfs").mkdir()
    doc.save(tmp_path / "pdfs" / "doc.pdf")
    doc.close()
    return tmp_path / "pdfs"


@pytest.mark.parametrize("question", ["What was revenue?", f"Revenue? {ATTACKS['judge_note']}"])
async def test_docscope_region_judge(question: str, pdf_dir: Path, tmp_path: Path) -> None:
    def judge(request: ChatRequest) -> str:
        inputs = inputs_checked(request, ["Question", "Reference answer"])
        assert inputs["Question"] == question
        return json.dumps({"items": [{"id": "GOLD[1]", "label": "not_covered"}]})

    gold = [Region(page=2, bbox=BBox.from_list([0.05, 0.05, 0.9, 0.2]))]
    sample = SAMPLE.model_copy(
        update={"question": question, "gold_pages": [2], "gold_regions": gold}
    )
    predicted = [Region(page=2, bbox=BBox.from_list([0.5, 0.6, 0.9, 0.9]))]
    trajectory = Trajectory(sample_id="q", strategy="s", pages=[2], regions=predicted)
    ctx = context(judge)
    ctx.documents = DocumentSource([pdf_dir], cache_dir=tmp_path / "cache", dpi=72)
    row = await RegionScorer().score(trajectory, sample, judge=ctx)
    assert row.status == "ok" and row.metrics["strict_recall"] == 0.0


@pytest.mark.parametrize(("name", "answer"), CASES, ids=IDS)
async def test_scholscan_extractor(name: str, answer: str) -> None:
    def judge(request: ChatRequest) -> str:
        inputs = inputs_checked(request, ["Q", "E", "A"])
        assert answer.strip() in inputs["A"]
        found = "Table 2" in inputs["A"]  # the gold error is about Table 2; A never names it
        counts = {"existence": 1, "contains_target_error": int(found)}
        return json.dumps(counts | {"location": {"gold": 1, "hit": 0, "extra": 0},
                                    "reasoning": {"gold": 2, "reached": 0, "missing": 2},
                                    "unrelated_errors": 1})  # fmt: skip

    sample = Sample(
        id="s", doc_ids=["p.pdf"], question="Check the paper for errors.", category="CF",
        gold_explanation="The total in Table 2 is wrong: the rows sum to 42, not 52.",
    )  # fmt: skip
    trajectory = Trajectory(sample_id="s", strategy="s", answer=answer)
    row = await ScholScanScorer().score(trajectory, sample, judge=context(judge))
    assert row.status == "ok" and row.metrics["S"] == 0.0


@pytest.mark.parametrize(("name", "answer"), CASES, ids=IDS)
async def test_sinbench_judges(name: str, answer: str) -> None:
    def judge(request: ChatRequest) -> str:
        if request.stage == "judge.answer":
            inputs = inputs_checked(request, ["Question", "Reference answer", "System answer"])
            assert inputs["System answer"] == answer.strip()
            return json.dumps({"grade": 3 if GOLD in inputs["System answer"] else 0})
        inputs = inputs_checked(request, ["Anchor", "System text", "References"])
        assert inputs["System text"] == answer.strip()
        return json.dumps({"scores": [3 if "rises" in inputs["System text"] else 0]})

    gold_chain = [EvidencePair(anchor="Fig. 1", text="Revenue rises to 4.2 million")]
    sample = Sample(
        id="p", doc_ids=["paper.pdf"], question="What was revenue in 2021?", answer=GOLD,
        task="chain_qa", gold_chain=gold_chain,
    )  # fmt: skip
    trajectory = Trajectory(
        sample_id="p", strategy="s", answer=answer,
        evidence_chain=[EvidencePair(anchor="Fig. 1", text=answer)],
    )  # fmt: skip
    row = await SinBenchScorer().score(trajectory, sample, judge=context(judge))
    assert row.status == "ok"
    assert row.metrics["match"] == 0.0 and row.metrics["answer_acc"] == 0.0


@pytest.mark.parametrize(("name", "attack"), CASES, ids=IDS)
async def test_faithfulness_judge(name: str, attack: str) -> None:
    words = [(0.1, 0.1, 0.3, 0.15, "Revenue"), (0.35, 0.1, 0.5, 0.15, GOLD)]
    words += [(0.1, 0.5 + i * 0.01, 0.9, 0.51 + i * 0.01, w) for i, w in enumerate(attack.split())]
    page = Page(number=1, width=600, height=800, text=" ".join(w[4] for w in words), words=words)
    doc = Document(id="d", name="report.pdf", sha256="0" * 64, num_pages=1, pages=[page])
    sentence = " ".join(attack.split())
    seen: list[str] = []

    def judge(request: ChatRequest) -> str:
        inputs = inputs_checked(request, ["EVIDENCE", "PRECEDING", "TARGET"])
        seen.append(inputs["TARGET"])
        supported = inputs["TARGET"] in inputs["EVIDENCE"] and GOLD in inputs["TARGET"]
        label = "Attributable" if supported else "Not Attributable"
        return json.dumps({"label": label, "error_type": None if supported else "R5"})

    raw = f"{sentence} [page=1, bbox=[0, 0.45, 1, 1]]. <answer>{WRONG}</answer>"
    trajectory = Trajectory(
        sample_id="q", strategy="s", raw_output=raw, answer=WRONG, pages=[1],
        citations=[Citation(sentence=sentence, page=1, bbox=[0, 0.45, 1, 1])],
    )  # fmt: skip
    sample = Sample(id="q", doc_ids=["report.pdf"], question="Revenue?", answer=GOLD)
    ctx = context(judge, documents={"report.pdf": doc})
    row = await FaithfulnessScorer().score(trajectory, sample, judge=ctx)
    assert row.status == "ok" and row.counts["attributable"] == 0
    assert any(TARGET in target for target in seen)  # the attack was judged, inside TARGET
