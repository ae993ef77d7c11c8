"""Re-ranking by the NLI cross-encoder: evidence-sentence recall gained against per-claim latency,
for each number N of top sentences re-ranked (one batched cross-encoder call per claim).

Per claim, the path a `hybrid + rerank` search takes: the hybrid passage ranking (fitted fusion,
best-sentence fusion, subject rule), the fused ranking of the sentences of its top 10
passages, then the cross-encoder's P(entail) + P(contradict) on the top N sentences, fused with
the first-stage order (core/retrieve/rerank.py). The fusion rule for each N is fitted on SciFact
*train* claims (first ``--fit-limit``; the grid of fit_fusion.py, which holds "no re-ranking":
weight 0 on the cross-encoder); recall and latency are then measured on dev claims. N = 0 is
the hybrid alone. Latency is wall time per claim (first stage + re-ranking, each N timed on its
own call), reported as p50 / p95 with the load average, since the machine is shared.

    PYTHONPATH=. python benchmarks/rerank_latency.py --db /tmp/s25/scifact.db [--tops 3,5,10,20] [--mode hybrid-sentence]
        [--verifier runs/CANDIDATE]

``--mode`` picks the first stage (``hybrid``, as in session 6, or ``hybrid-sentence``, the
default since session 10) and that mode's own evidence-sentence weights.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.evaluate.metrics import dedupe, percentile  # noqa: E402
from core.evaluate.retrieval import scifact_bench, sentence_recall  # noqa: E402
from core.evaluate.retrieval_sets import load_retrieval_set  # noqa: E402
from core.retrieve.fusion import fusion_grid, load_sentence_fusion, params_json  # noqa: E402
from core.retrieve.rerank import decisiveness, rerank  # noqa: E402
from core.retrieve.sentence_rank import apply  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "scifact"
TARGET_MS = 150.0


def first_stage(bench, claim: str, sentence_fusion, mode: str = "hybrid"):
    """(ordered sentences, seconds) of the first-stage ``mode`` for one claim."""
    t0 = time.perf_counter()
    ranked, _, _ = bench.passage_ranking(mode, claim)
    cands, rankings, _ = bench.sentence_candidates(claim, ranked)
    ordered = apply(rankings, cands, sentence_fusion) if cands else []
    return ordered, time.perf_counter() - t0


def reranked(ordered, dec, params):
    order = rerank([(i, x.score) for i, x in enumerate(ordered)], dec, params)
    return [ordered[i] for i, _ in order]


def score(bench, ordered, claim, k: int) -> float:
    return sentence_recall(dedupe([bench.sentence_key(x) for x in ordered]), claim.gold_sentence_sets, k)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--tops", default="3,5,10,20")
    ap.add_argument("--fit-limit", type=int, default=100)
    ap.add_argument("--mode", default="hybrid", choices=("hybrid", "hybrid-sentence"), help="first stage")
    ap.add_argument("--limit", type=int, default=None, help="only the first N dev claims")
    ap.add_argument("--verifier", default="embedded",
                    help="the cross-encoder that re-ranks: embedded, or a candidate's folder (its int8 copy when built)")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "rerank_latency_scifact.json")
    args = ap.parse_args()
    tops = [int(x) for x in args.tops.split(",")]

    from models.embed import load_embedder
    from models.nli import load_nli
    from models.nlp import SpacySentenceSplitter

    nli = load_nli(args.verifier)
    sentence_fusion = load_sentence_fusion(args.mode)
    train = load_retrieval_set("scifact", DATA / "claims_train.jsonl", DATA / "corpus.jsonl").claims[: args.fit_limit]
    dev = load_retrieval_set("scifact", DATA / "claims_dev.jsonl", DATA / "corpus.jsonl").claims[: args.limit]
    load_start = os.getloadavg()
    t_wall = time.perf_counter()
    with scifact_bench(DATA / "corpus.jsonl", load_embedder, SpacySentenceSplitter, index_kinds=["flat"],
                       db_path=args.db) as bench:
        nli.predict([("warm-up", "warm-up")])
        first_stage(bench, dev[0].claim, sentence_fusion, args.mode)  # warm-up (spaCy, FAISS)
        # fit each N's fusion on train claims: one cross-encoder call on the top max(N) sentences
        fits = {}
        fit_data = []
        for c in train:
            ordered, _ = first_stage(bench, c.claim, sentence_fusion, args.mode)
            dec = decisiveness(nli, c.claim, [x.text for x in ordered[: max(tops)]])
            fit_data.append((c, ordered, dec))
        for n in tops:
            best, best_score = None, float("-inf")
            for params in fusion_grid(["first", "nli"], rrf_ks=(1, 5, 10, 20, 60), steps=10):
                s = sum(score(bench, reranked(o, d[:n], params), c, 5) + 0.01 * score(bench, reranked(o, d[:n], params), c, 10)
                        for c, o, d in fit_data) / len(fit_data)
                if s > best_score + 1e-12:
                    best, best_score = params, s
            fits[n] = best
            print(f"N={n}: fitted {best} (train objective {best_score:.4f})", file=sys.stderr)
        # measure on dev
        rows = {n: {"lat": [], "nli": [], "r5": [], "r10": []} for n in [0, *tops]}
        for c in dev:
            ordered, first_s = first_stage(bench, c.claim, sentence_fusion, args.mode)
            rows[0]["lat"].append(first_s)
            rows[0]["r5"].append(score(bench, ordered, c, 5))
            rows[0]["r10"].append(score(bench, ordered, c, 10))
            for n in tops:
                t0 = time.perf_counter()
                dec = decisiveness(nli, c.claim, [x.text for x in ordered[:n]]) if ordered else []
                out = reranked(ordered, dec, fits[n]) if ordered else ordered
                nli_s = time.perf_counter() - t0
                rows[n]["nli"].append(nli_s)
                rows[n]["lat"].append(first_s + nli_s)
                rows[n]["r5"].append(score(bench, out, c, 5))
                rows[n]["r10"].append(score(bench, out, c, 10))
    load_end = os.getloadavg()
    base5 = sum(rows[0]["r5"]) / len(dev)
    table = {}
    for n, r in rows.items():
        r5, r10 = sum(r["r5"]) / len(dev), sum(r["r10"]) / len(dev)
        table[str(n)] = {
            "sentence_recall@5": r5, "sentence_recall@10": r10, "sentence_recall@5_gain": r5 - base5,
            "latency_ms_p50": 1000 * percentile(r["lat"], 50), "latency_ms_p95": 1000 * percentile(r["lat"], 95),
            "rerank_ms_p50": 1000 * percentile(r["nli"], 50) if r["nli"] else 0.0,
            "rerank_ms_p95": 1000 * percentile(r["nli"], 95) if r["nli"] else 0.0,
            "fusion": params_json(fits[n]) if n else None,
        }
    within = [n for n in tops if table[str(n)]["latency_ms_p95"] <= TARGET_MS]
    report = {
        "task": "rerank_latency", "dataset": "scifact dev", "first_stage": args.mode, "n": len(dev), "fit": f"SciFact train, first {len(train)} claims",
        "by_top": table, "target_ms_p95": TARGET_MS, "tops_within_target": within,
        "load_average_start": list(load_start), "load_average_end": list(load_end), "cpus": os.cpu_count(),
        "threads": os.environ.get("CLAIMSCOPE_THREADS"), "verifier": args.verifier, "nli_runtime": getattr(nli, "runtime", None),
        "wall_s": time.perf_counter() - t_wall,
    }
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"load average {load_start[0]:.1f} → {load_end[0]:.1f}; dev {len(dev)} claims")
    print("N   sent R@5  gain    R@10   p50 ms  p95 ms  rerank p95 ms")
    for n, t in table.items():
        print(f"{n:<3} {t['sentence_recall@5']:.3f}  {t['sentence_recall@5_gain']:+.3f}  {t['sentence_recall@10']:.3f}  "
              f"{t['latency_ms_p50']:6.0f}  {t['latency_ms_p95']:6.0f}  {t['rerank_ms_p95']:6.0f}")


if __name__ == "__main__":
    main()
