"""The learned claim verdicts (core/verify/verdict_model.py): features, the shipped weights, fitting."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.verify.base import Thresholds
from core.verify.verdict_model import (
    FEATURES,
    VerdictModel,
    decide_learned,
    extract,
    fit,
    load_verdict_model,
    numbers,
    predict,
    source_kind,
    subject_title,
    title_is_subject,
)
from core.verify.verifier import VERDICTS, EvidenceUnit, Judgement, PassageEvidence
from models.nli import ENTAIL


def judgement(pid: int, rank: int, text: str, e: float, c: float, grounded: bool = True, kind: str = "sentence"):
    return Judgement(EvidenceUnit(pid, kind, (0,), text, rank), np.array([e, 1 - e - c, c], dtype=np.float32),
                     grounded=grounded)


def test_title_match_and_numbers():
    assert title_is_subject("Marie Curie", {"marie", "curie"})
    assert title_is_subject("Isaac Newton", {"newton"})
    assert title_is_subject("Mercury (planet)", {"mercury"})
    assert not title_is_subject("Henri Becquerel", {"marie", "curie"})
    assert not title_is_subject("Sapporo", {"tokyo"})
    assert not title_is_subject("Marie Curie", set())
    assert numbers("born on 14 March 1879, the fifth-most populous; 1,200 people") >= {"14", "march", "1879", "fifth", "1200"}
    assert "may" not in numbers("It may rain.")


def test_features_of_a_passage_about_someone_else():
    """The Becquerel passage names Curie (so it is grounded) but is not her document: the
    contradiction it gives comes from elsewhere, the support from her own page."""
    claim = "Marie Curie was a Polish-born physicist."
    passages = [PassageEvidence(1, 1, ("s",), "t", "Henri Becquerel"), PassageEvidence(2, 2, ("s",), "t", "Marie Curie")]
    js = [
        judgement(1, 1, "Becquerel shared the prize with Marie Curie and Pierre Curie.", 0.02, 0.90),
        judgement(2, 2, "Marie Curie was a Polish and naturalised-French physicist.", 0.80, 0.05),
    ]
    f = extract(claim, js, passages, {"marie", "curie"}).as_dict()
    assert f["c_max"] == pytest.approx(0.90) and f["e_max"] == pytest.approx(0.80, abs=1e-6)
    assert f["c_title"] == 0.0 and f["e_title"] == 1.0 and f["own_doc"] == 1.0
    assert f["e_own"] == pytest.approx(0.80, abs=1e-6) and f["c_own"] == pytest.approx(0.05, abs=1e-6)
    assert f["c_rank"] == 1.0 and f["e_rank"] == 0.5
    assert f["e_named"] == 1.0 and f["c_named"] == 1.0
    assert f["both"] == pytest.approx(0.80, abs=1e-6)


def test_features_of_a_number_mismatch_and_ungrounded_units():
    claim = "Albert Einstein was born in 1879."
    passages = {1: "Albert Einstein", 2: "Josephus"}
    js = [
        judgement(1, 1, "Einstein was born in 1880 in Ulm.", 0.05, 0.70),
        judgement(1, 1, "Einstein was a German-born theoretical physicist.", 0.60, 0.10),
        judgement(2, 2, "He was born in Jerusalem.", 0.01, 0.97, grounded=False),
    ]
    f = extract(claim, js, passages, {"einstein"}).as_dict()
    assert f["c_num_clash"] == 1.0 and f["e_num_missing"] == 1.0
    assert f["c_any"] == pytest.approx(0.97, abs=1e-6) and f["c_max"] == pytest.approx(0.70, abs=1e-6)
    assert f["grounded_share"] == pytest.approx(2 / 3)
    none = extract(claim, [], passages, {"einstein"}).as_dict()
    assert none["no_evidence"] == 1.0 and none["e_max"] == 0.0


def test_sets_count_only_when_no_single_unit_decides():
    t = Thresholds()
    single = judgement(1, 1, "a", 0.9, 0.01)
    a_set = judgement(1, 1, "a b", 0.2, 0.95, kind="set")
    f = extract("X is Y.", [single, a_set], {1: ""}, {"x"}, t).as_dict()
    assert f["c_any"] == pytest.approx(0.01, abs=1e-6)  # the set is ignored: a single unit decides
    weak = judgement(1, 1, "a", 0.3, 0.01)
    f = extract("X is Y.", [weak, a_set], {1: ""}, {"x"}, t).as_dict()
    assert f["c_any"] == pytest.approx(0.95, abs=1e-6)


def test_shipped_model_loads_and_predicts():
    m = load_verdict_model()
    assert m.features == FEATURES and set(m.labels) == set(VERDICTS)
    assert m.weights.shape == (len(m.labels), len(FEATURES))
    assert m.meta["trained_on"] and all("dev" not in k or "fit-half" in k for k in m.meta["trained_on"])
    claim = "Isaac Newton was born in Woolsthorpe."
    own = PassageEvidence(2, 2, ("s",), "t", "Isaac Newton")
    strong = [judgement(2, 2, "Isaac Newton was born in Woolsthorpe Manor, Lincolnshire.", 0.95, 0.01),
              judgement(2, 2, "Newton was an English mathematician.", 0.10, 0.05)]
    label, probs = predict(extract(claim, strong, [own], {"newton"}).values, m)
    assert label == "supported" and sum(probs.values()) == pytest.approx(1.0)
    nothing = extract(claim, [judgement(2, 2, "Newton wrote the Principia.", 0.05, 0.05)], [own], {"newton"})
    assert predict(nothing.values, m)[0] == "not_enough_info"
    # the deciding unit is the best unit on the verdict's side
    v = decide_learned(claim, strong, [own], lambda _: {"newton"}, Thresholds(), m)
    assert v.label == "supported" and v.deciding is strong[0] and v.support == pytest.approx(0.94, abs=1e-6)


def test_fit_recovers_a_separable_rule_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(400, len(FEATURES)))
    e, c = FEATURES.index("e_max"), FEATURES.index("c_max")
    y = ["supported" if a > 0.5 and a > b else "refuted" if b > 0.5 else "not_enough_info" for a, b in zip(x[:, e], x[:, c], strict=True)]
    m = fit(x, y, labels=("supported", "refuted", "not_enough_info"), l2=0.01)
    pred = [m.labels[i] for i in m.probabilities(x).argmax(axis=1)]
    assert np.mean([p == g for p, g in zip(pred, y, strict=True)]) > 0.9
    path = tmp_path / "m.json"
    path.write_text(json.dumps(m.to_json()))
    m2 = load_verdict_model(path)
    assert np.allclose(m2.probabilities(x[:5]), m.probabilities(x[:5]))
    bad = m.to_json() | {"features": ["e_max"]}
    with pytest.raises(ValueError, match="features"):
        VerdictModel.from_json(bad)


def test_source_kind_from_real_titles():
    """The kind rule on real titles: Climate-FEVER's cited Wikipedia articles name subjects,
    SciFact's abstracts describe findings; a claim's kind is its passages' majority."""
    from tests.conftest import DATA

    with open(DATA / "scifact" / "corpus.jsonl", encoding="utf-8") as fh:
        sci = [json.loads(line)["title"] for line in fh]
    with open(DATA / "climate_fever" / "dev.jsonl", encoding="utf-8") as fh:
        cf = [e["article"] for line in fh for e in json.loads(line)["evidences"]]
    assert np.mean([subject_title(t) for t in sci]) < 0.1
    assert np.mean([subject_title(t) for t in cf]) > 0.9
    assert subject_title("Mercury (planet)") and subject_title("Marie Curie") and not subject_title("")

    def ev(titles, source="wiki"):
        return [PassageEvidence(i, i, ("s",), "s", t, source) for i, t in enumerate(titles)]

    assert source_kind(ev(cf[:5])) == "entity"
    assert source_kind(ev(sci[:5])) == "abstract"
    assert source_kind(ev([sci[0], sci[1], "Marie Curie"])) == "abstract"  # the majority decides
    assert source_kind(ev(["Marie Curie", "Henri Becquerel", sci[0]])) == "entity"
    assert source_kind(ev(["", ""])) == "given" and source_kind([]) == "given"  # no titles: the user's passages
    assert source_kind(ev(["Marie Curie"], source="_given")) == "given"  # check --against
    assert source_kind({1: "Marie Curie", 2: "Isaac Newton"}) == "entity"
    assert source_kind({1: sci[0]}) == "abstract"


def test_retrieved_evidence_carries_its_source_and_kind():
    """passage_evidence hands each passage's source name to the verifier, so evidence from the
    user's given documents (the reserved ``_given`` source) is told from a knowledge source even
    when its titles look like subjects; cached training rows get the same kind."""
    from benchmarks.fit_verdicts import kind_of
    from core.pipeline.given import GIVEN_SOURCE
    from core.pipeline.runner import passage_evidence
    from core.retrieve.searcher import Hit
    from store.records import StoredPassage

    def hit(source: str, title: str) -> Hit:
        return Hit(StoredPassage(1, 1, source, "d1", title, None, "Curie was a chemist.", 0, ((0, 20),)), 1, 1.0)

    ev = passage_evidence([hit(GIVEN_SOURCE, "Marie Curie")])
    assert ev[0].source == GIVEN_SOURCE and ev[0].sentences == ("Curie was a chemist.",)
    assert source_kind(ev) == "given"
    assert source_kind(passage_evidence([hit("wiki-vital", "Marie Curie")])) == "entity"
    row = {"titles": {"1": "Marie Curie", "2": "Pierre Curie"}, "sources": {"1": "wiki-vital", "2": "wiki-vital"}}
    assert kind_of(row) == "entity" and kind_of({"titles": {"1": "Marie Curie"}, "sources": {"1": GIVEN_SOURCE}}) == "given"
    assert kind_of({"titles": {"1": "Marie Curie"}}) == "entity"  # rows cached before sources were stored


def _constant_model(label: str, **by_kind: VerdictModel) -> VerdictModel:
    """Zero weights and a bias that always picks ``label``."""
    d = len(FEATURES)
    bias = np.array([5.0 if lab == label else 0.0 for lab in VERDICTS])
    return VerdictModel(VERDICTS, FEATURES, np.zeros(d), np.ones(d), np.zeros((len(VERDICTS), d)), bias, {}, by_kind)


def test_weights_are_picked_by_the_kind_of_source(tmp_path):
    """decide_learned uses the weights of the evidence's kind of source, the top-level ones for a
    kind without its own; the per-kind sets survive the JSON round trip; an unknown kind is refused."""
    m = _constant_model("refuted", entity=_constant_model("supported"), abstract=_constant_model("not_enough_info"))
    claim = "Marie Curie was a chemist."
    js = [judgement(1, 1, "Marie Curie was a physicist and chemist.", 0.9, 0.05)]
    entity = [PassageEvidence(1, 1, ("s",), "s", "Marie Curie", "wiki-vital")]
    abstract = [PassageEvidence(1, 1, ("s",), "s", "Radioactivity measurements in polonium-rich ores of Bohemia")]
    given = [PassageEvidence(1, 1, ("s",), "s", "Marie Curie", "_given")]
    terms = lambda _: {"marie", "curie"}  # noqa: E731
    assert decide_learned(claim, js, entity, terms, Thresholds(), m).label == "supported"
    assert decide_learned(claim, js, abstract, terms, Thresholds(), m).label == "not_enough_info"
    assert decide_learned(claim, js, given, terms, Thresholds(), m).label == "refuted"  # the fallback
    path = tmp_path / "m.json"
    path.write_text(json.dumps(m.to_json()))
    m2 = load_verdict_model(path)
    assert set(m2.by_kind) == {"entity", "abstract"} and m2.for_kind("given") is m2
    x = np.zeros(len(FEATURES))
    assert [m2.predict(x, k)[0] for k in ("entity", "abstract", "given", None)] == [
        "supported", "not_enough_info", "refuted", "refuted"]
    with pytest.raises(ValueError, match="kind of source"):
        VerdictModel.from_json(m.to_json() | {"by_kind": {"blogs": m.to_json()}})


def test_the_evidence_shown_for_a_verdict_is_the_best_on_its_side():
    """Past .5 a unit from the subject's own page is shown first (Marie Curie's page, not a set
    under Chien-Shiung Wu's); below .5 only the probability counts. "Water boils at 100 degrees
    Celsius" was *supported* and shown with a sentence of its subject's page at P(E) .08,
    support −.50, beside a set at .48."""
    supported = _constant_model("supported")
    terms = lambda _: {"water"}  # noqa: E731
    passages = [PassageEvidence(1, 1, ("s",), "s", "Water", "wiki-vital"),
                PassageEvidence(2, 2, ("s",), "s", "Lake Vostok", "wiki-vital")]
    own = judgement(1, 1, "Water is an inorganic compound.", 0.08, 0.58)
    other = judgement(2, 2, "… 500 m below sea level. Water vapor can be produced by boiling.", 0.48, 0.42, kind="set")
    v = decide_learned("Water boils at 100 degrees Celsius.", [own, other], passages, terms, Thresholds(), supported)
    assert v.label == "supported" and v.deciding is other and v.support == pytest.approx(0.06, abs=1e-6)
    own_strong = judgement(1, 1, "Water boils at 100 degrees Celsius.", 0.62, 0.1)
    other_strong = judgement(2, 2, "Water boils at 100 °C at sea level.", 0.9, 0.05)
    v = decide_learned("Water boils at 100 degrees Celsius.", [own_strong, other_strong], passages, terms,
                       Thresholds(), supported)
    assert v.deciding is own_strong


def test_shipped_model_has_weights_per_kind():
    """The shipped file: entity and abstract weight sets fitted on data of their kind, the
    top-level set (given documents, and the fallback) as before, and the kind rule named."""
    m = load_verdict_model()
    assert set(m.by_kind) == {"entity", "abstract"}
    assert "fever-wiki-vital" in m.by_kind["entity"].meta["trained_on"]
    assert set(m.by_kind["abstract"].meta["trained_on"]) == {"scifact-train"}
    assert "source_kind" in m.meta["kind_rule"]
    for sub in m.by_kind.values():
        assert sub.features == FEATURES and sub.weights.shape == m.weights.shape and not sub.by_kind


# A demo-like answer over real wiki-vital summaries (the 300-article fixture) with the real
# embedder, verifier and parser: six true claims about people and places and two false ones.
DEMO_LIKE = [
    ("Michael Faraday was an English chemist and physicist.", True),
    ("Lise Meitner was a nuclear physicist.", True),
    ("Kofi Annan was the seventh secretary-general of the United Nations.", True),
    ("Lake Baikal is the deepest lake in the world.", True),
    ("Johann Sebastian Bach was a German composer.", True),
    ("Harry S. Truman was the 33rd president of the United States.", True),
    ("Lake Baikal is located in Canada.", False),
    ("Kofi Annan was a Brazilian footballer.", False),
]


@pytest.fixture(scope="module")
def wiki_db(tmp_path_factory, embedder, splitter):
    from tests.conftest import indexed_fixture

    return indexed_fixture(tmp_path_factory, "wiki", "wiki_vital_summaries_300.jsonl", "jsonl", embedder, splitter)


def test_learned_verdicts_on_a_demo_like_answer(wiki_db, embedder):
    """Margin: the learned rule gets at least 7 of the 8 right (supported iff true) and at
    least as many as the hand rules on the very same judgements."""
    from core.pipeline.runner import passage_evidence
    from core.retrieve.searcher import Searcher
    from core.verify.verifier import Verifier
    from models.nli import load_nli
    from models.nlp import SubjectTerms

    searcher = Searcher(wiki_db, lambda: embedder)
    verifier = Verifier(load_nli("embedded"), subject_terms=SubjectTerms(), verdict_rule="learned")
    rules = Verifier(verifier.nli, subject_terms=verifier.subject_terms)
    learned_right = rules_right = 0
    for claim, true in DEMO_LIKE:
        passages = passage_evidence(searcher.search(claim, k=10, mode="hybrid", sources=["wiki"]))
        v = verifier.verify(claim, passages, always_sets=True)
        learned_right += (v.label == "supported") == true
        rules_right += (rules.decide_staged(v.judgements).label == "supported") == true
        if v.label == "supported":
            assert v.deciding is not None and v.deciding.probs[ENTAIL] > 0.5
    assert learned_right >= 7
    assert learned_right >= rules_right


def test_fever_training_claims_are_labelled_only_where_the_evidence_is_clear():
    """benchmarks/fit_verdicts.py's FEVER-over-wiki-vital claims: FEVER's tokenised evidence is
    matched against retrieved sentences; a paraphrase-free restatement counts as found, another
    subject's sentence does not."""
    from benchmarks.fit_verdicts import evidence_found, fever_detok
    from models.train_nli import read_jsonl
    from tests.conftest import DATA

    rec = next(iter(read_jsonl(DATA / "nli" / "fever_nli_rte" / "dev_minus_eval.jsonl.gz")))
    ev = fever_detok(rec["premise"])
    assert "-LRB-" not in ev and " ," not in ev and not ev.endswith(" .")
    assert fever_detok("Paris -LRB- France -RRB- is a city .") == "Paris (France) is a city."
    assert evidence_found([ev], ["Unrelated opening sentence.", ev]) == 1.0
    assert evidence_found([ev], ["Antoine Henri Becquerel was a French experimental physicist."]) < 0.4
    assert evidence_found([], [ev]) == 0.0


def test_given_document_training_rows_are_judged_as_check_against_judges(data_dir):
    """benchmarks/fit_verdicts.collect_given: SciFact train claims against the abstracts they
    cite, through the given-document path: rows of kind ``given`` (the reserved source), every
    sentence and passage window judged (no pruning), gold from SciFact's labels."""
    from benchmarks.fit_verdicts import collect_given, kind_of, scifact_given_items
    from core.verify.verifier import Verifier
    from models.nli import load_nli
    from models.nlp import SpacySentenceSplitter, SubjectTerms

    verifier = Verifier(load_nli(), Thresholds(), subject_terms=SubjectTerms())
    items = scifact_given_items(data_dir / "scifact" / "claims_train.jsonl", 3)
    rows = collect_given(verifier, SpacySentenceSplitter(), "scifact-train-given", items)
    assert len(rows) == 3
    for r in rows:
        assert kind_of(r) == "given" and r["label"] in VERDICTS and r["dataset"] == "scifact-train-given"
        assert set(r["titles"].values()) == {""}  # given documents carry no title, as eval grounding stores them
    # every sentence judged (16 + 7 + 32 for these three claims): a pruned verifier stops at 8 a claim
    judged = sum(1 for r in rows for j in r["judgements"] if j["kind"] == "sentence")
    assert judged > 3 * Thresholds().judge_sentences


def test_fever_given_items_pair_each_article_with_its_silent_twin(data_dir):
    """benchmarks/fit_verdicts.fever_given_items: a FEVER claim whose subject has its own
    article holding the gold evidence gets that article (FEVER's label) and the article with
    the evidence sentence deleted (NEI); a claim about a subject without an article, or whose
    article lacks the evidence, gives nothing; blind articles are never used."""
    from benchmarks.fit_verdicts import fever_given_items
    from models.nlp import SubjectTerms

    with open(data_dir / "fixtures" / "wiki_vital_summaries_300.jsonl", encoding="utf-8") as fh:
        docs = {d["title"]: d["text"] for d in map(json.loads, fh)}
    text = docs["Age of Enlightenment"]
    evidence = "It reached its peak in the 18th century as its ideas spread more widely across Europe"
    assert evidence in text
    claims = [
        ("The Age of Enlightenment peaked in the 18th century.", "SUPPORTS", [evidence]),
        ("The Age of Enlightenment peaked in the 12th century.", "REFUTES", [evidence]),
        ("Zorblax Quintaine was a Martian poet.", "SUPPORTS", ["Zorblax Quintaine was a Martian poet."]),
        ("The Age of Enlightenment was named by a committee.", "SUPPORTS", ["It was named by a committee in 1900."]),
    ]
    items = fever_given_items(claims, docs, 10, SubjectTerms())
    assert [gold for _, _, gold in items] == ["supported", "not_enough_info", "refuted", "not_enough_info"]
    assert items[0][1] == [text]
    assert "18th century" not in items[1][1][0] and items[1][1][0].startswith("The Age of Enlightenment")
    assert fever_given_items(claims, docs, 10, SubjectTerms(), blind_titles=frozenset({"Age of Enlightenment"})) == []
    assert len(fever_given_items(claims, docs, 1, SubjectTerms())) == 2  # the limit counts claims
