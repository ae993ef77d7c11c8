"""``claimscope eval retrieval``: document-level retrieval quality and speed on SciFact.

Protocol (``../shared/docs/eval.md``): the claim text is the query; a claim's gold documents
are the keys of its ``evidence``; claims without evidence are skipped. Passages are ranked
(top 100) and mapped to documents by first occurrence; recall@k and ndcg@k use trec_eval
semantics with binary relevance (seed 000 §1.3). The corpus is indexed into a fresh
temporary database (or ``--db``) so the index build time is measured too.

The expansion modes (seed 000): ``hyde`` (dense, claim + pseudo-document embeddings) and
``query2doc`` (BM25, claim × 5 + pseudo-document), written by a local GGUF LLM. Generated
documents are cached in the database's stage cache, so ``eval leakage`` on the same ``--db``
reuses them; the time an expansion took is reported apart from the retrieval latency (a
cached expansion reports the time it took when it was generated).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils

import core
from core.evaluate.datasets import SciFactClaim, load_scifact_claims
from core.evaluate.metrics import dedupe, ndcg_at_k, percentile, recall_at_k
from core.evaluate.report import claimscope_version, machine
from core.ingest.index import IndexReport, Progress, add_source
from core.ingest.sources import load_documents
from core.pipeline.stored import expand_cached
from core.retrieve.expand import METHODS, Expander, ExpansionParams
from core.retrieve.searcher import MODES, BM25Retriever, DenseRetriever, rank_expanded, reciprocal_rank_fusion
from models.embed import Embedder
from store import open_db
from store import sources as sq

DEPTH = 100
SOURCE = "eval-corpus"
BASELINE = {"hyde": "dense", "query2doc": "bm25"}  # the unexpanded retriever each expansion builds on


@dataclass
class Bench:
    """A SciFact corpus indexed in one database, with its retrievers and expanders."""

    db: sqlite_utils.Database
    embedder: Embedder
    bm25: BM25Retriever
    dense: dict[str, DenseRetriever]  # by index kind (the first is the default)
    doc_of: dict[int, str]  # passage id → corpus doc id
    index_report: IndexReport
    n_documents: int
    n_passages: int
    load_s: float
    faiss_build_s: dict[str, float]
    chunk: dict[str, int] = field(default_factory=dict)
    expanders: dict[str, Expander] = field(default_factory=dict)
    rrf_k: int = 60

    def ranking(self, mode: str, claim: str, kind: str | None = None) -> tuple[list[str], float, float | None]:
        """(ranked doc ids, retrieval seconds, expansion seconds or None) for one claim."""
        gen_s = None
        dense = self.dense.get(kind or next(iter(self.dense), ""), None)
        t0 = time.perf_counter()
        if mode == "bm25":
            ranked = self.bm25.retrieve(claim, DEPTH)
        elif mode == "dense":
            ranked = dense.retrieve(claim, DEPTH)
        elif mode == "hybrid":
            ranked = reciprocal_rank_fusion(
                {"bm25": self.bm25.retrieve(claim, DEPTH), "dense": dense.retrieve(claim, DEPTH)}, self.rrf_k,
            )
        else:
            expansion = expand_cached(self.db, self.expanders[mode], claim)
            gen_s = expansion.seconds
            t0 = time.perf_counter()  # retrieval latency excludes generation (reported apart)
            ranked = rank_expanded(claim, expansion, DEPTH, self.bm25, dense, self.embedder.encode,
                                   depth=DEPTH, rrf_k=self.rrf_k)
        seconds = time.perf_counter() - t0
        return dedupe([self.doc_of[pid] for pid, _ in ranked]), seconds, gen_s


@contextmanager
def scifact_bench(
    corpus_path: Path, embedder_factory: Callable[[], Embedder], splitter_factory: Callable, *,
    index_kinds: list[str], db_path: Path | None = None, progress: Progress | None = None,
    llm_factory: Callable[[], Any] | None = None, methods: tuple[str, ...] = (), hyde_prompt: str = "scientific",
    params: ExpansionParams | None = None, rrf_k: int = 60,
) -> Iterator[Bench]:
    """Index the corpus (into ``db_path`` or a temporary database) and yield a :class:`Bench`."""
    docs = load_documents(corpus_path, "scifact")
    with tempfile.TemporaryDirectory(prefix="claimscope-eval-") as tmp:
        db = open_db(db_path or Path(tmp) / "eval.db")
        t0 = time.perf_counter()
        embedder = embedder_factory()
        load_s = time.perf_counter() - t0
        report = add_source(
            db, SOURCE, docs, fmt="scifact", path=str(corpus_path), embedder=embedder,
            splitter=splitter_factory(), progress=progress,
        )
        info = sq.get_source(db, SOURCE)
        assert info is not None
        doc_of = dict(db.execute("SELECT p.id, d.ext_id FROM passages p JOIN documents d ON d.id = p.document_id").fetchall())
        dense, build_s = {}, {}
        for kind in index_kinds:
            t0 = time.perf_counter()
            dense[kind] = DenseRetriever(db, [info], embedder, kind)
            build_s[kind] = time.perf_counter() - t0
        expanders = {}
        if methods:
            if llm_factory is None:
                raise core.errors.InputError("query expansion needs an LLM")
            llm = llm_factory()
            for m in methods:
                expanders[m] = Expander(llm, m, hyde_prompt if m == "hyde" else "query2doc", params)
        yield Bench(db, embedder, BM25Retriever(db, [info]), dense, doc_of, report, len(docs), info.n_passages,
                    load_s, build_s, {"words": info.chunk_words, "overlap": info.chunk_overlap}, expanders, rrf_k)


def ir_metrics(rankings: list[list[str]], claims: list[SciFactClaim], ks: list[int]) -> dict[str, float]:
    """Mean recall@k and ndcg@k (k in ``ks`` plus 10 for ndcg) over the claims."""
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall@{k}"] = _mean(recall_at_k(r, c.gold_docs, k) for r, c in zip(rankings, claims, strict=True))
    for k in sorted({*ks, 10}):
        out[f"ndcg@{k}"] = _mean(ndcg_at_k(r, c.gold_docs, k) for r, c in zip(rankings, claims, strict=True))
    return out


def check_modes(modes: list[str]) -> None:
    for m in modes:
        if m not in MODES:
            raise core.errors.InputError(f"unknown mode {m!r} (use {', '.join(MODES)})")


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
    llm_factory: Callable[[], Any] | None = None,
    hyde_prompt: str = "scientific",
    params: ExpansionParams | None = None,
) -> dict:
    check_modes(modes)
    claims = [c for c in load_scifact_claims(claims_path) if c.gold_docs]
    if limit:
        claims = claims[:limit]
    t_wall = time.perf_counter()
    methods = tuple(m for m in modes if m in METHODS)
    needs_dense = any(m != "bm25" for m in modes)
    with scifact_bench(
        corpus_path, embedder_factory, splitter_factory, index_kinds=index_kinds if needs_dense else [],
        db_path=db_path, progress=progress, llm_factory=llm_factory, methods=methods, hyde_prompt=hyde_prompt,
        params=params, rrf_k=rrf_k,
    ) as bench:
        runs: list[tuple[str, str, str | None]] = []  # (system name, mode, index kind)
        for m in modes:
            if m in ("bm25", "query2doc"):
                runs.append((m, m, None))
            elif m == "hyde":
                runs.append((m, m, index_kinds[0]))
            else:
                runs.extend((m if i == 0 else f"{m}@{kind}", m, kind) for i, kind in enumerate(index_kinds))
        systems: dict[str, dict] = {}
        for name, mode, kind in runs:
            latencies, gen_s, per_claim = [], [], []
            for c in claims:
                ranked, seconds, gen = bench.ranking(mode, c.claim, kind)
                per_claim.append(ranked)
                latencies.append(seconds)
                if gen is not None:
                    gen_s.append(gen)
                if progress:
                    progress(name, 1, len(claims))
            metrics = ir_metrics(per_claim, claims, ks)
            metrics["latency_ms_median"] = 1000 * percentile(latencies, 50)
            metrics["latency_ms_p95"] = 1000 * percentile(latencies, 95)
            if gen_s:
                metrics["expansion_s_median"] = percentile(gen_s, 50)
                metrics["expansion_s_mean"] = _mean(gen_s)
            if kind:
                metrics["index"] = kind
            systems[name] = metrics
        models = {"embedder": bench.embedder.ref.manifest()}
        if bench.expanders:
            first = next(iter(bench.expanders.values()))
            models["expansion_llm"] = first.llm.ref.manifest()
        report = {
            "task": "retrieval",
            "dataset": "scifact",
            "path": str(claims_path),
            "corpus": str(corpus_path),
            "n": len(claims),
            "level": "document",
            "systems": systems,
            "index": {
                "documents": bench.n_documents,
                "passages": bench.n_passages,
                "build_s": bench.index_report.seconds,
                "passages_embedded": bench.index_report.passages_embedded,  # the rest came from the embedding cache
                "faiss_build_s": bench.faiss_build_s,
                "chunk": bench.chunk,
            },
            "manifest": {"claimscope": claimscope_version(), "models": models, "rrf_k": rrf_k, "depth": DEPTH,
                         "expansion": {m: {k: v for k, v in e.config().items() if k != "model"}
                                       for m, e in bench.expanders.items()}},
            "timing": {"wall_s": time.perf_counter() - t_wall, "load_s": bench.load_s},
            "machine": machine("cpu"),
        }
    return report


def _mean(values) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else 0.0


def format_table(report: dict) -> str:
    """A plain-text table for stdout."""
    systems = report["systems"]
    cols = list(dict.fromkeys(c for m in systems.values() for c in m if c != "index"))
    head = f"{'system':<14}" + "".join(f"{c:>20}" for c in cols)
    lines = [f"retrieval on {report['dataset']} ({report['n']} claims with evidence, {report['level']} level)", head]
    for name, m in systems.items():
        lines.append(f"{name:<14}" + "".join(f"{m[c]:>20.3f}" if c in m else f"{'':>20}" for c in cols))
    idx = report["index"]
    lines.append(
        f"index: {idx['documents']} documents → {idx['passages']} passages ({idx['passages_embedded']} embedded, "
        f"the rest cached) in {idx['build_s']:.1f} s"
        + "".join(f"; faiss {k} {v:.2f} s" for k, v in idx["faiss_build_s"].items())
    )
    return "\n".join(lines)
