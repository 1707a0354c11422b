"""How a reader's final reply ended, and what that makes of the item.

Two facts about a reply decide more than its parse: whether the model stopped by itself or ran
into its token limit (``ChatResponse.finish_reason == "length"``), and how far the reply kept
to the requested format. :func:`note_finish` records the first on the parse;
:func:`settle` turns both into the trajectory's fields:

* ``Trajectory.parse`` (:class:`~scanrag.schemas.ParseStatus`) says how the reply was read:
  ``clean``, ``repaired`` (a cut JSON object closed), ``fallback`` (free text on the JSON path,
  read through the citation grammar), ``bare_text`` (format ignored: the prose is the answer)
  or ``none``;
* ``Trajectory.status`` becomes ``truncated`` when the reply hit the token limit before it gave
  any answer (no answer, verdict, issue or evidence chain), and ``unparsed`` when nothing at
  all could be read. A cut reply that did give its answer stays ``ok`` (``parse: repaired``).

Prose cut by the token limit is not taken as a bare-text answer: it is a reply that never got
to its point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scanrag.schemas import ParseStatus, Status, Trajectory

if TYPE_CHECKING:
    from agents.evidence import ParsedOutput

LENGTH = "length"
TRUNCATED_MESSAGE = "the reply hit the token limit (max_tokens) before giving an answer"


def note_finish(parsed: ParsedOutput, finish_reason: str | None) -> ParsedOutput:
    """Record a reply cut by the token limit on ``parsed`` (in place; returned for chaining)."""
    if finish_reason != LENGTH:
        return parsed
    parsed.notes["finish_reason"] = LENGTH
    if parsed.notes.get("answer_source") == "bare_text" and parsed.answer is not None:
        parsed.answer = None
        parsed.notes["answer_source"] = "bare_text_cut"
    return parsed


def answered(parsed: ParsedOutput) -> bool:
    """Whether the reply gave an answer of any task's kind."""
    has_answer = parsed.answer is not None or parsed.verdict is not None
    return has_answer or bool(parsed.issues or parsed.evidence_chain)


def parse_status(parsed: ParsedOutput) -> ParseStatus:
    """How ``parsed`` was read from its reply (see the module docstring)."""
    if not parsed.usable:
        return ParseStatus.NONE
    if parsed.notes.get("answer_source") == "bare_text":
        return ParseStatus.BARE_TEXT
    if "->" in parsed.parser:
        return ParseStatus.FALLBACK
    if parsed.notes.get("json_repaired"):
        return ParseStatus.REPAIRED
    return ParseStatus.CLEAN


def settle(trajectory: Trajectory, parsed: ParsedOutput) -> Trajectory:
    """Set ``trajectory.parse`` and, for an item still ``ok``, ``truncated`` or ``unparsed``."""
    trajectory.parse = parse_status(parsed)
    if trajectory.status != Status.OK:
        return trajectory
    if parsed.notes.get("finish_reason") == LENGTH and not answered(parsed):
        trajectory.fail(Status.TRUNCATED, TRUNCATED_MESSAGE)
    elif not parsed.usable:
        trajectory.fail(Status.UNPARSED, f"nothing usable in the reply ({parsed.parser} parser)")
    return trajectory
