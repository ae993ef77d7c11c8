"""Sentence boundaries for indexing (issue 18, "Indexing"): the parser (what indexing used) vs
the rule-based sentencizer (``SpacySentenceSplitter(pipe="sentencizer")``, what it uses now) vs
the model's disabled ``senter``, on wiki-vital (a seeded sample), the wiki-vital fixture, and
SciFact abstracts against the corpus's own sentence boundaries. Reports words/s, boundaries kept /
lost / added against the parser, F1 against SciFact's sentences, and how many of the parser's
passages (core/ingest/chunk.py, 128 / 32 words) another splitter does not reproduce.

    PYTHONPATH=. python benchmarks/splitter_boundaries.py [--wiki 2000] [--scifact 500] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"


class _Senter:
    """The model's own sentence recogniser (shipped disabled), everything else excluded."""

    pipe = "senter"

    def __init__(self) -> None:
        import spacy

        from models.registry import EMBEDDED_SPACY

        self._nlp = spacy.load(EMBEDDED_SPACY, exclude=["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner"])
        self._nlp.enable_pipe("senter")

    def split(self, texts):
        out = []
        for doc in self._nlp.pipe(texts, batch_size=256):
            spans = []
            for s in doc.sents:
                a, b = s.start_char, s.end_char
                while a < b and doc.text[a].isspace():
                    a += 1
                while b > a and doc.text[b - 1].isspace():
                    b -= 1
                if b > a:
                    spans.append((a, b))
            out.append(spans)
        return out


def _inner(spans):
    return {s for s, _ in spans[1:]}


def compare(ref, got) -> dict:
    kept = sum(len(_inner(r) & _inner(g)) for r, g in zip(ref, got, strict=True))
    lost = sum(len(_inner(r) - _inner(g)) for r, g in zip(ref, got, strict=True))
    added = sum(len(_inner(g) - _inner(r)) for r, g in zip(ref, got, strict=True))
    p, r = kept / max(1, kept + added), kept / max(1, kept + lost)
    return {"reference": kept + lost, "kept": kept, "lost": lost, "added": added,
            "precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / max(1e-9, p + r), 4)}


def passages_not_kept(texts, ref, got) -> dict:
    from core.ingest.chunk import chunk

    n = missing = 0
    for t, r, g in zip(texts, ref, got, strict=True):
        pr = {(p.char_start, p.char_end) for p in chunk(t, r or [(0, len(t))])}
        pg = {(p.char_start, p.char_end) for p in chunk(t, g or [(0, len(t))])}
        n, missing = n + len(pr), missing + len(pr - pg)
    return {"parser_passages": n, "not_reproduced": missing}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wiki", type=int, default=2000, help="wiki-vital documents sampled (seed 1); 0 = all")
    ap.add_argument("--scifact", type=int, default=500, help="SciFact abstracts sampled (seed 0)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from core.ingest.sources import load_builtin, load_documents
    from models.nlp import SpacySentenceSplitter

    wiki = load_builtin("wiki-vital")
    random.Random(1).shuffle(wiki)
    sci = load_documents(DATA / "scifact" / "corpus.jsonl", "scifact")
    random.Random(0).shuffle(sci)
    sci = sci[: args.scifact]
    corpora = {
        "wiki-vital": [d.text for d in (wiki[: args.wiki] if args.wiki else wiki)],
        "fixture wiki_vital_summaries_300": [d.text for d in load_documents(DATA / "fixtures" / "wiki_vital_summaries_300.jsonl")],
        "scifact abstracts": [d.text for d in sci],
    }
    gold = [d.sentences for d in sci]
    splitters = {"parser": SpacySentenceSplitter(), "sentencizer": SpacySentenceSplitter(pipe="sentencizer"), "senter": _Senter()}
    res: dict = {}
    for cname, texts in corpora.items():
        words = sum(len(t.split()) for t in texts)
        spans = {}
        for name, sp in splitters.items():
            t0 = time.process_time()
            spans[name] = sp.split(texts)
            cpu = time.process_time() - t0
            row = res.setdefault(cname, {"documents": len(texts), "words": words})[name] = {"cpu_s": round(cpu, 2), "words_per_cpu_s": round(words / cpu)}
            if name != "parser":
                row["vs_parser"] = compare(spans["parser"], spans[name]) | passages_not_kept(texts, spans["parser"], spans[name])
            if cname == "scifact abstracts":
                row["vs_scifact_sentences"] = compare(gold, spans[name])
    print(json.dumps(res, indent=1))
    if args.out:
        args.out.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
