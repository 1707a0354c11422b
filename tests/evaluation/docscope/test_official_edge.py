"""The official pipeline end to end on the edge benchmark (``docscope_edge``): ``scanrag import
docscope-infer --profile official`` then ``scanrag score`` print the same ``n`` and summary
numbers as DocScope's released ``summarize_eval.py`` on the same inputs, score the same rows
and send the judge the same prompts.

The golden files (``golden/edge/``) were written by running the released scorers
(``code/eval/score_*.py`` and ``scripts/summarize_eval.py`` of MiliLab/DocScope, copied to a
temporary folder, never into this repository) on these inputs with the same scripted judge:
``.venv/bin/python benchmarks/docscope_official_agreement.py --released PATH``; see
``golden/edge/README.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import docscope_edge as edge
import pytest

from scanrag.cli import main
from scanrag.llm import ScriptedModel
from scanrag.llm.scripted import clear_scripted, register_scripted

GOLDEN = Path(__file__).parent / "golden" / "edge"


@pytest.fixture
def judge() -> Iterator[ScriptedModel]:
    model = ScriptedModel(responder=lambda request: edge.judge_reply(request.messages[-1].text))
    register_scripted("edge-judge", model)
    yield model
    clear_scripted()


def _golden(name: str) -> object:
    return json.loads((GOLDEN / name).read_text(encoding="utf-8"))


def _import(tmp_path: Path, capsys: pytest.CaptureFixture[str], profile: str) -> tuple[Path, dict]:
    files = edge.write_edge_run(tmp_path / "inputs")
    run = tmp_path / f"run-{profile}"
    argv = ["import", "docscope-infer", str(files["infer"]), "--benchmark", str(files["benchmark"])]
    assert main([*argv, "--out", str(run), "--profile", profile]) == 0
    capsys.readouterr()
    return run, files


def _score(run: Path, files: dict, capsys: pytest.CaptureFixture[str]) -> str:
    argv = ["score", str(run), "--scorers", "pages,region,fact,answer", "--resamples", "0"]
    argv += ["--judge-model", "scripted/edge-judge"]
    for role in ("answer", "fact", "region"):
        argv += ["--judge-prompt", f"{role}={files[role]}"]
    assert main(argv) == 0
    return capsys.readouterr().out


def _printed_block(out: str) -> dict:
    """The JSON ``scanrag score`` prints after 'DocScope official summary ...:'."""
    head = re.search(r"DocScope official summary \(as summarize_eval\.py prints it\), .*:\n", out)
    assert head, out
    block, _ = json.JSONDecoder().raw_decode(out[head.end() :])
    return block


def test_the_printed_summary_equals_the_released_one(tmp_path, capsys, judge) -> None:
    run, files = _import(tmp_path, capsys, "official")
    printed = _printed_block(_score(run, files, capsys))
    golden = _golden("summarize_eval.json")
    numbers, diffs = edge.compare(golden, printed)
    assert diffs == [] and numbers == 23
    assert printed == golden  # bit for bit, the macro means included
    assert [printed[k].get("n", printed[k].get("n_total")) for k in ("infer", *edge.STAGES)] == [
        26,
        23,
        14,
        17,
        23,
    ]


def test_rows_and_judge_prompts_equal_the_released_ones(tmp_path, capsys, judge) -> None:
    run, files = _import(tmp_path, capsys, "official")
    _score(run, files, capsys)
    rows = _golden("rows.json")
    assert isinstance(rows, dict)
    mine = edge.our_rows(run)
    for stage in edge.STAGES:
        assert json.loads(json.dumps(mine[stage])) == rows[stage], stage
    digests = sorted(edge.prompt_digest(r.messages[-1].text) for r in judge.requests)
    assert digests == _golden("prompts.json")


def test_the_importer_reports_the_official_population(tmp_path, capsys) -> None:
    files = edge.write_edge_run(tmp_path / "inputs")
    run = tmp_path / "run"
    argv = ["import", "docscope-infer", str(files["infer"]), "--benchmark", str(files["benchmark"])]
    assert main([*argv, "--out", str(run), "--profile", "official"]) == 0
    captured = capsys.readouterr()
    assert "26 records (23 ok, 3 inference errors), 26 samples" in captured.out
    assert "2 question ids seen again (each record scored, as officially)" in captured.err
    unknown = "3 question ids not in the benchmark (scored with no gold, as officially)"
    assert unknown in captured.err
    assert "warning: 1 lines that are not JSON (skipped): 8" in captured.err
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["profile"] == "official" and manifest["infer"]["lines"] == 26
    assert manifest["run_keys"] == [f"docscope_infer/{edge.MODEL}"]
    samples = [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]
    by_id = {s["id"]: s for s in samples}
    assert by_id["urnuuidD::q16#3"]["repeat_of"] == "urnuuidD::q16"
    assert by_id["ghost::q1"]["not_in_benchmark"] is True and by_id["None"]["question_id"] == "None"
    assert by_id["urnuuidA::q2"]["evidence_pages"] == [2]  # page 2.0 kept, as an integer
    assert by_id["urnuuidA::q4"]["evidence_pages"] == [1]  # page 9 past the PDF: row only
    assert by_id["urnuuidA::q4"]["docscope_row"]["evidences"][0]["page"] == 9
    assert by_id["urnuuidC::q14"]["evidence_pages"] == []  # no PDF: nothing placed
    trajectories = [json.loads(x) for x in (run / "trajectories.jsonl").read_text().splitlines()]
    q19 = next(t for t in trajectories if t["sample_id"] == "urnuuidD::q19")
    assert q19["metadata"]["docscope_infer"]["parsed"] == {}  # no parsed block: none read
    assert q19["pages"] == [2]  # our fields still come from a parse


def test_the_paper_profile_keeps_its_own_population(tmp_path, capsys, judge) -> None:
    run, files = _import(tmp_path, capsys, "paper")
    out = _score(run, files, capsys)
    assert "DocScope official summary" not in out
    summary = json.loads((run / "summary.json").read_text())["scoring"]["groups"]
    group = next(iter(summary.values()))
    assert group["tables"]["pages.profile"] == "paper"
    assert group["tables"]["pages.profile_label"].startswith("paper")
    # the paper loader drops rows the released code scores (float pages, boxes past the
    # edge, pages past the PDF, missing PDFs, facts naming unknown evidence)
    assert group["metrics"]["pages.f1"]["n"] == 8


@pytest.mark.parametrize("profile", ["paper", "official"])
def test_official_scorers_over_another_population_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], profile: str
) -> None:
    """``pages_official`` over a paper-profile import prints its block under a title naming
    the population and warns that it is not summarize_eval.py's, pointing at --profile
    official; over an official import it prints the released title, with no warning."""
    run, _ = _import(tmp_path, capsys, profile)
    argv = ["score", str(run), "--scorers", "pages_official", "--resamples", "0"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    released = "DocScope official summary (as summarize_eval.py prints it)"
    if profile == "official":
        assert released in captured.out and "warning:" not in captured.err
        return
    assert released not in captured.out
    title = (
        "DocScope official scoring of a paper-profile import of infer.jsonl, NOT "
        "summarize_eval.py's population"
    )
    assert title in captured.out
    assert "warning: the official-profile summary below is computed over a paper-profile" in (
        captured.err
    )
    assert "scanrag import docscope-infer --profile official" in captured.err
    from scanrag.evaluation.docscope.official.summary import main as print_blocks

    assert print_blocks([str(run)]) == 0
    assert "not the population summarize_eval.py counts" in capsys.readouterr().err
