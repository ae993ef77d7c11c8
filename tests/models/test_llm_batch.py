"""Greedy calls decoded together (models/llm_batch.py, ``LLM.generate_many``) on the shipped atomic
decomposer's model: the answers are those of one call at a time on every machine, because the
batched path is taken only where this machine's kernels pass the invariance check, and the
one-by-one path is taken where they do not (forced here by perturbing the check)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from models.atomic import load_atomic_llm, messages, repeats

SENTENCES = [
    ("Marie Curie was a Polish and naturalised-French physicist and chemist who conducted pioneering research on radioactivity.", ""),
    ("She was the first woman to win a Nobel Prize.", "Marie Curie was a Polish and naturalised-French physicist."),
    ("She won the 1911 Nobel Prize in Chemistry for the discovery of polonium and radium.", "Marie Curie was a Polish physicist. She was the first woman to win a Nobel Prize."),
]


@pytest.fixture(scope="module")
def llm():
    return load_atomic_llm()


@pytest.fixture(scope="module")
def one_by_one(llm):
    return [llm.generate(messages(s, c), max_tokens=60, stop_when=repeats) for s, c in SENTENCES]


def test_generate_many_gives_each_call_its_own_answer(llm, one_by_one):
    convs = [messages(s, c) for s, c in SENTENCES]
    assert llm.generate_many(convs, max_tokens=60, stop_when=repeats) == one_by_one
    assert llm.batched_calls is llm._batched.invariant(llm.render(convs[0]))
    # more calls than sequences at once: a stream that finishes takes the next call waiting
    assert llm.generate_many(convs, max_tokens=60, stop_when=repeats, max_seq=2) == one_by_one
    assert all(t.startswith("- ") for t in one_by_one), one_by_one


def test_the_batched_path_where_the_check_passes(llm, one_by_one):
    """Where this machine passes the check, the batched decoder itself reproduces the calls (and
    copies a block two prompts share instead of evaluating it again); where it does not,
    generate_many must have gone one by one."""
    from models.llm_batch import BatchedGreedy

    b = BatchedGreedy(llm, 3)
    prompts = [llm.render(messages(s, c)) for s, c in SENTENCES]
    if b.invariant(prompts[0]):
        assert b.generate(prompts, 60, repeats) == one_by_one
        assert b.shared_tokens >= llm.prompt_block  # the two calls with a context share its first block
        cut = b.generate(prompts, 5, None)  # max_tokens as in generate
        assert cut == [llm.generate(messages(s, c), max_tokens=5) for s, c in SENTENCES]
    else:
        llm.generate_many([messages(s, c) for s, c in SENTENCES], max_tokens=60, stop_when=repeats)
        assert llm.batched_calls is False
    b.close()


def test_a_failed_check_decodes_one_by_one(one_by_one, monkeypatch, tmp_path):
    """A machine whose kernels give a row other numbers beside other rows: the check sees it and
    the answers still come one by one, unchanged; the outcome is recorded for this machine."""
    from models.llm_batch import CACHE_ENV, BatchedGreedy

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    llm = load_atomic_llm()
    plain = BatchedGreedy._logits
    monkeypatch.setattr(BatchedGreedy, "_logits", lambda self, i: plain(self, i) + np.float32(1e-3))
    convs = [messages(s, c) for s, c in SENTENCES]
    assert llm.generate_many(convs, max_tokens=60, stop_when=repeats) == one_by_one
    assert llm.batched_calls is False and llm._batched._invariant is False
    record = llm._batched._record()
    assert record.parent.parent == tmp_path and json.loads(record.read_text())["invariant"] is False


def test_the_check_is_read_back_from_its_record(llm, monkeypatch, tmp_path):
    """A second process on the same machine reads the check's outcome instead of decoding it again;
    another thread count is another record."""
    from models.llm_batch import CACHE_ENV, BatchedGreedy

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    prompt = llm.render(messages(*SENTENCES[1]))
    first = BatchedGreedy(llm, 3).invariant(prompt)
    assert len(list((tmp_path / "llm-batch").glob("*.json"))) == 1

    def no_decode(self, rows):
        raise AssertionError("the recorded check was measured again")

    monkeypatch.setattr(BatchedGreedy, "_decode", no_decode)
    assert BatchedGreedy(llm, 3).invariant(prompt) is first
    assert BatchedGreedy(llm, 3)._record() != BatchedGreedy(load_atomic_llm(n_threads=2), 3)._record()
