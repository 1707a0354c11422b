"""What every dataset loader shares: reading raw records, finding the source file and the PDF
folder, finishing a load (duplicate ids, field types, PDF validation, page counts) and page
sizes.

Each benchmark ships its own file layout (a JSON array, JSONL, one file per task); a loader (the
generic one here, the benchmark ones in the ``loaders`` package, or a plugin) turns its rows
into :class:`~scanrag.schemas.Sample` objects and hands them to :func:`finish_load`, so every
loader reports dropped rows, and resolves document paths, the same way.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scanrag.datasets.base import (
    Dataset,
    DatasetError,
    DroppedRow,
    LoadReport,
    describe_validation_error,
    page_count,
    unique_ids,
    validate_against_pdfs,
)
from scanrag.datasets.fields import normalize_metadata
from scanrag.datasets.paths import resolve_document
from scanrag.schemas import Sample

Record = tuple[int, dict[str, Any] | None, str | None]
# Answers that mark a question as unanswerable (any case), whatever the row's flag says.
NOT_ANSWERABLE = frozenset({"not answerable", "unanswerable"})


class RowError(ValueError):
    """One row cannot become a Sample; the message is the drop reason."""


def new_sample(**fields: Any) -> Sample:
    """A :class:`Sample` from ``fields``; a value the schema refuses raises :class:`RowError`
    with a short reason."""
    try:
        return Sample(**fields)
    except ValidationError as exc:
        raise RowError(describe_validation_error(exc)) from exc


# --------------------------------------------------------------------------- raw records


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path} is not UTF-8 text: {exc}") from exc
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc


def read_records(path: Path, *, arrays: bool = True) -> list[Record]:
    """``(row_index, record_or_None, reason_or_None)`` for a JSON array or a JSONL file.

    A JSON array gives one record per element (``row`` is the element's 0-based index); a
    JSONL file one per non-blank line (``row`` is the 0-based line index). Elements or lines
    that are not JSON objects come back with a reason instead of a record. A file that is
    neither (or a JSON array when ``arrays`` is false) raises :class:`DatasetError`.
    """
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("[") and not arrays:
        raise DatasetError(f"{path} holds a JSON array; this format is one JSON object a line")
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path} starts like a JSON array but is not one: {exc}") from exc
        return [
            (i, item, None) if isinstance(item, dict) else (i, None, f"item {i} is not an object")
            for i, item in enumerate(data)
        ]
    records: list[Record] = []
    for index, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            records.append((index, None, f"line {index + 1} is not valid JSON: {exc.msg}"))
            continue
        if isinstance(row, dict):
            records.append((index, row, None))
        else:
            records.append((index, None, f"line {index + 1} is not a JSON object"))
    if records and all(r is None for _, r, _ in records):
        expected = "JSON or JSONL" if arrays else "a JSONL file"
        raise DatasetError(f"no line of {path} is a JSON object; is it {expected}?")
    return records


def resolve_file(path: str | os.PathLike[str], names: Sequence[str]) -> Path:
    """``path`` itself, or the first of ``names`` inside it when it is a folder."""
    source = Path(path)
    if source.is_dir():
        for name in names:
            if (source / name).is_file():
                return source / name
        raise DatasetError(f"{source} holds none of {', '.join(names)}")
    if not source.is_file():
        raise DatasetError(f"dataset file not found: {source}")
    return source


def default_pdf_dir(source: Path) -> Path:
    """``pdfs/`` next to the file, else ``pdfs/`` one level up (a repo's ``data/`` folder
    beside its ``pdfs/``), else the file's own folder."""
    for candidate in (source.parent / "pdfs", source.parent.parent / "pdfs"):
        if candidate.is_dir():
            return candidate
    return source.parent


def as_text(value: Any) -> str:
    """A row value as text: strings as they are, lists and objects as JSON, others ``str``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def maybe_json(value: Any) -> Any:
    """Decode a string that holds a JSON list or object; anything else is returned as is."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def file_name(value: str, suffix: str = ".pdf") -> str:
    """The base name of a path-like document reference, with ``suffix`` added if missing."""
    name = Path(value.strip()).name
    return name if not suffix or name.lower().endswith(suffix) else name + suffix


# --------------------------------------------------------------------------- finishing


@dataclass
class LoadState:
    """Rows parsed so far and the report being filled."""

    report: LoadReport = field(default_factory=LoadReport)
    parsed: list[tuple[int, Sample]] = field(default_factory=list)

    def drop(self, row: int | None, ident: Any, reason: str) -> None:
        self.report.dropped.append(
            DroppedRow(row=row, id=None if ident is None else as_text(ident), reason=reason)
        )

    def read(self, records: Iterable[Record]) -> Iterable[tuple[int, dict[str, Any]]]:
        """Count every record; drop unreadable ones; yield the readable ones."""
        for index, record, reason in records:
            self.report.rows_read += 1
            if record is None:
                self.drop(index, None, reason or "unreadable record")
                continue
            yield index, record


def finish_load(
    state: LoadState,
    *,
    name: str,
    source: Path,
    pdf_dir: Path,
    loader: str,
    validate: bool,
    page_counts: bool = True,
    allow_outside: bool = False,
) -> Dataset:
    """Drop duplicate ids, give the breakdown fields one type each, validate against the PDFs
    (optional) and, with ``page_counts``, record each kept sample's ``num_pages``."""
    parsed, duplicates = unique_ids(state.parsed)
    report = state.report
    report.dropped.extend(duplicates)
    samples = [s for _, s in parsed]
    for sample in samples:
        normalize_metadata(sample.metadata)
    if validate:
        samples, bad = validate_against_pdfs(
            samples, pdf_dir, rows=[r for r, _ in parsed], allow_outside=allow_outside
        )
        report.dropped.extend(bad)
        for sample in samples if page_counts else ():  # the layout scorer reads num_pages
            path = resolve_document(pdf_dir, sample.primary_doc, allow_outside=allow_outside)
            sample.metadata.setdefault("num_pages", page_count(path))
    report.dropped.sort(key=lambda d: d.row if d.row is not None else -1)
    report.rows_kept = len(samples)
    return Dataset(
        name=name,
        samples=samples,
        pdf_dir=pdf_dir,
        report=report,
        source=source,
        loader=loader,
        allow_outside_pdf_dir=allow_outside,
    )


# --------------------------------------------------------------------------- page sizes


def page_sizes(path: str | Path) -> list[tuple[float, float]]:
    """``(width, height)`` in PDF points of every page as displayed (rotation applied).

    Raises :class:`DatasetError` when the file is missing or cannot be opened.
    """
    resolved = Path(path).resolve()
    try:
        stat = resolved.stat()
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return list(_cached_sizes(str(resolved), stat.st_size, stat.st_mtime_ns))


@functools.lru_cache(maxsize=256)
def _cached_sizes(path: str, size: int, mtime_ns: int) -> tuple[tuple[float, float], ...]:
    import pymupdf  # imported here: keeps `import scanrag.datasets` light

    try:
        with pymupdf.open(path, filetype="pdf") as doc:
            if doc.needs_pass:
                raise DatasetError(f"{path} is encrypted")
            return tuple((float(p.rect.width), float(p.rect.height)) for p in doc)
    except DatasetError:
        raise
    except Exception as exc:  # MuPDF raises several unrelated types for broken files
        raise DatasetError(f"cannot open {path} as a PDF: {exc}") from exc
