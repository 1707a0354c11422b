"""Recording what a strategy cuts from its input (``Trajectory.reductions``), and the
``runner.on_degraded: fail`` rule.

Every cut goes through :meth:`Trajectory.reduce` with a :class:`~scanrag.schemas.Reduction`
that names what was left out and the setting or window that imposed it. With
``on_degraded: fail`` (``StrategyContext.settings.on_degraded``) a degraded item makes no
further model call and ends with status ``degraded``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scanrag.agents.context import ContextOptions, PageRef, ReaderInput, page_text
from scanrag.protocols import StrategyContext
from scanrag.schemas import Reduction, Status, Trajectory
from scanrag.schemas.reduction import degraded_message as reduction_message

FAIL = "fail"


class DegradedInputError(Exception):
    """An item's input was reduced below its strategy's promise under ``on_degraded: fail``."""


def page_cap(
    trajectory: Trajectory,
    dropped: Sequence[int],
    cap: int,
    *,
    doc_id: str | None = None,
    source: str = "page_cap",
    stage: str = "select",
) -> Reduction | None:
    """Pages beyond a page cap (``None`` when the cap dropped nothing)."""
    if not dropped:
        return None
    return trajectory.reduce(
        Reduction(
            kind="page_cap",
            stage=stage,
            cause=f"{source}={cap}",
            doc_id=doc_id,
            pages_dropped=list(dropped),
            limit=cap,
        )
    )


def cap_source(params_value: Any, setting_key: str, param_name: str) -> str:
    """How a cause names a cap: the strategy parameter when it set one, else the runner's."""
    if params_value is not None:
        return param_name
    return f"runner.page_caps.{setting_key}"


def full_lengths(refs: Sequence[PageRef], options: ContextOptions) -> dict[tuple[str, int], int]:
    """Characters of each page's text as the reader would see it uncut."""
    return {
        ref.key: len(page_text(ref.document.page(ref.number), None, options.block_boxes))
        for ref in refs
    }


def shown_lengths(refs: Sequence[PageRef], options: ContextOptions) -> dict[tuple[str, int], int]:
    """Characters of each page's text under ``options`` (its character cap)."""
    cap = options.max_chars_per_page
    out = {}
    for key, full in full_lengths(refs, options).items():
        out[key] = full if cap is None else min(full, cap)
    return out


def _by_document(keys: Sequence[tuple[str, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for doc_id, page in keys:
        out.setdefault(doc_id, []).append(page)
    return out


def input_caps(
    refs: Sequence[PageRef],
    options: ContextOptions,
    inp: ReaderInput,
    stage: str,
    primary: str | None,
) -> list[Reduction]:
    """The cuts the configured caps made to one call's input ``inp`` (rendered from ``refs``
    under ``options``): characters beyond ``max_chars_per_page``, page images stacked by
    ``max_images``, images not rendered."""
    out = []
    cap = options.max_chars_per_page
    if cap is not None:
        full = full_lengths(refs, options)
        cut = [key for key, n in full.items() if n > cap]
        for doc_id, pages in _by_document(cut).items():
            out.append(
                Reduction(
                    kind="char_cap",
                    stage=stage,
                    cause=f"max_chars_per_page={cap}",
                    doc_id=None if doc_id == primary else doc_id,
                    pages_cut=pages,
                    chars_dropped=sum(full[(doc_id, p)] - cap for p in pages),
                    limit=cap,
                )
            )
    merged = sum(len(c["pages"]) for c in inp.composites)
    if merged:
        out.append(
            Reduction(
                kind="image_cap",
                stage=stage,
                cause=f"max_images={options.max_images}: page images stacked into "
                f"{len(inp.composites)} composite image(s)",
                images_merged=merged,
                limit=options.max_images,
            )
        )
    errors = inp.notes.get("render_errors") or []
    missing = len(refs) if inp.notes.get("image_fallback") else len(errors)
    if options.modality in ("image", "both") and missing:
        reason = inp.notes.get("image_fallback") or "pages could not be rendered"
        out.append(
            Reduction(
                kind="images_dropped",
                stage=stage,
                cause=str(reason),
                images_dropped=missing,
                pages_cut=[int(e["page"]) for e in errors if "page" in e],
            )
        )
    return out


def plan_reductions(
    before: tuple[Sequence[PageRef], ContextOptions],
    after: tuple[Sequence[PageRef], ContextOptions],
    *,
    cause: str,
    stage: str,
    primary: str | None,
    limit: int | None,
    images_merged: int = 0,
) -> list[Reduction]:
    """What going from the input ``before`` to ``after`` left out, one reduction per document
    (pages dropped, pages shortened and the characters lost)."""
    refs_before, opts_before = before
    refs_after, opts_after = after
    shown_before = shown_lengths(refs_before, opts_before)
    shown_after = shown_lengths(refs_after, opts_after)
    dropped = [k for k in shown_before if k not in shown_after]
    cut = [k for k, n in shown_after.items() if n < shown_before.get(k, n)]
    docs = list(dict.fromkeys(doc for doc, _ in [*dropped, *cut]))
    out = []
    for doc_id in docs:
        gone = [p for d, p in dropped if d == doc_id]
        shortened = [p for d, p in cut if d == doc_id]
        chars = sum(shown_before[(doc_id, p)] for p in gone)
        chars += sum(shown_before[(doc_id, p)] - shown_after[(doc_id, p)] for p in shortened)
        out.append(
            Reduction(
                kind="context",
                stage=stage,
                cause=cause,
                doc_id=None if doc_id == primary else doc_id,
                pages_dropped=gone,
                pages_cut=shortened,
                chars_dropped=chars,
                limit=limit,
            )
        )
    if images_merged and not out:
        out.append(Reduction(kind="context", stage=stage, cause=cause, limit=limit))
    if images_merged:
        out[0] = out[0].model_copy(update={"images_merged": images_merged})
    return out


def notes_trimmed(
    trajectory: Trajectory,
    blocks: Sequence[tuple[Sequence[int], str]],
    limit: int | None,
    *,
    stage: str,
    cause: str,
) -> Reduction | None:
    """Notes cut to ``limit`` characters per block to fit the window (``None``: none cut)."""
    if limit is None:
        return None
    lost = sum(len(text) - limit for _, text in blocks if len(text) > limit)
    if not lost:
        return None
    return trajectory.reduce(
        Reduction(kind="notes", stage=stage, cause=cause, chars_dropped=lost, limit=limit)
    )


def fails_on_degraded(ctx: StrategyContext | None) -> bool:
    """Whether this run makes a degraded item an error (``runner.on_degraded: fail``)."""
    return ctx is not None and ctx.settings.on_degraded == FAIL


def degraded_message(trajectory: Trajectory) -> str:
    """One line naming the item's degrading reductions."""
    return reduction_message(trajectory.reductions)


def stop_if_degraded(ctx: StrategyContext | None, trajectory: Trajectory) -> bool:
    """Under ``on_degraded: fail``, end a degraded item (status ``degraded``) and say so."""
    if not (trajectory.degraded and fails_on_degraded(ctx)):
        return False
    if trajectory.status != Status.DEGRADED:
        trajectory.fail(Status.DEGRADED, degraded_message(trajectory))
    return True


__all__ = [
    "DegradedInputError",
    "cap_source",
    "degraded_message",
    "fails_on_degraded",
    "input_caps",
    "notes_trimmed",
    "page_cap",
    "plan_reductions",
    "stop_if_degraded",
]
