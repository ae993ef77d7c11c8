"""Which decomposer gives better verdicts for its time? (issue 17: the default decomposer)

``claimscope eval factuality`` verifies the datasets' own human atomic facts, so the decomposer
plays no part in it. Here each FActScore answer is checked as ``claimscope check`` checks it —
the workbench's pipeline (decompose → retrieve from wiki-vital → verify → score), one fresh copy
of the database per decomposer so no stage cache crosses between them — and its factual
precision (FActScore, Min et al. 2023 §3.1: supported claims over checkable claims) is compared
with the people's: the share of the answer's human atomic facts labelled S (IR left out, as
FActScore and ``eval factuality`` do).

Answers: FActScore dev files, topics held out from the atomic decomposer's training
(``--fold '!0/3'``, core/evaluate/decompose.py ``in_fold``), whose topic has its own article in
the source (FActScore's S means "supported by the person's Wikipedia article"; wiki-vital's
10,033 vital-article summaries hold 1 of the 37 dev topics). ``--any-topic`` drops that last
filter (a weaker test: for the other topics the person's article is missing, so the source
cannot support what people marked S); those answers are reported as a separate set.

Beside the decomposers, the row ``human facts`` verifies the people's own atomic facts through
the same pipeline (what ``eval factuality`` measures): the verdicts' error without any
decomposition, so what a decomposer adds to the error is the difference.

Per decomposer and set: Pearson and Spearman correlation of per-answer precision with the
people's, mean absolute error, mean signed error, claims per answer and seconds per answer
(wall and CPU of this process: decomposition + retrieval + verification; models are loaded and
warmed up before the clock starts).

    python benchmarks/decomposer_verdicts.py --db /tmp/x22/wiki.db \
        --path ../shared/data/factscore/InstructGPT_dev.jsonl --path ../shared/data/factscore/ChatGPT_dev.jsonl \
        --path ../shared/data/factscore/PerplexityAI_dev.jsonl --fold '!0/3' --decomposers rules,atomic \
        --json benchmarks/results/decomposer_verdicts.json

The database is copied (``benchmarks/tui_timing.fresh_copy``); the original is only read.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tui_timing import fresh_copy  # noqa: E402

HUMAN = "human facts"
SOURCE = "wiki-vital"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def load_answers(paths: list[str], fold: str | None, titles: set[str], any_topic: bool, limit: int | None) -> list[dict]:
    """The scored answers: held-out topic, at least one S/NS human fact, and (unless
    ``any_topic``) a topic with its own article in the source."""
    from core.evaluate.decompose import in_fold
    from core.evaluate.factuality import load_factuality

    out = []
    for p in paths:
        kept = 0
        for a in load_factuality("factscore", p)[0]:
            if not in_fold(a.topic or "", fold) or not a.claims:
                continue
            in_source = (a.topic or "").lower() in titles
            if not (in_source or any_topic):
                continue
            if limit is not None and not in_source and kept >= limit:
                continue
            kept += not in_source
            supported = sum(c.label == "supported" for c in a.claims)
            out.append({"id": a.id, "topic": a.topic, "text": a.text, "topic_in_source": in_source,
                        "human_facts": [{"text": c.text, "label": c.label} for c in a.claims],
                        "human_precision": supported / len(a.claims)})
    return out


def correlations(pairs: list[tuple[float, float]]) -> dict:
    """Pearson, Spearman, MAE and mean signed error of (model, human) precision pairs."""
    from scipy.stats import pearsonr, spearmanr

    model = [m for m, _ in pairs]
    human = [h for _, h in pairs]
    out: dict = {"n": len(pairs), "mae": statistics.fmean(abs(m - h) for m, h in pairs) if pairs else None,
                 "mean_signed_error": statistics.fmean(m - h for m, h in pairs) if pairs else None,
                 "pearson": None, "spearman": None}
    if len(pairs) >= 3 and len(set(model)) > 1 and len(set(human)) > 1:
        out["pearson"] = float(pearsonr(model, human)[0])
        out["spearman"] = float(spearmanr(model, human)[0])
    return out


def run_system(name: str, answers: list[dict], db_src: Path, tmp: Path) -> list[dict]:
    """Check every answer with decomposer ``name`` (or the human facts) as ``check`` does."""
    from core.decompose.base import Claim
    from core.decompose.citations import CitedClaim
    from core.settings import Settings
    from core.workbench import RunOptions, Workbench
    from store import open_db

    folder = tmp / name.replace(" ", "_")
    folder.mkdir()
    db_path = fresh_copy(db_src, folder)
    settings = Settings(db_path=db_path)
    wb = Workbench(settings)
    options = RunOptions.from_settings(settings).with_(decomposer="rules" if name == HUMAN else name, sources=(SOURCE,))
    db = open_db(db_path)
    pipe = wb.pipeline(db, options)
    warm = pipe.start("Paris is the capital of France. It lies on the Seine.")  # loads every model
    pipe.resume(warm)
    rows = []
    for a in answers:
        c0, t0 = _cpu(), time.perf_counter()
        if name == HUMAN:
            cited = [CitedClaim(Claim(i, f["text"], (0, len(a["text"]))), ()) for i, f in enumerate(a["human_facts"])]
            run_id = pipe.start_decomposed(a["text"], cited, external_id=a["id"])
        else:
            run_id = pipe.start(a["text"], external_id=a["id"])
        t_dec = time.perf_counter() - t0
        scores = pipe.resume(run_id)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        from store import runs as rq

        claims = [{"text": c.text, "checkable": c.checkable, "verdict": c.verdict} for c in rq.run_claims(db, run_id)]
        rows.append({"id": a["id"], "precision": scores["factual_precision"], "human_precision": a["human_precision"],
                     "checkable": scores["checkable"], "verdicts": scores["verdicts"], "decompose_s": t_dec,
                     "wall_s": wall, "cpu_s": cpu, "claims": claims})
        print(f"{name:12} {a['id']:40} precision {scores['factual_precision']} (people {a['human_precision']:.3f}), "
              f"{scores['checkable']} claims, {wall:.1f} s", file=sys.stderr, flush=True)
    db.close()
    return rows


def summarise(rows: list[dict], answers: list[dict]) -> dict:
    out = {}
    for label, keep in (("topic in source", True), ("topic not in source", False)):
        ids = {a["id"] for a in answers if a["topic_in_source"] == keep}
        sel = [r for r in rows if r["id"] in ids]
        if not sel:
            continue
        scored = [(r["precision"], r["human_precision"]) for r in sel if r["precision"] is not None]
        out[label] = {**correlations(scored), "answers": len(sel), "abstained": len(sel) - len(scored),
                      "claims_per_answer": statistics.fmean(r["checkable"] for r in sel),
                      "s_per_answer": statistics.fmean(r["wall_s"] for r in sel),
                      "cpu_s_per_answer": statistics.fmean(r["cpu_s"] for r in sel),
                      "decompose_s_per_answer": statistics.fmean(r["decompose_s"] for r in sel)}
    return out


def paired(report: dict, answers: list[dict], resamples: int = 10_000) -> dict:
    """Each system against ``rules`` on the same answers: how many answers it is closer to the
    people on, and the mean difference of absolute errors with a 95 % bootstrap interval
    (answers resampled, seeded) — whether a difference in MAE is more than which answers were drawn."""
    import random

    base = {r["id"]: r for r in report["systems"].get("rules", {}).get("per_answer", [])}
    out: dict = {}
    for name, s in report["systems"].items():
        if name == "rules" or not base:
            continue
        for label, keep in (("topic in source", True), ("topic not in source", False)):
            ids = {a["id"] for a in answers if a["topic_in_source"] == keep}
            diffs = [abs(r["precision"] - r["human_precision"]) - abs(base[r["id"]]["precision"] - r["human_precision"])
                     for r in s["per_answer"] if r["id"] in ids and r["precision"] is not None
                     and base.get(r["id"], {}).get("precision") is not None]
            if not diffs:
                continue
            rng = random.Random(17)
            means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(resamples))
            out.setdefault(name, {})[label] = {
                "n": len(diffs), "closer": sum(d < 0 for d in diffs), "farther": sum(d > 0 for d in diffs),
                "mean_abs_error_minus_rules": statistics.fmean(diffs),
                "ci95": [means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="a database with wiki-vital indexed (only read)")
    ap.add_argument("--path", action="append", required=True, help="FActScore dev file (repeatable)")
    ap.add_argument("--fold", default="!0/3", help="topics kept (K/N or !K/N; default the atomic decomposer's held-out)")
    ap.add_argument("--decomposers", default="rules,atomic")
    ap.add_argument("--no-human", action="store_true", help="skip the human-facts reference row")
    ap.add_argument("--any-topic", action="store_true", help="also answers whose topic has no article in the source")
    ap.add_argument("--limit", type=int, help="with --any-topic: at most this many answers per file without an article")
    ap.add_argument("--reuse", type=Path, action="append", help="an earlier report on the same answers: its "
                    "systems are kept, only the others run (repeatable)")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "decomposer_verdicts.json")
    args = ap.parse_args()

    import sqlite3

    from core.evaluate.report import claimscope_version, machine

    with sqlite3.connect(f"file:{args.db}?mode=ro", uri=True) as conn:
        titles = {r[0].lower() for r in conn.execute(
            "SELECT d.title FROM documents d JOIN sources s ON s.id = d.source_id WHERE s.name = ?", [SOURCE])}
    answers = load_answers(args.path, args.fold, titles, args.any_topic, args.limit)
    if not answers:
        sys.exit("no answers: no held-out topic has an article in the source (try --any-topic)")
    systems = [d.strip() for d in args.decomposers.split(",") if d.strip()] + ([] if args.no_human else [HUMAN])
    report: dict = {"task": "decomposer verdicts", "paths": args.path, "fold": args.fold, "source": SOURCE,
                    "answers": [{k: a[k] for k in ("id", "topic", "topic_in_source", "human_precision")} | {
                        "human_facts": len(a["human_facts"])} for a in answers],
                    "load_average_start": os.getloadavg(), "systems": {}}
    report["reused"] = []
    for path in args.reuse or []:
        old = json.loads(path.read_text())
        if [a["id"] for a in old["answers"]] != [a["id"] for a in report["answers"]]:
            sys.exit(f"{path} was run on other answers")
        kept = {k: v for k, v in old["systems"].items() if k in systems and k not in report["systems"]}
        report["systems"] |= kept
        report["reused"].append({"from": str(path), "systems": list(kept), "load_average_start": old.get("load_average_start")})
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for name in systems:
            if name in report["systems"]:
                continue
            rows = run_system(name, answers, args.db, Path(tmp))
            report["systems"][name] = {"summary": summarise(rows, answers), "per_answer": rows}
            print(name, json.dumps(report["systems"][name]["summary"]), file=sys.stderr, flush=True)
    report["paired"] = paired(report, answers)
    report |= {"wall_s": time.perf_counter() - t0, "load_average_end": os.getloadavg(),
               "claimscope": claimscope_version(), "machine": machine()}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    for name, s in report["systems"].items():
        for label, v in s["summary"].items():
            extra = report["paired"].get(name, {}).get(label)
            if extra:
                print(f"{name:12} {label:20} vs rules: closer on {extra['closer']} of {extra['n']}, MAE difference "
                      f"{extra['mean_abs_error_minus_rules']:+.3f} (95 % CI {extra['ci95'][0]:+.3f} .. {extra['ci95'][1]:+.3f})")
            print(f"{name:12} {label:20} n {v['n']}  pearson {v['pearson']}  spearman {v['spearman']}  "
                  f"MAE {v['mae']:.3f}  claims {v['claims_per_answer']:.1f}  s/answer {v['s_per_answer']:.1f}")


if __name__ == "__main__":
    main()
