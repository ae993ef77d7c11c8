"""``claimscope eval attribution``: AutoAIS against ExpertQA's expert support labels
(seed 002 §3.5, Table 6).

Data: ExpertQA JSONL (seed 002 §3.8; ``../shared/data/expertqa/dev.jsonl``): per question,
answers from six systems, each split into sentence claims with their ``evidence`` entries
``"[n] URL\\n\\nPASSAGE"`` (a passage the annotator judged) or ``"[n] URL"`` (a web page
we do not have: **N/A** here — the gpt4 and bing_chat answers cite only URLs).

Table 6's protocol: gold = 1 iff the expert's ``support`` is ``Complete``; claims that are
not cite-worthy are skipped (repo); a claim with no evidence has no AutoAIS label and is
left out (repo). We also leave out claims whose cited evidence is unavailable (URL only),
and say how many. Metrics: precision, recall and F1 of the positive class, per system
and over all claims (micro), beside the confusion of our labels vs the experts' (Partial
only with a decomposer: ``--partial``) and the per-system AutoAIS macro score (mean per
answer over the cite-worthy claims with evidence, then over answers; §3.5).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.errors import InputError
from core.evaluate.datasets import check_file
from core.evaluate.report import claimscope_version, machine
from core.ingest.sources import jsonl_records, record_field
from core.score.attribution import LABELS, Attributor, claim_citations

# seed 002 §3.7, Table 6, zero-shot T5-TRUE (P, R, F1) — the reference this eval compares with
PAPER_ZERO_SHOT = {
    "gpt4": (0.33, 0.02, 0.05), "bing_chat": (0.97, 0.26, 0.41), "rr_sphere_gpt4": (0.89, 0.59, 0.71),
    "rr_gs_gpt4": (0.86, 0.74, 0.79), "post_hoc_sphere_gpt4": (0.92, 0.28, 0.43),
    "post_hoc_gs_gpt4": (0.87, 0.17, 0.29), "all": (0.88, 0.38, 0.53),
}
PAPER_FINE_TUNED_ALL = (0.82, 0.91, 0.86)


@dataclass(frozen=True)
class ExpertClaim:
    text: str
    citations: tuple[int, ...]
    support: str | None  # the expert's label (Complete / Partial / Incomplete / Missing / N/A)
    worthy: bool  # cite-worthy ("worthiness" == "Yes")


@dataclass(frozen=True)
class ExpertAnswer:
    question: str
    system: str
    claims: list[ExpertClaim]
    sources: dict[int, str | None]  # [n] → passage text, None when only a URL is given


def parse_evidence(entry: str) -> tuple[int | None, str | None]:
    """``"[3] https://…\\n\\nPassage…"`` → (3, "Passage…"); a URL alone → (3, None)."""
    head, _, passage = entry.partition("\n\n")
    ids = claim_citations(head)
    return (ids[0] if ids else None), (passage.strip() or None)


def load_expertqa(path: str | Path) -> list[ExpertAnswer]:
    path = check_file(path, "ExpertQA")
    out = []
    for lineno, obj in jsonl_records(path):
        question = record_field(obj, "question", str, path, lineno)
        answers = record_field(obj, "answers", dict, path, lineno)
        for system, ans in answers.items():
            if not isinstance(ans, dict) or not isinstance(ans.get("claims"), list):
                raise InputError(f"answer {system!r} needs a list field 'claims'", path, lineno)
            sources: dict[int, str | None] = {}
            claims = []
            for c in ans["claims"]:
                if not isinstance(c, dict) or not isinstance(c.get("claim_string"), str):
                    raise InputError(f"answer {system!r}: every claim needs a string 'claim_string'", path, lineno)
                cites = list(claim_citations(c["claim_string"]))
                for entry in c.get("evidence") or []:
                    n, passage = parse_evidence(str(entry))
                    if n is None:
                        continue
                    cites.append(n)
                    if passage or n not in sources:
                        sources[n] = passage or sources.get(n)
                claims.append(ExpertClaim(c["claim_string"], tuple(dict.fromkeys(cites)), c.get("support"),
                                          c.get("worthiness") == "Yes"))
            out.append(ExpertAnswer(question, system, claims, sources))
    if not out:
        raise InputError("contains no answers", path)
    return out


def prf(tp: int, fp: int, fn: int) -> dict:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0, "tp": tp, "fp": fp, "fn": fn}


def evaluate_attribution(
    *, path: str | Path, attributor: Attributor, limit: int | None = None,
    progress: Callable[[str, int, int | None], None] | None = None,
) -> dict:
    answers = load_expertqa(path)[: limit or None]
    counts: dict[str, Counter] = defaultdict(Counter)  # system → tp/fp/fn/tn
    skipped: Counter = Counter()
    label_confusion: dict[str, Counter] = defaultdict(Counter)  # expert label → our label
    answer_scores: dict[str, list[float]] = defaultdict(list)
    t0 = time.perf_counter()
    n_claims = 0
    for ans in answers:
        judged = []
        for i, c in enumerate(ans.claims):
            n_claims += 1
            if not c.worthy:  # the repo skips them; not judged at all, to save time
                skipped["not cite-worthy"] += 1
                continue
            ca = attributor.attribute_claim(i, c.text, c.citations, ans.sources)
            label_confusion[str(c.support)][ca.label] += 1
            if ca.check is not None:
                judged.append(ca.check.autoais)
            if ca.check is None:  # no AutoAIS label: left out, as the repo does
                skipped["no evidence (Missing)" if ca.label == "Missing" else "evidence unavailable (URL only: N/A)"] += 1
                continue
            gold, pred = c.support == "Complete", bool(ca.check.autoais)
            for key in (ans.system, "all"):
                counts[key]["tp" if gold and pred else "fp" if pred else "fn" if gold else "tn"] += 1
        if judged:
            answer_scores[ans.system].append(sum(judged) / len(judged))
        if progress:
            progress("attribution", 1, len(answers))
    systems = {}
    for key in sorted(counts, key=lambda k: (k == "all", k)):
        c = counts[key]
        systems[key] = {**prf(c["tp"], c["fp"], c["fn"]), "claims": sum(c.values()),
                        "gold_complete": c["tp"] + c["fn"], "paper_zero_shot_prf": PAPER_ZERO_SHOT.get(key)}
        if key in answer_scores:
            systems[key]["autoais_macro"] = sum(answer_scores[key]) / len(answer_scores[key])
    return {
        "task": "attribution", "dataset": "expertqa", "path": str(path), "n": len(answers), "claims": n_claims,
        "protocol": {
            "gold": "support == Complete", "pred": f"AutoAIS: P(entailment) > {attributor.threshold} on the union of "
            f"cited evidence, top-{attributor.top_k} sentences when it does not fit one window",
            "skipped": dict(skipped), "partial_by_atoms": attributor.decomposer is not None,
        },
        "systems": systems,
        "labels_vs_expert": {g: {k: label_confusion[g].get(k, 0) for k in LABELS} for g in sorted(label_confusion)},
        "paper_fine_tuned_all_prf": PAPER_FINE_TUNED_ALL,
        "manifest": {"claimscope": claimscope_version(), "models": {"nli": attributor.nli.ref.manifest()}},
        "timing": {"wall_s": time.perf_counter() - t0},
        "machine": machine(),
    }


def format_table(report: dict) -> str:
    lines = [f"attribution on {report['dataset']} ({report['n']} answers, {report['claims']} claims); "
             f"gold = Complete; skipped: {report['protocol']['skipped']}",
             f"{'system':<22}{'claims':>7}{'P':>7}{'R':>7}{'F1':>7}   paper 0-shot P/R/F1"]
    for name, m in report["systems"].items():
        ref = m.get("paper_zero_shot_prf")
        lines.append(f"{name:<22}{m['claims']:>7}{m['precision']:>7.3f}{m['recall']:>7.3f}{m['f1']:>7.3f}   "
                     + ("/".join(f"{x:.2f}" for x in ref) if ref else ""))
    return "\n".join(lines)
