"""Agreement measures: classification (accuracy, per-class and macro F1, balanced accuracy,
Cohen's κ, MCC) and rank correlation (Kendall's τ_b), for gold against predicted labels.

Everything here is pure (numpy only). The measures follow scikit-learn's defaults so numbers
are comparable: classes are the union of gold and predicted labels unless ``labels`` is given;
a precision/recall/F1 with a zero denominator counts as ``zero_division`` (0.0); balanced
accuracy averages recall over the classes present in the gold labels; MCC is 0.0 when
undefined. Cohen's κ and Kendall's τ_b are ``None`` when undefined (scikit-learn/scipy return
NaN there).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

Label = Hashable


# -- classification agreement -------------------------------------------------------------


def _check_pair(gold: Sequence[Label], pred: Sequence[Label]) -> None:
    if len(gold) != len(pred):
        raise ValueError(f"gold and predicted labels differ in length: {len(gold)} vs {len(pred)}")


def _classes(gold: Sequence[Label], pred: Sequence[Label]) -> list[Label]:
    seen: dict[Label, None] = {}
    for label in [*gold, *pred]:
        seen.setdefault(label, None)
    try:
        return sorted(seen)  # type: ignore[type-var]
    except TypeError:
        return list(seen)


def _confusion(gold: Sequence[Label], pred: Sequence[Label], labels: Sequence[Label]) -> np.ndarray:
    """Confusion matrix, rows = gold, columns = predicted; labels outside ``labels`` are dropped."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=float)
    for g, p in zip(gold, pred, strict=True):
        if g in index and p in index:
            matrix[index[g], index[p]] += 1
    return matrix


def accuracy(gold: Sequence[Label], pred: Sequence[Label]) -> float | None:
    """Fraction of positions where the labels agree; ``None`` for no items."""
    _check_pair(gold, pred)
    if not gold:
        return None
    return sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)


def per_class_f1(
    gold: Sequence[Label],
    pred: Sequence[Label],
    labels: Sequence[Label] | None = None,
    zero_division: float = 0.0,
) -> dict[Label, float]:
    """F1 of each class (one-vs-rest); a zero denominator gives ``zero_division``.

    With ``labels``, only those classes are scored, but each against every item, as
    scikit-learn does: a prediction of a listed class on an item of an unlisted one is a
    false positive, and the reverse a false negative.
    """
    _check_pair(gold, pred)
    classes = list(labels) if labels is not None else _classes(gold, pred)
    everything = list(dict.fromkeys([*classes, *_classes(gold, pred)]))
    matrix = _confusion(gold, pred, everything)
    scores: dict[Label, float] = {}
    for label in classes:
        i = everything.index(label)
        tp = matrix[i, i]
        fp = matrix[:, i].sum() - tp
        fn = matrix[i, :].sum() - tp
        denom = 2 * tp + fp + fn
        scores[label] = float(2 * tp / denom) if denom > 0 else zero_division
    return scores


def macro_f1(
    gold: Sequence[Label],
    pred: Sequence[Label],
    labels: Sequence[Label] | None = None,
    zero_division: float = 0.0,
) -> float | None:
    """Unweighted mean of per-class F1 (scikit-learn ``f1_score(average="macro")``).

    Classes default to those seen in gold or predictions, so a class with neither support
    nor predictions never enters the mean; naming it in ``labels`` scores it
    ``zero_division`` (0.0), as scikit-learn does. ``None`` for no items.
    """
    _check_pair(gold, pred)
    if not gold:
        return None
    scores = per_class_f1(gold, pred, labels=labels, zero_division=zero_division)
    return float(np.mean(list(scores.values()))) if scores else None


def balanced_accuracy(gold: Sequence[Label], pred: Sequence[Label]) -> float | None:
    """Mean recall over the classes present in the gold labels; ``None`` for no items."""
    _check_pair(gold, pred)
    if not gold:
        return None
    classes = _classes(gold, pred)
    matrix = _confusion(gold, pred, classes)
    support = matrix.sum(axis=1)
    present = support > 0
    recalls = np.diag(matrix)[present] / support[present]
    return float(recalls.mean())


def cohen_kappa(gold: Sequence[Label], pred: Sequence[Label]) -> float | None:
    """Cohen's κ = (p_o − p_e) / (1 − p_e); ``None`` when p_e = 1 (one shared class) or no items."""
    _check_pair(gold, pred)
    if not gold:
        return None
    classes = _classes(gold, pred)
    matrix = _confusion(gold, pred, classes)
    total = matrix.sum()
    observed = np.trace(matrix) / total
    expected = float((matrix.sum(axis=1) * matrix.sum(axis=0)).sum() / total**2)
    if math.isclose(expected, 1.0):
        return None
    return float((observed - expected) / (1.0 - expected))


def mcc(gold: Sequence[Label], pred: Sequence[Label]) -> float | None:
    """Matthews correlation (multi-class R_K form); 0.0 when undefined, ``None`` for no items."""
    _check_pair(gold, pred)
    if not gold:
        return None
    classes = _classes(gold, pred)
    matrix = _confusion(gold, pred, classes)
    t_k, p_k = matrix.sum(axis=1), matrix.sum(axis=0)
    correct, total = np.trace(matrix), matrix.sum()
    numerator = correct * total - float(t_k @ p_k)
    denominator = math.sqrt((total**2 - float(p_k @ p_k)) * (total**2 - float(t_k @ t_k)))
    if denominator == 0:
        return 0.0
    return float(numerator / denominator)


# -- rank correlation -----------------------------------------------------------------------


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ_b with tie correction: (n_c − n_d) / sqrt((n_0 − n_1)(n_0 − n_2)).

    n_0 = n(n−1)/2 pairs, n_1 / n_2 = pairs tied in x / in y; a pair tied in either counts
    as neither concordant nor discordant. ``None`` when undefined: fewer than two items,
    or every pair tied in x or in y.
    """
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length: {len(x)} vs {len(y)}")
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = xs.size
    if n < 2:
        return None
    concordant = discordant = tied_x = tied_y = 0
    for i in range(n - 1):
        dx = np.sign(xs[i + 1 :] - xs[i])
        dy = np.sign(ys[i + 1 :] - ys[i])
        product = dx * dy
        concordant += int(np.count_nonzero(product > 0))
        discordant += int(np.count_nonzero(product < 0))
        tied_x += int(np.count_nonzero(dx == 0))
        tied_y += int(np.count_nonzero(dy == 0))
    pairs = n * (n - 1) // 2
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    if denominator == 0:
        return None
    return (concordant - discordant) / denominator
