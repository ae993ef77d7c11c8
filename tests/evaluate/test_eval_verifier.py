"""Verifier benchmark: dataset loaders, classification / calibration metrics, the eval driver."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

from core.errors import InputError
from core.evaluate.datasets import (
    DATASET_LABELS,
    NLIExample,
    detokenize_fever,
    load_climate_fever,
    load_fever_symmetric,
    load_nli,
    load_scifact_pairs,
    load_verifier_dataset,
    load_vitaminc,
    load_wice,
)
from core.evaluate.metrics import (
    accuracy,
    balanced_accuracy,
    confusion,
    expected_calibration_error,
    fit_temperature,
    macro_f1,
    per_class_f1,
)
from core.evaluate.verifier import calibration_split, evaluate_verifier, fit_interval_rule, format_table
from core.text import content_words
from core.verify.calibration import apply_temperature


@pytest.fixture(scope="module")
def fx(data_dir):
    return data_dir / "fixtures"


def _write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- loaders


def test_fever_symmetric_fixture_is_detokenised(fx):
    ex = load_fever_symmetric(fx / "fever_symmetric_dev_20.jsonl")
    assert len(ex) == 20
    assert Counter(e.label for e in ex) == {"entailment": 10, "contradiction": 10}
    assert ex[0].hypothesis == "Bermuda Triangle is also known by another name."
    assert ex[0].premise.startswith("The Bermuda Triangle, also known as the Devil's Triangle, is a loosely-defined")
    assert ex[0].label == "entailment" and ex[1].label == "contradiction"
    sullivan = next(e for e in ex if e.hypothesis == "Anne Sullivan was born in April of 1866.")
    assert sullivan.premise.startswith("Johanna Mansfield Sullivan Macy (June 14, 1866 -- October 20, 1936), better known")
    perry = next(e for e in ex if "Katy Perry" in e.hypothesis)
    assert perry.premise.startswith('"I Kissed a Girl" is a song')
    assert perry.premise.endswith("One of the Boys (2008).")
    for e in ex:
        for token in ("-LRB-", "-RRB-", "-LSB-", "-RSB-", " .", " ,", " 's", "``"):
            assert token not in e.premise and token not in e.hypothesis, (token, e)


def test_detokenize_fever_rules():
    assert detokenize_fever("X -LSB- a -RSB- -COLON- b , c 's d n't .") == "X [a]: b, c's dn't."
    assert detokenize_fever("`` Q '' is -LRB- 1 -RRB- ; ok") == '"Q" is (1); ok'


def test_vitaminc_fixture_labels(fx):
    ex = load_vitaminc(fx / "vitaminc_pairs_30.jsonl")
    assert len(ex) == 30
    assert Counter(e.label for e in ex) == {"neutral": 10, "contradiction": 10, "entailment": 10}
    assert ex[0].hypothesis.startswith("British cruise ship Diamond Princess")
    assert ex[0].premise.startswith("On 5 February 2020")
    assert all(e.group is None for e in ex)  # the fixture has no `page`


def test_vitaminc_dev_split_is_page_disjoint(tmp_path):
    pages = [f"Page {i}" for i in range(40)]
    rows = [{"claim": f"c{i}", "evidence": f"e{i}", "label": "SUPPORTS", "page": p} for i, p in enumerate(pages)]
    f = _write_jsonl(tmp_path / "v.jsonl", rows)
    want_dev = {p for p in pages if int(hashlib.sha1(p.encode()).hexdigest(), 16) % 5 == 0}
    assert 0 < len(want_dev) < len(pages)
    dev = load_verifier_dataset("vitaminc", f, split="dev")
    train = load_vitaminc(f, split="train")
    assert {e.group for e in dev} == want_dev
    assert {e.group for e in train} == set(pages) - want_dev
    with pytest.raises(InputError, match="unknown vitaminc split"):
        load_vitaminc(f, split="test")
    rows[2] = {"claim": "c", "evidence": "e", "label": "REFUTES"}
    _write_jsonl(f, rows)
    with pytest.raises(InputError, match=r"line 3: missing field 'page'"):
        load_vitaminc(f, split="dev")
    assert len(load_vitaminc(f)) == 40  # without a split, `page` is optional


def test_climate_fever_one_pair_per_evidence(fx):
    ex = load_climate_fever(fx / "climate_fever_dev_10.jsonl")
    assert len(ex) == 50
    assert Counter(e.label for e in ex) == {"neutral": 32, "contradiction": 10, "entailment": 8}
    groups = Counter(e.group for e in ex)
    assert len(groups) == 10 and set(groups.values()) == {5}
    assert ex[0].group == "2994" and ex[0].label == "neutral" and ex[1].label == "entailment"
    assert ex[1].premise.startswith("Measurements of CO 2 from the Mauna Loa observatory")
    assert sum(e.meta["claim_label"] == "DISPUTED" for e in ex) == 10  # claim level only
    assert DATASET_LABELS["climate-fever"] == ("entailment", "neutral", "contradiction")


def test_wice_claim_level_fixture_is_two_way(fx):
    ex = load_wice(fx / "wice_dev_6.jsonl")
    rows = [json.loads(line) for line in (fx / "wice_dev_6.jsonl").open(encoding="utf-8")]
    assert len(ex) == 6
    assert [e.label for e in ex] == ["entailment" if r["label"] == "supported" else "not_entailment" for r in rows]
    assert Counter(e.meta["wice_label"] for e in ex) == {"supported": 2, "partially_supported": 2, "not_supported": 2}
    assert ex[0].premise == " ".join(s.strip() for s in rows[0]["evidence"] if s.strip())
    assert ex[0].hypothesis == rows[0]["claim"] and ex[0].group == rows[0]["meta"]["id"]
    assert DATASET_LABELS["wice"] == ("entailment", "not_entailment")


def test_wice_oracle_chunks_format(tmp_path):
    rows = [
        {"label": "supported", "claim": "A won.", "evidence": ["A won the race.", " ", "B lost."], "meta": {"id": "dev1", "oracle_idx": [0]}},
        {"label": "not_supported", "claim": "A won.", "evidence": ["C."], "meta": {"id": "dev1"}},
    ]
    ex = load_verifier_dataset("wice", _write_jsonl(tmp_path / "w.jsonl", rows))
    assert [(e.premise, e.label, e.group) for e in ex] == [
        ("A won the race. B lost.", "entailment", "dev1"),
        ("C.", "not_entailment", "dev1"),
    ]
    rows[1]["label"] = "refuted"
    with pytest.raises(InputError, match=r"line 2: unknown label 'refuted'"):
        load_wice(_write_jsonl(tmp_path / "w.jsonl", rows))


def test_scifact_pairs_from_rationales_and_nei(fx):
    claims, corpus = fx / "scifact_mini_claims.jsonl", fx / "scifact_mini_corpus.jsonl"
    ex = load_verifier_dataset("scifact", claims, corpus=corpus)
    assert len(ex) == 27
    assert Counter(e.label for e in ex) == {"entailment": 12, "contradiction": 10, "neutral": 5}
    docs = {str(json.loads(line)["doc_id"]): json.loads(line)["abstract"] for line in corpus.open(encoding="utf-8")}
    # claim 166: two CONTRADICT rationale sets on doc 18872233, sentences 9 and 12
    e166 = next(e for e in ex if e.group == "166")
    assert e166.label == "contradiction"
    assert e166.premise == docs["18872233"][9].strip() + " " + docs["18872233"][12].strip()
    # NEI claim 74: the 3 sentences of its cited doc with the most claim content words, in order
    e74 = next(e for e in ex if e.group == "74")
    assert e74.label == "neutral" and e74.meta["doc_id"] == "4387784"
    sents = docs["4387784"]
    chosen = e74.meta["sentences"]
    assert len(chosen) == 3 and chosen == sorted(chosen)
    cw = set(content_words(e74.hypothesis))
    overlap = [len(cw & set(content_words(s))) for s in sents]
    assert min(overlap[i] for i in chosen) >= max(overlap[i] for i in range(len(sents)) if i not in chosen)
    assert e74.premise == " ".join(sents[i].strip() for i in chosen)


def test_scifact_errors_name_file_and_line(fx, tmp_path):
    corpus = _write_jsonl(tmp_path / "corpus.jsonl", [{"doc_id": 1, "abstract": ["s0.", "s1."]}])
    claims = tmp_path / "claims.jsonl"
    _write_jsonl(claims, [
        {"id": 1, "claim": "c", "evidence": {"1": [{"sentences": [1], "label": "SUPPORT"}]}, "cited_doc_ids": [1]},
        {"id": 2, "claim": "c", "evidence": {"1": [{"sentences": [5], "label": "SUPPORT"}]}, "cited_doc_ids": [1]},
    ])
    with pytest.raises(InputError, match=r"claims.jsonl, line 2: rationale sentence 5"):
        load_scifact_pairs(claims, corpus)
    _write_jsonl(claims, [{"id": 3, "claim": "c", "evidence": {}, "cited_doc_ids": [99]}])
    with pytest.raises(InputError, match=r"line 1: document 99 is not in the corpus"):
        load_scifact_pairs(claims, corpus)
    _write_jsonl(claims, [{"id": 4, "claim": "c", "evidence": {"1": [{"sentences": [0], "label": "MAYBE"}]}}])
    with pytest.raises(InputError, match=r"line 1: unknown label 'MAYBE'"):
        load_scifact_pairs(claims, corpus)
    with pytest.raises(InputError, match="needs the corpus"):
        load_verifier_dataset("scifact", fx / "scifact_mini_claims.jsonl")


def test_nli_reads_gzip_and_plain(tmp_path):
    rows = [
        {"premise": "p1", "hypothesis": "h1", "label": "entailment", "source": "x"},
        {"premise": "p2", "hypothesis": "h2", "label": "NEUTRAL"},
        {"premise": "p3", "hypothesis": "h3", "label": "contradiction"},
    ]
    gz = tmp_path / "dev.jsonl.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(json.dumps(r) for r in rows) + "\n")
    ex = load_verifier_dataset("nli", gz)
    assert [(e.premise, e.hypothesis, e.label) for e in ex] == [
        ("p1", "h1", "entailment"), ("p2", "h2", "neutral"), ("p3", "h3", "contradiction")]
    assert load_nli(_write_jsonl(tmp_path / "dev.jsonl", rows)) == ex
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps(rows[0]) + "\n{oops\n")
    with pytest.raises(InputError, match=r"dev.jsonl.gz, line 2: malformed JSON"):
        load_nli(gz)
    (tmp_path / "bad.jsonl.gz").write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match="gzip"):
        load_nli(tmp_path / "bad.jsonl.gz")


def test_malformed_lines_are_reported_with_line_numbers(tmp_path):
    good = {"claim": "c", "evidence": "e", "label": "SUPPORTS"}
    f = tmp_path / "fs.jsonl"
    _write_jsonl(f, [good, "{not json"])
    with pytest.raises(InputError, match=r"fs.jsonl, line 2: malformed JSON"):
        load_fever_symmetric(f)
    _write_jsonl(f, [good, good, {"claim": "c", "label": "REFUTES"}])
    with pytest.raises(InputError, match=r"line 3: missing field 'evidence'"):
        load_fever_symmetric(f)
    _write_jsonl(f, [{"claim": "c", "evidence": "e", "label": "NOT ENOUGH INFO"}])
    with pytest.raises(InputError, match=r"line 1: unknown label 'NOT ENOUGH INFO'"):
        load_fever_symmetric(f)  # FEVER-Symmetric is 2-way
    _write_jsonl(f, [{"claim_id": "1", "claim": "c", "evidences": [{"evidence": "e"}]}])
    with pytest.raises(InputError, match=r"line 1: missing field 'evidence_label'"):
        load_climate_fever(f)
    _write_jsonl(f, [""])
    with pytest.raises(InputError, match="contains no examples"):
        load_fever_symmetric(f)
    with pytest.raises(InputError, match="unknown verifier dataset 'fever'"):
        load_verifier_dataset("fever", f)
    with pytest.raises(InputError, match="only used by the scifact"):
        load_verifier_dataset("fever-symmetric", f, corpus=f)
    with pytest.raises(InputError, match="no such dataset file"):
        load_verifier_dataset("nli", tmp_path / "missing.jsonl")


# --------------------------------------------------------------------------- metrics


def test_classification_metrics_by_hand():
    labels = ("entailment", "neutral", "contradiction")
    gold = ["entailment", "entailment", "contradiction", "contradiction"]
    pred = ["entailment", "contradiction", "contradiction", "neutral"]
    assert accuracy(gold, pred) == 0.5
    # E: tp 1, fn 1 → 2/3; C: tp 1, fp 1, fn 1 → 1/2; N: predicted once, never gold → 0
    f1 = per_class_f1(gold, pred, labels)
    assert f1 == pytest.approx({"entailment": 2 / 3, "neutral": 0.0, "contradiction": 0.5})
    assert macro_f1(gold, pred, labels) == pytest.approx((2 / 3 + 0 + 0.5) / 3)
    # a class neither gold nor predicted is left out of the mean (scikit-learn convention)
    assert per_class_f1(["entailment", "contradiction"], ["entailment", "contradiction"], labels)["neutral"] is None
    assert macro_f1(["entailment", "contradiction"], ["entailment", "entailment"], labels) == pytest.approx((2 / 3 + 0) / 2)
    assert balanced_accuracy(gold, pred, labels) == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert balanced_accuracy(["a", "a", "a", "b"], ["a", "a", "b", "b"]) == pytest.approx((2 / 3 + 1) / 2)
    assert confusion(gold, pred, labels)["contradiction"] == {"entailment": 0, "neutral": 1, "contradiction": 1}
    with pytest.raises(ValueError):
        macro_f1(["x"], ["entailment"], labels)


def test_expected_calibration_error_by_hand():
    conf = [0.9, 0.9, 0.6, 0.6, 0.3]
    ok = [True, False, True, True, False]
    # 5 bins: (0.8, 1]: acc .5 vs .9 → 2/5·.4; (0.4, 0.6]: acc 1 vs .6 → 2/5·.4; (0.2, 0.4]: 0 vs .3 → 1/5·.3
    assert expected_calibration_error(conf, ok, n_bins=5) == pytest.approx(0.16 + 0.16 + 0.06)
    assert expected_calibration_error([1.0, 1.0], [True, True]) == 0.0
    assert expected_calibration_error([0.75, 0.75, 0.75, 0.75], [1, 1, 1, 0]) == pytest.approx(0.0)
    # bins are right-closed: 0.5 shares (0.25, 0.5] with 0.4 → |0.5 − 0.45|
    assert expected_calibration_error([0.5, 0.4], [True, False], n_bins=4) == pytest.approx(0.05)


def test_temperature_scaling_recovers_known_temperature():
    rng = np.random.default_rng(0)
    z = rng.normal(0, 3, size=(20000, 3))
    for true_t in (2.5, 0.6):
        p = np.exp(z / true_t)
        p /= p.sum(axis=1, keepdims=True)
        y = np.array([rng.choice(3, p=row) for row in p])
        assert fit_temperature(z, y) == pytest.approx(true_t, rel=0.06)
        # log-probabilities of an over-confident model: log softmax(z) are valid logits too
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        assert fit_temperature(logp, y) == pytest.approx(true_t, rel=0.06)


def test_apply_temperature_by_hand():
    p = np.array([[0.7, 0.2, 0.1]])
    assert apply_temperature(p, 1.0) == pytest.approx(p)
    s = math.sqrt(0.7) + math.sqrt(0.2) + math.sqrt(0.1)
    assert apply_temperature(p, 2.0)[0] == pytest.approx([math.sqrt(0.7) / s, math.sqrt(0.2) / s, math.sqrt(0.1) / s])
    assert apply_temperature(p, 1e6)[0] == pytest.approx([1 / 3] * 3, abs=1e-5)


# --------------------------------------------------------------------------- driver


class FakeNLI:
    """Deterministic stand-in for models.nli.NLIModel: fixed or oracle probabilities."""

    def __init__(self, fn):
        self.fn = fn
        self.ref = SimpleNamespace(manifest=lambda: {"model_id": "fake", "sha256": None})
        self.calls = 0

    def predict(self, pairs, batch_size=32):
        self.calls += 1
        return np.array([self.fn(p, h) for p, h in pairs], dtype=np.float64)


def _oracle(examples, confidence=0.9):
    gold = {(e.premise, e.hypothesis): e.label for e in examples}
    cols = {"entailment": 0, "neutral": 1, "contradiction": 2, "not_entailment": 1}
    rest = (1 - confidence) / 2

    def fn(p, h):
        row = [rest] * 3
        row[cols[gold[(p, h)]]] = confidence
        return row

    return FakeNLI(fn)


class FakeEmbedder:
    """Bag-of-words vectors hashed into 64 dims, unit length."""

    ref = SimpleNamespace(manifest=lambda: {"model_id": "fake-embedder"})

    def encode(self, texts, batch_size=32, progress=None):
        out = np.zeros((len(texts), 64))
        for i, t in enumerate(texts):
            for w in content_words(t):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1)


def _eval_share(report, label):
    sys = next(iter(report["systems"].values()))
    rows = sys["confusion"]
    return sum(rows[label].values()) / sum(sum(r.values()) for r in rows.values())


def test_evaluate_verifier_perfect_and_constant_models(fx):
    path = fx / "climate_fever_dev_10.jsonl"
    examples = load_climate_fever(path)
    perfect = _oracle(examples)
    constant = FakeNLI(lambda p, h: [0.2, 0.5, 0.3])
    calls = []
    report = evaluate_verifier(
        dataset="climate-fever", path=path, models={"perfect": perfect, "constant": constant}, baselines=True,
        limit=None, embedder_factory=FakeEmbedder, progress=lambda name, k, total: calls.append((name, k, total)),
    )
    assert {"task", "dataset", "path", "n", "systems", "manifest", "timing", "machine", "calibration_split"} <= set(report)
    assert report["task"] == "verifier" and report["dataset"] == "climate-fever" and report["n"] == 50
    split = report["calibration_split"]
    assert split["n_fit"] + split["n_eval"] == 50 and split["n_fit"] == 25  # whole claims of 5 pairs
    assert set(report["systems"]) == {"perfect", "constant", "baseline:majority", "baseline:lexical", "baseline:cosine"}
    p = report["systems"]["perfect"]
    for key in ("accuracy", "macro_f1", "balanced_accuracy", "per_class_f1", "ece", "ece_after_temperature",
                "temperature", "pairs_per_s", "confusion"):
        assert key in p
    assert p["accuracy"] == 1.0 and p["macro_f1"] == 1.0 and p["all_examples"]["accuracy"] == 1.0
    assert p["ece"] == pytest.approx(0.1)  # always right at confidence 0.9
    assert p["temperature"] < 1 and p["ece_after_temperature"] < 0.01  # sharpened on the fitting half
    assert p["pairs_per_s"] > 0
    c = report["systems"]["constant"]  # always neutral, the majority label (32 of 50)
    assert c["all_examples"]["accuracy"] == pytest.approx(32 / 50)
    assert c["accuracy"] == pytest.approx(_eval_share(report, "neutral"))
    assert c["per_class_f1"]["entailment"] == 0.0
    maj = report["systems"]["baseline:majority"]
    assert maj["rule"]["label"] == "neutral" and maj["accuracy"] == pytest.approx(c["accuracy"])
    lex = report["systems"]["baseline:lexical"]
    assert len(lex["rule"]["thresholds"]) == 2 and sorted(lex["rule"]["intervals_low_to_high"]) == sorted(DATASET_LABELS["climate-fever"])
    assert 0 <= report["systems"]["baseline:cosine"]["accuracy"] <= 1
    assert report["manifest"]["models"]["perfect"]["model_id"] == "fake"
    assert {name for name, _, _ in calls} >= {"perfect", "constant"}
    table = format_table(report)
    assert "macro-F1" in table and "baseline:lexical" in table and "F1:N" in table
    json.dumps(report)  # serialisable


def test_two_way_decision_rules(fx, tmp_path):
    # fever-symmetric: the larger of P(E) and P(C), even when P(N) is the largest
    fs = fx / "fever_symmetric_dev_20.jsonl"
    r = evaluate_verifier(dataset="fever-symmetric", path=fs, models={"m": FakeNLI(lambda p, h: [0.3, 0.45, 0.25])},
                          baselines=False, limit=None)
    assert r["systems"]["m"]["all_examples"]["accuracy"] == 0.5
    assert r["systems"]["m"]["accuracy"] == pytest.approx(_eval_share(r, "entailment"))
    assert set(r["systems"]["m"]["per_class_f1"]) == {"entailment", "contradiction"}
    gold = {(e.premise, e.hypothesis): e.label for e in load_fever_symmetric(fs)}
    neutral_heavy = FakeNLI(lambda p, h: [0.3, 0.45, 0.25] if gold[(p, h)] == "entailment" else [0.25, 0.45, 0.3])
    r = evaluate_verifier(dataset="fever-symmetric", path=fs, models={"m": neutral_heavy}, baselines=False, limit=None)
    assert r["systems"]["m"]["all_examples"]["accuracy"] == 1.0
    assert r["systems"]["m"]["ece"] == pytest.approx(1 - 0.3 / 0.55)  # P(E), P(C) renormalised
    # wice: entailment iff P(E) > 0.5 (strictly)
    w = fx / "wice_dev_6.jsonl"
    at = evaluate_verifier(dataset="wice", path=w, models={"m": FakeNLI(lambda p, h: [0.5, 0.3, 0.2])}, baselines=False, limit=None)
    above = evaluate_verifier(dataset="wice", path=w, models={"m": FakeNLI(lambda p, h: [0.51, 0.3, 0.19])}, baselines=False, limit=None)
    assert at["systems"]["m"]["all_examples"]["accuracy"] == pytest.approx(4 / 6)
    assert above["systems"]["m"]["all_examples"]["accuracy"] == pytest.approx(2 / 6)
    assert at["manifest"]["threshold"] == 0.5


def test_evaluate_verifier_limit_seed_and_bad_model(fx):
    path = fx / "vitaminc_pairs_30.jsonl"
    examples = load_vitaminc(path)
    r = evaluate_verifier(dataset="vitaminc", path=path, models={"o": _oracle(examples)}, baselines=False, limit=7, seed=3)
    assert r["n"] == 7 and r["calibration_split"]["n_fit"] == 3 and r["calibration_split"]["n_eval"] == 4
    assert r["systems"]["o"]["accuracy"] == 1.0
    with pytest.raises(ValueError, match="expected"):
        evaluate_verifier(dataset="vitaminc", path=path, models={"bad": FakeNLI(lambda p, h: [1.0, 0.0])},
                          baselines=False, limit=None)


def test_calibration_split_keeps_groups_together():
    ex = [NLIExample("p", "h", "entailment", group=str(i // 3)) for i in range(30)] + [
        NLIExample("p", "h", "neutral") for _ in range(10)]
    fit, ev = calibration_split(ex, seed=1)
    assert len(fit) + len(ev) == 40 and not set(fit) & set(ev)
    assert abs(len(fit) - 20) <= 2
    fit_groups = {ex[i].group for i in fit if ex[i].group is not None}
    ev_groups = {ex[i].group for i in ev if ex[i].group is not None}
    assert not fit_groups & ev_groups
    again = calibration_split(ex, seed=1)
    assert (again[0] == fit).all()
    assert not np.array_equal(calibration_split(ex, seed=2)[0], fit)


def test_fit_interval_rule_by_hand():
    ts, order = fit_interval_rule(np.array([0.1, 0.2, 0.8, 0.9]), np.array([1, 1, 0, 0]), 2)
    assert ts == [0.8] and order == (1, 0)  # ≥ 0.8 → label 0 (entailment)
    ts, order = fit_interval_rule(np.array([0.1, 0.5, 0.9, 0.95]), np.array([1, 2, 0, 0]), 3)
    assert ts == [0.5, 0.9] and order == (1, 2, 0)  # low → neutral, mid → contradiction, high → entailment
    # an inverted relation is found too
    ts, order = fit_interval_rule(np.array([0.1, 0.2, 0.8, 0.9]), np.array([0, 0, 1, 1]), 2)
    assert order == (0, 1) and ts == [0.8]
