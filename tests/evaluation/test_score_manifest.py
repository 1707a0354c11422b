"""``scanrag score`` records what scoring used in the run's manifest: scorers, their
parameters (the extraction call shape) and every judge prompt file with its SHA-256."""

from __future__ import annotations

import json
from pathlib import Path

from scanrag.evaluation.cli.score import score_dir
from scanrag.hashing import file_sha256
from scanrag.llm import ScriptedModel
from scanrag.schemas import Trajectory

PROMPT = "Find the answer.\nExtracted answer: ...\nAnswer format: ..."


def test_the_session_records_the_extractor_file_and_call_shape(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    sample = {"id": "q1", "doc": "d.pdf", "question": "How many?", "answer": "4"}
    sample["answer_format"] = "Int"
    (run / "samples.jsonl").write_text(json.dumps(sample) + "\n")
    traj = Trajectory(sample_id="q1", strategy="s", answer="Four.", raw_output="It is 4.")
    (run / "trajectories.jsonl").write_text(traj.model_dump_json() + "\n")
    (run / "manifest.json").write_text(json.dumps({"name": "t"}))
    prompt = tmp_path / "extract.md"
    prompt.write_text(PROMPT)
    model = ScriptedModel(["Extracted answer: 4\nAnswer format: Integer"])
    params = {"mmlongbench": {"extract": True, "call_shape": "official"}}
    result = score_dir(
        run,
        scorers=["mmlongbench"],
        judge_model="scripted/x",
        judge_prompts=[f"extractor={prompt}"],
        llm=model,
        n_resamples=0,
        params=params,
    )
    assert result.new_rows == 1 and not result.failures
    session = json.loads((run / "manifest.json").read_text())["sessions"][-1]
    assert session["scoring"] == {
        "scorers": ["mmlongbench"],
        "params": params,
        "judge_prompts": {"extractor": {"path": str(prompt), "sha256": file_sha256(prompt)}},
    }
    row = json.loads((run / "scores.jsonl").read_text())
    assert row["details"]["call_shape"] == "official" and row["metrics"]["score"] == 1.0
    assert model.requests[0].messages[0].text == PROMPT
