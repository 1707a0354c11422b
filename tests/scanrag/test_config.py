"""Experiment config: validation messages name the key path and the allowed values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scanrag.config import (
    ConfigError,
    ExperimentConfig,
    apply_override,
    config_from_dict,
    load_config,
    parse_override,
)
from scanrag.registry import STRATEGIES


def base(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "exp",
        "datasets": [{"path": "data/questions.jsonl", "pdf_dir": "data/pdfs"}],
        "retrievers": {"bm25": {}, "dense": {"params": {"batch_size": 8}}},
        "strategies": [
            {"name": "topk_rag", "retriever": ["bm25", "dense"]},
            {"name": "full_doc", "params": {"max_pages": 10}},
        ],
        "models": {"agents": {"reader": "local/smollm2-135m"}},
    }
    data.update(extra)
    return data


def problems(data: dict[str, Any], overrides: tuple[str, ...] = ()) -> list[str]:
    with pytest.raises(ConfigError) as info:
        config_from_dict(data, overrides=overrides)
    return info.value.problems


def test_valid_config_builds_the_grid(tmp_path: Path) -> None:
    data = base(grid={"models": {"reader": ["local/a", "local/b"]}})
    config = config_from_dict(data, base_dir=tmp_path)
    keys = [cell.run_key for cell in config.cells()]
    assert keys == [
        "topk_rag+bm25@reader=local/a",
        "topk_rag+bm25@reader=local/b",
        "topk_rag+dense@reader=local/a",
        "topk_rag+dense@reader=local/b",
        "full_doc@reader=local/a",
        "full_doc@reader=local/b",
    ]
    assert config.cells()[1].models == {"reader": "local/b"}
    assert config.datasets[0].path == tmp_path / "data" / "questions.jsonl"
    assert config.datasets[0].name == "questions"
    assert config.runner.cache_dir.is_absolute()


def test_unknown_key_names_path_and_allowed_keys() -> None:
    data = base(runner={"concurrency": 2, "concurency": 3})
    (message,) = problems(data)
    assert message.startswith("runner: unknown key(s) 'concurency'")
    assert "allowed keys:" in message and "concurrency" in message and "budget" in message


def test_unknown_top_level_key() -> None:
    (message,) = problems(base(stratgies=[]))
    assert "unknown key(s) 'stratgies'" in message and "strategies" in message


def test_unknown_strategy_lists_known_names() -> None:
    data = base(strategies=[{"name": "full_doc"}, {"name": "magic_rag"}])
    (message,) = problems(data)
    assert message.startswith("strategies.1.name: unknown strategy 'magic_rag'")
    for known in STRATEGIES.names():
        assert known in message


def test_unknown_retriever_type_lists_known_names() -> None:
    data = base(retrievers={"bm25": {}, "fancy": {"type": "nope"}})
    (message,) = problems(data)
    assert message.startswith("retrievers: fancy: unknown retriever 'nope'")
    assert "bm25" in message and "hybrid" in message


def test_undefined_retriever_alias() -> None:
    data = base(strategies=[{"name": "topk_rag", "retriever": "splade"}])
    (message,) = problems(data)
    assert "strategies.0.retriever: 'splade' is not defined" in message
    assert "defined: bm25, dense" in message


def test_bad_types_and_literals() -> None:
    data = base(runner={"concurrency": "many", "executor": "spark", "budget": {"usd": -1}})
    found = problems(data)
    assert any(p.startswith("runner.concurrency: Input should be a valid integer") for p in found)
    assert any(p.startswith("runner.executor:") and "'local' or 'ray'" in p for p in found)
    assert any(p.startswith("runner.budget.usd:") and "greater than 0" in p for p in found)


def test_dataset_needs_exactly_one_source() -> None:
    (message,) = problems(base(datasets=[{"pdf_dir": "x"}]))
    assert message.startswith("datasets.0:") and "exactly one of 'path'" in message
    both = [{"path": "a.jsonl", "synthetic": {"seed": 1}}]
    assert "exactly one" in problems(base(datasets=both))[0]


def test_unknown_dataset_loader_lists_loaders() -> None:
    (message,) = problems(base(datasets=[{"path": "a.jsonl", "loader": "csv"}]))
    assert message.startswith("datasets.0.loader: unknown dataset loader 'csv'")
    assert "generic" in message


def test_duplicate_labels_are_rejected() -> None:
    data = base(strategies=[{"name": "full_doc"}, {"name": "full_doc"}])
    assert "duplicate label" in problems(data)[0]


def test_set_overrides_nested_values_and_list_items(tmp_path: Path) -> None:
    config = config_from_dict(
        base(),
        overrides=(
            "runner.budget.usd=2.5",
            "strategies.1.params.max_pages=4",
            "runner.per_provider={openai: 8, local: 1}",
            "models.judges.answer=openai/gpt-4o-mini",
        ),
        base_dir=tmp_path,
    )
    assert config.runner.budget.usd == 2.5
    assert config.strategies[1].params == {"max_pages": 4}
    assert config.runner.per_provider == {"openai": 8, "local": 1}
    assert config.models.judges == {"answer": "openai/gpt-4o-mini"}


def test_bad_overrides_are_config_errors() -> None:
    assert "expected KEY.PATH=VALUE" in problems(base(), ("runner.budget",))[0]
    assert "index '7' outside 0..1" in problems(base(), ("strategies.7.name=x",))[0]
    assert "unknown key(s) 'colour'" in problems(base(), ("runner.colour=red",))[0]


def test_parse_and_apply_override() -> None:
    path, value = parse_override("a.b.c=[1, 2]")
    data: dict[str, Any] = {}
    apply_override(data, path, value)
    assert data == {"a": {"b": {"c": [1, 2]}}}


def test_load_config_file_with_shortcuts(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    data = base()
    data["models"] = {"agents": {"reader": "x/a", "planner": "x/b"}}
    data["datasets"].append({"name": "second", "path": "other.jsonl"})
    path.write_text(yaml.safe_dump(data))
    config = load_config(path, ["runner.seed=7"], limit=3, model="local/smollm2-135m")
    assert config.runner.seed == 7
    assert [d.limit for d in config.datasets] == [3, 3]
    assert config.models.agents == {"reader": "local/smollm2-135m", "planner": "local/smollm2-135m"}


def test_load_config_reports_file_problems(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    listing = tmp_path / "list.yaml"
    listing.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(listing)


def test_plugin_import_failure_is_named() -> None:
    (message,) = problems(base(plugins=["no_such_plugin_module"]))
    assert message.startswith("plugins: cannot import 'no_such_plugin_module'")


def test_resolved_yaml_round_trips(tmp_path: Path) -> None:
    config = config_from_dict(base(runner={"budget": {"tokens": 1000}}), base_dir=tmp_path)
    again = ExperimentConfig.model_validate(yaml.safe_load(config.to_yaml()))
    assert again == config


def test_typos_get_did_you_mean() -> None:
    (strategy,) = problems(base(strategies=[{"name": "topk_rga", "retriever": "bm25"}]))
    assert "unknown strategy 'topk_rga' (did you mean 'topk_rag'?)" in strategy
    (key,) = problems(base(), overrides=("runner.concurency=3",))
    assert "unknown key(s) 'concurency' (did you mean 'concurrency'?)" in key
    (far,) = problems(base(), overrides=("runner.zzz=3",))
    assert "did you mean" not in far


def test_relative_paths_resolve_against_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "study" / "configs"
    folder.mkdir(parents=True)
    prompt = folder / "answer.txt"
    prompt.write_text("Judge it.", encoding="utf-8")
    data = base(
        runner={"cache_dir": "../cache", "runs_dir": "out"},
        scoring={"judge_prompts": {"answer": "answer.txt"}},
    )
    data["datasets"].append({"path": "/abs/q.jsonl", "pdf_dir": "~/pdfs", "name": "abs"})
    (folder / "exp.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(folder / "exp.yaml", ["datasets.1.name=moved", "runner.seed=3"])
    assert config.datasets[0].path == folder / "data" / "questions.jsonl"
    assert config.datasets[0].pdf_dir == folder / "data" / "pdfs"
    assert config.datasets[1].path == Path("/abs/q.jsonl")
    assert config.datasets[1].pdf_dir == Path("~/pdfs").expanduser()
    assert config.runner.cache_dir == tmp_path / "study" / "cache"
    assert config.runner.runs_dir == folder / "out"
    assert config.scoring.judge_prompts == {"answer": str(prompt)}
    # a relative path given on the command line is read from where the command runs
    again = load_config(folder / "exp.yaml", ["datasets.0.pdf_dir=here"])
    assert again.datasets[0].pdf_dir == elsewhere / "here"


def test_defaults_stay_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "exp.yaml").write_text(yaml.safe_dump(base()), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    config = load_config("configs/exp.yaml")
    assert config.runner.runs_dir == tmp_path / "runs"
    assert config.datasets[0].path == tmp_path / "configs" / "data" / "questions.jsonl"


def test_runner_settings_are_typed_where_they_name_a_run_setting() -> None:
    from scanrag.runner.components import strategy_settings

    data = base(runner={"settings": {"context_tokens": "many", "on_degraded": "maybe"}})
    found = problems(data)
    assert any(p.startswith("runner.settings") and "context_tokens" in p for p in found)
    assert any(p.startswith("runner.settings") and "on_degraded" in p for p in found)
    runner = {
        "seed": 3,
        "page_caps": {"max_pages": 9},
        "settings": {"context_tokens": 4096, "max_pages": 5, "house_style": "terse"},
    }
    settings = strategy_settings(config_from_dict(base(runner=runner)).runner)
    assert (settings.seed, settings.max_pages, settings.context_tokens) == (3, 5, 4096)
    assert settings.on_degraded == "record" and settings.extra == {"house_style": "terse"}
    assert settings.for_item("cell").run_key == "cell" and settings.run_key is None
