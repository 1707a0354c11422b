"""Import aliases for public names that moved, kept for one release with a warning.

A module whose names moved ends with ``__getattr__ = moved_names(__name__, {...})``: importing
an old name still works, warns with ``DeprecationWarning`` and returns the new object, which is
imported only then (so an alias never makes its module import more than before).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def moved_names(module: str, targets: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` mapping each old name to its new ``"package.module:attr"``."""

    def module_getattr(name: str) -> Any:
        if name not in targets:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, _, attr = targets[name].partition(":")
        warnings.warn(
            f"{module}.{name} is deprecated and will be removed; use {where}.{attr}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(where), attr)

    return module_getattr
