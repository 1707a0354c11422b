"""User prompt files for the judges (``--judge-prompt ROLE=FILE``): loading, checks, verbatim
use under both profiles, row bases, and the command-line pass-through."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanrag.evaluation.judge_prompts import (
    PromptFileError,
    check_template,
    read_prompt_files,
    template_fields,
    template_hash,
)
from scanrag.evaluation.judging import JudgeConfig
from scanrag.evaluation.stage import row_basis
from scanrag.llm import ScriptedModel
from scanrag.schemas import BBox, Citation, Fact, Region, Sample, Trajectory

# Our own stand-ins with the field names of DocScope's prompt files (never their wording).
ANSWER = 'Q={question}\nGOLD={gold_answer}\nGOT={model_answer}\nJSON: {{"consistent": bool}}'
FACT = "Q={question} P={gt_page}\n{gold_facts_block}\nOTHER={sibling_facts}\nOUT={model_raw}"
REGION = "Q={question} A={gold_answer} P={gt_page} N={gold_total_on_page}\n{gold_facts_block}\n"
REGION += "PRED {n_pred}: {pred_bboxes_norm}"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reading_and_checking_prompt_files(tmp_path: Path) -> None:
    path = write(tmp_path, "answer.txt", ANSWER)
    assert read_prompt_files([f"answer={path}"]) == {"answer": ANSWER}
    assert read_prompt_files({"answer": "answer.txt"}, base=tmp_path) == {"answer": ANSWER}
    assert template_fields(ANSWER) == {"question", "gold_answer", "model_answer"}
    with pytest.raises(PromptFileError, match="expected ROLE=FILE"):
        read_prompt_files(["answer"])
    with pytest.raises(PromptFileError, match="cannot read"):
        read_prompt_files([f"answer={tmp_path / 'nope.txt'}"])
    with pytest.raises(PromptFileError, match="known roles: answer, extractor, fact, region"):
        check_template("matching", ANSWER)
    with pytest.raises(PromptFileError, match="unknown fields gold; known fields: question"):
        check_template("answer", "{question} {gold}")
    with pytest.raises(PromptFileError, match="literal braces"):
        check_template("answer", '{"consistent": true}')
    with pytest.raises(PromptFileError, match="not a format template.*literal braces"):
        check_template("answer", "{question")
    with pytest.raises(PromptFileError, match="unknown fields"):
        check_template("answer", "{} {0}")
    with pytest.raises(ValueError, match="unknown judge roles"):
        JudgeConfig(prompts={"nobody": "x"})
    # the extractor's file is sent as it is: braces are text, not fields
    literal = write(tmp_path, "extract.md", 'Reply {"answer": ...}\nExtracted answer: {x}')
    assert read_prompt_files([f"extractor={literal}"])["extractor"].endswith("{x}")


def _ctx(tmp_path: Path, replies: list[str], prompts: dict[str, str]) -> Any:
    from scanrag.evaluation.documents import DocumentSource
    from scanrag.evaluation.judging import JudgeContext

    folder = tmp_path / "pdfs"
    config = JudgeConfig(default_model="scripted/judge", prompts=prompts)
    documents = DocumentSource([folder], cache_dir=tmp_path / "cache", dpi=72)
    return JudgeContext(llm=ScriptedModel(replies), config=config, documents=documents)


SAMPLE = Sample(
    id="q1",
    doc_ids=["doc.pdf"],
    question="What was revenue?",
    answer="12",
    gold_pages=[2],
    gold_regions=[Region(page=2, bbox=BBox(x1=0.1, y1=0.1, x2=0.6, y2=0.2))],
    gold_facts=[Fact(page=2, text="Revenue was 12."), Fact(page=3, text="Costs were 3.")],
)


@pytest.mark.parametrize("profile", ["paper", "official"])
async def test_answer_prompt_is_used_verbatim(tmp_path: Path, profile: str) -> None:
    from scanrag.evaluation.docscope.answer import AnswerScorer

    ctx = _ctx(tmp_path, ['{"consistent": true, "reason": "ok"}'], {"answer": ANSWER})
    traj = Trajectory(sample_id="q1", strategy="s", answer="12 million", raw_output="x")
    row = await AnswerScorer(profile=profile).score(traj, SAMPLE, judge=ctx)  # type: ignore[arg-type]
    (request,) = ctx.llm.requests
    want = ANSWER.format(question=SAMPLE.question, gold_answer="12", model_answer="12 million")
    assert [(m.role, m.text) for m in request.messages] == [("user", want)]
    assert row.judges[0].prompt_hash == template_hash(ANSWER)
    assert row.metrics["correct"] == 1.0


async def test_fact_prompt_fields_per_profile(tmp_path: Path) -> None:
    from scanrag.evaluation.docscope.fact import FactScorer

    raw = 'Revenue was 12 [page=2, doc_page="1", bbox=[0.1, 0.1, 0.6, 0.2]].\n<answer>12</answer>'
    traj = Trajectory(
        sample_id="q1",
        strategy="s",
        pages=[2],
        raw_output=raw,
        citations=[Citation(sentence="Revenue was 12.", page=2)],
        metadata={"parser": "citations"},
    )
    reply = json.dumps({"items": [{"id": "f1", "label": "consistent"}]})
    paper_ctx = _ctx(tmp_path, [reply], {"fact": FACT})
    await FactScorer().score(traj, SAMPLE, judge=paper_ctx)
    text = paper_ctx.llm.requests[0].messages[0].text
    assert text.endswith("OUT=Revenue was 12.")  # paper: only the cited units
    assert "id=f1 :: Revenue was 12.\nOTHER=Costs were 3." in text
    official_ctx = _ctx(tmp_path, [reply], {"fact": FACT})
    row = await FactScorer(profile="official").score(traj, SAMPLE, judge=official_ctx)
    assert official_ctx.llm.requests[0].messages[0].text.endswith(f"OUT={raw}")
    assert row.metrics["consistency"] == 1.0


@pytest.mark.parametrize("profile", ["paper", "official"])
async def test_region_prompt_gets_144_dpi_pixels_and_the_image(
    tmp_path: Path, pdf_dir: Path, profile: str
) -> None:
    from scanrag.evaluation.docscope.region import RegionScorer
    from scanrag.evaluation.documents import DocumentSource
    from scanrag.evaluation.judging import JudgeContext

    reply = json.dumps({"items": [{"id": "g1", "label": "covered"}]})
    config = JudgeConfig(default_model="scripted/judge", prompts={"region": REGION})
    documents = DocumentSource([pdf_dir], cache_dir=tmp_path / "cache", dpi=72)
    ctx = JudgeContext(llm=ScriptedModel([reply]), config=config, documents=documents)
    traj = Trajectory(
        sample_id="q1",
        strategy="s",
        pages=[2],
        regions=[Region(page=2, bbox=BBox(x1=0.1, y1=0.1, x2=0.6, y2=0.2))],
        citations=[Citation(sentence="x", page=2, bbox=[0.1, 0.1, 0.6, 0.2])],
        metadata={"parser": "json"},
    )
    row = await RegionScorer(profile=profile).score(traj, SAMPLE, judge=ctx)  # type: ignore[arg-type]
    (message,) = ctx.llm.requests[0].messages
    assert message.role == "user" and len(message.images) == 1
    assert isinstance(message.content, list) and message.content[0].type == "image"
    # a 300x400-point page rendered at 72 DPI, stated in pixels of a 144-DPI render
    assert (
        "id=g1 :: index_on_page=1, element_type=text, gold_bbox_px=[60.0, 80.0, 360.0, 160.0]"
        in (message.text)
    )
    assert message.text.endswith("PRED 1: [[0.1, 0.1, 0.6, 0.2]]")
    assert row.status == "ok"


def test_prompt_files_change_the_row_basis() -> None:
    from scanrag.evaluation.docscope.answer import AnswerScorer
    from scanrag.evaluation.docscope.pages import PagesScorer

    plain = JudgeConfig(default_model="m")
    custom = JudgeConfig(default_model="m", prompts={"answer": ANSWER})
    assert row_basis("c", AnswerScorer(), plain) != row_basis("c", AnswerScorer(), custom)
    assert row_basis("c", PagesScorer(), plain) == row_basis("c", PagesScorer(), custom)


def test_score_command_takes_judge_prompt(tmp_path: Path, capsys) -> None:
    from scanrag.cli import main
    from scanrag.datasets import write_generic
    from scanrag.llm import clear_scripted, register_scripted

    run = tmp_path / "run"
    run.mkdir()
    write_generic([SAMPLE.model_copy(update={"answer": "twelve"})], run / "samples.jsonl")
    traj = Trajectory(sample_id="q1", strategy="s", run_key="cell", answer="12", raw_output="12")
    (run / "trajectories.jsonl").write_text(traj.model_dump_json() + "\n")
    path = write(tmp_path, "answer.txt", ANSWER)
    model = register_scripted(
        "prompt-cli", ScriptedModel(responder=lambda r: '{"consistent": true}')
    )
    try:
        argv = ["score", str(run), "--scorers", "answer", "--judge-model", "scripted/prompt-cli"]
        assert main([*argv, "--judge-prompt", f"answer={path}", "--resamples", "0"]) == 0
        assert model.requests[0].messages[0].text.startswith("Q=What was revenue?\nGOLD=twelve")
        bad = write(tmp_path, "bad.txt", "{nope}")
        assert main([*argv, "--judge-prompt", f"answer={bad}"]) == 2
        assert "unknown fields nope" in capsys.readouterr().err
    finally:
        clear_scripted()


def test_config_equivalent_reaches_the_judges(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from scanrag.config.sections import ScoringSpec
    from scanrag.evaluation.backend import EvaluationBackend
    from scanrag.protocols import ScoringJob

    path = write(tmp_path, "answer.txt", ANSWER)
    spec = ScoringSpec(judge_prompts={"answer": str(path)})
    with pytest.raises(ValidationError, match="judge prompt files not found"):
        ScoringSpec(judge_prompts={"answer": str(tmp_path / "missing.txt")})
    job = ScoringJob(
        judges={"default": "scripted/judge"},
        cache_dir=tmp_path,
        concurrency=2,
        judge_prompts=spec.judge_prompts,
    )
    ctx = EvaluationBackend().judge_context(job)
    assert ctx.config.prompts == {"answer": ANSWER}
    bad = write(tmp_path, "bad.txt", "{oops}")
    bad_job = ScoringJob(cache_dir=tmp_path, concurrency=1, judge_prompts={"answer": str(bad)})
    with pytest.raises(PromptFileError, match="unknown fields oops"):
        EvaluationBackend().judge_context(bad_job)
