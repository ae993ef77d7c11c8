"""BM25 with Tantivy for every source instead of SQLite FTS5 below 30,000 passages: measured
against a rule written first (issue 21).

Why: sources under ``TANTIVY_MIN_PASSAGES`` (SciFact, Climate-FEVER, WiCE, wiki-vital) are searched
with FTS5 (Porter stemmer, one set of statistics over title and text); larger ones with Tantivy
(Snowball English, per-field statistics). Issue 19's comparison read SciFact dev passage BM25 R@5
.882 (FTS5) against .897 (Tantivy), but no hybrid figure was ever taken with Tantivy as the BM25
member. This runs ``eval retrieval``'s own code twice on the same database and claims, once as
shipped and once with every source on Tantivy (the shipped fusion weights unchanged), and pairs
the two per claim.

    PYTHONPATH=. python benchmarks/bm25_engine_probe.py --dataset scifact \\
        --claims ../shared/data/scifact/claims_dev.jsonl --corpus ../shared/data/scifact/corpus.jsonl \\
        --db DB --json benchmarks/results/bm25_engine_probe_scifact_dev_s43.json

``--engines tantivy`` runs the second pass alone (session 43's refit: the candidate ``fusion.json``
was put in place for that run only; the refit itself was ``benchmarks/fit_fusion.py`` with
``BM25Retriever``'s default switched the same way).

Nothing here changes what ships: the engine is switched inside this process only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODES = ["bm25", "dense", "hybrid-sentence"]


KEYS = ["recall@5", "recall@10", "ndcg@10", "sentence_recall@5", "sentence_recall@10", "latency_ms_median",
        "latency_ms_p95"]


def recall_per_claim(args: argparse.Namespace, patch: contextlib.AbstractContextManager | None = None,
                     seen: list | None = None) -> tuple[dict, dict[str, list[float]]]:
    """One :func:`evaluate` inside ``patch`` (what the probe switches), with each system's
    per-claim document recall@5; ``seen`` receives the claims as retrieval saw them."""
    import core.evaluate.retrieval as er
    from core.evaluate.metrics import recall_at_k

    per_claim: list[list[float]] = []
    original_metrics = er.ir_metrics

    def capture(rankings, claims, ks):
        if seen is not None and not seen:
            seen.extend(claims)
        per_claim.append([recall_at_k(r, c.gold_docs, 5) for r, c in zip(rankings, claims, strict=True)])
        return original_metrics(rankings, claims, ks)

    er.ir_metrics = capture
    try:
        with patch or contextlib.nullcontext():
            report = evaluate(args)
    finally:
        er.ir_metrics = original_metrics
    return report, dict(zip(report["systems"], per_claim, strict=True))


def emit(args: argparse.Namespace, out: dict, shown: dict) -> int:
    """Print ``shown`` and write the whole report ``out`` to ``--json``; the exit status."""
    print(json.dumps(shown, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return 0


def summary(reports: dict[str, dict]) -> dict:
    """Each arm's :data:`KEYS` for each of :data:`MODES`."""
    return {arm: {m: {k: rep["systems"][m].get(k) for k in KEYS} for m in MODES} for arm, rep in reports.items()}


@contextlib.contextmanager
def every_source_on_tantivy():
    """BM25 on Tantivy for every source, whatever its size (inside the block only)."""
    from core.retrieve.searcher import BM25Retriever

    defaults = BM25Retriever.__init__.__defaults__
    BM25Retriever.__init__.__defaults__ = (0,)
    try:
        yield
    finally:
        BM25Retriever.__init__.__defaults__ = defaults


def run(args: argparse.Namespace, engine: str) -> tuple[dict, dict[str, list[float]]]:
    """One ``evaluate_retrieval`` on ``engine`` ("fts5": as shipped; "tantivy": every source),
    with each system's per-claim document recall@5."""
    return recall_per_claim(args, every_source_on_tantivy() if engine == "tantivy" else None)


def evaluate(args: argparse.Namespace) -> dict:
    """``eval retrieval``'s own code on the probe's claims and database, for :data:`MODES`, as
    shipped (whatever the caller has switched in this process aside)."""
    import core.evaluate.retrieval as er
    from core.settings import Settings
    from core.workbench import Workbench

    wb = Workbench(Settings())
    return er.evaluate_retrieval(
        claims_path=args.claims, corpus_path=args.corpus, modes=MODES, ks=[5, 10], index_kinds=["flat"],
        embedder_factory=wb.embedder, splitter_factory=wb.splitter, dataset=args.dataset, db_path=args.db,
        limit=args.limit)


def pair(before: list[float], after: list[float]) -> dict:
    """Per-claim recall@5 of two runs over the same claims: the mean change, and how many claims
    rose and fell."""
    if len(before) != len(after) or not before:
        raise ValueError("the two runs must score the same, non-empty list of claims")
    return {"delta_recall@5": sum(after) / len(after) - sum(before) / len(before),
            "claims_up": sum(y > x for x, y in zip(before, after, strict=True)),
            "claims_down": sum(y < x for x, y in zip(before, after, strict=True))}


def probe_parser(description: str) -> argparse.ArgumentParser:
    """The options :func:`evaluate` reads (the set, its claims and corpus, the database, a limit)
    and ``--json``: shared by the paired retrieval probes."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--dataset", required=True, choices=["scifact", "climate-fever", "wice"])
    ap.add_argument("--claims", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--db", type=Path, required=True, help="the evaluation database (indexed on first use)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = probe_parser(__doc__.splitlines()[0])
    ap.add_argument("--engines", default="fts5,tantivy", help="which passes to run (the pairing needs both)")
    args = ap.parse_args(argv)
    reports, claims = {}, {}
    engines = args.engines.split(",")
    if not set(engines) <= {"fts5", "tantivy"}:
        ap.error("--engines takes fts5 and/or tantivy")
    for engine in engines:
        reports[engine], claims[engine] = run(args, engine)
    table = summary(reports)
    paired = {m: pair(claims["fts5"][m], claims["tantivy"][m]) for m in MODES} if len(engines) == 2 else None
    out = {"dataset": args.dataset, "claims": str(args.claims), "n": reports[engines[0]]["n"], "modes": MODES,
           "table": table, "paired_tantivy_vs_fts5": paired, "reports": reports}
    return emit(args, out, {"table": table, "paired": paired})


if __name__ == "__main__":
    raise SystemExit(main())
