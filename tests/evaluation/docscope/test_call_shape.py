"""``call_shape`` of DocScope's judges under the official profile: ``json`` (the default: an
open JSON schema and the configured seed) or ``official`` (the request as the released scripts
send it: no ``response_format``, no seed, ``max_completion_tokens`` 2048, temperature 0 for the
text judges and none for the region judge), where a prose reply is a ``judge_parse_error``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from scanrag.evaluation.base import get_scorer
from scanrag.evaluation.docscope.answer import AnswerScorer
from scanrag.evaluation.docscope.region import RegionScorer
from scanrag.evaluation.documents import DocumentSource
from scanrag.evaluation.failures import row_cause
from scanrag.evaluation.judging import JudgeConfig, JudgeContext
from scanrag.llm import ChatRequest, ScriptedModel
from scanrag.llm.providers import LiteLLMProvider
from scanrag.schemas import BBox, Citation, Region

TAGGED = {"raw_output": "Some words. <answer>12</answer>", "metadata": {"parser": "citations"}}
PROSE = "The model's answer matches the gold answer, so I would call it consistent."


def _ctx(reply: str, documents: Any = None) -> tuple[JudgeContext, ScriptedModel]:
    model = ScriptedModel(responder=lambda request: reply)
    config = JudgeConfig(default_model="scripted/judge")
    return JudgeContext(llm=model, config=config, documents=documents), model


async def test_the_default_shape_asks_for_json_with_the_seed(make_sample, make_traj) -> None:
    ctx, model = _ctx('{"consistent": true}')
    row = await get_scorer("answer_official").score(make_traj(**TAGGED), make_sample(), judge=ctx)
    assert row.status == "ok" and row.details["call_shape"] == "json"
    request = model.requests[0]
    assert request.json_schema is not None and request.json_schema["title"] == "AnyReply"
    assert (request.seed, request.temperature, request.max_tokens) == (0, 0.0, 2048)
    assert request.token_param == "max_tokens"


async def test_the_official_shape_sends_the_released_request(make_sample, make_traj) -> None:
    ctx, model = _ctx('{"consistent": true, "reason": "same"}')
    scorer = get_scorer("answer_official", call_shape="official")
    row = await scorer.score(make_traj(**TAGGED), make_sample(), judge=ctx)
    assert row.status == "ok" and row.metrics == {"correct": 1.0}
    assert row.details["call_shape"] == "official"
    request = model.requests[0]
    assert request.json_schema is None and request.seed is None
    assert (request.temperature, request.max_tokens) == (0.0, 2048)
    assert request.token_param == "max_completion_tokens"
    # on the wire: max_completion_tokens, no response_format, no seed
    kwargs = LiteLLMProvider().build_kwargs(request.model_copy(update={"model": "openai/x"}), 5)
    assert kwargs["max_completion_tokens"] == 2048 and "max_tokens" not in kwargs
    assert "response_format" not in kwargs and "seed" not in kwargs


async def test_a_prose_reply_is_the_released_parse_error(make_sample, make_traj) -> None:
    ctx, _ = _ctx(PROSE)
    scorer = AnswerScorer(profile="official", call_shape="official")
    row = await scorer.score(make_traj(**TAGGED), make_sample(), judge=ctx)
    assert row.status == "judge_parse_error" and row.metrics == {"correct": None}
    record = row.judges[0]
    assert record.status == "judge_parse_error" and record.raw == PROSE
    assert record.attempts == 1 and row_cause(row) == "parse"


async def test_the_region_judge_sends_no_temperature(
    make_sample, make_traj, pdf_dir: Path, tmp_path: Path
) -> None:
    documents = DocumentSource([pdf_dir], cache_dir=tmp_path / "cache", dpi=72)
    box = BBox(x1=0.1, y1=0.1, x2=0.5, y2=0.5)

    def labels(request: ChatRequest) -> str:
        ids = re.findall(r"GOLD\[(\d+)\]", request.messages[-1].text) or ["1"]
        return json.dumps({"items": [{"id": f"GOLD[{i}]", "label": "covered"} for i in ids]})

    model = ScriptedModel(responder=labels)
    config = JudgeConfig(default_model="scripted/judge", vision_models=["scripted/judge"])
    ctx = JudgeContext(llm=model, config=config, documents=documents)
    sample = make_sample(gold_regions=[Region(page=2, bbox=box)], gold_pages=[2])
    traj = make_traj(
        citations=[Citation(sentence="a", page=2, bbox=box.as_list())],
        metadata={"parser": "json"},
    )
    row = await RegionScorer(profile="official", call_shape="official").score(
        traj, sample, judge=ctx
    )
    assert row.status == "ok", row.reason
    request = model.requests[0]
    assert request.temperature is None and request.seed is None and request.json_schema is None
    kwargs = LiteLLMProvider().build_kwargs(request.model_copy(update={"model": "openai/x"}), 5)
    assert "temperature" not in kwargs


def test_the_official_shape_with_the_paper_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="needs the official profile, not 'paper'"):
        AnswerScorer(profile="paper", call_shape="official")
    with pytest.raises(ValueError, match="call_shape must be one of json, official"):
        AnswerScorer(call_shape="xml")


async def test_a_paper_item_under_the_official_shape_is_skipped_saying_why(
    make_sample, make_traj
) -> None:
    ctx, model = _ctx('{"consistent": true}')
    row = await AnswerScorer(call_shape="official").score(
        make_traj(answer="twelve"), make_sample(), judge=ctx
    )
    assert row.status == "skipped" and "applies to the official profile" in (row.reason or "")
    assert model.requests == []
