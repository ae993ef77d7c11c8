"""NLI loading, label mapping, windows, and verdict aggregation (incl. conflicting)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from core.verify.base import Thresholds
from core.verify.calibration import apply_temperature
from core.verify.verifier import ClaimVerdict, EvidenceUnit, Judgement, PassageEvidence, Verifier
from models.nli import CONTRADICT, ENTAIL, NEUTRAL, label_mapping, load_nli
from models.registry import ModelError
from tests.conftest import save_tiny_classifier


def _tiny_model(folder, id2label):
    return save_tiny_classifier(folder, id2label)


PAIRS = [("The cat sat on the mat.", "A cat sat."), ("Paris is in France.", "Paris is in Spain."), ("x y z", "nothing")]


def test_plugin_label_order_is_read_from_id2label(tmp_path):
    import shutil

    _tiny_model(tmp_path / "std", {0: "entailment", 1: "neutral", 2: "contradiction"})
    shutil.copytree(tmp_path / "std", tmp_path / "rev")
    cfg = (tmp_path / "rev" / "config.json").read_text()
    # same weights, label names in the opposite order: output columns must follow the names
    cfg = cfg.replace('"0": "entailment"', '"0": "TMP"').replace('"2": "contradiction"', '"2": "entailment"').replace('"0": "TMP"', '"0": "contradiction"')
    (tmp_path / "rev" / "config.json").write_text(cfg)
    std = load_nli(str(tmp_path / "std"), max_length=64).predict(PAIRS)
    rev = load_nli(str(tmp_path / "rev"), max_length=64).predict(PAIRS)
    assert np.allclose(std.sum(1), 1.0, atol=1e-5)
    assert np.allclose(rev[:, [ENTAIL, NEUTRAL, CONTRADICT]], std[:, [CONTRADICT, NEUTRAL, ENTAIL]], atol=1e-6)


def test_two_label_model_maps_to_entailment_and_neutral(tmp_path):
    _tiny_model(tmp_path / "bin", {0: "unsupported", 1: "supported"})
    probs = load_nli(str(tmp_path / "bin"), max_length=64).predict(PAIRS)
    assert np.all(probs[:, CONTRADICT] == 0) and np.allclose(probs.sum(1), 1.0, atol=1e-5)
    assert label_mapping({0: "LABEL_0", 1: "LABEL_1"}) == [NEUTRAL, ENTAIL]  # MiniCheck convention
    assert label_mapping({0: "SUPPORTS", 1: "REFUTES"}) == [ENTAIL, CONTRADICT]
    with pytest.raises(ModelError, match="cannot map the model's label 'label_0'"):
        label_mapping({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})


def test_bad_model_paths_and_pickle_checkpoints_are_refused(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        load_nli(str(tmp_path / "missing"))
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text("{}")
    (pickled / "pytorch_model.bin").write_bytes(b"\x80\x04pickle")
    with pytest.raises(ModelError, match="only pickle checkpoints"):
        load_nli(str(pickled))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelError, match="no model weights"):
        load_nli(str(empty))
    with pytest.raises(ModelError, match="neither a local folder nor in the local Hugging Face cache"):
        load_nli("some-org/not-downloaded-nli")


def test_long_evidence_is_windowed_and_the_claim_kept_whole(tmp_path):
    _tiny_model(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"})
    nli = load_nli(str(tmp_path / "m"), max_length=64)
    evidence = " ".join(f"Sentence number {i} is about topic {i}." for i in range(40))
    claim = "Sentence number 5 is about topic 5."
    spans = nli.windows(evidence, claim)
    assert len(spans) > 2 and spans[0][0] == 0 and spans[-1][1] == len(evidence)
    assert all(b[0] < a[1] for a, b in itertools.pairwise(spans))  # windows overlap
    (pred,) = nli.predict_long([(evidence, claim)])
    assert pred.n_windows == len(spans) and pred.span == spans[pred.window]
    assert np.isclose(pred.probs.sum(), 1.0, atol=1e-5)
    short = nli.predict_long([("Short evidence.", claim)])[0]
    assert (short.n_windows, short.window) == (1, 0)
    huge_claim = " ".join(["a very long claim"] * 40)  # longer than the model's 64 tokens
    (huge,) = nli.predict_long([(evidence, huge_claim)])
    assert huge.n_windows == 1 and np.isclose(huge.probs.sum(), 1.0, atol=1e-5)


def _j(pid, e, n, c, kind="sentence"):
    return Judgement(EvidenceUnit(pid, kind, (0,), f"t{pid}", pid), np.array([e, n, c], dtype=np.float32))


@pytest.mark.parametrize(
    ("probs", "label", "deciding"),
    [
        ([(0.9, 0.05, 0.05), (0.1, 0.8, 0.1)], "supported", 0),
        ([(0.1, 0.2, 0.7), (0.3, 0.6, 0.1)], "refuted", 0),
        ([(0.3, 0.6, 0.1), (0.2, 0.5, 0.3)], "not_enough_info", 0),
        ([(0.95, 0.03, 0.02), (0.05, 0.05, 0.9)], "conflicting", 0),
        ([(0.6, 0.3, 0.1), (0.1, 0.3, 0.6)], "supported", 0),  # ICAT: any entailing unit supports
        ([(0.55, 0.4, 0.05), (0.1, 0.1, 0.79)], "supported", 0),  # a weaker contradiction does not override
        ([(0.45, 0.5, 0.05), (0.1, 0.2, 0.7)], "refuted", 1),  # no support: the contradiction decides
    ],
)
def test_verdict_aggregation(probs, label, deciding):
    js = [_j(i, *p) for i, p in enumerate(probs)]
    icat = Thresholds(support=0.5, refute=0.5, conflict=0.8)  # the rules as ICAT states them
    v: ClaimVerdict = Verifier(nli=None, thresholds=icat).decide(js)  # type: ignore[arg-type]
    assert v.label == label
    assert v.deciding is js[deciding]
    e, _, c = probs[deciding]
    assert v.support == pytest.approx(e - c)
    assert -1.0 <= v.support <= 1.0


def test_no_evidence_is_not_enough_info():
    v = Verifier(nli=None).decide([])  # type: ignore[arg-type]
    assert (v.label, v.support, v.deciding) == ("not_enough_info", 0.0, None)


class _ScriptedNLI:
    """Entails only when the evidence holds both halves of a two-part claim."""

    class ref:
        model_id = "scripted"

    def predict_long(self, pairs, batch_size=32):
        from models.nli import WindowedPrediction

        out = []
        for premise, _ in pairs:
            both = "born in Ulm" in premise and "physicist" in premise
            p = np.array([0.9, 0.05, 0.05] if both else [0.1, 0.85, 0.05], dtype=np.float32)
            out.append(WindowedPrediction(p, 0, 1, (0, len(premise))))
        return out


def test_multi_sentence_sets_decide_when_no_single_sentence_does():
    passages = [
        PassageEvidence(1, 1, ("Einstein was born in Ulm.",), "Einstein was born in Ulm."),
        PassageEvidence(2, 2, ("He worked as a theoretical physicist.",), "He worked as a theoretical physicist."),
    ]
    v = Verifier(_ScriptedNLI()).verify("Einstein, a physicist, was born in Ulm.", passages)  # type: ignore[arg-type]
    assert v.label == "supported"
    assert v.deciding.unit.kind == "set"
    assert v.deciding.unit.text == "Einstein was born in Ulm. He worked as a theoretical physicist."
    assert {j.unit.kind for j in v.judgements} == {"sentence", "set"}


def test_temperature_softens_and_keeps_argmax():
    p = np.array([[0.8, 0.15, 0.05]])
    soft = apply_temperature(p, 2.0)
    assert soft.argmax() == 0 and soft[0, 0] < 0.8 and np.isclose(soft.sum(), 1.0)
    assert np.allclose(apply_temperature(p, 1.0), p)
    assert (Thresholds().support, Thresholds().refute, Thresholds().conflict) == (0.60, 0.65, 0.65)


class _NameMatchingNLI:
    """Mimics the measured failure: entails whatever shares a place name with the claim."""

    class ref:
        model_id = "scripted"

    def predict_long(self, pairs, batch_size=32):
        from models.nli import WindowedPrediction

        out = []
        for premise, _ in pairs:
            if "Paris" in premise:
                p = [0.03, 0.02, 0.95]
            elif "Berlin" in premise:
                p = [0.85, 0.05, 0.10]
            else:
                p = [0.05, 0.9, 0.05]
            out.append(WindowedPrediction(np.array(p, dtype=np.float32), 0, 1, (0, len(premise))))
        return out


def test_grounding_guard_ignores_evidence_about_another_subject():
    from models.nlp import SubjectTerms

    passages = [
        PassageEvidence(1, 1, ("Berlin is the capital of Germany.",), "Berlin is the capital of Germany.", "Berlin"),
        PassageEvidence(2, 2, ("Berlin has a TV Tower.",), "Berlin has a TV Tower.", "Berlin TV Tower"),
        PassageEvidence(3, 3, ("It stands on the Champ de Mars in Paris.",), "It stands on the Champ de Mars in Paris.",
                        "Eiffel Tower"),
    ]
    claim = "The Eiffel Tower is located in Berlin."
    unguarded = Verifier(_NameMatchingNLI()).verify(claim, passages)  # type: ignore[arg-type]
    assert unguarded.label == "conflicting"
    guarded = Verifier(_NameMatchingNLI(), subject_terms=SubjectTerms()).verify(claim, passages)  # type: ignore[arg-type]
    assert guarded.label == "refuted" and guarded.deciding.unit.passage_id == 3  # the title names the subject
    # judged in order of shared claim words (TV Tower 2/4, Eiffel Tower 2/4 by rank, Berlin 1/4);
    # a refutation never stops the judging early: support could still come
    assert [j.unit.passage_id for j in guarded.judgements] == [2, 3, 1]
    assert [j.grounded for j in guarded.judgements] == [False, True, False]  # "Tower" alone is not enough


def test_pruning_judges_the_claims_own_sentences_and_keeps_the_verdict(data_dir):
    """Issue 18: only the sentences sharing most of the claim's words reach the cross-encoder.
    On SciFact's mini corpus (real passages, the embedded verifier) the pruned verifier judges
    at most 8 sentences + 3 passages (+ sets) and reaches the unpruned verdict."""
    import json

    docs = [json.loads(line) for line in (data_dir / "fixtures" / "scifact_mini_corpus.jsonl").open()]
    passages = [
        PassageEvidence(i, i + 1, tuple(d["abstract"]), " ".join(d["abstract"]), d["title"]) for i, d in enumerate(docs[:10])
    ]
    nli = load_nli()
    claim = passages[3].sentences[1]  # a sentence of passage 4 restated as the claim: it entails itself
    everything = Thresholds(judge_sentences=0, judge_passages=0, early_stop=1.0)
    full = Verifier(nli, everything).verify(claim, passages)
    pruned = Verifier(nli).verify(claim, passages)
    singles = [j for j in pruned.judgements if j.unit.kind != "set"]
    assert len([j for j in singles if j.unit.kind == "sentence"]) <= 8
    assert len([j for j in singles if j.unit.kind == "passage"]) <= 3
    assert len(pruned.judgements) < len(full.judgements) / 3
    assert pruned.label == full.label == "supported"
    assert pruned.deciding.unit.passage_id == 3 and pruned.deciding.unit.text == claim


def test_batched_verification_judges_what_each_claim_alone_would(data_dir):
    """Issue 18: a run verifies its claims together, each stage of all of them in one batched
    NLI call (first units, the rest unless decided early, sentence sets); each claim's units,
    verdict and probabilities (to float tolerance: batches pad differently) are those of
    verifying it alone."""
    import json

    docs = [json.loads(line) for line in (data_dir / "fixtures" / "scifact_mini_corpus.jsonl").open()]
    passages = [
        PassageEvidence(i, i + 1, tuple(d["abstract"]), " ".join(d["abstract"]), d["title"]) for i, d in enumerate(docs[:10])
    ]
    nli = load_nli()
    verifier = Verifier(nli)
    claims = [passages[3].sentences[1], "The moon is made of green cheese.", passages[0].sentences[0], passages[6].title]
    alone = [verifier.verify(c, passages) for c in claims]
    calls: list[int] = []
    predict_long = nli.predict_long

    def counting(pairs, batch_size=32):
        calls.append(len(pairs))
        return predict_long(pairs, batch_size)

    nli.predict_long = counting  # type: ignore[method-assign]
    together = verifier.verify_many([(c, passages) for c in claims])
    assert 1 <= len(calls) <= 3 and sum(calls) == sum(len(a.judgements) for a in alone)
    assert len({len(a.judgements) for a in alone}) > 1  # the claims took different paths (early stop, sets)
    for a, b in zip(alone, together, strict=True):
        assert [j.unit for j in a.judgements] == [j.unit for j in b.judgements]
        assert np.allclose([j.probs for j in a.judgements], [j.probs for j in b.judgements], atol=1e-4)
        assert (a.label, a.deciding.unit) == (b.label, b.deciding.unit)
        assert abs(a.support - b.support) < 1e-4
    assert verifier.verify_many([]) == []
