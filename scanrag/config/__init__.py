"""Experiment configuration: one YAML file, validated with pydantic, overridable from the CLI.

A config declares the datasets, the retrievers (alias → registry type + parameters), the
strategies, the agent and judge models, a grid swept over model roles, and runner settings.
Every section forbids unknown keys, and every error names the key path and, where the value
must come from a fixed set (a registry, a literal), the allowed values.

Modules: ``sections`` (the section models), ``experiment`` (``ExperimentConfig`` and its grid
of ``RunCell``), ``loading`` (YAML, ``--set`` overrides, plugins, error formatting).
"""

from scanrag.config.experiment import ExperimentConfig, RunCell
from scanrag.config.loading import (
    apply_override,
    config_from_dict,
    format_validation_error,
    import_plugins,
    load_config,
    parse_override,
    read_yaml,
    shortcut_overrides,
)
from scanrag.config.sections import (
    DEFAULT_MODEL,
    BudgetSpec,
    ConfigError,
    DatasetSpec,
    GridSpec,
    LLMSpec,
    ModelsSpec,
    PageCaps,
    RaySpec,
    ReportSpec,
    RetrieverSpec,
    RunnerSpec,
    ScoringSpec,
    StrategySpec,
    StrictModel,
    SyntheticSpec,
)

__all__ = [
    "DEFAULT_MODEL",
    "BudgetSpec",
    "ConfigError",
    "DatasetSpec",
    "ExperimentConfig",
    "GridSpec",
    "LLMSpec",
    "ModelsSpec",
    "PageCaps",
    "RaySpec",
    "ReportSpec",
    "RetrieverSpec",
    "RunCell",
    "RunnerSpec",
    "ScoringSpec",
    "StrategySpec",
    "StrictModel",
    "SyntheticSpec",
    "apply_override",
    "config_from_dict",
    "format_validation_error",
    "import_plugins",
    "load_config",
    "parse_override",
    "read_yaml",
    "shortcut_overrides",
]
