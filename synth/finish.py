"""Completing a laid-out document: front matter, printed page numbers, PDF labels, metadata.

Front-matter pages (title, contents, preface) are numbered i, ii, iii...; body pages 1, 2, 3...
The numbers are printed at the foot of every page; only some documents also carry a PDF
page-label table, so both ways of reading ``doc_page`` get exercised.
"""

from __future__ import annotations

from scanrag.synth import pdfdraw as d
from scanrag.synth.builder import GAP, PDF_DATE, DocumentBuilder
from scanrag.synth.model import DocResult
from scanrag.synth.vocab import roman


def page_labels(b: DocumentBuilder) -> list[str]:
    """The printed label of every physical page, front matter first."""
    front = [roman(i + 1) for i in range(b.n_front)]
    return front + [str(i + 1) for i in range(b.body_pages)]


def finish_document(b: DocumentBuilder) -> DocResult:
    """Draw front matter and page numbers, set labels and metadata, serialize the PDF."""
    if b.canvas is not None:
        b.canvas.flush()
    labels = page_labels(b)
    _title_page(b)
    _contents(b, labels)
    for number in range(2, b.n_front):
        _preface(b, number)
    for number, label in enumerate(labels):
        footer = d.Canvas(b.doc[number])
        footer.text(d.PAGE_W / 2, 750.0, label, 9.0, align="center")
        footer.flush()
    if b.set_labels:
        b.doc.set_page_labels(
            [
                {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
                {"startpage": b.n_front, "prefix": "", "style": "D", "firstpagenum": 1},
            ]
        )
    b.doc.set_metadata(
        {
            "title": b.title,
            "author": "ScanRAG synthetic corpus",
            "subject": b.topic.doc_type,
            "keywords": b.topic.kind,
            "creator": "synth",
            "producer": "synth",
            "creationDate": PDF_DATE,
            "modDate": PDF_DATE,
        }
    )
    pdf = b.doc.tobytes(garbage=3, deflate=True, no_new_id=True)
    b.doc.close()
    return DocResult(
        index=b.index,
        file_name=b.file_name,
        title=b.title,
        main=b.main,
        topic=b.topic.kind,
        doc_type=b.topic.doc_type,
        pdf=pdf,
        page_labels=labels,
        front_matter=b.n_front,
        labels_set=b.set_labels,
        facts=b.facts,
    )


def _title_page(b: DocumentBuilder) -> None:
    page = d.Canvas(b.doc[0])
    page.text(d.PAGE_W / 2, 250.0, b.main, 24.0, d.BOLD, align="center")
    page.text(d.PAGE_W / 2, 290.0, f"{b.topic.doc_type} {b.year}", 16.0, align="center")
    page.text(d.PAGE_W / 2, 330.0, "A synthetic document", 11.0, d.ITALIC, "center")
    page.flush()


def _contents(b: DocumentBuilder, labels: list[str]) -> None:
    """Section titles with the printed label of the page each starts on."""
    page = d.Canvas(b.doc[1])
    page.text(d.LEFT, d.TOP, "Contents", 16.0, d.BOLD)
    step = min(16.0, (d.BOTTOM - d.TOP - 40.0) / max(1, len(b.sections)))
    size = min(10.0, step / 1.3)
    for i, (title, number) in enumerate(b.sections):
        top = d.TOP + 40.0 + i * step
        page.text(d.LEFT, top, title, size)
        page.text(d.RIGHT, top, labels[number - 1], size, align="right")
    page.flush()


def _preface(b: DocumentBuilder, number: int) -> None:
    page = d.Canvas(b.doc[number])
    page.text(d.LEFT, d.TOP, "Preface" if number == 2 else "About This Report", 16.0, d.BOLD)
    top = d.TOP + 40.0
    for _ in range(3):
        rect = page.paragraph(d.LEFT, top, d.TEXT_W, " ".join(b.filler(4)))
        top = rect[3] + GAP
    page.flush()
