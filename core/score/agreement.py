"""Agreement of model verdicts with human labels, as the papers report for their annotators
(seed 000: Cohen's κ; seeds 001/003: Krippendorff's α; §6.7 of the seeds digest).

* Cohen's κ = (p_o − p_e) / (1 − p_e), p_o the observed agreement, p_e = Σ_k p_k^A·p_k^B
  from the two raters' marginals (Cohen 1960). Undefined (None) when p_e = 1.
* Krippendorff's α (nominal) = 1 − D_o / D_e from the coincidence matrix: every unit with
  m_u ≥ 2 values adds each ordered pair of its values with weight 1/(m_u − 1);
  D_o = Σ_{c≠k} o_ck / n, D_e = Σ_{c≠k} n_c·n_k / (n·(n − 1)), n = Σ n_c (Krippendorff
  2011, "Computing Krippendorff's Alpha-Reliability"). Handles missing values and any
  number of coders; None when D_e = 0 (one value only).
* Confusion matrix: rows = human label, columns = model verdict.

Human labels come from ``store.annotations`` (set in the TUI, or imported from a dataset
with :func:`import_labels`, origin = the dataset's name); the model's label is the claim's
latest verdict. Per run and pooled across runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

LABELS = ("supported", "refuted", "not_enough_info", "conflicting")
BINARY = ("supported", "not_supported")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's κ of two raters over the same items (see the module docstring)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} labels from one rater but {len(b)} from the other")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[k] * cb[k] for k in ca) / (n * n)
    return None if p_e == 1 else (p_o - p_e) / (1 - p_e)


def krippendorff_alpha_nominal(units: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Nominal α over ``units`` (one sequence of coders' values per unit; None = missing)."""
    coincidence: Counter = Counter()
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue  # an unpairable unit carries no information about agreement
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidence[(c, k)] += 1 / (m - 1)
    n_c: Counter = Counter()
    for (c, _k), w in coincidence.items():
        n_c[c] += w
    n = sum(n_c.values())
    if n <= 1:
        return None
    d_o = sum(w for (c, k), w in coincidence.items() if c != k) / n
    d_e = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k) / (n * (n - 1))
    return None if d_e == 0 else 1 - d_o / d_e


def confusion(human: Sequence[str], model: Sequence[str], labels: Sequence[str]) -> dict[str, dict[str, int]]:
    """{human label: {model label: count}} over ``labels`` (unknown labels are an error)."""
    unknown = (set(human) | set(model)) - set(labels)
    if unknown:
        raise ValueError(f"labels {sorted(unknown)} are not in {list(labels)}")
    table = {h: dict.fromkeys(labels, 0) for h in labels}
    for h, m in zip(human, model, strict=True):
        table[h][m] += 1
    return table


def to_binary(label: str) -> str:
    """Supported vs not (FActScore's S / NS; ExpertQA's Complete vs not): the 2-way view."""
    return "supported" if label == "supported" else "not_supported"


@dataclass
class Agreement:
    n: int
    labels: tuple[str, ...]
    observed: float | None  # share of claims where model and human agree
    kappa: float | None
    alpha: float | None
    confusion: dict[str, dict[str, int]]
    origins: dict[str, int] = field(default_factory=dict)  # where the human labels came from


def agreement(pairs: Sequence[tuple[str, str]], binary: bool = False, origins: Mapping[str, int] | None = None) -> Agreement:
    """Agreement over (human, model) label pairs."""
    if binary:
        pairs = [(to_binary(h), to_binary(m)) for h, m in pairs]
    labels = BINARY if binary else LABELS
    human = [h for h, _ in pairs]
    model = [m for _, m in pairs]
    n = len(pairs)
    return Agreement(
        n=n, labels=labels,
        observed=sum(h == m for h, m in pairs) / n if n else None,
        kappa=cohen_kappa(human, model),
        alpha=krippendorff_alpha_nominal(pairs),
        confusion=confusion(human, model, labels),
        origins=dict(origins or {}),
    )
