"""Fitted fusion, evidence-sentence ranking and the subject's own document first, on real
data (SciFact mini corpus, wiki-vital fixture summaries) with the embedded models."""

from __future__ import annotations

import json

import pytest

from core.evaluate.metrics import recall_at_k
from core.evaluate.retrieval_sets import load_retrieval_set
from core.retrieve.fusion import (
    PLAIN_RRF,
    FitExample,
    FusionParams,
    fit_fusion,
    fuse,
    fusion_grid,
    load_fusion,
    load_sentence_fusion,
    macro_average,
    minmax_fusion,
    weighted_rrf,
)
from core.retrieve.searcher import DEFAULT_MODE, Searcher, reciprocal_rank_fusion
from core.retrieve.sentence_rank import bm25_scores, rank_sentences
from core.retrieve.sentence_score import SENTENCE_SCORE_POOL, best_sentence_ranking, with_best_sentence
from core.retrieve.sentence_score import load_params as load_sentence_score
from core.retrieve.subject import Subject, TitleIndex, acts, normalise_title, subject_candidates, subject_first
from store import sources as sq
from tests.conftest import FIXTURES, indexed_fixture


def test_weighted_rrf_arithmetic():
    rankings = {"bm25": [(1, 9.0), (2, 5.0)], "dense": [(2, 0.9), (3, 0.8)]}
    fused = dict(weighted_rrf(rankings, {"bm25": 0.25, "dense": 0.75}, k=10))
    assert fused[1] == pytest.approx(0.25 / 11)
    assert fused[2] == pytest.approx(0.25 / 12 + 0.75 / 11)
    assert fused[3] == pytest.approx(0.75 / 12)
    # equal weights and k = 60 are exactly plain RRF
    assert weighted_rrf(rankings, {}, 60) == reciprocal_rank_fusion(rankings, 60)
    # a member with weight 0 cannot change the order of the other
    only_dense = [pid for pid, _ in weighted_rrf(rankings, {"bm25": 0.0, "dense": 1.0}, 60)]
    assert only_dense[:2] == [2, 3]


def test_minmax_fusion_arithmetic():
    rankings = {"bm25": [(1, 12.0), (2, 6.0), (4, 2.0)], "dense": [(2, 0.9), (3, 0.5)]}
    fused = dict(minmax_fusion(rankings, {"bm25": 0.4, "dense": 0.6}))
    assert fused[1] == pytest.approx(0.4 * 1.0)
    assert fused[2] == pytest.approx(0.4 * 0.4 + 0.6 * 1.0)
    assert fused[3] == pytest.approx(0.0)  # the lowest of its only ranking
    assert fused[4] == pytest.approx(0.0)
    assert [pid for pid, _ in fuse(rankings, FusionParams("minmax", 0, {"bm25": 0.4, "dense": 0.6}))][:2] == [2, 1]
    with pytest.raises(ValueError, match="unknown fusion method"):
        fuse(rankings, FusionParams("borda", 0, {}))


def test_grid_holds_each_member_alone_and_fit_picks_the_best():
    grid = fusion_grid(["a", "b"], rrf_ks=(60,), steps=4)
    assert {tuple(sorted(p.weights.items())) for p in grid} >= {(("a", 1.0), ("b", 0.0)), (("a", 0.0), ("b", 1.0))}
    three = fusion_grid(["a", "b", "c"], rrf_ks=(60,), steps=10)
    assert all(abs(sum(p.weights.values()) - 1) < 1e-9 for p in three) and len(three) == 66 * 2
    # item 7 is relevant; member "b" ranks it first, "a" last: the fit must lean on "b"
    ex = FitExample({"a": [(1, 3.0), (2, 2.0), (7, 1.0)], "b": [(7, 0.9), (1, 0.5)]},
                    lambda r: 1.0 if r[0][0] == 7 else 0.0)
    best, score = fit_fusion([ex], grid, "toy")
    assert score == 1.0 and best.weights["b"] > best.weights["a"] and best.fitted_on == "toy"


def test_macro_average_gives_each_dataset_one_vote():
    # member "a" finds item 7 in the three claims of one set, member "b" in the one claim of the
    # other: pooled, "a" alone wins 3 to 1; averaged over the sets, both score .5 and a fusion
    # that finds 7 in all four claims scores 1 either way
    big = [FitExample({"a": [(7, 1.0), (1, 0.5)], "b": [(1, 1.0), (2, 0.5), (7, 0.1)]},
                      lambda r: 1.0 if r[0][0] == 7 else 0.0) for _ in range(3)]
    small = [FitExample({"a": [(1, 1.0), (2, 0.5), (7, 0.1)], "b": [(7, 1.0), (1, 0.5)]},
                        lambda r: 1.0 if r[0][0] == 7 else 0.0)]
    a_alone, b_alone = FusionParams("rrf", 60, {"a": 1.0, "b": 0.0}), FusionParams("rrf", 60, {"a": 0.0, "b": 1.0})

    def mean(examples, params):
        return sum(ex.score(fuse(ex.rankings, params)) for ex in examples) / len(examples)

    assert mean(big + small, a_alone) == pytest.approx(0.75) and mean(big + small, b_alone) == pytest.approx(0.25)
    macro = macro_average([big, small, []])
    assert len(macro) == 4
    assert mean(macro, a_alone) == pytest.approx(0.5) and mean(macro, b_alone) == pytest.approx(0.5)
    _, score = fit_fusion(macro, [a_alone, b_alone], "two sets")
    assert score == pytest.approx(0.5)


def test_shipped_fusion_is_fitted_on_training_claims_or_plain_rrf(tmp_path):
    """core/retrieve/data/fusion.json, when shipped, was fitted on SciFact *train* (never dev) with
    both members; without it the hybrid is plain RRF (k = 60) and sentences fuse equally."""
    from importlib import resources

    shipped = resources.files("core.retrieve").joinpath("data", "fusion.json")
    params, sentences = load_fusion(), load_fusion(key="sentences")
    if shipped.is_file():
        assert params.method in ("rrf", "minmax") and params.fitted_on.startswith("SciFact claims_train")
        assert "claims_dev" not in params.fitted_on and "claims_dev" not in sentences.fitted_on
        assert set(params.weights) == {"bm25", "dense"}
        assert set(sentences.weights) == {"dense", "bm25", "passage"}
        best = load_sentence_score()
        assert best is not None and set(best.weights) == {"fused", "sentence"}
        assert best.fitted_on.startswith("SciFact claims_train") and "claims_dev" not in best.fitted_on
    else:
        assert params == sentences == PLAIN_RRF
    missing = tmp_path / "none.json"
    assert load_fusion(missing) == PLAIN_RRF
    (tmp_path / "f.json").write_text(json.dumps({"passages": {"method": "rrf", "k": 5, "weights": {"dense": 1.0}}}))
    assert load_fusion(tmp_path / "f.json") == FusionParams("rrf", 5, {"dense": 1.0}, "")


def test_sentence_weights_per_mode_fall_back_to_the_shared_block(tmp_path):
    """A mode with its own block under ``sentences_by_mode`` gets it; every other mode gets the
    shared ``sentences`` block; no file or no block → plain RRF."""
    shared = {"method": "minmax", "k": 0, "weights": {"dense": 0.2, "bm25": 0.2, "passage": 0.6}, "fitted_on": "a"}
    own = {"method": "rrf", "k": 5, "weights": {"dense": 0.4, "bm25": 0.2, "passage": 0.4}, "fitted_on": "b"}
    f = tmp_path / "f.json"
    f.write_text(json.dumps({"sentences": shared, "sentences_by_mode": {"hybrid-sentence": own}}))
    assert load_sentence_fusion("hybrid-sentence", f) == FusionParams("rrf", 5, own["weights"], "b")
    for mode in ("hybrid", "bm25", "fusion"):
        assert load_sentence_fusion(mode, f) == FusionParams("minmax", 0, shared["weights"], "a")
    f.write_text(json.dumps({"sentences_by_mode": {"hybrid-sentence": own}}))
    assert load_sentence_fusion("hybrid", f) == PLAIN_RRF
    assert load_sentence_fusion("hybrid-sentence", f).weights == own["weights"]
    assert load_sentence_fusion("hybrid", tmp_path / "none.json") == PLAIN_RRF
    # the shipped file: every mode's block is fitted on training claims (SciFact train, and WiCE's
    # train split since session 8) with all three members, never on a dev file
    for mode in ("hybrid", "hybrid-sentence"):
        params = load_sentence_fusion(mode)
        if params is not PLAIN_RRF:
            assert set(params.weights) == {"dense", "bm25", "passage"}
            assert params.fitted_on.startswith("SciFact claims_train") and "dev" not in params.fitted_on
    assert load_sentence_fusion("hybrid") == load_fusion(key="sentences")


def test_eval_retrieval_ranks_each_modes_sentences_with_its_own_weights(tmp_path, monkeypatch, embedder, splitter):
    """`eval retrieval` fuses the evidence sentences of ``hybrid-sentence`` (and of ``fusion``,
    built on it) with that mode's block, and of ``hybrid`` with the shared one; the manifest says so."""
    import core.evaluate.retrieval as er

    shared = {"method": "minmax", "k": 0, "weights": {"dense": 1.0, "bm25": 0.0, "passage": 0.0}, "fitted_on": "s"}
    own = {"method": "rrf", "k": 1, "weights": {"dense": 0.0, "bm25": 0.0, "passage": 1.0}, "fitted_on": "o"}
    f = tmp_path / "fusion.json"
    f.write_text(json.dumps({"sentences": shared, "sentences_by_mode": {"hybrid-sentence": own}}))
    monkeypatch.setattr(er, "load_sentence_fusion", lambda mode: load_sentence_fusion(mode, f))
    used: list[FusionParams] = []
    real_apply = er.apply
    monkeypatch.setattr(er, "apply", lambda rankings, cands, params: used.append(params) or real_apply(rankings, cands, params))
    report = er.evaluate_retrieval(
        claims_path=FIXTURES / "scifact_mini_claims.jsonl", corpus_path=FIXTURES / "scifact_mini_corpus.jsonl",
        modes=["hybrid", "hybrid-sentence", "fusion"], ks=[5], index_kinds=["flat"],
        embedder_factory=lambda: embedder, splitter_factory=lambda: splitter, db_path=tmp_path / "e.db", limit=3,
    )
    assert len(used) == 9  # 3 claims × 3 modes, in mode order
    assert {p.fitted_on for p in used[:3]} == {"s"} and {p.fitted_on for p in used[3:]} == {"o"}
    manifest = report["manifest"]
    assert manifest["sentence_fusion"]["fitted_on"] == "s"
    assert {m: p["fitted_on"] for m, p in manifest["sentence_fusion_by_mode"].items()} == {"hybrid-sentence": "o", "fusion": "o"}


def test_fitted_fusion_never_below_its_best_member_on_the_mini_set(mini_db, mini_claims, embedder):
    """Fitted on the mini claims themselves, the fusion is at least as good as BM25 alone and
    dense alone there (the grid holds both), and the fit actually mixes both members' signal."""
    searcher = Searcher(mini_db, lambda: embedder)
    doc_of = dict(mini_db.execute("SELECT p.id, d.ext_id FROM passages p JOIN documents d ON d.id = p.document_id"))
    claims = [c for c in mini_claims if c.gold_docs]
    members = [{m: searcher.rank(c.claim, m, 100)[m] for m in ("bm25", "dense")} for c in claims]

    def recall5(ranked, gold):
        return recall_at_k(list(dict.fromkeys(doc_of[p] for p, _ in ranked)), gold, 5)

    def ndcg_like(ranked, gold):  # reciprocal rank of the first gold document, finer than recall@5
        docs = list(dict.fromkeys(doc_of[p] for p, _ in ranked))
        return next((1 / i for i, d in enumerate(docs, 1) if d in gold), 0.0)

    examples = [FitExample(m, lambda r, c=c: recall5(r, c.gold_docs) + ndcg_like(r, c.gold_docs))
                for m, c in zip(members, claims, strict=True)]
    best, score = fit_fusion(examples, fusion_grid(["bm25", "dense"], steps=10), "mini")
    for name in ("bm25", "dense"):
        alone = sum(ex.score(ex.rankings[name]) for ex in examples) / len(examples)
        assert score >= alone - 1e-12
    fused = [fuse(m, best) for m in members]
    assert sum(recall5(r, c.gold_docs) for r, c in zip(fused, claims, strict=True)) / len(claims) >= 0.9


def test_bm25_over_sentences():
    texts = ["Radium was discovered by Marie Curie.", "The tower is in Paris.", "Radium radium glows."]
    s = bm25_scores("Who discovered radium?", texts)
    assert s[1] == 0.0 and s[0] > 0 and s[2] > 0
    assert bm25_scores("radium", []) == []


def test_sentences_ranked_across_passages_find_scifact_rationales(mini_db, embedder):
    """On the mini claims, the fused sentence ranking puts a gold rationale sentence in the
    top 5 for most claims (measured 0.7+ sentence recall@5 on SciFact dev at full scale)."""
    data = load_retrieval_set("scifact", FIXTURES / "scifact_mini_claims.jsonl", FIXTURES / "scifact_mini_corpus.jsonl")
    searcher = Searcher(mini_db, lambda: embedder, subject=False)
    starts = {d.ext_id: [s for s, _ in d.sentences] for d in data.documents}
    hit = 0
    for c in data.claims:
        hits = searcher.search(c.claim, k=20, mode="hybrid")
        ranked = rank_sentences(c.claim, [h.passage for h in hits], embedder.encode, load_fusion(key="sentences"))
        assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)
        keys = {(r.passage.doc_ext_id, starts[r.passage.doc_ext_id].index(r.span[0])) for r in ranked[:5]}
        hit += bool(keys & set(c.gold_sentence_sets[0]))
        assert {"dense", "passage"} <= set(ranked[0].ranks)
    assert hit / len(data.claims) >= 0.75


# ----------------------------------------------------------------------------- best sentence


def test_a_passage_is_scored_by_its_best_sentence(mini_db, mini_claims, embedder):
    """The best-sentence score of a passage is the cosine of its most similar sentence: a
    passage's whole-text embedding is diluted by its other sentences, the best sentence is not."""
    claim = next(c for c in mini_claims if c.gold_docs)
    hits = Searcher(mini_db, lambda: embedder, sentence_score=False).search(claim.claim, k=8, mode="hybrid",
                                                                           mark_sentences=False)
    passages = [h.passage for h in hits]
    q = embedder.encode([claim.claim])[0]
    ranked = best_sentence_ranking(q, passages, embedder.encode)
    assert sorted(pid for pid, _ in ranked) == sorted(p.id for p in passages)
    by_id = {p.id: p for p in passages}
    for pid, score in ranked[:3]:
        sims = embedder.encode(by_id[pid].sentence_texts()) @ q
        assert score == pytest.approx(float(sims.max()), abs=1e-5)
    whole = embedder.encode([p.text for p in passages]) @ q
    assert ranked[0][1] >= float(whole.max()) - 0.05  # one sentence is at least as close as a whole passage


def test_best_sentence_fusion_reorders_only_the_pool_and_keeps_every_passage(mini_db, mini_claims, embedder):
    """Passages below the pool keep their order below every pool passage; none is lost."""
    params = load_sentence_score() or FusionParams("minmax", 0, {"fused": 0.5, "sentence": 0.5})
    searcher = Searcher(mini_db, lambda: embedder, sentence_score=False)
    for c in [c for c in mini_claims if c.gold_docs][:5]:
        first = searcher.rank(c.claim, "hybrid", 100)["fusion"]
        top = sq.get_passages(mini_db, [pid for pid, _ in first[:4]])
        fused, sentence = with_best_sentence(first, top, embedder.encode([c.claim])[0], embedder.encode, params, pool=4)
        assert sorted(p for p, _ in fused) == sorted(p for p, _ in first)
        assert {p for p, _ in fused[:4]} == {p for p, _ in first[:4]} == {p for p, _ in sentence}
        assert [p for p, _ in fused[4:]] == [p for p, _ in first[4:]]


def test_hybrid_sentence_search_shows_the_best_sentence_stage_and_hybrid_does_not(mini_db, mini_claims, embedder):
    """The stage runs in mode hybrid-sentence only (it embeds the sentences of 20 passages per
    claim: too slow for the interactive default)."""
    with_gold = [c for c in mini_claims if c.gold_docs]
    searcher = Searcher(mini_db, lambda: embedder)
    found = {"hybrid-sentence": 0, "hybrid": 0}
    for c in with_gold:
        hits = searcher.search(c.claim, k=5, mode="hybrid-sentence", mark_sentences=False)
        assert len(hits) <= SENTENCE_SCORE_POOL and all("sentence" in h.ranks for h in hits)
        found["hybrid-sentence"] += bool({h.passage.doc_ext_id for h in hits} & c.gold_docs)
        plain = searcher.search(c.claim, k=5, mode="hybrid", mark_sentences=False)
        assert not any("sentence" in h.ranks for h in plain)
        found["hybrid"] += bool({h.passage.doc_ext_id for h in plain} & c.gold_docs)
        assert "sentence" not in searcher.rank(c.claim, "rrf", 5)
    assert found["hybrid-sentence"] >= found["hybrid"] - 1 and found["hybrid-sentence"] / len(with_gold) >= 0.8


# ----------------------------------------------------------------------------- subject first


def test_normalised_titles_and_subject_candidates():
    assert normalise_title("Marie Skłodowska-Curie") == normalise_title("marie skłodowska curie")
    assert normalise_title("Gödel") == "godel"
    assert subject_candidates("The Eiffel Tower is located in Berlin.", []) == ["Eiffel Tower"]
    assert subject_candidates("Marie Curie's daughter won a Nobel Prize.", ["Marie Curie", "Nobel Prize"]) == [
        "Marie Curie", "Marie Curie's", "Nobel Prize"]
    # the earliest mention first, whatever order the NER lists them in, without its article
    assert subject_candidates("The Eiffel Tower is located in Berlin.", ["Berlin", "The Eiffel Tower"]) == [
        "Eiffel Tower", "Berlin"]
    assert subject_candidates("She discovered radium.", []) == []


@pytest.fixture(scope="module")
def wiki_db(tmp_path_factory, embedder, splitter):
    return indexed_fixture(tmp_path_factory, "wiki-300", "wiki_vital_summaries_300.jsonl", "jsonl", embedder, splitter)


@pytest.mark.parametrize(("claim", "title"), [
    ("Wu Zetian was the only female emperor of China.", "Wu Zetian"),
    ("Caravaggio painted with dramatic light.", "Caravaggio"),
    ("Baltimore is the largest city in Maryland.", "Baltimore"),
    ("The Andromeda Galaxy is a spiral galaxy.", "Andromeda Galaxy"),
])
def test_subject_document_comes_first(wiki_db, embedder, claim, title):
    searcher = Searcher(wiki_db, lambda: embedder)
    hits = searcher.search(claim, k=5, mode="hybrid")
    assert hits[0].passage.title == title
    assert "subject" in hits[0].ranks and hits[0].ranks["subject"] == 1
    assert searcher.last_subject is not None and searcher.last_subject.title == title


def test_subject_beats_passages_that_only_mention_it(wiki_db, embedder):
    """A claim that names a fixture article's title but whose words fit any article: the
    subject's own article is first whenever the restricted rule acts, and it acts for most
    titles the NER recognises."""
    info = sq.get_source(wiki_db, "wiki-300")
    searcher = Searcher(wiki_db, lambda: embedder)
    rows = wiki_db.execute("SELECT title FROM documents").fetchall()
    tested = 0
    for (title,) in rows[:60]:
        claim = f"{title} is mentioned in many encyclopedias and history books."
        hits = searcher.search(claim, k=3, mode="hybrid")
        subject = searcher.last_subject
        if subject is None:
            continue
        assert subject.entity and subject.title == title
        tested += 1
        assert hits[0].passage.title == title
    assert tested >= 25
    assert TitleIndex(wiki_db, [info]).find("Baltimore is a city.", []).entity is False


def test_subject_first_keeps_every_passage_once():
    ranked = [(5, 0.9), (2, 0.8), (9, 0.7), (3, 0.1)]
    moved = subject_first(ranked, Subject("X", 1, "X", (9, 3, 11)))
    assert [p for p, _ in moved] == [9, 3, 11, 5, 2]
    assert subject_first(ranked, None) == ranked


def test_restricted_rule_never_demotes_for_a_non_entity_or_an_unfound_one_word_name():
    """The rule acts for a named entity whose document is a candidate (in the top
    SUBJECT_POOL) or whose exact title has two or more words; a leading phrase that is no
    named entity, or a one-word name whose article the retrievers did not find, leaves the
    fused ranking as it is."""
    ranked = [(i, 1.0 - i / 100) for i in range(1, 41)]
    in_pool = Subject("Arctic", 100, "Arctic", (12,), entity=True, exact=True)
    assert acts(ranked, in_pool) and subject_first(ranked, in_pool)[0][0] == 12
    far = Subject("Arctic", 100, "Arctic", (35,), entity=True, exact=True)  # rank 35: not a candidate
    assert not acts(ranked, far) and subject_first(ranked, far) == ranked
    two_words = Subject("Marie Curie", 7, "Marie Curie", (99,), entity=True, exact=True)
    assert acts(ranked, two_words) and subject_first(ranked, two_words)[0][0] == 99
    suffix = Subject("Mercury Planet", 7, "Mercury Planet (film)", (99,), entity=True, exact=False)
    assert not acts(ranked, suffix)
    leading_phrase = Subject("Photosynthesis", 5, "Photosynthesis", (3,), entity=False, exact=True)
    assert not acts(ranked, leading_phrase) and subject_first(ranked, leading_phrase) == ranked
    not_the_subject = Subject("Marie Curie", 7, "Marie Curie", (12,), entity=True, is_subject=False, exact=True)
    assert not acts(ranked, not_the_subject)


def test_the_subject_is_the_claims_grammatical_subject(wiki_db):
    """Only the whole grammatical subject counts: "Arctic icemelt is …" is not about the
    Arctic article, "… in Maryland" names Maryland but is not about it."""
    from models.nlp import SpacyClaimSubject

    parse = SpacyClaimSubject()
    assert parse("The Eiffel Tower is located in Berlin.")[1] == "Eiffel Tower"
    assert parse("Arctic icemelt is a natural cycle.") == (["Arctic"], "Arctic icemelt")
    info = sq.get_source(wiki_db, "wiki-300")
    titles = TitleIndex(wiki_db, [info])
    claim = "Baltimore is the largest city in Maryland."
    found = titles.find(claim, *parse(claim))
    assert found.title == "Baltimore" and found.is_subject
    claim = "The largest city in Maryland is Baltimore."
    found = titles.find(claim, *parse(claim))
    assert found is None or not found.is_subject


# ----------------------------------------------------------------------------- retrieval sets


def test_climate_fever_and_wice_retrieval_sets_point_at_their_evidence_sentences():
    cf = load_retrieval_set("climate-fever", FIXTURES / "climate_fever_dev_10.jsonl")
    docs = {d.ext_id: d for d in cf.documents}
    raw = [json.loads(line) for line in (FIXTURES / "climate_fever_dev_10.jsonl").open()]
    gold_texts = {" ".join(e["evidence"].split()) for r in raw for e in r["evidences"]
                  if e["evidence_label"] in ("SUPPORTS", "REFUTES")}
    assert cf.claims and all(c.gold_docs for c in cf.claims)
    for c in cf.claims:
        for doc, i in c.gold_sentence_sets[0]:
            s, e = docs[doc].sentences[i]
            assert docs[doc].text[s:e] in gold_texts
            assert doc in c.gold_docs
    wice = load_retrieval_set("wice", FIXTURES / "wice_dev_6.jsonl")
    rows = [json.loads(line) for line in (FIXTURES / "wice_dev_6.jsonl").open()]
    by_claim = {r["claim"]: r for r in rows}
    wdocs = {d.ext_id: d for d in wice.documents}
    assert len(wice.documents) == len(rows) and wice.claims
    for c in wice.claims:
        r = by_claim[c.claim]
        assert len(c.gold_sentence_sets) == len([s for s in r["supporting_sentences"] if s])
        (doc,) = c.gold_docs
        for doc_id, i in c.gold_sentence_sets[0]:
            s, e = wdocs[doc_id].sentences[i]
            assert doc_id == doc and wdocs[doc].text[s:e] == " ".join(r["evidence"][i].split())


def test_each_stage_is_stored_with_the_evidence_for_the_inspector(wiki_db, embedder, splitter, tiny_nli_dir):
    from core.decompose.base import SentenceDecomposer
    from core.pipeline.runner import Pipeline
    from core.verify.verifier import Verifier
    from models.nli import load_nli
    from store.inspect import claim_view, run_claim_views

    pipe = Pipeline(wiki_db, SentenceDecomposer(splitter), Searcher(wiki_db, lambda: embedder),
                    Verifier(load_nli(str(tiny_nli_dir))), k=3)
    run_id = pipe.start("Caravaggio painted with dramatic light.")
    pipe.resume(run_id)
    view = claim_view(wiki_db, run_claim_views(wiki_db, run_id)[0].id)
    top = view.evidence[0]
    assert top.title == "Caravaggio"
    # the default mode's stages: its own rank, the members, the fusion, the best sentence, the subject
    assert top.stages["subject"][1] == 1 and top.stages[DEFAULT_MODE][1] == 1
    assert {"bm25", "dense", "fusion", "sentence"} <= set(top.stages)
    for ev in view.evidence:
        assert all(rank >= 1 for _score, rank in ev.stages.values())


def test_title_maps_are_shared_between_searchers_and_ascii_titles_take_the_short_path(wiki_db, embedder, monkeypatch):
    """A workbench's searchers (one per TUI run) reuse the title map of an unchanged source;
    ASCII titles skip the accent stripping, with the same keys as the full path."""
    import unicodedata

    def slow(text):
        text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
        text = text.replace("’", "'").replace("'s ", " ")
        return " ".join(__import__("re").sub(r"[^\w]+", " ", text.casefold()).split())

    titles = [t for (t,) in wiki_db.execute("SELECT title FROM documents").fetchall()]
    titles += ["Gödel's theorem", "Marie Skłodowska-Curie", "Rock 'n' roll (music)", "Côte d’Ivoire"]
    assert [normalise_title(t) for t in titles] == [slow(t) for t in titles]
    maps: dict = {}
    first = Searcher(wiki_db, lambda: embedder, title_maps=maps)
    hit = first.search("Baltimore is the largest city in Maryland.", k=3, mode="hybrid")[0]
    assert len(maps) == 1 and hit.passage.title == "Baltimore"
    built = []
    monkeypatch.setattr("core.retrieve.subject.normalise_title", lambda t: built.append(t) or slow(t))
    second = Searcher(wiki_db, lambda: embedder, title_maps=maps)
    assert second.search("Baltimore is the largest city in Maryland.", k=3, mode="hybrid")[0].passage.id == hit.passage.id
    assert len(built) < 50  # the claim's mentions only: no title was normalised again
