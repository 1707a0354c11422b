"""A small finished run for the report tests: the real runner on a tiny synthetic corpus.

The reader is a :class:`ScriptedModel` that answers correctly, citing the gold box, exactly
when the question's gold page is among the pages it was shown, and "Unanswerable" otherwise;
so retrieval quality shows up in every stage. The judge model labels gold boxes covered (with
a reason), faithfulness sentences attributable, and answers equivalent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from scanrag.config import config_from_dict
from scanrag.llm.scripted import ScriptedModel
from scanrag.llm.types import ChatRequest
from scanrag.schemas import Sample

READER = "scripted/report-reader"
JUDGE = "scripted/report-judge"
_SHOWN = re.compile(r"=== Page (\d+)")
_GOLD = re.compile(r"GOLD\[(\d+)\]:")


def reader_for(samples: list[Sample]) -> ScriptedModel:
    by_question = {s.question: s for s in samples}

    def respond(request: ChatRequest) -> str:
        text = "\n".join(m.text for m in request.messages)
        sample = next((s for q, s in by_question.items() if q in text), None)
        shown = {int(p) for p in _SHOWN.findall(text)}
        if sample is None or not sample.answerable or not set(sample.gold_pages) & shown:
            return "The pages shown do not give this value. <answer>Unanswerable</answer>"
        region = sample.gold_regions[0] if sample.gold_regions else None
        page = region.page if region else sample.gold_pages[0]
        box = [round(v, 3) for v in region.bbox.as_list()] if region else [0.1, 0.1, 0.9, 0.9]
        fact = sample.gold_facts[0].text if sample.gold_facts else f"The value is {sample.answer}."
        return (
            f'{fact} [page={page}, doc_page="none", bbox={json.dumps(box)}]\n'
            f"<answer>{sample.answer}</answer>"
        )

    return ScriptedModel(responder=respond, name=READER, cost_per_token=1e-6)


def judge() -> ScriptedModel:
    def respond(request: ChatRequest) -> str:
        text = "\n".join(m.text for m in request.messages)
        if request.stage == "judge.region":
            ids = sorted({int(i) for i in _GOLD.findall(text)}) or [1]
            items = [
                {"id": f"GOLD[{i}]", "label": "covered", "reason": "the red box sits on the row"}
                for i in ids
            ]
            return json.dumps({"items": items})
        if request.stage == "judge.faithfulness":
            return json.dumps(
                {
                    "disambiguation": "no pronouns",
                    "plan": "find the value",
                    "execution": "the evidence states the same value",
                    "label": "Attributable",
                }
            )
        if request.stage == "judge.fact":
            facts = re.findall(r"FACT\[(\d+)\]", text) or ["1"]
            return json.dumps(
                {"items": [{"id": f"FACT[{i}]", "label": "consistent"} for i in facts]}
            )
        return json.dumps({"consistent": True, "reason": "same value and unit"})

    return ScriptedModel(responder=respond, name=JUDGE)


def flaky_reader(samples: list[Sample]) -> ScriptedModel:
    """The reader of :func:`reader_for`, failing in a different way on each of the first
    three questions (by position in the file): the provider fails (``model_error``), the reply
    is prose with nothing to read (``unparsed``), the reply cites but gives no answer
    (unanswered). The rest are answered as usual."""
    from scanrag.llm.types import ModelError

    good = reader_for(samples)
    modes = {s.question: i for i, s in enumerate(samples[:3])}

    def respond(request: ChatRequest) -> str:
        text = "\n".join(m.text for m in request.messages)
        mode = next((i for q, i in modes.items() if q in text), None)
        if mode == 0:
            raise ModelError(request.model, "scripted outage: 503 from the provider")
        if mode == 1:
            return "Hmm <b>not sure</b> & I would rather not say.\n\nThe pages do not help."
        if mode == 2:
            return 'The table lists it. [page=1, doc_page="none", bbox=[0.1, 0.1, 0.9, 0.2]]'
        assert good.responder is not None
        return good.responder(request)

    return ScriptedModel(responder=respond, name=READER, cost_per_token=1e-6)


def make_corpus(root: Path) -> Path:
    from scanrag.synth import generate_corpus

    return generate_corpus(
        root / "corpus",
        seed=3,
        n_docs=2,
        min_pages=10,
        max_pages=10,
        questions_per_doc=3,
        scan_docs=0,
    )


def make_run(root: Path, scorers: list[str] | None = None, *, flaky: bool = False) -> Path:
    """Generate the corpus, run three strategies, score them; returns the run folder. With
    ``flaky`` the reader fails on three questions (:func:`flaky_reader`)."""
    from scanrag.datasets import load_generic
    from scanrag.runner import start_run

    corpus = make_corpus(root)
    samples = load_generic(corpus / "samples.jsonl").samples
    config: dict[str, Any] = {
        "name": "report-errors" if flaky else "report-test",
        "datasets": [
            {
                "name": "synth",
                "path": str(corpus / "samples.jsonl"),
                "pdf_dir": str(corpus / "pdfs"),
            }
        ],
        "retrievers": {"bm25": {}},
        "strategies": [
            {"name": "topk_rag", "retriever": "bm25", "params": {"k": 1}},
            {"name": "full_doc"},
            {"name": "oracle_pages"},
        ],
        "models": {"agents": {"reader": READER}, "judges": {"default": JUDGE}},
        "runner": {
            "cache_dir": str(root / "cache"),
            "runs_dir": str(root / "runs"),
            "progress": False,
            "concurrency": 2,
            "render_dpi": 72,
            "page_caps": {"max_pages": 6},
        },
        "scoring": {
            "scorers": scorers
            or [
                "pages",
                "answer_rules",
                "answer",
                "region",
                "region_geometry",
                "fact",
                "faithfulness",
                "layout",
                "retrieval",
            ]
        },
    }
    reader = flaky_reader(samples) if flaky else reader_for(samples)
    result = start_run(config_from_dict(config), llm=reader, judge_llm=judge(), log=None)
    return Path(result.run_dir)
