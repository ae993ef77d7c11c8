"""Three refits of the default's passage fusion (issue 21), fitted on SciFact train claims and
measured on dev claims with a paired bootstrap: can a better fit move document recall@5?

The default (``hybrid-sentence``) ranks passages in two fused stages (core/retrieve/fusion.py,
core/retrieve/sentence_score.py): BM25 + dense by the fitted weighted RRF (k = 5, BM25 .45, dense
.55), then the top 20 again with the cosine of each passage's best sentence (min-max, .5 / .5).
``benchmarks/fit_fusion.py`` fitted the two stages one after the other (and with the fp32 embedder,
before the int8 copy became the default). The candidates here:

- ``joint``: both stages fitted together on the final ranking's objective (mean document
  recall@5 + 0.01 · nDCG@10), the same grids as fit_fusion.py (weights in steps of .05,
  RRF k ∈ {1, 5, 10, 20, 40, 60, 100} or min-max, each member alone included).
- ``corpus-sentence``: a third first-stage member, the passages ranked by their best sentence's
  cosine over the whole corpus (every stored sentence vector, top 100), fitted jointly (first
  stage weights in steps of .1).
- ``dense-solo``: a document BM25 does not return in its top 100 gets ``w_solo / (k + dense
  rank)`` instead of ``w_dense / (k + dense rank)`` (RRF only, k ∈ {1, 5, 10, 20}, weights in
  steps of .1, w_solo in steps of .1 up to 1.5), fitted jointly with the second stage. Why: in
  5 of the 22 dev documents missed at 5, BM25 never returns the document and the fusion ranks
  it below where dense alone puts it (session 13's miss analysis).

Every rule is evaluated by a vectorised copy of the two stages (``stage1`` / ``stage2_docs``);
the shipped rule's dev recall@5 it prints first is the figure ``claimscope eval retrieval
--modes hybrid-sentence`` reports for the same database (.930 with the int8 embedder), and
tests/retrieve/test_fusion_joint_fit.py checks the copy against ``core.retrieve.fusion.fuse``.
Dev claims are read only to report.

    PYTHONPATH=. python benchmarks/fusion_joint_fit.py --db DB \\
        --json benchmarks/results/fusion_joint_fit_scifact.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.evaluate.retrieval import scifact_bench  # noqa: E402
from core.evaluate.retrieval_sets import load_retrieval_set  # noqa: E402
from core.retrieve.fusion import FusionParams, fusion_grid, load_fusion  # noqa: E402
from core.retrieve.sentence_score import SENTENCE_SCORE_POOL  # noqa: E402
from core.retrieve.sentence_score import load_params as load_sentence_score  # noqa: E402
from store import sources as sq  # noqa: E402
from store.records import cut_sentences  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "scifact"
DEPTH = 100
# first-stage passages the second stage orders: one below the pool of 20 keeps its first-stage
# order, so a passage below 40 reaches the top 10 documents only if the 40 above it hold fewer
TOP = 40
DISCOUNT = 1.0 / np.log2(np.arange(2, 2 + TOP + 1))
CANDIDATES = ("joint", "corpus-sentence", "dense-solo")


@dataclass
class Claim:
    """One claim's first-stage material over the union U of its members' top lists (in the
    order :func:`core.retrieve.fusion.fuse` meets them): 1-based ranks (inf = absent), min-max
    scores (0 = absent), best-sentence cosine and document index of each passage, gold docs."""

    ranks: dict[str, np.ndarray]
    norms: dict[str, np.ndarray]
    best: np.ndarray
    doc: np.ndarray
    gold: np.ndarray
    in_bm25: np.ndarray


def sentence_links(db) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    """(passage ids, the distinct sentence texts in passage order, and for every (passage,
    sentence) link its passage index and text index), the sentences cut as a search cuts them."""
    rows = db.execute("SELECT id, text, char_start, sentences FROM passages ORDER BY id").fetchall()
    texts: list[str] = []
    index: dict[str, int] = {}
    owner, sent = [], []
    for i, r in enumerate(rows):
        for t in cut_sentences(r[1], r[2], json.loads(r[3])):
            if t not in index:
                index[t] = len(texts)
                texts.append(t)
            owner.append(i)
            sent.append(index[t])
    return np.array([r[0] for r in rows]), texts, np.array(owner), np.array(sent)


def corpus_sentences(db, model: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(passage ids, sentence matrix, owner passage index and sentence row of every link): the
    sentence vectors core.ingest.index stored for ``model``; a sentence without one is left out."""
    from core.ingest.index import text_sha256

    pids, texts, owner, sent = sentence_links(db)
    hashes = [text_sha256(t) for t in texts]
    stored = sq.stored_sentence_vectors(db, model, hashes)
    if not stored:
        raise SystemExit(f"no sentence vectors stored for {model}: index the corpus with `eval retrieval` first")
    missing = np.zeros_like(next(iter(stored.values())))
    matrix = np.stack([stored.get(h, missing) for h in hashes])
    kept = np.array([h in stored for h in hashes])[sent]
    return pids, matrix, owner[kept], sent[kept]


def gather(bench, claims, corpus, encode: Callable[[str], np.ndarray] | None = None,
           passages: np.ndarray | None = None) -> list[Claim]:
    """Each claim's BM25 and dense top 100 and the best-sentence cosine of every passage.
    ``encode`` and ``passages`` (one row per passage of ``corpus``, L2-normalised) replace the
    database's embedder and dense index (another embedder's vectors, embedder_finetune_probe.py)."""
    pids, matrix, owner, sent = corpus
    pos = {int(p): i for i, p in enumerate(pids)}
    docs = sorted(set(bench.doc_of.values()))
    doc_index = {d: i for i, d in enumerate(docs)}
    doc_of = np.array([doc_index[bench.doc_of[int(p)]] for p in pids])
    out = []
    for c in claims:
        q = encode(c.claim) if encode else bench.dense["flat"].encode_query(c.claim)
        best = np.full(len(pids), -1.0, dtype=np.float32)
        np.maximum.at(best, owner, matrix[sent] @ q)
        top_sent = np.argsort(-best, kind="stable")[:DEPTH]
        if passages is None:
            dense = [(pos[p], s) for p, s in bench.dense["flat"].retrieve_vector(q, DEPTH)]
        else:
            sims = passages @ q
            dense = [(int(i), float(sims[i])) for i in np.argsort(-sims, kind="stable")[:DEPTH]]
        members = {"bm25": [(pos[p], s) for p, s in bench.bm25.retrieve(c.claim, DEPTH)],
                   "dense": dense, "sent": [(int(i), float(best[i])) for i in top_sent]}
        gold = np.array([doc_index[g] for g in c.gold_docs if g in doc_index])
        out.append(to_claim(members, best, doc_of, gold))
    return out


def to_claim(members: dict[str, list[tuple[int, float]]], best: np.ndarray, doc_of: np.ndarray,
             gold: np.ndarray) -> Claim:
    """A :class:`Claim` from its members' top lists of passage indices (must hold "bm25"), with
    ``best`` and ``doc_of`` indexed by passage index."""
    union: dict[int, int] = {}
    for ranked in members.values():
        for p, _ in ranked:
            union.setdefault(p, len(union))
    ranks, norms = {}, {}
    for name, ranked in members.items():
        r, n = np.full(len(union), np.inf), np.zeros(len(union))
        scores = np.array([s for _, s in ranked])
        lo, hi = scores.min(), scores.max()
        for j, (p, s) in enumerate(ranked):
            r[union[p]] = j + 1
            n[union[p]] = (s - lo) / (hi - lo) if hi > lo else 1.0
        ranks[name], norms[name] = r, n
    u = np.array(list(union))
    return Claim(ranks, norms, best[u], doc_of[u], gold, np.isfinite(ranks["bm25"]))


def only(claim: Claim, members: tuple[str, ...]) -> Claim:
    """The claim restricted to the passages that ``members`` return (what the product fuses)."""
    keep = np.zeros(len(claim.doc), bool)
    for m in members:
        keep |= np.isfinite(claim.ranks[m])
    return Claim({m: claim.ranks[m][keep] for m in members}, {m: claim.norms[m][keep] for m in members},
                 claim.best[keep], claim.doc[keep], claim.gold, claim.in_bm25[keep])


def stage1(c: Claim, p: FusionParams, solo: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The first fusion's order and sorted scores (ties keep the union's order, as ``fuse``)."""
    if p.method == "rrf":
        s = np.zeros(len(c.doc))
        for m, r in c.ranks.items():
            term = p.weight(m) / (p.k + r)
            if solo is not None and m == "dense":
                term = np.where(c.in_bm25, term, solo / (p.k + r))
            s += term
    else:
        s = sum(p.weight(m) * n for m, n in c.norms.items())
    order = np.argsort(-s, kind="stable")
    return order, s[order]


def stage2_docs(c: Claim, order: np.ndarray, s1: np.ndarray, rules: list[FusionParams]) -> np.ndarray:
    """(rules × TOP) document indices of the final passage order under each second-stage rule
    (core/retrieve/sentence_score.py: the fused ranking with the best-sentence ranking of its
    top 20)."""
    top = order[:TOP]
    n, pool = len(top), min(SENTENCE_SCORE_POOL, len(top))
    best = c.best[top[:pool]]
    srank = np.empty(pool)
    srank[np.argsort(-best, kind="stable")] = np.arange(1, pool + 1)
    frank = np.arange(1, n + 1)
    lo, hi = s1[-1], s1[0]
    fnorm = (s1[:n] - lo) / (hi - lo) if hi > lo else np.ones(n)
    blo, bhi = best.min(), best.max()
    bnorm = (best - blo) / (bhi - blo) if bhi > blo else np.ones(pool)
    scores = np.zeros((len(rules), n))
    for i, q in enumerate(rules):
        wf, ws = q.weight("fused"), q.weight("sentence")
        if q.method == "rrf":
            scores[i] = wf / (q.k + frank)
            scores[i, :pool] += ws / (q.k + srank)
        else:
            scores[i] = wf * fnorm
            scores[i, :pool] += ws * bnorm
    return c.doc[top][np.argsort(-scores, axis=1, kind="stable")]


def doc_metrics(docs: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of passage-order document indices: (recall@5, nDCG@10) over distinct documents,
    as core.evaluate.metrics computes them on the deduplicated list."""
    rows, n = docs.shape
    earlier = np.tril(np.ones((n, n), bool), -1)
    first = ~((docs[:, :, None] == docs[:, None, :]) & earlier[None]).any(axis=2)
    doc_rank = np.cumsum(first, axis=1) - 1
    recall, dcg = np.zeros(rows), np.zeros(rows)
    for g in gold:
        hit = (docs == g) & first
        found = hit.any(axis=1)
        rank = np.where(found, doc_rank[np.arange(rows), np.argmax(hit, axis=1)], n)
        recall += rank < 5
        dcg += np.where(rank < 10, DISCOUNT[np.minimum(rank, TOP)], 0.0)
    return recall / len(gold), dcg / DISCOUNT[: min(len(gold), 10)].sum()


def evaluate(claims: list[Claim], first: FusionParams, rules: list[FusionParams],
             solo: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(claims × rules) recall@5 and nDCG@10 of the two stages."""
    recall, ndcg = np.zeros((len(claims), len(rules))), np.zeros((len(claims), len(rules)))
    for j, c in enumerate(claims):
        order, s1 = stage1(c, first, solo)
        recall[j], ndcg[j] = doc_metrics(stage2_docs(c, order, s1, rules), c.gold)
    return recall, ndcg


def fit(name: str, train: list[Claim]) -> tuple[FusionParams, FusionParams, float | None, float]:
    """The candidate's best (first rule, second rule, w_solo) on the training objective."""
    second = fusion_grid(["fused", "sentence"], steps=20)
    solos: list[float | None] = [None]
    if name == "joint":
        firsts = fusion_grid(["bm25", "dense"], steps=20)
    elif name == "corpus-sentence":
        firsts = fusion_grid(["bm25", "dense", "sent"], steps=10)
    else:
        firsts = [p for p in fusion_grid(["bm25", "dense"], rrf_ks=(1, 5, 10, 20), steps=10) if p.method == "rrf"]
        solos = [round(x / 10, 1) for x in range(16)]
    best: tuple[float, tuple] = (float("-inf"), ())
    for p1 in firsts:
        for solo in solos:
            recall, ndcg = evaluate(train, p1, second, solo)
            objective = (recall + 0.01 * ndcg).mean(axis=0)
            i = int(np.argmax(objective))
            if objective[i] > best[0] + 1e-12:
                best = (float(objective[i]), (p1, second[i], solo))
    p1, p2, solo = best[1]
    return p1, p2, solo, best[0]


def paired(base: np.ndarray, new: np.ndarray, n: int = 10_000, seed: int = 0) -> dict:
    """Mean difference of per-claim recall@5 with a paired bootstrap 95 % interval over claims."""
    d = new - base
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), (n, len(d)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return {"delta": float(d.mean()), "ci95": [float(lo), float(hi)], "claims_up": int((d > 0).sum()),
            "claims_down": int((d < 0).sum()), "bootstrap": n, "seed": seed}


def write_report(report: dict, path: Path | None) -> None:
    """Print the JSON report and write it to ``path`` when given."""
    text = json.dumps(report, indent=2)
    if path:
        path.write_text(text + "\n")
    print(text)


def rule_json(p: FusionParams) -> dict:
    return {"method": p.method, "k": p.k, "weights": p.weights}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="SciFact evaluation database (indexed if new)")
    ap.add_argument("--corpus", type=Path, default=DATA / "corpus.jsonl")
    ap.add_argument("--train", type=Path, default=DATA / "claims_train.jsonl")
    ap.add_argument("--dev", type=Path, default=DATA / "claims_dev.jsonl")
    ap.add_argument("--candidates", default=",".join(CANDIDATES))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    names = [n.strip() for n in args.candidates.split(",") if n.strip()]
    if unknown := [n for n in names if n not in CANDIDATES]:
        ap.error(f"unknown candidate(s) {', '.join(unknown)} (use {', '.join(CANDIDATES)})")

    from core.settings import load_settings
    from core.workbench import Workbench

    wb = Workbench(load_settings(None))
    t0 = time.perf_counter()
    with scifact_bench(args.corpus, wb.embedder, wb.splitter, index_kinds=["flat"], db_path=args.db) as bench:
        corpus = corpus_sentences(bench.db, bench.embedder.ref.model_id)
        sets = {split: gather(bench, load_retrieval_set("scifact", path, args.corpus).claims, corpus)
                for split, path in (("train", args.train), ("dev", args.dev))}
        embedder = bench.embedder.ref.model_id
    print(f"members of {sum(map(len, sets.values()))} claims in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    two = {split: [only(c, ("bm25", "dense")) for c in claims] for split, claims in sets.items()}
    shipped1, shipped2 = load_fusion(), load_sentence_score()
    assert shipped2 is not None, "fusion.json has no passage_sentences rule"
    base = {split: evaluate(claims, shipped1, [shipped2]) for split, claims in two.items()}
    report = {"task": "fusion_joint_fit", "embedder": embedder, "claims": {s: len(c) for s, c in sets.items()},
              "shipped": {"first": rule_json(shipped1), "second": rule_json(shipped2),
                          **{f"{s}_recall@5": float(r[:, 0].mean()) for s, (r, _) in base.items()}},
              "candidates": {}}
    print(f"shipped: train R@5 {report['shipped']['train_recall@5']:.4f}, dev {report['shipped']['dev_recall@5']:.4f}",
          file=sys.stderr)
    for name in names:
        t1 = time.perf_counter()
        data = sets if name == "corpus-sentence" else two
        p1, p2, solo, objective = fit(name, data["train"])
        train_r, _ = evaluate(data["train"], p1, [p2], solo)
        dev_r, _ = evaluate(data["dev"], p1, [p2], solo)
        row = {"first": rule_json(p1), "second": rule_json(p2), "w_solo": solo, "train_objective": objective,
               "train_recall@5": float(train_r.mean()), "dev_recall@5": float(dev_r.mean()),
               "dev_vs_shipped": paired(base["dev"][0][:, 0], dev_r[:, 0]), "fit_s": time.perf_counter() - t1}
        report["candidates"][name] = row
        print(f"{name}: {json.dumps(row)}", file=sys.stderr)
    write_report(report, args.json)


if __name__ == "__main__":
    main()
