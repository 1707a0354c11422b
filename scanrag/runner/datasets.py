"""The samples of a run: loaded once, frozen into the run directory, reloaded on resume.

A fresh run loads every dataset of the config, writes all samples to ``samples.jsonl`` in the
generic format (so ``scanrag score`` reads them) and which dataset each came from to
``datasets.json``. A resume reads those two files back instead of the dataset sources, so it
runs exactly the samples the run started with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scanrag.config import ExperimentConfig
from scanrag.rundir import RunDir
from scanrag.runner.components import (
    LoadedDataset,
    SetupError,
    check_unique_ids,
    ensure_synthetic,
    load_dataset_spec,
)

DATASETS_FILE = RunDir.DATASETS  # kept for one release; the name lives in RunDir


def load_fresh(config: ExperimentConfig, run_dir: RunDir) -> list[LoadedDataset]:
    cache_dir = Path(config.runner.cache_dir)
    datasets = [load_dataset_spec(spec, cache_dir) for spec in config.datasets]
    check_unique_ids(datasets)
    from scanrag.datasets import write_generic

    write_generic([s for d in datasets for s in d.samples], run_dir.file(RunDir.SAMPLES))
    run_dir.write_json(RunDir.DATASETS, [describe(d) for d in datasets])
    return datasets


def describe(dataset: LoadedDataset) -> dict[str, Any]:
    return {
        "name": dataset.name,
        "source": dataset.source,
        "loader": dataset.loader,
        "pdf_dir": str(dataset.pdf_dir),
        "report": dataset.report,
        "sample_ids": [s.id for s in dataset.samples],
        "input_errors": dict(dataset.bad),
    }


def load_line(dataset: LoadedDataset, examples: int = 3) -> str:
    """One log line per dataset: samples kept, rows the loader dropped and samples that will
    be input errors, with the first reasons (the full lists are in ``datasets.json``)."""
    dropped = [
        f"row {d.get('row')}: {d.get('reason')}" for d in (dataset.report or {}).get("dropped", [])
    ]
    bad = [f"{k}: {v}" for k, v in dataset.bad.items()]
    line = f"dataset {dataset.name}: {len(dataset.samples)} samples"
    if dropped:
        line += f", {len(dropped)} rows dropped ({_first(dropped, examples)})"
    if bad:
        line += f", {len(bad)} input errors ({_first(bad, examples)})"
    return line


def _first(items: list[str], n: int) -> str:
    return "; ".join(items[:n]) + ("; ..." if len(items) > n else "")


def reload(config: ExperimentConfig, run_dir: RunDir) -> list[LoadedDataset]:
    """The run's datasets from its own files (a fresh load if the first session died early)."""
    index_path = run_dir.file(RunDir.DATASETS)
    samples_path = run_dir.file(RunDir.SAMPLES)
    if not index_path.is_file() or not samples_path.is_file():
        return load_fresh(config, run_dir)
    from scanrag.datasets import validate_against_pdfs

    entries = run_dir.datasets()
    by_id = {s.id: s for s in run_dir.samples()[0]}
    specs = {spec.name: spec for spec in config.datasets}
    datasets = []
    for entry in entries:
        pdf_dir = Path(entry["pdf_dir"])
        spec = specs.get(entry["name"])
        if not pdf_dir.is_dir() and spec is not None and spec.synthetic is not None:
            pdf_dir = ensure_synthetic(Path(config.runner.cache_dir), spec.synthetic) / "pdfs"
        missing = [i for i in entry["sample_ids"] if i not in by_id]
        if missing:
            raise SetupError(f"{samples_path} lacks samples {missing[:5]} of {entry['name']!r}")
        samples = [by_id[i] for i in entry["sample_ids"]]
        _, dropped = validate_against_pdfs(samples, pdf_dir)
        datasets.append(
            LoadedDataset(
                name=entry["name"],
                pdf_dir=pdf_dir,
                samples=samples,
                report=entry.get("report") or {},
                source=entry.get("source"),
                loader=entry.get("loader"),
                bad={d.id: d.reason for d in dropped if d.id is not None},
            )
        )
    return datasets
