"""The numbers DocScope's ``scripts/summarize_eval.py`` prints, from our summaries.

``summarize_eval.py`` reads the four score files of one model and prints::

    {"infer": {"n"},
     "pages": {"n", "macro": {precision, recall, f1}, "micro": {precision, recall, f1, tp, fp, fn}},
     "bbox": {"n", "by_label"}, "facts": {"n", "by_label"},
     "answer": {"n_judged", "n_correct", "accuracy", "n_with_answer_tag", "n_total"}}

Each official-profile aggregate keeps its block as the table ``official_summary``;
:func:`official_summary` puts them together for one grid cell (``pages`` with ``{"n": 0}``
and the other blocks empty when that stage was not scored with the official profile).
``python -m evaluation.docscope.official_summary RUN_DIR`` prints it for every grid cell of a
scored run, to set beside the output of ``summarize_eval.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluation.docscope.profiles import OFFICIAL, OFFICIAL_SUFFIX
from evaluation.schemas import GroupSummary, Summary

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
        if group.tables.get(f"{name}.profile") == OFFICIAL:
            block = group.tables.get(f"{name}.official_summary")
            if isinstance(block, dict):
                return block
    return None


def official_summary(group: GroupSummary) -> dict[str, Any]:
    """``summarize_eval.py``'s output for one grid cell (``infer.n``: items scored)."""
    out: dict[str, Any] = {"infer": {"n": group.items}}
    for key, stage in _BLOCKS.items():
        block = _block(group, stage)
        out[key] = block if block is not None else dict(_EMPTY[key])
    return out


def run_official_summaries(run_dir: Path) -> dict[str, dict[str, Any]]:
    """``{grid cell: official summary}`` from a scored run's ``summary.json``."""
    data = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    summary = Summary.model_validate(data.get("scoring") or {})
    return {name: official_summary(group) for name, group in summary.groups.items()}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m evaluation.docscope.official_summary RUN_DIR", file=sys.stderr)
        return 2
    try:
        out = run_official_summaries(Path(args[0]))
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
