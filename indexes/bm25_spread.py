"""Counting a corpus's pages in this process and in the ingestion pool's workers at once.

A build of at least ``SPREAD_MIN_PAGES`` pages is cut into slices of about ``SLICE_PAGES``
pages. This process counts slices from the first one on, straight into the index's
vocabulary. When CPUs are free (``scanrag.documents.parallel.usable_workers``: a busy machine
gains nothing from a second process) the ingestion pool is started in the background, and
once it is up each idle worker takes the last slice nobody has taken yet, counted with a
vocabulary of its own (``BM25Index.build_part``'s payload). When the two ends meet, the
workers' slices are merged in order (``Vocabulary.absorb``, their term ids mapped): the same
vocabulary, postings and scores as counting every page here (tested). Nothing waits for the
pool to start; a slice whose worker failed is counted here (logged).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from scanrag.indexes.bm25_counts import Counts

log = logging.getLogger(__name__)

SPREAD_MIN_PAGES = 4_000  # smaller builds are counted here (a few hundred milliseconds)
SLICE_PAGES = 2_048
Item = TypeVar("Item")


def cut(items: Sequence[Item], pages: Callable[[Item], int]) -> list[list[Item]]:
    """``items`` (texts or documents) in consecutive slices of about ``SLICE_PAGES`` pages."""
    slices: list[list[Item]] = [[]]
    held = 0
    for item in items:
        if held >= SLICE_PAGES:
            slices.append([])
            held = 0
        slices[-1].append(item)
        held += pages(item)
    return slices


def wanted(page_count: int) -> bool:
    """Whether a build of ``page_count`` pages may spread (the free CPUs are then counted
    and the pool started in the background: ``scanrag.documents.parallel.warm_when_free``)."""
    if page_count < SPREAD_MIN_PAGES:
        return False
    from scanrag.documents.parallel import warm_when_free

    return warm_when_free()


def spread(
    slices: list[list[Item]],
    pages: Callable[[list[Item]], int],
    count_here: Callable[[list[Item], int], Iterator[Counts]],
    submit: Callable[[list[Item]], Future[Any]],
    absorb: Callable[[Any, int], Counts],
    first_row: int,
) -> Iterator[Counts]:
    """The counts of every slice, in order (see the module docstring): ``count_here(slice,
    first row)`` counts one here, ``submit(slice)`` hands one to a worker and ``absorb(its
    payload, first row)`` merges what it sent back."""
    from scanrag.documents.parallel import ready_workers, shutdown_pool

    starts = [first_row]
    for piece in slices:
        starts.append(starts[-1] + pages(piece))
    given: dict[int, Future[Any]] = {}
    back = len(slices)
    front = 0
    while front < back:
        workers = ready_workers() - 1  # this process counts too
        if workers > 0:
            while back - 1 > front and sum(not f.done() for f in given.values()) < workers:
                back -= 1
                given[back] = submit(slices[back])
        yield from count_here(slices[front], starts[front])
        front += 1
    for at in sorted(given):
        try:
            payload = given[at].result()
        except Exception as exc:  # a broken pool, a killed worker: count the slice here
            log.warning("bm25: a worker failed on rows %d.. (%s); counting here", starts[at], exc)
            if isinstance(exc, BrokenProcessPool):
                shutdown_pool()
            yield from count_here(slices[at], starts[at])
            continue
        yield absorb(payload, starts[at])
