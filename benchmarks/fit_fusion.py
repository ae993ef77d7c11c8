"""Fit the fusion weights of the hybrid retriever and of the evidence-sentence ranking on
training claims, and write them to ``core/retrieve/data/fusion.json`` (shipped as package data).

Passages: a grid of weighted RRF (k ∈ {1, 5, 10, 20, 40, 60, 100}) and min-max score fusion,
BM25/dense weights in steps of 0.05 (each member alone included), maximising mean document
recall@5 (+ 0.01 · ndcg@10 to break ties) over SciFact *train* claims with evidence.
Passage sentences (core/retrieve/sentence_score.py): the fitted ranking fused with the
best-sentence cosine of its top 20 passages, same grid and objective.
Sentences: the same grid over three members (dense cosine, in-pool BM25, passage rank),
steps of 0.1, maximising mean rationale-sentence recall@5 (+ 0.01 · recall@10) over the
candidates of the top 10 passages of the fitted hybrid. Dev claims are never read.

``--sentences-only`` keeps the shipped passage weights and refits only the evidence-sentence
fusion, once per mode (``--sentence-modes``, default ``hybrid,hybrid-sentence``), each over the
sentences of the top 10 passages of that mode's own ranking as ``eval retrieval`` builds it:
``hybrid``'s fit is the shared ``sentences`` block, every other mode's goes to
``sentences_by_mode`` (read by ``core.retrieve.fusion.load_sentence_fusion``).
``--extra-set DATASET:CLAIMS:DB`` (repeatable) adds another dataset's *training* claims to that
refit, indexed in its own database (e.g. WiCE's train split,
``wice:../shared/data/wice/non_supported_tokens/train.jsonl:/tmp/wice_train.db``); the objective
is then the mean over datasets of each dataset's mean, so the larger set does not outvote the other.

    PYTHONPATH=. python benchmarks/fit_fusion.py --db /tmp/h21-scifact.db \\
        [--sentence-limit 400] [--out core/retrieve/data/fusion.json]
    PYTHONPATH=. python benchmarks/fit_fusion.py --db /tmp/s31/scifact.db --sentences-only \\
        --out /tmp/s31/fusion_candidate.json --report benchmarks/results/fusion_fit_sentences_int8sq.json
    PYTHONPATH=. python benchmarks/fit_fusion.py --db /tmp/s32/scifact_train.db --sentences-only \\
        --extra-set wice:../shared/data/wice/non_supported_tokens/train.jsonl:/tmp/s32/wice_train.db \\
        --out /tmp/s32/fusion_candidate.json --report benchmarks/results/fusion_fit_sentences_two_sets.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.evaluate.metrics import dedupe, ndcg_at_k, recall_at_k  # noqa: E402
from core.evaluate.retrieval import corpus_bench, scifact_bench, sentence_recall  # noqa: E402
from core.evaluate.retrieval_sets import load_retrieval_set  # noqa: E402
from core.retrieve.fusion import (  # noqa: E402
    PLAIN_RRF,
    FitExample,
    FusionParams,
    fit_fusion,
    fuse,
    fusion_grid,
    macro_average,
    params_json,
)
from core.retrieve.sentence_rank import SENTENCE_POOL  # noqa: E402
from core.retrieve.sentence_score import SENTENCE_SCORE_POOL, with_best_sentence  # noqa: E402
from store import sources as sq  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "scifact"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--claims", type=Path, default=DATA / "claims_train.jsonl")
    ap.add_argument("--corpus", type=Path, default=DATA / "corpus.jsonl")
    ap.add_argument("--sentence-limit", type=int, default=None, help="fit sentence weights on the first N claims")
    ap.add_argument("--rerank-limit", type=int, default=0, help="fit the cross-encoder re-ranking on N claims")
    ap.add_argument("--sentences-only", action="store_true",
                    help="keep the shipped passage weights; refit the evidence-sentence fusion per mode")
    ap.add_argument("--sentence-modes", default="hybrid,hybrid-sentence", help="with --sentences-only")
    ap.add_argument("--extra-set", action="append", default=[], metavar="DATASET:CLAIMS:DB",
                    help="with --sentences-only: another dataset's training claims (indexed into DB), macro-averaged")
    ap.add_argument("--out", type=Path, default=ROOT / "core" / "retrieve" / "data" / "fusion.json")
    ap.add_argument("--report", type=Path, default=ROOT / "benchmarks" / "results" / "fusion_fit_scifact_train.json")
    args = ap.parse_args()

    from models.embed import load_embedder
    from models.nlp import SpacySentenceSplitter

    data = load_retrieval_set("scifact", args.claims, args.corpus)
    claims = data.claims
    t0 = time.perf_counter()
    if args.sentences_only:
        with ExitStack() as stack:
            sets = [(f"SciFact {args.claims.name}", stack.enter_context(scifact_bench(
                args.corpus, load_embedder, SpacySentenceSplitter, index_kinds=["flat"], db_path=args.db)), claims)]
            for spec in args.extra_set:
                name, path, db = extra_set_spec(spec)
                extra = load_retrieval_set(name, path)
                bench = stack.enter_context(corpus_bench(
                    extra.documents, extra.fmt, path, load_embedder, SpacySentenceSplitter, index_kinds=["flat"],
                    db_path=db, source=f"train-{name}"))
                sets.append((f"{name} {path.parent.name}/{path.name}", bench, extra.claims))
            fit_sentences_per_mode(sets, args, t0)
        return
    if args.extra_set:
        ap.error("--extra-set needs --sentences-only")
    with scifact_bench(args.corpus, load_embedder, SpacySentenceSplitter, index_kinds=["flat"], db_path=args.db) as bench:
        members = [bench.members(c.claim)[0] for c in claims]
        print(f"member rankings for {len(claims)} train claims in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

        def doc_score(c):
            return lambda r: (recall_at_k(bench.docs(r), c.gold_docs, 5)
                              + 0.01 * ndcg_at_k(bench.docs(r), c.gold_docs, 10))

        examples = [FitExample(m, doc_score(c)) for m, c in zip(members, claims, strict=True)]
        grid = fusion_grid(["bm25", "dense"], steps=20)
        desc = (f"SciFact claims_train.jsonl ({len(claims)} claims with evidence); objective: mean document "
                "recall@5 + 0.01 * ndcg@10; grid: weighted RRF k in {1,5,10,20,40,60,100} and min-max "
                "fusion, weights in steps of 0.05")
        passage, train_score = fit_fusion(examples, grid, desc)
        table = {}
        for name, params in [("bm25", None), ("dense", None), ("fitted", passage)]:
            rankings = [m[name] if params is None else fuse(m, params) for m in members]
            docs = [bench.docs(r) for r in rankings]
            table[name] = {f"recall@{k}": sum(recall_at_k(d, c.gold_docs, k) for d, c in zip(docs, claims, strict=True))
                           / len(claims) for k in (5, 10)}
        print(f"passages: {passage} train score {train_score:.4f} {table}", file=sys.stderr)

        # second fusion: the fitted ranking with the best-sentence cosine of its top passages
        t1 = time.perf_counter()
        s_examples, firsts = [], []
        for m, c, ex in zip(members, claims, examples, strict=True):
            first = fuse(m, passage)
            top = sq.get_passages(bench.db, [pid for pid, _ in first[:SENTENCE_SCORE_POOL]])
            q = bench.dense["flat"].encode_query(c.claim)
            _, best = with_best_sentence(first, top, q, bench.encode, PLAIN_RRF)
            firsts.append(first)
            s_examples.append(FitExample({"fused": first, "sentence": best}, ex.score))
        print(f"best sentences for {len(claims)} claims in {time.perf_counter() - t1:.0f} s", file=sys.stderr)
        ps_desc = (f"SciFact claims_train.jsonl ({len(claims)} claims with evidence); members: the fitted passage "
                   f"fusion and the best-sentence cosine of its top {SENTENCE_SCORE_POOL} passages; objective as "
                   "for passages; grid: weighted RRF k in {1,5,10,20,40,60,100} and min-max fusion, weights in "
                   "steps of 0.05")
        passage_sent, ps_score = fit_fusion(s_examples, fusion_grid(["fused", "sentence"], steps=20), ps_desc)
        final = [fuse(ex.rankings, passage_sent) for ex in s_examples]
        table["fitted+sentence"] = {f"recall@{k}": sum(recall_at_k(bench.docs(r), c.gold_docs, k)
                                                       for r, c in zip(final, claims, strict=True)) / len(claims)
                                    for k in (5, 10)}
        print(f"passage sentences: {passage_sent} train score {ps_score:.4f} {table}", file=sys.stderr)

        sub = claims[: args.sentence_limit] if args.sentence_limit else claims
        t1 = time.perf_counter()
        sent_examples = sentence_examples(bench, sub, final[: len(sub)])
        print(f"sentence candidates for {len(sub)} claims in {time.perf_counter() - t1:.0f} s", file=sys.stderr)
        sgrid = fusion_grid(["dense", "bm25", "passage"], steps=10)
        sdesc = (f"SciFact claims_train.jsonl (first {len(sub)} claims with evidence), candidates: sentences of "
                 f"the top {SENTENCE_POOL} passages of the fitted hybrid; objective: mean rationale-sentence "
                 "recall@5 + 0.01 * recall@10; grid: weighted RRF k in {1,5,10,20,40,60,100} and min-max, "
                 "weights in steps of 0.1")
        sentence, s_train = fit_fusion(sent_examples, sgrid, sdesc)
        s_table = {}
        for name in ("dense", "bm25", "passage"):
            s_table[name] = sum(ex.score(ex.rankings[name]) for ex in sent_examples) / len(sent_examples)
        print(f"sentences: {sentence} train score {s_train:.4f} members {s_table}", file=sys.stderr)

        rerank_fit = None
        if args.rerank_limit:
            from core.retrieve.rerank import RERANK_TOP, decisiveness, rerank
            from models.nli import load_nli

            nli = load_nli("embedded")
            t2 = time.perf_counter()
            r_examples = []
            for ex, (first_p, c) in zip(sent_examples[: args.rerank_limit], zip(final, sub, strict=False), strict=False):
                cands, rankings, _ = bench.sentence_candidates(c.claim, first_p, SENTENCE_POOL)
                first = fuse(rankings, sentence)
                dec = decisiveness(nli, c.claim, [cands[i].text for i, _ in first[:RERANK_TOP]])
                r_examples.append(FitExample({"first": first, "nli": list(dec)},
                                             lambda r, ex=ex: ex.score(r)))
            print(f"cross-encoder on {len(r_examples)} claims in {time.perf_counter() - t2:.0f} s", file=sys.stderr)
            best, best_score = None, float("-inf")
            for params in fusion_grid(["first", "nli"], rrf_ks=(1, 5, 10, 20, 60), steps=10):
                mean = sum(ex.score(rerank(ex.rankings["first"], ex.rankings["nli"], params))
                           for ex in r_examples) / len(r_examples)
                if mean > best_score + 1e-12:
                    best, best_score = params, mean
            base = sum(ex.score(ex.rankings["first"]) for ex in r_examples) / len(r_examples)
            rdesc = (f"SciFact claims_train.jsonl (first {len(r_examples)} claims with evidence): the embedded NLI "
                     f"cross-encoder's P(entail) + P(contradict) on the top {RERANK_TOP} fused sentences; objective "
                     "as for sentences; grid: weighted RRF k in {1,5,10,20,60} and min-max, weights in steps of 0.1")
            rerank_fit = (FusionParams(best.method, best.k, dict(best.weights), rdesc), best_score, base)
            print(f"rerank: {rerank_fit}", file=sys.stderr)

    out = {
        "about": "Fusion weights fitted by benchmarks/fit_fusion.py; read by core.retrieve.fusion.load_fusion().",
        "passages": params_json(passage),
        "passage_sentences": {**params_json(passage_sent), "pool": SENTENCE_SCORE_POOL},
        "sentences": params_json(sentence),
    }
    if rerank_fit:
        out["rerank"] = params_json(rerank_fit[0])
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    report = {"task": "fusion_fit", "passages": {**params_json(passage), "train_objective": train_score, "train": table},
              "passage_sentences": {**params_json(passage_sent), "train_objective": ps_score},
              "sentences": {**params_json(sentence), "train_objective": s_train, "train_members": s_table},
              "wall_s": time.perf_counter() - t0}
    if rerank_fit:
        report["rerank"] = {**params_json(rerank_fit[0]), "train_objective": rerank_fit[1],
                            "train_objective_without_rerank": rerank_fit[2]}
    args.report.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


def sentence_examples(bench, claims, rankings) -> list[FitExample]:
    """One example per claim: the member rankings of the sentences of its top passages, scored
    by rationale-sentence recall@5 (+ 0.01 · recall@10)."""
    out = []
    for ranked, c in zip(rankings, claims, strict=True):
        cands, members, _ = bench.sentence_candidates(c.claim, ranked, SENTENCE_POOL)
        keys = [bench.sentence_key(x) for x in cands]

        def sscore(r, keys=keys, c=c):
            ranked_keys = dedupe([keys[i] for i, _ in r])
            return (sentence_recall(ranked_keys, c.gold_sentence_sets, 5)
                    + 0.01 * sentence_recall(ranked_keys, c.gold_sentence_sets, 10))

        out.append(FitExample(members, sscore))
    return out


def extra_set_spec(spec: str) -> tuple[str, Path, Path]:
    """``DATASET:CLAIMS:DB`` of ``--extra-set``."""
    parts = spec.split(":")
    if len(parts) != 3 or not all(parts):
        raise SystemExit(f"--extra-set {spec!r}: expected DATASET:CLAIMS:DB")
    return parts[0], Path(parts[1]), Path(parts[2])


def fit_sentences_per_mode(sets: list[tuple[str, object, list]], args, t0: float) -> None:
    """Refit the evidence-sentence fusion once per retrieval mode over that mode's own passage
    ranking, on the training claims of every dataset in ``sets`` ((name, bench, claims);
    macro-averaged); the passage weights stay as shipped. Writes ``--out`` (the shipped file with
    the sentence blocks replaced) and ``--report`` (each fit with its training table per set)."""
    from core.retrieve.fusion import SENTENCES_BY_MODE_KEY, SENTENCES_KEY, load_sentence_fusion

    sets = [(name, bench, claims[: args.sentence_limit] if args.sentence_limit else claims)
            for name, bench, claims in sets]
    shipped = json.loads((ROOT / "core" / "retrieve" / "data" / "fusion.json").read_text())
    out = dict(shipped)
    embedder = sets[0][1].embedder.ref.model_id
    report = {"task": "fusion_fit_sentences", "embedder": embedder,
              "claims": {name: len(claims) for name, _, claims in sets}, "modes": {}}
    sgrid = fusion_grid(["dense", "bm25", "passage"], steps=10)
    n_total = sum(len(claims) for _, _, claims in sets)
    on = " + ".join(f"{name} ({len(claims)} claims with evidence)" for name, _, claims in sets)
    for mode in [m.strip() for m in args.sentence_modes.split(",") if m.strip()]:
        t1 = time.perf_counter()
        per_set: dict[str, list[FitExample]] = {}
        for name, bench, claims in sets:
            rankings = [bench.passage_ranking(mode, c.claim, "flat")[0] for c in claims]
            per_set[name] = sentence_examples(bench, claims, rankings)
        examples = macro_average(list(per_set.values()))
        print(f"{mode}: sentence candidates for {n_total} claims in {time.perf_counter() - t1:.0f} s", file=sys.stderr)
        desc = (f"{on}, embedder {embedder}; candidates: sentences of the top {SENTENCE_POOL} passages of mode "
                f"{mode} (as eval retrieval ranks them); objective: mean rationale-sentence recall@5 + 0.01 * "
                f"recall@10{', averaged over the datasets' if len(sets) > 1 else ''}; grid: weighted RRF k in "
                "{1,5,10,20,40,60,100} and min-max, weights in steps of 0.1")
        fitted, train = fit_fusion(examples, sgrid, desc)
        current = load_sentence_fusion(mode)
        tables = {}
        for name, exs in per_set.items():
            table = {m: sum(ex.score(ex.rankings[m]) for ex in exs) / len(exs) for m in ("dense", "bm25", "passage")}
            table["current"] = sum(ex.score(fuse(ex.rankings, current)) for ex in exs) / len(exs)
            table["fitted"] = sum(ex.score(fuse(ex.rankings, fitted)) for ex in exs) / len(exs)
            tables[name] = table
        print(f"{mode}: {fitted} train {train:.4f} per set {tables}", file=sys.stderr)
        report["modes"][mode] = {**params_json(fitted), "train_objective": train, "train_by_set": tables,
                                 "current": params_json(current)}
        if mode == "hybrid":
            out[SENTENCES_KEY] = params_json(fitted)
        else:
            out.setdefault(SENTENCES_BY_MODE_KEY, {})[mode] = params_json(fitted)
    report["wall_s"] = time.perf_counter() - t0
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    args.report.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
