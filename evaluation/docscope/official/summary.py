"""The numbers DocScope's ``scripts/summarize_eval.py`` prints, from our summaries.

``summarize_eval.py`` reads the four score files of one model and prints::

    {"infer": {"n"},
     "pages": {"n", "macro": {precision, recall, f1}, "micro": {precision, recall, f1, tp, fp, fn}},
     "bbox": {"n", "by_label"}, "facts": {"n", "by_label"},
     "answer": {"n_judged", "n_correct", "accuracy", "n_with_answer_tag", "n_total"}}

Each official-profile aggregate keeps its block as the table ``official_summary``;
:func:`official_summary` puts them together for one grid cell (``pages`` with ``{"n": 0}``
and the other blocks empty when that stage was not scored with the official profile).
``infer.n`` is the number of JSON lines of the imported ``infer.jsonl`` (recorded by
``scanrag import docscope-infer``), else the number of items scored.
``python -m scanrag.evaluation.docscope.official.summary RUN_DIR`` prints it for every grid cell of
a scored run; ``scanrag score`` prints it after its table when a DocScope stage was scored with
the official profile.

The blocks are ``summarize_eval.py``'s only over its population: every record of an
``infer.jsonl`` imported with ``--profile official`` (samples of the official profile).
Official scorers (``pages_official`` ...) may score any run, a paper-profile import say, whose
items are another population (one per question, no repeats, no unknown ids): then
:func:`population` names it, ``scanrag score`` warns and titles the block with it, and the
module's command warns on stderr. The numbers are never presented as the released ones.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scanrag.evaluation.docscope.profiles import (
    OFFICIAL_NAME,
    OFFICIAL_SUFFIX,
    PAPER_NAME,
    SAMPLE_KEY,
)
from scanrag.evaluation.schemas import GroupSummary, Summary
from scanrag.rundir import RunDir, RunDirError
from scanrag.schemas import Sample

RELEASED_TITLE = "DocScope official summary (as summarize_eval.py prints it)"
REIMPORT = "scanrag import docscope-infer --profile official"

_BLOCKS = {"pages": "pages", "bbox": "region", "facts": "fact", "answer": "answer"}
_EMPTY: dict[str, dict[str, Any]] = {
    "pages": {"n": 0},
    "bbox": {"n": 0, "by_label": {}},
    "facts": {"n": 0, "by_label": {}},
    "answer": {
        "n_judged": 0,
        "n_correct": 0,
        "accuracy": 0.0,
        "n_with_answer_tag": 0,
        "n_total": 0,
    },
}


def _block(group: GroupSummary, stage: str) -> dict[str, Any] | None:
    for name in (stage + OFFICIAL_SUFFIX, stage):
        if group.tables.get(f"{name}.profile") == OFFICIAL_NAME:
            block = group.tables.get(f"{name}.official_summary")
            if isinstance(block, dict):
                return block
    return None


def has_official_blocks(group: GroupSummary) -> bool:
    """Whether any DocScope stage of the grid cell was summarized with the official profile."""
    return any(_block(group, stage) is not None for stage in _BLOCKS.values())


def official_summary(group: GroupSummary, infer_lines: int | None = None) -> dict[str, Any]:
    """``summarize_eval.py``'s output for one grid cell (``infer.n``: ``infer_lines`` when
    known, else the items scored)."""
    out: dict[str, Any] = {"infer": {"n": infer_lines if infer_lines is not None else group.items}}
    for key, stage in _BLOCKS.items():
        block = _block(group, stage)
        out[key] = block if block is not None else dict(_EMPTY[key])
    return out


def infer_lines(manifest: Mapping[str, Any]) -> dict[str, int]:
    """Grid cell → JSON lines of its imported ``infer.jsonl`` (an imported run's manifest)."""
    infer = manifest.get("infer")
    keys = manifest.get("run_keys")
    if not isinstance(infer, Mapping) or not isinstance(infer.get("lines"), int):
        return {}
    if not isinstance(keys, list) or len(keys) != 1:
        return {}  # one file, several grid cells: its lines are no cell's infer.n
    return {str(keys[0]): infer["lines"]}


def population(samples: Iterable[Sample], manifest: Mapping[str, Any]) -> str | None:
    """``None`` when the run's items are the population ``summarize_eval.py`` counts (every
    sample of the official profile); else what they are, in words."""
    profiles = {str(s.metadata.get(SAMPLE_KEY) or PAPER_NAME) for s in samples}
    imported = manifest.get("profile") if manifest.get("importer") else None
    if profiles == {OFFICIAL_NAME} or (not profiles and imported == OFFICIAL_NAME):
        return None
    if imported:
        return f"a {imported}-profile import of infer.jsonl"
    if not profiles:
        return "items of an unknown population (no samples to tell)"
    return f"this run's items ({', '.join(sorted(profiles))} profile)"


def block_title(cell: str, items: str | None) -> str:
    """The title of one cell's block: the released summary's, or the population's."""
    if items is None:
        return f"{RELEASED_TITLE}, {cell}:"
    return f"DocScope official scoring of {items}, NOT summarize_eval.py's population, {cell}:"


def population_warning(items: str) -> str:
    return (
        f"warning: the official-profile summary below is computed over {items}, not the "
        "population summarize_eval.py counts (every infer.jsonl record): its n and numbers "
        f"are not the released ones; for those, import with `{REIMPORT}` and score that run"
    )


def summaries(summary: Summary, manifest: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{grid cell: official summary}`` of the cells with an official-profile stage."""
    lines = infer_lines(manifest)
    return {
        name: official_summary(group, lines.get(name))
        for name, group in summary.groups.items()
        if has_official_blocks(group)
    }


def run_official_summaries(run_dir: Path) -> dict[str, dict[str, Any]]:
    """``{grid cell: official summary}`` from a scored run's summary and manifest (every grid
    cell, official stages or not)."""
    run = RunDir.open(run_dir, need=(RunDir.SUMMARY,))
    summary = Summary.model_validate(run.summary().get("scoring") or {})
    lines = infer_lines(run.manifest())
    return {
        name: official_summary(group, lines.get(name)) for name, group in summary.groups.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print(
            "usage: python -m scanrag.evaluation.docscope.official.summary RUN_DIR", file=sys.stderr
        )
        return 2
    try:
        out = run_official_summaries(Path(args[0]))
    except (OSError, ValueError, RunDirError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    run = RunDir(Path(args[0]))
    try:
        samples = run.samples()[0]
    except (OSError, ValueError, RunDirError):  # a summary alone: the manifest tells, if any
        samples = []
    items = population(samples, run.manifest())
    if items is not None:
        print(population_warning(items), file=sys.stderr)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
