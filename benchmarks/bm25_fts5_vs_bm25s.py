"""BM25 backends compared on SciFact dev, document level: SQLite FTS5 vs Tantivy vs bm25s.

Both index the same passages (claimscope's 128-word / 32-overlap chunks on the SciFact
sentence boundaries) and get the same query text; passages map to documents by first
occurrence. Reports recall@5, recall@10, ndcg@10, index build time and query latency.

    python benchmarks/bm25_fts5_vs_bm25s.py ../shared/data/scifact/claims_dev.jsonl ../shared/data/scifact/corpus.jsonl
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from core.evaluate.datasets import load_scifact_claims
from core.evaluate.metrics import dedupe, ndcg_at_k, percentile, recall_at_k
from core.ingest.chunk import chunk
from core.ingest.index import content_hash
from core.ingest.sources import load_documents
from core.retrieve.searcher import BM25Retriever
from core.text import content_words
from store import open_db, write_tx
from store import sources as sq


def main(claims_path: str, corpus_path: str) -> dict:
    claims = [c for c in load_scifact_claims(claims_path) if c.gold_docs]
    docs = load_documents(corpus_path, "scifact")
    passages = [(d, chunk(d.text, d.sentences or [(0, len(d.text))])) for d in docs]
    results = {}

    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp) / "b.db")
        t0 = time.perf_counter()
        with write_tx(db):
            sid = sq.upsert_source(db, name="scifact", format="scifact", path=None, attribution=None,
                                   licence=None, chunk_words=128, chunk_overlap=32)
            for d, ps in passages:
                sq.insert_document(db, sid, d, content_hash(d), ps)
            sq.refresh_source_counts(db, sid, 0.0)  # passage count: what chooses the BM25 engine
        build = time.perf_counter() - t0
        doc_of = dict(db.execute("SELECT p.id, d.ext_id FROM passages p JOIN documents d ON d.id = p.document_id").fetchall())
        retriever = BM25Retriever(db, [sq.get_source(db, "scifact")])
        results["fts5"] = _run(lambda q: [doc_of[pid] for pid, _ in retriever.retrieve(q, 100)], claims, build)
        # Tantivy, as the store uses it for large sources (models/bm25_index.py): threshold 0 here
        t0 = time.perf_counter()
        tantivy = BM25Retriever(db, [sq.get_source(db, "scifact")], tantivy_min=0)
        build = time.perf_counter() - t0
        assert tantivy.engines == {"scifact": "tantivy"}
        results["tantivy"] = _run(lambda q: [doc_of[pid] for pid, _ in tantivy.retrieve(q, 100)], claims, build)

    import bm25s

    texts = [f"{d.title} {p.text}" for d, ps in passages for p in ps]
    owners = [d.ext_id for d, ps in passages for _ in ps]
    t0 = time.perf_counter()
    # Same tokenisation as the FTS5 query side (lower-cased words minus stop words), no stemming.
    index = bm25s.BM25()
    index.index([content_words(t) for t in texts], show_progress=False)
    build = time.perf_counter() - t0

    def search(q: str) -> list[str]:
        toks = content_words(q)
        if not toks:
            return []
        ids, _ = index.retrieve([toks], k=100, show_progress=False)
        return [owners[i] for i in ids[0]]

    results["bm25s"] = _run(search, claims, build)
    report = {"dataset": "scifact dev", "n": len(claims), "passages": len(texts), "systems": results}
    print(json.dumps(report, indent=2))
    return report


def _run(search, claims, build_s: float) -> dict:
    lat, ranked = [], []
    for c in claims:
        t0 = time.perf_counter()
        ranked.append(dedupe(search(c.claim)))
        lat.append(time.perf_counter() - t0)
    n = len(claims)
    return {
        "recall@5": sum(recall_at_k(r, c.gold_docs, 5) for r, c in zip(ranked, claims, strict=True)) / n,
        "recall@10": sum(recall_at_k(r, c.gold_docs, 10) for r, c in zip(ranked, claims, strict=True)) / n,
        "ndcg@10": sum(ndcg_at_k(r, c.gold_docs, 10) for r, c in zip(ranked, claims, strict=True)) / n,
        "build_s": build_s,
        "latency_ms_median": 1000 * percentile(lat, 50),
        "latency_ms_p95": 1000 * percentile(lat, 95),
    }


if __name__ == "__main__":
    main(*sys.argv[1:3])
