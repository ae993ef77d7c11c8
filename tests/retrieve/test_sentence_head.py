"""The evidence-sentence head for abstract-length abstracts (core/retrieve/sentence_head.py): where
it acts, what it reads from the store, and that the shipped one is what the searcher applies."""

from __future__ import annotations

import json

from core.retrieve.fusion import load_sentence_fusion
from core.retrieve.sentence_head import FEATURES, SentenceHead, candidate_features, load_sentence_head, rerank
from core.retrieve.sentence_rank import apply, candidates
from store import sources as sq
from store.records import DocumentLayout, StoredPassage

ABSTRACT_TITLE = "Alterations of the gut microbiome in patients with chronic kidney disease"


def _passage(pid: int, doc: int, title: str, sentences: list[str], source: str = "papers") -> StoredPassage:
    text, spans, pos = "", [], 0
    for s in sentences:
        spans.append((pos, pos + len(s)))
        text += s + " "
        pos += len(s) + 1
    return StoredPassage(pid, doc, source, f"d{doc}", title, None, text, 0, tuple(spans))


def _ranked(passages):
    """Candidates of ``passages`` with members that put the first sentence first (cosine falls with
    the position), fused by the shipped weights."""
    cands = candidates(passages)
    n = len(cands)
    rankings = {"dense": [(i, 1.0 - i / n) for i in range(n)], "bm25": [],
                "passage": [(i, -float(c.passage_rank)) for i, c in enumerate(cands)]}
    return cands, rankings, apply(rankings, cands, load_sentence_fusion("hybrid-sentence"))


class Layouts:
    """The store's ``document_layouts`` for one-passage documents of ``words`` words."""

    def __init__(self, words: int, passage: StoredPassage) -> None:
        self.words, self.starts, self.calls = words, tuple(s for s, _ in passage.sentences), 0

    def __call__(self, ids):
        self.calls += 1
        return {i: DocumentLayout(self.words, self.starts) for i in ids}


def _ids(ranked):
    return [(c.passage.id, c.index) for c in ranked]


def test_the_head_acts_only_on_abstract_length_abstracts():
    last_first = SentenceHead({"relpos": 1.0}, max_doc_words=500)  # a head that prefers late sentences
    sents = ["First finding.", "Second finding.", "Third finding.", "Conclusion of the study."]
    abstract = _passage(1, 1, ABSTRACT_TITLE, sents)
    cands, rankings, fused = _ranked([abstract])
    assert _ids(fused)[0] == (1, 0)
    short = Layouts(200, abstract)
    out = rerank(last_first, "a claim about the study", cands, rankings, fused, short)
    assert _ids(out) == [(1, 3), (1, 2), (1, 1), (1, 0)]
    assert [c.ranks["head"] for c in out] == [1, 2, 3, 4] and short.calls == 1
    # a page longer than an abstract keeps the fused order
    cands, rankings, fused = _ranked([abstract])
    assert _ids(rerank(last_first, "a claim", cands, rankings, fused, Layouts(501, abstract))) == _ids(fused)
    # an encyclopedia (titles that name a subject) and the user's own documents are never read
    for title, source in (("Marie Curie", "wiki"), (ABSTRACT_TITLE, "_against")):
        other = _passage(1, 1, title, sents, source)
        cands, rankings, fused = _ranked([other])
        untouched = Layouts(200, other)
        assert _ids(rerank(last_first, "a claim", cands, rankings, fused, untouched)) == _ids(fused)
        assert untouched.calls == 0


def test_features_place_a_sentence_in_its_whole_document():
    texts = ["Background sentence here.", "Result: the drug reduced mortality.", "Other paper."]
    members = {"dense": [(1, 0.8), (0, 0.5), (2, 0.2)], "bm25": [(1, 4.0), (2, 2.0)]}
    f = candidate_features("the drug reduced mortality", texts, ["a", "a", "b"], [(3, 8), (7, 8), (0, 1)],
                           [1, 1, 2], members, {0: 0.4, 1: 0.9, 2: 0.1})
    assert set(f[0]) == set(FEATURES)
    assert f[1]["relpos"] == 1.0 and f[1]["last"] == 1.0 and f[0]["relpos"] == 3 / 7
    assert f[2]["first"] == f[2]["last"] == 1.0  # a one-sentence document
    assert f[1]["bm25"] == 1.0 and f[2]["bm25"] == 0.5 and f[0]["bm25"] == 0.0
    assert f[1]["doc_best"] == 1.0 and f[0]["doc_best"] == 0.0 and f[2]["doc_best"] == 1.0
    assert abs(f[0]["doc_gap"] - 0.3) < 1e-12 and abs(f[0]["dense_gap"] + 0.3) < 1e-12
    assert f[1]["cover"] == 1.0 and f[2]["inv_prank"] == 0.5


def test_document_layouts_are_the_documents_words_and_sentences(mini_db):
    rows = mini_db.execute("SELECT id, text FROM documents LIMIT 5").fetchall()
    layouts = sq.document_layouts(mini_db, [r[0] for r in rows])
    for doc, text in rows:
        spans = [tuple(s) for p in mini_db.execute("SELECT sentences FROM passages WHERE document_id = ?", [doc])
                 for s in json.loads(p[0])]
        assert layouts[doc].words == len(text.split()) > 20
        assert layouts[doc].sentence_starts == tuple(sorted({s for s, _ in spans}))
        assert len(layouts[doc].sentence_starts) >= 3


def test_the_shipped_head_is_gated_to_abstracts():
    head = load_sentence_head("hybrid-sentence")
    assert head is not None and head.kind == "abstract" and head.max_doc_words == 500
    assert set(head.weights) <= set(FEATURES) and any(head.weights.values())
    assert load_sentence_head("dense") is None  # measured for the default mode only


def test_eval_retrieval_scores_the_head_and_can_leave_it_out(monkeypatch, tmp_path, embedder, splitter):
    """``eval retrieval`` ranks hybrid-sentence's evidence sentences as the searcher does (fused, then
    the head over abstracts) and records the head in its manifest; ``--no-sentence-head`` scores
    the fused order alone, and other modes never get the head."""
    import core.evaluate.retrieval as er
    from tests.conftest import FIXTURES

    calls: list[str] = []
    real = er.rerank_by_head
    monkeypatch.setattr(er, "rerank_by_head", lambda head, claim, *a: calls.append(claim) or real(head, claim, *a))
    reports = {}
    for on in (True, False):
        reports[on] = er.evaluate_retrieval(
            claims_path=FIXTURES / "scifact_mini_claims.jsonl", corpus_path=FIXTURES / "scifact_mini_corpus.jsonl",
            modes=["hybrid-sentence", "dense"], ks=[5], index_kinds=["flat"], embedder_factory=lambda: embedder,
            splitter_factory=lambda: splitter, db_path=tmp_path / f"e{on}.db", limit=4, sentence_head=on)
        assert len(calls) == (4 if on else 0)
        calls.clear()
    assert set(reports[True]["manifest"]["sentence_head"]) == {"hybrid-sentence"}
    assert reports[False]["manifest"]["sentence_head"] == {}
    for k in ("recall@5", "sentence_recall@5", "sentence_recall@10"):
        assert reports[True]["systems"]["dense"][k] == reports[False]["systems"]["dense"][k]
