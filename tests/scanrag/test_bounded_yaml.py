"""YAML read with bounds (issue 20: six nested alias levels under one model entry's
``extra_body``, a 1.2 KB config, wrote a 26 MB resolved config and a 37 MB manifest)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from scanrag.config import ConfigError, load_config, parse_override
from scanrag.config import bounded_yaml as by
from scanrag.config.bounded_yaml import YamlLimitError, load_yaml


def laughs(levels: int, width: int = 9) -> str:
    """``levels`` nested alias levels of ``width`` references each (width**levels values)."""
    lines = ["l0: &l0 [" + ", ".join(["aaaaaaaaa"] * width) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_plain_yaml_and_modest_aliases_load_as_before() -> None:
    text = "base: &b {temperature: 0.2, top_p: 0.9}\na: *b\nb: *b\nlist: [1, 2, {x: y}]\n"
    assert load_yaml(text) == {
        "base": {"temperature": 0.2, "top_p": 0.9},
        "a": {"temperature": 0.2, "top_p": 0.9},
        "b": {"temperature": 0.2, "top_p": 0.9},
        "list": [1, 2, {"x": "y"}],
    }
    assert load_yaml("") is None and load_yaml("3") == 3
    assert load_yaml(laughs(3)) is not None  # 729 values: fine


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    started = time.perf_counter()
    with pytest.raises(YamlLimitError, match="expand to more than 100,000 values"):
        load_yaml(laughs(6))  # 531,441 values from 600 bytes
    with pytest.raises(YamlLimitError, match="expand to more than 100,000 values"):
        load_yaml(laughs(40, width=2))  # 2**40 values, each level doubling
    assert time.perf_counter() - started < 5


def test_long_strings_repeated_by_aliases_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(by, "MAX_CHARS", 10_000)
    text = "s: &s " + "x" * 2_000 + "\nl: [*s, *s, *s, *s, *s, *s]\n"
    with pytest.raises(YamlLimitError, match="10,000 characters"):
        load_yaml(text)


def test_too_many_aliases_recursion_size_and_depth_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    many = "a: &a 1\nl: [" + ", ".join(["*a"] * (by.MAX_ALIASES + 1)) + "]\n"
    with pytest.raises(YamlLimitError, match="alias uses"):
        load_yaml(many)
    with pytest.raises(YamlLimitError, match="recursive"):
        load_yaml("a: &a [1, *a]\n")
    monkeypatch.setattr(by, "MAX_BYTES", 100)
    with pytest.raises(YamlLimitError, match="at most 100"):
        load_yaml("x: " + "y" * 200)
    monkeypatch.undo()
    with pytest.raises(YamlLimitError, match="nested too deeply"):
        load_yaml("[" * 5000 + "]" * 5000)


def test_a_config_file_with_a_bomb_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    body = "\n".join("        " + line for line in laughs(6).splitlines())
    path.write_text(
        "name: bomb\nmodels:\n  agents:\n    reader:\n      model: scripted/x\n"
        f"      extra_body:\n{body}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.problems == [
        "YAML refused: its aliases expand to more than 100,000 values; write the values out or "
        "use fewer nested aliases"
    ]


def test_a_set_value_is_bounded_too() -> None:
    value = "{" + laughs(6).replace("\n", ", ").rstrip(", ") + "}"
    with pytest.raises(ConfigError, match="runner.settings.x: value refused: its aliases"):
        parse_override(f"runner.settings.x={value}")


def test_a_folder_given_as_the_config_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.problems == ["is a folder, not a config file (a YAML file)"]
    (tmp_path / "config.resolved.yaml").write_text("name: x\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.problems == [
        f"is a folder, not a config file (a YAML file); to finish that run use --resume {tmp_path}"
    ]
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(bad)
