"""Builders for DocScope scorer tests: samples, trajectories, a generated PDF, judge contexts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from evaluation.documents import DocumentSource
from evaluation.judging import JudgeConfig, JudgeContext
from scanrag.llm import ScriptedModel
from scanrag.schemas import Citation, Fact, Sample, Trajectory

PAGE_W, PAGE_H = 300.0, 400.0


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
