"""Fitting a read's pages to a token budget by the strategy's fallback mode.

* ``truncate`` — one character cap for every page (and fewer page images), the last pages
  left out once the cap would fall below :data:`MIN_CHARS_PER_PAGE`;
* ``drop`` — the lowest-priority pages left out first (top-k RAG: the worst-ranked hits).

Costs are the reader's estimate units (characters / 4, a flat cost per image,
:mod:`scanrag.agents.context`); :func:`page_budget` converts a counted request into them.
:mod:`scanrag.agents.planning` asks for a fit each round until the counted request fits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from scanrag.agents.context import (
    CHARS_PER_TOKEN,
    TRUNCATION_MARK,
    ContextOptions,
    PageRef,
    estimate_tokens,
    page_block,
    page_text,
)
from scanrag.llm.fit import SAFETY
from scanrag.llm.types import ChatRequest, TextPart, TokenCount
from scanrag.untrusted import ID_LENGTH

Fallback = Literal["truncate", "drop"]
MIN_CHARS_PER_PAGE = 200


@dataclass(frozen=True)
class Fit:
    """The pages and options one planning round settled on."""

    refs: list[PageRef]
    options: ContextOptions
    priority: list[int]


_ID = "0" * ID_LENGTH


def _lengths(refs: Sequence[PageRef], options: ContextOptions) -> list[tuple[int, int]]:
    """(text characters, marker characters) of each page as the reader gets it."""
    out = []
    for ref in refs:
        page = ref.document.page(ref.number)
        name = ref.document.name if ref.show_doc else None
        markers = len(page_block(page, "", _ID, name))
        text = 0 if options.modality == "image" else len(page_text(page, None, options.block_boxes))
        out.append((text, markers))
    return out


def _text_cost(lengths: Sequence[tuple[int, int]], cap: int | None) -> int:
    chars = 0
    for n, markers in lengths:
        shown = n if cap is None or n <= cap else cap + len(TRUNCATION_MARK)
        chars += shown + markers
    return math.ceil(chars / CHARS_PER_TOKEN)


def _image_cost(n: int, options: ContextOptions) -> int:
    if options.modality not in ("image", "both") or n == 0:
        return 0
    groups = n if options.max_images is None else min(n, options.max_images)
    return groups * options.image_tokens


def _best_cap(lengths: Sequence[tuple[int, int]], budget: int, current: int | None) -> int | None:
    """The largest character cap (≥ the minimum, ≤ ``current``) whose text fits ``budget``;
    ``None`` when even the minimum does not fit."""
    top = max((n for n, _ in lengths), default=0)
    if current is not None:
        top = min(top, current)
    if _text_cost(lengths, top) <= budget:
        return top
    low, high = MIN_CHARS_PER_PAGE, top
    if high < low or _text_cost(lengths, low) > budget:
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if _text_cost(lengths, mid) <= budget:
            low = mid
        else:
            high = mid - 1
    return low


def _fit_images(n: int, options: ContextOptions, budget: int) -> tuple[ContextOptions, int]:
    """Fewer composite images when they alone take more than half the budget."""
    if options.modality not in ("image", "both") or n == 0:
        return options, budget
    allowed = max(1, (budget // 2) // max(1, options.image_tokens))
    if options.max_images is not None:
        allowed = min(allowed, options.max_images)
    if allowed < min(n, options.max_images or n):
        options = replace(options, max_images=allowed)
    return options, budget - _image_cost(n, options)


def fit_truncate(fit: Fit, budget: int) -> Fit:
    """One character cap for every page that fits ``budget`` (estimate tokens); below the
    minimum cap, the last pages are left out instead."""
    refs, options = list(fit.refs), fit.options
    options, budget = _fit_images(len(refs), options, budget)
    lengths = _lengths(refs, options)
    cap = _best_cap(lengths, budget, options.max_chars_per_page)
    while cap is None and len(refs) > 1:
        refs = refs[:-1]
        lengths = lengths[:-1]
        cap = _best_cap(lengths, budget, options.max_chars_per_page)
    cap = MIN_CHARS_PER_PAGE if cap is None else cap
    if any(n > cap for n, _ in lengths):
        options = replace(options, max_chars_per_page=cap)
    return Fit(refs, options, fit.priority[: len(refs)])


def fit_drop(fit: Fit, budget: int) -> Fit:
    """The best pages (lowest ``priority`` first) whose whole text fits ``budget``; when not
    even the best page fits, it is kept and cut (``fit_truncate``)."""
    options, budget = _fit_images(len(fit.refs), fit.options, budget)
    lengths = _lengths(fit.refs, options)
    cap = options.max_chars_per_page
    order = sorted(range(len(fit.refs)), key=lambda i: fit.priority[i])
    kept: list[int] = []
    for i in order:
        if _text_cost([lengths[j] for j in [*kept, i]], cap) > budget:
            break
        kept.append(i)
    if not kept:
        best = order[0]
        single = Fit([fit.refs[best]], options, [fit.priority[best]])
        return fit_truncate(single, budget)
    kept.sort()
    return Fit([fit.refs[i] for i in kept], options, [fit.priority[i] for i in kept])


def fit(current: Fit, budget: int, mode: Fallback) -> Fit:
    """``current`` shrunk to ``budget`` estimate tokens of page content by ``mode``."""
    budget = max(1, budget)
    if mode == "drop" and len(current.refs) > 1:
        return fit_drop(current, budget)
    return fit_truncate(current, budget)


def estimate_units(request: ChatRequest, image_tokens: int = 800) -> int:
    """The request in the planner's estimate units (``ReaderInput.est_tokens``' characters /
    4, images at a flat cost): what :func:`page_budget` converts the counted tokens into."""
    parts: list[Any] = []
    for message in request.messages:
        if isinstance(message.content, str):
            parts.append(TextPart(text=message.content))
        else:
            parts.extend(message.content)
    return estimate_tokens(parts, image_tokens)


def page_budget(
    count: TokenCount, estimated: int, page_estimate: int, max_tokens: int, window: int
) -> int:
    """Estimate tokens the pages may take so the counted request fits: the count's ratio to
    the estimate converts the window into estimate units."""
    ratio = count.tokens / max(1, estimated)
    room = (window - max_tokens) * (1.0 if count.exact else SAFETY)
    fixed = estimated - page_estimate
    return math.floor(room / max(ratio, 1e-6)) - fixed
