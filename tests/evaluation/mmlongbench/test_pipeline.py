"""The ``mmlongbench`` scorer's official profile reproduces MMLongBench-Doc's released
pipeline on a mixed set (``mmlb_pipeline``): every prediction and score, and the accuracy and
F1 of ``eval_acc_and_f1``, bit for bit.

The golden file (``golden/pipeline_released.json``) was written by running the
released ``run_api.py`` (with ``eval/extract_answer.py`` and ``eval/eval_score.py``, copied to
a temporary folder, never into this repository) on the set, against a local server replaying
the same responses and extractions:
``.venv/bin/python benchmarks/mmlongbench_pipeline_agreement.py --released PATH``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mmlb_pipeline as mixed


def test_every_item_and_both_headline_numbers_equal_the_released_pipeline(
    tmp_path: Path,
) -> None:
    golden = json.loads((mixed.GOLDEN / "pipeline_released.json").read_text())
    ours = mixed.score_ours(tmp_path)
    assert ours["items"] == golden["items"]
    assert (ours["acc"], ours["f1"]) == (golden["acc"], golden["f1"])
    assert ours["n"] == golden["n"] == len(mixed.CASES) and ours["excluded"] == 0


def test_the_lenient_profile_differs_where_the_issue_says(tmp_path: Path) -> None:
    golden = json.loads((mixed.GOLDEN / "pipeline_released.json").read_text())
    lenient = mixed.score_ours(tmp_path, profile="lenient")
    by_question = {i["question"]: i for i in lenient["items"]}
    assert by_question["Q02 What is the 2030 target?"]["pred"] == "Not answerable"  # respelled
    assert by_question["Q10 What is the margin?"]["score"] is None  # excluded, not 0
    assert lenient["excluded"] == 4 and lenient["n"] == len(mixed.CASES) - 4
    assert lenient["f1"] != golden["f1"]


def test_the_set_covers_refusals_failures_and_expressions() -> None:
    extractions = [c["extraction"] or "" for c in mixed.CASES]
    assert sum(1 for c in mixed.CASES if c["extraction"] is None) == 3
    assert sum(1 for c in mixed.CASES if c["response"] is None) == 2
    assert any("] + [" in e for e in extractions) and any("[f'" in e for e in extractions)
    assert any("Unanswerable" in e for e in extractions)
