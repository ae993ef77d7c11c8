"""``claimscope eval leakage``: seed 000's leakage audit on SciFact, as the paper's Table 4.

For every claim with gold evidence and every expansion method (query2doc, hyde):

1. the local LLM writes the pseudo-document (repeat r samples with seed r; the paper
   repeats 8 times and reports mean ± standard error — ``--repeats``);
2. :func:`core.retrieve.leakage.audit` splits it into sentences, drops restatements of the claim
   (ROUGE-2 ≥ 0.95) and labels every (gold evidence, generated sentence) pair with the
   verifier's NLI model (premise = gold evidence); matched ⇔ some pair is entailment
   (the argmax by default; ``min_entailment`` also asks P(entailment) ≥ that value);
3. retrieval with the expansion and with its unexpanded baseline (query2doc → BM25,
   hyde → dense) is scored by recall@k / ndcg@k on ALL, matched (M) and unmatched (¬M)
   claims, side by side.

Gold evidence (premises): per gold document, its rationale sentences in document order
(the SciFact annotation; ``load_scifact_pairs``). The paper's matcher was GPT-4o-mini; a
local NLI model draws the M / ¬M line elsewhere, so compare patterns (M above ALL above ¬M,
¬M vs the baseline), not the exact shares (seeds.md §1.8).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.errors import InputError
from core.evaluate.datasets import load_scifact_claims, load_scifact_pairs
from core.evaluate.metrics import percentile
from core.evaluate.report import claimscope_version, machine
from core.evaluate.retrieval import BASELINE, DEPTH, ir_metrics, scifact_bench
from core.ingest.index import Progress
from core.pipeline.stored import expand_cached
from core.retrieve.expand import METHODS, Expander, ExpansionParams
from core.retrieve.leakage import ECHO_THRESHOLD, Premise, audit
from core.retrieve.searcher import rank_expanded
from models.embed import Embedder

SUBSETS = ("ALL", "M", "¬M")


def mean_se(values: list[float]) -> dict[str, float | None]:
    """Mean and standard error of the mean (sample sd / √n; None for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return {"mean": mean, "se": None}
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return {"mean": mean, "se": math.sqrt(var / n)}


def evaluate_leakage(
    *,
    claims_path: Path,
    corpus_path: Path,
    embedder_factory: Callable[[], Embedder],
    splitter_factory: Callable,
    nli: Any,
    llm_factory: Callable[[], Any],
    methods: list[str] | None = None,
    ks: list[int] | None = None,
    hyde_prompt: str = "scientific",
    params: ExpansionParams | None = None,
    repeats: int = 1,
    db_path: Path | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    min_entailment: float = 0.0,
) -> dict:
    methods = methods or list(METHODS)
    for m in methods:
        if m not in METHODS:
            raise InputError(f"unknown expansion method {m!r} (use {', '.join(METHODS)})")
    if repeats < 1:
        raise InputError("--repeats must be at least 1")
    ks = ks or [5, 10]
    params = params or ExpansionParams()
    claims = [c for c in load_scifact_claims(claims_path) if c.gold_docs]
    if limit:
        claims = claims[:limit]
    premises: dict[str, list[Premise]] = {}
    for ex in load_scifact_pairs(claims_path, corpus_path):
        if ex.label != "neutral":
            premises.setdefault(str(ex.group), []).append(Premise(ex.group, ex.premise))
    t_wall = time.perf_counter()
    splitter = splitter_factory()
    with scifact_bench(corpus_path, embedder_factory, splitter_factory, index_kinds=["flat"], db_path=db_path,
                       progress=progress) as bench:
        llm = llm_factory()
        baselines = {b: [bench.ranking(b, c.claim)[0] for c in claims] for b in {BASELINE[m] for m in methods}}
        per_method: dict[str, dict] = {}
        details: list[dict] = []
        for m in methods:
            preset = hyde_prompt if m == "hyde" else "query2doc"
            runs = []
            gen_s: list[float] = []
            audit_s: list[float] = []
            ret_s: list[float] = []
            for r in range(repeats):
                expander = Expander(llm, m, preset, replace(params, seed=r))
                matched, ranked = [], []
                for c in claims:
                    exp = expand_cached(bench.db, expander, c.claim)
                    gen_s.append(exp.seconds)
                    t0 = time.perf_counter()
                    ranked_pids = rank_expanded(c.claim, exp, DEPTH, bench.bm25, bench.dense["flat"],
                                                bench.embedder.encode, depth=DEPTH)
                    ret_s.append(time.perf_counter() - t0)
                    ranked.append(list(dict.fromkeys(bench.doc_of[p] for p, _ in ranked_pids)))
                    t0 = time.perf_counter()
                    result = audit(exp.documents, c.claim, premises.get(str(c.id), []), splitter, nli,
                                   min_entailment=min_entailment)
                    audit_s.append(time.perf_counter() - t0)
                    matched.append(result.matched)
                    if r == 0:
                        hit = result.entailed[0] if result.entailed else None
                        details.append({
                            "id": c.id, "method": m, "matched": result.matched,
                            "sentences": len(result.sentences), "echoes_dropped": len(result.sentences) - len(result.kept),
                            "pairs": len(result.pairs), "entailed_pairs": len(result.entailed),
                            # the generated sentence only: the gold evidence is dataset text,
                            # which reports kept in the repository must not copy
                            "example": {"generated": hit.sentence.text,
                                        "p_entailment": round(hit.p_entailment, 3)} if hit else None,
                        })
                    if progress:
                        progress(f"{m} repeat {r + 1}", 1, len(claims))
                runs.append(_split_metrics(claims, matched, ranked, baselines[BASELINE[m]], ks))
            per_method[m] = {
                "baseline": BASELINE[m],
                "prompt": preset,
                "matched_share": mean_se([run["matched_share"] for run in runs]),
                "subsets": _aggregate(runs),
                "seconds_per_claim": {
                    "expansion_median": percentile(gen_s, 50), "expansion_mean": sum(gen_s) / len(gen_s),
                    "audit_median": percentile(audit_s, 50), "retrieval_median": percentile(ret_s, 50),
                },
            }
        report = {
            "task": "leakage",
            "dataset": "scifact",
            "path": str(claims_path),
            "corpus": str(corpus_path),
            "n": len(claims),
            "repeats": repeats,
            "echo_threshold": ECHO_THRESHOLD,
            "min_entailment": min_entailment,
            "methods": per_method,
            "claims": details,
            "manifest": {
                "claimscope": claimscope_version(),
                "models": {"embedder": bench.embedder.ref.manifest(), "nli": nli.ref.manifest(),
                           "expansion_llm": llm.ref.manifest()},
                "expansion_params": {**params.__dict__, "seed": "repeat index"},
            },
            "timing": {"wall_s": time.perf_counter() - t_wall},
            "machine": machine("cpu"),
        }
    return report


def _split_metrics(claims, matched: list[bool], ranked: list[list[str]], baseline: list[list[str]], ks) -> dict:
    """One repeat: metrics of the expansion and of its baseline on ALL / M / ¬M."""
    out: dict[str, Any] = {"matched_share": sum(matched) / len(matched) if matched else 0.0, "subsets": {}}
    for subset in SUBSETS:
        idx = [i for i, m in enumerate(matched) if subset == "ALL" or (m if subset == "M" else not m)]
        sub = [claims[i] for i in idx]
        out["subsets"][subset] = {
            "n": len(idx),
            "expanded": ir_metrics([ranked[i] for i in idx], sub, ks) if idx else {},
            "baseline": ir_metrics([baseline[i] for i in idx], sub, ks) if idx else {},
        }
    return out


def _aggregate(runs: list[dict]) -> dict:
    """Mean ± SE over repeats of every metric, per subset and system."""
    out: dict[str, dict] = {}
    for subset in SUBSETS:
        entry: dict[str, Any] = {"n": mean_se([r["subsets"][subset]["n"] for r in runs])}
        for system in ("expanded", "baseline"):
            names = sorted({k for r in runs for k in r["subsets"][subset][system]})
            entry[system] = {
                k: mean_se([r["subsets"][subset][system][k] for r in runs if k in r["subsets"][subset][system]])
                for k in names
            }
        out[subset] = entry
    return out


def format_table(report: dict) -> str:
    """Table 4 of seed 000, for this run: each method on ALL / M / ¬M beside its baseline."""
    rule = (f"entailment = argmax with P ≥ {report['min_entailment']:.2f}" if report["min_entailment"]
            else "entailment = the NLI argmax")
    lines = [f"leakage audit on {report['dataset']} ({report['n']} claims with evidence, "
             f"{report['repeats']} repeat(s); {rule}; values ×100, ± SE over repeats)"]
    for m, res in report["methods"].items():
        share = res["matched_share"]
        lines.append(f"\n{m} (prompt {res['prompt']}): matched {100 * share['mean']:.1f}%"
                     + (f" ± {100 * share['se']:.1f}" if share["se"] is not None else "")
                     + f"; baseline = {res['baseline']}")
        metrics = sorted({k for s in res["subsets"].values() for k in s["expanded"]},
                         key=lambda k: (k.split("@")[0] != "recall", int(k.split("@")[1])))
        lines.append(f"{'system':<11}{'subset':<7}{'n':>6}" + "".join(f"{k:>14}" for k in metrics))
        for system, label in (("baseline", res["baseline"]), ("expanded", m)):
            for subset in SUBSETS:
                s = res["subsets"][subset]
                cells = []
                for k in metrics:
                    v = s[system].get(k)
                    cells.append(f"{'':>14}" if v is None else
                                 f"{100 * v['mean']:>8.1f}" + (f" ±{100 * v['se']:<4.1f}" if v["se"] is not None else " " * 6))
                lines.append(f"{label:<11}{subset:<7}{s['n']['mean']:>6.0f}" + "".join(cells))
        t = res["seconds_per_claim"]
        lines.append(f"per claim: expansion {t['expansion_median']:.2f} s (median), audit {t['audit_median']:.2f} s, "
                     f"retrieval {1000 * t['retrieval_median']:.1f} ms")
    return "\n".join(lines)
