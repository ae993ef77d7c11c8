"""``claimscope eval retrieval``: document-level retrieval quality and speed on SciFact.

Protocol (``../shared/docs/eval.md``): the claim text is the query; a claim's gold documents
are the keys of its ``evidence``; claims without evidence are skipped. Passages are ranked
(top 100) and mapped to documents by first occurrence; recall@k and ndcg@k use trec_eval
semantics with binary relevance (seed 000 §1.3). The corpus is indexed into a fresh
temporary database (or ``--db``) so the index build time is measured too.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import core
from core.evaluate.datasets import load_scifact_claims
from core.evaluate.metrics import dedupe, ndcg_at_k, percentile, recall_at_k
from core.evaluate.report import claimscope_version, machine
from core.index import Progress, add_source
from core.retrieve import MODES, BM25Retriever, DenseRetriever, reciprocal_rank_fusion
from core.sources import load_documents
from models.embed import Embedder
from store import open_db
from store import sources as sq

DEPTH = 100
SOURCE = "eval-corpus"


def evaluate_retrieval(
    *,
    claims_path: Path,
    corpus_path: Path,
    modes: list[str],
    ks: list[int],
    index_kinds: list[str],
    embedder_factory: Callable[[], Embedder],
    splitter_factory: Callable,
    db_path: Path | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    rrf_k: int = 60,
) -> dict:
    for m in modes:
        if m not in MODES:
            raise core.errors.InputError(f"unknown mode {m!r} (use {', '.join(MODES)})")
    claims = [c for c in load_scifact_claims(claims_path) if c.gold_docs]
    if limit:
        claims = claims[:limit]
    docs = load_documents(corpus_path, "scifact")
    t_wall = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="claimscope-eval-") as tmp:
        db = open_db(db_path or Path(tmp) / "eval.db")
        t0 = time.perf_counter()
        embedder = embedder_factory()
        load_s = time.perf_counter() - t0
        index_report = add_source(
            db, SOURCE, docs, fmt="scifact", path=str(corpus_path), embedder=embedder,
            splitter=splitter_factory(), progress=progress,
        )
        info = sq.get_source(db, SOURCE)
        assert info is not None
        doc_of = dict(db.execute("SELECT p.id, d.ext_id FROM passages p JOIN documents d ON d.id = p.document_id").fetchall())

        bm25 = BM25Retriever(db, [info])
        dense_by_kind: dict[str, DenseRetriever] = {}
        build_s: dict[str, float] = {}
        for kind in index_kinds if ("dense" in modes or "hybrid" in modes) else []:
            t0 = time.perf_counter()
            dense_by_kind[kind] = DenseRetriever(db, [info], embedder, kind)
            build_s[kind] = time.perf_counter() - t0

        systems: dict[str, dict] = {}
        runs: list[tuple[str, str | None]] = []
        for m in modes:
            if m == "bm25":
                runs.append(("bm25", None))
            else:
                runs.extend((m if i == 0 else f"{m}@{kind}", kind) for i, kind in enumerate(index_kinds))
        for name, kind in runs:
            mode = name.split("@")[0]
            latencies, per_claim = [], []
            for n, c in enumerate(claims):
                t0 = time.perf_counter()
                if mode == "bm25":
                    ranked = bm25.retrieve(c.claim, DEPTH)
                elif mode == "dense":
                    ranked = dense_by_kind[kind].retrieve(c.claim, DEPTH)
                else:
                    ranked = reciprocal_rank_fusion(
                        {"bm25": bm25.retrieve(c.claim, DEPTH), "dense": dense_by_kind[kind].retrieve(c.claim, DEPTH)},
                        rrf_k,
                    )
                latencies.append(time.perf_counter() - t0)
                per_claim.append(dedupe([doc_of[pid] for pid, _ in ranked]))
                if progress:
                    progress(name, 1, len(claims))
                del n
            metrics: dict[str, float] = {}
            for k in ks:
                metrics[f"recall@{k}"] = _mean(recall_at_k(r, c.gold_docs, k) for r, c in zip(per_claim, claims, strict=True))
            for k in sorted({*ks, 10}):
                metrics[f"ndcg@{k}"] = _mean(ndcg_at_k(r, c.gold_docs, k) for r, c in zip(per_claim, claims, strict=True))
            metrics["latency_ms_median"] = 1000 * percentile(latencies, 50)
            metrics["latency_ms_p95"] = 1000 * percentile(latencies, 95)
            if kind:
                metrics["index"] = kind
            systems[name] = metrics
    return {
        "task": "retrieval",
        "dataset": "scifact",
        "path": str(claims_path),
        "corpus": str(corpus_path),
        "n": len(claims),
        "level": "document",
        "systems": systems,
        "index": {
            "documents": len(docs),
            "passages": info.n_passages,
            "build_s": index_report.seconds,
            "passages_embedded": index_report.passages_embedded,  # the rest came from the embedding cache
            "faiss_build_s": build_s,
            "chunk": {"words": info.chunk_words, "overlap": info.chunk_overlap},
        },
        "manifest": {"claimscope": claimscope_version(), "models": {"embedder": embedder.ref.manifest()}, "rrf_k": rrf_k, "depth": DEPTH},
        "timing": {"wall_s": time.perf_counter() - t_wall, "load_s": load_s},
        "machine": machine("cpu"),
    }


def _mean(values) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else 0.0




def format_table(report: dict) -> str:
    """A plain-text table for stdout."""
    systems = report["systems"]
    cols = [c for c in next(iter(systems.values())) if c != "index"]
    head = f"{'system':<14}" + "".join(f"{c:>18}" for c in cols)
    lines = [f"retrieval on {report['dataset']} ({report['n']} claims with evidence, {report['level']} level)", head]
    for name, m in systems.items():
        lines.append(f"{name:<14}" + "".join(f"{m[c]:>18.3f}" for c in cols))
    idx = report["index"]
    lines.append(
        f"index: {idx['documents']} documents → {idx['passages']} passages ({idx['passages_embedded']} embedded, "
        f"the rest cached) in {idx['build_s']:.1f} s; "
        + ", ".join(f"faiss {k} {v:.2f} s" for k, v in idx["faiss_build_s"].items())
    )
    return "\n".join(lines)
