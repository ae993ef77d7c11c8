"""Evaluation metrics, pure Python / numpy and checkable by hand.

* Ranking metrics with trec_eval semantics and binary relevance (seed 000 §1.3, App. B).
* Classification metrics (``accuracy``, ``macro_f1``, ``per_class_f1``, ``balanced_accuracy``,
  ``confusion``) with scikit-learn's conventions: macro averages run over the classes that
  occur in the gold labels or the predictions (a class absent from both is left out, not
  counted as F1 = 0); balanced accuracy is the mean recall over the gold classes.
* Calibration: equal-width-bin ECE on the max probability, and temperature scaling
  (one scalar T fitted by minimising the NLL with a golden-section search on log T).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from core.verify.calibration import log_softmax


def recall_at_k(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """Share of the gold items found in the top k (0 when there is no gold item)."""
    if not gold:
        return 0.0
    return len(set(ranked[:k]) & gold) / len(gold)


def ndcg_at_k(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """nDCG@k = DCG@k / IDCG@k with DCG@k = Σ_{i≤k} rel_i / log2(i + 1), binary rel_i."""
    if not gold:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in gold)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / idcg


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]), as numpy's default."""
    if not values:
        return float("nan")
    s = sorted(values)
    pos = (len(s) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def dedupe(items: Sequence[str]) -> list[str]:
    """First occurrence order: passage rankings → document rankings."""
    return list(dict.fromkeys(items))


# --------------------------------------------------------------------------- classification


def accuracy(y_true: Sequence, y_pred: Sequence) -> float:
    """Share of predictions equal to the gold label."""
    _check_lengths(y_true, y_pred)
    return sum(t == p for t, p in zip(y_true, y_pred, strict=True)) / len(y_true)


def confusion(y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str]) -> dict[str, dict[str, int]]:
    """``{gold: {predicted: count}}`` over ``labels`` (rows = gold, columns = predictions)."""
    _check_lengths(y_true, y_pred)
    _check_labels(labels, y_true, y_pred)
    table = {g: dict.fromkeys(labels, 0) for g in labels}
    for t, p in zip(y_true, y_pred, strict=True):
        table[t][p] += 1
    return table


def per_class_f1(y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str]) -> dict[str, float | None]:
    """F1 = 2·TP / (2·TP + FP + FN) per label; ``None`` for a label that is neither gold nor
    predicted anywhere (F1 undefined). A label predicted but never gold has F1 = 0."""
    table = confusion(y_true, y_pred, labels)
    out: dict[str, float | None] = {}
    for c in labels:
        tp = table[c][c]
        fn = sum(table[c].values()) - tp
        fp = sum(table[g][c] for g in labels) - tp
        out[c] = None if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)
    return out


def macro_f1(y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str]) -> float:
    """Unweighted mean of :func:`per_class_f1` over the labels that occur (gold or predicted)."""
    scores = [f for f in per_class_f1(y_true, y_pred, labels).values() if f is not None]
    return sum(scores) / len(scores)


def balanced_accuracy(y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str] | None = None) -> float:
    """Mean over the gold classes of recall = TP / (TP + FN)."""
    _check_lengths(y_true, y_pred)
    classes = [c for c in (labels if labels is not None else sorted(set(y_true))) if c in set(y_true)]
    recalls = []
    for c in classes:
        idx = [i for i, t in enumerate(y_true) if t == c]
        recalls.append(sum(y_pred[i] == c for i in idx) / len(idx))
    return sum(recalls) / len(recalls)


def _check_lengths(y_true: Sequence, y_pred: Sequence) -> None:
    if len(y_true) != len(y_pred):
        raise ValueError(f"{len(y_true)} gold labels but {len(y_pred)} predictions")
    if not len(y_true):
        raise ValueError("no examples")


def _check_labels(labels: Sequence[str], *columns: Sequence[str]) -> None:
    known = set(labels)
    for col in columns:
        unknown = set(col) - known
        if unknown:
            raise ValueError(f"labels {sorted(unknown)} are not in the label set {list(labels)}")


# --------------------------------------------------------------------------- calibration


def expected_calibration_error(confidences: Sequence[float], correct: Sequence[bool], n_bins: int = 15) -> float:
    """ECE = Σ_b |B_b|/n · |accuracy(B_b) − mean confidence(B_b)| over ``n_bins`` equal-width
    bins of (0, 1]; bin b holds confidences in (b/n_bins, (b+1)/n_bins] (0 falls in the first).
    ``confidences`` are the max probabilities, ``correct`` whether that prediction was right."""
    conf = np.asarray(confidences, dtype=np.float64)
    ok = np.asarray(correct, dtype=np.float64)
    if conf.shape != ok.shape or conf.ndim != 1:
        raise ValueError("confidences and correct must be 1-D and of the same length")
    if not len(conf):
        raise ValueError("no examples")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.clip(np.digitize(conf, edges, right=True) - 1, 0, n_bins - 1)
    ece = 0.0
    for b in range(n_bins):
        mask = bins == b
        if mask.any():
            ece += mask.sum() / len(conf) * abs(ok[mask].mean() - conf[mask].mean())
    return float(ece)


def temperature_nll(logits: np.ndarray, y_true_idx: Sequence[int], temperature: float) -> float:
    """Mean negative log-likelihood of the gold classes under softmax(logits / T)."""
    z = np.asarray(logits, dtype=np.float64)
    y = np.asarray(y_true_idx, dtype=np.int64)
    return float(-log_softmax(z / temperature)[np.arange(len(y)), y].mean())


def fit_temperature(
    logits_or_logprobs: np.ndarray,
    y_true_idx: Sequence[int],
    bounds: tuple[float, float] = (0.01, 100.0),
    tol: float = 1e-6,
) -> float:
    """The scalar T > 0 minimising :func:`temperature_nll` (Guo et al. 2017 temperature scaling).

    Log-probabilities work as logits (softmax is shift-invariant per row). The NLL is convex
    in 1/T, hence unimodal in log T, so a golden-section search on log T over ``bounds``
    finds the minimum; the bounds themselves are also compared (a T at a bound means the
    optimum lies at or beyond it).
    """
    z = np.asarray(logits_or_logprobs, dtype=np.float64)
    y = np.asarray(y_true_idx, dtype=np.int64)
    if z.ndim != 2 or len(z) != len(y) or not len(y):
        raise ValueError("logits must be (n, k) with n ≥ 1 gold indices")
    if not np.isfinite(z).all():
        raise ValueError("logits must be finite (clip probabilities before taking logs)")

    def f(u: float) -> float:
        return temperature_nll(z, y, math.exp(u))

    lo, hi = math.log(bounds[0]), math.log(bounds[1])
    inv_phi = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - inv_phi * (b - a), a + inv_phi * (b - a)
    fc, fd = f(c), f(d)
    while b - a > tol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - inv_phi * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + inv_phi * (b - a)
            fd = f(d)
    best = min(((a + b) / 2, lo, hi), key=f)
    return math.exp(best)
