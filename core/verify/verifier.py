"""Claim verdicts from NLI over retrieved evidence.

For one claim and its top-k passages, claim–sentence and claim–passage pairs are scored
(premise = evidence, hypothesis = claim; ICAT, seed 004 §5.4) — the sentences the retrieval
ranks highest across the passages (or, without such ranks, those sharing most of the claim's
words) and the passages sharing most of its words, at most ``judge_sentences`` +
``judge_passages`` of them, with an early stop on a wide support margin
(:meth:`Verifier.candidate_units`). When no single unit
decides, sets of up to 3 sentences from the top passages are tried, concatenated in
document order (PeopleProfiles' multi-sentence evidence, seed 003 §4.2 and §6.4.3: "≤ 3
selected sentences").

Verdict rules, in this order (thresholds configurable; fitted on dev data by
``claimscope eval verdicts``):
1. ``conflicting`` when some unit entails with P(entailment) > ``conflict`` and another
   contradicts with P(contradiction) > ``conflict`` (strong evidence both ways; seed 001's
   conflict flag: ≥ 1 supporting and ≥ 1 refuting piece);
2. ``supported`` when any unit has P(entailment) > ``support`` — ICAT's any-snippet rule
   (seed 004 §5.4: supported if any top-k snippet entails the claim with P > 0.5), so a
   contradiction from some other, weaker-matching passage does not override support;
3. ``refuted`` when any unit has P(contradiction) > ``refute`` (contradiction is kept apart
   from "no support", seed 004 §5.4 [derived]);
4. else ``not_enough_info``.

The signed support score is P(entailment) − P(contradiction) of the deciding evidence, on
PeopleProfiles' [-1, 1] scale (seed 003 §4.3; unsupported ⇔ score ≤ 0).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.text import content_words
from core.verify.base import Thresholds
from core.verify.calibration import apply_temperature
from core.verify.injection import strip_instructions
from models.nli import CONTRADICT, ENTAIL, NLIModel
from models.nlp import normalise_term as normalise

VERDICTS = ("supported", "refuted", "not_enough_info", "conflicting")
VERDICT_RULES = ("rules", "learned")


@dataclass(frozen=True)
class EvidenceUnit:
    """A piece of text one NLI call judges: a sentence, a passage, or a set of sentences."""

    passage_id: int
    kind: str  # "sentence" | "passage" | "set"
    sentences: tuple[int, ...]  # sentence indices within the passage (all for "passage")
    text: str
    passage_rank: int


@dataclass
class Judgement:
    unit: EvidenceUnit
    probs: np.ndarray  # (3,) in LABELS order, after temperature
    window: int = 0
    n_windows: int = 1
    grounded: bool = True  # the unit (or its document title) mentions the claim's subject

    @property
    def support(self) -> float:
        return float(self.probs[ENTAIL] - self.probs[CONTRADICT])


def judgement_record(j: Judgement, digits: int | None = None) -> dict:
    """A judgement as plain JSON: the rows the verdict weights are fitted and scored on
    (benchmarks/fit_verdicts.py's cache, ``eval grounding --dump-judgements``), so that features
    can be recomputed without the verifier. ``digits`` rounds the probabilities (None: kept
    exactly, so a rescoring reproduces every verdict)."""
    probs = [float(p) if digits is None else round(float(p), digits) for p in j.probs]
    return {"pid": j.unit.passage_id, "kind": j.unit.kind, "sents": list(j.unit.sentences), "text": j.unit.text,
            "rank": j.unit.passage_rank, "probs": probs, "grounded": j.grounded}


def judgement_from_record(d: dict) -> Judgement:
    """The inverse of :func:`judgement_record` (window bookkeeping is not kept)."""
    return Judgement(EvidenceUnit(d["pid"], d["kind"], tuple(d["sents"]), d["text"], d["rank"]),
                     np.array(d["probs"], dtype=np.float32), grounded=d["grounded"])


@dataclass
class ClaimVerdict:
    label: str
    support: float  # signed, in [-1, 1]
    deciding: Judgement | None
    judgements: list[Judgement] = field(default_factory=list)


@dataclass(frozen=True)
class PassageEvidence:
    """The part of a retrieved passage the verifier needs (kept free of store types)."""

    passage_id: int
    rank: int
    sentences: tuple[str, ...]
    text: str
    title: str = ""
    # the knowledge source's name ("" when the evidence was not retrieved from one): the learned
    # verdicts pick their weights by the kind of source (core/verify/verdict_model.source_kind)
    source: str = ""
    # each sentence's rank in the retrieval's evidence-sentence ranking across the passages
    # (core.retrieve.searcher.Searcher.rank_evidence_sentences); () when not ranked
    sentence_ranks: tuple[int, ...] = ()


class Verifier:
    """Claim + evidence passages → :class:`ClaimVerdict` using one NLI model."""

    def __init__(
        self,
        nli: NLIModel,
        thresholds: Thresholds | None = None,
        subject_terms: Callable[[str], set[str]] | None = None,
        verdict_rule: str = "rules",
    ) -> None:
        """``subject_terms`` (e.g. :class:`models.nlp.SubjectTerms`) turns on the grounding
        guard: a unit decides only if it, or its document's title, mentions every content
        word of the claim's subject. Measured reason: the small verifier entails "The Eiffel
        Tower is located in Berlin." from "Berlin is the capital … of Germany." (P = .85)."""
        self.nli = nli
        self.t = thresholds or Thresholds()
        self.subject_terms = subject_terms
        # "rules" (the thresholds below) or "learned" (core/verify/verdict_model.py, a logistic
        # regression over the same judgements that also weighs where the evidence comes from).
        if verdict_rule not in VERDICT_RULES:
            raise ValueError(f"verdict_rule must be one of {VERDICT_RULES}, got {verdict_rule!r}")
        self.verdict_rule = verdict_rule

    @property
    def wants_sentence_ranks(self) -> bool:
        """Whether retrieval should rank the evidence sentences for this verifier
        (``Searcher.search(rank_sentences=…)``): it chooses the sentences it judges by them."""
        return self.t.sentence_choice == "retrieval" and self.t.judge_sentences > 0

    def _calibrate(self, probs: np.ndarray) -> np.ndarray:
        if self.t.temperature == 1.0:
            return probs
        return apply_temperature(probs[None, :], self.t.temperature)[0].astype(np.float32)

    def _judge(self, claim: str, units: Sequence[EvidenceUnit]) -> list[Judgement]:
        """NLI on each unit with instructions planted in the evidence stripped first
        (core/verify/injection.py); a unit that was nothing but such text is not judged."""
        return self._judge_many([(claim, units)])[0]

    def _judge_many(self, work: Sequence[tuple[str, Sequence[EvidenceUnit]]]) -> list[list[Judgement]]:
        """:meth:`_judge` for several claims in one batched NLI call: the model sorts all pairs
        by length, so batches mix claims and pad less than one call per claim (measured on the
        150-word answer's 204 pairs: 6.6 → 4.8 CPU-s). Each claim gets its own judgements, in
        its units' order."""
        kept: list[list[tuple[EvidenceUnit, str]]] = []
        for _, units in work:
            premises = [strip_instructions(u.text).text for u in units]
            kept.append([(u, p) for u, p in zip(units, premises, strict=True) if p.strip()])
        pairs = [(p, claim) for (claim, _), ks in zip(work, kept, strict=True) for _, p in ks]
        if not pairs:
            return [[] for _ in work]
        preds = self.nli.predict_long(pairs)
        out, pos = [], 0
        for ks in kept:
            out.append([
                Judgement(u, self._calibrate(p.probs), p.window, p.n_windows)
                for (u, _), p in zip(ks, preds[pos : pos + len(ks)], strict=True)
            ])
            pos += len(ks)
        return out

    def verify(self, claim: str, passages: Sequence[PassageEvidence], always_sets: bool = False) -> ClaimVerdict:
        """Judge the sentences and passages most likely to decide (:meth:`candidate_units`);
        sets of sentences when none decides (or always, with ``always_sets``, to store every
        judgement a later threshold change could need)."""
        return self.verify_many([(claim, passages)], always_sets)[0]

    def verify_many(
        self, items: Sequence[tuple[str, Sequence[PassageEvidence]]], always_sets: bool = False,
    ) -> list[ClaimVerdict]:
        """:meth:`verify` for several claims, each stage of all of them in one batched NLI call
        (the first units; the rest for claims not decided early; sentence sets for claims no
        single unit decides). Each claim's units, judgements and verdict are those
        :meth:`verify` gives it alone: only the batching differs."""
        staged = [self.candidate_units(claim, passages) for claim, passages in items]
        judgements = self._judge_many([(claim, first) for (claim, _), (first, _) in zip(items, staged, strict=True)])
        for (claim, passages), js in zip(items, judgements, strict=True):
            self._ground(claim, js, passages)
        rest = [r if r and not self._decided_early(js) else [] for (_, r), js in zip(staged, judgements, strict=True)]
        self._judge_more(items, judgements, rest)
        sets = [
            self._sentence_sets(grounded, passages) if always_sets or not self._decides(grounded) else []
            for (_, passages), js in zip(items, judgements, strict=True)
            for grounded in ([j for j in js if j.grounded],)
        ]
        self._judge_more(items, judgements, sets)
        return [self._conclude(claim, js, passages) for (claim, passages), js in zip(items, judgements, strict=True)]

    def _judge_more(
        self, items: Sequence[tuple[str, Sequence[PassageEvidence]]], judgements: list[list[Judgement]],
        units: Sequence[Sequence[EvidenceUnit]],
    ) -> None:
        """Judge each claim's further ``units`` (one batched call) and append them, grounded."""
        more = self._judge_many([(claim, u) for (claim, _), u in zip(items, units, strict=True)])
        for (claim, passages), js, m in zip(items, judgements, more, strict=True):
            self._ground(claim, m, passages)
            js += m

    def _conclude(self, claim: str, judgements: list[Judgement], passages: Sequence[PassageEvidence]) -> ClaimVerdict:
        if self.verdict_rule == "learned":
            from core.verify.verdict_model import decide_learned

            return decide_learned(claim, judgements, passages, self.subject_terms, self.t)
        return self.decide_staged(judgements)

    def candidate_units(
        self, claim: str, passages: Sequence[PassageEvidence]
    ) -> tuple[list[EvidenceUnit], list[EvidenceUnit]]:
        """The units worth a cross-encoder call, in two stages: (judged first, judged unless
        the first stage decides early). Every distinct sentence and every multi-sentence
        passage is a candidate; sentences are ranked by the retrieval's evidence-sentence
        ranking (``PassageEvidence.sentence_ranks``, with ``Thresholds.sentence_choice =
        "retrieval"``), else — and passages always — by a cheap lexical relevance score: the
        share of the claim's content words the unit (or its document title) contains, ties
        broken by retrieval rank. Only the top ``judge_sentences`` sentences and
        ``judge_passages`` passages are kept. Why: with every sentence of 10 passages, each passage and up to 20
        sets judged, most of a run's time went into pairs that shared no word with the claim
        and could not decide (issue 18's measurements)."""
        sentences: list[EvidenceUnit] = []
        whole: list[EvidenceUnit] = []
        seen: set[str] = set()  # overlapping passages repeat sentences: judge each once
        for p in passages:
            for i, s in enumerate(p.sentences):
                if s not in seen:
                    seen.add(s)
                    sentences.append(EvidenceUnit(p.passage_id, "sentence", (i,), s, p.rank))
            if len(p.sentences) > 1:
                whole.append(EvidenceUnit(p.passage_id, "passage", tuple(range(len(p.sentences))), p.text, p.rank))
        t = self.t
        if t.judge_sentences <= 0 and t.judge_passages <= 0:
            return sentences + whole, []
        titles = {p.passage_id: p.title for p in passages}
        q = {normalise(w) for w in content_words(claim)}

        def relevance(u: EvidenceUnit) -> tuple[float, int]:
            if not q:
                return (0.0, u.passage_rank)
            words = {normalise(w) for w in content_words(f"{titles.get(u.passage_id, '')} {u.text}")}
            return (-len(q & words) / len(q), u.passage_rank)

        if t.judge_sentences > 0:
            ranks = {p.passage_id: p.sentence_ranks for p in passages}
            if t.sentence_choice == "retrieval" and all(len(ranks[p.passage_id]) == len(p.sentences) for p in passages):
                sentences = sorted(sentences, key=lambda u: (ranks[u.passage_id][u.sentences[0]], relevance(u)))
            else:
                sentences = sorted(sentences, key=relevance)
            sentences = sentences[: t.judge_sentences]
        if t.judge_passages > 0:
            whole = sorted(whole, key=relevance)[: t.judge_passages]
        if t.early_stop >= 1.0:
            return sentences + whole, []
        hs, hp = (len(sentences) + 1) // 2, (len(whole) + 1) // 2
        return sentences[:hs] + whole[:hp], sentences[hs:] + whole[hp:]

    def _decided_early(self, judgements: Sequence[Judgement]) -> bool:
        """Supported by a wide margin: a grounded unit entails with P > ``early_stop`` and no
        grounded unit judged so far contradicts above ``conflict``. Only support stops early:
        under the rules a supporting unit wins over any refuting one (ICAT's any-snippet rule),
        so a refutation found first must keep looking for support. Measured: stopping on a
        refutation turned "Kofi Annan was the seventh secretary-general …" into refuted."""
        e = self.t.early_stop
        if e >= 1.0:
            return False
        grounded = [j for j in judgements if j.grounded]
        return any(j.probs[ENTAIL] > e for j in grounded) and not any(j.probs[CONTRADICT] > self.t.conflict for j in grounded)

    def _ground(self, claim: str, judgements: list[Judgement], passages: Sequence[PassageEvidence]) -> None:
        if self.subject_terms is None:
            return
        from models.nlp import normalise_term

        terms = self.subject_terms(claim)
        if not terms:
            return
        titles = {p.passage_id: p.title for p in passages}
        for j in judgements:
            words = {normalise_term(w) for w in re.findall(r"\w+", f"{titles.get(j.unit.passage_id, '')} {j.unit.text}")}
            j.grounded = terms <= words  # every content word of the subject: "Tower" alone is not "Eiffel Tower"

    def _decides(self, js: Sequence[Judgement]) -> bool:
        return any(j.probs[ENTAIL] > self.t.support or j.probs[CONTRADICT] > self.t.refute for j in js)

    def decide_staged(self, judgements: list[Judgement]) -> ClaimVerdict:
        """The verdict as :meth:`verify` reaches it: sentence sets count only when no single
        sentence or passage decides. Lets thresholds be re-fitted on stored judgements."""
        grounded = [j for j in judgements if j.grounded]
        singles = [j for j in grounded if j.unit.kind != "set"]
        verdict = self.decide(singles if self._decides(singles) else grounded)
        verdict.judgements = judgements
        return verdict

    def _sentence_sets(self, judgements: Sequence[Judgement], passages: Sequence[PassageEvidence]) -> list[EvidenceUnit]:
        """Sets of 2..max_set_size of the most decisive sentences, in document order."""
        by_id = {p.passage_id: p for p in passages}
        sents = [j for j in judgements if j.unit.kind == "sentence"]
        sents.sort(key=lambda j: -max(j.probs[ENTAIL], j.probs[CONTRADICT]))
        top = sents[: self.t.set_candidates]
        seen: set[tuple] = set()
        units = []
        for size in range(2, self.t.max_set_size + 1):
            for combo in itertools.combinations(top, size):
                # Passage ids grow with position inside a document, so this is document order.
                # Sentences of different documents may combine: multi-hop claims need it.
                ordered = sorted(combo, key=lambda j: (j.unit.passage_id, j.unit.sentences[0]))
                texts = [by_id[j.unit.passage_id].sentences[j.unit.sentences[0]] for j in ordered]
                key = tuple(texts)
                if key in seen or len(set(texts)) < len(texts):  # overlapping passages repeat sentences
                    continue
                seen.add(key)
                text = " ".join(texts)
                first = ordered[0].unit
                units.append(
                    EvidenceUnit(first.passage_id, "set", tuple(j.unit.sentences[0] for j in ordered), text, first.passage_rank)
                )
        return units

    def decide(self, judgements: list[Judgement]) -> ClaimVerdict:
        """The verdict rules above, over already-scored judgements (no model call)."""
        if not judgements:
            return ClaimVerdict("not_enough_info", 0.0, None, judgements)
        ent = np.array([j.probs[ENTAIL] for j in judgements])
        con = np.array([j.probs[CONTRADICT] for j in judgements])
        best_e, best_c = int(ent.argmax()), int(con.argmax())
        if ent[best_e] > self.t.conflict and con[best_c] > self.t.conflict:
            deciding = judgements[best_e if ent[best_e] >= con[best_c] else best_c]
            label = "conflicting"
        elif ent[best_e] > self.t.support:
            deciding, label = judgements[best_e], "supported"
        elif con[best_c] > self.t.refute:
            deciding, label = judgements[best_c], "refuted"
        else:
            decisive = int(np.argmax(np.maximum(ent, con)))
            deciding, label = judgements[decisive], "not_enough_info"
        return ClaimVerdict(label, deciding.support, deciding, judgements)
