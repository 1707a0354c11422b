"""What differs between the resolved configs of the runs a report compares.

Two runs of one experiment name (``runs/…_demo`` twice) look alike in every table; their
``config.resolved.yaml`` says under which conditions each ran. Each config is flattened into
dotted keys — mappings by key, lists of named entries (``datasets``, ``strategies``) by their
``label`` or ``name`` (``strategies[topk_rag].params.k``), other lists whole — and every key
whose value is not the same in every run is listed, with each run's value (``—``: the run's
config does not set it). ``description`` is left out: it says nothing about how a run ran.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from scanrag.evaluation.report.data import RunData
from scanrag.evaluation.report.html import esc, table

IGNORED = frozenset({"description"})
ABSENT = "—"


def flatten(value: Any, prefix: str = "", entries: dict[str, Any] | None = None) -> dict[str, Any]:
    """``value`` as ``{dotted key: leaf value}`` (see the module docstring); ``entries``, when
    given, receives each named list entry by its key (``strategies[topk_rag]``)."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not prefix and key in IGNORED:
                continue
            out |= flatten(item, f"{prefix}.{key}" if prefix else str(key), entries)
        return out or {prefix: {}}
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        names = _entry_names(value)
        if names is not None:
            out = {}
            for name, item in zip(names, value, strict=True):
                if entries is not None:
                    entries[f"{prefix}[{name}]"] = item
                out |= flatten(item, f"{prefix}[{name}]", entries)
            return out
    return {prefix: value}


def _entry_names(entries: Sequence[Mapping[str, Any]]) -> list[str] | None:
    """Each entry's ``label`` (else ``name``) when they tell the entries apart."""
    for field in ("label", "name"):
        names = [str(e.get(field) or e.get("name") or "") for e in entries]
        if all(names) and len(set(names)) == len(names):
            return names
    return None


def config_differences(configs: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[str]]]:
    """``(key, each config's value as text)`` for every key whose value is not the same in
    every config. A named entry (a strategy, a dataset) that only some configs have is one
    row, the whole entry, rather than one row per key inside it."""
    entries: list[dict[str, Any]] = [{} for _ in configs]
    flat = [flatten(config, "", found) for config, found in zip(configs, entries, strict=True)]
    keys = list(dict.fromkeys(k for config in flat for k in config))
    partial = {
        name: [_text(found[name]) if name in found else ABSENT for found in entries]
        for name in dict.fromkeys(n for found in entries for n in found)
        if not all(name in found for found in entries)
    }
    rows: list[tuple[str, list[str]]] = []
    for key in keys:
        entry = next((name for name in partial if _inside(key, name)), None)
        if entry is not None:
            if all(row[0] != entry for row in rows):
                rows.append((entry, partial[entry]))
            continue
        values = [_text(config[key]) if key in config else ABSENT for config in flat]
        if len(set(values)) > 1:
            rows.append((key, values))
    return rows


def _inside(key: str, entry: str) -> bool:
    """Whether ``key`` is ``entry`` or a key within it."""
    return key == entry or (key.startswith(entry) and key[len(entry)] in ".[")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def config_diff_section(runs: Sequence[RunData]) -> str:
    """The report's section: the differing keys, one column per run (empty for one run)."""
    if len(runs) < 2:
        return ""
    rows = config_differences([run.config for run in runs])
    title = '<h2 id="config-diff">Config differences</h2>'
    if not rows:
        return title + '<p class="muted">The runs\' resolved configs are the same.</p>'
    headers = ["config key", *(run.name for run in runs)]
    cells = [[esc(key), *(esc(v) for v in values)] for key, values in rows]
    note = (
        f'<p class="muted">{len(rows)} key(s) of config.resolved.yaml differ between the '
        "runs (—: not set in that run).</p>"
    )
    return title + note + table(headers, cells, table_id="config-diff-table")


def diff_lines(configs: Sequence[Mapping[str, Any]], limit: int = 20) -> list[str]:
    """The differences as console lines (``  key: a | b``), at most ``limit`` of them."""
    rows = config_differences(configs)
    lines = [f"  {key}: {' | '.join(values)}" for key, values in rows[:limit]]
    if len(rows) > limit:
        lines.append(f"  ... and {len(rows) - limit} more (see the report)")
    return lines
