"""Dataset containers, load reports, PDF-backed validation and the loader registry.

Every benchmark format ends up as a :class:`Dataset`: a list of :class:`~scanrag.schemas.Sample`
objects, the folder holding their PDFs, and a :class:`LoadReport` saying how many rows were
read, how many were kept, and why each dropped row was dropped. A single bad row never aborts a
load; a missing or unreadable source file raises :class:`DatasetError`.

Loaders register in :data:`scanrag.registry.LOADERS` (entry-point group ``scanrag.loaders``).
A loader is a callable with the signature ``loader(path, pdf_dir=None, *, validate=True,
**options) -> Dataset``; ``load_dataset("generic", path)`` looks one up by name and calls it.
Every document path goes through :func:`scanrag.datasets.paths.resolve_document`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from scanrag.datasets.errors import DatasetError, DocumentPathError
from scanrag.datasets.paths import resolve_document
from scanrag.datasets.rows import row_problem, suspects, text_problem
from scanrag.registry import LOADERS
from scanrag.schemas import Sample


class DroppedRow(BaseModel):
    """A source row a loader left out, and why.

    ``row`` is the 0-based position of the row in its source (for JSONL files, the 0-based line
    index, blank lines included, so the line number is ``row + 1``).
    """

    row: int | None = Field(default=None, ge=0)
    id: str | None = None
    reason: str


class LoadReport(BaseModel):
    """How a load went: rows read, rows kept, each dropped row with its reason, and notes a
    loader adds about the whole file (e.g. DocScope's mean box area next to the paper's)."""

    rows_read: int = Field(default=0, ge=0)
    rows_kept: int = Field(default=0, ge=0)
    dropped: list[DroppedRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        """One line for logs and the CLI, e.g. ``read 101, kept 99, dropped 2``."""
        return f"read {self.rows_read}, kept {self.rows_kept}, dropped {len(self.dropped)}"


class Dataset(BaseModel):
    """Samples plus the folder their documents live in."""

    name: str
    samples: list[Sample] = Field(default_factory=list)
    pdf_dir: Path
    report: LoadReport = Field(default_factory=LoadReport)
    source: Path | None = Field(default=None, description="File or folder the samples came from.")
    loader: str | None = Field(default=None, description="Registry name of the loader used.")
    allow_outside_pdf_dir: bool = Field(
        default=False, description="Documents may lie outside pdf_dir (explicit opt-in)."
    )

    def __len__(self) -> int:
        return len(self.samples)

    def doc_ids(self) -> list[str]:
        """Every document any sample refers to (primary and cited), sorted."""
        return sorted({d for s in self.samples for d in (*s.doc_ids, *s.cited_doc_ids)})

    def pdf_path(self, doc_id: str) -> Path:
        """Where the PDF for ``doc_id`` (a file name relative to ``pdf_dir``) lives; raises
        :class:`DocumentPathError` for a name that leaves ``pdf_dir``."""
        return resolve_document(self.pdf_dir, doc_id, allow_outside=self.allow_outside_pdf_dir)

    def by_id(self, sample_id: str) -> Sample:
        for sample in self.samples:
            if sample.id == sample_id:
                return sample
        raise KeyError(f"dataset {self.name!r} has no sample {sample_id!r}")


# --------------------------------------------------------------------------- page counting


def page_count(path: str | Path) -> int:
    """Number of pages of the PDF at ``path``; cached per file (path, size, mtime).

    Raises :class:`DatasetError` when the file is missing or cannot be opened as a PDF.
    """
    resolved = Path(path).resolve()
    try:
        stat = resolved.stat()
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return _cached_page_count(str(resolved), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _cached_page_count(path: str, size: int, mtime_ns: int) -> int:
    import pymupdf  # imported here: keeps `import scanrag.datasets` light

    try:
        with pymupdf.open(path, filetype="pdf") as doc:
            if doc.needs_pass:
                raise DatasetError(f"{path} is encrypted")
            return int(doc.page_count)
    except DatasetError:
        raise
    except Exception as exc:  # MuPDF raises several unrelated types for broken files
        raise DatasetError(f"cannot open {path} as a PDF: {exc}") from exc


# --------------------------------------------------------------------------- validation


def _page_problems(sample: Sample, counts: dict[str, int]) -> list[str]:
    """Every gold page of ``sample`` that lies outside its document, as readable messages."""
    primary = sample.primary_doc
    problems: list[str] = []

    def check(what: str, page: int | None, doc: str | None = None) -> None:
        name = doc or primary
        total = counts.get(name)
        if page is None or total is None:
            return
        if not 1 <= page <= total:
            problems.append(f"{what} page {page} outside 1..{total} of {name!r}")

    for page in sample.gold_pages:
        check("gold", page)
    for i, region in enumerate(sample.gold_regions):
        check(f"gold region {i}", region.page, region.doc_id)
    for i, fact in enumerate(sample.gold_facts):
        check(f"gold fact {i}", fact.page, fact.doc_id)
    for i, pair in enumerate(sample.gold_chain):
        check(f"gold chain item {i}", pair.page)
    for i, error in enumerate(sample.gold_errors):
        for page in error.pages:
            check(f"gold error {i}", page)
        for j, loc in enumerate(error.locations):
            check(f"gold error {i} location {j}", loc.page, loc.doc_id)
    return problems


def _referenced_docs(sample: Sample) -> list[str]:
    docs = [*sample.doc_ids, *sample.cited_doc_ids]
    docs += [r.doc_id for r in sample.gold_regions if r.doc_id]
    docs += [f.doc_id for f in sample.gold_facts if f.doc_id]
    docs += [loc.doc_id for e in sample.gold_errors for loc in e.locations if loc.doc_id]
    return list(dict.fromkeys(docs))


def validate_against_pdfs(
    samples: Sequence[Sample],
    pdf_dir: str | Path,
    *,
    rows: Sequence[int | None] | None = None,
    allow_outside: bool = False,
) -> tuple[list[Sample], list[DroppedRow]]:
    """Keep the samples whose documents exist and whose gold pages fit inside them.

    Checks, for every sample: each referenced PDF (primary, cited, and any ``doc_id`` on a gold
    region/fact/error location) resolves inside ``pdf_dir`` (unless ``allow_outside``), exists
    and opens; gold pages, gold region pages, gold fact pages, evidence-chain pages and gold
    error pages lie within ``1..page_count``.
    PDFs are opened only to count their pages, once per file. ``rows`` gives each sample's
    source row index for the :class:`DroppedRow` records (default: its position).
    """
    folder = Path(pdf_dir)
    if rows is not None and len(rows) != len(samples):
        raise ValueError(f"rows has {len(rows)} entries for {len(samples)} samples")
    counts: dict[str, int] = {}
    failures: dict[str, str] = {}
    kept: list[Sample] = []
    dropped: list[DroppedRow] = []
    for position, sample in enumerate(samples):
        row = rows[position] if rows is not None else position
        reasons: list[str] = []
        for doc in _referenced_docs(sample):
            if doc not in counts and doc not in failures:
                problem = _document_problem(folder, doc, allow_outside, counts)
                if problem is not None:
                    failures[doc] = problem
            if doc in failures:
                reasons.append(failures[doc])
        if not reasons:
            reasons = _page_problems(sample, counts)
        if reasons:
            dropped.append(DroppedRow(row=row, id=sample.id, reason="; ".join(reasons)))
        else:
            kept.append(sample)
    return kept, dropped


def _document_problem(
    folder: Path, doc: str, allow_outside: bool, counts: dict[str, int]
) -> str | None:
    """Why ``doc`` cannot be used (``None`` if it can); records its page count in ``counts``."""
    try:
        path = resolve_document(folder, doc, allow_outside=allow_outside)
    except DocumentPathError as exc:
        return str(exc)
    try:
        found = path.is_file()
    except OSError as exc:  # a name too long for the folder it is in
        return f"cannot look for PDF {doc!r} in {folder}: {exc.strerror or exc}"
    if not found:
        return f"missing PDF {doc!r} in {folder}"
    try:
        counts[doc] = page_count(path)
    except DatasetError as exc:
        return str(exc)
    return f"PDF {doc!r} has no pages" if counts[doc] == 0 else None


def describe_validation_error(exc: ValidationError) -> str:
    """Short, readable text for a pydantic error: ``field.path: message`` for each problem."""
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ()))
        msg = str(err.get("msg", "invalid"))
        parts.append(f"{loc}: {msg}" if loc else msg)
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


# --------------------------------------------------------------------------- registry


def load_dataset(
    loader: str,
    path: str | os.PathLike[str],
    pdf_dir: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Dataset:
    """Load ``path`` with the loader registered as ``loader`` (e.g. ``"generic"``) in
    :data:`scanrag.registry.LOADERS` (built-ins and plugins come from ``scanrag.loaders``
    entry points)."""
    dataset: Dataset = LOADERS.get(loader)(path, pdf_dir, **options)
    if dataset.loader is None:
        dataset.loader = loader
    drop_unstorable(dataset)
    return dataset


def drop_unstorable(dataset: Dataset) -> None:
    """Move the samples a run could not store (text UTF-8 cannot hold, nesting past the row
    bound: :func:`~scanrag.datasets.rows.row_problem`) from ``dataset`` to its dropped rows.
    Rows read from JSON never get this far (``read_records`` drops them); this catches the
    samples of loaders that read other formats (a plugin's CSV)."""
    kept = []
    for sample in dataset.samples:
        problem = _sample_problem(sample)
        if problem is None:
            kept.append(sample)
            continue
        ident = sample.id if text_problem(sample.id) is None else None
        dataset.report.dropped.append(DroppedRow(id=ident, reason=f"sample {problem}"))
    if len(kept) != len(dataset.samples):
        dataset.samples = kept
        dataset.report.rows_kept = len(kept)


def _sample_problem(sample: Sample) -> str | None:
    """:func:`~scanrag.datasets.rows.row_problem` of ``sample``, walked only where its JSON
    (which pydantic refuses to write for text UTF-8 cannot store) says it must be."""
    try:
        text = sample.model_dump_json()
    except (ValueError, RecursionError):  # PydanticSerializationError is a ValueError
        return row_problem(sample.model_dump())
    _, deep = suspects(text)
    return row_problem(sample.model_dump(), text=False) if deep else None


def unique_ids(
    samples: Iterable[tuple[int, Sample]],
) -> tuple[list[tuple[int, Sample]], list[DroppedRow]]:
    """Keep the first sample of each id; later duplicates become dropped rows."""
    seen: set[str] = set()
    kept: list[tuple[int, Sample]] = []
    dropped: list[DroppedRow] = []
    for row, sample in samples:
        if sample.id in seen:
            dropped.append(DroppedRow(row=row, id=sample.id, reason="duplicate id"))
            continue
        seen.add(sample.id)
        kept.append((row, sample))
    return kept, dropped
