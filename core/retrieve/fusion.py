"""Fusing rankings: plain and weighted reciprocal-rank fusion, normalised-score fusion, and
fitting the fusion's weights on training claims.

Why weights: plain RRF (Cormack, Clarke & Büttcher 2009) treats BM25 and dense alike; on
SciFact the dense retriever is much stronger, so the equal-weight fusion fell below its best
member. Weighted RRF, score(d) = Σ_r w_r / (k + rank_r(d)) (1-based ranks), keeps RRF's
robustness to score scales while letting the stronger member lead. Normalised-score fusion
(min-max per ranking, then Σ_r w_r · s_r(d); a document missing from a ranking scores 0 in
it) is the other classic choice (Fox & Shaw's CombSUM over normalised scores).

The weights are *fitted*, never hand-set: :func:`fit_fusion` searches a grid that contains
each member alone (w = 1 / 0), so on the training claims the chosen fusion is never below
its best member by construction; on held-out claims that property is *measured*
(``claimscope eval retrieval``), not assumed. The fitted parameters ship as
``core/retrieve/data/fusion.json`` with what they were fitted on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

Ranked = list[tuple[int, float]]  # (item id, score), best first
FUSION_METHODS = ("rrf", "minmax")
FUSION_FILE = "fusion.json"


@dataclass(frozen=True)
class FusionParams:
    """One fusion rule: ``method`` ("rrf" or "minmax"), RRF's ``k``, per-member weights."""

    method: str = "rrf"
    k: int = 60
    weights: dict[str, float] = field(default_factory=dict)  # member → weight; missing = 1.0
    fitted_on: str = ""  # what the weights were fitted on (data, objective), for reports

    def weight(self, member: str) -> float:
        return self.weights.get(member, 1.0)


PLAIN_RRF = FusionParams("rrf", 60, {}, "none: Cormack et al. 2009 (k = 60, equal weights)")


def weighted_rrf(rankings: dict[str, Ranked], weights: dict[str, float] | None = None, k: int = 60) -> Ranked:
    """Σ over rankings of w_r / (k + rank), rank starting at 1; ties keep first-seen order.
    A member with weight 0 adds nothing (and its items only join with score 0)."""
    fused: dict[int, float] = {}
    for name, ranked in rankings.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, (pid, _score) in enumerate(ranked, start=1):
            fused[pid] = fused.get(pid, 0.0) + w / (k + rank)
    return sorted(fused.items(), key=lambda item: -item[1])


def minmax_fusion(rankings: dict[str, Ranked], weights: dict[str, float] | None = None) -> Ranked:
    """Σ over rankings of w_r · (s - min_r) / (max_r - min_r); an item a ranking does not
    hold scores 0 there. A ranking whose scores are all equal normalises to 1 for each item."""
    fused: dict[int, float] = {}
    for name, ranked in rankings.items():
        if not ranked:
            continue
        w = 1.0 if weights is None else weights.get(name, 1.0)
        scores = [s for _, s in ranked]
        lo, hi = min(scores), max(scores)
        span = hi - lo
        for pid, s in ranked:
            norm = (s - lo) / span if span > 0 else 1.0
            fused[pid] = fused.get(pid, 0.0) + w * norm
        for pid, _ in ranked:
            fused.setdefault(pid, 0.0)
    return sorted(fused.items(), key=lambda item: -item[1])


def fuse(rankings: dict[str, Ranked], params: FusionParams) -> Ranked:
    if params.method == "rrf":
        return weighted_rrf(rankings, params.weights, params.k)
    if params.method == "minmax":
        return minmax_fusion(rankings, params.weights)
    raise ValueError(f"unknown fusion method {params.method!r} (use {', '.join(FUSION_METHODS)})")


# ----------------------------------------------------------------------------- fitted weights


def load_fusion(path: Path | None = None, key: str = "passages") -> FusionParams:
    """The shipped fitted fusion (``core/retrieve/data/fusion.json``), or plain RRF if it is absent."""
    try:
        text = path.read_text() if path else resources.files("core.retrieve").joinpath("data", FUSION_FILE).read_text()
    except (FileNotFoundError, OSError):
        return PLAIN_RRF
    obj = json.loads(text).get(key)
    if not obj:
        return PLAIN_RRF
    return _params(obj)


SENTENCES_KEY = "sentences"  # the evidence-sentence fusion every mode falls back to
SENTENCES_BY_MODE_KEY = "sentences_by_mode"  # retrieval mode → its own evidence-sentence fusion


def load_sentence_fusion(mode: str = "hybrid", path: Path | None = None) -> FusionParams:
    """The evidence-sentence fusion for retrieval ``mode``: its own block under
    ``sentences_by_mode`` when fusion.json has one, else the shared ``sentences`` block (else
    plain RRF). Why per mode: the candidates are the sentences of the mode's top passages, and
    a mode that reorders its passages by their best sentence (``hybrid-sentence``) hands the
    sentence fusion a different pool, so weights fitted on the default's pool are not its best."""
    try:
        text = path.read_text() if path else resources.files("core.retrieve").joinpath("data", FUSION_FILE).read_text()
    except (FileNotFoundError, OSError):
        return PLAIN_RRF
    obj = json.loads(text)
    own = (obj.get(SENTENCES_BY_MODE_KEY) or {}).get(mode)
    if own:
        return _params(own)
    return _params(obj[SENTENCES_KEY]) if obj.get(SENTENCES_KEY) else PLAIN_RRF


def _params(obj: dict) -> FusionParams:
    return FusionParams(obj["method"], int(obj.get("k", 60)), dict(obj.get("weights", {})), obj.get("fitted_on", ""))


def params_json(params: FusionParams) -> dict:
    return asdict(params)


@dataclass(frozen=True)
class FitExample:
    """One training claim: its members' rankings and a scorer of a fused ranking (higher is
    better, e.g. recall@5 of the documents the ranking maps to)."""

    rankings: dict[str, Ranked]
    score: Callable[[Ranked], float]


def fusion_grid(members: Sequence[str], rrf_ks: Sequence[int] = (1, 5, 10, 20, 40, 60, 100),
                steps: int = 20) -> list[FusionParams]:
    """Every candidate rule for two or three members: weights on a simplex grid of
    ``1/steps`` (each member alone included), for RRF at each ``k`` and for min-max fusion."""
    weights = _simplex(len(members), steps)
    out = []
    for ws in weights:
        wd = dict(zip(members, ws, strict=True))
        out.extend(FusionParams("rrf", k, wd) for k in rrf_ks)
        out.append(FusionParams("minmax", 0, wd))
    return out


def _simplex(n: int, steps: int) -> list[tuple[float, ...]]:
    if n == 1:
        return [(1.0,)]
    out = []
    for i in range(steps + 1):
        for rest in _simplex(n - 1, steps - i) if steps - i > 0 else [(0.0,) * (n - 1)]:
            scale = (steps - i) / steps
            out.append((round(i / steps, 9), *(round(r * scale, 9) for r in rest)))
    return sorted(set(out))


def macro_average(groups: Sequence[Sequence[FitExample]]) -> list[FitExample]:
    """The examples of several datasets as one list whose plain mean score (what
    :func:`fit_fusion` maximises) is the mean of the datasets' means: each example's score is
    scaled by ``total / (len(groups) * len(its group))``, so a larger training set does not
    outvote a smaller one (the evidence-sentence weights are fitted on two sets, issue 21)."""
    groups = [g for g in groups if g]
    total = sum(len(g) for g in groups)
    return [FitExample(ex.rankings, lambda r, _s=ex.score, _w=total / (len(groups) * len(g)): _w * _s(r))
            for g in groups for ex in g]


def fit_fusion(examples: Sequence[FitExample], grid: Sequence[FusionParams], fitted_on: str) -> tuple[FusionParams, float]:
    """The grid rule with the best mean score over ``examples`` (ties: the earlier rule in
    the grid). Returns the rule (``fitted_on`` filled in) and its mean training score."""
    best, best_score = None, float("-inf")
    for params in grid:
        total = sum(ex.score(fuse(ex.rankings, params)) for ex in examples)
        mean = total / len(examples) if examples else 0.0
        if mean > best_score + 1e-12:
            best, best_score = params, mean
    assert best is not None, "empty grid"
    return FusionParams(best.method, best.k, dict(best.weights), fitted_on), best_score
