"""The samples of a run: loaded once, checked, frozen into the run directory, reloaded on resume.

Preflight loads every dataset of the config (:func:`load_checked`) before the run folder
exists: a dataset that can give the run nothing (an empty file, every row dropped by the
loader, ids that match nothing, no sample with usable PDFs) is a problem listed under its
config key. The runner then writes those same samples to ``samples.jsonl`` in the generic
format (so ``scanrag score`` reads them) and which dataset each came from to
``datasets.json``. A resume reads those two files back instead of the dataset sources, so it
runs exactly the samples the run started with. A synthetic dataset is generated and read by
the loader registered as ``synthetic``; the kernel never imports the generator.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanrag.config import DatasetSpec, SyntheticSpec
from scanrag.hashing import stable_hash
from scanrag.registry import LOADERS, RegistryError, UnknownNameError
from scanrag.rundir import RunDir
from scanrag.runner.components import LoadedDataset, SetupError
from scanrag.schemas import Sample

if TYPE_CHECKING:
    from scanrag.datasets import Dataset, LoadReport

# --------------------------------------------------------------------------- loading

SYNTHETIC_LOADER = "synthetic"


def synthetic_dir(cache_dir: Path, spec: SyntheticSpec) -> Path:
    key = stable_hash({"seed": spec.seed, "docs": spec.docs, **spec.options}, length=10)
    return cache_dir / "synthetic" / f"seed{spec.seed}-docs{spec.docs}-{key}"


def synthetic_options(spec: SyntheticSpec) -> dict[str, Any]:
    """The generation parameters a ``synthetic:`` spec hands to the synthetic loader."""
    return {**spec.options, "seed": spec.seed, "n_docs": spec.docs}


def load_synthetic(cache_dir: Path, spec: SyntheticSpec) -> Dataset:
    """The corpus for ``spec`` (generated into the cache on first use), read by the loader
    registered as ``synthetic`` (the kernel never imports the generator itself)."""
    from scanrag.datasets import DatasetError

    folder = synthetic_dir(cache_dir, spec)
    try:
        loader = LOADERS.get(SYNTHETIC_LOADER)
        dataset: Dataset = loader(folder, None, validate=False, **synthetic_options(spec))
    except (UnknownNameError, RegistryError) as exc:
        raise SetupError(f"synthetic dataset: {exc}") from exc
    except (TypeError, ValueError, DatasetError) as exc:
        raise SetupError(f"synthetic dataset: {exc}") from exc
    return dataset


def _filter(samples: list[Sample], spec: DatasetSpec) -> list[Sample]:
    if spec.tasks is not None:
        tasks = set(spec.tasks)
        samples = [s for s in samples if s.task in tasks]
    if spec.ids is not None:
        wanted = set(spec.ids)
        samples = [s for s in samples if s.id in wanted]
    if spec.limit is not None:
        samples = samples[: spec.limit]
    return samples


def load_dataset_spec(spec: DatasetSpec, cache_dir: Path) -> LoadedDataset:
    """Load one dataset without dropping rows for PDF problems: those become input errors.

    A source that cannot be read raises :class:`SetupError`; a dataset that cannot give the
    run anything (no rows, every row dropped, ids that match nothing, no sample with its PDFs)
    comes back with its ``problems`` listed.
    """
    from scanrag.datasets import DatasetError, load_dataset, validate_against_pdfs

    allow_outside = spec.allow_outside_pdf_dir
    try:
        if spec.synthetic is not None:
            dataset, loader = load_synthetic(cache_dir, spec.synthetic), SYNTHETIC_LOADER
        else:
            assert spec.path is not None
            options = dict(spec.options)
            if allow_outside:
                options["allow_outside_pdf_dir"] = True
            loader = spec.loader
            dataset = load_dataset(loader, spec.path, spec.pdf_dir, validate=False, **options)
    except DatasetError as exc:
        raise SetupError(f"dataset {spec.name!r}: {exc}") from exc
    samples = _filter(dataset.samples, spec)
    _, dropped = validate_against_pdfs(samples, dataset.pdf_dir, allow_outside=allow_outside)
    loaded = LoadedDataset(
        name=str(spec.name),
        pdf_dir=Path(dataset.pdf_dir).resolve(),
        samples=samples,
        report=dataset.report.model_dump(mode="json"),
        source=str(dataset.source) if dataset.source else str(spec.path),
        loader=loader,
        bad={d.id: d.reason for d in dropped if d.id is not None},
        allow_outside=allow_outside,
        corpus=sorted({n for s in dataset.samples for n in (*s.doc_ids, *s.cited_doc_ids)}),
    )
    loaded.problems = dataset_problems(spec, dataset.report, dataset.samples, loaded)
    return loaded


def dataset_problems(
    spec: DatasetSpec, report: LoadReport, everything: Sequence[Sample], loaded: LoadedDataset
) -> list[tuple[str, str]]:
    """Why a loaded dataset gives the run nothing to do, as ``(key, message)`` pairs: no rows,
    every row dropped by the loader, ids that match no sample, nothing left after the filters,
    or no sample whose documents can be used."""
    if report.rows_read == 0:
        return [("path", f"{loaded.source} holds no rows (the file is empty or blank)")]
    if not everything:
        reasons = _first([f"row {d.row}: {d.reason}" for d in report.dropped], 2)
        return [
            (
                "loader",
                f"loader {loaded.loader!r} dropped every one of the {report.rows_read} rows "
                f"({reasons}); is it the right loader for {loaded.source}?",
            )
        ]
    problems = []
    if spec.ids is not None:
        known = {s.id for s in everything}
        missing = [i for i in spec.ids if i not in known]
        if missing:
            listed = ", ".join(repr(i) for i in missing[:5]) + (", ..." if len(missing) > 5 else "")
            problems.append(("ids", f"{len(missing)} of the ids match no sample: {listed}"))
    if not loaded.samples and not problems:
        key = "tasks" if spec.tasks is not None else "ids" if spec.ids is not None else ""
        problems.append((key, f"no sample left of {len(everything)} after the filters"))
    elif loaded.samples and all(s.id in loaded.bad for s in loaded.samples):
        reasons = _first(list(dict.fromkeys(loaded.bad.values())), 2)
        hint = ""
        if spec.pdf_dir is None and spec.synthetic is None:
            hint = (
                f"; pdf_dir is not set, so the PDFs were looked for in {loaded.pdf_dir} "
                "(the loader's default): set pdf_dir to the folder that holds them"
            )
        problems.append(
            ("pdf_dir", f"none of the {len(loaded.samples)} samples can run ({reasons}){hint}")
        )
    return problems


def _first(items: Sequence[str], n: int) -> str:
    return "; ".join(items[:n]) + ("; ..." if len(items) > n else "")


def unique_id_problems(
    datasets: Sequence[LoadedDataset], keys: Sequence[str] | None = None
) -> list[str]:
    """One line per sample id found in two datasets (ids must be unique across a run), under
    the later dataset's config key when ``keys`` are given."""
    owner: dict[str, str] = {}
    problems = []
    for position, dataset in enumerate(datasets):
        prefix = f"{keys[position]}: " if keys is not None else ""
        for sample in dataset.samples:
            if sample.id in owner and owner[sample.id] != dataset.name:
                problems.append(
                    f"{prefix}sample id {sample.id!r} appears in datasets "
                    f"{owner[sample.id]!r} and {dataset.name!r}; sample ids must be unique "
                    "across a run"
                )
            owner.setdefault(sample.id, dataset.name)
    return problems


# --------------------------------------------------------------------------- the run's copy


def load_checked(
    specs: Sequence[DatasetSpec], cache_dir: Path, only: Collection[int] | None = None
) -> tuple[list[LoadedDataset], list[str]]:
    """Load every dataset of the config's ``datasets`` section (or those at the positions
    ``only``) once; return them with the problems, each under its config key."""
    datasets, keys, problems = [], [], []
    for i, spec in enumerate(specs):
        if only is not None and i not in only:
            continue
        key = f"datasets.{i}"
        try:
            dataset = load_dataset_spec(spec, cache_dir)
        except SetupError as exc:
            problems.append(f"{key}: {exc}")
            continue
        datasets.append(dataset)
        keys.append(key)
        problems += [
            f"{key}.{sub}: {msg}" if sub else f"{key}: {msg}" for sub, msg in dataset.problems
        ]
    return datasets, problems + unique_id_problems(datasets, keys)


def freeze(datasets: Sequence[LoadedDataset], run_dir: RunDir) -> list[LoadedDataset]:
    """Write the run's samples and dataset index into ``run_dir``; returns ``datasets``."""
    run_dir.write_samples(s for d in datasets for s in d.samples)
    run_dir.write_json(RunDir.DATASETS, [describe(d) for d in datasets])
    return list(datasets)


def load_fresh(
    specs: Sequence[DatasetSpec], cache_dir: Path, run_dir: RunDir
) -> list[LoadedDataset]:
    """Load, check and freeze the datasets (preflight normally did the first two)."""
    datasets, problems = load_checked(specs, cache_dir)
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise SetupError(f"the run cannot start:\n{lines}")
    return freeze(datasets, run_dir)


def describe(dataset: LoadedDataset) -> dict[str, Any]:
    return {
        "name": dataset.name,
        "source": dataset.source,
        "loader": dataset.loader,
        "pdf_dir": str(dataset.pdf_dir),
        "allow_outside_pdf_dir": dataset.allow_outside,
        "report": dataset.report,
        "sample_ids": [s.id for s in dataset.samples],
        "input_errors": dict(dataset.bad),
        "corpus_docs": list(dataset.corpus or dataset.doc_names()),
    }


def load_line(dataset: LoadedDataset, examples: int = 3) -> str:
    """One log line per dataset: samples kept, rows the loader dropped and samples that will
    be input errors, with the first reasons (the full lists are in ``datasets.json``), and the
    loader's notes."""
    report = dataset.report or {}
    dropped = [f"row {d.get('row')}: {d.get('reason')}" for d in report.get("dropped", [])]
    bad = [f"{k}: {v}" for k, v in dataset.bad.items()]
    line = f"dataset {dataset.name}: {len(dataset.samples)} samples"
    if dropped:
        line += f", {len(dropped)} rows dropped ({_first(dropped, examples)})"
    if bad:
        line += f", {len(bad)} input errors ({_first(bad, examples)})"
    for note in report.get("notes", []):
        line += f"; {note}"
    return line


def reload(specs: Sequence[DatasetSpec], cache_dir: Path, run_dir: RunDir) -> list[LoadedDataset]:
    """The run's datasets from its own files (a fresh load if the first session died early);
    ``specs`` (the config's ``datasets``) find the corpora of synthetic ones in ``cache_dir``."""
    index_path = run_dir.file(RunDir.DATASETS)
    samples_path = run_dir.file(RunDir.SAMPLES)
    if not index_path.is_file() or not samples_path.is_file():
        return load_fresh(specs, cache_dir, run_dir)
    from scanrag.datasets import validate_against_pdfs

    entries = run_dir.datasets()
    by_id = {s.id: s for s in run_dir.samples()[0]}
    by_name = {spec.name: spec for spec in specs}
    datasets = []
    for entry in entries:
        pdf_dir = Path(entry["pdf_dir"])
        spec = by_name.get(entry["name"])
        if not pdf_dir.is_dir() and spec is not None and spec.synthetic is not None:
            pdf_dir = Path(load_synthetic(cache_dir, spec.synthetic).pdf_dir)
        missing = [i for i in entry["sample_ids"] if i not in by_id]
        if missing:
            raise SetupError(f"{samples_path} lacks samples {missing[:5]} of {entry['name']!r}")
        samples = [by_id[i] for i in entry["sample_ids"]]
        allow_outside = bool(entry.get("allow_outside_pdf_dir", False))
        _, dropped = validate_against_pdfs(samples, pdf_dir, allow_outside=allow_outside)
        datasets.append(
            LoadedDataset(
                name=entry["name"],
                pdf_dir=pdf_dir,
                samples=samples,
                report=entry.get("report") or {},
                source=entry.get("source"),
                loader=entry.get("loader"),
                bad={d.id: d.reason for d in dropped if d.id is not None},
                allow_outside=allow_outside,
                corpus=list(entry.get("corpus_docs") or []),
            )
        )
    return datasets
