"""One judge call labelling several gold items (the boxes of a page, the facts of a page), as
a profile reads the reply.

* Tolerant (paper profile): the reply must validate against the role's schema (labels and
  ids normalized by it) and label every item; otherwise one corrective second call, and a
  reply still unusable fails every item of the call together.
* Exact (official profile, :func:`scanrag.evaluation.docscope.official.view.judge_items`): the
  JSON object the released scorers find in the reply, each item looked up by its exact id with an
  exact label; an item without one is a ``judge_parse_error`` on its own; no second call.

Either way the result is one ``(status, label, reason)`` per item, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from scanrag.evaluation.docscope.official.view import judge_items
from scanrag.evaluation.docscope.profiles import Profile
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import JudgeRecord

J = TypeVar("J", bound=BaseModel)
ItemOutcome = tuple[str, str | None, str | None]


async def label_items(
    ctx: JudgeContext,
    profile: Profile,
    role: str,
    messages: Sequence[Any],
    prompt_hash: str,
    *,
    key: str,
    ids: Sequence[str],
    allowed: frozenset[str],
    schema: type[J],
    labeller: Callable[[J, int], list[str]],
) -> tuple[JudgeRecord, list[ItemOutcome]]:
    """The record of the call and one ``(status, label, reason)`` per id."""
    if profile.exact_replies:
        limit = profile.judge_max_tokens
        return await judge_items(
            ctx, role, messages, prompt_hash, key, ids, allowed, limit, profile.call_shape
        )

    def complete(judgment: J) -> None:
        labeller(judgment, len(ids))  # raises ValueError when an item is missing

    record, parsed = await ctx.judge(
        role,
        messages,
        schema,
        prompt_hash,
        key=key,
        check=complete,
        max_tokens=profile.judge_max_tokens,
        items=len(ids),
    )
    if parsed is None:
        return record, [(record.status, None, None)] * len(ids)
    return record, [("ok", label, None) for label in labeller(parsed, len(ids))]
