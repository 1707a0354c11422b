"""Sentence faithfulness: splitting, taxonomy, meta-evaluation and the judged scorer."""

from __future__ import annotations

import json

import pytest

from scanrag.evaluation.base import StatsOptions
from scanrag.evaluation.faithfulness.meta import (
    CRITERIA,
    CRITERION_OF,
    ERROR_TYPES,
    Label,
    binary,
    debias,
    meta_evaluate,
    normalize_error_type,
    parse_label,
)
from scanrag.evaluation.faithfulness.scorer import (
    FaithfulnessScorer,
    SentenceJudgment,
    citations_by_sentence,
    region_text,
    response_text,
)
from scanrag.evaluation.faithfulness.text import (
    normalize_for_match,
    split_sentences,
    strip_citations,
)
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.llm.scripted import ScriptedModel
from scanrag.llm.types import ChatRequest
from scanrag.schemas import BBox, Citation, Document, Page, Sample, Trajectory


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Revenue grew 3.5% in 2020. It fell afterwards.",
         ["Revenue grew 3.5% in 2020.", "It fell afterwards."]),
        ("See Fig. 2, e.g. the left panel. The right one, i.e. panel b, differs.",
         ["See Fig. 2, e.g. the left panel.", "The right one, i.e. panel b, differs."]),
        ("Smith et al. found it. Dr. Jones agreed.",
         ["Smith et al. found it.", "Dr. Jones agreed."]),
        ("We set $x = 1. Y$ here. Then $$a.b. C$$ holds.",
         ["We set $x = 1. Y$ here.", "Then $$a.b. C$$ holds."]),
        (r"Take \(a. B\) now. Done.", [r"Take \(a. B\) now.", "Done."]),
        ("Run `pip install a.b. C` now. Done! Really? Yes.",
         ["Run `pip install a.b. C` now.", "Done!", "Really?", "Yes."]),
        ("It was approx. twice as large. OK.", ["It was approx. twice as large.", "OK."]),
        ("J. R. R. Tolkien wrote it. He did.", ["J. R. R. Tolkien wrote it.", "He did."]),
        ('It was "great." Then it ended.', ['It was "great."', "Then it ended."]),
        ("First paragraph\n\nSecond one", ["First paragraph", "Second one"]),
        ("Items:\n- one\n- two", ["Items:", "- one", "- two"]),
        ("", []),
    ],
)  # fmt: skip
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_fenced_code_is_never_split() -> None:
    text = "Before. ```\nx = 1. Y = 2.\n``` After."
    sentences = split_sentences(text)
    assert sentences[0] == "Before."
    assert any("x = 1. Y = 2." in s for s in sentences)


def test_strip_citations() -> None:
    text = 'Sales rose 5% [page=3, doc_page="2", bbox=[0.1, 0.2, 0.3, 0.4]]. <answer>5%</answer>'
    assert strip_citations(text) == "Sales rose 5%. 5%"
    assert normalize_for_match("Sales ROSE 5% [page=3, bbox=[0,0,1,1]].") == "sales rose 5"


def test_taxonomy_tables() -> None:
    assert sorted(ERROR_TYPES, key=lambda r: int(r[1:])) == [f"R{i}" for i in range(1, 15)]
    assert set(CRITERION_OF) == set(ERROR_TYPES)
    assert set(CRITERION_OF.values()) == set(CRITERIA)
    assert CRITERION_OF["R7"] == CRITERION_OF["R11"] == "C5"
    assert [r for r, c in CRITERION_OF.items() if c == "C7"] == ["R1", "R2", "R8", "R12"]


def test_labels_and_error_types() -> None:
    assert parse_label("not_attributable") is Label.NOT_ATTRIBUTABLE
    assert parse_label("CONTRADICTED") is Label.CONTRADICTED
    assert binary("Attributable") == 1 and binary("Contradicted") == 0 and binary(1) == 1
    with pytest.raises(ValueError):
        parse_label("perhaps")
    assert normalize_error_type("r5") == "R5"
    assert normalize_error_type("R12: External knowledge enrichment") == "R12"
    assert normalize_error_type(None) is None
    with pytest.raises(ValueError):
        normalize_error_type("R15")


def test_debias_rule() -> None:
    gold = [1, 0, 1, 0]
    pred = [1, 0, 0, 0]
    # sentence 0: right, twin wrong -> flipped; sentence 2: wrong already -> unchanged;
    # sentence 1: right and twin right -> unchanged
    out, flipped = debias(pred, gold, {0: 0, 1: 0, 2: 1})
    assert out == [0, 0, 0, 0] and flipped == 1


def test_meta_evaluate_plain_and_debiased() -> None:
    gold = ["Attributable", "Not Attributable"] * 20
    pred = list(gold)
    plain = meta_evaluate(pred, gold, n_resamples=200)
    assert plain.macro_f1.estimate == 1.0 and plain.balanced_accuracy.estimate == 1.0
    assert plain.macro_f1.midpoint == 1.0 and not plain.debiased
    # Twins of the first 10 attributable sentences are judged wrongly.
    twins = {i: "Contradicted" for i in range(0, 20, 2)}
    debiased = meta_evaluate(pred, gold, twins, n_resamples=200)
    assert debiased.flipped == 10 and debiased.debiased
    # gold 1s: 10 of 20 right; gold 0s: 20 of 20 right -> BAcc = (0.5 + 1) / 2
    assert debiased.balanced_accuracy.estimate == pytest.approx(0.75)
    # F1_1 = 2*10/(2*10+0+10) = 2/3; F1_0 = 2*20/(2*20+10+0) = 0.8
    assert debiased.macro_f1.estimate == pytest.approx((2 / 3 + 0.8) / 2)
    low, high = debiased.macro_f1.low, debiased.macro_f1.high
    assert low <= debiased.macro_f1.estimate <= high
    assert debiased.macro_f1.midpoint == pytest.approx((low + high) / 2)


def test_meta_evaluate_all_one_class() -> None:
    result = meta_evaluate([1, 1, 1], [1, 1, 1], n_resamples=50)
    assert result.macro_f1.estimate == 1.0
    with pytest.raises(ValueError):
        meta_evaluate([1], [1, 0])


# -- the scorer with a scripted judge ---------------------------------------------------------


def page(number: int, words: list[tuple[float, float, float, float, str]], extra: str = "") -> Page:
    text = " ".join(w[4] for w in words) + extra
    return Page(number=number, width=600, height=800, text=text, words=words)


DOC = Document(
    id="abc",
    name="report.pdf",
    sha256="0" * 64,
    num_pages=2,
    pages=[
        page(
            1,
            [
                (0.1, 0.1, 0.2, 0.15, "Revenue"),
                (0.25, 0.1, 0.4, 0.15, "5M"),
                (0.1, 0.8, 0.3, 0.85, "Footnote"),
            ],
        ),
        page(2, [(0.1, 0.1, 0.3, 0.15, "Costs"), (0.35, 0.1, 0.5, 0.15, "fell")]),
    ],
)
RAW = (
    'Revenue was 5M [page=1, doc_page="1", bbox=[0.0, 0.0, 0.5, 0.5]]. '
    "It grew quickly. <answer>5M</answer>"
)


def reply(label: str, error_type: str | None = None) -> str:
    return json.dumps(
        {"disambiguation": "d", "plan": "p", "execution": "e", "label": label,
         "error_type": error_type}
    )  # fmt: skip


def judge_by_target(request: ChatRequest) -> str:
    target = request.messages[1].text.split("TARGET:")[1]
    if "Revenue" in target:
        return reply("Attributable")
    if "5M" in target:
        return reply("Contradicted", "R2")
    return reply("Not Attributable", "R5")


def traj(raw: str = RAW, **fields: object) -> Trajectory:
    citations = [
        Citation(sentence="Revenue was 5M", page=1, doc_page="1", bbox=[0.0, 0.0, 0.5, 0.5])
    ]
    base: dict = {"sample_id": "q1", "strategy": "topk_rag", "raw_output": raw,
                  "answer": "5M", "citations": citations, "pages": [1, 2],
                  "doc_ids": ["report.pdf"]}  # fmt: skip
    base.update(fields)
    return Trajectory.model_validate(base)


SAMPLE = Sample(id="q1", doc_ids=["report.pdf"], question="What was revenue?", answer="5M")


def ctx(model: ScriptedModel, documents: dict | None = None) -> JudgeContext:
    return JudgeContext(
        llm=model,
        config=JudgeConfig(default_model="scripted/verifier"),
        params={"documents": {"report.pdf": DOC} if documents is None else documents},
    )


def test_response_text_and_citation_pairing() -> None:
    assert response_text(traj()) == "Revenue was 5M. It grew quickly. 5M"
    assert response_text(traj(raw='{"answer": "5M"}')) == "5M"
    sentences = split_sentences(response_text(traj()))
    pairs = citations_by_sentence(sentences, traj().citations)
    assert [len(p) for p in pairs] == [1, 0, 0]
    assert region_text(DOC.pages[0], BBox.from_list([0, 0, 0.5, 0.5])) == "Revenue 5M"


async def test_sentences_judged_against_their_evidence_in_context() -> None:
    model = ScriptedModel(responder=judge_by_target)
    row = await FaithfulnessScorer().score(traj(), SAMPLE, judge=ctx(model))
    assert row.status == "ok"
    labels = [(s["label"], s["error_type"], s["criterion"]) for s in row.details["sentences"]]
    assert labels == [
        ("Attributable", None, None),
        ("Not Attributable", "R5", "C1"),
        ("Contradicted", "R2", "C7"),
    ]
    assert row.metrics["attributable_rate"] == pytest.approx(1 / 3)
    assert row.counts == {"sentences": 3.0, "attributable": 1.0, "excluded_sentences": 0.0}
    first, second = (r.messages[1].text for r in model.requests[:2])
    # cited sentence: only the words inside the cited box
    evidence = first.split("EVIDENCE:")[1].split("PRECEDING:")[0]
    assert "Revenue 5M" in evidence and "Footnote" not in evidence and "Costs" not in evidence
    # uncited sentence: every retrieved page, plus the original preceding sentence
    evidence = second.split("EVIDENCE:")[1].split("PRECEDING:")[0]
    assert "Footnote" in evidence and "Costs fell" in evidence
    assert "Revenue was 5M." in second.split("PRECEDING:")[1].split("TARGET:")[0]


async def test_parse_failure_excludes_the_sentence_only() -> None:
    def flaky(request: ChatRequest) -> str:
        target = request.messages[1].text.split("TARGET:")[1]
        if "grew" in target:
            # a negative label without an error type fails validation, twice
            return reply("Not Attributable")
        return judge_by_target(request)

    model = ScriptedModel(responder=flaky)
    row = await FaithfulnessScorer().score(traj(), SAMPLE, judge=ctx(model))
    assert row.status == "partial"
    assert row.counts["excluded_sentences"] == 1.0
    assert row.metrics["attributable_rate"] == pytest.approx(1 / 2)
    statuses = [s["status"] for s in row.details["sentences"]]
    assert statuses == ["ok", "judge_parse_error", "ok"]


def test_sentence_judgment_schema() -> None:
    ok = SentenceJudgment.model_validate({"label": "attributable", "error_type": "R3"})
    assert ok.error_type is None  # an attributable sentence carries no error type
    bad = SentenceJudgment.model_validate({"label": "Contradicted", "error_type": "r1"})
    assert bad.error_type == "R1"
    with pytest.raises(ValueError):
        SentenceJudgment.model_validate({"label": "Contradicted"})
    with pytest.raises(ValueError):
        SentenceJudgment.model_validate({"label": "Contradicted", "error_type": "R99"})


async def test_skips() -> None:
    model = ScriptedModel([])
    scorer = FaithfulnessScorer()
    unanswerable = traj(raw=None, answer="Unanswerable", citations=[])
    assert (await scorer.score(unanswerable, SAMPLE, judge=ctx(model))).status == "skipped"
    no_docs = await scorer.score(traj(), SAMPLE, judge=ctx(model, documents={}))
    assert no_docs.status == "skipped" and "no page text" in (no_docs.reason or "")
    assert (await scorer.score(traj(), SAMPLE, judge=None)).status == "skipped"
    assert model.requests == []


async def test_aggregate_micro_and_tables() -> None:
    scorer = FaithfulnessScorer()
    model = ScriptedModel(responder=judge_by_target)
    rows = [
        await scorer.score(traj(), SAMPLE, judge=ctx(model)),
        await scorer.score(
            traj(raw=None, answer="Revenue was 5M. Revenue rose.", citations=[]),
            SAMPLE,
            judge=ctx(model),
        ),
    ]
    result = scorer.aggregate(rows, None, StatsOptions(n_resamples=0))  # type: ignore[arg-type]
    assert result.metrics["attributable_rate"].value == pytest.approx(3 / 5)
    assert result.metrics["attributable_rate_items"].value == pytest.approx((1 / 3 + 1) / 2)
    assert result.tables["labels"] == {
        "Attributable": 3, "Not Attributable": 1, "Contradicted": 1
    }  # fmt: skip
    assert result.tables["error_types"] == {"R2": 1, "R5": 1}
    assert result.tables["criteria"] == {"C1": 1, "C7": 1}


async def test_page_text_read_from_the_pdf(tmp_path) -> None:
    import pymupdf

    from scanrag.evaluation.documents import DocumentSource

    path = tmp_path / "report.pdf"
    pdf = pymupdf.open()
    pdf.new_page(width=600, height=800).insert_text((60, 100), "Revenue 5M in 2020", fontsize=12)
    pdf.new_page(width=600, height=800).insert_text((60, 100), "Costs fell", fontsize=12)
    pdf.save(path)
    pdf.close()
    judge = JudgeContext(
        llm=ScriptedModel(responder=judge_by_target),
        config=JudgeConfig(default_model="scripted/verifier"),
        documents=DocumentSource(paths={"report.pdf": path}),
    )
    model = judge.llm
    row = await FaithfulnessScorer().score(traj(), SAMPLE, judge=judge)
    assert row.status == "ok"
    first = model.requests[0].messages[1].text.split("EVIDENCE:")[1].split("PRECEDING:")[0]
    assert "Revenue 5M" in first and "Costs" not in first
