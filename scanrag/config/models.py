"""Model references in a config: a plain model string or a model entry (see
:class:`scanrag.llm.endpoints.ModelEntry`), and the table of entries a run's gateway needs.

Roles (``models.agents``, ``models.judges``, a strategy's ``models``, ``grid.models`` values)
take either form. ``models.entries`` names entries once; a role whose string is such a name
uses that entry. Each entry is known to the rest of the run by its ``ref`` (``name``, else the
model string): run keys, trajectories and the ledger carry that string, and the gateway looks
the entry up by it. One ref must mean one entry throughout a config.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationError

from scanrag.llm.endpoints import ModelEntry, is_plain


def _coerce(value: Any) -> Any:
    """A mapping becomes a ``ModelEntry`` here, so errors name its keys (not a union's arms)."""
    if not isinstance(value, Mapping):
        return value
    allowed = set(ModelEntry.model_fields)
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        keys = ", ".join(repr(k) for k in unknown)
        raise ValueError(f"unknown key(s) {keys}; allowed keys: {', '.join(sorted(allowed))}")
    try:
        return ModelEntry.model_validate(dict(value))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'entry'}: "
            + e["msg"].removeprefix("Value error, ")
            for e in exc.errors()
        )
        raise ValueError(problems) from None


ModelRef = Annotated[str | ModelEntry, BeforeValidator(_coerce)]
"""A role's model: a model string, a ``models.entries`` name, or an inline entry."""


def ref_of(value: str | ModelEntry) -> str:
    """The string a role carries through the run for ``value``."""
    return value if isinstance(value, str) else value.ref


def check_role_strings(roles: Mapping[str, str | ModelEntry]) -> None:
    empty = [role for role, value in roles.items() if isinstance(value, str) and not value.strip()]
    if empty:
        raise ValueError(f"empty model name for role(s) {empty}")


def name_entries(entries: Mapping[str, ModelEntry]) -> dict[str, ModelEntry]:
    """``models.entries`` with each entry's ``name`` set to its key (another name is an error)."""
    out: dict[str, ModelEntry] = {}
    for key, entry in entries.items():
        if not key.strip():
            raise ValueError("an entry under models.entries has an empty name")
        if entry.name is not None and entry.name != key:
            raise ValueError(f"entries.{key}: its name {entry.name!r} differs from its key")
        out[key] = entry if entry.name == key else entry.model_copy(update={"name": key})
    return out


def collect_entries(
    named: Mapping[str, ModelEntry], uses: Iterable[tuple[str, str | ModelEntry]]
) -> dict[str, ModelEntry]:
    """ref → entry for every entry a config names or uses (``uses``: (where, value) pairs).

    A string that names a ``models.entries`` entry refers to it; other strings are plain model
    strings and need no entry. Two different entries under one ref raise ``ValueError`` naming
    both places.
    """
    table: dict[str, tuple[str, ModelEntry]] = {
        ref: (f"models.entries.{ref}", entry) for ref, entry in named.items()
    }
    for where, value in uses:
        if isinstance(value, str):
            continue
        ref = value.ref
        if ref in table and table[ref][1] != value:
            first = table[ref][0]
            raise ValueError(
                f"{where}: model {ref!r} is configured differently at {first}; give one of "
                "them its own 'name' (or define it once under models.entries and refer to it)"
            )
        table.setdefault(ref, (where, value))
    return {
        ref: entry
        for ref, (_, entry) in table.items()
        if not (is_plain(entry) and entry.ref == entry.model)  # a bare model string needs none
    }


__all__ = [
    "ModelRef",
    "check_role_strings",
    "collect_entries",
    "name_entries",
    "ref_of",
]
