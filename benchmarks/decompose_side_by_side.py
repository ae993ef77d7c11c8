"""Decompositions side by side: people (FActScore's human atomic facts), FActScore's own
InstructGPT decomposition (its ``model-atomic-facts``) and claimscope's decomposers (``rules``;
``--decomposers rules,atomic`` adds the trained one),
on sentences picked without looking at the output: answer k of the chosen topics, its sentence
k (mod its length), for the first N answers. The answer is decomposed whole, as a user runs it,
and a claim belongs to the sentence its span starts in (as in ``claimscope eval decompose``).

    python benchmarks/decompose_side_by_side.py --path ../shared/data/factscore/InstructGPT_dev.jsonl \
        --fold '!0/3' --n 5 [--decomposers rules,atomic] --json benchmarks/results/decompose_side_by_side.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.decompose import make_decomposer
from core.evaluate.decompose import FACTSCORE_REFERENCE, in_fold, load_decompose_dataset, locate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", required=True)
    ap.add_argument("--fold", default=None)
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--decomposers", default="rules", help="comma-separated registry names (rules, atomic, ...)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    from models.nlp import SpacySentenceSplitter

    # as written (FActScore's style, what `claimscope decompose` prints), beside the people's facts
    decs = {n: make_decomposer(n, SpacySentenceSplitter, standalone=False) for n in args.decomposers.split(",") if n}
    answers = [a for a in load_decompose_dataset("factscore", args.path) if in_fold(a.topic, args.fold)]
    rows = []
    for k, ans in enumerate(answers[: args.n]):
        claims = {n: [c for c in d.decompose(ans.text) if c.checkable] for n, d in decs.items()}
        j = k % len(ans.sentences)
        pos = 0
        for sent, _ in ans.sentences[:j]:
            pos = max(pos, locate(ans.text, sent, pos)[1])
        sent, gold = ans.sentences[j]
        start, end = locate(ans.text, sent, pos)
        mine = {n: [c.text for c in cs if start <= c.span[0] < end] for n, cs in claims.items()}
        rows.append({"topic": ans.topic, "sentence": sent, "people": gold,
                     "instructgpt": ans.references.get(FACTSCORE_REFERENCE, [[]] * len(ans.sentences))[j], **mine})
    for r in rows:
        print(f"### {r['topic']}\n\n> {r['sentence']}\n")
        cols = ["people", "instructgpt", *decs]
        print("| people | InstructGPT (FActScore) | " + " | ".join(decs) + " |\n|" + "---|" * len(cols))
        for i in range(max(len(r[c]) for c in cols)):
            cells = [(r[c][i] if i < len(r[c]) else "") for c in cols]
            print("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        print()
    if args.json:
        Path(args.json).write_text(json.dumps({"path": args.path, "fold": args.fold, "rows": rows}, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
