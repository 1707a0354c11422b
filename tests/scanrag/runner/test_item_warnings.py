"""A PDF that MuPDF repairs when opening it still runs, and every item over it says so."""

from __future__ import annotations

from pathlib import Path

import runner_fakes as rf

from scanrag.config import config_from_dict
from scanrag.documents.ingest import REPAIRED_WARNING
from scanrag.rundir import JsonlLog
from scanrag.runner import start_run
from scanrag.runner.items import document_warnings
from scanrag.schemas import Document, Page, Trajectory


def _break_xref(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b"xref")])  # cross-reference table lost


def test_items_over_a_repaired_pdf_carry_the_warning(tmp_path: Path) -> None:
    rf.make_dataset(tmp_path)
    _break_xref(tmp_path / "pdfs" / "doc1.pdf")
    config = config_from_dict(rf.make_config(tmp_path))
    result = start_run(config, llm=rf.MODEL, log=None)
    assert result.complete
    trajectories = [
        Trajectory.model_validate(r) for r in JsonlLog(result.run_dir / "trajectories.jsonl").rows()
    ]
    assert {t.status for t in trajectories} == {"ok"}  # repaired, so still read
    warned = {t.sample_id for t in trajectories if t.metadata.get("warnings")}
    assert warned == {f"q1-{p}" for p in range(1, 5)}
    one = next(t for t in trajectories if t.sample_id == "q1-1")
    assert one.metadata["warnings"] == [f"doc1.pdf: {REPAIRED_WARNING}"]


def _document(name: str, **metadata: str) -> Document:
    page = Page(number=1, text="x", width=100, height=100)
    return Document(
        id=name, name=name, sha256="0" * 64, num_pages=1, pages=[page], metadata=metadata
    )


def test_document_warnings_cover_documents_cached_before_warnings_were_recorded() -> None:
    documents = {
        "b.pdf": _document("b.pdf", repaired="true"),  # older cache: flag only
        "a.pdf": _document("a.pdf", repaired="true", warning="damaged"),
        "c.pdf": _document("c.pdf", title="fine"),
    }
    assert document_warnings(documents) == [
        "a.pdf: damaged",
        "b.pdf: repaired by MuPDF when opened",
    ]
