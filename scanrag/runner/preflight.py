"""Checks that a config can start, made before its run folder is created.

Strategy parameters are checked by building the strategies (cheap). Retriever parameters
(names, annotated types and each retriever's ``check_params`` rules, through composites and
config aliases; see ``scanrag.retriever_specs``) and dataset loader options are checked against
their factories without building anything (a retriever may load a model; a loader with an
``option_problems`` method, such as the synthetic one, checks its own). Dataset paths must
exist, and every dataset is then loaded once (:func:`scanrag.runner.datasets.load_checked`): an
empty file, a file whose rows the loader all drops, ``ids`` that match nothing, or a dataset none
of whose samples has usable PDFs stops the run. Every problem is reported at once, each under
its config key, and the loaded datasets go on to the run.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from scanrag.config import DatasetSpec, ExperimentConfig
from scanrag.registry import LOADERS, RegistryError, UnknownNameError
from scanrag.retriever_specs import RetrieverSpecs
from scanrag.runner.components import LoadedDataset, SetupError
from scanrag.runner.datasets import SYNTHETIC_LOADER, load_checked, synthetic_options

# Arguments the runner fills in itself rather than the config.
INJECTED = frozenset({"samples"})


def preflight(config: ExperimentConfig) -> list[LoadedDataset]:
    """Raise :class:`SetupError` listing every problem that would stop the run later; return
    the datasets, loaded once (``start_run`` hands them to the runner)."""
    datasets, dataset_problems = _dataset_problems(config)
    problems = [*_retriever_problems(config), *dataset_problems]
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise SetupError(f"the run cannot start:\n{lines}")
    return datasets


def _retriever_problems(config: ExperimentConfig) -> list[str]:
    """Every retriever alias against its real constructor, recursively through composites
    (alias references, cycles, names, types, the retriever's own cheap rules); no model loads."""
    return RetrieverSpecs(config.retrievers).problems(skip=sorted(INJECTED))


def _dataset_problems(config: ExperimentConfig) -> tuple[list[LoadedDataset], list[str]]:
    """Paths and loader options of every dataset, then the loaded datasets themselves (only
    those whose spec is sound are loaded)."""
    problems, sound = [], []
    for i, spec in enumerate(config.datasets):
        found = _spec_problems(f"datasets.{i}", spec)
        problems += found
        if not found:
            sound.append(i)
    datasets, loaded_problems = load_checked(config, only=sound)
    return datasets, problems + loaded_problems


def _spec_problems(key: str, spec: DatasetSpec) -> list[str]:
    if spec.synthetic is not None:
        return _loader_problems(
            f"{key}.synthetic", SYNTHETIC_LOADER, synthetic_options(spec.synthetic)
        )
    problems = []
    if spec.path is not None and not Path(spec.path).exists():
        problems.append(f"{key}.path: {spec.path} does not exist")
    if spec.pdf_dir is not None and not Path(spec.pdf_dir).is_dir():
        problems.append(f"{key}.pdf_dir: {spec.pdf_dir} is not a folder")
    options = dict(spec.options)
    if spec.allow_outside_pdf_dir:
        options["allow_outside_pdf_dir"] = True
    return problems + _loader_problems(key, spec.loader, options, positional=2)


def _loader_problems(
    key: str, name: str, options: Mapping[str, Any], positional: int = 0
) -> list[str]:
    """Whether loader ``name`` takes ``options``: its own ``option_problems`` (``(where,
    message)`` pairs) when it has one, else a check against its signature."""
    try:
        loader = LOADERS.get(name)
    except (UnknownNameError, RegistryError) as exc:
        return [f"{key}: {exc}"]
    check = getattr(loader, "option_problems", None)
    if callable(check):
        return [
            f"{key}.{where}: {msg}" if where else f"{key}: {msg}" for where, msg in check(options)
        ]
    return _binding(f"{key}.options", loader, options, positional=positional)


def _binding(
    key: str, factory: Callable[..., Any], params: Mapping[str, Any], positional: int = 0
) -> list[str]:
    """Whether ``params`` fit ``factory``'s signature (after ``positional`` arguments)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # no signature to check against
        return []
    named = {k: v for k, v in params.items() if k not in INJECTED}
    try:
        signature.bind_partial(*([None] * positional), **named)
    except TypeError as exc:
        accepted = [
            name
            for name, p in list(signature.parameters.items())[positional:]
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and name not in INJECTED
        ]
        return [f"{key}: {exc}; accepted: {', '.join(accepted) or '(none)'}"]
    return []
