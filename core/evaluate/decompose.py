"""``claimscope eval decompose``: produced claims vs human atomic claims, per sentence.

Datasets: FActScore (``factscore/*_dev.jsonl``: per annotated sentence, the human atomic
facts) and Factcheck-GPT (``factcheck_gpt/dev.jsonl``: per sentence, the gold
decontextualised claims). Each answer is decomposed whole (so pronouns resolve as in real
use); produced claims are assigned to the sentence their span falls in. Only sentences
with at least one gold claim are scored, and only checkable produced claims count.

Matching is one-to-one (a maximum matching, Hungarian algorithm) with two similarity measures:
- ``nli`` (default): bidirectional entailment with the project's verifier, similarity =
  min(P(entail | produced → gold), P(entail | gold → produced)), a match when > 0.5 (the
  ICAT entailment threshold, seed 004 §5.4) — two claims match when each entails the other;
- ``embedding``: cosine of all-MiniLM-L6-v2 embeddings ≥ 0.75. Measured to be a weak
  matcher: "Marie Curie discovered radium." vs "… polonium." scores 0.83 (different facts)
  while "His career began in the late 1970s." vs "Lanny Flaherty's career began in the
  late 1970s." scores 0.60 (the same fact); kept for comparison only.
precision = matched / produced, recall = matched / gold.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.decompose.base import Decomposer
from core.errors import InputError
from core.evaluate.report import claimscope_version, machine
from core.ingest.sources import jsonl_records, record_field

THRESHOLDS = {"nli": 0.5, "embedding": 0.75}


@dataclass(frozen=True)
class GoldAnswer:
    text: str
    sentences: list[tuple[str, list[str]]]  # (sentence text, gold claims)
    kind: str = "factscore"  # the dataset it came from


def load_decompose_dataset(name: str, path: str | Path) -> list[GoldAnswer]:
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError("no such file", path)
    out = []
    for lineno, obj in jsonl_records(path):
        if name == "auto":  # FActScore records annotate sentences; Factcheck-GPT records list them
            name = "factscore" if "annotations" in obj else "factcheck-gpt" if "sentences" in obj else name
        if name == "factscore":
            text = record_field(obj, "output", str, path, lineno)
            anns = obj.get("annotations") or []
            sents = [
                (a["text"], [f["text"] for f in (a.get("human-atomic-facts") or [])])
                for a in anns
                if isinstance(a, dict) and isinstance(a.get("text"), str)
            ]
        elif name == "factcheck-gpt":
            text = record_field(obj, "response", str, path, lineno)
            raw = record_field(obj, "sentences", dict, path, lineno)
            sents = [(s["text"], [c for c in (s.get("claims") or []) if isinstance(c, str)]) for s in raw.values()]
        else:
            raise InputError(f"unknown decomposition dataset {name!r} (factscore, factcheck-gpt, auto)", path, lineno)
        out.append(GoldAnswer(text, sents, name))
    if not out:
        raise InputError("contains no answers", path)
    return out


def similarity(method: str, model, produced: list[str], gold: list[str]) -> np.ndarray:
    """(len(produced), len(gold)) similarities under ``method`` (see module docstring)."""
    if method == "embedding":
        vecs = model.encode(produced + gold)
        return vecs[: len(produced)] @ vecs[len(produced) :].T
    pairs = [(p, g) for p in produced for g in gold] + [(g, p) for p in produced for g in gold]
    ent = model.predict(pairs)[:, 0].reshape(2, len(produced), len(gold))
    return np.minimum(ent[0], ent[1])


def match(sims: np.ndarray, threshold: float, strict: bool = False) -> int:
    """Size of a maximum one-to-one matching over pairs above the threshold (Hungarian
    algorithm, as seed 000 §1.3 uses for evidence; ties broken by higher similarity)."""
    if sims.size == 0:
        return 0
    from scipy.optimize import linear_sum_assignment

    ok = sims > threshold if strict else sims >= threshold
    weight = np.where(ok, 1.0 + sims, 0.0)  # any extra match outweighs any similarity gain
    rows, cols = linear_sum_assignment(weight, maximize=True)
    return int(ok[rows, cols].sum())


def evaluate_decompose(
    *, dataset: str, path: str | Path, decomposers: dict[str, Decomposer], matcher, method: str = "nli",
    limit: int | None = None, progress: Callable[[str, int, int | None], None] | None = None,
) -> dict:
    """``matcher`` is the NLI model (method ``nli``) or the embedder (method ``embedding``)."""
    if method not in THRESHOLDS:
        raise InputError(f"unknown matching method {method!r} (nli or embedding)")
    threshold = THRESHOLDS[method]
    answers = load_decompose_dataset(dataset, path)[: limit or None]
    if dataset == "auto":
        dataset = "factscore" if all(a.kind == "factscore" for a in answers) else "factcheck-gpt"
    systems = {}
    for name, dec in decomposers.items():
        tp = n_prod = n_gold = n_sent = fallback = 0
        seconds = 0.0
        dec.decompose(answers[0].sentences[0][0] if answers[0].sentences else answers[0].text[:200])  # load models untimed
        for ans in answers:
            t0 = time.perf_counter()
            claims = [c for c in dec.decompose(ans.text) if c.checkable]
            seconds += time.perf_counter() - t0
            fallback += sum(1 for c in claims if c.note and "rules decomposer used" in c.note)
            pos = 0
            for sent, gold in ans.sentences:
                start = ans.text.find(sent, pos)
                if start < 0:  # not verbatim in the answer: decompose the sentence alone
                    t0 = time.perf_counter()
                    mine = [c.text for c in dec.decompose(sent) if c.checkable]
                    seconds += time.perf_counter() - t0
                else:
                    end = start + len(sent)
                    pos = end
                    mine = [c.text for c in claims if start <= c.span[0] < end]
                if not gold:
                    continue
                n_sent += 1
                n_prod += len(mine)
                n_gold += len(gold)
                if mine:
                    tp += match(similarity(method, matcher, mine, gold), threshold, strict=method == "nli")
            if progress:
                progress(name, 1, len(answers))
        p = tp / n_prod if n_prod else 0.0
        r = tp / n_gold if n_gold else 0.0
        systems[name] = {
            "precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "claims_per_sentence": n_prod / n_sent if n_sent else 0.0,
            "gold_claims_per_sentence": n_gold / n_sent if n_sent else 0.0,
            "ms_per_sentence": 1000 * seconds / max(1, sum(len(a.sentences) for a in answers)),
            "sentences_timed": sum(len(a.sentences) for a in answers),
            "sentences": n_sent, "matched": tp, "produced": n_prod, "gold": n_gold,
            "fallback_claims": fallback,  # llm decomposer: claims that came from its rules fallback
        }
    return {
        "task": "decompose", "dataset": dataset, "path": str(path), "n": len(answers),
        "matching": {"method": method, "threshold": threshold, "rule": "maximum one-to-one matching (Hungarian)"},
        "systems": systems,
        "manifest": {"claimscope": claimscope_version(), "models": _models(decomposers, matcher)},
        "machine": machine(),
    }


def _models(decomposers: dict[str, Decomposer], matcher) -> dict:
    models = {"matcher": matcher.ref.manifest()}
    for name, dec in decomposers.items():
        llm = getattr(dec, "llm", None)
        if llm is not None:
            models[f"decomposer:{name}"] = llm.ref.manifest()
    return models


def evaluate_decompose_sets(
    *, sets: list[tuple[str, Path]], decomposers: dict[str, Decomposer], matcher, method: str = "nli",
    limit: int | None = None, progress: Callable[[str, int, int | None], None] | None = None,
) -> dict:
    """Every decomposer on several dev files in one run: one report per file (``dataset``
    ``auto`` detects FActScore vs Factcheck-GPT from the records), and a pooled row per
    decomposer over all files (micro-averaged: matched / produced, matched / gold)."""
    reports = [
        evaluate_decompose(dataset=ds, path=path, decomposers=decomposers, matcher=matcher, method=method,
                           limit=limit, progress=progress)
        for ds, path in sets
    ]
    pooled = {}
    for name in decomposers:
        rows = [r["systems"][name] for r in reports]
        tp, prod, gold, n_sent = (sum(m[k] for m in rows) for k in ("matched", "produced", "gold", "sentences"))
        p, r = (tp / prod if prod else 0.0), (tp / gold if gold else 0.0)
        ms = sum(m["ms_per_sentence"] * m["sentences_timed"] for m in rows) / max(1, sum(m["sentences_timed"] for m in rows))
        pooled[name] = {
            "precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "claims_per_sentence": prod / n_sent if n_sent else 0.0, "gold_claims_per_sentence": gold / n_sent if n_sent else 0.0,
            "ms_per_sentence": ms, "sentences": n_sent, "matched": tp, "produced": prod, "gold": gold,
            "fallback_claims": sum(m["fallback_claims"] for m in rows),
        }
    return {
        "task": "decompose", "limit_per_file": limit, "matching": reports[0]["matching"], "reports": reports,
        "pooled": pooled, "manifest": reports[0]["manifest"], "machine": reports[0]["machine"],
    }


def format_table(report: dict) -> str:
    if "reports" in report:  # several files: one table each, then the pooled rows
        parts = [format_table(r) for r in report["reports"]]
        pooled = {"dataset": "all files pooled", "n": sum(r["n"] for r in report["reports"]),
                  "matching": report["matching"], "systems": report["pooled"]}
        return "\n\n".join([*parts, format_table(pooled)])
    where = f"{report['dataset']} {Path(report['path']).name}" if "path" in report else report["dataset"]
    lines = [f"decomposition on {where} ({report['n']} answers; match: {report['matching']['method']} {report['matching']['threshold']})",
             f"{'system':<10}{'precision':>10}{'recall':>10}{'f1':>8}{'claims/sent':>13}{'gold/sent':>11}{'ms/sent':>10}"]
    for name, m in report["systems"].items():
        lines.append(f"{name:<10}{m['precision']:>10.3f}{m['recall']:>10.3f}{m['f1']:>8.3f}"
                     f"{m['claims_per_sentence']:>13.2f}{m['gold_claims_per_sentence']:>11.2f}{m['ms_per_sentence']:>10.1f}")
    return "\n".join(lines)
