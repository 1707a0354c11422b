"""Checks that a config can start, made before its run folder is created.

Strategy parameters are checked by building the strategies (cheap). Retriever parameters
(names, annotated types and each retriever's ``check_params`` rules, through composites and
config aliases; see ``scanrag.retriever_specs``), dataset loader options and synthetic-corpus
options are checked against the signatures of their factories without building anything (a
retriever may load a model), and dataset paths must exist. Every problem is reported at once,
each under its config key.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from scanrag.config import ExperimentConfig, SyntheticSpec
from scanrag.retriever_specs import RetrieverSpecs
from scanrag.runner.components import SetupError

# Arguments the runner fills in itself rather than the config.
INJECTED = frozenset({"samples"})


def preflight(config: ExperimentConfig) -> None:
    """Raise :class:`SetupError` listing every problem that would stop the run later."""
    problems = [*_retriever_problems(config), *_dataset_problems(config)]
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise SetupError(f"the run cannot start:\n{lines}")


def _retriever_problems(config: ExperimentConfig) -> list[str]:
    """Every retriever alias against its real constructor, recursively through composites
    (alias references, cycles, names, types, the retriever's own cheap rules); no model loads."""
    return RetrieverSpecs(config.retrievers).problems(skip=sorted(INJECTED))


def _dataset_problems(config: ExperimentConfig) -> list[str]:
    problems = []
    for i, spec in enumerate(config.datasets):
        key = f"datasets.{i}"
        if spec.synthetic is not None:
            problems += _synthetic_problems(f"{key}.synthetic", spec.synthetic)
            continue
        if spec.path is not None and not Path(spec.path).exists():
            problems.append(f"{key}.path: {spec.path} does not exist")
        if spec.pdf_dir is not None and not Path(spec.pdf_dir).is_dir():
            problems.append(f"{key}.pdf_dir: {spec.pdf_dir} is not a folder")
        from scanrag.datasets.base import LOADERS

        loader = LOADERS.get(spec.loader)  # the name was checked when the config loaded
        problems += _binding(f"{key}.options", loader, spec.options, positional=2)
    return problems


def _synthetic_problems(key: str, spec: SyntheticSpec) -> list[str]:
    from scanrag.synth import generate_corpus
    from scanrag.synth.corpus import DEFAULTS, check_params

    problems = _binding(f"{key}.options", generate_corpus, spec.options)
    if problems:
        return problems
    values = {**DEFAULTS, **spec.options, "n_docs": spec.docs}
    try:
        check_params(**{name: values[name] for name in DEFAULTS})
    except (TypeError, ValueError) as exc:
        return [f"{key}: {exc}"]
    return []


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
