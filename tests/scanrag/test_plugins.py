"""Plugins: ``--plugin MODULE`` on every sub-command and a config's ``plugins:`` list, by
module name (installed or in the current folder) or ``.py`` file."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from scanrag.cli import _leaf_parsers, build_parser, main
from scanrag.plugins import PluginError, import_plugin, plugin_arguments
from scanrag.registry import COMMANDS, SCORERS

PLUGIN = """
from scanrag.evaluation.base import PureScorer
from scanrag.registry import SCORERS


@SCORERS.register("{name}")
class Words(PureScorer):
    name = "{name}"

    def compute(self, trajectory, sample, judge=None):
        return self.new_row(trajectory, sample, metrics={{"words": 1.0}})

    def aggregate(self, rows, group, stats):
        raise NotImplementedError
"""


@pytest.fixture
def plugin_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "plug_words.py"
    path.write_text(PLUGIN.format(name="plug_words"), encoding="utf-8")
    try:
        yield path
    finally:
        SCORERS.unregister("plug_words")
        sys.modules.pop("plug_words", None)


def test_every_sub_command_takes_plugin() -> None:
    leaves = _leaf_parsers(build_parser())
    names = {parser.prog.removeprefix("scanrag ") for parser in leaves}
    assert {"run", "score", "retrieve eval", "report", "export", "ingest"} <= names
    assert len(names) >= len(COMMANDS.names())
    for parser in leaves:
        assert any("--plugin" in a.option_strings for a in parser._actions), parser.prog


def test_plugin_arguments_are_read_before_parsing() -> None:
    argv = ["run", "c.yaml", "--plugin", "a", "--plugin=b.py", "--set", "x=1", "--", "--plugin"]
    assert plugin_arguments(argv) == ["a", "b.py"]


def test_a_py_file_and_a_module_in_the_current_folder_import(
    plugin_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = import_plugin(str(plugin_file))
    assert "plug_words" in SCORERS and module.__name__ == "plug_words"
    assert import_plugin(str(plugin_file)) is module  # once
    SCORERS.unregister("plug_words")
    sys.modules.pop("plug_words", None)
    monkeypatch.chdir(plugin_file.parent)
    monkeypatch.setattr(
        sys, "path", [p for p in sys.path if p not in ("", str(plugin_file.parent))]
    )
    import_plugin("plug_words")
    assert "plug_words" in SCORERS


def test_a_broken_plugin_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(PluginError, match="cannot import plugin 'no_such_mod': ModuleNotFound"):
        import_plugin("no_such_mod")
    with pytest.raises(PluginError, match="no such file"):
        import_plugin(str(tmp_path / "missing.py"))
    bad = tmp_path / "bad_plugin.py"
    bad.write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    assert main(["report", "x", "--plugin", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "error: --plugin: cannot import plugin" in err and "RuntimeError: boom" in err
    assert "Traceback" not in err


def test_run_records_its_plugins_in_the_config(plugin_file: Path, tmp_path: Path) -> None:
    """``run --plugin`` adds the plugin to the config's ``plugins`` (a resume and Ray workers
    import it from the run's config); files as absolute paths, the config's own relative to it."""
    from scanrag.commands.run import plugin_overrides

    config = tmp_path / "exp.yaml"
    config.write_text(yaml.safe_dump({"plugins": ["a_module", "rel.py"]}), encoding="utf-8")
    args = type("Args", (), {"plugin": [str(plugin_file), "a_module"], "config": str(config)})
    (override,) = plugin_overrides(args())  # type: ignore[arg-type]
    listed = yaml.safe_load(override.split("=", 1)[1])
    assert listed == ["a_module", str(tmp_path / "rel.py"), str(plugin_file)]
