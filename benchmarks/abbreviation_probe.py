"""Corpus-defined abbreviations expanded in the retrieval query: measured against a rule written
first (issue 21, session 44: /work/notes/s44/rule_abbreviations.md).

Why: several of SciFact's retrieval misses name a concept only by its abbreviation ("CR" for
caloric restriction), which the abstract that answers the claim spells out once ("caloric
restriction (CR)") and then abbreviates. BM25 matches "CR" only where the abstract repeats it,
and the embedder has no meaning for "CR". The corpus defines its own abbreviations, so no
outside resource is needed: Schwartz & Hearst's algorithm (A simple algorithm for identifying
abbreviation definitions in biomedical text, PSB 2003) finds "long form (SF)" pairs in the
passages; the most frequent long form of each short form is its expansion, and a claim token
equal to a short form is rewritten "long form (SF)" in the query. The verifier still reads the
claim as written; only retrieval sees the rewrite.

    PYTHONPATH=. python benchmarks/abbreviation_probe.py --dataset scifact \\
        --claims ../shared/data/scifact/claims_train.jsonl --corpus ../shared/data/scifact/corpus.jsonl \\
        --db DB --json benchmarks/results/abbreviation_probe_scifact_train_s44.json

Nothing here changes what ships: the claims are rewritten inside this process only.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# the same three systems, and the same per-claim pairing, as the Tantivy probe of session 43
from bm25_engine_probe import MODES, emit, pair, probe_parser, recall_per_claim, summary  # noqa: E402

# "long form (SF)": the parenthesised text, and the words before it in the same clause
_PAREN = re.compile(r"\(([^()]{1,40})\)")
_CLAUSE_BREAK = re.compile(r"[.;:!?\[\]()]")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9α-ωΑ-Ω-]*[A-Za-z0-9α-ωΑ-Ω]|[A-Za-z0-9]")


def valid_short_form(sf: str) -> bool:
    """Schwartz & Hearst §2.1: 2 to 10 characters, at most two words, at least one letter, the
    first character a letter or digit. Added here: at least one capital letter (a lower-case word
    in parentheses is almost always a gloss, not an abbreviation)."""
    return (2 <= len(sf) <= 10 and len(sf.split()) <= 2 and sf[0].isalnum()
            and any(c.isalpha() for c in sf) and any(c.isupper() for c in sf))


def best_long_form(sf: str, candidate: str) -> str | None:
    """Schwartz & Hearst's findBestLongForm: match the short form's characters right to left
    against the candidate, the first one at the start of a word; the shortest long form that
    matches, else None."""
    s, i = len(sf) - 1, len(candidate) - 1
    while s >= 0:
        ch = sf[s].lower()
        if not ch.isalnum():
            s -= 1
            continue
        while i >= 0 and (candidate[i].lower() != ch or (s == 0 and i > 0 and candidate[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
        s -= 1
    start = candidate.rfind(" ", 0, i + 1) + 1
    lf = candidate[start:].strip()
    return lf if len(lf) > len(sf) and sf.lower() not in lf.lower().split() else None


def definitions(text: str) -> Iterable[tuple[str, str]]:
    """(short form, long form) pairs defined in ``text`` by "long form (SF)"."""
    for m in _PAREN.finditer(text):
        sf = m.group(1).strip()
        sf = re.split(r"[;,] ", sf)[0].strip()  # "(SF, see ...)" / "(SF; ...)"
        if not valid_short_form(sf):
            continue
        before = text[: m.start()].rstrip()
        breaks = list(_CLAUSE_BREAK.finditer(before))
        clause = before[breaks[-1].end():] if breaks else before
        words = clause.split()
        limit = min(len(sf) + 5, 2 * len(sf))  # §2.2: at most min(|A| + 5, |A| * 2) words
        lf = best_long_form(sf, " ".join(words[-limit:]))
        if lf is not None and len(lf.split()) <= limit:
            yield sf, lf


@dataclass(frozen=True)
class Abbreviations:
    """Short form → its most frequent long form in a corpus (lower-cased)."""

    expansions: dict[str, str]

    @classmethod
    def mine(cls, texts: Iterable[str], min_count: int = 1, min_share: float = 0.5) -> Abbreviations:
        """Each short form's most frequent long form, kept when defined ``min_count`` times or more
        and holding at least ``min_share`` of that short form's definitions (an ambiguous short form
        — "CR": complete remission, caloric restriction — is not expanded)."""
        counts: dict[str, Counter] = defaultdict(Counter)
        for text in texts:
            for sf, lf in definitions(text):
                counts[sf][lf.lower()] += 1
        out = {}
        for sf, c in counts.items():
            lf, n = c.most_common(1)[0]
            if n >= min_count and n / sum(c.values()) >= min_share:
                out[sf] = lf
        return cls(out)

    def expand(self, query: str) -> str:
        """``query`` with each token that is a known short form rewritten "long form (SF)", unless
        the query already holds the long form; the query unchanged when nothing applies."""
        low = query.lower()
        out, pos = [], 0
        for m in _TOKEN.finditer(query):
            tok = m.group(0)
            sf = tok if tok in self.expansions else (tok[:-1] if tok.endswith("s") and tok[:-1] in self.expansions else None)
            if sf is None or self.expansions[sf] in low or query[: m.start()].rstrip().endswith("("):
                continue  # the query spells it out already, or defines it itself: "long form (SF)"
            out.append(query[pos : m.start()])
            out.append(f"{self.expansions[sf]} ({tok})")
            pos = m.end()
        out.append(query[pos:])
        return "".join(out)


def run(args: argparse.Namespace, expand: bool) -> tuple[dict, dict[str, list[float]], dict]:
    """One ``evaluate_retrieval``, the claims as written or with their abbreviations expanded, and
    each system's per-claim document recall@5 (``info["queries"]``: the claims as retrieval saw them)."""
    import core.evaluate.retrieval as er

    info: dict = {}
    original_load = er.load_retrieval_set

    @contextlib.contextmanager
    def expanded():
        def load(dataset, claims_path, corpus_path=None):
            data = original_load(dataset, claims_path, corpus_path)
            abbr = Abbreviations.mine((d.text for d in data.documents), args.min_count, args.min_share)
            claims = [replace(c, claim=abbr.expand(c.claim)) for c in data.claims]
            changed = [(a.claim, b.claim) for a, b in zip(data.claims, claims, strict=True) if a.claim != b.claim]
            info.update(short_forms=len(abbr.expansions), claims_rewritten=len(changed), examples=changed[:40])
            return replace(data, claims=claims)

        er.load_retrieval_set = load
        try:
            yield
        finally:
            er.load_retrieval_set = original_load

    seen: list = []
    report, per_claim = recall_per_claim(args, expanded() if expand else None, seen)
    info["queries"] = [c.claim for c in seen]
    return report, per_claim, info


def main(argv: list[str] | None = None) -> int:
    ap = probe_parser(__doc__.splitlines()[0])
    ap.add_argument("--min-count", type=int, default=1)
    ap.add_argument("--min-share", type=float, default=0.5)
    args = ap.parse_args(argv)
    reports, claims = {}, {}
    queries = {}
    for arm, expand in (("as_written", False), ("expanded", True)):
        reports[arm], claims[arm], info = run(args, expand)
        queries[arm] = info.pop("queries")
    table = summary(reports)
    paired = {m: pair(claims["as_written"][m], claims["expanded"][m]) for m in MODES}
    # the claims whose default-mode recall@5 moved, as written and as rewritten
    moved = [{"as_written": q, "expanded": x, "recall@5": [a, b]}
             for q, x, a, b in zip(queries["as_written"], queries["expanded"], claims["as_written"][MODES[-1]],
                                   claims["expanded"][MODES[-1]], strict=True) if a != b]
    out = {"dataset": args.dataset, "claims": str(args.claims), "n": reports["as_written"]["n"], "modes": MODES,
           "min_count": args.min_count, "min_share": args.min_share, "expansion": info, "table": table,
           "paired_expanded_vs_as_written": paired, f"moved_{MODES[-1]}": moved, "reports": reports}
    return emit(args, out, {"table": table, "paired": paired,
                            "expansion": {k: v for k, v in info.items() if k != "examples"}})


if __name__ == "__main__":
    raise SystemExit(main())
