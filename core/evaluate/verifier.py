"""``claimscope eval verifier``: NLI / claim-verifier quality, calibration and speed.

Protocol (``../shared/docs/eval.md``; label conventions in :mod:`core.evaluate.datasets`):

* Every model returns P(entailment), P(neutral), P(contradiction) per (premise, hypothesis)
  pair. Its prediction depends on the dataset's label space (:data:`DATASET_LABELS`):
  3-way sets take the argmax of the three; ``fever-symmetric`` (entailment vs
  contradiction) takes the larger of P(entailment) and P(contradiction); ``wice``
  (entailment vs not_entailment) predicts entailment iff P(entailment) > 0.5 (the ICAT
  threshold, seed 004 §5.4). The probabilities scored for calibration are the same
  projection: the 3 probabilities; P(E), P(C) renormalised to sum 1; or P(E), 1 − P(E).
* Calibration split: the examples are split at random (``seed``) into a fitting half and an
  evaluation half, keeping each ``group`` (claim, page) on one side. The temperature T and
  the baselines' thresholds are fitted on the fitting half; **every system's metrics are
  computed on the evaluation half** (``n_eval`` pairs), so models and baselines are compared
  on the same pairs. ``ece`` is the ECE (15 equal-width bins, max probability) before and
  ``ece_after_temperature`` after temperature scaling. Temperature scaling never changes a
  prediction. Models also get ``all_examples``: accuracy / F1 over all ``n`` pairs (they fit
  nothing on the data, so that figure is fair too).
* ``pairs_per_s``: pairs over the wall time of the model's ``predict`` calls on all ``n`` pairs.
* Baselines (``baselines=True``): ``baseline:majority`` (the most frequent gold label of the
  fitting half), ``baseline:lexical`` (share of the hypothesis' distinct content words that
  occur in the premise) and ``baseline:cosine`` (cosine of the premise and hypothesis
  embeddings from ``embedder_factory()``). A score becomes a label by k − 1 thresholds that
  cut the score axis into k intervals (k = size of the label space: one threshold for 2-way,
  two for 3-way); the thresholds and the assignment of labels to intervals (low → high; the
  natural order "neutral, contradiction, entailment" is tried first and wins ties) are
  chosen to maximise macro-F1 on the fitting half.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.errors import InputError
from core.evaluate.datasets import DATASET_LABELS, NOT_ENTAILMENT, VERIFIER_LABELS, NLIExample, load_verifier_dataset
from core.evaluate.metrics import (
    accuracy,
    balanced_accuracy,
    confusion,
    expected_calibration_error,
    fit_temperature,
    macro_f1,
    per_class_f1,
)
from core.evaluate.report import claimscope_version, machine
from core.text import content_words, words
from core.verify.calibration import apply_temperature

if TYPE_CHECKING:
    from models.nli import NLIModel

Progress = Callable[[str, int, int | None], None]

ENTAILMENT_THRESHOLD = 0.5  # supported iff P(entailment) > 0.5 (2-way supported-vs-not sets)
ECE_BINS = 15
PREDICT_BLOCK = 512  # pairs per predict() call (progress granularity)
MAX_THRESHOLD_CANDIDATES = 64


def evaluate_verifier(
    *,
    dataset: str,
    path: str | Path,
    corpus: str | Path | None = None,
    models: dict[str, NLIModel],
    baselines: bool,
    limit: int | None,
    embedder_factory: Callable[[], Any] | None = None,
    progress: Progress | None = None,
    seed: int = 0,
    split: str | None = None,
    batch_size: int = 32,
    device: str = "cpu",
) -> dict:
    """Run the named models (and baselines) side by side on one dataset; returns the report dict."""
    t_wall = time.perf_counter()
    t0 = time.perf_counter()
    examples = load_verifier_dataset(dataset, path, corpus=corpus, split=split)
    if limit is not None:
        if limit < 1:
            raise InputError(f"--limit must be a positive number, got {limit}")
        examples = examples[:limit]
    data_s = time.perf_counter() - t0
    labels = DATASET_LABELS[dataset]
    y = np.array([labels.index(ex.label) for ex in examples], dtype=np.int64)
    fit_idx, eval_idx = calibration_split(examples, seed)
    can_fit = len(fit_idx) > 0

    systems: dict[str, dict] = {}
    model_manifests: dict[str, dict] = {}
    predict_s: dict[str, float] = {}
    pairs = [(ex.premise, ex.hypothesis) for ex in examples]
    for name, model in models.items():
        probs, seconds = _predict(name, model, pairs, batch_size, progress)
        predict_s[name] = seconds
        model_manifests[name] = model.ref.manifest()
        systems[name] = _score_model(probs, y, labels, fit_idx, eval_idx, seconds)

    skipped: dict[str, str] = {}
    embedder_manifest = None
    load_s = 0.0
    if baselines and not can_fit:
        skipped["baselines"] = "too few examples for a fitting half"
    elif baselines:
        systems["baseline:majority"] = _majority(y, labels, fit_idx, eval_idx)
        lex = np.array([lexical_overlap(ex.premise, ex.hypothesis) for ex in examples])
        systems["baseline:lexical"] = _threshold_baseline(lex, y, labels, fit_idx, eval_idx, "content-word overlap")
        if embedder_factory is None:
            skipped["baseline:cosine"] = "no embedder"
        else:
            t0 = time.perf_counter()
            embedder = embedder_factory()
            load_s = time.perf_counter() - t0
            embedder_manifest = embedder.ref.manifest() if hasattr(embedder, "ref") else None
            cos = _cosines(embedder, examples, progress)
            systems["baseline:cosine"] = _threshold_baseline(cos, y, labels, fit_idx, eval_idx, "embedding cosine")

    manifest: dict[str, Any] = {
        "claimscope": claimscope_version(),
        "models": model_manifests,
        "labels": list(labels),
        "decision_rule": decision_rule(labels),
        "data": {"path": str(path), "sha256": _sha256(path)},
    }
    if corpus is not None:
        manifest["data"]["corpus"] = {"path": str(corpus), "sha256": _sha256(corpus)}
    if NOT_ENTAILMENT in labels:
        manifest["threshold"] = ENTAILMENT_THRESHOLD
    if embedder_manifest is not None:
        manifest["models"]["baseline:cosine"] = embedder_manifest
    report: dict[str, Any] = {
        "task": "verifier",
        "dataset": dataset,
        "path": str(path),
        "n": len(examples),
        "n_eval": len(eval_idx),
        "labels": list(labels),
        "label_counts": {c: int((y == i).sum()) for i, c in enumerate(labels)},
        "calibration_split": {
            "seed": seed,
            "n_fit": len(fit_idx),
            "n_eval": len(eval_idx),
            "grouped": any(ex.group is not None for ex in examples),
            "note": "random half of the examples (groups kept together) fits the temperature and the "
            "baseline thresholds; all systems' metrics are on the other (evaluation) half",
        },
        "systems": systems,
        "manifest": manifest,
        "timing": {"wall_s": time.perf_counter() - t_wall, "data_s": data_s, "predict_s": predict_s, "load_s": load_s},
        "machine": machine(device),
    }
    if corpus is not None:
        report["corpus"] = str(corpus)
    if split is not None:
        report["split"] = split
    if limit is not None:
        report["limit"] = limit
    if skipped:
        report["skipped"] = skipped
    return report


# --------------------------------------------------------------------------- decision rules


def decision_rule(labels: Sequence[str]) -> str:
    if tuple(labels) == VERIFIER_LABELS:
        return "argmax of P(entailment), P(neutral), P(contradiction)"
    if tuple(labels) == ("entailment", "contradiction"):
        return "entailment iff P(entailment) >= P(contradiction)"
    if tuple(labels) == ("entailment", NOT_ENTAILMENT):
        return f"entailment iff P(entailment) > {ENTAILMENT_THRESHOLD}"
    raise ValueError(f"no decision rule for labels {labels}")


def project_probs(probs: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """3-way model probabilities → probabilities over the dataset's label space (rows sum to 1)."""
    p = np.clip(np.asarray(probs, dtype=np.float64), 0.0, None)
    total = p.sum(axis=1, keepdims=True)
    p = np.divide(p, total, out=np.full_like(p, 1 / 3), where=total > 0)
    if tuple(labels) == VERIFIER_LABELS:
        return p
    if tuple(labels) == ("entailment", "contradiction"):
        ec = p[:, [0, 2]]
        s = ec.sum(axis=1, keepdims=True)
        return np.divide(ec, s, out=np.full_like(ec, 0.5), where=s > 0)
    if tuple(labels) == ("entailment", NOT_ENTAILMENT):
        return np.stack([p[:, 0], 1.0 - p[:, 0]], axis=1)
    raise ValueError(f"no projection for labels {labels}")


def predict_labels(projected: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """Label indices from projected probabilities (argmax, first label on ties; 2-way
    supported-vs-not: entailment iff P(entailment) > 0.5)."""
    if tuple(labels) == ("entailment", NOT_ENTAILMENT):
        return np.where(projected[:, 0] > ENTAILMENT_THRESHOLD, 0, 1)
    return projected.argmax(axis=1)


# --------------------------------------------------------------------------- split


def calibration_split(examples: Sequence[NLIExample], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fitting indices, evaluation indices): groups in random order (``seed``) go to the
    fitting half until it holds n // 2 examples; the rest form the evaluation half. Examples
    without a group are their own group. Both index arrays are sorted."""
    members: dict[str, list[int]] = {}
    for i, ex in enumerate(examples):
        members.setdefault(ex.group if ex.group is not None else f"\0{i}", []).append(i)
    keys = list(members)
    order = np.random.default_rng(seed).permutation(len(keys))
    target, fit = len(examples) // 2, []
    for k in order:
        if len(fit) >= target:
            break
        fit.extend(members[keys[k]])
    fit_set = set(fit)
    eval_ = [i for i in range(len(examples)) if i not in fit_set]
    return np.array(sorted(fit), dtype=np.int64), np.array(eval_, dtype=np.int64)


# --------------------------------------------------------------------------- models


def _predict(name: str, model, pairs: list[tuple[str, str]], batch_size: int, progress: Progress | None):
    blocks, seconds = [], 0.0
    for start in range(0, len(pairs), PREDICT_BLOCK):
        block = pairs[start : start + PREDICT_BLOCK]
        t0 = time.perf_counter()
        if hasattr(model, "predict_long"):
            # the product's inference: long evidence in windows, the most decisive window decides
            out = np.asarray([p.probs for p in model.predict_long(block, batch_size=batch_size)], dtype=np.float64)
        else:
            out = np.asarray(model.predict(block, batch_size=batch_size), dtype=np.float64)
        seconds += time.perf_counter() - t0
        if out.shape != (len(block), 3) or not np.isfinite(out).all():
            raise ValueError(f"model {name} returned {out.shape} (or non-finite values); expected ({len(block)}, 3)")
        blocks.append(out)
        if progress:
            progress(name, len(block), len(pairs))
    return np.concatenate(blocks), seconds


def _classification(y_idx: np.ndarray, pred_idx: np.ndarray, labels: Sequence[str]) -> dict:
    gold = [labels[i] for i in y_idx]
    pred = [labels[i] for i in pred_idx]
    return {
        "accuracy": accuracy(gold, pred),
        "macro_f1": macro_f1(gold, pred, labels),
        "balanced_accuracy": balanced_accuracy(gold, pred, labels),
        "per_class_f1": per_class_f1(gold, pred, labels),
        "confusion": confusion(gold, pred, labels),
    }


def _score_model(probs, y, labels, fit_idx, eval_idx, seconds) -> dict:
    projected = project_probs(probs, labels)
    pred = predict_labels(projected, labels)
    out = _classification(y[eval_idx], pred[eval_idx], labels)
    correct = pred[eval_idx] == y[eval_idx]
    out["ece"] = expected_calibration_error(projected[eval_idx].max(axis=1), correct, ECE_BINS)
    if len(fit_idx):
        logp = np.log(np.clip(projected[fit_idx], 1e-12, 1.0))
        temperature = fit_temperature(logp, y[fit_idx])
        calibrated = apply_temperature(projected[eval_idx], temperature)
        out["temperature"] = temperature
        out["ece_after_temperature"] = expected_calibration_error(calibrated.max(axis=1), correct, ECE_BINS)
    else:
        out["temperature"] = None
        out["ece_after_temperature"] = None
    out["pairs_per_s"] = len(y) / seconds if seconds > 0 else None
    out["predict_s"] = seconds
    out["n_eval"] = len(eval_idx)
    full = _classification(y, pred, labels)
    del full["confusion"]
    out["all_examples"] = {"n": len(y), **full}
    return out


# --------------------------------------------------------------------------- baselines


def lexical_overlap(premise: str, hypothesis: str) -> float:
    """Share of the hypothesis' distinct content words (all words if it has none) found in the premise."""
    hyp = set(content_words(hypothesis)) or set(words(hypothesis))
    if not hyp:
        return 0.0
    return len(hyp & set(words(premise))) / len(hyp)


def _majority(y, labels, fit_idx, eval_idx) -> dict:
    counts = Counter(y[fit_idx].tolist())
    best = max(range(len(labels)), key=lambda i: (counts.get(i, 0), -i))
    out = _classification(y[eval_idx], np.full(len(eval_idx), best), labels)
    out["rule"] = {"label": labels[best]}
    out["n_eval"] = len(eval_idx)
    return out


def _cosines(embedder, examples: Sequence[NLIExample], progress: Progress | None) -> np.ndarray:
    texts = list(dict.fromkeys([ex.premise for ex in examples] + [ex.hypothesis for ex in examples]))
    name = "baseline:cosine"
    if progress:
        vecs = embedder.encode(texts, progress=lambda k: progress(name, k, len(texts)))
    else:
        vecs = embedder.encode(texts)
    vecs = np.asarray(vecs, dtype=np.float64)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
    row = {t: i for i, t in enumerate(texts)}
    p = vecs[[row[ex.premise] for ex in examples]]
    h = vecs[[row[ex.hypothesis] for ex in examples]]
    return (p * h).sum(axis=1)


def fit_interval_rule(scores: np.ndarray, y: np.ndarray, k: int) -> tuple[list[float], tuple[int, ...]]:
    """k − 1 thresholds and a label per interval (low → high) maximising macro-F1 on (scores, y).

    Interval of a score = number of thresholds it is ≥ to. Threshold candidates are the
    distinct scores (or up to 64 quantiles of them) plus +inf (an empty upper interval).
    Label orders are tried with the natural one first (low overlap → neutral / not
    entailed, high → entailment); the first best wins.
    """
    uniq = np.unique(scores)
    if len(uniq) > MAX_THRESHOLD_CANDIDATES:
        uniq = np.unique(np.quantile(scores, np.linspace(0, 1, MAX_THRESHOLD_CANDIDATES)))
    cands = [*uniq.tolist(), float("inf")]
    natural = tuple(range(k - 1, -1, -1)) if k == 2 else (1, 2, 0)  # 3-way: neutral, contradiction, entailment
    orders = [natural] + [p for p in itertools.permutations(range(k)) if p != natural]
    best: tuple[float, list[float], tuple[int, ...]] = (-1.0, [], natural)
    for ts in itertools.combinations_with_replacement(cands, k - 1):
        interval = np.zeros(len(scores), dtype=np.int64)
        for t in ts:
            interval += scores >= t
        cm = np.bincount(y * k + interval, minlength=k * k).reshape(k, k)  # gold × interval
        for order in orders:
            cm_pred = np.zeros_like(cm)
            cm_pred[:, list(order)] = cm  # interval j predicts label order[j]
            f1 = _macro_f1_from_confusion(cm_pred)
            if f1 > best[0] + 1e-12:
                best = (f1, list(ts), order)
    return best[1], best[2]


def _macro_f1_from_confusion(cm: np.ndarray) -> float:
    tp = np.diag(cm).astype(np.float64)
    fp = cm.sum(axis=0) - tp
    fn = cm.sum(axis=1) - tp
    denom = 2 * tp + fp + fn
    present = denom > 0
    return float((2 * tp[present] / denom[present]).mean()) if present.any() else 0.0


def _threshold_baseline(scores, y, labels, fit_idx, eval_idx, score_name: str) -> dict:
    k = len(labels)
    thresholds, order = fit_interval_rule(scores[fit_idx], y[fit_idx], k)
    interval = np.zeros(len(eval_idx), dtype=np.int64)
    for t in thresholds:
        interval += scores[eval_idx] >= t
    pred = np.array(order, dtype=np.int64)[interval]
    out = _classification(y[eval_idx], pred, labels)
    out["rule"] = {
        "score": score_name,
        "thresholds": [None if t == float("inf") else t for t in thresholds],
        "intervals_low_to_high": [labels[i] for i in order],
    }
    out["n_eval"] = len(eval_idx)
    return out


# --------------------------------------------------------------------------- report helpers


def _sha256(path: str | Path) -> str | None:
    try:
        h = hashlib.sha256()
        with Path(path).expanduser().open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None




_SHORT = {"entailment": "E", "neutral": "N", "contradiction": "C", NOT_ENTAILMENT: "notE"}


def format_table(report: dict) -> str:
    """A plain-text table for stdout: accuracy, macro-F1, balanced accuracy, per-class F1,
    ECE before / after temperature scaling, T and pairs/s per system."""
    labels = report["labels"]
    cols = ["acc", "macro-F1", "bal-acc", *[f"F1:{_SHORT.get(c, c)}" for c in labels], "ECE", "ECE(T)", "T", "pairs/s"]
    width = max(18, *(len(name) + 2 for name in report["systems"]))
    split = report["calibration_split"]
    lines = [
        f"verifier on {report['dataset']}: {report['n']} pairs, metrics on the evaluation half "
        f"({split['n_eval']} pairs; {split['n_fit']} fit T and baseline thresholds, seed {split['seed']})",
        f"{'system':<{width}}" + "".join(f"{c:>10}" for c in cols),
    ]
    for name, m in report["systems"].items():
        values = [m.get("accuracy"), m.get("macro_f1"), m.get("balanced_accuracy")]
        values += [m.get("per_class_f1", {}).get(c) for c in labels]
        values += [m.get("ece"), m.get("ece_after_temperature"), m.get("temperature")]
        cells = [f"{v:>10.3f}" if isinstance(v, float | int) else f"{'-':>10}" for v in values]
        pps = m.get("pairs_per_s")
        cells.append(f"{pps:>10.1f}" if isinstance(pps, float | int) else f"{'-':>10}")
        lines.append(f"{name:<{width}}" + "".join(cells))
    lines.append(f"decision rule: {report['manifest']['decision_rule']}")
    for name, why in report.get("skipped", {}).items():
        lines.append(f"skipped {name}: {why}")
    return "\n".join(lines)
