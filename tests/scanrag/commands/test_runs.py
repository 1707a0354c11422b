"""``scanrag runs [DIR]``: the run folders, newest first, with their state, headline metric,
degraded items, errors and replays; ``--json``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from scanrag.cli import main
from scanrag.rundir import RunDir

FAKES = Path(__file__).resolve().parents[1] / "runner"
sys.path.insert(0, str(FAKES))
import runner_fakes as rf  # noqa: E402


@pytest.fixture(autouse=True)
def _fake_models_registered() -> None:
    rf.register_models()


def _run(root: Path) -> Path:
    from scanrag.config import config_from_dict
    from scanrag.runner import start_run

    scoring = {"enabled": True, "scorers": ["fake_exact"]}
    config = config_from_dict(rf.make_config(root, scoring=scoring))
    return Path(start_run(config, log=None).run_dir)


def _edit(path: Path, name: str, **changes: object) -> None:
    data = json.loads((path / name).read_text())
    data.update(changes)
    (path / name).write_text(json.dumps(data))


def test_runs_lists_folders_newest_first_with_their_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _run(tmp_path)
    runs = first.parent
    again = runs / "20990101-000000_fake"  # the same experiment name, a later start
    shutil.copytree(first, again)
    _edit(again, "manifest.json", created="2099-01-01T00:00:00+00:00")
    _edit(again, "summary.json", complete=False, stop_reason="budget reached: spent $1.0000")
    live = runs / "20980101-000000_fake"
    shutil.copytree(first, live)
    _edit(live, "manifest.json", created="2098-01-01T00:00:00+00:00")
    (runs / "notes").mkdir()  # not a run folder: left out silently

    with RunDir(live):  # another process holds the run: running
        assert main(["runs", str(runs), "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["folder"] for e in entries] == [again.name, live.name, first.name]
    assert [e["state"] for e in entries] == ["interrupted", "running", "complete"]
    assert {e["name"] for e in entries} == {"fake"}
    newest = entries[0]
    assert newest["stop_reason"].startswith("budget reached")
    assert newest["cells"] == 2 and newest["items"] == newest["planned"] > 0
    assert newest["metric"] == "fake_exact.accuracy"
    assert set(newest["values"]) == {"rag+overlap", "first_pages"}
    assert {"degraded", "errors", "replays"} <= set(newest)

    assert main(["runs", str(runs)]) == 0
    table = capsys.readouterr().out
    lines = [line for line in table.splitlines() if "_fake" in line]
    assert [line.split()[2] for line in lines] == [again.name, live.name, first.name]
    assert "interrupted: budget reached" in table and "fake_exact.accuracy" in table


def test_runs_of_a_missing_folder_exits_2(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["runs", str(tmp_path / "nowhere")]) == 2
    assert "not a directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["runs", str(tmp_path / "empty")]) == 0
    assert "no run folders" in capsys.readouterr().err
