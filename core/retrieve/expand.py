"""Query expansion with a local LLM: HyDE and Query2doc (seed 000, QE-leakage).

Both write pseudo-documents for a claim and retrieve with them; neither ever treats the
generated text as evidence (seeds.md §1.1 item 4): a :class:`Expansion` only changes the
*query*, it is stored in its own table and the verifier never sees it.

- **HyDE** (seed 000 Eq. 2): the LLM writes N hypothetical documents; the dense query vector
  is the mean of the claim's and the documents' embeddings, v = (g(q) + Σ_k g(d_k)) / (N + 1),
  re-normalised because the index ranks by inner product of unit vectors (seeds.md §1.3,
  [derived]). The paper uses N = 1.
- **Query2doc** (seed 000 Eq. 1, after Jagerman et al. 2023): the BM25 query is the claim
  repeated n = 5 times followed by the generated passage, q⁺ = concat(q × 5, d). The copies
  raise the claim's words' query-term frequency against the passage's, so the BM25 query
  keeps every occurrence of a word (``fts_match_query(..., distinct=False)``).

Generation follows the paper's setting (§3.2 / seeds.md §1.2): temperature 0.7, top_p 1.0,
max_tokens 512, with the corpus-specific prompts of App. E (:data:`PRESETS`). The paper
repeats every generation 8 times and reports mean ± SE; ``seed`` selects the repeat, so a
repeat is reproducible and its output is cached (``stage_cache`` stage ``expand``).

The claim goes into the prompt neutralised (no chat-turn or fence markers can survive) but
not inside a ``<<<CLAIM`` fence: measured on the embedded SmolLM2-135M, the fence markers
made it write nothing but "<<<<…" (both 128 and 512 tokens). A hostile claim can at worst
steer its own retrieval query; the verdict still comes from retrieved evidence only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from core.errors import InputError

METHODS = ("hyde", "query2doc")
QUERY2DOC_REPEATS = 5  # n in seed 000 Eq. 1

# Seed 000 App. E (seeds.md §1.5): HyDE prompts per corpus type; Query2doc's is the same for
# every corpus. "{claim}" is replaced by the (neutralised) claim.
PRESETS: dict[str, str] = {
    "encyclopedic": "Please write a wikipedia passage to verify the claim.\nClaim: {claim}\nPassage:",
    "scientific": "Please write a scientific paper passage to support/refute the claim.\nClaim: {claim}\nPassage:",
    "factcheck": "Please write a fact-checking article to verify the claim.\nClaim: {claim}\nPassage:",
    "query2doc": "Write a passage that answers the following query: {claim}",
}
DEFAULT_PRESET = {"hyde": "encyclopedic", "query2doc": "query2doc"}


class Generator(Protocol):
    """What expansion needs from an LLM (models.llm.LLM satisfies it)."""

    ref: Any

    def generate(self, messages, *, max_tokens: int = 256, temperature: float = 0.0, top_p: float = 1.0,
                 seed: int | None = None, **kw: Any) -> str: ...


@dataclass(frozen=True)
class ExpansionParams:
    """How pseudo-documents are sampled; the defaults are seed 000's (§3.2)."""

    n: int = 1  # documents per claim (HyDE's N)
    temperature: float = 0.7
    top_p: float = 1.0
    max_tokens: int = 512
    seed: int = 0  # the repeat: document k of repeat r is sampled with seed r * 1000 + k

    def __post_init__(self) -> None:
        if self.n < 1:
            raise InputError("query expansion needs at least one generated document (n ≥ 1)")
        if not 0 <= self.temperature <= 2 or not 0 < self.top_p <= 1:
            raise InputError("query expansion: temperature must be in [0, 2] and top_p in (0, 1]")
        if self.max_tokens < 1:
            raise InputError("query expansion: max_tokens must be ≥ 1")


@dataclass(frozen=True)
class Expansion:
    """The pseudo-documents one claim was expanded with. Never evidence."""

    method: str
    preset: str
    claim: str
    documents: tuple[str, ...]
    model: dict  # the generating LLM's manifest (id, path, sha256, quantisation)
    params: ExpansionParams
    seconds: float = 0.0
    cached: bool = False
    matched: bool | None = field(default=None, compare=False)  # set by the leakage audit

    @property
    def prompt(self) -> str:
        return PRESETS[self.preset]


def query2doc_query(claim: str, document: str, repeats: int = QUERY2DOC_REPEATS) -> str:
    """q⁺ = concat(q × n, d) joined with single spaces (seed 000 Eq. 1; seeds.md §1.3)."""
    return " ".join([claim.strip()] * repeats + [document.strip()]).strip()


def hyde_vector(claim_vector: np.ndarray, document_vectors: np.ndarray) -> np.ndarray:
    """v = (g(q) + Σ_k g(d_k)) / (N + 1), then L2-normalised (seed 000 Eq. 2; seeds.md §1.3).

    Normalising does not change the ranking under cosine similarity but keeps the vector a
    valid query for the inner-product FAISS index, whose vectors are unit length."""
    docs = np.asarray(document_vectors, dtype=np.float32).reshape(-1, claim_vector.shape[-1])
    v = (claim_vector.astype(np.float32) + docs.sum(axis=0)) / (len(docs) + 1)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


class Expander:
    """Writes pseudo-documents for claims with one LLM, one method and one prompt preset."""

    def __init__(self, llm: Generator, method: str, preset: str | None = None,
                 params: ExpansionParams | None = None) -> None:
        if method not in METHODS:
            raise InputError(f"unknown query-expansion method {method!r} (use {', '.join(METHODS)})")
        preset = preset or DEFAULT_PRESET[method]
        if preset not in PRESETS:
            raise InputError(f"unknown expansion prompt {preset!r} (use {', '.join(PRESETS)})")
        self.llm, self.method, self.preset = llm, method, preset
        self.params = params or ExpansionParams()

    def config(self) -> dict:
        """What determines the generated text (the stage-cache and run-manifest key)."""
        return {"method": self.method, "preset": self.preset, "prompt": PRESETS[self.preset],
                "model": self.llm.ref.manifest(), "params": asdict(self.params)}

    def messages(self, claim: str) -> list:
        from models.llm import neutralise

        return [("user", PRESETS[self.preset].format(claim=neutralise(claim.strip())))]

    def generate(self, claim: str) -> list[str]:
        """The claim's ``n`` pseudo-documents, freshly generated (seed ``seed·1000 + k``)."""
        return [
            self.llm.generate(
                self.messages(claim), max_tokens=self.params.max_tokens, temperature=self.params.temperature,
                top_p=self.params.top_p, seed=self.params.seed * 1000 + k,
            ).strip()
            for k in range(self.params.n)
        ]

    def expand(self, claim: str) -> Expansion:
        """The claim's pseudo-documents, generated now (``cached`` False). Stage code never
        touches the database: core.pipeline.stored.expand_cached reuses a stored generation."""
        if not claim.strip():
            raise InputError("the claim to expand is empty")
        t0 = time.perf_counter()
        docs = self.generate(claim)
        return self.expansion(claim, docs, time.perf_counter() - t0, cached=False)

    def expansion(self, claim: str, docs: Sequence[str], seconds: float, cached: bool) -> Expansion:
        return Expansion(self.method, self.preset, claim, tuple(docs), self.llm.ref.manifest(), self.params,
                         seconds, cached)
