"""A mixed MMLongBench-Doc set for the official pipeline, shared by its test and by the harness
that labels it with the benchmark's released pipeline
(``benchmarks/mmlongbench_pipeline_agreement.py``).

Each case is a question with its gold and format, the model's response (``None``: the model
call failed) and the extractor's reply (``None``: the extraction call failed). The set mixes
refusals in several spellings, answerable items the system refused, failed extractions (call
errors, replies without ``Extracted answer:``, failed model calls), list answers written as
Python expressions, a gold that makes ``eval_score`` raise, and ordinary answers of every
format. :func:`score_ours` scores it with the ``mmlongbench`` scorer (official profile,
official call shape, the prompt file ``golden/extractor_prompt.md``).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "golden"
PROMPT = GOLDEN / "extractor_prompt.md"
NA = "Not answerable"


def _x(answer: str, fmt: str = "String") -> str:
    return f"Extracted answer: {answer}\nAnswer format: {fmt}"


def _case(
    question: str, gold: str, fmt: str, response: str | None, extraction: str | None
) -> dict[str, Any]:
    return {
        "question": question,
        "answer": gold,
        "answer_format": fmt,
        "response": response,
        "extraction": extraction,
    }


CASES: list[dict[str, Any]] = [
    # refusals, as extracted
    _case("Q01 Who is the CFO?", NA, "None", "The report never names a CFO.", _x(NA)),
    _case("Q02 What is the 2030 target?", NA, "None", "No target is given.", _x("Unanswerable")),
    _case("Q03 Which city hosts the HQ?", NA, "None", "Not stated.", _x("(Not answerable)")),
    _case("Q04 What is the tax id?", NA, "None", "Not in the document.", _x("**Not answerable**")),
    _case("Q05 Who audited it?", NA, "None", "Unknown from the text.", _x("not answerable.")),
    _case("Q06 What is the CEO's name?", "Jane Roe", "Str", "I can't tell.", _x(NA)),
    _case("Q07 How many plants?", "4", "Int", "Cannot be determined.", _x("Unanswerable")),
    _case("Q08 What was the growth?", NA, "None", "The image is unreadable.", _x("Fail to answer")),
    _case("Q09 What is the ticker?", NA, "None", "It is ACME.", _x("ACME")),
    # failed extractions and failed model calls
    _case("Q10 What is the margin?", "12%", "Float", "The margin is 12%.", None),
    _case("Q11 How many staff?", "1200", "Int", "About 1200 staff.", "I think it is 1200."),
    _case(
        "Q12 How many sites?",
        "12",
        "Int",
        "12 sites.",
        "Answer format: Integer\nExtracted answer: 12",
    ),
    _case("Q13 What is the rate?", "5%", "Float", None, _x("Fail to answer")),
    _case("Q14 What is the unit?", "kg", "Str", None, None),
    _case("Q15 What is the CTO's age?", NA, "None", "It says nothing.", None),
    _case("Q16 Which year?", "2019", "Str", "2019.", "Extracted answer:2019"),
    # list answers written as expressions
    _case(
        "Q17 Which colours?",
        "['White', '10%']",
        "List",
        "White, 10%.",
        _x("['White'] + ['10%']", "List"),
    ),
    _case("Q18 Which letters?", "['a', 'b']", "List", "a and b.", _x("[['a', 'b']][0]", "List")),
    _case("Q19 Which month?", "['Jun']", "List", "June.", _x("[f'Jun']", "List")),
    _case("Q20 Which pair?", "['b', 'a']", "List", "a, b.", _x("['a', 'b'][::-1]", "List")),
    _case("Q21 Which two?", "['x', 'y']", "List", "x, y.", _x("[*['x'], 'y']", "List")),
    _case("Q22 Which numbers?", "['3', '4']", "List", "3 and 4.", _x("[1+2, 2*2]", "List")),
    _case("Q23 Which fruit?", "['Apple']", "List", "Apple.", _x("[Apple]", "List")),
    _case("Q24 Which item?", "['a']", "List", "a.", _x("['a'", "List")),
    _case("Q25 Which ones?", "[]", "List", "None of them.", _x("[]", "List")),
    _case("Q26 Which two items?", "['a', 'b']", "List", "a and c.", _x("['a'] + ['c']", "List")),
    _case(
        "Q27 Which brands?",
        "['Esia', 'Smartfren']",
        "List",
        "Smartfren, Esia.",
        _x("['Smartfren', 'Esia']", "List"),
    ),
    _case("Q28 Which quarters?", "['Q1', 'Q2']", "List", "Q1.", _x("['Q1']", "List")),
    # a gold eval_score cannot read
    _case("Q29 How much?", "about 5", "Float", "Roughly 5.", _x("5", "Float")),
    # ordinary answers of every format
    _case("Q30 How many pages?", "14", "Int", "14 pages.", _x("14", "Integer")),
    _case("Q31 How many rows?", "9259", "Int", "9,259 rows.", _x("9,259", "Integer")),
    _case("Q32 How many desks?", "4", "Int", "4.7 on average.", _x("4.7", "Float")),
    _case("Q33 What share?", "21%", "Float", "It is 21%.", _x("0.21", "Float")),
    _case("Q34 What ratio?", "0.1", "Float", "10 percent.", _x("10", "Float")),
    _case("Q35 What price?", "$1,200", "Float", "1200 dollars.", _x("1200", "Float")),
    _case(
        "Q36 Where was it conceived?",
        "Berlin School of Experimental Psychology",
        "Str",
        "In Berlin.",
        _x("Berlin School of Experimental Psychology"),
    ),
    _case("Q37 Which capital?", "Berlin", "Str", "Berlin.", _x("Berlin.")),
    _case(
        "Q38 Which site?",
        "https://example.org/a",
        "Str",
        "example.org.",
        _x("https://example.org/b"),
    ),
    _case("Q39 Which period?", "2015-2016", "Str", "2015-2017.", _x("2015-2017")),
    _case("Q40 Which country?", "Paris (France)", "Str", "Paris.", _x("paris")),
    _case("Q41 Who wrote it?", "J. Smith", "Str", "J. Smyth.", _x("J. Smyth")),
    _case("Q42 What colour?", "Blue", "Str", "It is blue.", _x("Green")),
]


def question_of(analysis_turn: str) -> str:
    """The question inside the official call shape's assistant turn."""
    match = re.search(r"\nQuestion:(.*)\nAnalysis:", analysis_turn, flags=re.DOTALL)
    if match is None:
        raise ValueError(f"not an analysis turn: {analysis_turn[:80]!r}")
    return match.group(1)


def case_of(question: str) -> dict[str, Any]:
    for case in CASES:
        if case["question"] == question:
            return case
    raise KeyError(question)


def samples_json() -> list[dict[str, Any]]:
    """The set as MMLongBench-Doc's ``data/samples.json`` rows."""
    return [
        {
            "doc_id": f"doc{i % 2 + 1}.pdf",
            "doc_type": "Research report",
            "question": c["question"],
            "answer": c["answer"],
            "evidence_pages": "[]" if c["answer"] == NA else "[1]",
            "evidence_sources": "['Pure-text (Plain-text)']",
            "answer_format": c["answer_format"],
        }
        for i, c in enumerate(CASES)
    ]


def write_inputs(folder: Path) -> Path:
    """``samples.json`` and its two one-page PDFs under ``folder``; returns samples.json."""
    import json

    import pymupdf

    documents = folder / "documents"
    documents.mkdir(parents=True, exist_ok=True)
    for name in ("doc1.pdf", "doc2.pdf"):
        doc = pymupdf.open()
        doc.new_page(width=300, height=400).insert_text((20, 40), name, fontsize=10)
        doc.save(documents / name)
        doc.close()
    path = folder / "samples.json"
    path.write_text(json.dumps(samples_json(), indent=1), encoding="utf-8")
    return path


def score_ours(folder: Path, profile: str = "official") -> dict[str, Any]:
    """Load the set with our loader, score it with the ``mmlongbench`` scorer (official call
    shape, the prompt file) and return accuracy, F1 and each item's prediction and score."""
    from scanrag.evaluation.base import RowGroup, StatsOptions
    from scanrag.evaluation.judging import JudgeConfig, JudgeContext
    from scanrag.evaluation.mmlongbench.scorer import MMLongBenchScorer
    from scanrag.llm import ChatRequest, ModelError, ScriptedModel
    from scanrag.loaders.mmlongbench import load_mmlongbench
    from scanrag.schemas import Status, Trajectory

    path = write_inputs(folder)
    dataset = load_mmlongbench(path, folder / "documents", validate=False)

    def extractor(request: ChatRequest) -> str:
        reply = case_of(question_of(request.messages[-1].text))["extraction"]
        if reply is None:
            raise ModelError(request.model, "the extraction call failed")
        return str(reply)

    config = JudgeConfig(
        default_model="scripted/extractor", prompts={"extractor": PROMPT.read_text()}
    )
    ctx = JudgeContext(llm=ScriptedModel(responder=extractor), config=config)
    scorer = MMLongBenchScorer(extract=True, call_shape="official", profile=profile)

    async def score_all() -> list[Any]:
        rows = []
        for sample in dataset.samples:
            response = case_of(sample.question)["response"]
            trajectory = Trajectory(
                sample_id=sample.id, strategy="api", answer=response, raw_output=response
            )
            if response is None:
                trajectory.fail(Status.MODEL_ERROR, "the model call failed")
            rows.append(await scorer.score(trajectory, sample, judge=ctx))
        return rows

    rows = asyncio.run(score_all())
    result = scorer.aggregate(rows, RowGroup("g", "api"), StatsOptions(n_resamples=0))
    by_question = {s.id: s.question for s in dataset.samples}
    return {
        "acc": result.metrics["accuracy"].value,
        "f1": result.metrics["f1"].value,
        "n": result.metrics["accuracy"].n,
        "excluded": result.metrics["accuracy"].excluded,
        "items": sorted(
            (
                {
                    "question": by_question[r.sample_id],
                    "pred": r.details.get("prediction"),
                    "score": r.metrics.get("score"),
                }
                for r in rows
            ),
            key=lambda item: item["question"],
        ),
    }
