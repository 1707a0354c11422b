"""The ``oracle`` retriever: returns the gold evidence pages (for ablations and upper bounds).

An oracle knows the gold pages of the questions it was given: ``samples`` (``Sample`` objects or
their dicts; the gold pages belong to each sample's primary document) and/or ``gold``, a
mapping from question text to gold pages in whichever single document the search is scoped to.

Two ways to ask it:

* ``for_sample(sample, k=None)``: the sample's gold pages, no lookup involved;
* ``search(query, k, doc_ids)``: the protocol form. The query must be the question text
  (compared with whitespace collapsed); gold pages of documents outside ``doc_ids`` are left
  out. A question the oracle does not know, or one without gold pages (unanswerable),
  returns ``[]``; an unknown question is also logged as a warning.

Hits are the gold pages in (document id, page) order, all with score 1.0. The oracle is not
*exhaustive*: it never pads the result with non-gold pages, so it can return fewer than ``k``
hits. Gold documents are named by file name (``Sample.doc_ids``) or id; after ``add`` the names
are mapped to ``Document.id`` and gold pages are checked against the page count.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from scanrag.indexes.errors import UnknownDocumentError
from scanrag.indexes.ranking import check_search_args
from scanrag.schemas import Document, PageHit, Sample

log = logging.getLogger(__name__)


class GoldEntry(NamedTuple):
    doc: str | None
    pages: tuple[int, ...]


def _key(question: str) -> str:
    return " ".join(question.split())


class OracleRetriever:
    """Gold pages as retrieval results. See the module docstring for the lookup rules."""

    name = "oracle"
    exhaustive = False

    def __init__(
        self,
        samples: Sequence[Sample | Mapping[str, Any]] = (),
        gold: Mapping[str, Sequence[int]] | None = None,
    ) -> None:
        self._gold: dict[str, list[GoldEntry]] = {}
        for raw in samples:
            sample = raw if isinstance(raw, Sample) else Sample.model_validate(raw)
            self._remember(sample.question, sample.primary_doc, sample.gold_pages)
        for question, pages in (gold or {}).items():
            self._remember(question, None, pages)
        self._pages: dict[str, int] = {}
        self._ids_by_name: dict[str, str] = {}

    def _remember(self, question: str, doc: str | None, pages: Sequence[int]) -> None:
        bad = [p for p in pages if not isinstance(p, int) or p < 1]
        if bad:
            raise ValueError(f"gold pages are 1-based integers; got {bad} for {question!r}")
        entry = GoldEntry(doc, tuple(sorted(set(pages))))
        self._gold.setdefault(_key(question), []).append(entry)

    def add(self, documents: Sequence[Document]) -> None:
        for document in documents:
            self._pages[document.id] = len(document.pages)
            self._ids_by_name[document.name] = document.id

    @property
    def document_ids(self) -> list[str]:
        return list(self._pages)

    def _resolve(self, doc: str) -> str | None:
        """A gold document's id: itself if indexed, via its file name, or as given when
        no documents were added; ``None`` when documents were added and it is not among them."""
        if doc in self._pages:
            return doc
        if doc in self._ids_by_name:
            return self._ids_by_name[doc]
        return None if self._pages else doc

    def _hits(self, doc_id: str, pages: Sequence[int], k: int | None) -> list[PageHit]:
        count = self._pages.get(doc_id)
        if count is not None and any(p > count for p in pages):
            raise ValueError(f"gold pages {list(pages)} exceed the {count} pages of {doc_id!r}")
        return [PageHit(doc_id=doc_id, page=p, score=1.0, rank=1) for p in pages][:k]

    def for_sample(self, sample: Sample, k: int | None = None) -> list[PageHit]:
        """The gold pages of ``sample``'s primary document, ranks 1..n."""
        doc_id = self._resolve(sample.primary_doc)
        if doc_id is None:
            raise UnknownDocumentError([sample.primary_doc], list(self._pages))
        return _ranked(self._hits(doc_id, sample.gold_pages, k))

    def search(
        self, query: str, k: int, doc_ids: Sequence[str] | str | None = None
    ) -> list[PageHit]:
        known = set(self._pages)
        scope = check_search_args(query, k, doc_ids if known else None, known)
        if scope is None and doc_ids is not None:  # nothing added: accept the ids as given
            scope = [doc_ids] if isinstance(doc_ids, str) else list(doc_ids)
        if not query.strip():
            return []
        entries = self._gold.get(_key(query))
        if entries is None:
            log.warning("oracle: no gold pages known for question %r", query[:80])
            return []
        hits: list[PageHit] = []
        for entry in entries:
            doc_id = self._entry_doc(entry, scope, query)
            if doc_id is not None and (scope is None or doc_id in scope):
                hits.extend(self._hits(doc_id, entry.pages, None))
        unique = {(h.doc_id, h.page): h for h in hits}
        return _ranked([unique[key] for key in sorted(unique)][:k])

    def _entry_doc(self, entry: GoldEntry, scope: list[str] | None, query: str) -> str | None:
        if entry.doc is not None:
            return self._resolve(entry.doc)
        candidates = scope if scope is not None else list(self._pages)
        if len(candidates) != 1:
            raise ValueError(
                f"the gold pages of {query[:80]!r} name no document; scope the search to exactly "
                "one document"
            )
        return candidates[0]

    def search_batch(
        self, queries: Sequence[str], k: int, doc_ids: Sequence[str] | str | None = None
    ) -> list[list[PageHit]]:
        return [self.search(query, k, doc_ids) for query in queries]

    def manifest(self) -> dict[str, Any]:
        return {
            "retriever": self.name,
            "kind": "oracle",
            "questions": len(self._gold),
            "documents": len(self._pages),
        }


def _ranked(hits: list[PageHit]) -> list[PageHit]:
    return [hit.model_copy(update={"rank": rank}) for rank, hit in enumerate(hits, start=1)]
