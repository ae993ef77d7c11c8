"""Markdown tables (document and sentence level) from `eval retrieval` JSON reports, for
docs/benchmarks.md: `python benchmarks/retrieval_tables.py benchmarks/results/retrieval_*.json`."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def table(path: str) -> str:
    r = json.loads(Path(path).read_text())
    systems = r["systems"]
    lines = [f"**{r['dataset']}** ({r['n']} claims; `{path.split('/')[-1]}`)", "",
             "| mode | R@5 | R@10 | nDCG@10 | sentence R@5 | sentence R@10 | retrieval ms p50 / p95 | sentences ms p95 |",
             "|---|---|---|---|---|---|---|---|"]
    members = [systems[m]["recall@5"] for m in ("bm25", "dense") if m in systems]
    best = max(members) if members else None
    for name, m in systems.items():
        r5 = f"{m['recall@5']:.3f}"
        if best is not None and name in ("hybrid", "fusion", "fitted", "rrf", "rerank"):
            r5 += f" ({m['recall@5'] - best:+.3f})"
        lines.append(
            f"| {name} | {r5} | {m.get('recall@10', 0):.3f} | {m.get('ndcg@10', 0):.3f} | "
            f"{m.get('sentence_recall@5', float('nan')):.3f} | {m.get('sentence_recall@10', float('nan')):.3f} | "
            f"{m['latency_ms_median']:.0f} / {m['latency_ms_p95']:.0f} | {m.get('sentence_ms_p95', float('nan')):.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print("\n\n".join(table(p) for p in sys.argv[1:]))
