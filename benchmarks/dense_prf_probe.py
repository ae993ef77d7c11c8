"""Dense pseudo-relevance feedback (Rocchio) in the dense member: measured against a rule written first (issue 21).

Why: after the fusion, the subject rule and the sentence heads, the default mode's SciFact misses
are mostly semantic misses of both members (docs/benchmarks.md, sessions 43–44): the claim's
words and its MiniLM vector both miss the abstract that people cite. Pseudo-relevance feedback
moves the query toward what the first pass found: q' = normalise(q + beta * mean of the stored
vectors of the top m passages), Rocchio (1971) on dense vectors as ANCE-PRF (Yu et al. 2021)
does with m = 3, here without a trained PRF encoder. It costs one more vector search a claim.

This runs ``eval retrieval``'s own code twice on the same database and claims, once as shipped and
once with the dense member's passage search fed back, and pairs the two per claim. The sentence
ranking keeps the claim's own vector. Nothing here changes what ships: the search is patched
inside this process only.

    PYTHONPATH=. python benchmarks/dense_prf_probe.py --dataset scifact \\
        --claims ../shared/data/scifact/claims_train.jsonl --corpus ../shared/data/scifact/corpus.jsonl \\
        --db DB --json benchmarks/results/dense_prf_probe_scifact_train_s45.json
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bm25_engine_probe import MODES, emit, pair, probe_parser, recall_per_claim, summary  # noqa: E402


def rocchio(query: np.ndarray, feedback: np.ndarray, beta: float) -> np.ndarray:
    """q + beta * mean(feedback), unit length again (the index searches by inner product)."""
    q = query + beta * feedback.mean(axis=0) if len(feedback) else query.copy()
    return (q / np.linalg.norm(q)).astype(np.float32)


@contextlib.contextmanager
def dense_feedback(db_path: Path, m: int, beta: float) -> Iterator[None]:
    """Within the block, ``DenseRetriever.retrieve_vector`` searches twice: the first pass's top
    ``m`` passages' stored vectors feed the second pass's query (:func:`rocchio`)."""
    from core.retrieve.searcher import DenseRetriever
    from store import open_db
    from store import sources as sq

    vectors: dict[int, np.ndarray] = {}

    def vector_of(pid: int, model: str) -> np.ndarray | None:
        if not vectors:  # every source's stored passage vectors from the searching model, once (SciFact: 11,920 x 384)
            db = open_db(db_path)
            try:
                for s in sq.list_sources(db):
                    ids, vecs = sq.load_embeddings(db, s.id, model)
                    vectors.update(zip((int(i) for i in ids), vecs, strict=True))
            finally:
                db.conn.close()
        return vectors.get(pid)

    original = DenseRetriever.retrieve_vector

    def fed_back(self, vector: np.ndarray, k: int):
        first = original(self, vector, max(k, m))
        model = self._embedder.ref.model_id
        found = [v for v in (vector_of(pid, model) for pid, _ in first[:m]) if v is not None]
        return original(self, rocchio(vector, np.array(found), beta), k)

    DenseRetriever.retrieve_vector = fed_back
    try:
        yield
    finally:
        DenseRetriever.retrieve_vector = original


def main(argv: list[str] | None = None) -> int:
    ap = probe_parser(__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=3, help="feedback passages")
    ap.add_argument("--beta", type=float, default=0.5, help="weight of their mean vector")
    args = ap.parse_args(argv)
    reports, claims = {}, {}
    for arm, feedback in (("shipped", False), ("feedback", True)):
        reports[arm], claims[arm] = recall_per_claim(args, dense_feedback(args.db, args.m, args.beta) if feedback else None)
    table = summary(reports)
    paired = {m: pair(claims["shipped"][m], claims["feedback"][m]) for m in MODES}
    out = {"dataset": args.dataset, "claims": str(args.claims), "n": reports["shipped"]["n"], "modes": MODES,
           "m": args.m, "beta": args.beta, "table": table, "paired_feedback_vs_shipped": paired, "reports": reports}
    return emit(args, out, {"table": table, "paired": paired})


if __name__ == "__main__":
    raise SystemExit(main())
