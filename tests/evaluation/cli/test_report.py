"""``scanrag report RUN_DIR... [--out DIR] [--baseline NAME]``."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanrag.cli import main
from scanrag.evaluation.cli.report import default_out


def test_report_command_writes_the_report(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rep"
    args = ["report", str(finished_run), "--out", str(out), "--baseline", "oracle_pages"]
    code = main([*args, "--resamples", "50", "--max-questions", "1", "--max-pages", "1"])
    assert code == 0
    assert f"report: {out / 'index.html'}" in capsys.readouterr().out
    assert "baseline **oracle_pages**" in (out / "comparison.md").read_text()


def test_bad_arguments_exit_with_a_message(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["report", str(finished_run), "--out", str(tmp_path / "r"), "--resamples", "0"]
    assert main([*base, "--baseline", "nope"]) == 2
    assert "no grid cell named 'nope'" in capsys.readouterr().err
    assert main([*base, "--dpi", "0"]) == 2
    assert "dpi" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("x", encoding="utf-8")
    for command in ("report", "export", "score"):
        assert main([command, str(tmp_path / "notes")]) == 2, command
        err = capsys.readouterr().err
        assert "is not a run folder" in err and "trajectories.jsonl not found" not in err


def test_default_output_folder() -> None:
    assert default_out([Path("runs/a")]) == Path("runs/a/report")
    assert default_out([Path("runs/a"), Path("runs/b")]) == Path("report")
