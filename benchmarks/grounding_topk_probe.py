"""Retrieve, then verify: a claim judged against its document's top-k sentences as one premise (issue 16, grounding).

`check --against` and `eval grounding` judge *every* unit of a given document (each sentence, each
96-token window, sentence sets when none decides) and take the largest P(entailment). On a long web
page (WiCE: about 140 units a claim) the largest of many draws is often a sentence the small
cross-encoder reads as entailing although it is only about the same thing, and the lexical baseline
ranks WiCE's claims better than the verifier (AUC .730 against .627). WiCE's own recipe (Kamoi et
al. 2023, §5) and MiniCheck's chunking verify against *retrieved* evidence instead: the sentences
most relevant to the claim, judged together. This probe scores each claim sentence once, against
the concatenation (in document order) of the document's k sentences most similar to it (min-max
fusion, equal weights, of all-MiniLM cosine and BM25 over the document's sentences; at most 128
words, the least relevant dropped first), and a claim by the min over its sentences. The rule and
the result (not adopted: WiCE gains, ExpertQA and Factcheck-GPT lose): docs/benchmarks.md,
"Retrieve, then verify" (session 39).

    python benchmarks/grounding_fit_pool.py --out POOL.jsonl
    PYTHONPATH=. python benchmarks/grounding_topk_probe.py --set pool=POOL.jsonl --choose-k-on pool \\
        --set wice=WICE_ROWS.jsonl:100 --set expertqa=EQA_ROWS.jsonl:300 --set factcheck-gpt=FC_ROWS.jsonl \\
        --shipped wice=grounding_wice.json --shipped expertqa=… --shipped factcheck-gpt=… --json OUT.json

``--set NAME=ROWS[:LIMIT]``: ``eval grounding --data`` rows (``--convert`` writes them). ``--shipped
NAME=REPORT``: an ``eval grounding`` report of the same rows, whose per-row scores are the shipped
figure (paired by id). Nothing here changes what ships.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

K_GRID = (3, 5, 8)
MAX_WORDS = 128  # the longest premise the v2 recipe trains on (docs/verifier_v2.md)


def top_k_premise(claim: str, sentences: list[str], vecs: np.ndarray, qv: np.ndarray, k: int) -> str:
    """The ``k`` sentences most relevant to ``claim`` in document order, at most :data:`MAX_WORDS`
    words (the least relevant dropped first; the best one is always kept)."""
    from core.retrieve.sentence_rank import bm25_scores

    def minmax(x: np.ndarray) -> np.ndarray:
        return (x - x.min()) / (x.max() - x.min()) if x.max() > x.min() else np.ones_like(x)

    rel = 0.5 * minmax(vecs @ qv) + 0.5 * minmax(np.array(bm25_scores(claim, sentences), dtype=float))
    chosen = list(np.argsort(-rel, kind="stable")[:k])
    while len(chosen) > 1 and sum(len(sentences[i].split()) for i in chosen) > MAX_WORDS:
        chosen.pop()
    return " ".join(sentences[i] for i in sorted(chosen))


def score_rows(rows, wb, verifier, ks) -> dict[int, dict[str, float]]:
    """{k: {row id: claim score}}: min over the claim's sentences of calibrated P(entailment)."""
    from core.pipeline.given import split_given
    from core.verify.injection import strip_instructions
    from models.nli import ENTAIL

    splitter, embedder = wb.splitter(), wb.embedder()
    out: dict[int, dict[str, float]] = {k: {} for k in ks}
    for r in rows:
        doc_sents = [r.doc[s:e].strip() for s, e in split_given(r.doc, splitter)]
        doc_sents = [strip_instructions(t).text for t in doc_sents if t]
        doc_sents = [t for t in doc_sents if t.strip()] or [r.doc]
        spans = splitter.split([r.claim])[0] or [(0, len(r.claim))]
        claim_sents = [r.claim[s:e] for s, e in spans if r.claim[s:e].strip()] or [r.claim.strip()]
        vecs = embedder.encode([*claim_sents, *doc_sents])
        qvs, dvs = vecs[:len(claim_sents)], vecs[len(claim_sents):]
        for k in ks:
            pairs = [(top_k_premise(c, doc_sents, dvs, qv, k), c) for c, qv in zip(claim_sents, qvs, strict=True)]
            probs = verifier.nli.predict(pairs)
            out[k][r.id] = float(min(verifier._calibrate(p)[ENTAIL] for p in probs))
    return out


def metrics(rows, scores: dict[str, float], threshold: float) -> dict:
    from core.evaluate.grounding import domain_metrics

    s = [scores[r.id] for r in rows]
    return domain_metrics(rows, s, [int(x > threshold) for x in s])


def paired_bacc(rows, a: dict[str, float], b: dict[str, float], threshold: float) -> dict:
    """BAcc(b) − BAcc(a) at ``threshold`` with its paired-bootstrap 95 % interval
    (``benchmarks/grounding_paired.py``'s, 2,000 draws, seed 0)."""
    from benchmarks.grounding_paired import paired_bacc as paired

    y = np.array([r.label for r in rows])
    pa = np.array([int(a[r.id] > threshold) for r in rows])
    pb = np.array([int(b[r.id] > threshold) for r in rows])
    d = paired(y, pa, pb, np.array([r.domain for r in rows]))
    return {"delta": d["bacc"], "ci95": d["ci95"]}


def main() -> None:
    from core.evaluate.grounding import load_rows
    from core.settings import load_settings
    from core.workbench import RunOptions, Workbench

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", action="append", required=True, help="NAME=ROWS.jsonl[:LIMIT]")
    ap.add_argument("--shipped", action="append", default=[], help="NAME=eval grounding report of the same rows")
    ap.add_argument("--choose-k-on", help="the set k is chosen on (mean BAcc over its domains); never a scored set")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    wb = Workbench(load_settings(None))
    verifier = wb.verifier(RunOptions.from_settings(wb.settings))
    threshold = verifier.t.support
    sets = {}
    for spec in args.set:
        name, _, rest = spec.partition("=")
        path, _, limit = rest.partition(":")
        rows = load_rows(path)
        sets[name] = rows[: int(limit)] if limit else rows
    shipped_paths = dict(spec.partition("=")[::2] for spec in args.shipped)

    def shipped(name: str) -> dict[str, float]:
        """Read when needed: the shipped runs may still be writing while k is chosen."""
        return {str(x["id"]): x["score"] for x in json.loads(Path(shipped_paths[name]).read_text())["rows"]}

    report: dict = {"task": "grounding_topk_probe", "threshold": threshold, "k_grid": list(K_GRID),
                    "max_words": MAX_WORDS, "verifier": verifier.nli.ref.manifest(), "sets": {}}
    ks = K_GRID
    if args.choose_k_on:
        scores = score_rows(sets[args.choose_k_on], wb, verifier, K_GRID)
        by_k = {k: metrics(sets[args.choose_k_on], scores[k], threshold) for k in K_GRID}
        k_best = max(K_GRID, key=lambda k: by_k[k]["bacc"])
        report["choice"] = {"on": args.choose_k_on, "by_k": by_k, "k": k_best}
        if args.choose_k_on in shipped_paths:
            report["choice"]["shipped"] = metrics(sets[args.choose_k_on], shipped(args.choose_k_on), threshold)
        ks = (k_best,)
        print(json.dumps(report["choice"], indent=2), file=sys.stderr)
    for name, rows in sets.items():
        if name == args.choose_k_on:
            continue
        scores = score_rows(rows, wb, verifier, ks)
        entry = {f"top{k}": metrics(rows, scores[k], threshold) for k in ks}
        if name in shipped_paths:
            ref = shipped(name)
            entry["shipped"] = metrics(rows, ref, threshold)
            for k in ks:
                entry[f"top{k}"]["paired_vs_shipped"] = paired_bacc(rows, ref, scores[k], threshold)
        report["sets"][name] = entry
        print(name, json.dumps(entry), file=sys.stderr)
    text = json.dumps(report, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
