"""An LLM call is a pure function of (GGUF, prompt, sampling parameters, seed) on one machine.

The stage cache, run manifests and "resume recomputes nothing" rest on this. What used to
break it: llama.cpp's prefix reuse evaluated the rest of a prompt in another batch shape
after another prompt, and the floats moved (models/llm.py, ``LLM._prefill``). So every call
here follows prompts that share a prefix of another length with it — the case that failed —
and the answers are compared with those of a fresh process, to the byte and to 1e-9.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.llm import PROMPT_BLOCK, fence, load_llm

ROOT = Path(__file__).resolve().parents[1]

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 40}, "answer": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["city", "answer"],
    "additionalProperties": False,
}
SYSTEM = "You answer questions about places. Be brief and exact."
QUESTION = "Where is the Eiffel Tower? Is it in Europe? Text: "
TEXT = "The Eiffel Tower stands on the Champ de Mars in Paris, the capital of France."
WORDS = ("Yes", "No", "Maybe")


def messages(text: str = TEXT) -> list:
    return [("system", SYSTEM), ("user", [QUESTION, fence("TEXT", text)])]


def call(llm) -> dict:
    """The one prompt, three ways: greedy constrained JSON, a seeded sample, next-token
    log-probabilities. Floats travel as hex so nothing is lost between processes."""
    msgs = messages()
    return {
        "greedy": llm.generate(msgs, json_schema=SCHEMA, max_tokens=40),
        "sampled": llm.generate(msgs, max_tokens=24, temperature=0.9, seed=7),
        "logprobs": [float(x).hex() for x in llm.next_token_logprobs(msgs, WORDS)],
    }


CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from models.llm import load_llm
from tests.test_llm_determinism import call
llm = load_llm("embedded")
print(json.dumps([call(llm), call(llm)]))
"""


@pytest.fixture(scope="module")
def llm():
    return load_llm("embedded")


def test_same_call_same_answer_in_one_process_and_in_a_fresh_one(llm):
    first = call(llm)
    assert first["greedy"].startswith("{") and len(first["sampled"]) > 0
    results = [first]
    for i in range(1, 20):
        # Disturb the cache the way real use does: a prompt sharing a prefix of another
        # length (the same system prompt and question, other text) before each repeat.
        disturb = messages(TEXT[: 8 + 5 * i] + " and more words here" * (i % 3))
        llm.next_token_logprobs(disturb, WORDS)
        if i % 4 == 0:
            llm.generate(disturb, max_tokens=6)
        results.append(call(llm))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT)], capture_output=True, text=True, env=env,
                         timeout=600, check=True)
    results += json.loads(out.stdout.strip().splitlines()[-1])
    assert len(results) == 22

    for r in results:
        assert r["greedy"] == first["greedy"]  # byte-identical text
        assert r["sampled"] == first["sampled"]
        a = np.array([float.fromhex(x) for x in r["logprobs"]])
        b = np.array([float.fromhex(x) for x in first["logprobs"]])
        assert np.abs(a - b).max() <= 1e-9


def test_cached_blocks_are_reused_and_only_whole_ones(llm):
    """The speed half of the bargain: a prompt sharing a long prefix with the last one
    re-evaluates only what follows the last whole block they share."""
    a = llm.render(messages())
    b = llm.render(messages(TEXT + " It was finished in 1889."))
    shared = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    assert shared > PROMPT_BLOCK  # the test prompt is long enough to say something
    llm._prefill(a)
    assert llm._prefill(b) == shared - shared % PROMPT_BLOCK
    assert llm._prefill(b) == (len(b) - 1) - (len(b) - 1) % PROMPT_BLOCK  # same prompt: all but the last block
