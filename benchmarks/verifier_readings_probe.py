"""Test-time readings of the verifier's probabilities, screened at the verifier level (issue 16).

Each reading wraps the shipped verifier and changes its (entail, neutral, contradict)
probabilities after the forward pass, with no training; each was screened against a rule written
before its figures (docs/benchmarks.md, "Two test-time readings of the verifier", session 42):

* ``symmetric`` — a contradiction must hold both ways. Contradiction is symmetric (if the
  evidence contradicts the claim, the claim contradicts the evidence); entailment is not. The
  pair is read a second time with premise and hypothesis swapped, and
  P'(C) = min(P(C | e, c), P(C | c, e)), P'(E) = P(E | e, c), P'(N) = 1 − P'(E) − P'(C).
  The reverse pass runs only where the forward P(C) ≥ ``--floor`` (0.25); for long evidence it
  reads the forward pass's deciding window.
* ``numbers`` — numbers must match to entail (FactCC §3.1's number swaps, VitaminC's contrastive
  revisions). Where the claim has numbers (:func:`core.verify.verdict_model.numbers`) and the
  evidence window has numbers too, but not all of the claim's, P'(C) = P(C) + P(E), P'(E) = 0.

The screen: the 18 product cases, FEVER-Symmetric dev and VitaminC real dev pages, scored by
``eval verifier``'s own code (macro-F1 on the evaluation half, and on all pairs).

    PYTHONPATH=. python benchmarks/verifier_readings_probe.py --reading symmetric --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

from core.verify.verdict_model import numbers
from models.nli import CONTRADICT, ENTAIL, LABELS, NEUTRAL, WindowedPrediction, load_nli

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CLAIMSCOPE_SHARED_DATA", ROOT.parent / "shared" / "data"))


def symmetric(forward: np.ndarray, reverse: np.ndarray) -> np.ndarray:
    """The symmetric reading's probabilities from the forward and the reversed reading (n, 3)."""
    out = np.array(forward, dtype=np.float64, copy=True)
    c = np.minimum(forward[:, CONTRADICT], reverse[:, CONTRADICT])
    out[:, CONTRADICT] = c
    out[:, NEUTRAL] = np.clip(1.0 - out[:, ENTAIL] - c, 0.0, None)
    return out


def number_clash(claim: str, evidence: str) -> bool:
    """The claim has numbers, the evidence has numbers too, and not all of the claim's."""
    want, have = numbers(claim), numbers(evidence)
    return bool(want) and bool(have) and not want <= have


class Reading:
    """An NLI model wrapper that applies one reading to every prediction (``predict`` and
    ``predict_long``, which the eval and the product call); counts the extra pairs it judged
    and the pairs it changed."""

    def __init__(self, nli, kind: str, floor: float = 0.25) -> None:
        if kind not in ("symmetric", "numbers"):
            raise ValueError(f"unknown reading {kind!r}")
        self.nli, self.kind, self.floor, self.ref = nli, kind, floor, nli.ref
        self.reverse_pairs = self.changed = 0

    def _apply(self, forward: np.ndarray, premises: Sequence[str], claims: Sequence[str]) -> np.ndarray:
        out = np.array(forward, dtype=np.float64, copy=True)
        if self.kind == "symmetric":
            idx = [i for i in range(len(claims)) if forward[i, CONTRADICT] >= self.floor]
            if idx:
                rev = np.asarray(self.nli.predict([(claims[i], premises[i]) for i in idx]), dtype=np.float64)
                self.reverse_pairs += len(idx)
                out[idx] = symmetric(out[idx], rev)
        else:
            idx = [i for i in range(len(claims)) if number_clash(claims[i], premises[i])]
            out[idx, CONTRADICT] += out[idx, ENTAIL]
            out[idx, ENTAIL] = 0.0
        self.changed += int((out.argmax(axis=1) != np.asarray(forward).argmax(axis=1)).sum())
        return out

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        fwd = np.asarray(self.nli.predict(pairs, batch_size), dtype=np.float64)
        return self._apply(fwd, [p for p, _ in pairs], [h for _, h in pairs])

    def predict_long(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> list[WindowedPrediction]:
        preds = self.nli.predict_long(pairs, batch_size)
        fwd = np.stack([p.probs for p in preds]).astype(np.float64) if preds else np.zeros((0, 3))
        windows = [prem[p.span[0]:p.span[1]] for (prem, _), p in zip(pairs, preds, strict=True)]
        new = self._apply(fwd, windows, [h for _, h in pairs])
        return [WindowedPrediction(new[i], p.window, p.n_windows, p.span) for i, p in enumerate(preds)]


def product_cases(nli, reading: Reading) -> dict:
    from benchmarks.verifier_product_cases import load_cases

    cases = load_cases()
    pairs = [(c["evidence"], c["claim"]) for c in cases]
    fwd = [p.probs for p in nli.predict_long(pairs)]
    new = [p.probs for p in reading.predict_long(pairs)]
    rows = []
    for c, f, s in zip(cases, fwd, new, strict=True):
        rows.append({"id": c["id"], "gold": c["label"], "v1": LABELS[int(np.argmax(f))], "reading": LABELS[int(np.argmax(s))],
                     "v1_probs": [round(float(x), 3) for x in f], "reading_probs": [round(float(x), 3) for x in s]})
    return {
        "n": len(rows),
        "v1_correct": sum(r["v1"] == r["gold"] for r in rows),
        "reading_correct": sum(r["reading"] == r["gold"] for r in rows),
        "cases_lost": [r["id"] for r in rows if r["v1"] == r["gold"] != r["reading"]],
        "gold_contradictions_kept": all(r["reading"] == "contradiction" for r in rows if r["gold"] == "contradiction"),
        "rows": rows,
    }


def verifier_set(dataset: str, path: Path, split: str | None, nli, kind: str, floor: float) -> dict:
    from core.evaluate.verifier import evaluate_verifier

    reading = Reading(nli, kind, floor)
    t0 = time.perf_counter()
    rep = evaluate_verifier(dataset=dataset, path=path, models={"v1": nli, "reading": reading}, baselines=False,
                            limit=None, split=split)
    out = {"wall_s": round(time.perf_counter() - t0, 1), "reverse_pairs": reading.reverse_pairs,
           "argmax_changed": reading.changed}
    for name in ("v1", "reading"):
        s = rep["systems"][name]
        out[name] = {"macro_f1_eval_half": s["macro_f1"], "macro_f1_all": s["all_examples"]["macro_f1"],
                     "accuracy_eval_half": s["accuracy"], "per_class_f1": s["per_class_f1"],
                     "confusion": s["confusion"], "predict_s": s["predict_s"], "n_eval": s["n_eval"]}
    out["delta_eval_half"] = out["reading"]["macro_f1_eval_half"] - out["v1"]["macro_f1_eval_half"]
    out["delta_all"] = out["reading"]["macro_f1_all"] - out["v1"]["macro_f1_all"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reading", choices=("symmetric", "numbers"), required=True)
    ap.add_argument("--floor", type=float, default=0.25, help="symmetric: reverse pass where forward P(C) >= this")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    nli = load_nli("embedded")
    report: dict = {"reading": args.reading, "floor": args.floor, "verifier": nli.ref.manifest(),
                    "runtime": getattr(nli, "runtime", None)}
    report["product_cases"] = product_cases(nli, Reading(nli, args.reading, args.floor))
    pc = report["product_cases"]
    print(f"product cases: v1 {pc['v1_correct']}/{pc['n']}, {args.reading} {pc['reading_correct']}/{pc['n']}, "
          f"lost {pc['cases_lost']}, gold contradictions kept: {pc['gold_contradictions_kept']}")
    for name, ds, path, split in (
        ("fever_symmetric", "fever-symmetric", DATA / "fever_symmetric" / "dev.jsonl", None),
        ("vitaminc_real_dev", "vitaminc", DATA / "vitaminc" / "real_dev_half.jsonl", "dev"),
    ):
        r = report[name] = verifier_set(ds, path, split, nli, args.reading, args.floor)
        print(f"{name}: v1 {r['v1']['macro_f1_eval_half']:.4f} (all {r['v1']['macro_f1_all']:.4f}), "
              f"{args.reading} {r['reading']['macro_f1_eval_half']:.4f} (all {r['reading']['macro_f1_all']:.4f}); "
              f"Δ {r['delta_eval_half']:+.4f} / {r['delta_all']:+.4f}; argmax changed {r['argmax_changed']}, "
              f"reverse pairs {r['reverse_pairs']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
