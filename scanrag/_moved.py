"""Import aliases for public modules that moved out of the kernel; kept for one release.

An alias module sets ``__getattr__ = forward(__name__, "new.module")``: a name read from it is
imported from the new module on first use (with a ``DeprecationWarning``), so importing
``scanrag`` never imports the packages above it.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable
from typing import Any

# old module → new module; the README lists the same table.
MOVED = {
    "scanrag.datasets.mmlongbench": "loaders.mmlongbench",
    "scanrag.datasets.financebench": "loaders.financebench",
    "scanrag.datasets.docscope": "loaders.docscope",
    "scanrag.datasets.scholscan": "loaders.scholscan",
    "scanrag.datasets.sinbench": "loaders.sinbench",
    "scanrag.synth": "synth",
    "scanrag.synth.corpus": "synth.corpus",
    "scanrag.synth.dataset": "synth.dataset",
}


def forward(old: str, new: str | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` that reads names from ``new`` (default: ``MOVED[old]``)."""
    target = new or MOVED[old]

    def moved_attribute(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(target), name)
        warnings.warn(
            f"{old} moved to {target}; the alias goes away in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        vars(sys.modules[old])[name] = value  # warn once per name
        return value

    return moved_attribute
