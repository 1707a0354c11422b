"""``scanrag agreement``: how well a judge agrees with human labels.

Usage::

    scanrag agreement --labels human.csv --scores RUN_DIR/scores.jsonl [--scorer NAME]
    scanrag agreement --labels human.csv --judge judge.csv

Reports accuracy, Cohen's κ, macro-F1 and MCC between human and judge labels on the items
both name, and Kendall's τ_b between the judge's labels read as an ordinal scale and each
continuous geometric metric (IoU, IoM, GT-recall) present for those items. For faithfulness
labels (Attributable / Not Attributable / Contradicted) it adds ContextCheck's
meta-evaluation: binary Macro-F1 and balanced accuracy with the midpoint of their 1,000-resample
bootstrap interval, and the debiased figures when the human file pairs rewritten twins with
their sentences (column ``rewrite_of``).

CSV columns (header row required, extra columns ignored):

* ``human.csv``: ``item_id``, ``label``. ``item_id`` names one judged unit exactly as the
  score rows do (see :func:`judged_units`), e.g. ``q12/page3/gold0`` for one gold region.
* ``scores.jsonl``: judged units come from each row's ``details["units"]`` (see
  :func:`read_score_units`); ``item_id`` = ``<sample_id>/<unit>``.
* ``judge.csv`` (instead of ``--scores``): ``item_id``, ``label``, and optionally numeric
  columns ``iou``, ``iom``, ``gt_recall`` (any names given with ``--geometric``).

Labels compare case-insensitively with spaces and hyphens read as underscores, so
"Not covered" equals ``not_covered``. The ordinal scale is taken from ``--order`` (low to
high) or recognized from the labels (not_covered < imprecise < covered, ...); numeric
labels are used as they are.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

GEOMETRIC = ("iou", "iom", "gt_recall")
# Optional column of the human CSV: this item is the rewritten (decontextualized) twin of the
# named item, for ContextCheck's debiased scoring of faithfulness judges.
REWRITE_OF = "rewrite_of"

# Known ordinal scales, low to high.
SCALES: tuple[tuple[str, ...], ...] = (
    ("not_covered", "imprecise", "covered"),
    ("not_consistent", "consistent"),
    ("contradicted", "not_attributable", "attributable"),
    ("incorrect", "correct"),
    ("wrong", "right"),
    ("no", "yes"),
    ("false", "true"),
)


def normalize_label(value: object) -> str:
    """Compare labels case-insensitively; spaces and hyphens count as underscores."""
    text = str(value).strip().lower()
    return "_".join(text.replace("-", " ").split())


def ordinal(labels: Iterable[str], order: Sequence[str] | None = None) -> dict[str, float]:
    """Numeric rank of each label: from ``order``, a known scale, or the labels' own numbers."""
    distinct = sorted(set(labels))
    if order:
        ranks = {normalize_label(label): float(i) for i, label in enumerate(order)}
        unknown = [label for label in distinct if label not in ranks]
        if unknown:
            raise ValueError(f"labels {unknown} are not in --order {list(order)}")
        return {label: ranks[label] for label in distinct}
    for scale in SCALES:
        if set(distinct) <= set(scale):
            return {label: float(scale.index(label)) for label in distinct}
    try:
        return {label: float(label) for label in distinct}
    except ValueError:
        raise ValueError(f"cannot order labels {distinct}; pass --order LOW,...,HIGH") from None


# -- reading ---------------------------------------------------------------------------------


class AgreementInputError(ValueError):
    """The label files cannot be read or do not overlap."""


def read_label_csv(path: Path, geometric: Sequence[str] = GEOMETRIC) -> dict[str, dict[str, Any]]:
    """``item_id -> {"label": str, <geometric metric>: float, ...}`` from a CSV file."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            fields = {f.strip() for f in reader.fieldnames or []}
            missing = {"item_id", "label"} - fields
            if missing:
                raise AgreementInputError(f"{path}: missing column(s) {sorted(missing)}")
            rows: dict[str, dict[str, Any]] = {}
            for line, raw in enumerate(reader, start=2):
                row = {k.strip(): (v or "").strip() for k, v in raw.items() if k}
                item, label = row["item_id"], row["label"]
                if not item or not label:
                    continue  # unlabelled rows are allowed and skipped
                if item in rows:
                    raise AgreementInputError(f"{path}:{line}: duplicate item_id {item!r}")
                entry: dict[str, Any] = {"label": normalize_label(label)}
                if row.get(REWRITE_OF):
                    entry[REWRITE_OF] = row[REWRITE_OF]
                for name in geometric:
                    if row.get(name):
                        try:
                            entry[name] = float(row[name])
                        except ValueError:
                            raise AgreementInputError(
                                f"{path}:{line}: {name}={row[name]!r} is not a number"
                            ) from None
                rows[item] = entry
    except OSError as exc:
        raise AgreementInputError(f"cannot read {path}: {exc}") from exc
    return rows


def read_score_units(
    path: Path,
    *,
    scorer: str | None = None,
    group: str | None = None,
    geometric: Sequence[str] = GEOMETRIC,
) -> dict[str, dict[str, Any]]:
    """Judged units of a ``scores.jsonl`` (or a run directory holding one).

    A scorer lists its judged units in ``details["units"]``, each a mapping with ``unit``
    (its id within the item, e.g. ``page3/gold0``), ``label``, and optionally geometric
    metrics. The unit's ``item_id`` is ``<sample_id>/<unit>``. Rows that failed or were
    skipped contribute nothing. Several grid cells in one file need ``group``.
    """
    from scanrag.evaluation.schemas import ScoreRow

    if path.is_dir():
        from scanrag.rundir import RunDir

        path = RunDir(path).file(RunDir.SCORES)
    units: dict[str, dict[str, dict[str, Any]]] = {}
    scorers: set[str] = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AgreementInputError(f"cannot read {path}: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = ScoreRow.model_validate_json(line)
        except ValueError as exc:
            raise AgreementInputError(f"{path}:{number}: not a score row: {exc}") from None
        if (scorer and row.scorer != scorer) or (group and row.group != group):
            continue
        if not row.usable:
            continue
        for unit in row.details.get("units", []):
            if not isinstance(unit, Mapping) or unit.get("label") is None:
                continue
            entry: dict[str, Any] = {"label": normalize_label(unit["label"])}
            entry.update({k: float(unit[k]) for k in geometric if _finite(unit.get(k))})
            units.setdefault(row.group, {})[f"{row.sample_id}/{unit['unit']}"] = entry
            scorers.add(row.scorer)
    if len(scorers) > 1:
        raise AgreementInputError(
            f"{path} holds judged units of several scorers ({', '.join(sorted(scorers))}); "
            "choose one with --scorer"
        )
    if len(units) > 1:
        raise AgreementInputError(
            f"{path} holds several grid cells ({', '.join(sorted(units))}); choose one with --group"
        )
    return next(iter(units.values()), {})


# -- computing -------------------------------------------------------------------------------


def agreement_report(
    human: Mapping[str, Mapping[str, Any]],
    judge: Mapping[str, Mapping[str, Any]],
    *,
    order: Sequence[str] | None = None,
    geometric: Sequence[str] = GEOMETRIC,
) -> dict[str, Any]:
    """Agreement figures on the items both sides label (see the module docstring)."""
    from scanrag.evaluation.stats_agreement import (
        accuracy,
        cohen_kappa,
        kendall_tau_b,
        macro_f1,
        mcc,
    )

    shared = sorted(set(human) & set(judge))
    if not shared:
        raise AgreementInputError(
            f"no item_id in common: {len(human)} human-labelled, {len(judge)} judged"
        )
    gold = [str(human[i]["label"]) for i in shared]
    pred = [str(judge[i]["label"]) for i in shared]
    report: dict[str, Any] = {
        "n": len(shared),
        "human_only": len(set(human) - set(judge)),
        "judge_only": len(set(judge) - set(human)),
        "labels": sorted(set(gold) | set(pred)),
        "accuracy": accuracy(gold, pred),
        "cohen_kappa": cohen_kappa(gold, pred),
        "macro_f1": macro_f1(gold, pred),
        "mcc": mcc(gold, pred),
        "kendall_tau_b": {},
    }
    faithfulness = faithfulness_meta(human, judge, shared)
    if faithfulness is not None:
        report["faithfulness"] = faithfulness
    ranks = ordinal([*gold, *pred], order)
    for name in geometric:
        items = [i for i in shared if _finite(judge[i].get(name, human[i].get(name)))]
        if not items:
            continue
        values = [float(judge[i].get(name, human[i].get(name))) for i in items]
        report["kendall_tau_b"][name] = {
            "n": len(items),
            "judge": kendall_tau_b([ranks[str(judge[i]["label"])] for i in items], values),
            "human": kendall_tau_b([ranks[str(human[i]["label"])] for i in items], values),
        }
    return report


def faithfulness_meta(
    human: Mapping[str, Mapping[str, Any]],
    judge: Mapping[str, Mapping[str, Any]],
    shared: Sequence[str],
) -> dict[str, Any] | None:
    """ContextCheck's meta-evaluation when the labels are faithfulness labels: binary
    Macro-F1 and balanced accuracy with their bootstrap intervals and midpoints, on the base
    items; with ``rewrite_of`` twins in the human file, also debiased (a base prediction right
    on the ambiguous sentence but wrong on its rewrite counts as wrong). ``None`` otherwise."""
    from scanrag.evaluation.faithfulness.meta import binary, meta_evaluate

    try:
        for item in shared:
            binary(human[item]["label"]), binary(judge[item]["label"])
    except ValueError:
        return None
    twins = {item: human[item][REWRITE_OF] for item in shared if human[item].get(REWRITE_OF)}
    base = [item for item in shared if item not in twins]
    if not base:
        return None
    gold = [human[i]["label"] for i in base]
    pred = [judge[i]["label"] for i in base]
    out: dict[str, Any] = {"n": len(base), "plain": _meta_json(meta_evaluate(pred, gold))}
    position = {item: i for i, item in enumerate(base)}
    pairs = {position[b]: judge[t]["label"] for t, b in twins.items() if b in position}
    if pairs:
        out["debiased"] = _meta_json(meta_evaluate(pred, gold, pairs))
    return out


def _meta_json(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.model_dump(mode="json")
    return data


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def format_report(report: Mapping[str, Any]) -> str:
    def num(value: object) -> str:
        return "undefined" if value is None else f"{float(value):.3f}"  # type: ignore[arg-type]

    lines = [
        f"items compared   {report['n']}  (only human: {report['human_only']}, "
        f"only judge: {report['judge_only']})",
        f"labels           {', '.join(report['labels'])}",
        f"accuracy         {num(report['accuracy'])}",
        f"Cohen's kappa    {num(report['cohen_kappa'])}",
        f"macro-F1         {num(report['macro_f1'])}",
        f"MCC              {num(report['mcc'])}",
    ]
    for variant, meta in (report.get("faithfulness") or {}).items():
        if not isinstance(meta, Mapping):
            continue
        for metric in ("macro_f1", "balanced_accuracy"):
            m = meta[metric]
            lines.append(
                f"{variant:<8} {metric:<17} {num(m['estimate'])}  "
                f"95% [{num(m['low'])}, {num(m['high'])}]  midpoint {num(m['midpoint'])}"
            )
        if meta.get("flipped"):
            lines.append(f"{variant:<8} base predictions turned wrong: {meta['flipped']}")
    for name, tau in report["kendall_tau_b"].items():
        lines.append(
            f"Kendall tau_b vs {name:<9} judge {num(tau['judge'])}  "
            f"human {num(tau['human'])}  (n={tau['n']})"
        )
    return "\n".join(lines)


# -- command ---------------------------------------------------------------------------------


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "agreement",
        help="agreement between human labels and judge labels",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("--labels", required=True, type=Path, help="human labels CSV")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--scores", type=Path, help="RUN_DIR/scores.jsonl (or the run dir)")
    source.add_argument("--judge", type=Path, help="judge labels CSV (item_id,label,...)")
    parser.add_argument("--scorer", help="only units of this scorer (with --scores)")
    parser.add_argument("--group", help="only this grid cell (run key) (with --scores)")
    parser.add_argument("--order", help="ordinal scale of the labels, low to high: a,b,c")
    parser.add_argument(
        "--geometric",
        default=",".join(GEOMETRIC),
        help=f"continuous metric columns for Kendall tau_b (default {','.join(GEOMETRIC)})",
    )
    parser.add_argument("--json", type=Path, help="also write the report as JSON here")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    geometric = [g.strip() for g in args.geometric.split(",") if g.strip()]
    order = [o.strip() for o in args.order.split(",")] if args.order else None
    try:
        human = read_label_csv(args.labels, geometric)
        if args.judge is not None:
            judge = read_label_csv(args.judge, geometric)
        else:
            judge = read_score_units(
                args.scores, scorer=args.scorer, group=args.group, geometric=geometric
            )
        report = agreement_report(human, judge, order=order, geometric=geometric)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_report(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0
