"""SIN-Bench evidence-chain metrics (spec §4, paper eq. 7–11), without any judge.

Anchors are compared through a canonical key: figures (``"Fig. 2"``, ``"Figure 2"``,
``"fig 2"``, ``"<x2>"``, ``"x2"``, ``"Image 2"``) become ``"fig:2"``, tables (``"Tab. 3"``,
``"Table 3"``) ``"table:3"``; sub-panels ("Fig. 2b") collapse onto the figure. SIN-Bench's
``<xN>`` markers index the paper's images, so they share the figure key; a sample whose
numbering differs can pass explicit aliases.

Matching pairs. A predicted pair i "hits" when its anchor key is a gold anchor key (the hit
set H). Gold chains may repeat an anchor, so each hit is graded 0–3 against every gold pair
with its anchor, and hits are assigned one-to-one to gold pairs greedily (highest grade first,
ties in chain order). Then:

* Match = mean over H of s̃_i = s_i / 3, with s_i the grade against the assigned gold pair
  (the best grade for a hit left unassigned because its anchor's gold pairs are used up);
  0 when H is empty.
* Relevance: TP = assigned hits with s̃ ≥ τ (2/3); P = TP / K̂, R = TP / K*, F1 = 2PR/(P+R).
* Logic: τ = 1 − 2·inv / (K(K−1)/2) over the K assigned hits, comparing their order in the
  prediction with the order of their gold pairs; KT-sim = (τ + 1) / 2, and 0 when K < 2.

With distinct anchors (the usual case) this is exactly the paper's definition.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

TAU = 2 / 3
MAX_GRADE = 3

_FIGURE_WORDS = r"(?:fig(?:ure)?s?|image|img|x)"
_TABLE_WORDS = r"(?:tab(?:le)?s?)"
_NUMBER = r"(s?\d+)"
# An anchor written in a dedicated field: tolerant of spacing and punctuation.
_FIELD_RE = re.compile(
    rf"^\W*(?:(?P<fig>{_FIGURE_WORDS})|(?P<tab>{_TABLE_WORDS}))?\W*{_NUMBER}[a-z]?\b", re.I
)
# Anchors inside running text: stricter, so "x 2" in a formula is not an anchor.
ANCHOR_TEXT_RE = re.compile(
    rf"<\s*x\s*(?P<marker>\d+)\s*>|\bx(?P<bare>\d+)\b"
    rf"|\b(?P<fig>fig(?:ure)?s?|image)\.?\s*(?P<fignum>s?\d+)[a-z]?\b"
    rf"|\b(?P<tab>{_TABLE_WORDS})\.?\s*(?P<tabnum>s?\d+)[a-z]?\b",
    re.I,
)


_FIELD_SEPARATOR = re.compile(r"\s*(?:[,;/&]|\band\b)\s*", re.I)
_BARE_NUMBER = re.compile(r"\s*(s?\d+)[a-z]?\s*", re.I)


def _key(kind: str, number: str) -> str:
    number = number.lower()
    digits = number.lstrip("s")
    prefix = "s" if number.startswith("s") else ""
    return f"{kind}:{prefix}{int(digits)}"


def normalize_anchor(anchor: str | None, aliases: Mapping[str, str] | None = None) -> str | None:
    """Canonical key of one anchor as written, or ``None`` if no anchor can be recovered.

    ``aliases`` maps anchors as written (or their keys) to the anchor they stand for, for
    papers whose figure numbers differ from the image markers.
    """
    if anchor is None or not anchor.strip():
        return None
    key = _field_key(anchor)
    if aliases and key is not None:
        for written, target in aliases.items():
            if _field_key(written) == key or written == key:
                return _field_key(target)
    return key


def _field_key(anchor: str) -> str | None:
    match = _FIELD_RE.match(anchor.strip())
    if match is None:
        keys = find_anchors(anchor)
        return keys[0] if keys else None
    return _key("table" if match.group("tab") else "fig", match.group(3))


def find_anchors(text: str) -> list[str]:
    """Keys of every anchor mentioned in running text, in order of appearance."""
    keys: list[str] = []
    for m in ANCHOR_TEXT_RE.finditer(text):
        if m.group("marker") or m.group("bare"):
            keys.append(_key("fig", m.group("marker") or m.group("bare")))
        elif m.group("fig"):
            keys.append(_key("fig", m.group("fignum")))
        else:
            keys.append(_key("table", m.group("tabnum")))
    return keys


def anchor_keys(anchor: str | None, aliases: Mapping[str, str] | None = None) -> list[str]:
    """All keys named by one anchor field, in order, without repeats; empty if none.

    The field is cut at commas, semicolons, slashes, "&" and "and"; each part gives the
    anchors written in it ("<x 2>, Table 1" names two, "<x1>, <x3>" two), and a part that is
    only a number takes the kind of the part before it ("Tables 1 and 2": two tables).
    """
    if anchor is None or not anchor.strip():
        return []
    keys: list[str] = []
    kind = "fig"
    for part in _FIELD_SEPARATOR.split(anchor):
        if not part.strip():
            continue
        bare = _BARE_NUMBER.fullmatch(part)
        if bare is not None:
            found = [_key(kind, bare.group(1))]
        else:
            found = find_anchors(part) or [k for k in [_field_key(part)] if k]
        for key in found:
            kind = key.split(":", 1)[0]
            normalized = normalize_anchor(key.replace(":", " "), aliases)
            if normalized:
                keys.append(normalized)
    return list(dict.fromkeys(keys))


# -- metrics ---------------------------------------------------------------------------------


class ChainMetrics(BaseModel):
    """Matching / Relevance / Logic of one predicted chain against the gold chain."""

    match: float
    precision: float
    recall: float
    f1: float
    kt_sim: float
    kendall_tau: float | None
    hits: int
    true_positives: int
    n_pred: int
    n_gold: int
    assignment: dict[int, int]  # predicted pair index -> gold pair index


def candidate_pairs(
    pred_keys: Sequence[str | None], gold_keys: Sequence[str]
) -> dict[int, list[int]]:
    """For each hit (predicted index), the gold indices sharing its anchor key."""
    by_key: dict[str, list[int]] = {}
    for j, key in enumerate(gold_keys):
        by_key.setdefault(key, []).append(j)
    return {i: by_key[k] for i, k in enumerate(pred_keys) if k is not None and k in by_key}


def assign_hits(grades: Mapping[tuple[int, int], int]) -> dict[int, int]:
    """One-to-one assignment of hits to gold pairs: highest grade first, then chain order."""
    assignment: dict[int, int] = {}
    used: set[int] = set()
    for (i, j), _ in sorted(grades.items(), key=lambda kv: (-kv[1], kv[0][0], kv[0][1])):
        if i not in assignment and j not in used:
            assignment[i] = j
            used.add(j)
    return assignment


def kendall_tau_order(assignment: Mapping[int, int]) -> float | None:
    """τ = 1 − 2·inversions / (K(K−1)/2) of gold positions read in predicted order."""
    gold_order = [assignment[i] for i in sorted(assignment)]
    k = len(gold_order)
    if k < 2:
        return None
    inversions = sum(1 for a in range(k) for b in range(a + 1, k) if gold_order[a] > gold_order[b])
    return 1.0 - 2.0 * inversions / (k * (k - 1) / 2)


def chain_metrics(
    pred_keys: Sequence[str | None],
    gold_keys: Sequence[str],
    grades: Mapping[tuple[int, int], int],
    tau: float = TAU,
) -> ChainMetrics:
    """Metrics from anchor keys and the judge's grades of (hit i, gold j) pairs.

    ``grades`` must hold a 0–3 grade for every pair returned by :func:`candidate_pairs`.
    A prediction without any hit scores 0 on every metric ("No Evidence, No Score").
    """
    candidates = candidate_pairs(pred_keys, gold_keys)
    missing = [(i, j) for i, js in candidates.items() for j in js if (i, j) not in grades]
    if missing:
        raise ValueError(f"no grade for hit/gold pairs {missing}")
    bad = {pair: g for pair, g in grades.items() if not 0 <= g <= MAX_GRADE}
    if bad:
        raise ValueError(f"grades must lie in 0..{MAX_GRADE}; got {bad}")
    wanted = {(i, j): grades[(i, j)] for i, js in candidates.items() for j in js}
    assignment = assign_hits(wanted)
    n_pred, n_gold = len(pred_keys), len(gold_keys)

    def normalized(i: int) -> float:
        if i in assignment:
            return grades[(i, assignment[i])] / MAX_GRADE
        return max(grades[(i, j)] for j in candidates[i]) / MAX_GRADE

    hits = sorted(candidates)
    match = sum(normalized(i) for i in hits) / len(hits) if hits else 0.0
    tp = sum(1 for i in assignment if normalized(i) >= tau - 1e-9)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    kendall = kendall_tau_order(assignment)
    return ChainMetrics(
        match=match,
        precision=precision,
        recall=recall,
        f1=f1,
        kt_sim=(kendall + 1.0) / 2.0 if kendall is not None else 0.0,
        kendall_tau=kendall,
        hits=len(hits),
        true_positives=tp,
        n_pred=n_pred,
        n_gold=n_gold,
        assignment=assignment,
    )
