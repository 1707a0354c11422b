"""What a strategy cut from its input, and why: :class:`Reduction` records.

A strategy promises an input — ``full_doc`` the whole document, ``topk_rag`` its top-k pages,
``oracle_pages`` the gold pages, ``scan`` every window, ``agentic_rag`` every page it chose
and all of its notes. Whenever it gives the model less (a page cap, a character cap, page
images stacked or left out, a prompt planned down to the model's context window, notes
trimmed, windows skipped) it appends one ``Reduction`` to ``Trajectory.reductions`` saying what
was left out and what imposed it. An item with a degrading reduction is ``degraded``: its
answer was computed on less than its cell's label says (see README, "What a run measures").
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

ReductionKind = Literal[
    "page_cap",  # pages beyond runner.page_caps.max_pages / the strategy's page_cap
    "char_cap",  # page text cut by max_chars_per_page
    "image_cap",  # page images stacked into composites by max_images
    "images_dropped",  # page images that could not be rendered (the page went as text)
    "context",  # pages dropped or cut to fit the model's context window
    "notes",  # an agent's notes trimmed to fit the model's context window
    "windows",  # scan windows left out by max_windows
]


class Reduction(BaseModel):
    """One cut of a strategy's input: what was left out (pages, characters, images, notes)
    and why (``cause``: the setting or the context window that imposed it)."""

    kind: ReductionKind
    stage: str = Field(default="reader", description="The call stage the cut applies to.")
    cause: str = Field(
        description="What imposed it, e.g. 'runner.page_caps.max_pages=60' or 'context window "
        "of 2048 tokens (model entry context_window)'."
    )
    doc_id: str | None = Field(default=None, description="The document cut (None: primary).")
    pages_dropped: list[int] = Field(
        default_factory=list, description="Pages the model never saw (1-based, physical)."
    )
    pages_cut: list[int] = Field(
        default_factory=list, description="Pages whose text was shortened."
    )
    chars_dropped: int = Field(default=0, ge=0, description="Characters of text left out.")
    images_dropped: int = Field(default=0, ge=0, description="Page images left out.")
    images_merged: int = Field(
        default=0, ge=0, description="Page images stacked into fewer composite images."
    )
    limit: int | None = Field(
        default=None, description="The cap's value (pages, characters, images or tokens)."
    )
    degrading: bool = Field(
        default=True, description="Whether it takes the input below the strategy's promise."
    )

    def summary(self) -> str:
        """``page_cap (runner.page_caps.max_pages=60): 40 page(s) dropped``."""
        what = []
        if self.pages_dropped:
            what.append(f"{len(self.pages_dropped)} page(s) dropped")
        if self.pages_cut:
            what.append(f"{len(self.pages_cut)} page(s) cut")
        if self.chars_dropped and not self.pages_dropped:
            what.append(f"{self.chars_dropped} chars dropped")
        if self.images_merged:
            what.append(f"{self.images_merged} image(s) stacked")
        if self.images_dropped:
            what.append(f"{self.images_dropped} image(s) dropped")
        where = f" of {self.doc_id}" if self.doc_id else ""
        return f"{self.kind} ({self.cause}){where}: {', '.join(what) or 'input reduced'}"


def degraded_message(reductions: list[Reduction]) -> str:
    """One line naming the degrading reductions (the error of a ``degraded`` item)."""
    parts = [r.summary() for r in reductions if r.degrading]
    return "input reduced below the strategy's promise (runner.on_degraded: fail): " + "; ".join(
        parts
    )


__all__ = ["Reduction", "ReductionKind", "degraded_message"]
