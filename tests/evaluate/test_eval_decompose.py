"""eval decompose: dataset loaders, the one-to-one matching rule, an end-to-end run."""

from __future__ import annotations

import numpy as np
import pytest

from core.decompose.base import SentenceDecomposer
from core.errors import InputError
from core.evaluate.decompose import evaluate_decompose, load_decompose_dataset, match


def test_loaders_read_gold_claims_per_sentence(data_dir):
    fs = load_decompose_dataset("factscore", data_dir / "fixtures" / "factscore_dev_4.jsonl")
    assert len(fs) == 4
    sent, gold = fs[0].sentences[0]
    assert sent.startswith("Lanny Flaherty is an American actor") and "Lanny Flaherty is an actor." in gold
    fc = load_decompose_dataset("factcheck-gpt", data_dir / "fixtures" / "factcheck_gpt_dev_3.jsonl")
    assert len(fc) == 3 and any(gold for _, gold in fc[0].sentences)
    with pytest.raises(InputError, match="unknown decomposition dataset"):
        load_decompose_dataset("wiki", data_dir / "fixtures" / "factscore_dev_4.jsonl")


def test_matching_is_a_maximum_one_to_one_matching():
    sims = np.array([[0.9, 0.8], [0.85, 0.1], [0.2, 0.3]])
    assert match(sims, 0.5) == 2  # greedy would stop at 1 ((0,0) blocks both others); (0,1)+(1,0) is maximal
    assert match(np.array([[0.9, 0.95]]), 0.5) == 1  # one produced claim matches one gold claim at most
    assert match(np.array([[0.5]]), 0.5, strict=True) == 0 and match(np.array([[0.5]]), 0.5) == 1
    assert match(np.zeros((0, 3)), 0.5) == 0


def test_end_to_end_with_the_sentence_decomposer(data_dir, splitter, embedder):
    report = evaluate_decompose(
        dataset="factscore", path=data_dir / "fixtures" / "factscore_dev_4.jsonl",
        decomposers={"sentence": SentenceDecomposer(splitter)}, matcher=embedder, method="embedding",
    )
    m = report["systems"]["sentence"]
    assert m["claims_per_sentence"] == pytest.approx(1.0, abs=0.05)  # one claim per sentence
    assert 0 < m["recall"] < m["precision"] <= 1  # a sentence covers few of its several atomic facts
    assert m["gold_claims_per_sentence"] > 2
