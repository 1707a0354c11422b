"""Kernel schemas: validation rules and lossless JSON round trips."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from scanrag.schemas import (
    TRAJECTORY_SCHEMA,
    BBox,
    Block,
    Citation,
    Document,
    EvidencePair,
    Fact,
    GoldError,
    Page,
    PageHit,
    Region,
    ReportedIssue,
    Sample,
    Status,
    Step,
    Trajectory,
    Usage,
)


def test_bbox_accepts_normalized_ordered_corners() -> None:
    box = BBox.from_list([0.1, 0.2, 0.5, 0.6])
    assert box.as_list() == [0.1, 0.2, 0.5, 0.6]
    assert box.area == pytest.approx(0.16)


@pytest.mark.parametrize(
    "values",
    [[-0.1, 0.0, 0.5, 0.5], [0.0, 0.0, 1.2, 0.5], [0.6, 0.0, 0.5, 0.5], [0.0, 0.7, 0.5, 0.5]],
)
def test_bbox_rejects_out_of_range_or_inverted(values: list[float]) -> None:
    with pytest.raises(ValidationError):
        BBox.from_list(values)


def test_bbox_from_list_needs_four_numbers() -> None:
    with pytest.raises(ValueError, match="4 numbers"):
        BBox.from_list([0.1, 0.2, 0.3])


def test_bbox_from_points_normalizes_and_clamps() -> None:
    box = BBox.from_points((61.2, 79.2, 700.0, 396.0), width=612.0, height=792.0)
    assert box.as_list() == pytest.approx([0.1, 0.1, 1.0, 0.5])


def test_bbox_overlap_measures() -> None:
    a = BBox.from_list([0.0, 0.0, 0.5, 0.5])
    b = BBox.from_list([0.25, 0.25, 0.75, 0.75])
    assert a.intersection(b) == pytest.approx(0.0625)
    assert a.iou(b) == pytest.approx(0.0625 / (0.25 + 0.25 - 0.0625))
    assert a.contains(BBox.from_list([0.1, 0.1, 0.2, 0.2]))
    assert not a.contains(b)


def test_page_numbers_are_one_based() -> None:
    with pytest.raises(ValidationError):
        Region(page=0, bbox=BBox.from_list([0, 0, 1, 1]))
    with pytest.raises(ValidationError):
        Sample(id="q", doc_ids=["a.pdf"], question="?", gold_pages=[0, 2])


def test_sample_sorts_and_dedupes_gold_pages() -> None:
    sample = Sample(id="q", doc_ids=["a.pdf"], question="?", gold_pages=[5, 2, 5])
    assert sample.gold_pages == [2, 5]
    assert sample.primary_doc == "a.pdf"


def test_sample_needs_a_document() -> None:
    with pytest.raises(ValidationError):
        Sample(id="q", doc_ids=[], question="?")


def _full_trajectory() -> Trajectory:
    box = BBox.from_list([0.1, 0.1, 0.4, 0.2])
    traj = Trajectory(
        sample_id="s1",
        strategy="topk_rag",
        run_key="topk_rag/bm25/local",
        doc_ids=["abc"],
        pages=[3, 7],
        regions=[Region(page=3, bbox=box, element_type="table", text="row")],
        facts=[Fact(page=3, text="Revenue was 12.", bbox=box)],
        answer="12",
        raw_output='Revenue was 12 [page=3, doc_page="1", bbox=[0.1, 0.1, 0.4, 0.2]].',
        citations=[
            Citation(sentence="Revenue was 12.", page=3, doc_page="1", bbox=box.as_list()),
            Citation(sentence="Bad.", page=99, bbox=[1.5, 0, 2, 1], valid=False, reason="bbox"),
        ],
        evidence_chain=[EvidencePair(anchor="Fig. 2", text="rises", page=7)],
        issues=[ReportedIssue(description="mismatch", family="CF", pages=[3, 7])],
        verdict=True,
        steps=[Step(index=0, kind="retrieve", data={"query": "revenue", "hits": [3, 7]})],
        timings={"reader": 1.5},
        models={"reader": "local/smollm2-135m"},
        prompt_hashes={"reader": "abcd"},
    )
    traj.add_usage("reader", Usage(calls=1, prompt_tokens=100, completion_tokens=10))
    traj.add_usage("reader", Usage(calls=1, prompt_tokens=50, completion_tokens=5, cost_usd=0.01))
    return traj


def test_trajectory_round_trips_through_json() -> None:
    traj = _full_trajectory()
    text = traj.model_dump_json()
    again = Trajectory.model_validate_json(text)
    assert again == traj
    assert json.loads(text)["schema_version"] == TRAJECTORY_SCHEMA


def test_trajectory_pages_are_one_based_and_the_schema_version_is_checked() -> None:
    with pytest.raises(ValidationError):
        Trajectory(sample_id="q", strategy="s", pages=[0, 2])
    data = Trajectory(sample_id="q", strategy="s", pages=[2]).model_dump(mode="json")
    assert Trajectory.model_validate(data | {"schema_version": "1.7"}).pages == [2]
    with pytest.raises(ValidationError, match="schema 2.0 is not readable"):
        Trajectory.model_validate(data | {"schema_version": "2.0"})


def test_trajectory_usage_accumulates_per_stage() -> None:
    traj = _full_trajectory()
    assert traj.usage["reader"].calls == 2
    assert traj.total_usage.total_tokens == 165
    assert traj.total_usage.cost_usd == pytest.approx(0.01)


def test_trajectory_fail_records_status_and_message() -> None:
    traj = Trajectory(sample_id="s", strategy="x").fail(Status.MODEL_ERROR, "boom")
    assert traj.status is Status.MODEL_ERROR
    assert traj.errors == ["boom"]
    assert Trajectory.model_validate_json(traj.model_dump_json()).status == "model_error"


def test_sample_and_document_round_trip() -> None:
    box = BBox.from_list([0.2, 0.2, 0.3, 0.3])
    sample = Sample(
        id="s",
        doc_ids=["a.pdf"],
        cited_doc_ids=["b.pdf"],
        question="What?",
        answer="x",
        gold_pages=[1],
        gold_regions=[Region(page=1, bbox=box)],
        gold_facts=[Fact(page=1, text="x holds", region_index=0)],
        gold_errors=[GoldError(family="CF", pages=[1], reasoning_steps=["a", "b"])],
        task="error_detection",
        metadata={"source": "test"},
    )
    assert Sample.model_validate_json(sample.model_dump_json()) == sample
    page = Page(
        number=1,
        doc_page="iv",
        width=612,
        height=792,
        text="hello",
        words=[(0.1, 0.1, 0.2, 0.12, "hello")],
        blocks=[Block(kind="text", bbox=box, text="hello")],
    )
    doc = Document(id="abc", name="a.pdf", sha256="f" * 64, num_pages=1, pages=[page])
    again = Document.model_validate_json(doc.model_dump_json())
    assert again == doc
    assert again.page(1).doc_page == "iv"
    with pytest.raises(IndexError, match="outside 1..1"):
        doc.page(2)


def test_page_hit_rank_is_one_based() -> None:
    with pytest.raises(ValidationError):
        PageHit(doc_id="d", page=1, score=1.0, rank=0)
