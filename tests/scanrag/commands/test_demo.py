"""``scanrag demo``: the quickstart config validates; the command runs, prints and reports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
import yaml

from scanrag.cli import main
from scanrag.commands.demo import LARGE_OVERRIDES, default_config, demo_overrides
from scanrag.config import config_from_dict, load_config, read_yaml

FAKES = Path(__file__).resolve().parents[1] / "runner"
sys.path.insert(0, str(FAKES))
import runner_fakes as rf  # noqa: E402


@pytest.fixture(autouse=True)
def _fake_model_registered() -> None:
    """Other test packages clear the scripted registry; the demo runs reach the fake model by
    name through the gateway, so put it back (without it every item is a model_error)."""
    rf.register_models()


def args(**values: object) -> argparse.Namespace:
    base = {
        "overrides": [],
        "large": False,
        "model": None,
        "executor": None,
        "concurrency": None,
        "budget_usd": None,
        "budget_tokens": None,
        "no_budget": False,
        "runs_dir": None,
        "cache_dir": None,
        "progress": None,
        "no_score": False,
    }
    base.update(values)
    return argparse.Namespace(**base)


def test_quickstart_config_has_the_demo_grid() -> None:
    config = load_config(default_config())
    keys = [cell.run_key for cell in config.cells()]
    assert keys == [
        "full_doc",
        "topk_rag+bm25",
        "topk_rag+dense",
        "topk_rag+hybrid",
        "agentic_rag+hybrid",
        "oracle_pages",
    ]
    assert config.models.agents["reader"].startswith("local/")
    assert config.datasets[0].synthetic is not None


def test_large_and_model_flags_become_valid_overrides() -> None:
    data = read_yaml(default_config())
    overrides = demo_overrides(args(large=True, model="local/smollm2-135m"), data)
    assert overrides[: len(LARGE_OVERRIDES)] == list(LARGE_OVERRIDES)
    config = config_from_dict(data, overrides=overrides)
    small = load_config(default_config())
    assert config.datasets[0].synthetic.docs > small.datasets[0].synthetic.docs
    assert config.models.judges["default"] == "local/smollm2-135m"


def test_demo_runs_a_config_prints_the_table_and_reports(tmp_path: Path, capsys) -> None:
    path = tmp_path / "demo.yaml"
    config = rf.make_config(
        tmp_path, scoring={"enabled": True, "scorers": ["fake_exact"]}, runner={"progress": False}
    )
    path.write_text(yaml.safe_dump(config))
    code = main(["demo", "--config", str(path), "--limit", "2", "--out", str(tmp_path / "rep")])
    assert code == 0
    out = capsys.readouterr().out
    assert "rag+overlap" in out
    assert all(word in out.split() for word in ("fake_", "exact.", "accuracy"))  # its header
    assert "run directory:" in out
    assert f"report: {tmp_path / 'rep' / 'index.html'}" in out
    assert (tmp_path / "rep" / "index.html").is_file()


def test_demo_without_a_report_writer_still_finishes(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scanrag.registry import BACKENDS, UnknownNameError

    def missing(name: str):
        raise UnknownNameError("backend", name, ["scoring"])

    monkeypatch.setattr(BACKENDS, "get", missing)
    path = tmp_path / "demo.yaml"
    config = rf.make_config(tmp_path, scoring={"enabled": False}, runner={"progress": False})
    path.write_text(yaml.safe_dump(config))
    assert main(["demo", "--config", str(path), "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "no report writer available" in out and "run directory:" in out


def test_demo_reports_a_missing_config(tmp_path: Path, capsys) -> None:
    assert main(["demo", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "file not found" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.model
def test_real_quickstart_with_one_question(tmp_path: Path) -> None:
    code = main(
        [
            "demo",
            "--limit",
            "1",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--out",
            str(tmp_path / "report"),
        ]
    )
    assert code == 0
