"""Assembles ``manifest.json`` from the config and what the stages built."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scanrag import __version__
from scanrag.config import ExperimentConfig, RunCell
from scanrag.hashing import file_sha256
from scanrag.llm.endpoints import ModelEntry
from scanrag.llm.providers import describe_model
from scanrag.protocols import RunSettings, Strategy
from scanrag.rundir import RunDir, RunDirError
from scanrag.runner.components import (
    LoadedDataset,
    describe_strategy,
    retriever_type,
    strategy_settings,
)
from scanrag.runner.datasets import describe
from scanrag.runner.executors import RunJob
from scanrag.runner.manifest import environment, now_iso


def _cell_entry(cell: RunCell, strategy: Strategy | None, settings: RunSettings) -> dict[str, Any]:
    described = describe_strategy(strategy) if strategy is not None else {}
    hashes = described.get("prompt_hashes") or described.get("prompts") or {}
    entry = {**cell.describe(), "describe": described, "prompt_hashes": hashes}
    entry |= cell_caps(strategy, settings)
    return entry


def cell_caps(strategy: Strategy | None, settings: RunSettings) -> dict[str, Any]:
    """The caps a cell's items are read under and its label with them (``full_doc ≤60p``),
    for strategies that tell (``caps`` / ``cap_label``)."""
    caps = getattr(strategy, "caps", None)
    label = getattr(strategy, "cap_label", None)
    if not callable(caps) or not callable(label):
        return {}
    try:
        return {"caps": dict(caps(settings)), "cap_label": str(label(settings))}
    except Exception as exc:  # a strategy whose caps cannot be read: the cell has no label
        return {"caps_error": f"{type(exc).__name__}: {exc}"}


def build_manifest(
    config: ExperimentConfig,
    run_dir: RunDir,
    cells: Sequence[RunCell],
    strategies: dict[str, Strategy],
    datasets: Sequence[LoadedDataset],
) -> dict[str, Any]:
    """The manifest of this run; a resume keeps the earlier one's history and adds to it."""
    previous = _read(run_dir)
    settings = strategy_settings(config.runner)
    manifest: dict[str, Any] = {
        "name": config.name,
        "run_dir": str(run_dir.path),
        "created": previous.get("created") or now_iso(),
        "scanrag_version": __version__,
        # what the run folder's files hold now, checked by every command that opens the
        # folder (scanrag.rundir.trust): the config as recorded, the samples as frozen
        "config_hash": run_dir.recorded_config_hash(),
        "files": run_dir.file_digests(),
        "environment": previous.get("environment") or environment(),
        "models": models_entry(cells, config.judge_models(), config.model_entries()),
        "render_dpi": config.runner.render_dpi,
        "page_caps": config.runner.page_caps.model_dump(),
        "on_degraded": config.runner.on_degraded,
        "decider": config.report.decider,
        "budget": config.runner.budget.model_dump(),
        "executor": config.runner.executor,
        "seed": config.runner.seed,
        "cells": [_cell_entry(c, strategies.get(c.run_key), settings) for c in cells],
        "scoring": scoring_entry(
            config.scoring.scorers, config.scoring.params, config.scoring.judge_prompts
        ),
        "datasets": [_dataset_entry(d) for d in datasets],
        "retrievers": previous.get("retrievers", {}),
        "documents": previous.get("documents", []),
        "sessions": previous.get("sessions", []),
        "warnings": list(previous.get("warnings", [])),
    }
    if previous:
        manifest["environment_now"] = environment()
        changed = prompt_changes(previous.get("cells") or [], manifest["cells"])
        if changed:
            manifest["warnings"].append(
                {
                    "at": now_iso(),
                    "message": f"prompt hashes changed since the run started for {changed}; "
                    "rows written before and after this resume come from different prompts",
                }
            )
    return manifest


def scoring_entry(
    scorers: Sequence[str] | None,
    params: Mapping[str, Any] | None,
    judge_prompts: Mapping[str, str | Path] | None,
) -> dict[str, Any]:
    """What scoring was asked for: scorers, their parameters (extraction call shapes,
    profiles) and each judge prompt file with its SHA-256 (``None`` when it cannot be read)."""
    files: dict[str, dict[str, str | None]] = {}
    for role, path in sorted((judge_prompts or {}).items()):
        try:
            digest: str | None = file_sha256(Path(path))
        except OSError:
            digest = None
        files[role] = {"path": str(path), "sha256": digest}
    return {
        "scorers": list(scorers) if scorers is not None else None,
        "params": dict(params or {}),
        "judge_prompts": files,
    }


def models_entry(
    cells: Sequence[RunCell], judges: Mapping[str, str], entries: Mapping[str, ModelEntry]
) -> dict[str, Any]:
    """Each role's models (the grid ``cells``' agents, the ``judges``) and, per model, its
    server host, sampling and output mode (from the config's model ``entries``)."""
    roles: dict[str, set[str]] = {}
    for cell in cells:
        for role, ref in cell.models.items():
            roles.setdefault(role, set()).add(ref)
    agents = sorted({ref for refs in roles.values() for ref in refs})
    refs = sorted({*agents, *judges.values()})
    return {
        "agents": agents,
        "judges": dict(judges),
        "roles": {role: sorted(refs) for role, refs in sorted(roles.items())},
        "entries": {ref: describe_model(ref, entries.get(ref)) for ref in refs},
    }


def prompt_changes(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]) -> list[str]:
    """Run keys whose prompt hashes differ between two manifests' cells."""
    old = {c.get("run_key"): c.get("prompt_hashes") for c in before}
    return sorted(
        str(c["run_key"])
        for c in after
        if c.get("run_key") in old and old[c.get("run_key")] != c.get("prompt_hashes")
    )


def _dataset_entry(dataset: LoadedDataset) -> dict[str, Any]:
    entry = describe(dataset)
    entry["samples"] = len(entry.pop("sample_ids"))
    entry["corpus_docs"] = len(entry.get("corpus_docs") or [])
    return entry


def update_manifest(
    manifest: dict[str, Any], job: RunJob, retriever_errors: dict[str, str]
) -> dict[str, Any]:
    """Add the documents and retriever manifests once ingest and index have run."""
    manifest["documents"] = [
        {
            "path": str(path),
            "id": doc.id,
            "sha256": doc.sha256,
            "pages": doc.num_pages,
            "ocr_pages": len(doc.ocr_pages),
        }
        for path, doc in sorted(job.documents.items())
    ]
    retrievers = dict(manifest.get("retrievers") or {})
    for alias, retriever in job.retrievers.items():
        try:
            described = dict(retriever.manifest())
        except Exception as exc:
            described = {"error": f"manifest() failed: {exc}"}
        retrievers[alias] = {
            "type": retriever_type(job.config.retrievers, alias),
            "params": job.config.retrievers[alias].params,
            "manifest": described,
        }
    for alias, message in retriever_errors.items():
        retrievers[alias] = {"type": retriever_type(job.config.retrievers, alias), "error": message}
    manifest["retrievers"] = retrievers
    for entry, dataset in zip(manifest["datasets"], job.datasets.values(), strict=False):
        entry["input_errors"] = dict(dataset.bad)
    return manifest


def _read(run_dir: RunDir) -> dict[str, Any]:
    try:
        return run_dir.manifest()
    except RunDirError as exc:
        raise RunDirError(f"unreadable manifest: {exc}") from exc
