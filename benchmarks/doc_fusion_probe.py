"""Fusing document rankings instead of passage rankings: measured against a rule written first (issue 21).

The default ranks *passages*: BM25's and the dense index's passage rankings are fused, the top 20
are fused again with their best sentence's cosine, and documents take the rank of their first
passage. A SciFact abstract is two or three passages, so BM25 can favour one passage of the gold
abstract and the dense index another; each passage then collects one member's vote, and the
document is ranked by a passage only one member likes. This probe fuses *document* rankings
instead: each member's passage ranking mapped to documents by their best passage (CombMAX,
Fox & Shaw 1994), the two fused with weights fitted on SciFact train, then the best-sentence
stage over the top 20 documents (a document's best sentence over all its passages), its
weights fitted on train too. Both pipelines leave the subject rule out (mode ``fusion``).

    PYTHONPATH=. python benchmarks/doc_fusion_probe.py --scifact-db DB \\
        --set climate-fever:../shared/data/climate_fever/dev.jsonl:CF_DB \\
        --set wice:../shared/data/wice/entailment_retrieval/claim/dev.jsonl:WICE_DB \\
        --json benchmarks/results/doc_fusion_probe.json

Weights are fitted on SciFact claims_train.jsonl and scored on SciFact dev and on every ``--set``
(paired bootstrap over claims, 10,000 resamples). Nothing here changes what ships.

``--sentences`` (rule 2) also feeds each pipeline's passages to the evidence-sentence stage: the
candidate's passages in its document order (within a document, in the shipped first-stage order),
the top 10 ranked by the shipped ``hybrid-sentence`` sentence weights, and reports
rationale-sentence recall@5 / @10 of both, as ``eval retrieval`` computes it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"


def doc_ranking(ranked, doc_of, doc_id) -> list[tuple[int, float]]:
    """A passage ranking as a document ranking: each document at its best passage (first seen)."""
    seen, out = set(), []
    for pid, s in ranked:
        d = doc_id[doc_of[pid]]
        if d not in seen:
            seen.add(d)
            out.append((d, s))
    return out


def passages_in_doc_order(doc_ranked, first_stage, pids_of) -> list[tuple[int, float]]:
    """Passages by their document's rank (each with its document's score); within a document,
    in ``first_stage`` order, and the passages ``first_stage`` does not hold after them, by id."""
    pos = {pid: i for i, (pid, _) in enumerate(first_stage)}
    out = []
    for d, s in doc_ranked:
        pids = sorted(pids_of.get(d, []), key=lambda p: (pos.get(p, len(pos)), p))
        out.extend((p, s) for p in pids)
    return out


def difference(shipped: np.ndarray, doc: np.ndarray) -> dict:
    """The candidate's per-claim gain over the shipped pipeline: mean, paired bootstrap 95 %
    interval (10,000 resamples, seed 0; sentence_head_probe.paired) and claims up / down."""
    from benchmarks.sentence_head_probe import paired

    p = paired(shipped, doc)
    return {"mean": round(p["delta"], 4), "ci95": [round(x, 4) for x in p["ci95"]],
            "up": p["claims_up"], "down": p["claims_down"]}


class Claims:
    """One set's claims with everything both pipelines need, computed once."""

    def __init__(self, name, bench, claims):
        from core.evaluate.retrieval import DEPTH

        self.name, self.bench, self.claims = name, bench, claims
        self.doc_names = sorted(set(bench.doc_of.values()))
        self.doc_id = {d: i for i, d in enumerate(self.doc_names)}
        self.pids_of: dict[int, list[int]] = {}
        for pid, d in bench.doc_of.items():
            self.pids_of.setdefault(self.doc_id[d], []).append(pid)
        self.rows = []
        t0 = time.perf_counter()
        dense = bench.dense["flat"]
        for c in claims:
            q = dense.encode_query(c.claim)
            members = {"bm25": bench.bm25.retrieve(c.claim, DEPTH), "dense": dense.retrieve_vector(q, DEPTH)}
            self.rows.append({"q": q, "members": members,
                              "doc_members": {k: doc_ranking(v, bench.doc_of, self.doc_id) for k, v in members.items()}})
        print(f"{name}: members of {len(claims)} claims in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    def docs_of_ids(self, ranked) -> list[str]:
        return [self.doc_names[i] for i, _ in ranked]

    def best_sentence_docs(self, row, fused_docs, pool: int):
        """The top ``pool`` documents of ``fused_docs`` ranked by their best sentence's cosine."""
        from store import sources as sq

        top = [d for d, _ in fused_docs[:pool]]
        pids = [p for d in top for p in self.pids_of.get(d, [])]
        got = sq.get_passages(self.bench.db, pids)
        texts, owner = [], []
        for d in top:
            for p in self.pids_of.get(d, []):
                if p in got:
                    ts = got[p].sentence_texts() or [got[p].text]
                    texts.extend(ts)
                    owner.extend([d] * len(ts))
        if not texts:
            return []
        sims = self.bench.stored_sentences(texts) @ row["q"]
        best: dict[int, float] = {}
        for d, s in zip(owner, sims.tolist(), strict=True):
            best[d] = max(best.get(d, -2.0), s)
        return sorted(best.items(), key=lambda x: -x[1])

    def sentence_recalls(self, claim, ranked, params) -> tuple[float, float]:
        """Rationale-sentence recall@5 / @10 of the sentences of ``ranked``'s top passages, as
        ``eval retrieval`` computes it."""
        from core.evaluate.metrics import dedupe
        from core.evaluate.retrieval import sentence_recall
        from core.retrieve.sentence_rank import apply

        cands, rankings, _ = self.bench.sentence_candidates(claim.claim, ranked)
        ordered = apply(rankings, cands, params) if cands else []
        keys = dedupe([self.bench.sentence_key(x) for x in ordered])
        return tuple(sentence_recall(keys, claim.gold_sentence_sets, k) for k in (5, 10))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scifact-db", type=Path, required=True)
    ap.add_argument("--set", action="append", default=[], metavar="DATASET:CLAIMS:DB")
    ap.add_argument("--sentences", action="store_true", help="rule 2: the evidence-sentence stage too")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from core.evaluate.metrics import ndcg_at_k, recall_at_k
    from core.evaluate.retrieval import corpus_bench, scifact_bench
    from core.evaluate.retrieval_sets import load_retrieval_set
    from core.retrieve.fusion import FitExample, fit_fusion, fuse, fusion_grid, load_sentence_fusion, params_json
    from core.retrieve.sentence_score import SENTENCE_SCORE_POOL, with_best_sentence
    from models.embed import load_embedder
    from models.nlp import SpacySentenceSplitter
    from store import sources as sq

    t0 = time.perf_counter()
    corpus = DATA / "scifact" / "corpus.jsonl"
    with ExitStack() as stack:
        sf = stack.enter_context(scifact_bench(corpus, load_embedder, SpacySentenceSplitter, index_kinds=["flat"],
                                               db_path=args.scifact_db))
        train = Claims("SciFact train", sf, load_retrieval_set("scifact", DATA / "scifact" / "claims_train.jsonl",
                                                               corpus).claims)
        sets = [Claims("SciFact dev", sf, load_retrieval_set("scifact", DATA / "scifact" / "claims_dev.jsonl",
                                                             corpus).claims)]
        for spec in args.set:
            name, path, db = spec.split(":")
            data = load_retrieval_set(name, Path(path))
            bench = stack.enter_context(corpus_bench(data.documents, data.fmt, Path(path), load_embedder,
                                                     SpacySentenceSplitter, index_kinds=["flat"], db_path=Path(db),
                                                     source=f"eval-{name}"))
            sets.append(Claims(f"{name} {Path(path).name}", bench, data.claims))

        def objective(cs, c):
            return lambda r: recall_at_k(cs.docs_of_ids(r), c.gold_docs, 5) + 0.01 * ndcg_at_k(
                cs.docs_of_ids(r), c.gold_docs, 10)

        # stage 1: the two members' document rankings, fused (fitted on SciFact train, the shipped grid)
        ex1 = [FitExample(r["doc_members"], objective(train, c)) for r, c in zip(train.rows, train.claims, strict=True)]
        p1, s1 = fit_fusion(ex1, fusion_grid(["bm25", "dense"], steps=20), "doc-level members, SciFact train")
        print(f"stage 1: {p1} train {s1:.4f}", file=sys.stderr)
        # stage 2: with the top 20 documents' best sentence
        ex2 = []
        for r, c in zip(train.rows, train.claims, strict=True):
            first = fuse(r["doc_members"], p1)
            ex2.append(FitExample({"fused": first, "sentence": train.best_sentence_docs(r, first, SENTENCE_SCORE_POOL)},
                                  objective(train, c)))
        p2, s2 = fit_fusion(ex2, fusion_grid(["fused", "sentence"], steps=20), "doc-level best sentence, SciFact train")
        print(f"stage 2: {p2} train {s2:.4f}", file=sys.stderr)

        report = {"task": "doc_fusion_probe", "rule": "/work/notes/s35/rule_doc_fusion.md (quoted in docs/benchmarks.md)",
                  "candidate": {"stage1": params_json(p1), "stage1_train_objective": s1,
                                "stage2": params_json(p2), "stage2_train_objective": s2},
                  "sets": {}}
        sentence_params = load_sentence_fusion("hybrid-sentence")
        for cs in ([] if args.sentences else [train]) + sets:
            per: dict[str, list[tuple[float, float]]] = {k: [] for k in ("bm25", "dense", "shipped", "doc_stage1", "doc")}
            sent: dict[str, list[tuple[float, float]]] = {"shipped": [], "doc": []}
            for r, c in zip(cs.rows, cs.claims, strict=True):
                shipped_first = fuse(r["members"], cs.bench.fusion)
                top = sq.get_passages(cs.bench.db, [pid for pid, _ in shipped_first[:SENTENCE_SCORE_POOL]])
                shipped, _ = with_best_sentence(shipped_first, top, r["q"], cs.bench.stored_sentences,
                                                cs.bench.sentence_score)
                d1 = fuse(r["doc_members"], p1)
                d2 = fuse({"fused": d1, "sentence": cs.best_sentence_docs(r, d1, SENTENCE_SCORE_POOL)}, p2)
                lists = {"bm25": cs.docs_of_ids(r["doc_members"]["bm25"]),
                         "dense": cs.docs_of_ids(r["doc_members"]["dense"]),
                         "shipped": cs.bench.docs(shipped), "doc_stage1": cs.docs_of_ids(d1), "doc": cs.docs_of_ids(d2)}
                for k, docs in lists.items():
                    per[k].append((recall_at_k(docs, c.gold_docs, 5), recall_at_k(docs, c.gold_docs, 10)))
                if args.sentences:
                    sent["shipped"].append(cs.sentence_recalls(c, shipped, sentence_params))
                    sent["doc"].append(cs.sentence_recalls(c, passages_in_doc_order(d2, shipped_first, cs.pids_of),
                                                           sentence_params))
            arr = {k: np.array(v) for k, v in per.items()}
            multi = float(np.mean([len(cs.pids_of[cs.doc_id[g]]) > 1 for c in cs.claims for g in c.gold_docs
                                   if g in cs.doc_id]))
            report["sets"][cs.name] = {
                "n": len(cs.claims), "gold_docs_with_several_passages": round(multi, 3),
                **{k: {"recall@5": round(float(a[:, 0].mean()), 4), "recall@10": round(float(a[:, 1].mean()), 4)}
                   for k, a in arr.items()},
                "doc_minus_shipped_recall@5": difference(arr["shipped"][:, 0], arr["doc"][:, 0]),
            }
            if args.sentences:
                sa = {k: np.array(v) for k, v in sent.items()}
                report["sets"][cs.name]["sentences"] = {
                    **{k: {"sentence_recall@5": round(float(a[:, 0].mean()), 4),
                           "sentence_recall@10": round(float(a[:, 1].mean()), 4)} for k, a in sa.items()},
                    "doc_minus_shipped_sentence_recall@5": difference(sa["shipped"][:, 0], sa["doc"][:, 0])}
            print(cs.name, json.dumps(report["sets"][cs.name]), file=sys.stderr)
    report["wall_s"] = round(time.perf_counter() - t0, 1)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
