"""Attribution of cited answers (ExpertQA, seed 002): is each claim supported by the sources
it cites?

Per claim, with the paper's labels (seed 002 §3.3):
- **Missing**: the claim cites nothing (no evidence). It can be sent to post-hoc retrieval
  (a retriever callable); the finding is kept apart in ``posthoc`` and the label stays
  Missing, because the answer itself gave no attribution.
- **N/A**: it cites sources, but none of them is available (only a URL, nothing fetched).
- otherwise AutoAIS (§3.4) over the **union** of the available cited evidence, joined with
  spaces (repo), ``[n]`` markers and URLs stripped from both texts: NLI with premise =
  evidence, hypothesis = claim, attributable iff P(entailment) > 0.5 (the binary AutoAIS
  label; our 3-way verifier stands in for T5-TRUE, whose output is binary). Long evidence —
  evidence that does not fit the model's input beside the claim (T5's limit was 512
  tokens; ours is one evidence window of the embedded verifier) — is "stretched": split
  into sentences, each scored for P(entailment), the top ``k`` = 2 kept **in document
  order** as the new premise, scored once more (the paper's top-2; the repo's extra
  bottom-2 are not used).
  - **Complete** (fully entailed): AutoAIS = 1, or every atomic fact of the claim is.
  - **Partial** (not all facts entailed): with a decomposer, some but not all of the
    claim's atomic facts are attributable.
  - **Incomplete** (not entailed at all): none is (without a decomposer: AutoAIS = 0).

Answer score (seed 002 §3.5, repo): the mean binary AutoAIS label over the claims that have
available evidence (Missing and N/A claims carry no label and are left out), beside the
label distribution (§6.5 "attribution distribution").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.decompose.base import Decomposer
from core.decompose.citations import find_markers, strip_markers
from models.nli import ENTAIL
from models.nlp import SentenceSplitter

LABELS = ("Complete", "Partial", "Incomplete", "Missing", "N/A")
ENTAIL_THRESHOLD = 0.5  # ICAT's / the project's entailment cut-off (seed 004 §5.4)
TOP_K = 2  # AutoAIS stretching keeps the 2 most entailing sentences (seed 002 §3.4)
_URL = re.compile(r"https?://\S+")

Retriever = Callable[[str], Sequence[str]]


def clean(text: str) -> str:
    """Text as AutoAIS judges it: ``[n]`` markers and URLs removed, whitespace collapsed."""
    return " ".join(_URL.sub(" ", strip_markers(text)[0]).split())


@dataclass(frozen=True)
class AttributionCheck:
    """One AutoAIS judgement: the binary label, the probabilities of the judged premise, and
    — when stretched — the kept sentences (index in the joined evidence, text, P(entail))."""

    autoais: int
    probs: tuple[float, float, float]
    premise: str
    stretched: bool
    sentences: tuple[tuple[int, str, float], ...] = ()


@dataclass
class ClaimAttribution:
    idx: int
    text: str
    citations: tuple[int, ...]
    label: str  # one of LABELS
    check: AttributionCheck | None = None  # None for Missing and N/A
    atoms: list[tuple[str, bool]] = field(default_factory=list)  # atomic fact, attributable?
    posthoc: AttributionCheck | None = None  # Missing claims sent to post-hoc retrieval


@dataclass
class AnswerAttribution:
    claims: list[ClaimAttribution]

    @property
    def score(self) -> float | None:
        judged = [c.check.autoais for c in self.claims if c.check is not None]
        return sum(judged) / len(judged) if judged else None

    @property
    def labels(self) -> dict[str, int]:
        counts = Counter(c.label for c in self.claims)
        return {k: counts.get(k, 0) for k in LABELS}

    def detail(self) -> dict:
        """What a stored ``attribution`` score keeps (scores.detail JSON)."""
        return {
            "score": self.score, "labels": self.labels,
            "claims": [
                {"idx": c.idx, "label": c.label, "citations": list(c.citations),
                 "autoais": c.check.autoais if c.check else None,
                 "p_entailment": c.check.probs[ENTAIL] if c.check else None,
                 "sentences": [list(s) for s in c.check.sentences] if c.check else [],
                 "atoms": [[a, ok] for a, ok in c.atoms],
                 "posthoc": c.posthoc.autoais if c.posthoc else None}
                for c in self.claims
            ],
        }


class Attributor:
    """AutoAIS with the project's NLI model (``predict_long`` / ``windows`` of
    :class:`models.nli.CrossEncoderNLI`) and a sentence splitter for stretching."""

    def __init__(
        self, nli, splitter: SentenceSplitter, *, threshold: float = ENTAIL_THRESHOLD, top_k: int = TOP_K,
        decomposer: Decomposer | None = None, retriever: Retriever | None = None,
    ) -> None:
        self.nli, self.splitter, self.threshold, self.top_k = nli, splitter, threshold, top_k
        self.decomposer, self.retriever = decomposer, retriever

    def check(self, claim: str, evidence: Sequence[str]) -> AttributionCheck:
        """AutoAIS of ``claim`` against the union of ``evidence`` (§3.4, with stretching)."""
        hyp = clean(claim)
        premise = " ".join(clean(e) for e in evidence if e and e.strip())
        if not premise or not hyp:  # ICAT/repo: an empty premise or hypothesis is not entailed
            return AttributionCheck(0, (0.0, 1.0, 0.0), premise, False)
        if len(self.nli.windows(premise, hyp)) == 1:
            p = self.nli.predict([(premise, hyp)])[0]
            return AttributionCheck(int(p[ENTAIL] > self.threshold), _probs(p), premise, False)
        spans = self.splitter.split([premise])[0] or [(0, len(premise))]
        sents = [premise[s:e] for s, e in spans]
        ent = self.nli.predict([(s, hyp) for s in sents])[:, ENTAIL]
        keep = sorted(np.argsort(-ent, kind="stable")[: self.top_k].tolist())  # top-k, in document order
        stretched = " ".join(sents[i] for i in keep)
        p = self.nli.predict_long([(stretched, hyp)])[0].probs
        return AttributionCheck(
            int(p[ENTAIL] > self.threshold), _probs(p), stretched, True,
            tuple((i, sents[i], float(ent[i])) for i in keep),
        )

    def attribute_claim(
        self, idx: int, claim: str, citations: Sequence[int], sources: Mapping[int, str | None]
    ) -> ClaimAttribution:
        """Label one claim from the sources it cites (``sources[n]`` None = unavailable)."""
        cites = tuple(dict.fromkeys(citations))
        if not cites:
            out = ClaimAttribution(idx, claim, cites, "Missing")
            if self.retriever is not None:
                found = list(self.retriever(clean(claim)))
                out.posthoc = self.check(claim, found) if found else None
            return out
        evidence = [sources[n] for n in cites if sources.get(n)]
        if not evidence:
            return ClaimAttribution(idx, claim, cites, "N/A")
        chk = self.check(claim, evidence)
        out = ClaimAttribution(idx, claim, cites, "Complete" if chk.autoais else "Incomplete", chk)
        if not chk.autoais and self.decomposer is not None:
            atoms = [c.text for c in self.decomposer.decompose(clean(claim)) if c.checkable]
            if len(atoms) > 1:
                out.atoms = [(a, bool(self.check(a, evidence).autoais)) for a in atoms]
                hits = sum(ok for _, ok in out.atoms)
                out.label = "Complete" if hits == len(atoms) else "Partial" if hits else "Incomplete"
        return out

    def attribute_answer(self, text: str, references: Mapping[int, str | None]) -> AnswerAttribution:
        """A cited answer (``[n]`` markers) → its sentence claims, each labelled. Claims are
        the answer's sentences, as in ExpertQA (§3.2: a claim is a sentence)."""
        from core.decompose.base import SentenceDecomposer
        from core.decompose.citations import decompose_cited

        cited = decompose_cited(text, SentenceDecomposer(self.splitter))
        return AnswerAttribution([
            self.attribute_claim(i, c.claim.text, c.citations, references) for i, c in enumerate(cited)
        ])


def claim_citations(claim: str) -> tuple[int, ...]:
    """The ``[n]`` ids a claim's text carries, in order."""
    return tuple(dict.fromkeys(i for m in find_markers(claim) for i in m.ids))


def _probs(p: np.ndarray) -> tuple[float, float, float]:
    return (float(p[0]), float(p[1]), float(p[2]))
