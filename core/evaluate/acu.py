"""``claimscope eval acu``: accuracy of context usage (seed 001 §5; seeds.md §2.3 and §2.7).

Input: (claim, evidence, stance) pairs from a JSONL file in one of two layouts, told apart
by each row's keys:

* claimscope's own: ``{"claim", "evidence", "stance", "claimant"?, "id"?}``, one pair a row;
  ``stance`` is any spelling :func:`core.diagnostics.acu.normalise_stance` accepts (the six DRUID stances,
  3-way names, SUPPORTS / REFUTES / NOT_ENOUGH_INFO …).
* Climate-FEVER (``{"claim_id", "claim", "evidences": [{"evidence", "evidence_label"}, …]}``):
  one pair per evidence sentence; SUPPORTS → supports, REFUTES → refutes, NOT_ENOUGH_INFO →
  insufficient-neutral (Climate-FEVER has no finer "insufficient" grades) [derived].

Report (the layout of seed 001 Table 22, which seeds.md §2.7 reproduces for DRUID): per
evidence stance the mean and standard deviation of ΔP(False), ΔP(None), ΔP(True) and of the
ACU **sum** (scale [−3, 3], the scale of every ACU the paper reports), the share of pairs with
context repulsion (ACU < 0) and with a memory conflict (claim-only prediction decisive and
against a decisive stance; the share is over the pairs of that stance, and the overall share
over supports + refutes pairs only, since no other stance can conflict — Table 21's caption).
Timing: the claim-only prompt is run once per claim first (``claim_only_seconds_median``),
then one with-evidence prompt per pair (``seconds_per_pair_median`` / ``_mean``: wall
seconds of each ``scorer.score`` call, whose claim-only half comes from the scorer's cache);
``seconds_per_pair_all_in`` is ``total_s`` (both passes) over the scored pairs.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.diagnostics.acu import ANSWERS, DIRECTION, REFUTES, SUPPORTS, TABLE22_ORDER, ContextUsage, normalise_stance
from core.errors import InputError
from core.evaluate.datasets import check_file
from core.evaluate.report import claimscope_version, machine
from core.ingest.sources import jsonl_records, record_field

if TYPE_CHECKING:
    from core.diagnostics.acu import ContextUsageScorer

Progress = Callable[[str, int, int | None], None]

_CLIMATE_FEVER_STANCES = {"SUPPORTS": "supports", "REFUTES": "refutes", "NOT_ENOUGH_INFO": "insufficient-neutral"}


@dataclass(frozen=True)
class AcuPair:
    """One (claim, evidence) sample with its six-way evidence stance.

    ``label`` keeps the file's own stance text; ``group`` the claim it belongs to (the
    Climate-FEVER ``claim_id``, else the claim text), so pairs of one claim can be told apart."""

    id: str
    claim: str
    evidence: str
    stance: str
    claimant: str | None = None
    label: str | None = None
    group: str | None = None


def load_acu_pairs(path: str | Path) -> list[AcuPair]:
    """Pairs from a JSONL file, either layout (module docstring), chosen per row by its keys:
    a row with ``evidences`` is Climate-FEVER, any other row claimscope's own.

    Every problem raises :class:`InputError` naming the file and line: malformed JSON, a
    missing or mistyped field, an empty claim or evidence, an unknown stance, a duplicate id."""
    path = check_file(path, "ACU pairs")
    pairs: list[AcuPair] = []
    seen: dict[str, int] = {}
    for lineno, obj in jsonl_records(path):
        rows = _climate_fever_row(obj, path, lineno) if "evidences" in obj else [_own_row(obj, path, lineno)]
        for pair in rows:
            if pair.id in seen:
                raise InputError(f"duplicate id {pair.id!r} (first on line {seen[pair.id]})", path, lineno)
            seen[pair.id] = lineno
            pairs.append(pair)
    if not pairs:
        raise InputError("contains no claim–evidence pairs", path)
    return pairs


def _text(obj: dict, key: str, path: Path, lineno: int, where: str = "") -> str:
    value = record_field(obj, key, str, path, lineno)
    if not value.strip():
        raise InputError(f"field {where}{key!r} is empty", path, lineno)
    return value.strip()


def _own_row(obj: dict, path: Path, lineno: int) -> AcuPair:
    if "evidence" not in obj and "stance" not in obj:
        raise InputError(
            "expected a row with 'claim', 'evidence' and 'stance' (or a Climate-FEVER row with 'evidences'); "
            f"found keys {sorted(obj)}", path, lineno,
        )
    claim = _text(obj, "claim", path, lineno)
    evidence = _text(obj, "evidence", path, lineno)
    raw = record_field(obj, "stance", str, path, lineno)
    try:
        stance = normalise_stance(raw)
    except InputError as exc:
        raise InputError(str(exc), path, lineno) from None
    claimant = (record_field(obj, "claimant", str, path, lineno, required=False) or "").strip() or None
    ext_id = record_field(obj, "id", (str, int), path, lineno, required=False)
    if isinstance(ext_id, bool):
        raise InputError("field 'id' must be str or int, got bool", path, lineno)
    pid = str(ext_id) if ext_id is not None else f"line-{lineno}"
    return AcuPair(pid, claim, evidence, stance, claimant, raw, claim)


def _climate_fever_row(obj: dict, path: Path, lineno: int) -> list[AcuPair]:
    cid = str(record_field(obj, "claim_id", (str, int), path, lineno))
    claim = _text(obj, "claim", path, lineno)
    evidences = record_field(obj, "evidences", list, path, lineno)
    out = []
    for n, ev in enumerate(evidences):
        if not isinstance(ev, dict):
            raise InputError(f"evidences[{n}] must be an object", path, lineno)
        text = _text(ev, "evidence", path, lineno, where=f"evidences[{n}].")
        raw = record_field(ev, "evidence_label", str, path, lineno)
        stance = _CLIMATE_FEVER_STANCES.get(raw.strip().upper().replace(" ", "_"))
        if stance is None:
            raise InputError(
                f"unknown evidences[{n}].evidence_label {raw!r} (expected SUPPORTS, REFUTES or NOT_ENOUGH_INFO)",
                path, lineno,
            )
        ev_id = ev.get("evidence_id")
        pid = f"{cid}/{ev_id if ev_id is not None else n}"
        out.append(AcuPair(pid, claim, text, stance, None, raw, cid))
    return out


# --------------------------------------------------------------------------- evaluation


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _sd(values: Sequence[float]) -> float | None:
    return statistics.pstdev(values) if len(values) > 1 else (0.0 if values else None)


def _summary(rows: Sequence[ContextUsage]) -> dict:
    acu = [r.acu_sum for r in rows]
    return {
        "n": len(rows),
        "delta_mean": {t: _mean([r.delta[t] for r in rows]) for t in ANSWERS},
        "delta_sd": {t: _sd([r.delta[t] for r in rows]) for t in ANSWERS},
        "acu_sum_mean": _mean(acu),
        "acu_sum_sd": _sd(acu),
        "acu_mean_mean": _mean([r.acu_mean for r in rows]),
        "repulsion_share": _mean([float(r.repulsion) for r in rows]),
        "memory_conflict_share": _mean([float(r.memory_conflict) for r in rows]),
    }


def evaluate_acu(
    pairs: Sequence[AcuPair], scorer: ContextUsageScorer, limit: int | None = None, progress: Progress | None = None,
) -> dict:
    """Score every pair with ``scorer`` and summarise as seed 001 Table 22 (module docstring).

    ``limit`` keeps the first ``limit`` pairs. Pairs whose prompt does not fit the model's
    context are skipped and listed under ``skipped`` (id and reason), not fatal: one long
    evidence piece should not lose a whole run."""
    from models.llm import LLMOutputError

    if limit is not None:
        pairs = list(pairs)[:limit]
    t_start = time.perf_counter()
    # Pass 1: the claim-only prompt once per claim (the scorer caches it). Doing these first
    # keeps the with-evidence prompts back to back, so each reuses the model's key/value cache
    # of the shared instruction and worked examples instead of re-reading them after every claim.
    claim_seconds: list[float] = []
    failed_claims: dict[tuple[str, str | None], str] = {}
    if hasattr(scorer, "probabilities"):
        for claim, claimant in dict.fromkeys((p.claim, p.claimant) for p in pairs):
            t0 = time.perf_counter()
            try:
                scorer.probabilities(claim, None, claimant)
            except LLMOutputError as exc:
                failed_claims[(claim, claimant)] = f"claim-only prompt: {exc}"
            else:
                claim_seconds.append(time.perf_counter() - t0)
    # Pass 2: one with-evidence prompt per pair; the claim-only probabilities come from the cache.
    results: list[tuple[AcuPair, ContextUsage]] = []
    seconds: list[float] = []
    skipped: list[dict] = []
    for pair in pairs:
        reason = failed_claims.get((pair.claim, pair.claimant))
        if reason is None:
            t0 = time.perf_counter()
            try:
                usage = scorer.score(pair.claim, pair.evidence, pair.stance, pair.claimant)
            except LLMOutputError as exc:
                reason = str(exc)
            else:
                seconds.append(time.perf_counter() - t0)
                results.append((pair, usage))
        if reason is not None:
            skipped.append({"id": pair.id, "reason": reason})
        if progress is not None:
            progress("acu", 1, len(pairs))
    total_s = time.perf_counter() - t_start

    usages = [u for _, u in results]
    per_stance = {
        stance: _summary([u for u in usages if u.stance == stance])
        for stance in TABLE22_ORDER
        if any(u.stance == stance for u in usages)
    }
    decisive = [u for u in usages if u.stance in (SUPPORTS, REFUTES)]
    llm = getattr(scorer, "llm", None)
    device = "gpu" if getattr(llm, "n_gpu_layers", 0) else "cpu"
    return {
        "task": "acu",
        "n": len(usages),
        "n_claims": len({(p.group or p.claim, p.claimant) for p, _ in results}),
        "per_stance": per_stance,
        "overall": {
            "acu_sum_mean": _mean([u.acu_sum for u in usages]),
            "acu_sum_sd": _sd([u.acu_sum for u in usages]),
            "acu_mean_mean": _mean([u.acu_mean for u in usages]),
            "repulsion_share": _mean([float(u.repulsion) for u in usages]),
            "memory_conflict_share": _mean([float(u.memory_conflict) for u in decisive]),
            "n_decisive": len(decisive),
        },
        "timing": {
            "seconds_per_pair_median": statistics.median(seconds) if seconds else None,
            "seconds_per_pair_mean": _mean(seconds),
            "claim_only_seconds_median": statistics.median(claim_seconds) if claim_seconds else None,
            "seconds_per_pair_all_in": total_s / len(usages) if usages else None,
            "total_s": total_s,
        },
        "pairs": [{"id": p.id, "group": p.group, **u.as_dict()} for p, u in results],
        "skipped": skipped,
        "manifest": {"claimscope": claimscope_version(), "scorer": scorer.manifest(), "scale": "acu_sum in [-3, 3]"},
        "machine": machine(device),
    }


def _num(value: float | None, width: int, signed: bool = True) -> str:
    if value is None:
        return f"{'-':>{width}}"
    return f"{value:>+{width}.2f}" if signed else f"{value:>{width}.2f}"


def format_table(report: dict) -> str:
    """Seed 001 Table 22's layout: per stance, mean ΔP for False / None / True (the arrow is
    the desirable direction, Table D) and the mean ACU sum; plus repulsion and memory-conflict
    shares, the overall mean and the timing."""
    scorer = report["manifest"]["scorer"]
    model = scorer.get("model_id") or scorer.get("id") or "model"
    lines = [
        f"ACU on {report['n']} pairs ({report['n_claims']} claims), {model}, {scorer.get('shots')}-shot; "
        "ACU is the sum over True/None/False, scale [-3, 3]",
        f"{'stance':<28}{'n':>5}{'ΔP False':>11}{'ΔP None':>11}{'ΔP True':>11}{'ACU':>8}{'repulsion':>11}{'conflict':>10}",
    ]
    for stance, s in report["per_stance"].items():
        cells = []
        for t in ("False", "None", "True"):
            arrow = "↑" if DIRECTION[stance][t] > 0 else "↓"
            cells.append(f"{_num(s['delta_mean'][t], 7)} {arrow} ")
        lines.append(
            f"{stance:<28}{s['n']:>5}" + "".join(f"{c:>11}" for c in cells) + _num(s["acu_sum_mean"], 8)
            + f"{s['repulsion_share']:>11.0%}{s['memory_conflict_share']:>10.0%}"
        )
    o = report["overall"]
    conflict = f"{o['memory_conflict_share']:>10.0%}" if o["memory_conflict_share"] is not None else f"{'-':>10}"
    repulsion = f"{o['repulsion_share']:>11.0%}" if o["repulsion_share"] is not None else f"{'-':>11}"
    lines.append(f"{'all':<28}{report['n']:>5}{'':>33}" + _num(o["acu_sum_mean"], 8) + repulsion + conflict)
    t = report["timing"]
    if t["seconds_per_pair_median"] is not None:
        claim_only = t.get("claim_only_seconds_median")
        lines.append(
            f"seconds per pair (with-evidence prompt): median {t['seconds_per_pair_median']:.3f}; "
            + (f"claim-only prompt per claim: median {claim_only:.3f}; " if claim_only is not None else "")
            + f"all in: {t['seconds_per_pair_all_in']:.3f} per pair, total {t['total_s']:.1f} s"
        )
    lines.append("conflict: share of the stance's pairs; 'all' counts supports + refutes pairs only")
    for s in report.get("skipped", []):
        lines.append(f"skipped {s['id']}: {s['reason']}")
    return "\n".join(lines)
