"""``claimscope eval verdicts``: claim-level verdicts over several evidence sentences.

Climate-FEVER gives each claim five evidence sentences and a claim label that maps one to
one onto claimscope's verdicts: SUPPORTS → supported, REFUTES → refuted, NOT_ENOUGH_INFO →
not_enough_info, DISPUTED → conflicting. Every sentence, and every set of up to 3 of them
(seed 003), is judged once; the verdict thresholds (support, refute, conflict) are then
fitted by grid search for macro-F1 on a random half of the claims and reported on the
other half, next to the defaults — so the thresholds are chosen on dev data and the
reported figure is not fitted on itself. The learned verdicts (core/verify/verdict_model.py,
fitted on train splits and the seed-0 fit half) are reported on the same held-out half.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from core.errors import InputError
from core.evaluate.metrics import accuracy, confusion, macro_f1
from core.ingest.sources import jsonl_records, record_field
from core.verify.base import Thresholds
from core.verify.verifier import VERDICTS, Judgement, PassageEvidence, Verifier

CLIMATE_FEVER_VERDICT = {
    "SUPPORTS": "supported", "REFUTES": "refuted", "NOT_ENOUGH_INFO": "not_enough_info", "DISPUTED": "conflicting",
}
GRID = np.round(np.arange(0.30, 0.951, 0.05), 2)
CONFLICT_GRID = np.round(np.arange(0.50, 0.951, 0.05), 2)


def load_climate_fever_claims(path: str | Path) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(claim, gold verdict, [(evidence sentence, its Wikipedia article title)]) per claim."""
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError("no such file", path)
    out = []
    for lineno, obj in jsonl_records(path):
        claim = record_field(obj, "claim", str, path, lineno)
        label = record_field(obj, "claim_label", str, path, lineno)
        if label not in CLIMATE_FEVER_VERDICT:
            raise InputError(f"unknown claim_label {label!r}", path, lineno)
        evidences = record_field(obj, "evidences", list, path, lineno)
        sents = [
            (e["evidence"], str(e.get("article") or ""))
            for e in evidences
            if isinstance(e, dict) and isinstance(e.get("evidence"), str)
        ]
        out.append((claim, CLIMATE_FEVER_VERDICT[label], sents))
    if not out:
        raise InputError("contains no claims", path)
    return out


def evaluate_verdicts(
    *, path: str | Path, verifier: Verifier, seed: int = 0, limit: int | None = None,
    progress: Callable[[str, int, int | None], None] | None = None, fix_support: float | None = None,
) -> dict:
    """Judge every claim once, then fit the thresholds on the fit half and report the held-out half.

    ``fix_support`` holds the support threshold at that value and fits only refute and conflict:
    for a verifier whose support threshold was fitted on given documents (the grounding fit pool,
    docs/verifier_v2.md "Run 9"), which Climate-FEVER's five sentences per claim should not move."""
    if fix_support is not None and not 0.0 <= fix_support <= 1.0:
        raise ValueError(f"fix_support must be in [0, 1], got {fix_support}")
    t0 = time.perf_counter()
    claims = load_climate_fever_claims(path)[: limit or None]
    judged: list[list[Judgement]] = []
    titles: list[dict[int, str]] = []
    for claim, _, sents in claims:
        passages = [PassageEvidence(i + 1, i + 1, (s,), s, title) for i, (s, title) in enumerate(sents)]
        judged.append(verifier.verify(claim, passages, always_sets=True).judgements)
        titles.append({p.passage_id: p.title for p in passages})
        if progress:
            progress("claims", 1, len(claims))
    judge_s = time.perf_counter() - t0
    gold = [g for _, g, _ in claims]
    order = np.random.default_rng(seed).permutation(len(claims))
    fit, held = sorted(order[: len(claims) // 2]), sorted(order[len(claims) // 2 :])

    def predict(t: Thresholds, idx) -> list[str]:
        v = Verifier(verifier.nli, t)  # re-decides stored judgements: grounding flags are already set
        return [v.decide_staged(judged[i]).label for i in idx]

    def score(t: Thresholds, idx) -> dict:
        pred, y = predict(t, idx), [gold[i] for i in idx]
        return {
            "accuracy": accuracy(y, pred), "macro_f1": macro_f1(y, pred, VERDICTS),
            "confusion": confusion(y, pred, VERDICTS),
        }

    base = verifier.t
    best, best_f1 = base, -1.0
    supports = GRID if fix_support is None else (fix_support,)
    for s, r, c in itertools.product(supports, GRID, CONFLICT_GRID):
        if c < max(s, r):
            continue
        t = replace(base, support=float(s), refute=float(r), conflict=float(c))
        f1 = macro_f1([gold[i] for i in fit], predict(t, fit), VERDICTS)
        if f1 > best_f1 + 1e-9:
            best, best_f1 = t, f1
    # The learned verdicts (core/verify/verdict_model.py) from the same judgements; the shipped model
    # was fitted on the seed-0 fit half (and other train sets), so its held-out figure is fair
    # only for seed 0.
    from core.verify.verdict_model import decide_learned, model_digest, shipped_model

    learned = [
        decide_learned(claims[i][0], judged[i], titles[i], verifier.subject_terms, base, shipped_model()).label
        for i in range(len(claims))
    ]

    def score_learned(idx) -> dict:
        pred, y = [learned[i] for i in idx], [gold[i] for i in idx]
        return {"accuracy": accuracy(y, pred), "macro_f1": macro_f1(y, pred, VERDICTS),
                "confusion": confusion(y, pred, VERDICTS)}

    return {
        "task": "verdicts",
        "dataset": "climate-fever",
        "path": str(path),
        "n": len(claims),
        "label_counts": {v: gold.count(v) for v in VERDICTS},
        "split": {"seed": seed, "n_fit": len(fit), "n_eval": len(held)},
        "fixed_support": fix_support,
        "systems": {
            "default": {
                "thresholds": asdict(base),
                "fit_macro_f1": macro_f1([gold[i] for i in fit], predict(base, fit), VERDICTS),
                **score(base, held),
            },
            "fitted": {"thresholds": asdict(best), "fit_macro_f1": best_f1, **score(best, held)},
            "learned": {"model": model_digest(), "trained_on": sorted(shipped_model().meta.get("trained_on", {})),
                        "by_kind": {k: sorted(m.meta.get("trained_on", {})) for k, m in shipped_model().by_kind.items()},
                        "fit_macro_f1": score_learned(fit)["macro_f1"], **score_learned(held)},
        },
        "grounding": verifier.subject_terms is not None,
        "manifest": {"models": {"nli": verifier.nli.ref.manifest()}},
        "timing": {"judge_s": judge_s, "claims_per_s": len(claims) / judge_s if judge_s else None},
    }


def format_table(report: dict) -> str:
    lines = [f"verdicts on {report['dataset']} ({report['split']['n_eval']} held-out claims of {report['n']})"]
    for name, m in report["systems"].items():
        t = m.get("thresholds")
        how = (f"support > {t['support']}, refute > {t['refute']}, conflict > {t['conflict']}" if t
               else f"learned verdict model {m['model']}")
        lines.append(f"{name:<8} acc {m['accuracy']:.3f}  macro-F1 {m['macro_f1']:.3f}   ({how})")
    for name in ("fitted", "learned"):
        if name in report["systems"]:
            lines.append(f"{name} confusion (gold → predicted): {json.dumps(report['systems'][name]['confusion'])}")
    return "\n".join(lines)
