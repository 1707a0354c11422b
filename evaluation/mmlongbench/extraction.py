"""The answer extraction step: what the extractor judge returns, and the prediction text the
official rules score.

The official pipeline asks an LLM for a short answer before scoring; ours asks the
``extractor`` judge role with our own prompt (:mod:`evaluation.prompts.mmlongbench_extract`)
for ``{"answer": ..., "format": ...}``. A JSON array becomes a Python list literal
(``['Jun', 'Aug']``), the form the official list rule reads; a number becomes its text.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, field_validator

from evaluation.mmlongbench.official import NOT_ANSWERABLE

FAIL_TO_ANSWER = "Fail to answer"
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
