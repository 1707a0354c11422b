"""``generate_corpus``: write a seeded synthetic dataset directory.

Layout of ``out_dir``::

    pdfs/docNN_<name>.pdf   the documents
    samples.jsonl           questions in the generic dataset format (scanrag.datasets.generic)
    facts.jsonl             every planted value: page, normalized box, element, fact sentence
    manifest.json           seed, parameters, generator version, per-file sha256 and page labels

The same seed and parameters give byte-identical PDFs and identical samples (fixed PDF dates,
no random file ids, every random choice drawn from generators seeded from ``seed``).
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from typing import Any

from scanrag.datasets.generic_write import write_generic
from scanrag.hashing import file_sha256
from scanrag.synth.builder import DocumentBuilder
from scanrag.synth.finish import finish_document
from scanrag.synth.model import DocResult, PlantedFact, normalize
from scanrag.synth.questions import write_questions
from scanrag.synth.scan import plan_errors
from scanrag.synth.vocab import TOPIC_BY_KIND, TOPICS, NameForge

GENERATOR_VERSION = "1.0"
MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"
FACTS = "facts.jsonl"
PDF_DIR = "pdfs"
MIN_PAGES, MAX_PAGES = 10, 1000

DEFAULTS: dict[str, int] = {
    "n_docs": 4,
    "min_pages": 20,
    "max_pages": 40,
    "questions_per_doc": 6,
    "scan_docs": 1,
}


def check_params(
    n_docs: int, min_pages: int, max_pages: int, questions_per_doc: int, scan_docs: int
) -> None:
    """Raise ``ValueError`` naming the first out-of-range parameter."""
    if n_docs < 1:
        raise ValueError(f"n_docs must be at least 1, got {n_docs}")
    if not MIN_PAGES <= min_pages <= max_pages <= MAX_PAGES:
        raise ValueError(
            f"need {MIN_PAGES} <= min_pages <= max_pages <= {MAX_PAGES}, "
            f"got min_pages={min_pages}, max_pages={max_pages}"
        )
    if questions_per_doc < 0:
        raise ValueError(f"questions_per_doc must be >= 0, got {questions_per_doc}")
    if not 0 <= scan_docs <= n_docs:
        raise ValueError(f"scan_docs must lie in 0..n_docs ({n_docs}), got {scan_docs}")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def build_document(
    index: int, seed: int, forge: NameForge, topic_kind: str, n_pages: int, scan: bool
) -> DocResult:
    """Lay out, draw and serialize document ``index`` of the corpus."""
    rng = random.Random(f"scanrag-synth:{seed}:doc:{index}")
    builder = DocumentBuilder(
        index=index,
        rng=rng,
        forge=forge,
        topic=TOPIC_BY_KIND[topic_kind],
        n_pages=n_pages,
        set_labels=index % 2 == 0,
        file_name="",
    )
    builder.file_name = f"doc{index:02d}_{_slug(builder.main)}.pdf"
    scheduled, finalize = plan_errors(builder) if scan else ([], None)
    builder.build_body(scheduled)
    result = finish_document(builder)
    if finalize is not None:
        result.errors = finalize()
    return result


def generate_corpus(
    out_dir: str | os.PathLike[str],
    *,
    seed: int = 0,
    n_docs: int = DEFAULTS["n_docs"],
    min_pages: int = DEFAULTS["min_pages"],
    max_pages: int = DEFAULTS["max_pages"],
    questions_per_doc: int = DEFAULTS["questions_per_doc"],
    scan_docs: int = DEFAULTS["scan_docs"],
) -> Path:
    """Generate ``n_docs`` PDFs (``min_pages``..``max_pages`` pages each) with
    ``questions_per_doc`` QA samples each; the last ``scan_docs`` documents are research
    reports with two planted inconsistencies, each giving one extra ``error_detection`` sample.
    Returns ``out_dir``."""
    check_params(n_docs, min_pages, max_pages, questions_per_doc, scan_docs)
    out = Path(out_dir)
    pdf_dir = out / PDF_DIR
    pdf_dir.mkdir(parents=True, exist_ok=True)
    master = random.Random(f"scanrag-synth:{seed}")
    forge = NameForge(random.Random(f"scanrag-synth:{seed}:names"))
    kinds = [t.kind for t in TOPICS]
    master.shuffle(kinds)
    n_regular = n_docs - scan_docs
    samples = []
    documents: list[dict[str, Any]] = []
    facts: list[dict[str, Any]] = []
    for index in range(n_docs):
        scan = index >= n_regular
        kind = "study" if scan else kinds[index % len(kinds)]
        n_pages = master.randint(min_pages, max_pages)
        doc = build_document(index, seed, forge, kind, n_pages, scan)
        path = pdf_dir / doc.file_name
        path.write_bytes(doc.pdf)
        qrng = random.Random(f"scanrag-synth:{seed}:questions:{index}")
        prefix = f"synth-s{seed}-d{index:02d}"
        samples += write_questions(doc, qrng, forge, questions_per_doc, prefix)
        documents.append(_doc_entry(doc, path, scan))
        facts += [_fact_row(doc, fact) for fact in doc.facts]
    _remove_stale(out, {d["file"] for d in documents})
    samples_path = write_generic(samples, out / SAMPLES)
    facts_path = _write_jsonl(facts, out / FACTS)
    manifest = {
        "generator": "synth",
        "version": GENERATOR_VERSION,
        "seed": seed,
        "params": {
            "n_docs": n_docs,
            "min_pages": min_pages,
            "max_pages": max_pages,
            "questions_per_doc": questions_per_doc,
            "scan_docs": scan_docs,
        },
        "pymupdf": _pymupdf_version(),
        "documents": documents,
        "samples": {"file": SAMPLES, "count": len(samples), "sha256": file_sha256(samples_path)},
        "facts": {"file": FACTS, "count": len(facts), "sha256": file_sha256(facts_path)},
    }
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out / MANIFEST)
    return out


def _doc_entry(doc: DocResult, path: Path, scan: bool) -> dict[str, Any]:
    return {
        "file": doc.file_name,
        "sha256": file_sha256(path),
        "pages": doc.num_pages,
        "title": doc.title,
        "topic": doc.topic,
        "doc_type": doc.doc_type,
        "front_matter_pages": doc.front_matter,
        "page_labels_set": doc.labels_set,
        "page_labels": doc.page_labels,
        "scan": scan,
        "planted_errors": [e.family for e in doc.errors],
    }


def _fact_row(doc: DocResult, fact: PlantedFact) -> dict[str, Any]:
    """Every planted value, asked about or not: where it is and what it says."""
    return {
        "doc": doc.file_name,
        "page": fact.where.page,
        "doc_page": doc.page_labels[fact.where.page - 1],
        "bbox": normalize(fact.where.rect).as_list(),
        "element_type": fact.where.element_type,
        "anchor": fact.anchor,
        "entity": fact.entity_label,
        "metric": fact.metric,
        "year": fact.year,
        "value": fact.value_text,
        "text": fact.sentence,
    }


def _write_jsonl(rows: list[dict[str, Any]], path: Path) -> Path:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return path


def _remove_stale(out: Path, keep: set[str]) -> None:
    """Delete PDFs an earlier manifest in ``out`` listed that this run did not write."""
    try:
        old = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        listed = {str(d["file"]) for d in old.get("documents", [])}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return
    for name in listed - keep:
        stale = out / PDF_DIR / Path(name).name
        if stale.is_file():
            stale.unlink()


def _pymupdf_version() -> str:
    import pymupdf

    return str(pymupdf.VersionBind)


def read_manifest(out_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of a generated corpus, or ``None`` when there is none."""
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
