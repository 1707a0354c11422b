"""The sections of the report's ``index.html``: runs, comparison, plots, question list.

The question list can be filtered, sorted and searched in the browser: a small inline script
(:data:`QUESTIONS_JS`, no network, no library) hides rows that do not match the search text
or the chosen outcome in the chosen cell, and sorts by any column on a click on its header.
Each outcome cell carries ``data-outcome`` and ``data-status``, so error kinds can be picked
out too. The view is kept in the page address (``index.html#outcome=error&sort=1:desc``), so
a filtered, sorted list can be bookmarked or passed on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scanrag.decider import describe_decider
from scanrag.evaluation.outcomes import Outcome, status_kind
from scanrag.evaluation.report.breakdown import breakdown_fields
from scanrag.evaluation.report.conditions import (
    conditions_html,
    decider_setting,
    degraded_badge,
    is_degraded,
)
from scanrag.evaluation.report.data import Group, RunData
from scanrag.evaluation.report.html import esc, img, outcome_badge, short, table
from scanrag.evaluation.report.measures import OutcomeCounts
from scanrag.evaluation.report.table import (
    COST_COLUMNS,
    ComparisonTable,
    MetricCell,
    cost_text,
    fmt,
    legend,
)
from scanrag.evaluation.stats import interval_text

OUTCOME_RANK = {"correct": 0, "wrong": 1, "unanswered": 2, "error": 3, "unscored": 4}


def runs_section(runs: Sequence[RunData]) -> str:
    rows = []
    for run in runs:
        counts = run.summary.get("counts") or {}
        models = (run.manifest.get("models") or {}).get("agents")
        rows.append(
            [
                esc(run.name),
                esc(run.path),
                esc(run.summary.get("complete", "unknown")),
                esc(counts.get("trajectories", sum(len(g.trajectories) for g in run.groups))),
                esc(len(run.samples)),
                esc(", ".join(models) if isinstance(models, list) else models),
                esc(run.summary.get("stop_reason")),
                esc(describe_decider(decider_setting(run.groups[0])) if run.groups else "—"),
            ]
        )
    headers = ["run", "folder", "complete", "trajectories", "samples", "agent models", "stopped"]
    headers.append("✓/✗ decided by")
    return "<h2>Runs</h2>" + table(headers, rows, table_id="runs")


def metric_html(cell: MetricCell | None) -> str:
    """Value, its interval, n and errors on a second line, the significance marker, a tooltip
    with Δ and p."""
    if cell is None or cell.value is None:
        return '<span class="na">—</span>'
    interval = interval_text(cell.low, cell.high, cell.n)
    interval = "" if interval == "—" else f"{interval} "
    errors = f' · <span class="errs">{cell.errors} err</span>' if cell.errors else ""
    second = f'<br><span class="ci">{interval}n={cell.n}</span>{errors}'
    marker = f' <span class="sig">{esc(cell.marker)}</span>' if cell.marker else ""
    test = cell.vs_baseline
    title = ""
    if test is not None and test.diff is not None:
        p = "—" if test.p_value is None else f"{test.p_value:.4f}"
        text = f"vs baseline: Δ={test.diff:+.3f} [{fmt(test.low)}, {fmt(test.high)}], p={p}"
        title = f' title="{esc(text)}, n={test.n}"'
    return f'<span class="num"{title}><b>{fmt(cell.value)}</b>{marker}{second}</span>'


def outcomes_html(counts: OutcomeCounts) -> str:
    """``4 ✓ 1 ✗ 0 ∅ 1 ⚠`` as badges, the errors by kind below."""
    parts = [
        f'<span class="{"zero" if getattr(counts, name) == 0 else ""}">'
        f"{getattr(counts, name)}&nbsp;{outcome_badge(name)}</span>"
        for name in ("correct", "wrong", "unanswered", "error")
    ]
    if counts.unscored:
        parts.append(f"{counts.unscored}&nbsp;{outcome_badge('unscored')}")
    kinds = "<br>".join(f"{n} {esc(kind)}" for kind, n in counts.errors_by_kind.items())
    below = f'<br><span class="errs">{kinds}</span>' if kinds else ""
    return '<span class="nowrap">' + " ".join(parts) + "</span>" + below


ANSWER_SCORERS = ("answer", "mmlongbench", "financebench", "scholscan", "sinbench")
"""Scorer name prefixes whose metrics go in the first comparison table (answers); the other
metrics go in the second (evidence: pages, retrieval, regions, facts, faithfulness)."""


def metric_families(metrics: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``metrics`` in the report's two metric tables, in their order; empty ones left out."""
    answers = [m for m in metrics if m.split(".", 1)[0].startswith(ANSWER_SCORERS)]
    evidence = [m for m in metrics if m not in answers]
    return [(name, ms) for name, ms in (("answers", answers), ("evidence", evidence)) if ms]


def comparison_section(data: ComparisonTable) -> str:
    """The comparison as up to three tables that each fit a 1,280 px window: outcomes and
    answer metrics, evidence metrics, cost and time (each row led by its grid cell)."""
    classes = ["baseline" if r.is_baseline else "" for r in data.rows]
    tables = []
    families = metric_families(data.metrics) or [("answers", [])]  # outcomes come first
    for n, (family, metrics) in enumerate(families):
        headers = ["grid cell", *(["strategy", "outcomes"] if n == 0 else [])]
        headers += [data.labels.get(m, m) for m in metrics]
        rows = []
        for row in data.rows:
            cells = [esc(row.title)]
            if n == 0:
                extra = conditions_html(row.conditions) if row.conditions is not None else ""
                cells += [esc(row.strategy), outcomes_html(row.outcomes) + extra]
            rows.append(cells + [metric_html(row.metrics.get(m)) for m in metrics])
        tables.append((family, headers, rows))
    cost_rows = [
        [esc(row.title)]
        + [f'<span class="num">{esc(cost_text(row.cost, a, d))}</span>' for a, _, d in COST_COLUMNS]
        for row in data.rows
    ]
    tables.append(("cost", ["grid cell", *(label for _, label, _ in COST_COLUMNS)], cost_rows))
    html_tables = [
        f'<h3 class="family">{esc(FAMILY_TITLES[family])}</h3><div class="scroll">'
        + table(
            headers,
            rows,
            table_id="comparison" if n == 0 else f"comparison-{family}",
            row_classes=classes,
            breakable=True,
        )
        + "</div>"
        for n, (family, headers, rows) in enumerate(tables)
    ]
    links = (
        '<p class="muted">Also as <a href="comparison.md">Markdown</a>, '
        '<a href="comparison.csv">CSV</a> (with dataset, model, retriever and parameter '
        'columns), <a href="comparison.json">JSON</a>; every item × cell × metric in '
        '<a href="items_long.csv">items_long.csv</a>.</p>'
    )
    note = esc(legend(data).replace(f"**{data.baseline}**", str(data.baseline)))
    return (
        '<h2 id="comparison-tables">Comparison</h2>'
        + "".join(html_tables)
        + f'<p class="muted">{note}</p>'
        + links
    )


FAMILY_TITLES = {
    "answers": "Outcomes and answers",
    "evidence": "Evidence: pages, retrieval, regions, facts",
    "cost": "Cost and time per question",
}


PLOT_TITLES = {
    "cost_latency": "Accuracy vs cost and latency",
    "breakdowns": "Accuracy by document type, evidence source, answer format, evidence pages",
    "layout": "Accuracy by evidence-layout factor",
    "funnel": "Stage funnel",
    "recall_at_k": "Retrieval recall@k",
    "oracle_ablation": "Oracle ablation",
}
PLOT_MISSING = {
    "cost_latency": "no cell has an accuracy metric",
    "breakdowns": "no scored item carries a document type, evidence source or answer format",
    "layout": "no answerable item with gold pages was scored for correctness",
    "funnel": "no stage scores (pages, regions, facts, answer) for answerable items",
    "recall_at_k": "no retrieve steps in the trajectories and no retrieval.json",
    "oracle_ablation": "no oracle strategy (oracle_pages/regions/facts) ran",
}


def plots_section(
    plots: Mapping[str, Path | None], out_dir: Path, reasons: Mapping[str, str] | None = None
) -> str:
    """The plots, and for each one not drawn why (``reasons`` by plot, else the usual one)."""
    parts = ['<h2 id="plots">Plots</h2>', '<div class="plots">']
    for name, title in PLOT_TITLES.items():
        path = plots.get(name)
        if path is None:
            why = (reasons or {}).get(name) or PLOT_MISSING[name]
            parts.append(f'<p class="muted">{esc(title)}: not drawn ({esc(why)}).</p>')
            continue
        vector = path.with_suffix(".svg")  # crisp at any width; its labels are text
        rel = (vector if vector.is_file() else path).relative_to(out_dir).as_posix()
        parts.append(f"<figure><figcaption>{esc(title)}</figcaption>{img(rel, title)}</figure>")
    return "".join(parts) + "</div>"


def _outcome_cell(group: Group, sid: str, outcome: Outcome | None) -> str:
    label = esc(group.label)
    traj = group.trajectories.get(sid)
    if traj is None or outcome is None:
        return (
            f'<td data-cell="{label}" data-outcome="" data-sort="9"><span class="na">—</span></td>'
        )
    status = str(traj.status)
    badge = outcome_badge(outcome.value, status, "; ".join(traj.errors) or None)
    badge += degraded_badge(traj)
    degraded = "1" if is_degraded(traj) else ""
    return (
        f'<td data-cell="{label}" data-outcome="{esc(outcome.value)}" '
        f'data-status="{esc(status)}" data-degraded="{degraded}" '
        f'data-sort="{OUTCOME_RANK[outcome.value]}">{badge}</td>'
    )


def _controls(groups: Sequence[Group], kinds: Sequence[str]) -> str:
    cells = "".join(f'<option value="{esc(g.label)}">{esc(g.label)}</option>' for g in groups)
    outcomes = [
        ("", "any outcome"),
        ("correct", "✓ correct"),
        ("wrong", "✗ wrong"),
        ("unanswered", "∅ unanswered"),
        ("error", "⚠ error (any kind)"),
        ("not-correct", "not correct"),
        ("unscored", "· not scored"),
        ("degraded", "◐ degraded (input reduced)"),
        *((f"kind:{k}", f"⚠ {k}") for k in kinds),
    ]
    options = "".join(f'<option value="{esc(v)}">{esc(t)}</option>' for v, t in outcomes)
    return (
        '<div class="controls">'
        '<input id="q-search" type="search" placeholder="search id, question, answer" size="34">'
        f'<label>cell <select id="q-cell"><option value="">any cell</option>{cells}</select>'
        "</label>"
        f'<label>outcome <select id="q-outcome">{options}</select></label>'
        '<span id="q-count" class="muted"></span>'
        '<span class="muted">click a column header to sort</span></div>'
    )


def questions_section(
    samples: Sequence[Any],
    pages: Mapping[str, str],
    groups: Sequence[Group],
    outcomes: Mapping[str, Mapping[str, Outcome]],
) -> str:
    headers = ["#", "id", "task", "doc type", "question", "gold answer"]
    headers += [g.label for g in groups]
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for i, sample in enumerate(samples, start=1):
        link = pages.get(sample.id)
        ident = f'<a href="{esc(link)}">{esc(sample.id)}</a>' if link else esc(sample.id)
        doc_type = breakdown_fields(sample).get("doc_type")
        answer = short(sample.answer, 60) + ("" if sample.answerable else " ∅")
        search = " ".join([sample.id, sample.question, sample.answer or ""]).lower()
        cells = [
            f'<td data-sort="{i}">{i}</td>',
            f"<td>{ident}</td>",
            f"<td>{esc(sample.task)}</td>",
            f"<td>{esc(doc_type or '')}</td>",
            f"<td>{esc(short(sample.question, 140))}</td>",
            f"<td>{esc(answer)}</td>",
        ]
        cells += [
            _outcome_cell(g, sample.id, outcomes.get(g.label, {}).get(sample.id)) for g in groups
        ]
        body.append(f'<tr data-search="{esc(search)}">' + "".join(cells) + "</tr>")
    kinds = sorted(
        {
            str(t.status)
            for g in groups
            for t in g.trajectories.values()
            if status_kind(str(t.status)).error
        }
    )
    shown = sum(1 for s in samples if s.id in pages)
    note = (
        f'<p class="muted">{shown} of {len(samples)} questions have a viewer page. '
        "✓ correct, ✗ wrong, ∅ unanswered, ⚠ error (its kind beside it; hover for the "
        "message), · not scored, — not run; ◐ degraded: the strategy saw less than it "
        "promises (◐!: a gold page was never shown; hover for what was cut and why).</p>"
    )
    return (
        '<h2 id="questions-list">Questions</h2><div>'
        + note
        + _controls(groups, kinds)
        + f'<table id="questions"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(body)
        + "</tbody></table></div>"
    )


QUESTIONS_JS = """
(function () {
  var table = document.getElementById('questions');
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var search = document.getElementById('q-search');
  var cell = document.getElementById('q-cell');
  var outcome = document.getElementById('q-outcome');
  var count = document.getElementById('q-count');
  var sorted = {col: -1, dir: 'asc'};
  function hit(td, want) {
    if (!td || !td.dataset.outcome) { return false; }
    if (want === 'not-correct') { return td.dataset.outcome !== 'correct'; }
    if (want === 'degraded') { return td.dataset.degraded === '1'; }
    if (want.indexOf('kind:') === 0) { return td.dataset.status === want.slice(5); }
    return td.dataset.outcome === want;
  }
  function matches(row) {
    var text = search.value.trim().toLowerCase();
    if (text && row.dataset.search.indexOf(text) < 0) { return false; }
    var want = outcome.value;
    if (!want) { return true; }
    var tds = Array.prototype.slice.call(row.querySelectorAll('td[data-cell]'));
    if (cell.value) { tds = tds.filter(function (td) { return td.dataset.cell === cell.value; }); }
    return tds.some(function (td) { return hit(td, want); });
  }
  function key(row, i) {
    var td = row.cells[i];
    var value = td.dataset.sort !== undefined ? td.dataset.sort : td.textContent.trim();
    var number = Number(value);
    return value !== '' && !isNaN(number) ? number : value.toLowerCase();
  }
  function sortRows() {
    heads.forEach(function (h, i) {
      if (i === sorted.col) { h.dataset.dir = sorted.dir; } else { delete h.dataset.dir; }
    });
    if (sorted.col < 0) { return; }
    rows.sort(function (a, b) {
      var x = key(a, sorted.col), y = key(b, sorted.col);
      var c = (typeof x === 'number' && typeof y === 'number') ? x - y
        : String(x).localeCompare(String(y));
      return sorted.dir === 'asc' ? c : -c;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  function apply() {
    var shown = 0;
    rows.forEach(function (row) { var ok = matches(row); row.hidden = !ok; if (ok) { shown++; } });
    count.textContent = shown + ' of ' + rows.length + ' questions shown';
  }
  function save() {
    var state = new URLSearchParams();
    if (search.value) { state.set('q', search.value); }
    if (cell.value) { state.set('cell', cell.value); }
    if (outcome.value) { state.set('outcome', outcome.value); }
    if (sorted.col >= 0) { state.set('sort', sorted.col + ':' + sorted.dir); }
    var hash = state.toString();
    history.replaceState(null, '', hash ? '#' + hash : location.pathname);
  }
  function load() {
    var state = new URLSearchParams(location.hash.slice(1));
    search.value = state.get('q') || '';
    cell.value = state.get('cell') || '';
    outcome.value = state.get('outcome') || '';
    var sort = (state.get('sort') || '').split(':');
    sorted.col = sort[0] === '' ? -1 : parseInt(sort[0], 10);
    sorted.dir = sort[1] === 'desc' ? 'desc' : 'asc';
    return ['q', 'cell', 'outcome', 'sort'].some(function (k) { return state.has(k); });
  }
  [search, cell, outcome].forEach(function (el) {
    el.addEventListener('input', function () { apply(); save(); });
  });
  heads.forEach(function (th, i) {
    th.classList.add('sortable');
    th.title = 'sort by this column';
    th.addEventListener('click', function () {
      sorted.dir = sorted.col === i && sorted.dir === 'asc' ? 'desc' : 'asc';
      sorted.col = i;
      sortRows();
      save();
    });
  });
  var bookmarked = load();
  sortRows();
  apply();
  if (bookmarked) {  // a bookmarked view: show the list once the page is laid out
    window.addEventListener('load', function () { table.parentNode.scrollIntoView(); });
  }
})();
"""
