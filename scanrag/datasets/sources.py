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
import re
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
from scanrag.datasets.rows import (
    MAX_DEPTH,
    TooDeep,
    array_elements,
    loads,
    row_problem,
    suspects,
)
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


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc


# JSONL lines end at "\n" (or "\r\n", "\r"), never at the other separators str.splitlines
# knows: a JSON string may hold U+2028 or "\x1c" as they are (ensure_ascii=False writes them).
_LINE_END = re.compile(r"\r\n?|\n")
_LINE_END_BYTES = re.compile(rb"\r\n?|\n")


def read_records(path: Path, *, arrays: bool = True) -> list[Record]:
    """``(row_index, record_or_None, reason_or_None)`` for a JSON array or a JSONL file.

    A JSON array gives one record per element (``row`` is the element's 0-based index); a
    JSONL file one per non-blank line (``row`` is the 0-based line index). Elements or lines
    that are not JSON objects, lines that are not UTF-8, and records with a defect of their
    own (:func:`~scanrag.datasets.rows.row_problem`: nesting past its bound, text UTF-8 cannot
    store) come back with a reason instead of a record. A file that is neither (or a JSON
    array when ``arrays`` is false) raises :class:`DatasetError`.
    """
    data = _read_bytes(path)
    if data.lstrip()[:1] == b"[":
        if not arrays:
            raise DatasetError(f"{path} holds a JSON array; this format is one JSON object a line")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{path} is not UTF-8 text: {exc}") from exc
        items = array_items(path, text)
        surrogates, _ = suspects(text)
        return [_record(i, item, f"item {i}", text=surrogates) for i, item in enumerate(items)]
    records: list[Record] = []
    for index, line in enumerate(_lines(data)):
        if line is None:
            records.append((index, None, f"line {index + 1} is not UTF-8 text"))
        elif line.strip():
            records.append(_line_record(index, line))
    if records and all(r is None for _, r, _ in records):
        if all(reason and reason.endswith("is not UTF-8 text") for _, _, reason in records):
            raise DatasetError(f"{path} is not UTF-8 text")
        expected = "JSON or JSONL" if arrays else "a JSONL file"
        raise DatasetError(f"no line of {path} is a JSON object; is it {expected}?")
    return records


def _lines(data: bytes) -> list[str | None]:
    """The lines of a JSONL file; ``None`` for one that is not UTF-8 (the others keep their
    numbers)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return list(_LINE_END.split(text) if "\r" in text else text.split("\n"))
    lines: list[str | None] = []
    for raw in _LINE_END_BYTES.split(data):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(None)
    return lines


def _line_record(index: int, line: str) -> Record:
    where = f"line {index + 1}"
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        return index, None, f"{where} is not valid JSON: {exc.msg}"
    except RecursionError:
        return _record(index, TooDeep(), where, text=False)
    surrogates, deep = suspects(line)
    return _record(index, value, where, text=surrogates, walk=surrogates or deep)


def _record(index: int, value: Any, where: str, *, text: bool, walk: bool = True) -> Record:
    """A parsed element or line as a record, or the reason it cannot be one; ``text`` and
    ``walk``: what :func:`~scanrag.datasets.rows.suspects` says the row may hold."""
    if isinstance(value, TooDeep):
        return index, None, f"{where} nests deeper than {MAX_DEPTH} levels (too deep to read)"
    if not isinstance(value, dict):
        kind = "an object" if where.startswith("item") else "a JSON object"
        return index, None, f"{where} is not {kind}"
    problem = row_problem(value, text=text) if walk else None
    if problem is None:
        return index, value, None
    ident = value.get("id")
    if isinstance(ident, int | str) and not isinstance(ident, bool) and not row_problem(ident):
        where += f" (id {ident!r})"
    return index, None, f"{where}: {problem}"


def array_items(path: Path, text: str) -> list[Any]:
    """The elements of the JSON array ``text`` (one too deep to read comes back as a
    :class:`~scanrag.datasets.rows.TooDeep`); :class:`DatasetError` for a text that is no
    JSON array."""
    try:
        return array_elements(text)
    except ValueError as exc:
        raise DatasetError(f"{path} starts like a JSON array but is not one: {exc}") from exc


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
            return loads(value)
        except ValueError:  # JSONDecodeError included
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
