"""What the official profile reads from a trajectory (``official_view``) and from a judge
reply, rule by rule: record fields, box lists, the answer the judge sees, failed calls."""

from __future__ import annotations

import pytest

from scanrag.evaluation.docscope.official.view import (
    INFER_KEY,
    JUDGE_MAX_TOKENS,
    OK_STATUSES,
    OfficialView,
    ViewCitation,
    judge_items,
    labels_by_id,
    official_judge,
    official_view,
    reply_object,
    verdict,
)
from scanrag.evaluation.docscope.pages import PagesScorer
from scanrag.evaluation.schemas import JudgeRecord
from scanrag.schemas import Citation, Status


def test_constants() -> None:
    assert INFER_KEY == "docscope_infer" and JUDGE_MAX_TOKENS == 2048
    assert {"ok", "unparsed"} == OK_STATUSES


def test_imported_record_fields(make_traj) -> None:
    parsed = {
        "answer": 12,  # not a string: no answer
        "has_answer_tag": 1,
        "predicted_pages": [4, 2, "3", 2, 4.0, None, [5]],
        "citations": [
            {"page": 2, "bbox": [0.1, 0.1, 0.2, 0.2], "is_normalized": True},
            {"page": 4, "bbox": [10, 10, 20, 20], "is_normalized": False},
            {"page": 4, "bbox": [0.1, 0.1, 0.2, 0.2]},  # no flag: not drawn, as released
            {"page": "5", "bbox": [0.1, 0.1, 0.2, 0.2]},  # kept: "5" never equals a page
            {"page": 6, "bbox": "0.1 0.1 0.2 0.2"},  # bbox not a list: no numbers
            {"page": 7, "bbox": [0.1, "x", 0.2, 0.2], "is_normalized": True},  # not numbers
            {"page": True, "bbox": [0.1, 0.1, 0.2, 0.2]},  # a flag is no page
            "not a citation",
        ],
    }
    view = official_view(
        make_traj(raw_output=None, metadata={INFER_KEY: {"status": "ok", "parsed": parsed}})
    )
    assert view.ok and view.status == "ok" and view.source == "infer_jsonl"
    assert view.raw == "" and view.answer is None and view.has_answer_tag is True
    # the pages as written, compared as the released code compares them (4.0 == 4)
    assert view.predicted_pages == [2, 4, "3"]
    assert [(c.page, c.bbox, c.is_normalized) for c in view.citations] == [
        (2, [0.1, 0.1, 0.2, 0.2], True),
        (4, [10, 10, 20, 20], False),
        (4, [0.1, 0.1, 0.2, 0.2], False),
        ("5", [0.1, 0.1, 0.2, 0.2], False),
        (6, [], False),
        (7, [], True),
    ]
    assert view.boxes_on(4) == ([], [[10, 10, 20, 20], [0.1, 0.1, 0.2, 0.2]])
    assert view.boxes_on(4.0) == view.boxes_on(4)
    assert view.boxes_on(6) == ([], []) and view.boxes_on(7) == ([], [])  # no four numbers


def test_imported_record_without_a_parsed_block(make_traj) -> None:
    record = {"status": "ok", "parsed": "garbage"}
    view = official_view(make_traj(raw_output="raw", metadata={INFER_KEY: record}))
    assert view.ok and view.answer is None and not view.has_answer_tag
    assert view.predicted_pages == [] and view.citations == [] and view.model_answer == "raw"
    failed = official_view(make_traj(metadata={INFER_KEY: {"status": "error"}}))
    assert failed.status == "error" and not failed.ok


def test_free_text_view_keeps_duplicates_and_adds_only_new_evidence(make_traj) -> None:
    cite = '[page=2, doc_page="1", bbox=[0.1, 0.1, 0.2, 0.2]]'
    traj = make_traj(
        raw_output=f"A {cite}. B {cite}. <answer>7</answer>",
        citations=[
            Citation(sentence="a", page=2, bbox=[0.1, 0.1, 0.2, 0.2]),  # already in the reply
            Citation(sentence="b", page=3, bbox=[0.3, 0.3, 0.4, 0.4]),
            Citation(sentence="c", page=None),
        ],
        metadata={"parser": "citations", "evidence_source": "steps"},
        status=Status.UNPARSED,
    )
    view = official_view(traj)
    assert view.ok and view.status == "unparsed"
    assert [(c.page, c.bbox) for c in view.citations] == [
        (2, [0.1, 0.1, 0.2, 0.2]),
        (2, [0.1, 0.1, 0.2, 0.2]),  # cited twice: counted twice
        (3, [0.3, 0.3, 0.4, 0.4]),
    ]
    assert view.predicted_pages == [2, 3] and view.answer == "7" and view.model_answer == "7"
    without = official_view(traj.model_copy(update={"metadata": {"parser": "citations"}}))
    assert without.source == "official_parser" and without.predicted_pages == [2]


def test_free_text_view_needs_a_raw_reply(make_traj) -> None:
    traj = make_traj(raw_output=None, answer="x", pages=[3], metadata={"parser": "citations"})
    view = official_view(traj)
    assert view.source == "trajectory" and view.predicted_pages == [3]
    assert view.raw == "x" and view.model_answer == "x"


def test_json_view_without_an_answer(make_traj) -> None:
    traj = make_traj(
        raw_output="reply",
        citations=[Citation(sentence="", page=None), Citation(sentence="", page=5)],
        metadata={"parser": "json"},
    )
    view = official_view(traj)
    assert view.answer is None and not view.has_answer_tag and view.raw == "reply"
    assert view.predicted_pages == [5] and [c.bbox for c in view.citations] == [[]]
    assert view.model_answer == "reply"


def test_boxes_on_splits_drawn_and_skipped() -> None:
    view = OfficialView(
        ok=True,
        status="ok",
        source="x",
        citations=[
            ViewCitation(page=1, bbox=[0.1, 0.1, 0.2, 0.2], is_normalized=True),
            ViewCitation(page=1, bbox=[100, 1, 2, 3]),
            ViewCitation(page=1, bbox=[0.1, 0.2, 0.3], is_normalized=True),
            ViewCitation(page=2, bbox=[0.1, 0.1, 0.2, 0.2], is_normalized=True),
        ],
    )
    assert view.boxes_on(1) == ([[0.1, 0.1, 0.2, 0.2]], [[100, 1, 2, 3]])
    assert view.boxes_on(3) == ([], [])


def test_model_answer_needs_tag_and_text() -> None:
    base = {"ok": True, "status": "ok", "source": "x", "raw": "whole"}
    assert OfficialView(**base, answer="a", has_answer_tag=True).model_answer == "a"
    assert OfficialView(**base, answer="a", has_answer_tag=False).model_answer == "whole"
    assert OfficialView(**base, answer="", has_answer_tag=True).model_answer == "whole"


async def test_inference_skip_row(make_traj, make_sample) -> None:
    row = PagesScorer(profile="official").compute(
        make_traj(status=Status.MODEL_ERROR), make_sample()
    )
    assert row.status == "skipped"
    assert row.reason == "inference status 'model_error': left out under the official profile"
    assert row.details == {"profile": "official", "view": "trajectory"}


def test_reply_object_candidates() -> None:
    assert reply_object("  ") == {}
    assert reply_object('```\n{"a": 1}\n```') == {"a": 1}  # fence without a language
    assert reply_object('{"a": 1} trailing') == {"a": 1}  # first { to last }
    assert reply_object("}{") == {}
    assert reply_object('"just a string"') == {}


def test_labels_by_id_reasons_and_items() -> None:
    reply = {"items": [{"id": "g1", "label": "covered", "reason": 5}, "junk", {"id": "g2"}]}
    allowed = frozenset({"covered"})
    assert labels_by_id(reply, ["g1", "g2"], allowed) == [("covered", None), (None, None)]
    assert labels_by_id({}, ["g1"], allowed) == [(None, None)]


def test_verdict_reason_fallbacks() -> None:
    assert verdict({"consistent": True}) == (True, "")
    assert verdict({"consistent": False, "reason": "", "reasoning": "r"}) == (False, "r")
    assert verdict({}) == (None, "")
    assert verdict({"consistent": True, "reason": 3}) == (True, "3")


class _Ctx:
    def __init__(self, record: JudgeRecord) -> None:
        self.record = record
        self.calls: list[dict] = []

    async def judge(self, role, messages, schema, prompt_hash, **kwargs):
        self.calls.append({"role": role, **kwargs})
        return self.record, None


async def test_official_judge_call_and_failures() -> None:
    ok = _Ctx(JudgeRecord(role="answer", raw='{"consistent": true}'))
    record, reply = await official_judge(ok, "answer", [], "h", key="k")
    assert reply == {"consistent": True} and record is ok.record
    assert ok.calls == [{"role": "answer", "key": "k", "max_tokens": 2048, "parse_retry": False}]
    failed = _Ctx(JudgeRecord(role="answer", status="judge_error", raw="{}"))
    assert (await official_judge(failed, "answer", [], "h"))[1] is None
    silent = _Ctx(JudgeRecord(role="answer", raw=None))
    assert (await official_judge(silent, "answer", [], "h"))[1] is None


@pytest.mark.parametrize(
    ("record", "status"),
    [
        (JudgeRecord(role="fact", status="judge_error"), "judge_error"),
        (JudgeRecord(role="fact", status="render_failed"), "render_failed"),
        (JudgeRecord(role="fact", raw=None), "judge_error"),  # ok but nothing came back
    ],
)
async def test_judge_items_of_a_failed_call(record: JudgeRecord, status: str) -> None:
    _, items = await judge_items(_Ctx(record), "fact", [], "h", "k", ["f1", "f2"], frozenset())
    assert items == [(status, None, None), (status, None, None)]


async def test_judge_items_per_id_status() -> None:
    raw = (
        '{"items": [{"id": "f1", "label": "consistent", "reason": "r"},'
        ' {"id": "f2", "label": "?"}]}'
    )
    ctx = _Ctx(JudgeRecord(role="fact", raw=raw))
    _, items = await judge_items(ctx, "fact", [], "h", "k", ["f1", "f2"], frozenset({"consistent"}))
    assert items == [("ok", "consistent", "r"), ("judge_parse_error", None, None)]


def test_reply_object_edges() -> None:
    # A fenced object wins over braces outside the fence that do not parse.
    assert reply_object('note {x} ```json\n{"a": 1}\n``` end') == {"a": 1}
    # The brace span ends exactly at the last "}".
    assert reply_object('{"a": 1}x') == {"a": 1}


def test_view_defaults_and_imported_answer(make_traj) -> None:
    bare = OfficialView(ok=True, status="ok", source="x", raw="whole", answer="a")
    assert bare.has_answer_tag is False and bare.model_answer == "whole"
    parsed = {"answer": "12", "has_answer_tag": True}
    view = official_view(
        make_traj(raw_output="r", metadata={INFER_KEY: {"status": "ok", "parsed": parsed}})
    )
    assert view.answer == "12" and view.model_answer == "12"
