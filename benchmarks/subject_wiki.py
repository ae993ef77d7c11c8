"""The subject's own document first, measured on wiki-vital claims.

Claims: (1) the demo answer's claims about Marie Curie, the Eiffel Tower and photosynthesis;
(2) FActScore-style biography facts: for wiki-vital articles about people (the article's
second to fourth sentences start with "He" / "She"), each such sentence with the pronoun
replaced by the article title, as the rules decomposer decontextualises "She discovered
radium" into "Marie Curie discovered radium". Gold: the article itself. These claims come
from the article's own text, so they are easier than real answers; the measure is whether
the article is *first* (what decides a verdict), and whether the rule ever hurts.
Systems: plain RRF, the hybrid without the subject rule ("fusion"), the hybrid, and
``hybrid-sentence`` (the hybrid plus the best-sentence fusion, core/retrieve/sentence_score.py,
over sentence vectors stored at index time), each on its own searcher (no shared memo). Latency
is per ``search`` as the command runs it (best sentences marked), p50 and p95.

    PYTHONPATH=. python benchmarks/subject_wiki.py --db /tmp/s21-wiki.db [--n 300]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.evaluate.metrics import percentile  # noqa: E402
from core.retrieve.searcher import Searcher  # noqa: E402
from store import open_db  # noqa: E402

DEMO = [
    ("Marie Curie was a Polish-born physicist and chemist.", "Marie Curie"),
    ("Marie Curie discovered polonium.", "Marie Curie"),
    ("Marie Curie discovered radium.", "Marie Curie"),
    ("Marie Curie was the first woman to win a Nobel Prize.", "Marie Curie"),
    ("The Eiffel Tower is located in Berlin.", "Eiffel Tower"),
    ("Photosynthesis converts light energy into chemical energy.", "Photosynthesis"),
]
_PRONOUN = re.compile(r"^(He|She) ")


def bio_claims(db, n: int, seed: int = 0) -> list[tuple[str, str]]:
    rows = db.execute(
        "SELECT d.title, d.text, d.meta FROM documents d JOIN sources s ON s.id = d.source_id WHERE s.name = 'wiki-vital'"
    ).fetchall()
    out = []
    for title, text, _ in rows:
        sents = re.split(r"(?<=[.!?])\s+", text)
        for s in sents[1:4]:
            if _PRONOUN.match(s) and len(s.split()) >= 6:
                out.append((_PRONOUN.sub(title + " ", s, count=1), title))
                break
    random.Random(seed).shuffle(out)
    return out[:n]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "retrieval_wiki_subject.json")
    args = ap.parse_args()
    from models.embed import load_embedder

    db = open_db(args.db)
    emb = load_embedder()
    sets = {"demo": DEMO, "bios": bio_claims(db, args.n)}
    report: dict = {"task": "retrieval_subject", "source": "wiki-vital", "sets": {}}
    for name, claims in sets.items():
        systems = {}
        for sys_name, searcher, mode in [("rrf", Searcher(db, lambda: emb, subject=False), "rrf"),
                                         ("fusion", Searcher(db, lambda: emb, subject=False), "hybrid"),
                                         ("hybrid", Searcher(db, lambda: emb), "hybrid"),
                                         ("hybrid-sentence", Searcher(db, lambda: emb), "hybrid-sentence")]:
            searcher.search("Warm-up query about Paris.", k=5, mode=mode, sources=["wiki-vital"])  # load models
            first, at5, lat, found = 0, 0, [], 0
            examples = []
            for claim, title in claims:
                t0 = time.perf_counter()
                hits = searcher.search(claim, k=5, mode=mode, sources=["wiki-vital"])
                lat.append(time.perf_counter() - t0)
                titles = [h.passage.title for h in hits]
                first += bool(titles and titles[0] == title)
                at5 += title in titles
                if sys_name.startswith("hybrid"):
                    found += searcher.last_subject is not None  # the restricted rule acted
                if name == "demo":
                    examples.append({"claim": claim, "top3": titles[:3]})
            systems[sys_name] = {"own_doc_at_1": first / len(claims), "own_doc_recall@5": at5 / len(claims),
                                 "latency_ms_p50": 1000 * percentile(lat, 50), "latency_ms_p95": 1000 * percentile(lat, 95)}
            if sys_name.startswith("hybrid"):
                systems[sys_name]["subject_rule_acted"] = found / len(claims)
            if examples:
                systems[sys_name]["examples"] = examples
        report["sets"][name] = {"n": len(claims), "systems": systems}
        print(name, json.dumps(systems, indent=1), file=sys.stderr)
    args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
