"""Exact (flat) vs HNSW FAISS search: recall of the HNSW top-10 against the exact top-10,
and query latency, at growing index sizes.

Vectors: the real passage embeddings of a claimscope database (e.g. SciFact's 11,920),
grown to each size with re-normalised noisy copies (σ = 0.05 per dimension), so the
neighbourhood structure stays realistic. Queries: 200 real passage vectors with noise.

    python benchmarks/vector_index.py DB_PATH SOURCE [--sizes 12000,100000,300000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from models.vector_index import VectorIndex
from store import open_db
from store import sources as sq


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("source")
    ap.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2")
    ap.add_argument("--sizes", default="12000,100000,300000")
    ap.add_argument("--json")
    args = ap.parse_args()
    db = open_db(args.db)
    info = sq.get_source(db, args.source)
    _, base = sq.load_embeddings(db, info.id, args.model)
    rng = np.random.default_rng(0)
    q = base[rng.choice(len(base), 200, replace=False)] + rng.normal(0, 0.05, (200, base.shape[1])).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    report = {"source": args.source, "base_vectors": len(base), "queries": len(q), "sizes": {}}
    for size in [int(s) for s in args.sizes.split(",")]:
        reps = [base]
        while sum(len(r) for r in reps) < size:
            noisy = base + rng.normal(0, 0.05, base.shape).astype(np.float32)
            reps.append(noisy / np.linalg.norm(noisy, axis=1, keepdims=True))
        vecs = np.concatenate(reps)[:size]
        ids = np.arange(size, dtype=np.int64)
        row = {}
        exact = None
        for kind in ("flat", "hnsw"):
            t0 = time.perf_counter()
            index = VectorIndex.build(ids, vecs, kind)
            build = time.perf_counter() - t0
            lat, results = [], []
            for v in q:
                t0 = time.perf_counter()
                results.append({i for i, _ in index.search(v, 10)})
                lat.append(1000 * (time.perf_counter() - t0))
            if kind == "flat":
                exact = results
            recall = float(np.mean([len(r & e) / 10 for r, e in zip(results, exact, strict=True)]))
            row[kind] = {"build_s": build, "latency_ms_median": statistics.median(lat),
                         "latency_ms_p95": float(np.percentile(lat, 95)), "recall@10_vs_exact": recall}
        report["sizes"][size] = row
        print(size, json.dumps(row))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    return report


if __name__ == "__main__":
    main()
