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

import os
import tempfile
import time
from bisect import bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sqlite_utils

import core
from core.evaluate.metrics import dedupe, ndcg_at_k, percentile, recall_at_k
from core.evaluate.report import claimscope_version, machine
from core.evaluate.retrieval_sets import SentenceKey, load_retrieval_set
from core.ingest.index import IndexReport, Progress, add_source, embed_with_cache, sentence_vectors
from core.ingest.sources import load_documents
from core.pipeline.stored import expand_cached
from core.retrieve.expand import METHODS, Expander, ExpansionParams
from core.retrieve.fusion import PLAIN_RRF, FusionParams, fuse, load_fusion, load_sentence_fusion, params_json
from core.retrieve.rerank import RERANK_TOP, decisiveness, rerank
from core.retrieve.searcher import MODES, BM25Retriever, DenseRetriever, Ranked, rank_expanded
from core.retrieve.sentence_head import load_sentence_head
from core.retrieve.sentence_head import rerank as rerank_by_head
from core.retrieve.sentence_rank import SENTENCE_POOL, RankedSentence, apply, candidates, member_rankings
from core.retrieve.sentence_score import SENTENCE_SCORE_POOL, with_best_sentence
from core.retrieve.sentence_score import load_params as load_sentence_score
from core.retrieve.subject import TitleIndex, subject_first
from models.embed import Embedder
from store import open_db
from store import sources as sq
from store.db import write_tx
from store.records import DocumentRecord

DEPTH = 100
SOURCE = "eval-corpus"
BASELINE = {"hyde": "dense", "query2doc": "bm25"}  # the unexpanded retriever each expansion builds on
# "fitted": the fitted BM25 + dense fusion alone (the hybrid without the subject-first step);
# "fusion": hybrid-sentence without the subject-first step (both ablations);
# "rerank": hybrid-sentence, then the NLI cross-encoder re-ranks the top evidence sentences
EVAL_MODES = (*MODES, "fitted", "fusion", "rerank")


@dataclass
class Bench:
    """A corpus indexed in one database, with its retrievers and expanders."""

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
    fusion: FusionParams = PLAIN_RRF
    sentence_starts: dict[str, list[int]] = field(default_factory=dict)  # doc id → sentence starts
    sentence_score: FusionParams | None = None  # the best-sentence fusion (core/retrieve/sentence_score.py)
    titles: TitleIndex | None = None
    entities: Callable[[str], tuple[list[str], str | None]] | None = None
    _encode: Callable[[list[str]], np.ndarray] | None = None

    def members(self, claim: str, kind: str | None = None) -> tuple[dict[str, Ranked], dict[str, float]]:
        """The BM25 and dense rankings (top ``DEPTH``) of a claim, with each one's seconds."""
        dense = self.dense.get(kind or next(iter(self.dense), ""), None)
        out, secs = {}, {}
        t0 = time.perf_counter()
        out["bm25"] = self.bm25.retrieve(claim, DEPTH)
        secs["bm25"] = time.perf_counter() - t0
        if dense is not None:
            t0 = time.perf_counter()
            out["dense"] = dense.retrieve(claim, DEPTH)
            secs["dense"] = time.perf_counter() - t0
        return out, secs

    def passage_ranking(self, mode: str, claim: str, kind: str | None = None) -> tuple[Ranked, float, float | None]:
        """(ranked passages, retrieval seconds, expansion seconds or None) for one claim."""
        gen_s = None
        dense = self.dense.get(kind or next(iter(self.dense), ""), None)
        t0 = time.perf_counter()
        if mode == "bm25":
            ranked = self.bm25.retrieve(claim, DEPTH)
        elif mode == "dense":
            ranked = dense.retrieve(claim, DEPTH)
        elif mode in ("hybrid", "hybrid-sentence", "rrf", "fitted", "fusion", "rerank"):
            query_vec = dense.encode_query(claim)
            members = {"bm25": self.bm25.retrieve(claim, DEPTH), "dense": dense.retrieve_vector(query_vec, DEPTH)}
            ranked = fuse(members, PLAIN_RRF if mode == "rrf" else self.fusion)
            if mode in ("hybrid-sentence", "fusion", "rerank") and self.sentence_score is not None:
                top = sq.get_passages(self.db, [pid for pid, _ in ranked[:SENTENCE_SCORE_POOL]])
                ranked, _ = with_best_sentence(ranked, top, query_vec, self.stored_sentences, self.sentence_score)
            if mode in ("hybrid", "hybrid-sentence", "rerank") and self.titles is not None and self.entities is not None:
                ranked = subject_first(ranked, self.titles.find(claim, *self.entities(claim)))
        else:
            expansion = expand_cached(self.db, self.expanders[mode], claim)
            gen_s = expansion.seconds
            t0 = time.perf_counter()  # retrieval latency excludes generation (reported apart)
            ranked = rank_expanded(claim, expansion, DEPTH, self.bm25, dense, self.embedder.encode,
                                   depth=DEPTH, rrf_k=self.rrf_k)
        return ranked, time.perf_counter() - t0, gen_s

    def ranking(self, mode: str, claim: str, kind: str | None = None) -> tuple[list[str], float, float | None]:
        """(ranked doc ids, retrieval seconds, expansion seconds or None) for one claim."""
        ranked, seconds, gen_s = self.passage_ranking(mode, claim, kind)
        return self.docs(ranked), seconds, gen_s

    def docs(self, ranked: Ranked) -> list[str]:
        return dedupe([self.doc_of[pid] for pid, _ in ranked])

    def stored_sentences(self, texts: list[str]) -> np.ndarray:
        """The best-sentence stage's vectors as a search reads them: stored at index time
        (core.ingest.index.ensure_sentence_vectors, float16)."""
        return sentence_vectors(self.db, self.embedder, texts)

    def encode(self, texts: list[str]) -> np.ndarray:
        if self._encode is None:
            self._encode = cached_encoder(self.db, self.embedder)
        return self._encode(texts)

    def sentence_candidates(self, claim: str, ranked: Ranked, pool: int = SENTENCE_POOL):
        """(candidate sentences, their member rankings, seconds) from the top ``pool`` passages."""
        t0 = time.perf_counter()
        top = [pid for pid, _ in ranked[:pool]]
        got = sq.get_passages(self.db, top)
        cands = candidates([got[p] for p in top if p in got])
        if not cands:
            return [], {}, time.perf_counter() - t0
        vecs = self.encode([claim, *(c.text for c in cands)])
        rankings = member_rankings(vecs[0], vecs[1:], claim, cands)
        return cands, rankings, time.perf_counter() - t0

    def sentence_key(self, c: RankedSentence) -> SentenceKey:
        """(doc id, sentence index in the document) of a candidate (a piece of a long
        sentence maps to the sentence it is cut from)."""
        doc = c.passage.doc_ext_id
        starts = self.sentence_starts.get(doc, [0])
        return doc, max(0, bisect_right(starts, c.span[0]) - 1)


def cached_encoder(db: sqlite_utils.Database, embedder: Embedder) -> Callable[[list[str]], np.ndarray]:
    """An encoder whose vectors are kept in the database's embedding cache (sentences of a
    corpus are embedded once, the first time they are candidates)."""
    model = embedder.ref.model_id

    def encode(texts: list[str]) -> np.ndarray:
        vecs, hashes, n = embed_with_cache(db, embedder, texts, lambda *_: None)
        if n:
            with write_tx(db):
                sq.cache_embeddings(db, model, hashes, vecs)
        return vecs

    return encode


@contextmanager
def corpus_bench(
    docs: list[DocumentRecord], fmt: str, corpus_path: Path | None, embedder_factory: Callable[[], Embedder],
    splitter_factory: Callable, *, index_kinds: list[str], db_path: Path | None = None, source: str = SOURCE,
    progress: Progress | None = None, llm_factory: Callable[[], Any] | None = None, methods: tuple[str, ...] = (),
    hyde_prompt: str = "scientific", params: ExpansionParams | None = None, rrf_k: int = 60,
    fusion: FusionParams | None = None,
) -> Iterator[Bench]:
    """Index ``docs`` (into ``db_path`` or a temporary database) and yield a :class:`Bench`."""
    with tempfile.TemporaryDirectory(prefix="claimscope-eval-") as tmp:
        db = open_db(db_path or Path(tmp) / "eval.db")
        t0 = time.perf_counter()
        embedder = embedder_factory()
        load_s = time.perf_counter() - t0
        report = add_source(
            db, source, docs, fmt=fmt, path=str(corpus_path) if corpus_path else None, embedder=embedder,
            splitter=splitter_factory(), progress=progress,
        )
        info = sq.get_source(db, source)
        assert info is not None
        doc_of = dict(db.execute(
            "SELECT p.id, d.ext_id FROM passages p JOIN documents d ON d.id = p.document_id WHERE p.source_id = ?",
            [info.id]).fetchall())
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
        starts = {d.ext_id: [s for s, _ in (d.sentences or [(0, len(d.text))])] for d in docs}
        from models.nlp import SpacyClaimSubject

        yield Bench(db, embedder, BM25Retriever(db, [info]), dense, doc_of, report, len(docs), info.n_passages,
                    load_s, build_s, {"words": info.chunk_words, "overlap": info.chunk_overlap}, expanders, rrf_k,
                    fusion or load_fusion(), starts, load_sentence_score(), TitleIndex(db, [info]), SpacyClaimSubject())


@contextmanager
def scifact_bench(corpus_path: Path, embedder_factory: Callable[[], Embedder], splitter_factory: Callable,
                  **kwargs) -> Iterator[Bench]:
    """The SciFact corpus as a :class:`Bench` (``eval leakage`` shares it)."""
    docs = load_documents(corpus_path, "scifact")
    with corpus_bench(docs, "scifact", corpus_path, embedder_factory, splitter_factory, **kwargs) as bench:
        yield bench


def ir_metrics(rankings: list[list[str]], claims, ks: list[int]) -> dict[str, float]:
    """Mean recall@k and ndcg@k (k in ``ks`` plus 10 for ndcg) over the claims."""
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall@{k}"] = _mean(recall_at_k(r, c.gold_docs, k) for r, c in zip(rankings, claims, strict=True))
    for k in sorted({*ks, 10}):
        out[f"ndcg@{k}"] = _mean(ndcg_at_k(r, c.gold_docs, k) for r, c in zip(rankings, claims, strict=True))
    return out


def sentence_recall(ranked: list[SentenceKey], gold_sets: tuple[frozenset[SentenceKey], ...], k: int) -> float:
    """Best coverage, over the claim's alternative gold sentence sets, of one set by the top
    ``k`` sentences (one set: the fraction of its sentences found)."""
    top = set(ranked[:k])
    return max((len(g & top) / len(g) for g in gold_sets if g), default=0.0)


# modes built on hybrid-sentence's passage ranking share its evidence-sentence weights
SENTENCE_WEIGHTS_MODE = {"fusion": "hybrid-sentence", "rerank": "hybrid-sentence"}


def check_modes(modes: list[str]) -> None:
    for m in modes:
        if m not in EVAL_MODES:
            raise core.errors.InputError(f"unknown mode {m!r} (use {', '.join(EVAL_MODES)})")


def evaluate_retrieval(
    *,
    claims_path: Path,
    corpus_path: Path | None,
    modes: list[str],
    ks: list[int],
    index_kinds: list[str],
    embedder_factory: Callable[[], Embedder],
    splitter_factory: Callable,
    dataset: str = "scifact",
    db_path: Path | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    rrf_k: int = 60,
    llm_factory: Callable[[], Any] | None = None,
    hyde_prompt: str = "scientific",
    params: ExpansionParams | None = None,
    fusion: FusionParams | None = None,
    sentence_fusion: FusionParams | None = None,
    sentences: bool = True,
    sentence_head: bool = True,
    nli_factory: Callable[[], Any] | None = None,
    rerank_top: int = RERANK_TOP,
) -> dict:
    check_modes(modes)
    data = load_retrieval_set(dataset, claims_path, corpus_path)
    claims = data.claims[:limit] if limit else data.claims
    fusion = fusion or load_fusion()
    # each mode's own evidence-sentence weights (fusion.json ``sentences_by_mode``, else the shared
    # ``sentences``); ``sentence_fusion`` overrides them for every mode
    sentence_fusions = {m: sentence_fusion or load_sentence_fusion(SENTENCE_WEIGHTS_MODE.get(m, m)) for m in modes}
    # the abstracts' evidence-sentence head (core/retrieve/sentence_head.py) of a mode that ships one; it
    # reads the shipped fused score, so weights given for the run switch it off
    heads = {m: load_sentence_head(m) if sentence_head and sentence_fusion is None else None for m in modes}
    sentence_fusion = sentence_fusion or load_sentence_fusion("hybrid")
    rerank_fusion = load_fusion(key="rerank")
    nli = None
    if "rerank" in modes:
        if nli_factory is None:
            raise core.errors.InputError("mode rerank needs the NLI cross-encoder")
        nli = nli_factory()
    t_wall = time.perf_counter()
    methods = tuple(m for m in modes if m in METHODS)
    needs_dense = any(m != "bm25" for m in modes) or sentences
    with corpus_bench(
        data.documents, data.fmt, corpus_path or claims_path, embedder_factory, splitter_factory,
        index_kinds=index_kinds if needs_dense else [], db_path=db_path,
        source=SOURCE if dataset == "scifact" else f"eval-{dataset}", progress=progress, llm_factory=llm_factory,
        methods=methods, hyde_prompt=hyde_prompt, params=params, rrf_k=rrf_k, fusion=fusion,
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
            latencies, gen_s, per_claim, sent_s, rerank_s, total_s = [], [], [], [], [], []
            sent_recall: dict[int, list[float]] = {5: [], 10: []}
            for c in claims:
                ranked, seconds, gen = bench.passage_ranking(mode, c.claim, kind)
                per_claim.append(bench.docs(ranked))
                latencies.append(seconds)
                if gen is not None:
                    gen_s.append(gen)
                if sentences:
                    cands, rankings, s_secs = bench.sentence_candidates(c.claim, ranked)
                    t0 = time.perf_counter()
                    ordered = apply(rankings, cands, sentence_fusions[mode]) if cands else []
                    if heads[mode] is not None and ordered:
                        ordered = rerank_by_head(heads[mode], c.claim, cands, rankings, ordered,
                                                 lambda ids: sq.document_layouts(bench.db, ids))
                    if mode == "rerank" and ordered:
                        t1 = time.perf_counter()
                        top = ordered[:rerank_top]
                        dec = decisiveness(nli, c.claim, [x.text for x in top])
                        pos = {id(x): i for i, x in enumerate(ordered)}
                        order = rerank([(pos[id(x)], x.score) for x in ordered], dec, rerank_fusion)
                        ordered = [ordered[i] for i, _ in order]
                        rerank_s.append(time.perf_counter() - t1)
                    keys = [bench.sentence_key(x) for x in ordered]
                    sent_s.append(s_secs + time.perf_counter() - t0)
                    total_s.append(seconds + sent_s[-1])  # passages, sentences (and re-ranking): one claim
                    for k in sent_recall:
                        sent_recall[k].append(sentence_recall(dedupe(keys), c.gold_sentence_sets, k))
                if progress:
                    progress(name, 1, len(claims))
            metrics = ir_metrics(per_claim, claims, ks)
            metrics["latency_ms_median"] = 1000 * percentile(latencies, 50)
            metrics["latency_ms_p95"] = 1000 * percentile(latencies, 95)
            if sentences:
                for k, vals in sent_recall.items():
                    metrics[f"sentence_recall@{k}"] = _mean(vals)
                metrics["sentence_ms_p95"] = 1000 * percentile(sent_s, 95)
                metrics["total_ms_median"] = 1000 * percentile(total_s, 50)
                metrics["total_ms_p95"] = 1000 * percentile(total_s, 95)
            if rerank_s:  # the cross-encoder's own cost, and what it gains over the ranking it re-ranks
                metrics["rerank_top"] = rerank_top
                metrics["rerank_ms_median"] = 1000 * percentile(rerank_s, 50)
                metrics["rerank_ms_p95"] = 1000 * percentile(rerank_s, 95)
                if "hybrid-sentence" in systems and sentences:
                    for k in (5, 10):
                        metrics[f"sentence_recall@{k}_gain"] = (metrics[f"sentence_recall@{k}"]
                                                                 - systems["hybrid-sentence"][f"sentence_recall@{k}"])
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
            "dataset": dataset,
            "path": str(claims_path),
            "corpus": str(corpus_path) if corpus_path else None,
            "n": len(claims),
            "level": "document" + (" and sentence" if sentences else ""),
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
                         "fusion": params_json(fusion), "sentence_fusion": params_json(sentence_fusion),
                         "sentence_fusion_by_mode": {m: params_json(p) for m, p in sentence_fusions.items()
                                                     if p != sentence_fusion},
                         "passage_sentences": ({**params_json(bench.sentence_score), "pool": SENTENCE_SCORE_POOL}
                                               if bench.sentence_score else None),
                         "sentence_head": {m: {"weights": h.weights, "max_doc_words": h.max_doc_words, "kind": h.kind}
                                           for m, h in heads.items() if h is not None},
                         "sentence_pool": SENTENCE_POOL, "rerank": {**params_json(rerank_fusion), "top": rerank_top},
                         "expansion": {m: {k: v for k, v in e.config().items() if k != "model"}
                                       for m, e in bench.expanders.items()}},
            "timing": {"wall_s": time.perf_counter() - t_wall, "load_s": bench.load_s,
                       "load_average_end": list(os.getloadavg())},
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
