"""The shipped verifier: loads offline from the repository and classifies real pairs."""

from __future__ import annotations

import numpy as np
import pytest

from core.evaluate.datasets import load_verifier_dataset
from models.nli import CONTRADICT, EMBEDDED_NLI_DIR, ENTAIL, load_nli


@pytest.fixture(scope="module")
def nli():
    return load_nli()  # the embedded default: models/verifier/, offline


def test_ships_safetensors_only_and_a_model_card():
    files = {p.name for p in EMBEDDED_NLI_DIR.iterdir()}
    assert "model.safetensors" in files and "config.json" in files and "README.md" in files
    assert not any(f.endswith((".bin", ".pt", ".pth", ".pkl")) for f in files)
    assert sum(p.stat().st_size for p in EMBEDDED_NLI_DIR.iterdir()) < 50 * 2**20


def test_vitaminc_fixture_three_way(nli, data_dir):
    ex = load_verifier_dataset("vitaminc", data_dir / "fixtures" / "vitaminc_pairs_30.jsonl")
    assert len(ex) == 30
    probs = nli.predict([(e.premise, e.hypothesis) for e in ex])
    labels = ("entailment", "neutral", "contradiction")
    gold = np.array([labels.index(e.label) for e in ex])
    # Balanced 10/10/10. Accuracy on 30 pairs cannot tell the model from a guesser (≥ .40 by
    # chance 28 % of the time), so the test is on the probabilities: each label's probability
    # is higher on the pairs of that label than on the others. Measured margins .14 / .31 /
    # .07 (entail / neutral / contradict); an uninformative model's are ≈ 0 ± .02.
    margins = [probs[gold == k, k].mean() - probs[gold != k, k].mean() for k in range(3)]
    assert min(margins) > 0.04, margins
    acc = np.mean(probs.argmax(1) == gold)
    assert acc >= 0.40, acc  # measured 0.433: the 300-pair test below is the accuracy test


def test_vitaminc_held_out_pages_three_way(nli, data_dir):
    """300 pairs from VitaminC pages the verifier never trained on (page-disjoint split)."""
    ex = load_verifier_dataset("vitaminc", data_dir / "vitaminc" / "real_dev_half.jsonl", split="dev")[:300]
    probs = nli.predict([(e.premise, e.hypothesis) for e in ex])
    labels = ("entailment", "neutral", "contradiction")
    acc = np.mean([labels[i] == e.label for i, e in zip(probs.argmax(1), ex, strict=True)])
    # measured 0.68 on these 300; chance is 1/3 and P(random ≥ 0.5 on 300 pairs) < 1e-8
    assert acc >= 0.50, acc


def test_fever_symmetric_fixture_two_way(nli, data_dir):
    ex = load_verifier_dataset("fever-symmetric", data_dir / "fixtures" / "fever_symmetric_dev_20.jsonl")
    probs = nli.predict([(e.premise, e.hypothesis) for e in ex])
    pred = np.where(probs[:, ENTAIL] >= probs[:, CONTRADICT], "entailment", "contradiction")
    acc = np.mean([p == e.label for p, e in zip(pred, ex, strict=True)])
    # measured 0.85; balanced 10/10: a constant model scores 0.5, P(random ≥ 0.8) < 0.006
    assert acc >= 0.80, acc


def test_strongest_window_finds_evidence_buried_in_long_text(nli):
    filler = " ".join(
        f"The committee met on day {i} to discuss the budget of the regional library network." for i in range(30)
    )
    evidence = filler + " Marie Curie was awarded the Nobel Prize in Chemistry in 1911."
    claim = "Marie Curie won the Nobel Prize in Chemistry."
    (pred,) = nli.predict_long([(evidence, claim)])
    assert pred.n_windows > 1 and pred.window == pred.n_windows - 1
    assert "Marie Curie" in evidence[pred.span[0] : pred.span[1]]
    assert pred.probs[ENTAIL] > 0.5
    truncated = nli.predict([(evidence, claim)])[0]  # the plain call only sees the filler
    assert truncated[ENTAIL] < pred.probs[ENTAIL]


def test_obvious_support_and_contradiction(nli):
    probs = nli.predict([
        ("Paris is the capital and largest city of France.", "Paris is the capital of France."),
        ("Paris is the capital and largest city of France.", "Paris is not the capital of France."),
        ("Paris is the capital and largest city of France.", "Bananas are rich in potassium."),
    ])
    assert probs.argmax(1).tolist() == [0, 2, 1]
