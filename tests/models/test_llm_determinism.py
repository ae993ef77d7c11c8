"""An LLM call is a pure function of (GGUF, prompt, sampling parameters, seed) on one machine.

The stage cache, run manifests and "resume recomputes nothing" rest on this. What used to
break it: llama.cpp's prefix reuse evaluated the rest of a prompt in another batch shape
after another prompt, and the floats moved (models/llm.py, ``LLM._prefill``). So every call
here follows prompts that share a prefix of another length with it — the case that failed —
and the answers are compared with those of a fresh process, to the byte and to 1e-9.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.llm import PROMPT_BLOCK, fence, load_llm

ROOT = Path(__file__).resolve().parents[2]

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 40}, "answer": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["city", "answer"],
    "additionalProperties": False,
}
SYSTEM = "You answer questions about places. Be brief and exact."
QUESTION = "Where is the Eiffel Tower? Is it in Europe? Text: "
# Long: the prompt (≈ 600 tokens) spans more than one of llama.cpp's default 512-token
# batches. Measured with an AVX2-only build of llama.cpp 0.3.36: the old prefix reuse moved
# P(Yes/No/Maybe) by 0.046 on a 519-token version of this prompt and not at all on 65-438
# tokens, so a short prompt would let that bug pass this test.
PARAGRAPH = (
    "The Eiffel Tower stands on the Champ de Mars in Paris, the capital of France. It was designed "
    "by the engineering company of Gustave Eiffel and built between 1887 and 1889 as the entrance "
    "arch of the 1889 World's Fair, held to mark the centenary of the French Revolution. Many "
    "artists and intellectuals of the time criticised its design, but it has since become a global "
    "cultural icon of France and one of the most recognisable structures in the world. The tower is "
    "330 metres tall, about the height of an 81-storey building, and was the tallest man-made "
    "structure in the world until the Chrysler Building in New York City was finished in 1930. It "
    "has three levels for visitors, with restaurants on the first and second levels. The top "
    "level's upper platform is 276 metres above the ground, the highest observation deck accessible "
    "to the public in the European Union. Tickets can be bought to ascend by stairs or lift to the "
    "first and second levels; the climb from ground level to the first level is over 300 steps. "
    "The tower is repainted every seven years, which takes about sixty tonnes of paint, and it is "
    "lit every evening by twenty thousand light bulbs that sparkle for five minutes every hour."
)
TEXT = PARAGRAPH + " Again, in other words: " + PARAGRAPH
WORDS = ("Yes", "No", "Maybe")


def messages(text: str = TEXT) -> list:
    return [("system", SYSTEM), ("user", [QUESTION, fence("TEXT", text)])]


OPS = ("greedy", "sampled", "logprobs")
ORDERS = list(itertools.permutations(OPS))


def call(llm, order=OPS) -> dict:
    """The one prompt, three ways, in the given order (so that each way meets every kind of
    cache the others leave): greedy constrained JSON, a seeded sample, next-token
    log-probabilities. Floats travel as hex so nothing is lost between processes."""
    msgs = messages()
    ways = {
        "greedy": lambda: llm.generate(msgs, json_schema=SCHEMA, max_tokens=40),
        "sampled": lambda: llm.generate(msgs, max_tokens=24, temperature=0.9, seed=7),
        "logprobs": lambda: [float(x).hex() for x in llm.next_token_logprobs(msgs, WORDS)],
    }
    return {way: ways[way]() for way in order}


CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from models.llm import load_llm
from tests.models.test_llm_determinism import call
llm = load_llm("embedded")  # a fresh process: the first call meets an empty cache
print(json.dumps([call(llm, ("logprobs", "greedy", "sampled")), call(llm, ("greedy", "logprobs", "sampled"))]))
"""


@pytest.fixture(scope="module")
def llm():
    return load_llm("embedded")


def test_same_call_same_answer_in_one_process_and_in_a_fresh_one(llm):
    first = call(llm)
    assert first["greedy"].startswith("{") and len(first["sampled"]) > 0
    results = [first]
    # Seven repeats are every order of the three ways (ORDERS[i % 6]) and every kind of
    # disturbance below at five prefix lengths; more repeats only cost CI time (20 took 127 s).
    repeats = 7
    for i in range(1, repeats + 1):
        # Disturb the cache the way real use does: a prompt sharing a prefix of another
        # length (the same system prompt and question, other text) before most repeats;
        # the three ways in every order, so each follows the same prompt and others.
        if i % 3:
            disturb = messages(TEXT[: 40 * i] + " and more words here" * (i % 3))
            llm.next_token_logprobs(disturb, WORDS)
            if i % 4 == 0:
                llm.generate(disturb, max_tokens=6)
        results.append(call(llm, ORDERS[i % len(ORDERS)]))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT)], capture_output=True, text=True, env=env,
                         timeout=600, check=True)
    results += json.loads(out.stdout.strip().splitlines()[-1])
    assert len(results) == repeats + 3  # first, the repeats, the fresh process's two

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
