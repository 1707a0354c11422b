"""Scoring profiles of the ``mmlongbench`` scorer, as data: ``official`` (the default) and
``lenient``.

* ``official`` reproduces MMLongBench-Doc's released pipeline around ``eval_score``
  (``run_api.py``/``run_lvlm.py``, ``eval/extract_answer.py``, ``eval_acc_and_f1``): the gold is
  the sample's answer as written; the extractor reads the model's whole response ("Failed"
  when the model call failed) and is always called; the prediction is scored as extracted (a
  refusal spelled "Unanswerable" is not "Not answerable"); an extraction that fails, or a case
  on which ``eval_score`` raises, is the prediction "Failed to extract" with a score of 0, and
  counts in accuracy and in F1's denominators.
* ``lenient``: the gold of an unanswerable item is "Not answerable"; the extractor reads the
  system's answer and an empty answer is "Fail to answer" without a call; a bare refusal in
  any spelling becomes "Not answerable"; a failed extraction is a ``judge_error`` /
  ``judge_parse_error`` row, left out of both numbers and counted as excluded.

The scorer takes ``profile``; without one it scores each sample with its dataset's profile
(``metadata["scoring_profile"]``, set by the loader's ``profile`` option), else ``official``.
Rows say which profile made them (``details["profile"]``; rows written before profiles
existed were lenient) and the summary labels the aggregate (table ``profile``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OFFICIAL_NAME = "official"
LENIENT_NAME = "lenient"
FAILED_TO_EXTRACT = "Failed to extract"  # the released pipeline's prediction for a failure
FAILED_RESPONSE = "Failed"  # the released pipeline's response when the model call failed


@dataclass(frozen=True)
class ScoringProfile:
    name: str
    label: str
    gold_as_written: bool  # the sample's answer text, not "Not answerable" for unanswerable
    reads_whole_reply: bool  # the extractor reads the whole response ("Failed" on a failure)
    always_extracts: bool  # an empty response goes to the extractor too
    canonical_refusals: bool  # a bare refusal in any spelling becomes "Not answerable"
    failures_score_zero: bool  # failed extraction / eval_score raising: "Failed to extract", 0


OFFICIAL = ScoringProfile(
    name=OFFICIAL_NAME,
    label="official (MMLongBench-Doc's released pipeline)",
    gold_as_written=True,
    reads_whole_reply=True,
    always_extracts=True,
    canonical_refusals=False,
    failures_score_zero=True,
)
LENIENT = ScoringProfile(
    name=LENIENT_NAME,
    label="lenient (refusals in any spelling, failed extractions excluded)",
    gold_as_written=False,
    reads_whole_reply=False,
    always_extracts=False,
    canonical_refusals=True,
    failures_score_zero=False,
)
PROFILES = {OFFICIAL.name: OFFICIAL, LENIENT.name: LENIENT}


def get_profile(value: object) -> ScoringProfile:
    if isinstance(value, str) and value in PROFILES:
        return PROFILES[value]
    raise ValueError(
        f"unknown mmlongbench scoring profile {value!r}; known profiles: {', '.join(PROFILES)}"
    )


def sample_profile(metadata: dict[str, Any]) -> ScoringProfile | None:
    value = metadata.get("scoring_profile")
    return PROFILES.get(value) if isinstance(value, str) else None
