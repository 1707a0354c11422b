"""``scanrag report RUN...``: what differs between the runs' resolved configs, so two runs of
one experiment name are told apart by their conditions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from scanrag.cli import main
from scanrag.config import config_from_dict
from scanrag.evaluation.report.config_diff import config_differences, flatten
from scanrag.rundir import RunDir


def test_configs_flatten_by_key_and_by_entry_name() -> None:
    config = {
        "name": "x",
        "description": "prose",
        "strategies": [
            {"name": "topk_rag", "params": {"k": 3}},
            {"name": "full_doc", "label": "fd", "params": {}},
        ],
        "runner": {"page_caps": {"max_pages": 60}},
        "scoring": {"scorers": ["pages", "answer"]},
    }
    assert flatten(config) == {
        "name": "x",
        "strategies[topk_rag].name": "topk_rag",
        "strategies[topk_rag].params.k": 3,
        "strategies[fd].name": "full_doc",
        "strategies[fd].label": "fd",
        "strategies[fd].params": {},
        "runner.page_caps.max_pages": 60,
        "scoring.scorers": ["pages", "answer"],
    }
    other = {**config, "runner": {"page_caps": {"max_pages": 12}}}
    other["strategies"] = [config["strategies"][0], {"name": "scan"}]
    rows = dict(config_differences([config, other]))
    assert rows["runner.page_caps.max_pages"] == ["60", "12"]
    assert rows["strategies[fd]"][1] == "—" and '"label": "fd"' in rows["strategies[fd]"][0]
    assert rows["strategies[scan]"] == ["—", '{"name": "scan"}']
    assert not any(key.startswith("strategies[fd].") for key in rows)  # one row per entry
    assert "description" not in rows and "strategies[topk_rag].params.k" not in rows


@pytest.fixture
def two_runs(run_copy: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The same experiment run twice, the second under a smaller page cap and fail."""
    second = tmp_path / f"{run_copy.name}-2"
    shutil.copytree(run_copy, second)
    path = second / "config.resolved.yaml"
    config = yaml.safe_load(path.read_text())
    config["runner"]["page_caps"]["max_pages"] = 3
    config["runner"]["on_degraded"] = "fail"
    # written as a run writes its config (the manifest records its hash; a hand edit is refused)
    RunDir(second).write_config(config_from_dict(config, source=str(path)))
    return run_copy, second


def test_the_report_lists_what_differs_between_the_runs_configs(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = two_runs
    out = tmp_path / "rep"
    args = ["report", str(first), str(second), "--out", str(out), "--resamples", "0"]
    assert main([*args, "--max-questions", "0"]) == 0
    printed = capsys.readouterr().out
    assert f"config differences ({first.name} | {second.name}):" in printed
    assert "runner.page_caps.max_pages: 6 | 3" in printed
    assert "runner.on_degraded: record | fail" in printed
    html = (out / "index.html").read_text(encoding="utf-8")
    section = html[html.index('<h2 id="config-diff">') : html.index('id="comparison-tables"')]
    assert "2 key(s) of config.resolved.yaml differ" in section
    assert f"<th>{first.name}</th><th>{second.name}</th>" in section
    assert "<td>runner.on_degraded</td><td>record</td><td>fail</td>" in section


def test_one_run_has_no_config_section(run_copy: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    args = ["report", str(run_copy), "--out", str(tmp_path / "rep"), "--resamples", "0"]
    assert main([*args, "--max-questions", "0"]) == 0
    assert "config differences" not in capsys.readouterr().out
    assert 'id="config-diff"' not in (tmp_path / "rep" / "index.html").read_text()
