"""Does the verifier get to see the evidence sentences? Rationale-sentence recall of the
sentences the verifier judges, by how they are chosen.

A run retrieves the top ``top_k`` passages (hybrid, the default mode) and the verifier judges
at most ``judge_sentences`` of their sentences (``core.verify.Verifier.candidate_units``:
ranked by the share of the claim's content words in the sentence and its title, ties by
passage rank). A rationale sentence that is not among them cannot decide the verdict. This
script measures, on the datasets of ``eval retrieval`` (SciFact rationale sentences,
Climate-FEVER evidence, WiCE supporting sentences), the sentence recall@N of:

- ``lexical``: the verifier's own choice (what runs do today);
- ``fused``: the evidence-sentence ranking of ``eval retrieval`` (dense + in-pool BM25 +
  passage rank, ``core/retrieve/data/fusion.json``), which needs sentence vectors;
- ``dense``: the sentence-embedding member alone;
- ``bm25``: the in-pool BM25 member alone;
- ``fused_no_dense``: ``fused`` with the dense member's weight set to 0 (no sentence vectors).

Run (databases built by ``eval retrieval --db``; their sentence vectors are cached there)::

    python benchmarks/verifier_candidate_recall.py --dataset scifact --db DB \
        --claims ../shared/data/scifact/claims_dev.jsonl --corpus ../shared/data/scifact/corpus.jsonl \
        --json benchmarks/results/verifier_candidate_recall_scifact.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.evaluate.metrics import dedupe
from core.evaluate.report import machine
from core.evaluate.retrieval import corpus_bench, sentence_recall
from core.evaluate.retrieval_sets import load_retrieval_set
from core.retrieve.fusion import FusionParams, load_sentence_fusion
from core.retrieve.sentence_rank import RankedSentence, apply
from core.verify.base import Thresholds
from core.verify.verifier import PassageEvidence, Verifier
from store import sources as sq


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--dataset", required=True, choices=("scifact", "climate-fever", "wice"))
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--claims", required=True, type=Path)
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--top-k", type=int, default=10, help="passages a run verifies (settings top_k)")
    ap.add_argument("--mode", default="hybrid", choices=("hybrid", "hybrid-sentence"),
                    help="the passage ranking, and the evidence-sentence weights fitted for it")
    ap.add_argument("--ks", default="3,5,8,12", help="sentence budgets; 8 = Thresholds.judge_sentences")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    from core.settings import load_settings
    from core.workbench import Workbench

    wb = Workbench(load_settings(None))
    data = load_retrieval_set(args.dataset, args.claims, args.corpus)
    claims = data.claims[: args.limit] if args.limit else data.claims
    ks = [int(k) for k in args.ks.split(",")]
    budget = max(ks)
    chooser = Verifier(None, Thresholds(judge_sentences=budget, early_stop=1.0))  # ranking only, no model call
    weights = load_sentence_fusion(args.mode)
    no_dense = FusionParams(weights.method, weights.k, {**weights.weights, "dense": 0.0}, "fused, dense weight 0")
    names = ("lexical", "fused", "dense", "bm25", "fused_no_dense")
    recall: dict[str, dict[int, list[float]]] = {m: {k: [] for k in ks} for m in names}
    with corpus_bench(data.documents, data.fmt, args.corpus or args.claims, wb.embedder, wb.splitter,
                      index_kinds=["flat"], db_path=args.db,
                      source="scifact" if args.dataset == "scifact" else f"eval-{args.dataset}") as bench:
        for c in claims:
            ranked, _, _ = bench.passage_ranking(args.mode, c.claim, "flat")
            top = [pid for pid, _ in ranked[: args.top_k]]
            got = sq.get_passages(bench.db, top)
            passages = [got[p] for p in top if p in got]
            # the verifier's choice: the first `budget` sentence units in its relevance order
            ev = [PassageEvidence(p.id, r, tuple(p.sentence_texts()), p.text, p.title) for r, p in enumerate(passages, 1)]
            units, _ = chooser.candidate_units(c.claim, ev)
            by_id = {p.id: p for p in passages}
            lexical = [bench.sentence_key(RankedSentence(by_id[u.passage_id], u.sentences[0], u.passage_rank))
                       for u in units if u.kind == "sentence"]
            cands, rankings, _ = bench.sentence_candidates(c.claim, ranked, pool=args.top_k)
            orders = {"lexical": lexical}
            if cands:
                orders["fused"] = [bench.sentence_key(x) for x in apply(rankings, cands, weights)]
                orders["fused_no_dense"] = [bench.sentence_key(x) for x in apply(rankings, cands, no_dense)]
                for member in ("dense", "bm25"):
                    orders[member] = [bench.sentence_key(cands[i]) for i, _ in rankings[member]]
            for m, keys in orders.items():
                for k in ks:
                    recall[m][k].append(sentence_recall(dedupe(keys), c.gold_sentence_sets, k))
            for m in recall:
                if m not in orders:
                    for k in ks:
                        recall[m][k].append(0.0)
    report = {
        "task": "verifier_candidate_recall", "dataset": args.dataset, "claims": len(claims), "top_k": args.top_k,
        "mode": args.mode, "note": "sentence recall@N of the sentences the verifier would judge, by how they are chosen",
        "recall": {m: {f"@{k}": sum(v) / len(v) for k, v in by_k.items()} for m, by_k in recall.items()},
        "machine": machine(),
    }
    print(json.dumps(report["recall"], indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
