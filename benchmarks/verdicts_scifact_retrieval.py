"""Claim verdicts with retrieval (the product's path) on SciFact dev, grounding guard on vs off,
and the learned verdict rule (core/verify/verdict_model.py).

Each dev claim is retrieved for (hybrid, top 5) in a database where the SciFact corpus is
indexed as source ``scifact``, judged once, then decided with and without the grounding
guard and by the learned verdict model from the same judgements. Gold: SUPPORT → supported, CONTRADICT → refuted, no
evidence → not_enough_info.

    python benchmarks/verdicts_scifact_retrieval.py DB ../shared/data/scifact/claims_dev.jsonl [--mode M] [--limit N]
        [--sentence-choice lexical|retrieval] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.evaluate.datasets import load_scifact_claims
from core.evaluate.metrics import accuracy, macro_f1
from core.pipeline.runner import passage_evidence
from core.retrieve.searcher import Searcher
from core.verify.base import Thresholds
from core.verify.verifier import Verifier
from models.embed import load_embedder
from models.nli import load_nli
from models.nlp import SubjectTerms
from store import open_db

LABELS = ("supported", "refuted", "not_enough_info")


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("claims")
    ap.add_argument("-k", type=int, default=5)
    ap.add_argument("--mode", default="hybrid", help="retrieval mode (core.retrieve.searcher.MODES)")
    ap.add_argument("--sentence-choice", default="lexical", choices=("lexical", "retrieval"),
                    help="how the verifier picks the sentences it judges (core.verify.base.Thresholds.sentence_choice)")
    ap.add_argument("--source", default="scifact",
                    help="the source the corpus is indexed as (eval retrieval's databases: eval-corpus)")
    ap.add_argument("--json")
    ap.add_argument("--limit", type=int, help="only the first N claims")
    ap.add_argument("--verdict-model", action="append", default=[], metavar="JSON",
                    help="also decide with this verdict-model file (same judgements; repeatable)")
    args = ap.parse_args()
    db = open_db(args.db)
    emb = load_embedder()
    searcher = Searcher(db, lambda: emb)
    guarded = Verifier(load_nli(), Thresholds(sentence_choice=args.sentence_choice), subject_terms=SubjectTerms())
    plain = Verifier(guarded.nli, guarded.t)
    from core.verify.verdict_model import decide_learned, load_verdict_model, model_digest

    others = {path: load_verdict_model(path) for path in args.verdict_model}
    ids, gold, with_guard, without, learned = [], [], [], [], []
    learned_by = {path: [] for path in others}
    t0 = time.perf_counter()
    for c in load_scifact_claims(args.claims)[: args.limit or None]:
        ids.append(c.id)
        labels = {e["label"] for ev in c.evidence.values() for e in ev}
        gold.append("supported" if "SUPPORT" in labels else "refuted" if "CONTRADICT" in labels else "not_enough_info")
        hits = searcher.search(c.claim, k=args.k, mode=args.mode, sources=[args.source],
                               rank_sentences=guarded.wants_sentence_ranks)
        passages = passage_evidence(hits)
        v = guarded.verify(c.claim, passages, always_sets=True)
        with_guard.append(v.label)
        learned.append(decide_learned(c.claim, v.judgements, passages, guarded.subject_terms, guarded.t).label)
        for path, m in others.items():
            learned_by[path].append(decide_learned(c.claim, v.judgements, passages, guarded.subject_terms, guarded.t, m).label)
        for j in v.judgements:
            j.grounded = True
        without.append(plain.decide_staged(v.judgements).label)
    report = {"n": len(gold), "k": args.k, "mode": args.mode, "sentence_choice": args.sentence_choice, "seconds": time.perf_counter() - t0,
              "label_counts": {lab: gold.count(lab) for lab in LABELS}, "thresholds": guarded.t.__dict__}
    report["learned_model"] = model_digest()
    systems = [("grounding", with_guard), ("no_grounding", without), ("learned", learned)]
    systems += [(f"learned:{model_digest(path)}", pred) for path, pred in learned_by.items()]
    for name, pred in systems:
        report[name] = {"accuracy": accuracy(gold, pred), "macro_f1": macro_f1(gold, pred, (*LABELS, "conflicting")),
                        "predicted": {lab: pred.count(lab) for lab in (*LABELS, "conflicting")}}
    # per claim (SciFact ids and labels, no text), so two runs can be paired
    report["rows"] = [{"id": i, "gold": g, "learned": p, "grounding": r}
                      for i, g, p, r in zip(ids, gold, learned, with_guard, strict=True)]
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=2))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    return report


if __name__ == "__main__":
    main()
