"""Learned claim verdicts: a small multinomial logistic regression over a claim's judgements.

Why: the hand rules of :mod:`core.verify` (any unit over a threshold decides; ``conflicting``
when both sides pass 0.65) let one sentence about *someone else* decide a claim. Measured on
wiki-vital: "Marie Curie was a Polish-born physicist" refuted by the Henri Becquerel passage,
"Newton was born in Woolsthorpe" refuted by a Josephus sentence ("he was born in Jerusalem"),
"Tokyo is the most populous city of Japan" supported by Sapporo's "fifth-most populous city".
The rules see only the probabilities; this model also sees *where* the deciding evidence
comes from (the subject's own document? does the sentence name the subject? its retrieval
rank?), how many units agree, and whether numbers / dates differ.

The features (one vector per claim, :data:`FEATURES`, explained in docs/benchmarks.md) are
computed from the judgements :class:`core.verify.Verifier` already makes, so the learned
rule costs no model call. Weights live in ``core/verify/data/verdict_model.json`` (written by
``benchmarks/fit_verdicts.py``, fitted only on train splits; the file names its data).
Prediction is plain numpy: standardise, ``softmax(W x + b)``, argmax.

The file may hold one weight set per kind of source (``by_kind``; :func:`source_kind` says which
kind a claim's evidence comes from: an encyclopedia of subject-titled documents, a corpus of
abstracts, or the user's given documents), each fitted on data of that kind; a kind without its
own set uses the top-level weights. Why: where evidence comes from means different things in an
encyclopedia (the subject's own article) and among abstracts (no document is a subject's own), and
one weight set fitted on both lost on one or the other (docs/benchmarks.md).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from core.text import SOURCE_KINDS, SUBJECT_TITLE_WORDS, source_kind, subject_title  # noqa: F401 (re-exported)
from core.verify.base import Thresholds
from core.verify.verifier import VERDICTS, ClaimVerdict, Judgement, PassageEvidence
from models.nli import CONTRADICT, ENTAIL

MODEL_FILE = "verdict_model.json"
# Unit kinds judged on their own; "set" units (≤ 3 sentences, seed 003 §4.2) only count when no
# single unit decides under the thresholds — the same staging as Verifier.decide_staged, so a
# claim's features do not depend on whether sets were judged eagerly (eval) or lazily (runs).
_SINGLE = ("sentence", "passage")

FEATURES = (
    "e_max",            # best P(entail) over grounded units (0 when none is grounded)
    "c_max",            # best P(contradict) over grounded units
    "e_any",            # best P(entail) over every unit, grounded or not
    "c_any",            # best P(contradict) over every unit
    "e_margin",         # P(E) − P(C) of the best entailing grounded unit
    "c_margin",         # P(C) − P(E) of the best contradicting grounded unit
    "balance",          # e_max − c_max: which side is stronger
    "both",             # min(e_max, c_max): strong evidence both ways (conflict)
    "e_agree",          # log(1 + grounded sentences with P(E) > .5)
    "c_agree",          # log(1 + grounded sentences with P(C) > .5)
    "e_docs",           # distinct documents with a grounded unit P(E) > .5, log(1 + n)
    "c_docs",           # distinct documents with a grounded unit P(C) > .5, log(1 + n)
    "e_named",          # the best entailing unit's own text names every subject term
    "c_named",          # the best contradicting unit's own text names every subject term
    "e_title",          # the best entailing unit comes from the subject's own document (title)
    "c_title",          # the best contradicting unit comes from the subject's own document
    "e_own",            # best P(entail) over sentences / passages of the subject's own document(s)
    "c_own",            # best P(contradict) over sentences / passages of the subject's own document(s)
    "e_own_named",      # best P(entail) over own-document sentences that name the subject themselves
    "c_own_named",      # best P(contradict) over own-document sentences that name the subject themselves
    "own_doc",          # some retrieved document's title is the subject
    "e_rank",           # 1 / retrieval rank of the best entailing unit's passage
    "c_rank",           # 1 / retrieval rank of the best contradicting unit's passage
    "e_num_missing",    # the claim has numbers / dates / ordinals the best entailing unit lacks
    "c_num_clash",      # claim and best contradicting unit both have numbers, and they differ
    "e_set",            # the best entailing unit is a sentence set (multi-sentence evidence)
    "grounded_share",   # share of sentences / passages that name the subject (text or title)
    "no_subject",       # the claim's subject has no content word (pronoun, number): no grounding
    "no_evidence",      # nothing was judged
)

_NUM_WORDS = {
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "hundred", "thousand", "million", "billion", "first", "second", "third", "fourth", "fifth", "sixth",
    "seventh", "eighth", "ninth", "tenth", "twice", "half", "dozen",
}
_MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"}
_STOP_TITLE = {"the", "of", "a", "an", "and", "in", "on", "for", "to", "at", "by", "de", "la", "le", "von", "van"}


def numbers(text: str) -> set[str]:
    """Numbers, years, months and number / ordinal words of a text ("fifth-most" → fifth;
    "1,200" → 1200): what a date or quantity claim turns on."""
    out = {m.replace(",", "") for m in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    out |= words & _NUM_WORDS
    out |= {w for w in words & _MONTHS if w != "may"}  # "may" is mostly the verb
    return out


def _words(text: str) -> set[str]:
    from models.nlp import normalise_term

    return {normalise_term(w) for w in re.findall(r"\w+", text)}


def title_is_subject(title: str, terms: set[str]) -> bool:
    """The document is the subject's own: its title's content words are all subject terms
    ("Tokyo" for {tokyo}) or hold them all ("Isaac Newton" for {newton}, "Marie Curie" for
    {marie, curie}). Disambiguators in brackets are ignored ("Mercury (planet)")."""
    if not terms or not title:
        return False
    tw = _words(re.sub(r"\([^)]*\)", " ", title)) - _STOP_TITLE
    return bool(tw) and (tw <= terms or terms <= tw)


@dataclass(frozen=True)
class ClaimFeatures:
    """One claim's feature vector and the indices of the units that would decide each side."""

    values: np.ndarray  # (len(FEATURES),)
    best_entail: Judgement | None
    best_contradict: Judgement | None

    def as_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in zip(FEATURES, self.values, strict=True)}


def considered(judgements: Sequence[Judgement], t: Thresholds) -> list[Judgement]:
    """Single units, plus sentence sets only when no grounded single unit passes a threshold
    (Verifier.verify judges sets only then)."""
    singles = [j for j in judgements if j.unit.kind in _SINGLE]
    decides = any(
        j.grounded and (j.probs[ENTAIL] > t.support or j.probs[CONTRADICT] > t.refute) for j in singles
    )
    return singles if decides else list(judgements)


def extract(
    claim: str, judgements: Sequence[Judgement], passages: Sequence[PassageEvidence] | dict[int, str],
    terms: set[str], t: Thresholds | None = None,
) -> ClaimFeatures:
    """The features of one claim from its judgements (see :data:`FEATURES`). ``passages``
    gives each passage's document title (or pass ``{passage_id: title}``); ``terms`` are
    the subject's content words (:class:`models.nlp.SubjectTerms`)."""
    t = t or Thresholds()
    titles = passages if isinstance(passages, dict) else {p.passage_id: p.title for p in passages}
    js = considered(judgements, t)
    f = dict.fromkeys(FEATURES, 0.0)
    f["no_subject"] = float(not terms)
    f["own_doc"] = float(any(title_is_subject(tt, terms) for tt in titles.values()))
    if not js:
        f["no_evidence"] = 1.0
        return ClaimFeatures(np.array([f[k] for k in FEATURES]), None, None)
    ent = np.array([j.probs[ENTAIL] for j in js], dtype=float)
    con = np.array([j.probs[CONTRADICT] for j in js], dtype=float)
    grounded = np.array([j.grounded for j in js])
    # A sentence set is filed under its first sentence's passage but may join sentences of
    # several documents, so it counts for the probabilities, never for where evidence comes
    # from (own document, agreement across documents).
    single = np.array([j.unit.kind in _SINGLE for j in js])
    sentence = np.array([j.unit.kind == "sentence" for j in js])
    own = single & np.array([title_is_subject(titles.get(j.unit.passage_id, ""), terms) for j in js])
    f["e_any"], f["c_any"] = float(ent.max()), float(con.max())
    f["grounded_share"] = float(grounded[single].mean()) if single.any() else 0.0
    if own.any():
        f["e_own"], f["c_own"] = float(ent[own].max()), float(con[own].max())
        # a sentence with a pronoun ("She shared …") is where the small verifier errs most
        named = own & sentence & np.array([not terms or terms <= _words(j.unit.text) for j in js])
        if named.any():
            f["e_own_named"], f["c_own_named"] = float(ent[named].max()), float(con[named].max())
    claim_nums = numbers(claim)
    best_e = best_c = None
    if grounded.any():
        ge, gc = np.where(grounded, ent, -1.0), np.where(grounded, con, -1.0)
        ie, ic = int(ge.argmax()), int(gc.argmax())
        best_e, best_c = js[ie], js[ic]
        f["e_max"], f["c_max"] = float(ent[ie]), float(con[ic])
        f["e_margin"], f["c_margin"] = float(ent[ie] - con[ie]), float(con[ic] - ent[ic])
        f["balance"], f["both"] = f["e_max"] - f["c_max"], min(f["e_max"], f["c_max"])
        gs = grounded & sentence  # agreement counts sentences, not the passages and sets repeating them
        f["e_agree"] = math.log1p(int(((ent > 0.5) & gs).sum()))
        f["c_agree"] = math.log1p(int(((con > 0.5) & gs).sum()))
        gd = grounded & single
        f["e_docs"] = math.log1p(len({titles.get(j.unit.passage_id, j.unit.passage_id)
                                      for j, e, g in zip(js, ent, gd, strict=True) if g and e > 0.5}))
        f["c_docs"] = math.log1p(len({titles.get(j.unit.passage_id, j.unit.passage_id)
                                      for j, c, g in zip(js, con, gd, strict=True) if g and c > 0.5}))
        f["e_named"] = float(not terms or terms <= _words(best_e.unit.text))
        f["c_named"] = float(not terms or terms <= _words(best_c.unit.text))
        f["e_title"] = float(bool(own[ie]))
        f["c_title"] = float(bool(own[ic]))
        f["e_rank"] = 1.0 / max(best_e.unit.passage_rank, 1)
        f["c_rank"] = 1.0 / max(best_c.unit.passage_rank, 1)
        f["e_num_missing"] = float(bool(claim_nums - numbers(best_e.unit.text)))
        c_nums = numbers(best_c.unit.text)
        f["c_num_clash"] = float(bool(claim_nums) and bool(c_nums) and bool(claim_nums - c_nums))
        f["e_set"] = float(best_e.unit.kind == "set")
    return ClaimFeatures(np.array([f[k] for k in FEATURES]), best_e, best_c)


@dataclass(frozen=True)
class VerdictModel:
    """Multinomial logistic regression: P(verdict | x) = softmax(W · (x − mean) / scale + b)."""

    labels: tuple[str, ...]
    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray  # (len(labels), len(features))
    bias: np.ndarray  # (len(labels),)
    meta: dict
    # weight sets for one kind of source each (:func:`source_kind`); a kind without its own set
    # uses this model's weights (the fallback)
    by_kind: dict[str, VerdictModel] = field(default_factory=dict)

    def for_kind(self, kind: str | None) -> VerdictModel:
        """The weights for evidence from a source of ``kind`` (this model when it has none)."""
        return self.by_kind.get(kind or "", self)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = (np.atleast_2d(x) - self.mean) / self.scale @ self.weights.T + self.bias
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, x: np.ndarray, kind: str | None = None) -> tuple[str, dict[str, float]]:
        """The verdict and every verdict's probability for one feature vector (with the weights
        for ``kind`` of source, when given)."""
        m = self.for_kind(kind)
        p = m.probabilities(x)[0]
        return m.labels[int(p.argmax())], {lab: float(v) for lab, v in zip(m.labels, p, strict=True)}

    def to_json(self) -> dict:
        out = {
            "kind": "multinomial-logistic-regression", "labels": list(self.labels), "features": list(self.features),
            "mean": self.mean.tolist(), "scale": self.scale.tolist(), "weights": self.weights.tolist(),
            "bias": self.bias.tolist(), **self.meta,
        }
        if self.by_kind:
            out["by_kind"] = {k: m.to_json() for k, m in self.by_kind.items()}
        return out

    @classmethod
    def from_json(cls, obj: dict) -> VerdictModel:
        feats = tuple(obj["features"])
        if feats != FEATURES:
            raise ValueError(f"verdict model features {feats} differ from this version's {FEATURES}")
        by_kind = {}
        for k, sub in obj.get("by_kind", {}).items():
            if k not in SOURCE_KINDS:
                raise ValueError(f"verdict model weights for an unknown kind of source {k!r} (known: {SOURCE_KINDS})")
            by_kind[k] = cls.from_json(sub)
        meta = {k: v for k, v in obj.items()
                if k not in ("kind", "labels", "features", "mean", "scale", "weights", "bias", "by_kind")}
        return cls(tuple(obj["labels"]), feats, np.array(obj["mean"], dtype=float), np.array(obj["scale"], dtype=float),
                   np.array(obj["weights"], dtype=float), np.array(obj["bias"], dtype=float), meta, by_kind)


def load_verdict_model(path: str | Path | None = None) -> VerdictModel:
    """The shipped model (``core/verify/data/verdict_model.json``) or one at ``path``."""
    if path is None:
        text = resources.files("core.verify").joinpath("data", MODEL_FILE).read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    return VerdictModel.from_json(json.loads(text))


def model_digest(path: str | Path | None = None) -> str:
    """SHA-256 (first 16 hex) of the model file: part of a run's config, so the stage cache
    never reuses verdicts made with other weights."""
    import hashlib

    if path is None:
        data = resources.files("core.verify").joinpath("data", MODEL_FILE).read_bytes()
    else:
        data = Path(path).read_bytes()
    return hashlib.sha256(data).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def shipped_model() -> VerdictModel:
    """The shipped model, read once per process (a read-only package file)."""
    return load_verdict_model()


def predict(
    features: np.ndarray, model: VerdictModel | None = None, kind: str | None = None,
) -> tuple[str, dict[str, float]]:
    """Pure prediction: (verdict, probability of each verdict) for one feature vector, with the
    weights for ``kind`` of source (:func:`source_kind`) where the model has them."""
    return (model or shipped_model()).predict(features, kind)


def fit(
    x: np.ndarray, y: Sequence[str], *, labels: Sequence[str] = VERDICTS, l2: float = 1.0,
    sample_weight: np.ndarray | None = None, meta: dict | None = None,
) -> VerdictModel:
    """L2-regularised multinomial logistic regression by L-BFGS (scipy.optimize) on the
    standardised features: minimise Σ wᵢ · −log p(yᵢ | xᵢ) + l2/2 · ‖W‖² (bias not
    penalised). Returns the model with its standardisation folded in as mean / scale."""
    from scipy.optimize import minimize

    x = np.asarray(x, dtype=float)
    n, d = x.shape
    k = len(labels)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    xs = (x - mean) / scale
    yi = np.array([labels.index(v) for v in y])
    onehot = np.eye(k)[yi]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        wm, b = theta[: k * d].reshape(k, d), theta[k * d :]
        z = xs @ wm.T + b
        z -= z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        val = -(w * (onehot * logp).sum(axis=1)).sum() + 0.5 * l2 * (wm**2).sum()
        g = (np.exp(logp) - onehot) * w[:, None]  # (n, k)
        gw = g.T @ xs + l2 * wm
        return float(val), np.concatenate([gw.ravel(), g.sum(axis=0)])

    res = minimize(loss, np.zeros(k * d + k), jac=True, method="L-BFGS-B", options={"maxiter": 2000})
    wm, b = res.x[: k * d].reshape(k, d), res.x[k * d :]
    info = {"l2": l2, "n": n, "converged": bool(res.success), "loss": float(res.fun)}
    return VerdictModel(tuple(labels), FEATURES, mean, scale, wm, b, {**(meta or {}), "fit": info})


def decide_learned(
    claim: str, judgements: list[Judgement], passages: Sequence[PassageEvidence] | dict[int, str],
    subject_terms: Callable[[str], set[str]] | None, t: Thresholds, model: VerdictModel | None = None,
) -> ClaimVerdict:
    """The learned verdict for one claim; the deciding unit is the best unit on the verdict's
    side (grounded first), so the support score stays P(E) − P(C) of shown evidence."""
    terms = subject_terms(claim) if subject_terms else set()
    feats = extract(claim, judgements, passages, terms, t)
    label, _ = predict(feats.values, model, source_kind(passages))
    titles = passages if isinstance(passages, dict) else {p.passage_id: p.title for p in passages}
    pool = considered(judgements, t)
    # with no unit naming the subject, NEI shows no evidence (as the rules do); a verdict the
    # model still reaches from ungrounded units shows the unit it rests on
    grounded = [j for j in pool if j.grounded] or (pool if label != "not_enough_info" else [])

    def shown(side: int) -> Judgement | None:
        """The unit to show for a side: one past .5 from the subject's own document first, a
        single sentence or passage before a set (sets may join several documents), then the
        highest probability — so "first woman to win a Nobel Prize" is shown with Marie
        Curie's page, not a set filed under Chien-Shiung Wu's. Below .5 only the probability
        counts: a "supported" claim was shown with its own-title sentence at P(E) .08 (support
        −.50) beside a unit at .48."""
        if not grounded:
            return None

        def rank(j: Judgement) -> tuple:
            past = bool(j.probs[side] > 0.5)
            return (past, past and title_is_subject(titles.get(j.unit.passage_id, ""), terms),
                    past and j.unit.kind != "set", float(j.probs[side]))

        return max(grounded, key=rank)

    e, c = shown(ENTAIL), shown(CONTRADICT)
    deciding = {"supported": e, "refuted": c}.get(label)
    if deciding is None and e is not None and c is not None:
        deciding = e if e.probs[ENTAIL] >= c.probs[CONTRADICT] else c
    return ClaimVerdict(label, deciding.support if deciding else 0.0, deciding, judgements)
