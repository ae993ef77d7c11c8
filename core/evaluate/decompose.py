r"""``claimscope eval decompose``: produced claims vs human atomic claims, per sentence.

Datasets: FActScore (``factscore/*_dev.jsonl``: per annotated sentence, the human atomic
facts, and FActScore's own ``model-atomic-facts``), Factcheck-GPT (``factcheck_gpt/dev.jsonl``:
per sentence, the gold decontextualised claims) and FEVERFact (``decomposition/feverfact.*.jsonl``:
one Wikipedia sentence, its gold FEVER claims, and on test rows five published systems'
claims). Each answer is decomposed whole (so pronouns resolve as in real use); produced
claims are assigned to the annotated sentence their span starts in. A FEVERFact row is
decomposed as the Wikipedia intro up to and including its sentence (the title line
dropped), so the sentence's pronouns can resolve to the page's subject. Only sentences
with at least one gold claim are scored, and only checkable produced claims count.

Reference rows: where a dataset ships another system's decomposition of the same sentences
(FActScore's InstructGPT ``model-atomic-facts``; FEVERFact test's ``predictions``), it is
scored beside the decomposers under the same matcher: the ceiling a decomposer is measured
against.

Matching is one-to-one (a maximum matching, Hungarian algorithm) with three similarity measures:
- ``nli`` (default): bidirectional entailment with the project's verifier, similarity =
  min(P(entail | produced → gold), P(entail | gold → produced)), a match when > 0.5 (the
  ICAT entailment threshold, seed 004 §5.4) — two claims match when each entails the other;
- ``jaccard``: PropSegmEnt's proposition-matching metric — Jaccard similarity of the two
  claims' token sets, a match when J ≥ 0.6, and its strict form J ≥ 0.8 (both are reported).
  Tokens (seed 001 App. G): the unique words, lower-cased, with punctuation and special
  characters such as "-" dropped — maximal runs of Unicode letters and digits
  (``[^\W_]+``), so "Polish-born" is {polish, born} and "Flaherty's" is {flaherty, s};
- ``embedding``: cosine of all-MiniLM-L6-v2 embeddings ≥ 0.75. Measured to be a weak
  matcher: "Marie Curie discovered radium." vs "… polonium." scores 0.83 (different facts)
  while "His career began in the late 1970s." vs "Lanny Flaherty's career began in the
  late 1970s." scores 0.60 (the same fact); kept for comparison only.
Pooled (micro-averaged) precision = matched / produced, recall = matched / gold.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.decompose.base import Decomposer
from core.errors import InputError
from core.evaluate.report import claimscope_version, machine
from core.ingest.sources import jsonl_records, record_field

# the first threshold of each method is its headline figure; the others are reported beside it
THRESHOLDS: dict[str, tuple[float, ...]] = {"nli": (0.5,), "jaccard": (0.6, 0.8), "embedding": (0.75,)}
DATASETS = ("factscore", "factcheck-gpt", "feverfact", "auto")
FACTSCORE_REFERENCE = "FActScore-InstructGPT"  # FActScore's own decomposition (its model-atomic-facts)
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class GoldAnswer:
    text: str
    sentences: list[tuple[str, list[str]]]  # (sentence text, gold claims)
    kind: str = "factscore"  # the dataset it came from
    topic: str = ""  # what the answer is about (FActScore topic, FEVERFact title): folds split on it
    # other systems' claims for the same sentences, aligned with ``sentences``: {system: [[claim]]}
    references: dict[str, list[list[str]]] = field(default_factory=dict)
    start: int = 0  # where the scored sentences begin in ``text`` (FEVERFact: after the context)


def load_decompose_dataset(name: str, path: str | Path) -> list[GoldAnswer]:
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError("no such file", path)
    if name not in DATASETS:
        raise InputError(f"unknown decomposition dataset {name!r} ({', '.join(DATASETS)})", path)
    out = []
    for lineno, obj in jsonl_records(path):
        kind = name
        if kind == "auto":  # FActScore records annotate sentences; Factcheck-GPT records list them
            kind = ("factscore" if "annotations" in obj else "factcheck-gpt" if "sentences" in obj
                    else "feverfact" if "facts" in obj and "sentence" in obj else "auto")
        if kind == "factscore":
            text = record_field(obj, "output", str, path, lineno)
            anns = [a for a in (obj.get("annotations") or []) if isinstance(a, dict) and isinstance(a.get("text"), str)]
            sents = [(a["text"], [f["text"] for f in (a.get("human-atomic-facts") or [])]) for a in anns]
            refs = {}
            if anns and all(isinstance(a.get("model-atomic-facts"), list) for a in anns):
                refs[FACTSCORE_REFERENCE] = [[f["text"] for f in a["model-atomic-facts"]] for a in anns]
            out.append(GoldAnswer(text, sents, kind, str(obj.get("topic") or ""), refs))
        elif kind == "factcheck-gpt":
            text = record_field(obj, "response", str, path, lineno)
            raw = record_field(obj, "sentences", dict, path, lineno)
            sents = [(s["text"], [c for c in (s.get("claims") or []) if isinstance(c, str)]) for s in raw.values()]
            out.append(GoldAnswer(text, sents, kind, str(obj.get("id") or lineno)))
        elif kind == "feverfact":
            sentence = record_field(obj, "sentence", str, path, lineno)
            facts = [f for f in record_field(obj, "facts", list, path, lineno) if isinstance(f, str)]
            context = obj.get("context") if isinstance(obj.get("context"), str) else ""
            body = context.split("\n", 1)[1] if "\n" in context else ""  # the first line is the page title
            at = body.find(sentence)
            text, start = (body[: at + len(sentence)], at) if at >= 0 else (sentence, 0)
            refs = {k: [[c for c in v if isinstance(c, str)]] for k, v in (obj.get("predictions") or {}).items()
                    if isinstance(v, list)}
            out.append(GoldAnswer(text, [(sentence, facts)], kind, str(obj.get("title") or ""), refs, start))
        else:
            raise InputError(f"unknown decomposition dataset {name!r} ({', '.join(DATASETS)})", path, lineno)
    if not out:
        raise InputError("contains no answers", path)
    return out


_CITATION = re.compile(r"\[\d+(?:[,\s-]+\d+)*\]")


def locate(text: str, sentence: str, pos: int = 0) -> tuple[int, int]:
    """Where an annotated sentence lies in the answer, from ``pos`` on: (start, end), or (-1, -1).
    Verbatim first; else with citation markers ("[1]", "[2, 3]") ignored, since FActScore's
    PerplexityAI annotations dropped them from two thirds of the sentences. A sentence that
    is not found is decomposed alone (see :func:`evaluate_decompose`)."""
    at = text.find(sentence, pos)
    if at >= 0:
        return at, at + len(sentence)
    keep = [True] * len(text)
    for m in _CITATION.finditer(text):
        keep[m.start() : m.end()] = [False] * (m.end() - m.start())
    index = [i for i, k in enumerate(keep) if k and i >= pos]
    bare = "".join(text[i] for i in index)
    at = bare.find(sentence)
    if at < 0:
        return -1, -1
    return index[at], index[at + len(sentence) - 1] + 1


def in_fold(topic: str, spec: str | None) -> bool:
    """``spec`` "K/N" keeps the topics in fold K of N, "!K/N" all the others (a topic's fold is
    its SHA-1 modulo N, so every answer about one topic lands in the same fold)."""
    if not spec:
        return True
    m = re.fullmatch(r"(!?)(\d+)/(\d+)", spec.strip())
    if not m or int(m[3]) < 2 or int(m[2]) >= int(m[3]):
        raise InputError(f"bad fold {spec!r} (K/N keeps fold K of N topics, !K/N the rest; 0 <= K < N)")
    fold = int(hashlib.sha1(topic.encode("utf-8")).hexdigest(), 16) % int(m[3])
    return (fold == int(m[2])) != bool(m[1])


def words(text: str) -> set[str]:
    """The Jaccard matcher's tokens (see module docstring)."""
    return set(_WORD.findall(text.lower()))


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def similarity(method: str, model, produced: list[str], gold: list[str]) -> np.ndarray:
    """(len(produced), len(gold)) similarities under ``method`` (see module docstring)."""
    if method == "jaccard":
        ws, wg = [words(p) for p in produced], [words(g) for g in gold]
        return np.array([[jaccard(a, b) for b in wg] for a in ws], dtype=float).reshape(len(produced), len(gold))
    if method == "embedding":
        vecs = model.encode(produced + gold)
        return vecs[: len(produced)] @ vecs[len(produced) :].T
    pairs = [(p, g) for p in produced for g in gold] + [(g, p) for p in produced for g in gold]
    ent = model.predict(pairs)[:, 0].reshape(2, len(produced), len(gold))
    return np.minimum(ent[0], ent[1])


def match(sims: np.ndarray, threshold: float, strict: bool = False) -> int:
    """Size of a maximum one-to-one matching over pairs above the threshold (Hungarian
    algorithm, as seed 000 §1.3 uses for evidence; ties broken by higher similarity)."""
    if sims.size == 0:
        return 0
    from scipy.optimize import linear_sum_assignment

    ok = sims > threshold if strict else sims >= threshold
    weight = np.where(ok, 1.0 + sims, 0.0)  # any extra match outweighs any similarity gain
    rows, cols = linear_sum_assignment(weight, maximize=True)
    return int(ok[rows, cols].sum())


def _prf(tp: int, prod: int, gold: int) -> dict:
    p, r = (tp / prod if prod else 0.0), (tp / gold if gold else 0.0)
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


class _Tally:
    """Pooled counts of one system on one file, at every threshold of the method."""

    def __init__(self, method: str, matcher) -> None:
        self.method, self.matcher = method, matcher
        self.thresholds = THRESHOLDS[method]
        self.tp = [0] * len(self.thresholds)
        self.n_prod = self.n_gold = self.n_sent = 0

    def add(self, mine: list[str], gold: list[str]) -> None:
        if not gold:
            return
        self.n_sent += 1
        self.n_prod += len(mine)
        self.n_gold += len(gold)
        if mine:
            sims = similarity(self.method, self.matcher, mine, gold)
            for k, th in enumerate(self.thresholds):
                self.tp[k] += match(sims, th, strict=self.method == "nli")

    def row(self) -> dict:
        main = self.thresholds[0]
        out = {**_prf(self.tp[0], self.n_prod, self.n_gold),
               "claims_per_sentence": self.n_prod / self.n_sent if self.n_sent else 0.0,
               "gold_claims_per_sentence": self.n_gold / self.n_sent if self.n_sent else 0.0,
               "sentences": self.n_sent, "matched": self.tp[0], "produced": self.n_prod, "gold": self.n_gold}
        if len(self.thresholds) > 1:
            out["by_threshold"] = {f"{th:g}": {**_prf(tp, self.n_prod, self.n_gold), "matched": tp}
                                   for th, tp in zip(self.thresholds, self.tp, strict=True)}
        out["threshold"] = main
        return out


def evaluate_decompose(
    *, dataset: str, path: str | Path, decomposers: dict[str, Decomposer], matcher, method: str = "nli",
    limit: int | None = None, progress: Callable[[str, int, int | None], None] | None = None,
    fold: str | None = None, references: bool = True,
) -> dict:
    """``matcher`` is the NLI model (method ``nli``), the embedder (``embedding``) or ``None``
    (``jaccard``). ``fold`` keeps some topics only (see :func:`in_fold`); ``references`` adds a
    row per reference decomposition the dataset ships (see module docstring)."""
    if method not in THRESHOLDS:
        raise InputError(f"unknown matching method {method!r} ({', '.join(THRESHOLDS)})")
    in_fold("", fold)  # a bad spec fails before any work
    answers = [a for a in load_decompose_dataset(dataset, path) if in_fold(a.topic, fold)][: limit or None]
    if not answers:
        raise InputError(f"no answers in fold {fold}", path)
    if dataset == "auto":
        kinds = {a.kind for a in answers}
        dataset = kinds.pop() if len(kinds) == 1 else "mixed"
    systems = {}
    for name, dec in decomposers.items():
        tally = _Tally(method, matcher)
        fallback = 0
        seconds = 0.0
        dec.decompose(answers[0].sentences[0][0] if answers[0].sentences else answers[0].text[:200])  # load models untimed
        if isinstance(getattr(dec, "stats", None), dict):  # the atomic decomposer's guard counts, from here on
            dec.stats.clear()
        for ans in answers:
            t0 = time.perf_counter()
            claims = [c for c in dec.decompose(ans.text) if c.checkable]
            seconds += time.perf_counter() - t0
            fallback += sum(1 for c in claims if c.note and "rules decomposer used" in c.note)
            pos = ans.start
            for sent, gold in ans.sentences:
                start, end = locate(ans.text, sent, pos)
                if start < 0:  # not in the answer: decompose the sentence alone
                    t0 = time.perf_counter()
                    mine = [c.text for c in dec.decompose(sent) if c.checkable]
                    seconds += time.perf_counter() - t0
                else:
                    pos = end
                    mine = [c.text for c in claims if start <= c.span[0] < end]
                tally.add(mine, gold)
            if progress:
                progress(name, 1, len(answers))
        n_timed = sum(len(a.sentences) for a in answers)
        systems[name] = {**tally.row(), "ms_per_sentence": 1000 * seconds / max(1, n_timed), "sentences_timed": n_timed,
                         "fallback_claims": fallback}  # llm decomposer: claims that came from its rules fallback
        if isinstance(getattr(dec, "stats", None), dict):
            systems[name]["guard"] = dict(dec.stats)  # how often the no-invented-facts guard fired
    refs: dict[str, dict] = {}
    if references:
        for ref in dict.fromkeys(r for a in answers for r in a.references):
            tally = _Tally(method, matcher)
            for ans in answers:
                if ref not in ans.references:
                    continue
                for (_, gold), mine in zip(ans.sentences, ans.references[ref], strict=True):
                    tally.add(mine, gold)
            refs[ref] = {**tally.row(), "reference": True}
    thresholds = THRESHOLDS[method]
    return {
        "task": "decompose", "dataset": dataset, "path": str(path), "n": len(answers), "fold": fold,
        "matching": {"method": method, "threshold": thresholds[0], "thresholds": list(thresholds),
                     "rule": "maximum one-to-one matching (Hungarian)",
                     **({"tokens": "unique lower-cased runs of letters and digits ([^\\W_]+)"} if method == "jaccard" else {})},
        "systems": systems, "references": refs,
        "manifest": {"claimscope": claimscope_version(), "models": _models(decomposers, matcher)},
        "machine": machine(),
    }


def _models(decomposers: dict[str, Decomposer], matcher) -> dict:
    models = {"matcher": matcher.ref.manifest()} if matcher is not None else {}
    for name, dec in decomposers.items():
        llm = getattr(dec, "llm", None)
        if llm is not None:
            models[f"decomposer:{name}"] = llm.ref.manifest()
    return models


def _pool(rows: list[dict]) -> dict:
    """Micro-average rows of one system over several files: matched / produced, matched / gold."""
    tp, prod, gold, n_sent = (sum(m[k] for m in rows) for k in ("matched", "produced", "gold", "sentences"))
    out = {**_prf(tp, prod, gold),
           "claims_per_sentence": prod / n_sent if n_sent else 0.0, "gold_claims_per_sentence": gold / n_sent if n_sent else 0.0,
           "sentences": n_sent, "matched": tp, "produced": prod, "gold": gold}
    if all("by_threshold" in m for m in rows):
        out["by_threshold"] = {}
        for th in rows[0]["by_threshold"]:
            k = sum(m["by_threshold"][th]["matched"] for m in rows)
            out["by_threshold"][th] = {**_prf(k, prod, gold), "matched": k}
    if all("sentences_timed" in m for m in rows):
        timed = sum(m["sentences_timed"] for m in rows)
        out["ms_per_sentence"] = sum(m["ms_per_sentence"] * m["sentences_timed"] for m in rows) / max(1, timed)
        out["fallback_claims"] = sum(m["fallback_claims"] for m in rows)
    return out


def evaluate_decompose_sets(
    *, sets: list[tuple[str, Path]], decomposers: dict[str, Decomposer], matcher, method: str = "nli",
    limit: int | None = None, progress: Callable[[str, int, int | None], None] | None = None,
    fold: str | None = None, references: bool = True,
) -> dict:
    """Every decomposer on several dev files in one run: one report per file (``dataset``
    ``auto`` detects the dataset from the records), and a pooled row per decomposer over all
    files (micro-averaged: matched / produced, matched / gold). A reference row is pooled only
    when every file has it."""
    reports = [
        evaluate_decompose(dataset=ds, path=path, decomposers=decomposers, matcher=matcher, method=method,
                           limit=limit, progress=progress, fold=fold, references=references)
        for ds, path in sets
    ]
    pooled = {name: _pool([r["systems"][name] for r in reports]) for name in decomposers}
    common = [n for n in reports[0]["references"] if all(n in r["references"] for r in reports)]
    pooled_refs = {n: {**_pool([r["references"][n] for r in reports]), "reference": True} for n in common}
    return {
        "task": "decompose", "limit_per_file": limit, "fold": fold, "matching": reports[0]["matching"], "reports": reports,
        "pooled": pooled, "pooled_references": pooled_refs, "manifest": reports[0]["manifest"], "machine": reports[0]["machine"],
    }


def format_table(report: dict) -> str:
    if "reports" in report:  # several files: one table each, then the pooled rows
        parts = [format_table(r) for r in report["reports"]]
        pooled = {"dataset": "all files pooled", "n": sum(r["n"] for r in report["reports"]), "fold": report.get("fold"),
                  "matching": report["matching"], "systems": report["pooled"],
                  "references": report.get("pooled_references", {})}
        return "\n\n".join([*parts, format_table(pooled)])
    where = f"{report['dataset']} {Path(report['path']).name}" if "path" in report else report["dataset"]
    matching = report["matching"]
    ths = matching.get("thresholds") or [matching["threshold"]]
    fold = f"; topics: fold {report['fold']}" if report.get("fold") else ""
    lines = [f"decomposition on {where} ({report['n']} answers{fold}; match: {matching['method']} "
             + " / ".join(f">= {t:g}" if matching["method"] != "nli" else f"> {t:g}" for t in ths) + ")"]
    extra = "".join(f"{'P@' + format(t, 'g'):>8}{'R@' + format(t, 'g'):>8}{'F1@' + format(t, 'g'):>8}" for t in ths[1:])
    width = max([10] + [len(n) + 2 for n in [*report["systems"], *report.get("references", {})]])
    lines.append(f"{'system':<{width}}{'precision':>10}{'recall':>10}{'f1':>8}{extra}{'claims/sent':>13}{'gold/sent':>11}{'ms/sent':>10}")
    rows = [*report["systems"].items(), *((f"{n} (ref)", m) for n, m in report.get("references", {}).items())]
    for name, m in rows:
        more = "".join(f"{b['precision']:>8.3f}{b['recall']:>8.3f}{b['f1']:>8.3f}"
                       for b in (m["by_threshold"][format(t, "g")] for t in ths[1:])) if len(ths) > 1 else ""
        ms = f"{m['ms_per_sentence']:>10.1f}" if "ms_per_sentence" in m else f"{'-':>10}"
        lines.append(f"{name:<{width}}{m['precision']:>10.3f}{m['recall']:>10.3f}{m['f1']:>8.3f}{more}"
                     f"{m['claims_per_sentence']:>13.2f}{m['gold_claims_per_sentence']:>11.2f}{ms}")
    return "\n".join(lines)
