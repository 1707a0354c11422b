"""Whole numbers in a config: counts, sizes and seeds, each within documented bounds.

Pydantic's plain ``int`` takes ``true`` as 1 and ``"4"`` or ``4.0`` as 4, and a bare ``ge=1``
lets ``concurrency: 1000000000000`` through to the runner. A config field that holds a whole
number is declared ``Count`` with both bounds on its ``Field`` (``workers: Count =
Field(default=4, ge=1, le=64)``): an integer (a boolean, a string or a fraction is refused
with a message that says so) between bounds a user can read in the README's config section.
``tests/scanrag/test_config_counts.py`` holds every integer field of the config models to
this. Seeds are bounded by :data:`SEED_MAX` (numpy's generators take 0..2**32-1).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Strict

# The ceilings (README, "Experiment config"): far above any real use, low enough that a typo
# (a run of extra zeros) is refused rather than obeyed.
SEED_MAX = 2**32 - 1
MAX_CONCURRENCY = 1_024  # items, or calls to one server, in flight
MAX_CONTEXT = 10_000_000  # tokens of a model's window or reply
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # a provider's sampling seed
MAX_ROWS = 100_000_000  # a dataset's limit
MAX_TOKENS_BUDGET = 10**12
MAX_PAGES = 100_000
MAX_IMAGES = 1_000
MAX_CHARS_PER_PAGE = 10_000_000
MAX_CPUS = 4_096
MAX_IN_FLIGHT = 100_000
MAX_RESTARTS = 100
MAX_RETRIES = 20
MAX_RESAMPLES = 1_000_000


def _whole_number(value: Any) -> Any:
    """A boolean is refused by name (``true`` is no count); other types go on to the strict
    integer check (``"4"`` and ``4.0`` are refused there)."""
    if isinstance(value, bool):
        raise ValueError(f"must be a whole number, got a boolean ({str(value).lower()})")
    return value


Count = Annotated[int, BeforeValidator(_whole_number), Strict()]
"""A config integer: booleans, strings and fractions refused; bounds go on the ``Field``."""
