"""``claimscope eval grounding``: is a claim supported by a given document? (LLM-AggreFact's
protocol, the yardstick the field uses for verifiers.)

Rows ``{"id", "doc", "claim", "label": 1|0, "domain"?}``. Each claim is checked against its
document exactly as ``check --against`` checks a claim (core/pipeline/given.py): the document is
stored as a given document, chunked by the product's chunker, and the shipped verifier
judges every sentence, every passage (96-token windows) and, when none decides, sets of
≤ 3 sentences; a claim of several sentences takes the min over its sentences of the
largest P(entailment) (:func:`core.pipeline.given.judge_text`).

Prediction: supported iff that score > the shipped support threshold (``Thresholds.support``
from the settings, fitted on Climate-FEVER, never on the data scored here). The verdict
label itself ("supported") is reported beside it: the conflict rule turns some supported
claims into "conflicting" when another unit of the document contradicts strongly.

Metrics: balanced accuracy per domain (a row's ``domain``, else the dataset name) and their
unweighted mean (``bacc``), ROC AUC of the score (threshold-free), seconds per pair.

Baselines in the same run: ``baseline:lexical`` (largest share of the claim's content words
found in one passage of the document) and ``baseline:cosine`` (largest cosine between the
claim and a passage, all-MiniLM-L6-v2). A baseline has no shipped threshold, so its
threshold is fitted (max balanced accuracy) on a random half of the rows (``seed``) and
every system's ``eval_half`` metrics are on the other half; AUC needs no threshold.

Ablations (``--ablations``): the same judgements aggregated differently — max over windows
(passage units) only, max over sentences only, both without sentence sets, and sets always
allowed — so the shipped aggregation is a measured choice.

Claim-Split (``--split-claims rules|atomic``; WiCE, Kamoi et al. 2023 §5): each claim is
decomposed first and scores the min over its parts. Measured on WiCE and not the default
(docs/benchmarks.md, "Two ideas for given documents"). Every report lists its ``rows`` (id,
label, score, lexical share, and the cosine when that baseline ran) so that two runs can be paired
and the signals combined (``benchmarks/grounding_coverage.py``).

Loaders (``--dataset``) write this row format from:

* **WiCE** (``wice/entailment_retrieval/claim/dev.jsonl``): the claim vs the whole cited web
  page (its sentences, one per line); label 1 iff ``supported`` (``partially_supported`` and
  ``not_supported`` → 0, as LLM-AggreFact's WiCE).
* **ExpertQA** (``expertqa/dev.jsonl``): each answer claim with at least one cited evidence
  passage (URL-only citations have no text) vs its cited passages; label 1 iff the expert's
  support is ``Complete`` (``Partial`` / ``Incomplete`` → 0; ``N/A`` or no label: left out).
  Citation markers are stripped from the claim.
* **Factcheck-GPT** (``factcheck_gpt/dev.jsonl``): each claim vs its retrieved evidence
  passages; label 1 iff an annotator marked some passage ``completely-support``, else 0
  (``partially-support`` / ``refute`` / ``irrelevant`` only). Claims without evidence are
  left out.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import InputError
from core.evaluate.datasets import check_file
from core.evaluate.metrics import balanced_accuracy
from core.evaluate.report import claimscope_version, machine
from core.ingest.sources import jsonl_records, record_field
from core.text import content_words

DATASETS = ("wice", "expertqa", "factcheck-gpt", "jsonl")
Progress = Callable[[str, int, int | None], None]


@dataclass(frozen=True)
class GroundingRow:
    id: str
    doc: str
    claim: str
    label: int  # 1 supported by the document, 0 not
    domain: str


# --------------------------------------------------------------------------- loaders


def load_rows(path: str | Path) -> list[GroundingRow]:
    """The pre-converted JSONL; every bad line names its file and line."""
    path = check_file(path, "grounding data")
    rows, seen = [], {}
    for lineno, obj in jsonl_records(path):
        rid = record_field(obj, "id", (str, int), path, lineno)
        doc = record_field(obj, "doc", str, path, lineno)
        claim = record_field(obj, "claim", str, path, lineno)
        label = obj.get("label")
        if isinstance(label, bool) or label not in (0, 1):
            raise InputError(f"field 'label' must be 1 or 0, got {label!r}", path, lineno)
        domain = record_field(obj, "domain", str, path, lineno, required=False) or path.stem
        if not doc.strip() or not claim.strip():
            raise InputError("fields 'doc' and 'claim' must not be empty", path, lineno)
        if str(rid) in seen:
            raise InputError(f"duplicate id {rid!r} (first on line {seen[str(rid)]})", path, lineno)
        seen[str(rid)] = lineno
        rows.append(GroundingRow(str(rid), doc, claim, int(label), domain))
    if not rows:
        raise InputError("contains no rows", path)
    return rows


def load_wice(path: str | Path) -> list[GroundingRow]:
    path = check_file(path, "WiCE")
    out = []
    for lineno, obj in jsonl_records(path):
        claim = record_field(obj, "claim", str, path, lineno)
        evidence = record_field(obj, "evidence", list, path, lineno)
        label = record_field(obj, "label", str, path, lineno)
        if label not in ("supported", "partially_supported", "not_supported"):
            raise InputError(f"unknown label {label!r}", path, lineno)
        meta = obj.get("meta") if isinstance(obj.get("meta"), dict) else {}
        doc = "\n".join(s.strip() for s in evidence if isinstance(s, str) and s.strip())
        if doc and claim.strip():
            out.append(GroundingRow(f"wice-{meta.get('id', lineno)}", doc, claim.strip(), int(label == "supported"), "wice"))
    return _nonempty(out, path)


def load_expertqa(path: str | Path) -> list[GroundingRow]:
    from core.decompose.citations import strip_markers
    from core.evaluate.attribution import load_expertqa as load_answers

    out = []
    for a, ans in enumerate(load_answers(path)):
        for i, c in enumerate(ans.claims):
            if c.support not in ("Complete", "Partial", "Incomplete"):
                continue
            passages = [ans.sources[n] for n in c.citations if ans.sources.get(n)]
            if not passages:
                continue
            claim = " ".join(strip_markers(c.text)[0].split())
            if claim:
                out.append(GroundingRow(f"expertqa-{a}-{ans.system}-{i}", "\n\n".join(dict.fromkeys(passages)), claim,
                                        int(c.support == "Complete"), "expertqa"))
    return _nonempty(out, Path(path))


def load_factcheck_gpt(path: str | Path) -> list[GroundingRow]:
    path = check_file(path, "Factcheck-GPT")
    out = []
    for lineno, obj in jsonl_records(path):
        sentences = record_field(obj, "sentences", dict, path, lineno)
        for key, s in sentences.items():
            if not isinstance(s, dict):
                raise InputError(f"sentence {key!r} must be an object", path, lineno)
            claims = s.get("claims") or []
            for i, claim in enumerate(claims):
                evidence = _nth(s.get("auto_evidence"), i) or []
                stances = _nth(s.get("stance_claim_autoEvid"), i) or []
                passages = [e.strip() for e in evidence if isinstance(e, str) and e.strip()]
                if not passages or not isinstance(claim, str) or not claim.strip():
                    continue
                label = int("completely-support" in stances)
                out.append(GroundingRow(f"factcheck-gpt-{lineno}-{key}-{i}", "\n\n".join(dict.fromkeys(passages)),
                                        claim.strip(), label, "factcheck-gpt"))
    return _nonempty(out, path)


def _nth(values: Any, i: int) -> Any:
    return values[i] if isinstance(values, list) and i < len(values) else None


def _nonempty(rows: list[GroundingRow], path: Path) -> list[GroundingRow]:
    if not rows:
        raise InputError("contains no usable rows", path)
    return rows


LOADERS = {"wice": load_wice, "expertqa": load_expertqa, "factcheck-gpt": load_factcheck_gpt, "jsonl": load_rows}


def load_dataset(name: str, path: str | Path) -> list[GroundingRow]:
    if name not in LOADERS:
        raise InputError(f"unknown grounding dataset {name!r} (use {', '.join(DATASETS)})")
    return LOADERS[name](path)


def write_rows(rows: Iterable[GroundingRow], out: str | Path) -> int:
    """Write rows in the ``--data`` format; returns how many."""
    n = 0
    with Path(out).open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(asdict(r), ensure_ascii=False) + "\n")
            n += 1
    return n


# --------------------------------------------------------------------------- metrics


def roc_auc(labels: Sequence[int], scores: Sequence[float]) -> float | None:
    """Mann–Whitney AUC: P(score of a positive > score of a negative), ties count ½.
    None when only one class occurs."""
    y = np.asarray(labels, dtype=np.int64)
    s = np.asarray(scores, dtype=np.float64)
    pos, neg = s[y == 1], s[y == 0]
    if not len(pos) or not len(neg):
        return None
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s), dtype=np.float64)
    sorted_s = s[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    r_pos = ranks[y == 1].sum()
    return float((r_pos - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def bacc(labels: Sequence[int], preds: Sequence[int]) -> float:
    return balanced_accuracy([str(v) for v in labels], [str(int(p)) for p in preds])


def domain_metrics(rows: Sequence[GroundingRow], scores: Sequence[float], preds: Sequence[int],
                   idx: Sequence[int] | None = None) -> dict:
    """``bacc`` = unweighted mean over domains of each domain's balanced accuracy; ``auc``
    over all rows considered; ``domains.<d>`` = {bacc, auc, n}."""
    idx = list(range(len(rows))) if idx is None else list(idx)
    by: dict[str, list[int]] = {}
    for i in idx:
        by.setdefault(rows[i].domain, []).append(i)
    domains = {}
    for d, ii in sorted(by.items()):
        y = [rows[i].label for i in ii]
        domains[d] = {"bacc": bacc(y, [preds[i] for i in ii]), "auc": roc_auc(y, [scores[i] for i in ii]), "n": len(ii)}
    return {
        "bacc": float(np.mean([m["bacc"] for m in domains.values()])),
        "auc": roc_auc([rows[i].label for i in idx], [scores[i] for i in idx]),
        "n": len(idx),
        "domains": domains,
    }


def fit_threshold(labels: Sequence[int], scores: Sequence[float]) -> float:
    """The cut (midpoint between neighbouring distinct scores) with the best balanced
    accuracy on these rows: supported iff score > cut."""
    s = sorted(set(scores))
    cuts = [s[0] - 1e-9] + [(a + b) / 2 for a, b in itertools.pairwise(s)] + [s[-1] + 1e-9]
    if len(cuts) > 256:
        cuts = [cuts[int(i)] for i in np.linspace(0, len(cuts) - 1, 256)]
    return max(cuts, key=lambda c: (bacc(labels, [int(x > c) for x in scores]), -abs(c)))


def split_halves(rows: Sequence[GroundingRow], seed: int) -> tuple[list[int], list[int]]:
    """A random half of the rows (by row, seeded) to fit baseline thresholds, the rest to evaluate."""
    idx = list(range(len(rows)))
    random.Random(seed).shuffle(idx)
    half = len(idx) // 2
    return sorted(idx[:half]), sorted(idx[half:])


# --------------------------------------------------------------------------- the run


ABLATIONS: dict[str, Callable[[Any, set[int]], bool]] = {
    # unit filters over one claim sentence's judgements; the set holds single-sentence passages
    "max_over_windows": lambda j, single: j.unit.kind == "passage" or (j.unit.kind == "sentence" and j.unit.passage_id in single),
    "max_over_sentences": lambda j, single: j.unit.kind == "sentence",
    "sentences_and_windows_no_sets": lambda j, single: j.unit.kind != "set",
    "sets_always": lambda j, single: True,
}


def evaluate_grounding(
    *, rows: Sequence[GroundingRow], dataset: str, path: str | Path, verifier: Any, splitter: Any,
    embedder_factory: Callable[[], Any] | None = None, baselines: bool = True, ablations: bool = False,
    limit: int | None = None, seed: int = 0, chunk_words: int = 128, chunk_overlap: int = 32,
    progress: Progress | None = None, claim_splitter: Any = None, judgements_out: str | Path | None = None,
) -> dict:
    """Score every row with the ``check --against`` code path, plus baselines; the report dict.

    ``claim_splitter`` (a decomposer, or None): WiCE's Claim-Split (Kamoi et al. 2023, §5) —
    the claim is decomposed first, each sub-claim is judged as above and the claim scores the
    min over its sub-claims (supported only if every part is); what ``check --against`` does
    with an answer, applied to one claim.

    ``judgements_out`` (a path): every claim sentence's judgements, one JSON line each
    (:func:`judgement_rows`), so that other verdict weights can be scored and fitted on the same
    judgements without a model call (benchmarks/given_verdicts_probe.py). The lines hold the
    dataset's text: keep the file outside the repository."""
    from core.pipeline.given import GivenSearcher, entailment_score, given_verifier, judge_text, store_given
    from store import open_db
    from store.records import DocumentRecord

    t_wall = time.perf_counter()
    if limit is not None:
        if limit < 1:
            raise InputError(f"--limit must be a positive number, got {limit}")
        rows = list(rows)[:limit]
    rows = list(rows)
    threshold = verifier.t.support
    scores, preds, verdict_preds, n_sentences, n_units, n_parts = [], [], [], [], [], []
    abl: dict[str, list[float]] = {k: [] for k in ABLATIONS} if ablations else {}
    lexical, passages_text = [], []
    verdict_labels: Counter = Counter()
    predict_s = 0.0
    terms_of = given_verifier(verifier).subject_terms
    with tempfile.TemporaryDirectory(prefix="claimscope-grounding-") as tmp, contextlib.ExitStack() as files:
        dump = files.enter_context(Path(judgements_out).open("w", encoding="utf-8")) if judgements_out is not None else None
        db = open_db(Path(tmp) / "grounding.db")
        for r in rows:
            stored = store_given(db, [DocumentRecord(r.id, "", r.doc)], splitter, chunk_words, chunk_overlap)
            searcher = GivenSearcher(db, stored)
            t0 = time.perf_counter()
            parts = [c.text for c in claim_splitter.decompose(r.claim) if c.checkable] if claim_splitter else []
            judged_parts = [judge_text(p, searcher, verifier, splitter, always_sets=ablations) for p in parts or [r.claim]]
            judged = min(judged_parts, key=lambda j: j.score)
            n_parts.append(len(judged_parts))
            predict_s += time.perf_counter() - t0
            scores.append(judged.score)
            preds.append(int(judged.score > threshold))
            verdict_preds.append(int(all(j.supported for j in judged_parts)))  # every part's verdict
            verdict_labels.update(v.label for j in judged_parts for v in j.verdicts)
            n_sentences.append(len(judged.sentences))
            n_units.append(sum(len(v.judgements) for v in judged.verdicts))
            if dump is not None:
                for line in judgement_rows(r, dataset, judged_parts, searcher.passages, terms_of):
                    dump.write(json.dumps(line, ensure_ascii=False) + "\n")
            if ablations:
                single = {p.id for p in searcher.passages if len(p.sentences) == 1}
                for name, keep in ABLATIONS.items():
                    abl[name].append(min(entailment_score(v, verifier, lambda j, k=keep, one=single: k(j, one))
                                         for part in judged_parts for v in part.verdicts))
            texts = [p.text for p in searcher.passages]
            passages_text.append(texts)
            q = set(content_words(r.claim))
            lexical.append(max((len(q & set(content_words(t))) / len(q) for t in texts), default=0.0) if q else 0.0)
            if progress:
                progress("grounding", 1, len(rows))
        db.close()
    fit_idx, eval_idx = split_halves(rows, seed)
    pairs = len(rows)
    embedded = domain_metrics(rows, scores, preds)
    embedded.update({
        "threshold": threshold,
        "eval_half": domain_metrics(rows, scores, preds, eval_idx),
        "verdict_supported": domain_metrics(rows, scores, verdict_preds),
        "predict_s": predict_s, "s_per_pair": predict_s / pairs, "pairs_per_s": pairs / predict_s if predict_s else None,
        "nli_units_per_pair": float(np.mean(n_units)), "claim_sentences_per_pair": float(np.mean(n_sentences)),
        "claim_parts_per_pair": float(np.mean(n_parts)),
        "verdicts": dict(verdict_labels),
    })
    systems: dict[str, Any] = {"embedded": embedded}
    skipped: dict[str, str] = {}
    cos: list[float] = []
    manifests: dict[str, Any] = {"embedded": verifier.nli.ref.manifest()}
    if baselines:
        systems["baseline:lexical"] = _baseline(rows, lexical, fit_idx, eval_idx, "largest share of the claim's content "
                                                "words in one passage")
        if embedder_factory is None:
            skipped["baseline:cosine"] = "no embedder"
        else:
            embedder = embedder_factory()
            manifests["baseline:cosine"] = embedder.ref.manifest()
            t0 = time.perf_counter()
            for r, texts in zip(rows, passages_text, strict=True):
                vecs = embedder.encode([r.claim, *texts])
                cos.append(float((vecs[1:] @ vecs[0]).max()))
            systems["baseline:cosine"] = _baseline(rows, cos, fit_idx, eval_idx, "largest cosine of claim and passage "
                                                   "embeddings")
            systems["baseline:cosine"]["predict_s"] = time.perf_counter() - t0
    report: dict[str, Any] = {
        "task": "grounding",
        "dataset": dataset,
        "path": str(path),
        "n": pairs,
        "label_counts": {"1": sum(r.label for r in rows), "0": sum(1 - r.label for r in rows)},
        "protocol": {
            "scoring": "check --against's path: the document stored as a given document, every sentence and "
            "passage (96-token windows) judged, sentence sets of <= 3 when no single unit decides; claim "
            "score = min over claim sentences of the largest P(entailment) of the units that decided",
            "prediction": f"supported iff score > {threshold} (the shipped support threshold, not fitted here)",
            "bacc": "unweighted mean over domains of balanced accuracy",
            "baselines": "threshold fitted (max balanced accuracy) on fit half; eval_half = the other half",
            "split": {"seed": seed, "n_fit": len(fit_idx), "n_eval": len(eval_idx)},
            "chunking": {"words": chunk_words, "overlap": chunk_overlap},
            "claim_split": getattr(claim_splitter, "name", type(claim_splitter).__name__) if claim_splitter is not None else None,
            "grounding_guard": getattr(verifier, "subject_terms", None) is not None,
        },
        "systems": systems,
        "manifest": {"claimscope": claimscope_version(), "models": manifests,
                     "data": {"path": str(path), "sha256": _sha256(path)}},
        "timing": {"wall_s": time.perf_counter() - t_wall, "predict_s": predict_s},
        "machine": machine(),
        # per row, for paired comparisons between runs (ids and numbers only, no dataset text);
        # the cosine baseline's value too when it ran
        "rows": [{"id": r.id, "domain": r.domain, "label": r.label, "score": round(s, 6), "lexical": round(x, 6),
                  **({"cosine": round(cos[i], 6)} if cos else {})}
                 for i, (r, s, x) in enumerate(zip(rows, scores, lexical, strict=True))],
    }
    if ablations:
        report["ablations"] = {
            name: {**domain_metrics(rows, s, [int(x > threshold) for x in s]), "eval_half": domain_metrics(
                rows, s, [int(x > threshold) for x in s], eval_idx)}
            for name, s in {"shipped": scores, **abl}.items()
        }
    if limit is not None:
        report["limit"] = limit
    if skipped:
        report["skipped"] = skipped
    return report


def judgement_rows(row: GroundingRow, dataset: str, parts: Sequence[Any], passages: Sequence[Any],
                   terms_of: Callable[[str], set[str]] | None) -> list[dict]:
    """One line per judged claim sentence, in the cached-row format of benchmarks/fit_verdicts.py
    (``dataset``, ``label`` as a verdict, ``claim``, ``terms``, ``titles``, ``sources``,
    ``judgements``) plus where it comes from (``domain``, ``id``, ``row_label``, ``part``, ``sentence``,
    ``sentences``: how many the claim has over all its parts) and the verdict the run reached
    (``verdict``). Probabilities keep full float precision, so a rescoring with the same weights
    reproduces every verdict."""
    from core.verify.verifier import judgement_record

    titles = {str(p.id): p.title for p in passages}
    sources = {str(p.id): p.source for p in passages}
    n = sum(len(part.sentences) for part in parts)
    out = []
    for i, part in enumerate(parts):
        for k, (sentence, v) in enumerate(zip(part.sentences, part.verdicts, strict=True)):
            js = [judgement_record(j) for j in v.judgements]
            out.append({"dataset": dataset, "domain": row.domain, "id": row.id, "row_label": row.label,
                        "label": "supported" if row.label else "not_enough_info", "part": i, "sentence": k,
                        "sentences": n, "claim": sentence, "terms": sorted(terms_of(sentence)) if terms_of else [],
                        "titles": titles, "sources": sources, "judgements": js, "verdict": v.label})
    return out


def _baseline(rows: Sequence[GroundingRow], scores: Sequence[float], fit_idx: list[int], eval_idx: list[int],
              what: str) -> dict:
    cut = fit_threshold([rows[i].label for i in fit_idx], [scores[i] for i in fit_idx]) if fit_idx else 0.5
    preds = [int(s > cut) for s in scores]
    return {"score": what, "threshold": cut, "auc": roc_auc([r.label for r in rows], scores),
            "eval_half": domain_metrics(rows, scores, preds, eval_idx)}


def _sha256(path: str | Path) -> str | None:
    p = Path(path)
    if not p.is_file():
        return None
    h = hashlib.sha256()
    with p.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def format_table(report: dict) -> str:
    lines = [f"grounding on {report['dataset']} ({report['n']} pairs; 1: {report['label_counts']['1']}, "
             f"0: {report['label_counts']['0']})",
             f"{'system':<34}{'BAcc':>7}{'AUC':>7}{'BAcc½':>7}{'s/pair':>8}"]

    def f(x):
        return f"{x:>7.3f}" if isinstance(x, float) else f"{'—':>7}"

    for name, m in report["systems"].items():
        spp = f"{m['s_per_pair']:>8.3f}" if "s_per_pair" in m else f"{'':>8}"
        lines.append(f"{name:<34}{f(m.get('bacc'))}{f(m.get('auc'))}{f(m['eval_half']['bacc'])}{spp}")
    for name, m in report.get("ablations", {}).items():
        lines.append(f"{'ablation: ' + name:<34}{f(m['bacc'])}{f(m['auc'])}{f(m['eval_half']['bacc'])}")
    return "\n".join(lines)
