"""Query expansion (seed 000): HyDE vector arithmetic, Query2doc query construction, the
ROUGE-2 claim-echo filter and the leakage matching rule; expansions in runs are stored apart
from evidence and never judged as evidence."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.decompose.base import SentenceDecomposer
from core.errors import InputError
from core.pipeline.runner import Pipeline
from core.pipeline.stored import expand_cached
from core.retrieve.expand import Expander, Expansion, ExpansionParams, hyde_vector, query2doc_query
from core.retrieve.leakage import ECHO_THRESHOLD, Premise, audit, generated_sentences, rouge2_f, rouge_tokens
from core.retrieve.searcher import Searcher
from core.text import fts_match_query
from core.verify.verifier import Verifier
from models.llm import load_llm
from models.nli import load_nli
from store.expansions import claim_expansion

# ------------------------------------------------------------------ pure definitions


def test_hyde_vector_is_the_normalised_mean_of_claim_and_documents():
    q = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    d1 = np.array([0.0, 1.0, 0.0], dtype=np.float32)
    # N = 1: (q + d1) / 2 = (0.5, 0.5, 0) → unit length (1/√2, 1/√2, 0)
    assert np.allclose(hyde_vector(q, d1[None, :]), [2**-0.5, 2**-0.5, 0.0], atol=1e-6)
    # N = 2: (q + d1 + d2) / 3 with d2 = (0, 0, 1) → (1/3, 1/3, 1/3) → (1/√3, 1/√3, 1/√3)
    d2 = np.array([0.0, 0.0, 1.0], dtype=np.float32)
    v = hyde_vector(q, np.stack([d1, d2]))
    assert np.allclose(v, [3**-0.5] * 3, atol=1e-6) and abs(np.linalg.norm(v) - 1) < 1e-6
    # the claim counts once, like each document: a document equal to the claim leaves it unchanged
    assert np.allclose(hyde_vector(q, q[None, :]), q)


def test_query2doc_query_repeats_the_claim_five_times_then_the_document():
    q = query2doc_query("Cats purr.", " A passage about cats. ")
    assert q == "Cats purr. Cats purr. Cats purr. Cats purr. Cats purr. A passage about cats."
    # the BM25 query keeps every occurrence, so the claim's words weigh 5× (+1 if the passage repeats them)
    match = fts_match_query(q, distinct=False)
    assert match.count('"cats"') == 6 and match.count('"purr"') == 5 and match.count('"passage"') == 1
    assert fts_match_query(q).count('"cats"') == 1  # the ordinary query stays distinct


def test_repeated_query_terms_raise_their_bm25_weight(mini_db):
    """Query-term frequency reaches FTS5's bm25(): the claim's words repeated outrank a
    passage that only matches the pseudo-document's words."""
    from core.retrieve.searcher import BM25Retriever
    from store.sources import list_sources

    bm25 = BM25Retriever(mini_db, list_sources(mini_db))
    claim = "bariatric surgery"
    doc = "cholesterol loading induces KLF4 expression in smooth muscle cells of atherosclerotic plaques KLF4 cholesterol"
    plain = bm25.retrieve(f"{claim} {doc}", 5)
    weighted = bm25.retrieve(query2doc_query(claim, doc), 5, distinct=False)
    text = dict(mini_db.execute("SELECT id, lower(text) FROM passages").fetchall())
    about_claim = [["bariatric" in text[pid] for pid, _ in ranked] for ranked in (plain, weighted)]
    assert about_claim[0][:2] == [False, False]  # one copy: the longer pseudo-document wins
    assert about_claim[1][:3] == [True, True, True]  # five copies: the claim wins


def test_rouge2_f_by_hand():
    # "the cat sat on the mat" vs "the cat sat on a mat": bigrams 5 and 5, shared 3
    # (the-cat, cat-sat, sat-on) → P = R = 3/5 → F = 0.6
    assert rouge2_f("The cat sat on the mat.", "the cat sat on a mat") == pytest.approx(0.6)
    assert rouge_tokens("It's COVID-19!") == ["it", "s", "covid", "19"]  # rouge-score's tokenizer
    assert rouge2_f("Paris", "Paris is big") == 0.0  # no bigram in the candidate
    assert rouge2_f("a b c", "a b c") == 1.0


def test_echo_filter_threshold_095():
    claim = " ".join(f"w{i}" for i in range(30))  # 29 bigrams
    near = " ".join([f"w{i}" for i in range(29)] + ["other"])  # 28 of 29 bigrams shared → F = 28/29 ≈ 0.9655
    far = " ".join([f"w{i}" for i in range(27)] + ["x", "y", "z"])  # 26 of 29 → 0.897
    assert rouge2_f(near, claim) == pytest.approx(28 / 29) and rouge2_f(near, claim) >= ECHO_THRESHOLD
    assert rouge2_f(far, claim) < ECHO_THRESHOLD


class _Splitter:
    """Sentences = text split on '. ' (enough for the matching-rule tests)."""

    def split(self, texts):
        out = []
        for t in texts:
            spans, start = [], 0
            for part in t.split(". "):
                end = start + len(part)
                spans.append((start, end))
                start = end + 2
            out.append(spans)
        return out


class _KeywordNLI:
    """Entailment iff the hypothesis contains the premise's first word; records its pairs."""

    def __init__(self):
        self.pairs = []

    def predict(self, pairs, batch_size=32):
        self.pairs += pairs
        return np.array([[0.9, 0.05, 0.05] if p.split()[0].lower() in h.lower() else [0.1, 0.8, 0.1]
                         for p, h in pairs])


def test_matching_rule_premise_is_evidence_and_echoes_are_dropped():
    claim = "Aspirin lowers the risk of stroke"
    docs = ["Aspirin lowers the risk of stroke. Warfarin thins blood", "Nothing relevant here"]
    nli = _KeywordNLI()
    res = audit(docs, claim, [Premise(7, "warfarin is an anticoagulant")], _Splitter(), nli)
    assert [s.text for s in res.sentences if s.echoes_claim] == ["Aspirin lowers the risk of stroke"]
    # the echo is never judged; premise = evidence, hypothesis = generated sentence
    assert ("warfarin is an anticoagulant", "Aspirin lowers the risk of stroke") not in nli.pairs
    assert ("warfarin is an anticoagulant", "Warfarin thins blood") in nli.pairs
    assert res.matched and res.entailed[0].premise.ref == 7 and res.entailed[0].sentence.doc_index == 0
    # no entailed pair → unmatched; nothing left after the echo filter → unmatched
    assert not audit(docs, claim, [Premise(1, "ibuprofen")], _Splitter(), _KeywordNLI()).matched
    empty = audit(["Aspirin lowers the risk of stroke"], claim, [Premise(1, "aspirin")], _Splitter(), _KeywordNLI())
    assert not empty.matched and empty.pairs == ()


@pytest.fixture(scope="module")
def nli():
    return load_nli("embedded")


def test_matching_with_the_embedded_nli_and_spacy(nli, splitter):
    claim = "France's capital city is Paris."
    evidence = [Premise("e1", "Paris is the capital and most populous city of France.")]
    leaked = audit(["Paris is the capital of France. It is famous for the Eiffel Tower."], claim, evidence, splitter, nli)
    sents = generated_sentences(["Rome is old. Paris is the capital of France."], claim, splitter)
    assert [(s.doc_index, s.sentence_index, s.text) for s in sents] == [
        (0, 0, "Rome is old."), (0, 1, "Paris is the capital of France.")]
    assert leaked.matched and leaked.entailed[0].sentence.text == "Paris is the capital of France."
    unrelated = audit(["Bananas are rich in potassium. They grow in the tropics."], claim, evidence, splitter, nli)
    assert not unrelated.matched and len(unrelated.pairs) == 2


# ------------------------------------------------------------------ the LLM, runs, storage


@pytest.fixture(scope="module")
def llm():
    return load_llm()


def test_expander_is_reproducible_and_cached(llm, tmp_path):
    from store import open_db

    params = ExpansionParams(max_tokens=24)
    claim = "Bariatric surgery leads to negative outcomes in mental health."
    a = Expander(llm, "hyde", "scientific", params).expand(claim)
    b = Expander(llm, "hyde", "scientific", params).expand(claim)
    assert a.documents == b.documents and a.documents[0]  # seeded sampling: the same text again
    other = Expander(llm, "hyde", "scientific", ExpansionParams(max_tokens=24, seed=1)).expand(claim)
    assert other.documents != a.documents  # another repeat samples another document
    db = open_db(tmp_path / "x.db")
    first = expand_cached(db, Expander(llm, "query2doc", None, params), claim)
    again = expand_cached(db, Expander(llm, "query2doc", None, params), claim)
    assert not first.cached and again.cached and again.documents == first.documents
    assert db.execute("SELECT count(*) FROM stage_cache WHERE stage = 'expand'").fetchone()[0] == 1
    with pytest.raises(InputError, match="unknown expansion prompt"):
        Expander(llm, "hyde", "poetry")
    with pytest.raises(InputError, match="unknown query-expansion method"):
        Expander(llm, "hyde2")


def test_searcher_needs_the_matching_expansion(mini_db, embedder):
    searcher = Searcher(mini_db, lambda: embedder)
    with pytest.raises(InputError, match="needs the claim's hyde expansion"):
        searcher.search("Bariatric surgery", mode="hyde")
    q2d = Expansion("query2doc", "query2doc", "x", ("doc",), {"model_id": "m"}, ExpansionParams())
    with pytest.raises(InputError, match="needs the claim's hyde expansion"):
        searcher.search("Bariatric surgery", mode="hyde", expansion=q2d)


class _FixedLLM:
    """A generator whose pseudo-document is known, so the test can look for it everywhere."""

    class ref:  # mimics a ModelRef
        @staticmethod
        def manifest():
            return {"role": "llm", "model_id": "fixed-test-llm", "sha256": "0" * 64}

    def generate(self, messages, **kw):
        return ("Mental health after bariatric surgery was studied in a meta-analysis. "
                "GENERATED-MARKER sentence that no passage contains.")


@pytest.fixture()
def own_db(mini_db, tmp_path):
    """A private copy of the indexed mini corpus (runs made here stay out of the shared one)."""
    from store import open_db

    db = open_db(tmp_path / "own.db")
    mini_db.conn.backup(db.conn)
    return db


@pytest.mark.parametrize("mode", ["hyde", "query2doc"])
def test_run_stores_the_expansion_apart_from_evidence(mode, own_db, embedder, splitter, nli):
    mini_db = own_db
    expander = Expander(_FixedLLM(), mode, "scientific" if mode == "hyde" else None)
    pipe = Pipeline(mini_db, SentenceDecomposer(splitter), Searcher(mini_db, lambda: embedder), Verifier(nli),
                    k=3, mode=mode, expander=expander, splitter=splitter)
    seen = []
    run_id = pipe.start("Bariatric surgery leads to negative outcomes in mental health.", listener=seen.append)
    pipe.resume(run_id, seen.append)
    assert "expanding" in [e.payload.get("stage") for e in seen if e.kind == "progress"]
    claim_id = mini_db.execute("SELECT id FROM claims WHERE run_id = ?", [run_id]).fetchone()[0]
    view = claim_expansion(mini_db, claim_id)
    assert view is not None and view.method == mode and "GENERATED-MARKER" in view.documents[0]
    # generated text is never evidence: no evidence passage, judgement or verdict carries it
    for sql in ("SELECT p.text FROM evidence e JOIN passages p ON p.id = e.passage_id WHERE e.claim_id = ?",
                "SELECT text FROM judgements WHERE claim_id = ?"):
        assert all("GENERATED-MARKER" not in r[0] for r in mini_db.execute(sql, [claim_id]))
    # the audit judged (retrieved evidence, generated sentence) pairs and stored them
    n_pairs = mini_db.execute(
        "SELECT count(*) FROM expansion_matches m JOIN expansions x ON x.id = m.expansion_id WHERE x.claim_id = ?",
        [claim_id]).fetchone()[0]
    assert n_pairs >= 2 and view.matched is not None
    config = json.loads(mini_db.execute("SELECT config FROM runs WHERE id = ?", [run_id]).fetchone()[0])
    assert config["expansion"]["method"] == mode and config["expansion"]["model"]["model_id"] == "fixed-test-llm"
    roles = [r[0] for r in mini_db.execute("SELECT role FROM model_manifest WHERE run_id = ?", [run_id])]
    assert "expansion" in roles
    # exports keep the expansion beside, never inside, the evidence
    from core.pipeline.export import to_csv, to_jsonl

    exported = json.loads(to_jsonl(mini_db, run_id).splitlines()[0])
    assert "GENERATED-MARKER" in exported["expansion"]["documents"][0]
    assert "GENERATED-MARKER" not in json.dumps(exported["evidence"])
    header, row = to_csv(mini_db, run_id).splitlines()[:2]
    assert header.endswith("expansion_method,expansion_matched,claim_date") and f",{mode}," in row
    # the same claim again: a stage-cache hit copies the expansion with the evidence
    run2 = pipe.start("Bariatric surgery leads to negative outcomes in mental health.")
    pipe.resume(run2)
    claim2 = mini_db.execute("SELECT id FROM claims WHERE run_id = ?", [run2]).fetchone()[0]
    copied = claim_expansion(mini_db, claim2)
    assert copied is not None and copied.documents == view.documents and copied.matched == view.matched


def test_pair_label_argmax_and_minimum_entailment():
    from core.retrieve.leakage import pair_label

    p = np.array([0.41, 0.39, 0.20])  # entailment on top, but weakly
    assert pair_label(p) == "entailment"  # the paper's classifier reading: the argmax
    assert pair_label(p, min_entailment=0.6) == "neutral"  # below the verifier's support bar
    assert pair_label(np.array([0.7, 0.2, 0.1]), 0.6) == "entailment"
    assert pair_label(np.array([0.1, 0.2, 0.7]), 0.6) == "contradiction"
