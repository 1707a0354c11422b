"""A run never opens a document outside its dataset's PDF folder: such samples end as input
errors naming the rule, the outside PDF is never ingested and never reaches a prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pymupdf
import runner_fakes as rf

from scanrag.config import config_from_dict
from scanrag.datasets.paths import RULE
from scanrag.rundir import JsonlLog
from scanrag.runner import start_run
from scanrag.runner.components import LoadedDataset, documents_for
from scanrag.schemas import Document, Sample


def _secret_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 100), "The secret value of item D0P1 is LEAKED today.")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    doc.close()
    return path


def _escaping_dataset(root: Path) -> Path:
    """The fake dataset plus rows whose documents leave ``pdfs/`` in every way."""
    rf.make_dataset(root, docs=1, pages=2)
    secret = _secret_pdf(root / "outside" / "secret.pdf")
    (root / "pdfs" / "escape.pdf").symlink_to(secret)
    question = "What is the secret value of item D0P1?"
    escaping = [
        {"id": "dotdot", "doc": "../outside/secret.pdf", "question": question},
        {"id": "absolute", "doc": str(secret), "question": question},
        {"id": "symlink", "doc": "escape.pdf", "question": question},
        {
            "id": "cited",
            "doc": "doc0.pdf",
            "cited_docs": ["../outside/secret.pdf"],
            "question": question,
        },
    ]
    path = root / "questions.jsonl"
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(row) + "\n" for row in escaping)
    return path


def _run(root: Path, **dataset: Any):
    config = rf.make_config(root, strategies=[{"name": "fake_reader", "params": {"k": 2}}])
    config["datasets"][0].update(dataset)
    return start_run(config_from_dict(config), llm=rf.MODEL, log=None)


def test_escaping_documents_are_input_errors_and_never_read(tmp_path: Path) -> None:
    _escaping_dataset(tmp_path)
    result = _run(tmp_path)
    rows = {r["sample_id"]: r for r in JsonlLog(result.run_dir / "trajectories.jsonl").rows()}
    assert {i for i, r in rows.items() if r["status"] == "ok"} == {"q0-1", "q0-2"}
    for ident in ("dotdot", "absolute", "symlink", "cited"):
        assert rows[ident]["status"] == "input_error"
        assert RULE in " ".join(rows[ident]["errors"])
    assert all("LEAKED" not in json.dumps(r) for r in rows.values())
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert [Path(d["path"]).name for d in manifest["documents"]] == ["doc0.pdf"]  # only it
    datasets = json.loads((result.run_dir / "datasets.json").read_text())
    assert set(datasets[0]["input_errors"]) == {"dotdot", "absolute", "symlink", "cited"}


def test_a_dataset_may_opt_in_to_other_folders(tmp_path: Path) -> None:
    _escaping_dataset(tmp_path)
    result = _run(tmp_path, allow_outside_pdf_dir=True)
    rows = {r["sample_id"]: r for r in JsonlLog(result.run_dir / "trajectories.jsonl").rows()}
    assert all(r["status"] == "ok" for r in rows.values())
    assert rows["dotdot"]["answer"] == "LEAKED"  # read, because the config asked for it
    datasets = json.loads((result.run_dir / "datasets.json").read_text())
    assert datasets[0]["allow_outside_pdf_dir"] is True


def test_documents_for_resolves_names_inside_the_folder(tmp_path: Path) -> None:
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    inside = Document(id="a", name="a.pdf", path=str(pdfs / "a.pdf"), sha256="0" * 64, num_pages=1)
    outside = Document(
        id="b", name="s.pdf", path=str(tmp_path / "s.pdf"), sha256="1" * 64, num_pages=1
    )
    documents = {pdfs / "a.pdf": inside, pdfs / ".." / "s.pdf": outside}
    sample = Sample(id="x", doc_ids=["a.pdf"], cited_doc_ids=["../s.pdf"], question="q?")
    strict = LoadedDataset(name="d", pdf_dir=pdfs, samples=[sample])
    assert documents_for(strict, sample, documents) == {"a.pdf": inside}
    lenient = LoadedDataset(name="d", pdf_dir=pdfs, samples=[sample], allow_outside=True)
    assert documents_for(lenient, sample, documents) == {"a.pdf": inside, "../s.pdf": outside}
