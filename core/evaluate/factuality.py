"""``claimscope eval factuality``: claim verdicts and factual precision against human labels.

Datasets (read in place from ``../shared/data``):
- ``factscore`` (``factscore/*_dev.jsonl``): biographies by ChatGPT, InstructGPT and
  PerplexityAI with human atomic facts labelled S (supported by Wikipedia) / NS / IR
  (irrelevant, left out as FActScore does). Verified against a knowledge source in the
  database (default the built-in ``wiki-vital``: 10,033 vital-article summaries, so most
  of these rare people are not in it — the report counts claims with no evidence and
  answers whose topic has no page).
- ``factcheck-gpt`` (``factcheck_gpt/dev.jsonl``): ChatGPT answers → decontextualised
  claims labelled true / false (``unknown`` left out), each verified against **its own**
  retrieved evidence passages (``auto_evidence``).

The human claims are verified as given (this measures retrieval + verification, not
decomposition, which ``eval decompose`` measures). A claim counts as supported iff the
verdict is ``supported``. Reported: claim-label agreement (accuracy, P/R/F1 of each class,
Cohen's κ, Krippendorff's α, confusion), per-answer factual precision vs the human one
(mean absolute error) and the batch FActScore of both (FActScore's error = their
difference), and how many claims had no evidence: no retrieved unit names the claim's
subject (the verifier's grounding guard), so nothing could decide.

``store=True`` keeps every answer as a run (claims, evidence, verdicts, scores) with the
human labels imported as annotations (origin = the dataset name), so that
``claimscope agreement RUN…`` and the TUI can show them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.errors import InputError
from core.evaluate.datasets import check_file
from core.evaluate.report import claimscope_version, machine
from core.ingest.sources import jsonl_records, record_field
from core.retrieve.searcher import DEFAULT_MODE
from core.score.agreement import agreement
from core.score.precision import AnswerPrecision, ClaimOutcome, answer_precision, batch_precision
from core.verify.verifier import ClaimVerdict, PassageEvidence, Verifier

DATASETS = ("factscore", "factcheck-gpt")
# human label → verdict vocabulary for the annotations table: FActScore's NS is "not
# supported" by Wikipedia (not necessarily false); Factcheck-GPT's false is refuted.
HUMAN_TO_VERDICT = {"factscore": {"S": "supported", "NS": "not_enough_info"},
                    "factcheck-gpt": {True: "supported", False: "refuted"}}


@dataclass(frozen=True)
class GoldClaim:
    text: str
    label: str  # verdict vocabulary (supported / not_enough_info / refuted)
    evidence: tuple[str, ...] = ()  # factcheck-gpt: the claim's own passages


@dataclass(frozen=True)
class GoldAnswer:
    id: str
    topic: str | None
    text: str
    claims: list[GoldClaim]
    left_out: int = 0  # labelled claims not scored (FActScore IR, Factcheck-GPT unknown)


def load_factuality(dataset: str, path: str | Path) -> tuple[list[GoldAnswer], int]:
    """Answers with their labelled claims, and how many labelled claims were left out (IR /
    unknown)."""
    if dataset not in DATASETS:
        raise InputError(f"unknown factuality dataset {dataset!r} ({', '.join(DATASETS)})")
    path = check_file(path, dataset)
    mapping = HUMAN_TO_VERDICT[dataset]
    out = []
    for lineno, obj in jsonl_records(path):
        claims, dropped = [], 0
        if dataset == "factscore":
            text = record_field(obj, "output", str, path, lineno)
            topic = obj.get("topic")
            for ann in obj.get("annotations") or []:
                for fact in (ann.get("human-atomic-facts") or []) if isinstance(ann, dict) else []:
                    if fact.get("label") in mapping and isinstance(fact.get("text"), str):
                        claims.append(GoldClaim(fact["text"], mapping[fact["label"]]))
                    else:
                        dropped += 1
            ext = f"{path.stem}:{topic or lineno}"
        else:
            text = record_field(obj, "response", str, path, lineno)
            topic = None
            for s in record_field(obj, "sentences", dict, path, lineno).values():
                labels = s.get("claims_factuality_label") or []
                evidence = s.get("auto_evidence") or [[] for _ in labels]
                for c, lab, ev in zip(s.get("claims") or [], labels, evidence, strict=False):
                    if lab in mapping and isinstance(c, str):
                        claims.append(GoldClaim(c, mapping[lab], tuple(e for e in ev if isinstance(e, str))))
                    else:
                        dropped += 1
            ext = f"{path.stem}:{lineno}"
        out.append(GoldAnswer(ext, topic, text, claims, dropped))
    if not out:
        raise InputError("contains no answers", path)
    return out, sum(a.left_out for a in out)


def mentions_subject(terms: set[str], texts: Sequence[str]) -> bool:
    """The grounding guard's test (core/verify/verifier.py): some text holds every subject term."""
    from models.nlp import normalise_term

    return not terms or any(terms <= {normalise_term(w) for w in re.findall(r"\w+", t)} for t in texts)


@dataclass
class ClaimResult:
    answer: str
    text: str
    human: str
    model: str
    support: float
    no_evidence: bool


def _passages(texts: Sequence[str], splitter) -> list[PassageEvidence]:
    spans = splitter.split(list(texts)) if texts else []
    return [PassageEvidence(i, i, tuple(t[s:e] for s, e in sp), t) for i, (t, sp) in enumerate(zip(texts, spans, strict=True))]


def evaluate_factuality(
    *, dataset: str, paths: Sequence[str | Path], verifier: Verifier, searcher: Any = None, splitter: Any = None,
    source: str = "wiki-vital", k: int = 10, mode: str = DEFAULT_MODE, limit: int | None = None, db: Any = None,
    store: bool = False, progress: Callable[[str, int, int | None], None] | None = None,
) -> dict:
    """See the module docstring. ``searcher`` (factscore) or ``splitter`` (factcheck-gpt)."""
    from core.pipeline.runner import passage_evidence

    t0 = time.perf_counter()
    answers: list[GoldAnswer] = []
    for p in paths:
        answers += load_factuality(dataset, p)[0][: limit or None]
    dropped = sum(a.left_out for a in answers)
    titles: set[str] = set()
    if dataset == "factscore":
        if searcher is None:
            raise InputError("factscore needs a knowledge source to search (--source)")
        titles = {r[0].lower() for r in searcher.db.execute(
            "SELECT d.title FROM documents d JOIN sources s ON s.id = d.source_id WHERE s.name = ?", [source])}
        if not titles:
            raise InputError(f"the source {source!r} is empty or not indexed")
    results: list[ClaimResult] = []
    per_answer: list[dict] = []
    nli_claims = 0
    for ans in answers:
        rows: list[tuple[GoldClaim, ClaimVerdict, list, bool]] = []
        for c in ans.claims:
            terms = verifier.subject_terms(c.text) if verifier.subject_terms else set()
            hits: list = []
            if dataset == "factscore":
                hits = searcher.search(c.text, k=k, mode=mode, sources=[source], mark_sentences=False,
                                       rank_sentences=verifier.wants_sentence_ranks)
                evidence = passage_evidence(hits)
            else:
                evidence = _passages(list(c.evidence), splitter)
            rules = getattr(verifier, "verdict_rule", "rules") == "rules"
            if not evidence or (rules and not mentions_subject(terms, [f"{e.title} {e.text}" for e in evidence])):
                # no unit could be grounded, so no rule could decide: the verifier's verdict is NEI
                # (the learned rule weighs ungrounded units itself, so it judges them)
                verdict, no_ev = ClaimVerdict("not_enough_info", 0.0, None, []), True
            else:
                verdict = verifier.verify(c.text, evidence)
                nli_claims += 1
                no_ev = not any(j.grounded for j in verdict.judgements)
            rows.append((c, verdict, hits, no_ev))
            results.append(ClaimResult(ans.id, c.text, c.label, verdict.label, verdict.support, no_ev))
        human = answer_precision([ClaimOutcome(True, c.label) for c, *_ in rows])
        model = answer_precision([ClaimOutcome(True, v.label) for _, v, _, _ in rows])
        per_answer.append({
            "id": ans.id, "claims": len(rows), "human_precision": human.precision, "model_precision": model.precision,
            "no_evidence": sum(r[3] for r in rows),
            **({"topic": ans.topic, "topic_in_source": (ans.topic or "").lower() in titles} if dataset == "factscore" else {}),
        })
        if store and db is not None and rows:
            per_answer[-1]["run_id"] = _store_answer(db, dataset, ans, rows, verifier, mode)
        if progress:
            progress(dataset, 1, len(answers))
    return _report(dataset, paths, answers, results, per_answer, dropped, nli_claims, verifier, t0,
                   {"source": source, "k": k, "mode": mode} if dataset == "factscore" else {"evidence": "auto_evidence"})


def _report(dataset, paths, answers, results, per_answer, dropped, nli_claims, verifier, t0, setup) -> dict:
    pairs = [(r.human, r.model) for r in results]
    binary = agreement(pairs, binary=True) if pairs else None
    cls = {}
    if binary:
        for lab in binary.labels:
            tp = binary.confusion[lab][lab]
            fp = sum(binary.confusion[h][lab] for h in binary.labels) - tp
            fn = sum(binary.confusion[lab].values()) - tp
            p = tp / (tp + fp) if tp + fp else 0.0
            r = tp / (tp + fn) if tp + fn else 0.0
            cls[lab] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}
    scored = [a for a in per_answer if a["human_precision"] is not None]
    errors = [abs(a["model_precision"] - a["human_precision"]) for a in scored]
    hb = batch_precision([_ap(a["human_precision"]) for a in scored])
    mb = batch_precision([_ap(a["model_precision"]) for a in scored])
    no_ev = sum(r.no_evidence for r in results)
    report = {
        "task": "factuality", "dataset": dataset, "path": [str(p) for p in paths], "n": len(answers),
        "claims": len(results), "claims_left_out": dropped, "setup": setup,
        "claims_no_evidence": no_ev, "claims_no_evidence_share": no_ev / len(results) if results else None,
        "claims_verified_by_nli": nli_claims,
        "claim_agreement": {
            "accuracy": binary.observed if binary else None, "cohen_kappa": binary.kappa if binary else None,
            "krippendorff_alpha": binary.alpha if binary else None, "per_class": cls,
            "confusion": binary.confusion if binary else None,
            "confusion_4way_model": asdict(agreement(pairs))["confusion"] if pairs else None,
        },
        "precision": {
            "answers_scored": len(scored), "mae_per_answer": sum(errors) / len(errors) if errors else None,
            "human_factscore": hb.mean, "model_factscore": mb.mean,
            "factscore_error": abs(mb.mean - hb.mean) if hb.mean is not None and mb.mean is not None else None,
        },
        "answers": per_answer,
        "manifest": {"claimscope": claimscope_version(), "models": {"nli": verifier.nli.ref.manifest()},
                     "grounding": verifier.subject_terms is not None,
                     "verdict_rule": getattr(verifier, "verdict_rule", "rules")},
        "timing": {"wall_s": time.perf_counter() - t0},
        "machine": machine(),
    }
    if dataset == "factscore":
        report["topics_in_source"] = sum(a.get("topic_in_source", False) for a in per_answer)
    return report


def _ap(p: float) -> AnswerPrecision:
    return AnswerPrecision(p, 0, 1, 0, 0, 0, {})


def _store_answer(db, dataset: str, ans: GoldAnswer, rows, verifier: Verifier, mode: str) -> int:
    """One run per answer: its human claims, evidence and verdicts, then scores; the human
    labels as annotations (origin = dataset)."""
    from dataclasses import asdict as dc_asdict

    from core.pipeline.runner import Pipeline
    from core.pipeline.stored import import_labels, store_claim_result
    from store import runs as rq
    from store.db import write_tx

    nli_id, thresholds = verifier.nli.ref.model_id, dc_asdict(verifier.t)
    with write_tx(db):
        run_id = rq.create_run(db, ans.text, {"kind": "eval factuality", "dataset": dataset, "mode": mode})
        rq.set_external_id(db, run_id, ans.id)
        for i, (c, verdict, hits, _) in enumerate(rows):
            cid = rq.add_claim(db, run_id, i, c.text)
            if hits:
                store_claim_result(db, cid, hits, verdict, mode, nli_id, thresholds)
            else:  # evidence not in the database (factcheck-gpt's own passages): the verdict alone
                d = verdict.deciding
                rq.add_verdict(db, cid, verdict.label, verdict.support, nli_id, None, None,
                               d.probs if d else None, thresholds)
                rq.set_claim_status(db, cid, "done")
        import_labels(db, run_id, {i: c.label for i, (c, *_) in enumerate(rows)}, origin=dataset)
    Pipeline(db, None, None, None).score(run_id)  # type: ignore[arg-type]  # score() reads stored rows only
    return run_id


def format_table(report: dict) -> str:
    ca, pr = report["claim_agreement"], report["precision"]

    def f(x):
        return "—" if x is None else f"{x:.3f}"

    lines = [
        f"factuality on {report['dataset']}: {report['n']} answers, {report['claims']} labelled claims "
        f"({report['claims_left_out']} IR/unknown left out); no evidence for {report['claims_no_evidence']} claims "
        f"({f(report['claims_no_evidence_share'])})",
        f"claims: accuracy {f(ca['accuracy'])}  κ {f(ca['cohen_kappa'])}  α {f(ca['krippendorff_alpha'])}  "
        + "  ".join(f"F1({k}) {f(v['f1'])}" for k, v in ca["per_class"].items()),
        f"answers: precision MAE {f(pr['mae_per_answer'])} over {pr['answers_scored']}; FActScore human "
        f"{f(pr['human_factscore'])} vs model {f(pr['model_factscore'])} (error {f(pr['factscore_error'])})",
    ]
    if "topics_in_source" in report:
        lines.append(f"topics with a page in {report['setup']['source']}: {report['topics_in_source']} of {report['n']}")
    return "\n".join(lines)
