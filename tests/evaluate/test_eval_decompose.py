"""eval decompose: dataset loaders, the one-to-one matching rule, an end-to-end run."""

from __future__ import annotations

import numpy as np
import pytest

from core.decompose.base import SentenceDecomposer
from core.errors import InputError
from core.evaluate.decompose import (
    FACTSCORE_REFERENCE,
    evaluate_decompose,
    format_table,
    in_fold,
    load_decompose_dataset,
    match,
    similarity,
    words,
)


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


def test_jaccard_matcher_on_a_hand_worked_example():
    # tokens: unique lower-cased runs of letters and digits ("-" and "'" split words)
    assert words("Polish-born Flaherty's career, Flaherty's.") == {"polish", "born", "flaherty", "s", "career"}
    produced = ["Marie Curie was born in Warsaw.", "Marie Curie won two Nobel Prizes in physics."]
    gold = ["Marie Curie was born in Warsaw in 1867.", "Marie Curie won two Nobel Prizes.", "She was a physicist."]
    sims = similarity("jaccard", None, produced, gold)
    # 6 shared of 7 words; 6 shared of 8; "marie curie" shared of 10 words
    assert sims[0, 0] == pytest.approx(6 / 7) and sims[1, 1] == pytest.approx(6 / 8) and sims[0, 1] == pytest.approx(2 / 10)
    assert match(sims, 0.6) == 2 and match(sims, 0.8) == 1
    # one-to-one: the same claim produced twice matches its gold claim once
    assert match(similarity("jaccard", None, [produced[0]] * 2, gold), 0.6) == 1


def test_jaccard_eval_scores_the_reference_decomposition_beside_the_decomposers(data_dir, splitter):
    path = data_dir / "fixtures" / "factscore_dev_4.jsonl"
    report = evaluate_decompose(dataset="auto", path=path, decomposers={"sentence": SentenceDecomposer(splitter)},
                                matcher=None, method="jaccard")
    ref = report["references"][FACTSCORE_REFERENCE]
    sent = report["systems"]["sentence"]
    assert report["matching"]["thresholds"] == [0.6, 0.8]
    # FActScore's own decomposition is close to people's (the ceiling); whole sentences are not
    assert ref["f1"] > 0.6 > sent["f1"]
    for row in (ref, sent):
        strict = row["by_threshold"]["0.8"]
        assert strict["matched"] <= row["matched"] and row["by_threshold"]["0.6"]["f1"] == pytest.approx(row["f1"])
        assert row["precision"] == pytest.approx(row["matched"] / row["produced"])
    assert "FActScore-InstructGPT (ref)" in format_table(report)


def test_feverfact_rows_and_topic_folds(data_dir):
    rows = load_decompose_dataset("auto", data_dir / "decomposition" / "feverfact.test.jsonl")
    assert len(rows) == 444 and all(r.kind == "feverfact" for r in rows)
    r = next(r for r in rows if r.start > 0)
    sentence, gold = r.sentences[0]
    assert r.text.endswith(sentence) and r.text.find(sentence) == r.start and gold
    assert set(r.references) >= {"gpt-4-turbo-3-shot", "t5_small_multiclaim"}
    topics = {a.topic for a in rows}
    kept, rest = {t for t in topics if in_fold(t, "0/3")}, {t for t in topics if in_fold(t, "!0/3")}
    assert kept and rest and not kept & rest and kept | rest == topics
    with pytest.raises(InputError, match="bad fold"):
        in_fold("x", "3/3")
