"""The answer extraction step: the two call shapes and what they return.

* ``json`` (ours): the ``extractor`` judge role with our prompt
  (:mod:`scanrag.evaluation.mmlongbench.prompt`), system + user messages, a JSON reply
  ``{"answer": ..., "format": ...}`` (:class:`Extraction`); a JSON array becomes a Python list
  literal (``['Jun', 'Aug']``), the form the official list rule reads.
* ``official`` (``eval/extract_answer.py``'s shape): the prompt as the user turn and
  ``"\\n\\nQuestion:{question}\\nAnalysis:{response}\\n"`` as an assistant turn, temperature 0,
  top-p 1, no seed, at most 256 tokens (:data:`OFFICIAL_REQUEST`), a free-text reply read by
  :func:`read_free_text` (the text after ``Extracted answer:`` up to ``Answer format:``). The
  prompt is the user's ``extractor`` prompt file, used as it is (``--judge-prompt
  extractor=FILE``; the benchmark's own file is not shipped here), else our free-text prompt.
  A failed call reads as the reply "Failed", as the released code records it.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from scanrag.evaluation.mmlongbench.official import NOT_ANSWERABLE

FAIL_TO_ANSWER = "Fail to answer"
OFFICIAL_MAX_TOKENS = 256  # eval/extract_answer.py asks for at most 256 tokens
# ... with top-p 1 and temperature 0 (the configured one) and no seed
OFFICIAL_REQUEST: dict[str, Any] = {"top_p": 1.0, "seed": None}
CallShape = Literal["json", "official"]
CALL_SHAPES: tuple[str, ...] = ("json", "official")
_REFUSAL = re.compile(r"^\W*(?:not answerable|unanswerable)\W*$", re.IGNORECASE)


def answer_as_text(value: Any) -> str:
    """The prediction text of an extracted value: a string trimmed, a number as written by
    Python, a list as a Python list literal. Raises ``ValueError`` for anything else (no
    answer, an object, a boolean)."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool) or not isinstance(value, int | float | list):
        raise ValueError(f"expected a string, a number or a list, got {type(value).__name__}")
    return str(value)


def canonical_prediction(text: str) -> str:
    """``text`` trimmed, and the benchmark's refusal "Not answerable" for a bare refusal in
    any spelling ("Unanswerable", "not answerable."), so the F1 counts it as one."""
    text = text.strip()
    return NOT_ANSWERABLE if _REFUSAL.match(text) else text


class Extraction(BaseModel):
    """The extractor's reply: the short answer and the format it chose (for the record)."""

    answer: str
    format: str | None = None

    @field_validator("answer", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return answer_as_text(value)


def analysis_turn(question: str, response: str) -> str:
    """The assistant turn of the official call shape."""
    return f"\n\nQuestion:{question}\nAnalysis:{response}\n"


def read_free_text(reply: str) -> str | None:
    """The answer of a free-text extraction: what follows the first ``Extracted answer:`` up to
    the first ``Answer format:`` (which comes first in the reply counts), trimmed; ``None``
    without ``Extracted answer:`` after that cut."""
    head = reply.split("Answer format:")[0]
    parts = head.split("Extracted answer:")
    return parts[1].strip() if len(parts) > 1 else None
