"""An LLM as the verifier: any GGUF chat model judges claim + evidence → supports / not
enough info / refutes, behind the same protocol as the NLI cross-encoder (models/nli.py), so
``Verifier(LLMJudge(load_llm(...)))`` works unchanged and ``--verifier llm`` selects it.

The three probabilities are read, not sampled: after a prompt that asks for exactly one of
three label words, the next-token log-probabilities of the three words' first tokens are
renormalised over those three (a softmax restricted to the allowed answers — the same
constraint a grammar ``root ::= w1 | w2 | w3`` would impose, but giving probabilities instead
of one sampled word). Columns are in ``models.nli.LABELS`` order (entailment, neutral,
contradiction; ICAT's order, seed 004 §5.4).

Evidence and claim are fenced data (models/llm.py): the instruction comes before them and is
repeated after them, and nothing inside them can open a chat turn. ``benchmarks/
prompt_injection.py`` measures how often injected text still flips the verdict.

Long evidence: windows of at most ``window_words`` words slide over it with half-window
stride; the most decisive window (max of P(entail), P(contradict)) decides, as in
``CrossEncoderNLI.predict_long``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.llm import FENCE_RULE, LLM, Message, fence
from models.nli import CONTRADICT, ENTAIL, WindowedPrediction

# First tokens must differ; index order = models.nli.LABELS (entailment, neutral, contradiction).
LABEL_WORDS = ("True", "Unknown", "False")

SYSTEM = "You are a careful fact-checker. " + FENCE_RULE

INSTRUCTION = (
    "Read the evidence, then decide whether it shows the claim is true. Answer True if the "
    "evidence supports the claim, False if the evidence contradicts the claim, Unknown if the "
    "evidence does not say."
)
QUESTION = "According to the evidence only, is the claim True, False or Unknown? Answer with one word."


class LLMJudge:
    """The NLI model protocol (``predict``, ``predict_long``, ``ref``) over an :class:`LLM`."""

    def __init__(self, llm: LLM, window_words: int = 200, label_words: Sequence[str] = LABEL_WORDS) -> None:
        if len(label_words) != 3:
            raise ValueError("label_words: one word each for entailment, neutral, contradiction")
        self.llm = llm
        self.ref = llm.ref
        self.window_words = window_words
        self.label_words = tuple(label_words)

    def messages(self, evidence: str, claim: str) -> list[Message]:
        return [
            ("system", SYSTEM),
            ("user", [INSTRUCTION, "\n\nEvidence:\n", fence("EVIDENCE", evidence), "\n\nClaim:\n",
                      fence("CLAIM", claim), "\n\n", QUESTION]),
        ]

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """(n, 3) probabilities; each pair is (premise = evidence, hypothesis = claim).
        ``batch_size`` is accepted for protocol compatibility (llama.cpp runs one sequence)."""
        out = np.zeros((len(pairs), 3), dtype=np.float32)
        for i, (evidence, claim) in enumerate(pairs):
            lp = self.llm.next_token_logprobs(self.messages(evidence or "", claim or ""), self.label_words)
            p = np.exp(lp - lp.max())
            out[i] = p / p.sum()
        return out

    def windows(self, premise: str) -> list[tuple[int, int]]:
        """Character spans of evidence windows of at most ``window_words`` words."""
        import re

        bounds = [(m.start(), m.end()) for m in re.finditer(r"\S+", premise)]
        if len(bounds) <= self.window_words:
            return [(0, len(premise))]
        stride = max(1, self.window_words // 2)
        spans = []
        for start in range(0, len(bounds), stride):
            chunk = bounds[start : start + self.window_words]
            spans.append((chunk[0][0], chunk[-1][1]))
            if start + self.window_words >= len(bounds):
                break
        return spans

    def predict_long(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> list[WindowedPrediction]:
        out = []
        for premise, hypothesis in pairs:
            spans = self.windows(premise or "")
            block = self.predict([(premise[s:e], hypothesis) for s, e in spans])
            best = int(np.argmax(np.maximum(block[:, ENTAIL], block[:, CONTRADICT])))
            out.append(WindowedPrediction(block[best], best, len(spans), spans[best]))
        return out


def load_llm_judge(spec: str | None = None, **kwargs) -> LLMJudge:
    """An LLM judge over a GGUF spec (``embedded`` or a path; see models.llm.resolve_llm)."""
    from models.llm import load_llm

    return LLMJudge(load_llm(spec, **kwargs))
