"""Whole numbers in a config: counts, sizes and seeds, each within documented bounds.

Pydantic's plain ``int`` takes ``true`` as 1 and ``"4"`` or ``4.0`` as 4, and a bare ``ge=1``
lets ``concurrency: 1000000000000`` through to the runner. A config field that holds a whole
number is declared ``Count`` with both bounds on its ``Field`` (``workers: Count =
Field(default=4, ge=1, le=64)``): an integer (a boolean, a string or a fraction is refused
with a message that says so) between bounds a user can read in the README's config section.
``tests/scanrag/test_config_counts.py`` holds every integer field of the config models to
this; the bounds are in :mod:`scanrag.bounds` (seeds: :data:`~scanrag.bounds.SEED_MAX`, as
numpy's generators take 0..2**32-1).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Strict


def _whole_number(value: Any) -> Any:
    """A boolean is refused by name (``true`` is no count); other types go on to the strict
    integer check (``"4"`` and ``4.0`` are refused there)."""
    if isinstance(value, bool):
        raise ValueError(f"must be a whole number, got a boolean ({str(value).lower()})")
    return value


Count = Annotated[int, BeforeValidator(_whole_number), Strict()]
"""A config integer: booleans, strings and fractions refused; bounds go on the ``Field``."""
