"""The trajectory viewer: one static page per question, one section per grid cell.

A section shows the cell's outcome (correct, wrong, unanswered, or the kind of error), answer,
time and cost, the raw model reply, its page images with the gold boxes in green and the
predicted boxes in red (gold pages first, then predicted ones), each answer sentence with its
faithfulness verdict when a faithfulness row exists, every scorer's status with the judges'
reasons and raw replies, the parsed citations, and the recorded steps with each model call's
tokens, cost, latency, prompt and reply (:mod:`scanrag.evaluation.report.viewer_calls`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scanrag.evaluation.outcomes import Outcome
from scanrag.evaluation.report.breakdown import breakdown_fields
from scanrag.evaluation.report.conditions import decision_for, reductions_html, replays_html
from scanrag.evaluation.report.data import Group
from scanrag.evaluation.report.html import esc, img, outcome_badge, short, table
from scanrag.evaluation.report.images import PageImages
from scanrag.evaluation.report.measures import item_seconds
from scanrag.evaluation.report.viewer_calls import (
    final_prompt,
    judge_replies,
    raw_reply,
    steps_html,
)
from scanrag.schemas import Sample, Trajectory

REASON_KEYS = ("reason", "reasons", "explanation", "rationale", "justification", "execution")


def judge_reasons(parsed: Any) -> list[str]:
    """Readable reasons found anywhere in a judge's parsed reply, tagged with the item's id
    and label (``GOLD[1] covered: ...``, ``consistent=True: ...``)."""
    out: list[str] = []
    if isinstance(parsed, dict):
        tags = [
            str(parsed[k]) for k in ("id", "label", "verdict") if parsed.get(k) not in (None, "")
        ]
        if "consistent" in parsed:
            tags.append(f"consistent={parsed['consistent']}")
        for key in REASON_KEYS:
            value = parsed.get(key)
            if isinstance(value, str) and value.strip():
                out.append((" ".join(tags) + ": " if tags else "") + value.strip())
        for value in parsed.values():
            if isinstance(value, (dict, list)):
                out += judge_reasons(value)
    elif isinstance(parsed, list):
        for item in parsed:
            out += judge_reasons(item)
    return out


def _pages_to_show(sample: Sample, trajectory: Trajectory, limit: int) -> list[int]:
    pages = list(dict.fromkeys([*sample.gold_pages, *sorted(trajectory.pages)]))
    return pages[:limit]


def _images(
    group: Group, sample: Sample, traj: Trajectory, images: PageImages, qname: str, limit: int
) -> str:
    from scanrag.evaluation.docscope.common import doc_scope, gold_regions_by_page, predicted_boxes

    scope = doc_scope(traj, sample)
    gold_by_page = gold_regions_by_page(sample, scope)
    figures = []
    for page in _pages_to_show(sample, traj, limit):
        gold = [r.bbox for r in gold_by_page.get(page, [])]
        predicted = predicted_boxes(traj, page, scope)
        name = f"{qname}_{group.label}_p{page}"
        src = images.overlay(group.run, sample.primary_doc, page, gold, predicted.valid, name)
        role = ("gold" if page in sample.gold_pages else "") + (
            " predicted" if page in traj.pages else ""
        )
        caption = (
            f"page {page} ({role.strip() or 'shown'}): {len(gold)} gold box(es) green, "
            f"{len(predicted.valid)} predicted red"
            + (f", {predicted.invalid} invalid" if predicted.invalid else "")
        )
        body = img(f"../{src}", f"page {page}", cls="overlay") if src else "(not rendered)"
        figures.append(f"<figure>{body}<figcaption>{esc(caption)}</figcaption></figure>")
    if not figures:
        return '<p class="muted">No gold or predicted pages to show.</p>'
    return f'<div class="pages">{"".join(figures)}</div>'


def _sentences(group: Group, sample_id: str) -> str:
    row = group.row("faithfulness", sample_id)
    if row is None:
        return ""
    sentences = row.details.get("sentences") or []
    if not sentences:
        return f'<p class="muted">faithfulness: {esc(row.status)} {esc(row.reason or "")}</p>'
    items = []
    for s in sentences:
        label = s.get("label")
        cls = f"label-{str(label).replace(' ', '-')}" if label else "na"
        extra = f" ({s['error_type']})" if s.get("error_type") else ""
        status = "" if label else f" — {s.get('status')}"
        items.append(
            f'<li><span class="{esc(cls)}">[{esc(label or "not judged")}{esc(extra)}]</span> '
            f"{esc(s.get('text'))}{esc(status)}</li>"
        )
    return "<h4>Answer sentences and faithfulness</h4><ol>" + "".join(items) + "</ol>"


def _scores(group: Group, sample_id: str) -> str:
    rows = []
    for scorer in sorted(group.rows):
        row = group.rows[scorer].get(sample_id)
        if row is None:
            continue
        metrics = ", ".join(
            f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in row.metrics.items()
            if v is not None
        )
        reasons = [r for record in row.judges for r in judge_reasons(record.parsed)]
        reasons += [f"{r.key or r.role}: {r.error}" for r in row.judges if r.error]
        text = "<br>".join(esc(short(r, 600)) for r in reasons[:12]) or esc(row.reason or "")
        rows.append([esc(scorer), esc(row.status), esc(metrics), text + judge_replies(row)])
    if not rows:
        return '<p class="muted">No score rows for this item.</p>'
    return "<h4>Scores and judge reasons</h4>" + table(
        ["scorer", "status", "metrics", "reasons"], rows
    )


def _citations(traj: Trajectory) -> str:
    if not traj.citations:
        return ""
    rows = [
        [
            esc(short(c.sentence, 300)),
            esc(c.page),
            esc(c.bbox),
            '<span class="ok">valid</span>'
            if c.valid
            else f'<span class="bad">{esc(c.reason)}</span>',
        ]
        for c in traj.citations[:40]
    ]
    return "<h4>Citations</h4>" + table(["sentence", "page", "bbox", "valid"], rows)


def _spend(traj: Trajectory) -> str:
    wall, model, wait = item_seconds(traj)
    usage = traj.total_usage
    time = f"{wall:.2f} s wall" + (
        f" ({model:.2f} s model, {wait:.2f} s waiting)" if model is not None else ""
    )
    return (
        f"{time}; {usage.calls} call(s), {usage.prompt_tokens} + {usage.completion_tokens} "
        f"tokens, ${usage.cost_usd:.5f}"
    )


def _status(traj: Trajectory, outcome: Outcome) -> str:
    badge = outcome_badge(outcome.value, str(traj.status), "; ".join(traj.errors) or None)
    text = esc(traj.status) + (f": {esc('; '.join(traj.errors))}" if traj.errors else "")
    parse = getattr(traj, "parse", None)  # how the reply was read, where recorded
    return f"{badge} {text}" + (
        f' <span class="muted">(reply read: {esc(parse)})</span>' if parse else ""
    )


def item_warnings(traj: Trajectory) -> str:
    """The warnings the runner recorded for the item (``metadata["warnings"]``, e.g. a PDF
    MuPDF had to repair), one per line; ``""`` when none."""
    warnings = traj.metadata.get("warnings") or []
    if isinstance(warnings, str):
        warnings = [warnings]
    return "<br>".join(esc(w) for w in warnings)


def group_section(
    group: Group,
    sample: Sample,
    outcome: Outcome,
    images: PageImages,
    qname: str,
    max_pages: int,
) -> str:
    traj = group.trajectories.get(sample.id)
    if traj is None:
        return ""
    facts = [
        ("outcome", _status(traj, outcome)),
        ("answer", esc(traj.answer) if traj.answer else '<span class="na">(none)</span>'),
        ("reply read as", esc(traj.parse or "none")),
        ("predicted pages", esc(", ".join(map(str, traj.pages)) or "none")),
        ("regions / facts", esc(f"{len(traj.regions)} / {len(traj.facts)}")),
        ("time and cost", esc(_spend(traj))),
        ("input reductions", reductions_html(traj)),
    ]
    decision = decision_for(group, sample.id)
    if decision is not None:
        facts.append(("✓/✗ decided by", esc(decision.scorer)))
    replayed = replays_html(traj)
    if replayed:
        facts.append(("replayed", replayed))
    warnings = item_warnings(traj)
    if warnings:
        facts.append(("warnings", warnings))
    header = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)
    return (
        f'<section class="group" id="cell-{esc(group.label)}"><h3>{esc(group.label)}</h3>'
        f"<table>{header}</table>"
        + raw_reply(traj)
        + final_prompt(traj, sample.gold_pages)
        + "<h4>Gold and predicted pages</h4>"
        + _images(group, sample, traj, images, qname, max_pages)
        + _sentences(group, sample.id)
        + _scores(group, sample.id)
        + _citations(traj)
        + steps_html(traj)
        + "</section>"
    )


def question_body(
    sample: Sample,
    groups: Sequence[Group],
    outcomes: dict[str, dict[str, Outcome]],
    images: PageImages,
    qname: str,
    max_pages: int,
) -> str:
    info = [
        ("question", esc(sample.question)),
        ("gold answer", esc(sample.answer) + ("" if sample.answerable else " (unanswerable)")),
        ("document", esc(", ".join(sample.doc_ids))),
        ("gold pages", esc(", ".join(map(str, sample.gold_pages)) or "none")),
        ("task", esc(sample.task) + (f" / {esc(sample.category)}" if sample.category else "")),
    ]
    fields = breakdown_fields(sample)
    kinds = [
        ("document type", fields.get("doc_type")),
        ("evidence sources", ", ".join(fields.get("evidence_sources") or []) or None),
        ("answer format", fields.get("answer_format")),
    ]
    info += [(name, esc(value)) for name, value in kinds if value]
    if sample.gold_explanation:
        info.append(("gold explanation", esc(sample.gold_explanation)))
    header = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in info)
    sections = "".join(
        group_section(
            g,
            sample,
            outcomes.get(g.label, {}).get(sample.id, Outcome.UNSCORED),
            images,
            qname,
            max_pages,
        )
        for g in groups
    )
    return f"<h1>{esc(sample.id)}</h1><table>{header}</table>{sections}"
