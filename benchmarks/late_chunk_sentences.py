"""Sentence vectors for free at index time? Late chunking against embedding each sentence.

``hybrid-sentence`` (the hybrid plus each passage's best sentence) finds more evidence than the
default but embeds the sentences of the top 20 passages for every claim; that query-time cost
kept it out of the default (docs/benchmarks.md). Embedding every sentence at index time would
cost a second pass over the corpus (wiki-vital: 37,102 sentences beside 10,842 passages).

Late chunking (Günther et al. 2024, "Late Chunking: Contextual Chunk Embeddings Using
Long-Context Embedding Models", §3) gets sentence vectors from the passage pass itself: the
token vectors the passage embedding already computes are mean-pooled over each sentence's
tokens instead of over the whole passage (then L2-normalised, as the embedder does). The only
extra work is the pooling. This script measures whether those vectors rank evidence as well
as embedding each sentence on its own:

1. every passage of the evaluation database is run through the embedder's ONNX session once,
   and each sentence's tokens (by the tokenizer's character offsets) are pooled;
2. ``eval retrieval`` runs twice over the same database and claims, once with each sentence
   embedded on its own (the shipped way), once with the late-chunked vectors in their place
   (claims are still embedded on their own). It reports document and rationale-sentence
   recall for ``hybrid`` and ``hybrid-sentence``.

Run (a database built by ``eval retrieval --db``, int8 embedder)::

    CLAIMSCOPE_EMBED_RUNTIME=onnx-int8 python benchmarks/late_chunk_sentences.py --dataset scifact \\
        --db DB --claims ../shared/data/scifact/claims_dev.jsonl --corpus ../shared/data/scifact/corpus.jsonl \\
        --json benchmarks/results/late_chunk_scifact.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import core.evaluate.retrieval as retrieval
from core.evaluate.report import machine

MODES = ["hybrid", "hybrid-sentence"]
KEYS = ("recall@5", "recall@10", "sentence_recall@5", "sentence_recall@10")


def late_vectors(db, embedder, batch_size: int = 32) -> tuple[dict[str, np.ndarray], dict]:
    """{sentence text: late-chunked vector} over every passage of ``db`` (first passage wins
    for a sentence repeated by overlapping passages), and counts."""
    from tokenizers import Tokenizer

    session = embedder._session
    if session is None:
        raise SystemExit("late chunking needs the embedder on ONNX Runtime (CLAIMSCOPE_EMBED_RUNTIME=onnx-int8 or onnx-fp32)")
    tok = Tokenizer.from_file(str(Path(embedder.ref.path) / "tokenizer.json"))
    tok.enable_truncation(embedder.max_seq_length)
    tok.enable_padding()
    inputs = {i.name for i in session.get_inputs()}
    rows = db.execute("SELECT text, sentences, char_start FROM passages ORDER BY id").fetchall()
    out: dict[str, np.ndarray] = {}
    stats = {"passages": len(rows), "sentences": 0, "pooled": 0, "truncated": 0}
    t0 = time.perf_counter()
    for b in range(0, len(rows), batch_size):
        batch = rows[b : b + batch_size]
        encs = tok.encode_batch([text for text, _, _ in batch])
        feed = {"input_ids": np.array([e.ids for e in encs], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64)}
        tokens = session.run(None, {k: v for k, v in feed.items() if k in inputs})[0]
        for (text, spans, start), enc, states in zip(batch, encs, tokens, strict=True):
            offsets = np.array(enc.offsets)
            real = np.array(enc.attention_mask, dtype=bool) & (offsets[:, 1] > offsets[:, 0])  # no [CLS]/[SEP]/pad
            for s, e in json.loads(spans):
                s, e = s - start, e - start  # spans are document offsets (StoredPassage.sentence_texts)
                stats["sentences"] += 1
                sentence = text[s:e]
                if sentence in out:
                    continue
                inside = real & (offsets[:, 0] >= s) & (offsets[:, 1] <= e)
                if not inside.any():
                    stats["truncated"] += 1  # past the model's max length: embedded on its own instead
                    continue
                v = states[inside].mean(axis=0)
                out[sentence] = (v / max(np.linalg.norm(v), 1e-12)).astype(np.float32)
                stats["pooled"] += 1
    stats["seconds"] = round(time.perf_counter() - t0, 1)
    return out, stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--dataset", required=True, choices=("scifact", "climate-fever", "wice"))
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--claims", required=True, type=Path)
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    from core.settings import load_settings
    from core.workbench import Workbench
    from store import open_db

    wb = Workbench(load_settings(None))
    embedder = wb.embedder()

    def run() -> dict:
        return retrieval.evaluate_retrieval(
            claims_path=args.claims, corpus_path=args.corpus, modes=MODES, ks=[5, 10], index_kinds=["flat"],
            embedder_factory=lambda: embedder, splitter_factory=wb.splitter, dataset=args.dataset,
            db_path=args.db, limit=args.limit)["systems"]

    shipped = run()
    db = open_db(args.db)
    late, stats = late_vectors(db, embedder)
    db.close()
    original = retrieval.cached_encoder

    def late_encoder(db, emb):
        fallback = original(db, emb)

        def encode(texts: list[str]) -> np.ndarray:
            missing = [t for t in texts if t not in late]
            got = dict(zip(missing, fallback(missing), strict=True)) if missing else {}
            return np.stack([late[t] if t in late else got[t] for t in texts])

        return encode

    retrieval.cached_encoder = late_encoder
    try:
        chunked = run()
    finally:
        retrieval.cached_encoder = original
    report = {
        "task": "late_chunk_sentences", "dataset": args.dataset, "embedder": embedder.ref.model_id,
        "late_chunking": stats,
        "systems": {m: {"sentences embedded alone": {k: shipped[m].get(k) for k in KEYS},
                        "late-chunked sentences": {k: chunked[m].get(k) for k in KEYS}} for m in MODES},
        "machine": machine(),
    }
    print(json.dumps(report["systems"], indent=1), json.dumps(stats))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
