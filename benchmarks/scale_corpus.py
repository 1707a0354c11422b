"""Cheap generated corpora for the scale benchmarks: many text pages written with PyMuPDF.

Each PDF holds ``pages`` letter pages of ~300 words drawn (Zipf-like) from a vocabulary of a
few thousand made-up terms, a heading and a printed page number, so BM25 sees a realistic
vocabulary and ingestion sees ordinary text pages. ``questions.jsonl`` (generic format) asks
two questions per document, each built from rare words of one page, with that page as gold.

    python benchmarks/scale_corpus.py OUT_DIR --pages 3000 [--pages-per-doc 60]

Generation is deterministic for a given (pages, pages per doc, seed) and skipped when the
folder already holds that corpus (``corpus.json`` records its parameters).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

_SYLLABLES = [
    "ka", "lo", "mi", "ren", "tos", "va", "qui", "dor", "sel", "ha", "pen", "tu", "bri", "mos",
    "ela", "gar", "fin", "ost", "ru", "zen", "cal", "vi", "nor", "pla", "tek", "sum", "ard",
]  # fmt: skip


def vocabulary(size: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def _page_words(rng: random.Random, vocab: list[str], weights: list[float], n: int) -> list[str]:
    return rng.choices(vocab, weights=weights, k=n)


def write_pdf(path: Path, pages: int, rng: random.Random, vocab: list[str]) -> list[list[str]]:
    """One PDF of ``pages`` pages; returns the words of each page."""
    import pymupdf

    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    doc = pymupdf.open()
    texts = []
    for number in range(1, pages + 1):
        words = _page_words(rng, vocab, weights, 300)
        page = doc.new_page(width=612, height=792)
        page.insert_text((72, 72), f"Section {number}: {words[0].title()}", fontsize=15)
        page.insert_textbox(pymupdf.Rect(72, 96, 540, 740), " ".join(words[1:]), fontsize=9.5)
        page.insert_text((300, 765), str(number), fontsize=9)
        texts.append(words)
    doc.save(path, garbage=1, deflate=True)
    doc.close()
    return texts


def question_row(qid: str, doc: str, rare: list[str], page: int) -> dict[str, Any]:
    """A generic-format question asking for the page that holds the ``rare`` words."""
    return {
        "id": qid,
        "doc": doc,
        "question": f"Which section mentions {' '.join(rare)}?",
        "answer": f"section {page}",
        "evidence_pages": [page],
    }


def generate(out: Path, pages: int, pages_per_doc: int = 60, seed: int = 0) -> dict[str, Any]:
    """The corpus of ``pages`` pages under ``out`` (``pdfs/``, ``questions.jsonl``)."""
    params = {"pages": pages, "pages_per_doc": pages_per_doc, "seed": seed, "version": 1}
    marker = out / "corpus.json"
    if marker.is_file() and json.loads(marker.read_text())["params"] == params:
        return dict(json.loads(marker.read_text()))
    (out / "pdfs").mkdir(parents=True, exist_ok=True)
    vocab = vocabulary(6000, seed)
    rng = random.Random(seed)
    rows, docs, left, index = [], 0, pages, 0
    while left > 0:
        count = min(pages_per_doc, left)
        name = f"doc{index:05d}.pdf"
        texts = write_pdf(out / "pdfs" / name, count, rng, vocab)
        for q in range(2):
            page = rng.randint(1, count)
            rare = sorted(set(texts[page - 1]), key=vocab.index)[-6:]
            rows.append(question_row(f"q{index:05d}-{q}", name, rare, page))
        left -= count
        docs += 1
        index += 1
    questions = out / "questions.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    info = {"params": params, "docs": docs, "questions": len(rows), "pages": pages}
    marker.write_text(json.dumps(info), encoding="utf-8")
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--pages-per-doc", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(json.dumps(generate(args.out, args.pages, args.pages_per_doc, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
