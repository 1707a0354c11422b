"""Reading a config: YAML file, ``--set`` overrides, plugins, readable validation errors.

Relative paths written in a config file (dataset ``path`` / ``pdf_dir``, ``runner.cache_dir``
/ ``runs_dir``, ``scoring.judge_prompts`` files, ``.py`` files in ``plugins``) resolve against
the folder of that file, so a run does not depend on where it is started from; paths given
with ``--set`` and the defaults (``runs/``, ``.scanrag_cache/``) resolve against the current
working directory.
``config.resolved.yaml`` in a run directory holds absolute paths so a resume works anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from scanrag.config.bounded_yaml import YamlLimitError, load_yaml
from scanrag.config.experiment import ExperimentConfig
from scanrag.config.sections import ConfigError
from scanrag.plugins import PluginError, import_plugin, is_file_plugin
from scanrag.scrub import register_secret_values


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"runner.budget.usd=2.5"`` → (["runner", "budget", "usd"], 2.5); values are YAML."""
    path, sep, raw = text.partition("=")
    if not sep or not path.strip():
        raise ConfigError("--set", [f"{text!r}: expected KEY.PATH=VALUE"])
    try:
        value = load_yaml(raw) if raw.strip() else ""
    except YamlLimitError as exc:
        raise ConfigError("--set", [f"{path}: value refused: {exc}"]) from None
    except yaml.YAMLError as exc:
        raise ConfigError("--set", [f"{path}: value is not valid YAML ({exc})"]) from None
    return [p for p in path.strip().split(".") if p], value


def apply_override(data: dict[str, Any], path: Sequence[str], value: Any) -> None:
    """Set ``value`` at ``path`` inside nested dicts/lists, creating dicts as needed."""
    node: Any = data
    where: list[str] = []
    for i, part in enumerate(path):
        last = i == len(path) - 1
        where.append(part)
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                at = ".".join(where[:-1])
                problem = f"{at}: index {part!r} outside 0..{len(node) - 1}"
                raise ConfigError("--set", [problem])
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                if node.get(part) is None:
                    node[part] = {}
                node = node[part]
        else:
            raise ConfigError("--set", [f"{'.'.join(where[:-1])}: is a value, not a section"])


def format_validation_error(error: ValidationError) -> list[str]:
    problems = []
    for item in error.errors():
        loc = ".".join(str(p) for p in item["loc"]) or "(top level)"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown key"
        problems.append(f"{loc}: {message}")
    return problems


def import_plugins(modules: Any, source: str = "<config>") -> None:
    """Import the ``plugins`` modules so their registrations exist before validation."""
    if modules is None:
        return
    if not isinstance(modules, list) or not all(isinstance(m, str) for m in modules):
        raise ConfigError(source, ["plugins: must be a list of module names"])
    for module in modules:
        try:
            import_plugin(module)
        except PluginError as exc:
            cause = exc.__cause__
            detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
            problem = f"plugins: cannot import {module!r}: {detail}"
            raise ConfigError(source, [problem]) from None


def _resolve_paths(config: ExperimentConfig, base: Path) -> ExperimentConfig:
    def absolute(path: Path | None) -> Path | None:
        if path is None:
            return None
        path = path.expanduser()
        return path if path.is_absolute() else (base / path).resolve()

    for dataset in config.datasets:
        dataset.path = absolute(dataset.path)
        dataset.pdf_dir = absolute(dataset.pdf_dir)
    config.runner.cache_dir = absolute(config.runner.cache_dir) or config.runner.cache_dir
    config.runner.runs_dir = absolute(config.runner.runs_dir) or config.runner.runs_dir
    return config


def config_from_dict(
    data: Mapping[str, Any],
    *,
    source: str = "<dict>",
    overrides: Iterable[str] = (),
    base_dir: Path | None = None,
) -> ExperimentConfig:
    """Validate ``data`` after applying ``--set`` style overrides; raises ``ConfigError``."""
    raw = yaml.safe_load(yaml.safe_dump(dict(data)))  # deep copy through plain types
    for text in overrides:
        path, value = parse_override(text)
        apply_override(raw, path, value)
    register_secret_values(raw)  # the file's and --set's values under secret-named keys
    import_plugins(raw.get("plugins") if isinstance(raw, dict) else None, source)
    try:
        config = ExperimentConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(source, format_validation_error(exc)) from None
    for entry in config.model_entries().values():  # keys read through api_key_env, headers
        entry.register_secrets()
    return _resolve_paths(config, base_dir or Path.cwd())


def read_yaml(path: str | Path) -> dict[str, Any]:
    """The raw mapping of a YAML config file; ``ConfigError`` if unreadable."""
    path = Path(path)
    if path.is_dir():
        hint = (
            f"; to finish that run use --resume {path}"
            if (path / "config.resolved.yaml").is_file()
            else ""
        )
        raise ConfigError(str(path), [f"is a folder, not a config file (a YAML file){hint}"])
    if not path.is_file():
        raise ConfigError(str(path), ["file not found"])
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), [f"cannot read the file: {exc}"]) from None
    except YamlLimitError as exc:
        raise ConfigError(str(path), [f"YAML refused: {exc}"]) from None
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), [f"not valid YAML: {exc}"]) from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), ["the top level must be a mapping of sections"])
    return data


def _anchored(value: Any, folder: Path) -> Any:
    if not isinstance(value, str) or not value.strip():
        return value
    path = Path(value).expanduser()
    return value if path.is_absolute() else str((folder / path).resolve())


def anchor_paths(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A copy of a config file's mapping with its relative paths made absolute against
    ``folder`` (the file's own folder); values of the wrong shape are left for validation."""
    out = yaml.safe_load(yaml.safe_dump(data))
    datasets = out.get("datasets")
    for dataset in datasets if isinstance(datasets, list) else []:
        if isinstance(dataset, dict):
            for key in ("path", "pdf_dir"):
                if key in dataset:
                    dataset[key] = _anchored(dataset[key], folder)
    runner = out.get("runner")
    if isinstance(runner, dict):
        for key in ("cache_dir", "runs_dir"):
            if key in runner:
                runner[key] = _anchored(runner[key], folder)
    plugins = out.get("plugins")
    if isinstance(plugins, list):
        out["plugins"] = [
            _anchored(p, folder) if isinstance(p, str) and is_file_plugin(p) else p for p in plugins
        ]
    scoring = out.get("scoring")
    prompts = scoring.get("judge_prompts") if isinstance(scoring, dict) else None
    if isinstance(prompts, dict):
        for role, file in prompts.items():
            prompts[role] = _anchored(file, folder)
    return out


def shortcut_overrides(
    data: Mapping[str, Any], *, limit: int | None = None, model: str | None = None
) -> list[str]:
    """``--limit`` (every dataset) and ``--model`` (every agent role) as ``--set`` overrides."""
    out: list[str] = []
    if limit is not None:
        datasets = data.get("datasets")
        count = len(datasets) if isinstance(datasets, list) else 0
        out += [f"datasets.{i}.limit={limit}" for i in range(count)]
    if model is not None:
        models = data.get("models") if isinstance(data.get("models"), dict) else {}
        agents = (models or {}).get("agents")
        roles = list(agents) if isinstance(agents, dict) and agents else ["reader"]
        out += [f"models.agents.{role}={model}" for role in roles]
    return out


def load_config(
    path: str | Path,
    overrides: Iterable[str] = (),
    *,
    limit: int | None = None,
    model: str | None = None,
) -> ExperimentConfig:
    """Read and validate one YAML config file, applying CLI overrides (later ones win)."""
    data = anchor_paths(read_yaml(path), Path(path).resolve().parent)
    overrides = list(overrides)
    data_after = yaml.safe_load(yaml.safe_dump(data))
    for text in overrides:
        apply_override(data_after, *parse_override(text))
    overrides += shortcut_overrides(data_after, limit=limit, model=model)
    return config_from_dict(data, source=str(path), overrides=overrides)
