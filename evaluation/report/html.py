"""Small HTML building blocks for the static report: escaping, tables, images, outcome badges,
the page shell.

Every text that comes from a run (questions, answers, model output, prompts, judge replies)
goes through :func:`esc`. Pages carry their CSS and script inline and reference images by
relative path, so the report works offline from the file system with no external resource.
Each ``<img>`` sets ``data-loaded`` on load (``"1"``) or on error (``"error"``), which makes a
loaded image visible in a DOM dump.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px;
       color: #1d1d1f; background: #fff; }
p, .warn, .controls { max-width: 110ch; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ddd; }
h3 { font-size: 16px; margin: 18px 0 6px; } h4 { font-size: 14px; margin: 12px 0 4px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #d0d0d0; padding: 4px 8px; vertical-align: top; text-align: left; }
th { background: #f3f3f5; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.baseline td { background: #fffbe6; }
.ok { color: #0a7d00; font-weight: 600; } .bad { color: #c00000; font-weight: 600; }
.na { color: #888; } .muted { color: #666; font-size: 12px; }
.pages { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; } figure img { border: 1px solid #ccc; max-width: 420px; display: block; }
figcaption { font-size: 12px; color: #555; }
.plots img { max-width: 100%; border: 1px solid #eee; }
pre { background: #f6f6f8; padding: 6px; white-space: pre-wrap; word-break: break-word;
      max-height: 320px; overflow: auto; font-size: 12px; }
section.group { border: 1px solid #e2e2e2; border-radius: 6px; padding: 8px 14px;
                margin: 14px 0; }
.label-Attributable { color: #0a7d00; } .label-Contradicted { color: #c00000; }
.label-Not-Attributable { color: #b35900; }
.warn { background: #fff4e5; border-left: 4px solid #f0a000; padding: 6px 10px; }
nav a { margin-right: 12px; }
.scroll { overflow-x: auto; } .ci { color: #666; font-size: 11px; } .sig { color: #b00000; }
table[id^="comparison"] { font-size: 13px; }
table[id^="comparison"] th, table[id^="comparison"] td { padding: 4px 5px; }
table[id^="comparison"] th { max-width: 120px; overflow-wrap: anywhere; }
h3.family { font-size: 14px; color: #444; margin: 14px 0 2px; }
.o { display: inline-block; min-width: 1.4em; text-align: center; border-radius: 4px;
     padding: 0 4px; font-weight: 600; white-space: nowrap; }
.o-correct { color: #0a7d00; } .o-wrong { color: #c00000; }
.o-unanswered { color: #8a5a00; background: #fff1cc; }
.o-error { color: #fff; background: #6b3fa0; font-size: 12px; }
.o-unscored { color: #888; }
.tag { font-size: 11px; border-radius: 3px; padding: 0 3px; }
.tag-gold { color: #0a7d00; border: 1px solid #0a7d00; }
.tag-predicted { color: #c00000; border: 1px solid #c00000; }
.o-degraded { color: #8a4b00; background: #ffe7c2; }
.errs { color: #6b3fa0; font-weight: 600; } .nowrap { white-space: nowrap; }
.zero { opacity: 0.35; filter: grayscale(1); }
details.call, details.step { margin: 3px 0; } details.page { margin: 2px 0 2px 12px; }
summary { cursor: pointer; } .kv { color: #444; font-size: 12px; }
.controls { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; margin: 8px 0; }
.controls input, .controls select { font: inherit; padding: 2px 6px; }
th.sortable { cursor: pointer; user-select: none; }
th[data-dir="asc"]::after { content: " ▲"; } th[data-dir="desc"]::after { content: " ▼"; }
"""


def esc(value: Any) -> str:
    """Escaped text; ``None`` becomes an em dash."""
    return "—" if value is None else html.escape(str(value), quote=True)


def short(text: str | None, limit: int) -> str:
    if text is None:
        return ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compact_json(value: Any, limit: int = 1200) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str, indent=1)
    except (TypeError, ValueError):
        text = str(value)
    return short(text, limit)


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    table_id: str | None = None,
    row_classes: Sequence[str] | None = None,
    breakable: bool = False,
) -> str:
    """A table from plain-text headers and cells that are already HTML. ``breakable`` lets
    long dotted headers (``answer.accuracy``) wrap after each dot."""
    attr = f' id="{esc(table_id)}"' if table_id else ""
    wrap = (lambda h: esc(h).replace(".", ".<wbr>").replace("_", "_<wbr>")) if breakable else esc
    head = "".join(f"<th>{wrap(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cls = row_classes[i] if row_classes and row_classes[i] else ""
        cls_attr = f' class="{esc(cls)}"' if cls else ""
        body.append(f"<tr{cls_attr}>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def num(text: str) -> str:
    """A numeric cell (right-aligned): returns the inner HTML with a marker class."""
    return f'<span class="num">{esc(text)}</span>'


def img(src: str, alt: str, *, cls: str | None = None) -> str:
    cls_attr = f' class="{esc(cls)}"' if cls else ""
    return (
        f'<img src="{esc(src)}" alt="{esc(alt)}"{cls_attr} loading="eager" '
        "onload=\"this.dataset.loaded='1'\" onerror=\"this.dataset.loaded='error'\">"
    )


OUTCOME_MARKS = {
    "correct": ("✓", "correct"),
    "wrong": ("✗", "wrong answer"),
    "unanswered": ("∅", "unanswered: the item gave no answer"),
    "error": ("⚠", "error"),
    "unscored": ("·", "not scored"),
}


def outcome_badge(outcome: str, status: str | None = None, detail: str | None = None) -> str:
    """A mark that tells correct, wrong, unanswered, error (with its kind, when ``status`` is
    given) and unscored apart, by symbol, color and tooltip."""
    from scanrag.evaluation.outcomes import status_kind

    mark, title = OUTCOME_MARKS.get(outcome, ("?", outcome))
    text = mark
    if outcome == "error" and status is not None:
        kind = status_kind(status)
        text = f"{mark} {kind.short}"
        title = f"error: {kind.status} — {kind.meaning}"
    if detail:
        title += f": {short(detail, 300)}"
    return f'<span class="o o-{esc(outcome)}" title="{esc(title)}">{esc(text)}</span>'


def page(title: str, body: str, *, nav: str = "", script: str = "") -> str:
    """A complete HTML document with inline CSS (and ``script``) and no external resources."""
    tail = f"<script>{script}</script>" if script else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body>{nav}{body}{tail}</body></html>\n"
    )
