"""Documents stay inside their dataset's PDF folder: ``../``, absolute paths and symlinks that
point outside are refused with the rule, unless the dataset opts in."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanrag.datasets import (
    Dataset,
    DocumentPathError,
    load_generic,
    resolve_document,
    validate_against_pdfs,
)
from scanrag.datasets.paths import RULE
from scanrag.schemas import Sample

MakePdf = Callable[[Path, int], Path]


@pytest.fixture
def layout(tmp_path: Path, pdf_factory: MakePdf) -> Path:
    """``data/pdfs`` with a.pdf, sub/b.pdf, a symlink out and a symlink in; ``outside/``."""
    pdfs = tmp_path / "data" / "pdfs"
    pdf_factory(pdfs / "a.pdf", 3)
    pdf_factory(pdfs / "sub" / "b.pdf", 2)
    pdf_factory(tmp_path / "outside" / "secret.pdf", 4)
    (pdfs / "escape.pdf").symlink_to(tmp_path / "outside" / "secret.pdf")
    (pdfs / "alias.pdf").symlink_to(pdfs / "a.pdf")
    (pdfs / "outdir").symlink_to(tmp_path / "outside", target_is_directory=True)
    return pdfs


@pytest.mark.parametrize("name", ["a.pdf", "sub/b.pdf", "sub/../a.pdf", "alias.pdf"])
def test_names_inside_the_folder_resolve(layout: Path, name: str) -> None:
    assert resolve_document(layout, name) == layout / name


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../../outside/secret.pdf", "outside the PDF folder"),
        ("escape.pdf", "outside the PDF folder"),  # a symlink pointing out
        ("outdir/secret.pdf", "outside the PDF folder"),  # a symlinked folder pointing out
        ("sub/../../../outside/secret.pdf", "outside the PDF folder"),
        ("/etc/passwd", "is an absolute path"),
        ("", "empty document name"),
    ],
)
def test_names_leaving_the_folder_are_refused(layout: Path, name: str, why: str) -> None:
    with pytest.raises(DocumentPathError, match=why) as info:
        resolve_document(layout, name)
    if name:
        assert RULE in str(info.value) and "allow_outside_pdf_dir" in str(info.value)


def test_the_opt_in_accepts_other_folders(layout: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.pdf"
    assert resolve_document(layout, str(secret), allow_outside=True) == secret
    escape = resolve_document(layout, "../../outside/secret.pdf", allow_outside=True)
    assert escape.resolve() == secret.resolve()
    dataset = Dataset(name="d", pdf_dir=layout, allow_outside_pdf_dir=True)
    assert dataset.pdf_path("escape.pdf") == layout / "escape.pdf"
    with pytest.raises(DocumentPathError):
        Dataset(name="d", pdf_dir=layout).pdf_path("escape.pdf")


def _row(ident: str, **fields: Any) -> dict[str, Any]:
    return {"id": ident, "doc": "a.pdf", "question": "What is it?", **fields}


def test_the_generic_loader_drops_rows_whose_documents_escape(layout: Path, tmp_path: Path) -> None:
    secret = str(tmp_path / "outside" / "secret.pdf")
    rows = [
        _row("ok"),
        _row("in-sub", doc="sub/b.pdf"),
        _row("dotdot", doc="../../outside/secret.pdf"),
        _row("absolute", doc=secret),
        _row("symlink", doc="escape.pdf"),
        _row("docs", docs=["a.pdf", "../../outside/secret.pdf"]),
        _row("cited", cited_docs=["../../outside/secret.pdf"]),
        _row("region", gold_regions=[{"page": 1, "bbox": [0, 0, 1, 1], "doc": "escape.pdf"}]),
    ]
    rows[5].pop("doc")
    path = tmp_path / "data" / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dataset = load_generic(path)
    assert dataset.pdf_dir == layout
    assert [s.id for s in dataset.samples] == ["ok", "in-sub"]
    reasons = {d.id: d.reason for d in dataset.report.dropped}
    assert set(reasons) == {"dotdot", "absolute", "symlink", "docs", "cited", "region"}
    assert all(RULE in reason for reason in reasons.values())
    assert "is an absolute path" in reasons["absolute"]
    opted = load_generic(path, allow_outside_pdf_dir=True)
    assert [s.id for s in opted.samples] == [r["id"] for r in rows]
    assert opted.allow_outside_pdf_dir


def test_validation_names_the_rule_once_per_document(layout: Path) -> None:
    samples = [Sample(id=f"s{i}", doc_ids=["escape.pdf"], question="q?") for i in range(3)]
    kept, dropped = validate_against_pdfs(samples, layout)
    assert kept == [] and len(dropped) == 3
    assert all("escape.pdf" in d.reason and RULE in d.reason for d in dropped)
    kept, _ = validate_against_pdfs(samples, layout, allow_outside=True)
    assert len(kept) == 3
