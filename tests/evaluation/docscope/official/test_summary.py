"""``official_summary``: which aggregate block each of summarize_eval's keys comes from, and the
command line (usage, errors, one summary per grid cell)."""

from __future__ import annotations

import json
from pathlib import Path

from scanrag.evaluation.docscope.official.summary import (
    main,
    official_summary,
    run_official_summaries,
)
from scanrag.evaluation.schemas import GroupSummary, Summary

PAGES = {"n": 2, "macro": {"precision": 1.0}}
BBOX = {"n": 1, "by_label": {"covered": 1}}
FACTS = {"n": 4, "by_label": {"consistent": 4}}
ANSWER = {"n_judged": 2, "n_correct": 1, "accuracy": 0.5, "n_with_answer_tag": 2, "n_total": 2}


def group(tables: dict, items: int = 2) -> GroupSummary:
    return GroupSummary(group="cell", strategy="s", items=items, tables=tables)


def test_blocks_come_from_the_official_twins() -> None:
    tables = {
        "pages_official.profile": "official",
        "pages_official.official_summary": PAGES,
        "region_official.profile": "official",
        "region_official.official_summary": BBOX,
        "fact_official.profile": "official",
        "fact_official.official_summary": FACTS,
        "answer_official.profile": "official",
        "answer_official.official_summary": ANSWER,
    }
    out = official_summary(group(tables, items=5))
    assert out == {
        "infer": {"n": 5},
        "pages": PAGES,
        "bbox": BBOX,
        "facts": FACTS,
        "answer": ANSWER,
    }


def test_a_scorer_run_with_the_official_profile_counts_too() -> None:
    tables = {"pages.profile": "official", "pages.official_summary": PAGES}
    assert official_summary(group(tables))["pages"] == PAGES


def test_the_twin_wins_over_the_plain_scorer() -> None:
    other = {"n": 9}
    tables = {
        "pages.profile": "official",
        "pages.official_summary": other,
        "pages_official.profile": "official",
        "pages_official.official_summary": PAGES,
    }
    assert official_summary(group(tables))["pages"] == PAGES


def test_paper_profile_blocks_and_broken_blocks_are_not_used() -> None:
    tables = {
        "pages.profile": "paper",
        "pages.official_summary": PAGES,
        "region_official.profile": "official",
        "region_official.official_summary": "not a block",
        "answer.profile": "official",
    }
    out = official_summary(group(tables))
    assert out["pages"] == {"n": 0}
    assert out["bbox"] == {"n": 0, "by_label": {}}
    assert out["facts"] == {"n": 0, "by_label": {}}
    assert out["answer"] == {
        "n_judged": 0,
        "n_correct": 0,
        "accuracy": 0.0,
        "n_with_answer_tag": 0,
        "n_total": 0,
    }


def test_empty_blocks_are_copies() -> None:
    first = official_summary(group({}))
    first["pages"]["n"] = 7
    assert official_summary(group({}))["pages"] == {"n": 0}


def write_run(folder: Path) -> Path:
    summary = Summary(
        groups={
            "a": group({"pages.profile": "official", "pages.official_summary": PAGES}, items=2),
            "b": group({}, items=1),
        }
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.json").write_text(
        json.dumps({"scoring": summary.model_dump(mode="json")}), encoding="utf-8"
    )
    return folder


def test_every_grid_cell_of_a_run(tmp_path: Path) -> None:
    out = run_official_summaries(write_run(tmp_path / "run"))
    assert set(out) == {"a", "b"}
    assert out["a"]["pages"] == PAGES and out["a"]["infer"] == {"n": 2}
    assert out["b"]["pages"] == {"n": 0} and out["b"]["infer"] == {"n": 1}


def test_a_run_without_scores_has_no_cells(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"scoring": None}), encoding="utf-8")
    assert run_official_summaries(tmp_path) == {}


def test_command_line(tmp_path: Path, capsys) -> None:
    run = write_run(tmp_path / "run")
    assert main([str(run)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["a"]["pages"] == PAGES
    assert main([]) == 2
    assert (
        "usage: python -m scanrag.evaluation.docscope.official.summary RUN_DIR"
        in capsys.readouterr().err
    )
    assert main([str(run), "extra"]) == 2
    capsys.readouterr()
    assert main([str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "summary.json").write_text("{not json", encoding="utf-8")
    assert main([str(tmp_path / "bad")]) == 2


def test_command_line_reads_sys_argv(tmp_path: Path, capsys, monkeypatch) -> None:
    run = write_run(tmp_path / "run")
    monkeypatch.setattr("sys.argv", ["official_summary", str(run)])
    assert main() == 0
    assert set(json.loads(capsys.readouterr().out)) == {"a", "b"}


def test_command_line_prints_readable_json(tmp_path: Path, capsys) -> None:
    summary = Summary(groups={"modèle": group({}, items=1)})
    (tmp_path / "summary.json").write_text(
        json.dumps({"scoring": summary.model_dump(mode="json")}), encoding="utf-8"
    )
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert '\n  "modèle": {\n    "infer": {\n      "n": 1\n    },' in out  # two-space indent, UTF-8
