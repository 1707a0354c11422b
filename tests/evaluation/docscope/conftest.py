"""Builders for DocScope scorer tests: samples, trajectories, a generated PDF, judge contexts."""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from scanrag.evaluation.documents import DocumentSource
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.llm import ChatRequest, ScriptedModel
from scanrag.schemas import Citation, Fact, Sample, Trajectory
from scanrag.untrusted import read_quoted

PAGE_W, PAGE_H = 300.0, 400.0
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # docscope_edge: the edge benchmark shared with its harness
    sys.path.insert(0, str(HERE))


@pytest.fixture
def make_sample() -> Callable[..., Sample]:
    def build(**fields: Any) -> Sample:
        data: dict[str, Any] = {
            "id": "q1",
            "doc_ids": ["doc.pdf"],
            "question": "What was revenue in 2020?",
            "answer": "12",
            "gold_pages": [2],
        }
        data.update(fields)
        return Sample(**data)

    return build


@pytest.fixture
def make_traj() -> Callable[..., Trajectory]:
    def build(**fields: Any) -> Trajectory:
        data: dict[str, Any] = {"sample_id": "q1", "strategy": "s", "run_key": "cell"}
        data.update(fields)
        return Trajectory(**data)

    return build


def write_pdf(path: Path, pages: int = 3) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for number in range(1, pages + 1):
        page = doc.new_page(width=PAGE_W, height=PAGE_H)
        page.insert_text((20, 40), f"Page {number} of the test report.", fontsize=10)
        page.insert_text((20, 60), "Revenue in 2020 was 12 million.", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    doc.close()
    return path


@pytest.fixture
def pdf_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "pdfs"
    write_pdf(folder / "doc.pdf", pages=3)
    return folder


@pytest.fixture
def make_ctx(pdf_dir: Path, tmp_path: Path) -> Callable[..., JudgeContext]:
    def build(
        replies: Sequence[Any] = (),
        *,
        responder: Callable[..., str] | None = None,
        model: str = "scripted/judge",
        role_models: Sequence[str] = (),
    ) -> JudgeContext:
        llm = ScriptedModel(replies, responder=responder)
        config = JudgeConfig.from_options(model, role_models)
        documents = DocumentSource([pdf_dir], cache_dir=tmp_path / "cache", dpi=72)
        return JudgeContext(llm=llm, config=config, documents=documents)

    return build


def oracle_trajectory(sample: Sample, **fields: Any) -> Trajectory:
    """A trajectory built from gold: gold pages and boxes, one citation per gold fact."""
    citations = [
        Citation(sentence=f.text, page=f.page, doc_page="none", bbox=None)
        for f in sample.gold_facts
    ]
    return Trajectory(
        sample_id=sample.id,
        strategy="oracle",
        run_key="oracle",
        pages=list(sample.gold_pages),
        regions=list(sample.gold_regions),
        facts=[Fact(page=f.page, text=f.text) for f in sample.gold_facts],
        citations=citations,
        answer=sample.answer if sample.answerable else "Unanswerable",
        **fields,
    )


@pytest.fixture
def oracle() -> Callable[..., Trajectory]:
    return oracle_trajectory


# --------------------------------------------------------------------------- official format
# A DocScope-format run built by hand: ``golden/official_run/benchmark.json`` (five items, two
# PDFs generated here) and ``infer.jsonl`` as DocScope's ``run_infer.py`` writes it (four
# ``ok`` records, one inference error, one torn line), plus a scripted judge whose verdicts the
# expected numbers in the tests were worked out from.

GOLDEN = Path(__file__).parent / "golden" / "official_run"
PAGES = {"urnuuidA.pdf": 4, "urnuuidB.pdf": 3}


def write_official_run(folder: Path) -> tuple[Path, Path]:
    """Copy the benchmark and infer files into ``folder`` and generate the PDFs next to them
    (``folder/pdfs``, the loader's default). Returns (benchmark, infer)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("benchmark.json", "infer.jsonl"):
        shutil.copy(GOLDEN / name, folder / name)
    for name, pages in PAGES.items():
        write_pdf(folder / "pdfs" / name, pages=pages)
    return folder / "benchmark.json", folder / "infer.jsonl"


def official_judge(request: ChatRequest) -> str:
    """Region: every gold box covered, except on the plants question (q4) where only the first
    is labelled, imprecise. Fact: every fact consistent except the second of q4. Answer:
    consistent when the gold answer appears in the system answer; on q4 the verdict is the
    string "yes" (unusable)."""
    text = "\n".join(m.text for m in request.messages)
    plants = "How many plants" in text
    if request.stage == "judge.region":
        ids = re.findall(r"^(GOLD\[\d+\]):", text, flags=re.M)
        items = (
            [{"id": ids[0], "label": "imprecise"}]
            if plants
            else [{"id": i, "label": "covered", "reason": "inside"} for i in ids]
        )
        return json.dumps({"items": items})
    if request.stage == "judge.fact":
        quoted = read_quoted(text).get("Reference facts (judge each one)")
        ids = re.findall(r"^id=(\S+) :: ", text, flags=re.M) or list(quoted or {})
        labels = ["consistent"] * len(ids)
        if plants:
            labels[-1] = "not_consistent"
        return json.dumps(
            {"items": [{"id": i, "label": v} for i, v in zip(ids, labels, strict=True)]}
        )
    if request.stage == "judge.answer":
        if plants:
            return '{"consistent": "yes", "reason": "same total"}'
        inputs = read_quoted(text)  # the judge's inputs are quoted JSON fields
        gold, system = inputs.get("Reference answer"), inputs.get("System answer", "")
        ok = gold is not None and gold.strip() in system
        return json.dumps({"consistent": ok, "reason": "compared"})
    raise AssertionError(f"unexpected judge stage {request.stage}")


@pytest.fixture
def official_files(tmp_path: Path) -> tuple[Path, Path]:
    """(benchmark.json, infer.jsonl) of the hand-built DocScope run, PDFs beside them."""
    return write_official_run(tmp_path / "docscope")


@pytest.fixture
def official_judge_fn() -> Callable[[ChatRequest], str]:
    return official_judge
