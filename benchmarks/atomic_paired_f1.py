"""Held-out F1 of the atomic decomposer's runtimes on the same answers, paired by answer (issue 17).

Each runtime (``merged``: the install-time merge of the adapter into the base,
models/atomic_merge.py; ``lora``: base + adapter applied at run time) is evaluated exactly as
``claimscope eval decompose --match jaccard --decomposers atomic`` evaluates it (the CLI's own
workbench and ``evaluate_decompose_sets``; the per-runtime reports are what the CLI writes).
The claims of every answer are recorded, so the difference in pooled F1 gets a paired
bootstrap over answers: answers are resampled with replacement, both runtimes' matched /
produced / gold counts summed over the same sample, and the 2.5 / 97.5 percentiles of
F1(b) − F1(a) reported. That interval is the noise a different draw of answers would give.

    python benchmarks/atomic_paired_f1.py --path ../shared/data/factscore/InstructGPT_dev.jsonl \
        --path ../shared/data/factscore/ChatGPT_dev.jsonl --fold '!0/3' --runtimes lora,merged \
        --json benchmarks/results/atomic_paired_f1_factscore_heldout.json

Two adapters are compared the same way: evaluate each in its own checkout (one runtime per
report), then pair the two reports without decoding anything again:

    python benchmarks/atomic_paired_f1.py --compare OLD.json NEW.json --json OUT.json

One pair per held-out topic fold, pooled over the folds' answers as well:

    python benchmarks/atomic_paired_f1.py --compare OLD_F2.json NEW_F2.json --compare OLD_F1.json NEW_F1.json --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def per_answer(answers, claims_of, thresholds) -> list[dict]:
    """Counts per answer, attributed to sentences as core.evaluate.decompose does."""
    from core.evaluate.decompose import jaccard, locate, match, words

    rows = []
    for ans in answers:
        claims = [c for c in claims_of[ans.text] if c["checkable"]]
        row = {"tp": [0] * len(thresholds), "prod": 0, "gold": 0}
        pos = ans.start
        for sent, gold in ans.sentences:
            start, end = locate(ans.text, sent, pos)
            if start < 0:
                mine = [c["text"] for c in claims_of[sent] if c["checkable"]]
            else:
                pos = end
                mine = [c["text"] for c in claims if start <= c["span"][0] < end]
            if not gold:
                continue
            row["prod"] += len(mine)
            row["gold"] += len(gold)
            if mine:
                import numpy as np

                ws, wg = [words(p) for p in mine], [words(g) for g in gold]
                sims = np.array([[jaccard(a, b) for b in wg] for a in ws], dtype=float)
                for k, th in enumerate(thresholds):
                    row["tp"][k] += match(sims, th)
        rows.append(row)
    return rows


def f1(tp, prod, gold):
    p, r = (tp / prod if prod else 0.0), (tp / gold if gold else 0.0)
    return 2 * p * r / (p + r) if p + r else 0.0


def paired(a: str, rows_a: list[dict], b: str, rows_b: list[dict], bootstrap: int, seed: int) -> dict:
    """F1(b) - F1(a), pooled, with a paired bootstrap over answers (rows: per-answer counts)."""
    import numpy as np

    if len(rows_a) != len(rows_b):
        raise SystemExit(f"{a} has {len(rows_a)} answers and {b} {len(rows_b)}: not the same answers")
    rng = np.random.default_rng(seed)
    n = len(rows_a)
    arr = {k: np.array([[r["tp"][0], r["tp"][1], r["prod"], r["gold"]] for r in rows], dtype=float)
           for k, rows in ((a, rows_a), (b, rows_b))}
    if not np.array_equal(arr[a][:, 3], arr[b][:, 3]):
        raise SystemExit("the two reports' gold counts differ answer by answer: not the same answers")
    diffs: dict[str, list[float]] = {"0.6": [], "0.8": []}
    for _ in range(bootstrap):
        idx = rng.integers(0, n, n)
        sa, sb = arr[a][idx].sum(0), arr[b][idx].sum(0)
        diffs["0.6"].append(f1(sb[0], sb[2], sb[3]) - f1(sa[0], sa[2], sa[3]))
        diffs["0.8"].append(f1(sb[1], sb[2], sb[3]) - f1(sa[1], sa[2], sa[3]))
    ta, tb = arr[a].sum(0), arr[b].sum(0)
    return {
        "a": a, "b": b, "answers": n, "bootstrap": bootstrap, "seed": seed,
        **{f"delta_f1@{th}": {"observed": f1(tb[k], tb[2], tb[3]) - f1(ta[k], ta[2], ta[3]),
                              "ci95": [float(np.percentile(diffs[th], 2.5)), float(np.percentile(diffs[th], 97.5))]}
           for k, th in enumerate(("0.6", "0.8"))},
    }


def report_rows(path_a: Path, path_b: Path) -> tuple[list[str], list[list[dict]], dict]:
    """The per-answer counts and names of two reports of this script, one runtime each (e.g. two
    adapters, each evaluated in its own checkout); they must hold the same files, fold and limit."""
    reps = [json.loads(p.read_text()) for p in (path_a, path_b)]
    for key in ("paths", "fold", "limit"):
        if reps[0].get(key) != reps[1].get(key):
            raise SystemExit(f"the reports differ in {key!r}: {reps[0].get(key)!r} vs {reps[1].get(key)!r}")
    rows, names = [], []
    for p, rep in zip((path_a, path_b), reps, strict=True):
        if len(rep["runtimes"]) != 1:
            raise SystemExit(f"{p}: expected a report of one runtime")
        (rt, r), = rep["runtimes"].items()
        rows.append([{"tp": x["matched"], "prod": x["produced"], "gold": x["gold"]} for x in r["per_answer"]])
        names.append(f"{p.stem} ({rt}, adapter {str(r['model'].get('lora_sha256') or r['model'].get('sha256'))[:12]})")
    return names, rows, reps[0]


def compare(path_a: Path, path_b: Path, bootstrap: int, seed: int,
            rows_out: list[list[dict]] | None = None) -> dict:
    """Two reports of this script paired over their answers: F1(B) - F1(A) with its interval.
    ``rows_out`` (two lists), when given, receives each report's per-answer counts."""
    names, rows, rep = report_rows(path_a, path_b)
    if rows_out is not None:
        rows_out[0] += rows[0]
        rows_out[1] += rows[1]
    return {"compared": [str(path_a), str(path_b)], "fold": rep["fold"],
            **paired(names[0], rows[0], names[1], rows[1], bootstrap, seed)}


def compare_pooled(pairs: list[list[Path]], bootstrap: int, seed: int) -> dict:
    """Several (A, B) pairs, e.g. one per held-out topic fold, each compared on its own and then
    pooled: the answers of every pair resampled together, F1 summed over all of them. Why: one
    fold's 24-26 answers give an interval of about ±.03, too wide for the effects measured here."""
    rows_a: list[dict] = []
    rows_b: list[dict] = []
    out: dict = {"pairs": [compare(a, b, bootstrap, seed, [rows_a, rows_b]) for a, b in pairs]}
    if len(pairs) > 1:
        folds = ", ".join(str(p["fold"]) for p in out["pairs"])
        out["pooled"] = {"folds": folds, **paired(f"A over folds {folds}", rows_a, f"B over folds {folds}", rows_b,
                                                  bootstrap, seed)}
    return out


def without_complement(args) -> None:
    """Pooled F1 of a --dump-claims file with and without the claims the ``rules`` complement
    added (core/decompose/atomic.py: COMPLEMENT_NOTE); the complement only adds claims, so
    dropping them gives exactly what ``AtomicDecomposer(complement=False)`` writes."""
    from core.decompose.atomic import COMPLEMENT_NOTE
    from core.evaluate.decompose import THRESHOLDS, in_fold, load_decompose_dataset

    thresholds = THRESHOLDS["jaccard"]
    answers = [a for p in args.path for a in [x for x in load_decompose_dataset("auto", p)
                                                if in_fold(x.topic, args.fold)][: args.limit or None]]
    dumped = json.loads(args.without_complement.read_text())
    out: dict = {"paths": [str(p) for p in args.path], "fold": args.fold, "limit": args.limit, "runtimes": {}}
    for rt, recs in dumped.items():
        kept = {t: [c for c in cs if c.get("note") != COMPLEMENT_NOTE] for t, cs in recs.items()}
        for name, claims_of in (("with", recs), ("without", kept)):
            rows = per_answer(answers, claims_of, thresholds)
            tp, prod, gold = (sum(r["tp"][0] for r in rows), sum(r["prod"] for r in rows), sum(r["gold"] for r in rows))
            out["runtimes"][f"{rt} {name} complement"] = {
                "precision": tp / prod if prod else 0.0, "recall": tp / gold if gold else 0.0, "f1": f1(tp, prod, gold),
                "f1@0.8": f1(sum(r["tp"][1] for r in rows), prod, gold), "produced": prod, "matched": tp, "gold": gold}
        out["paired"] = paired(f"{rt} with", per_answer(answers, recs, thresholds), f"{rt} without",
                               per_answer(answers, kept, thresholds), args.bootstrap, args.seed)
    print(json.dumps(out, indent=1))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1) + "\n")


def recomplement(args) -> None:
    """A --dump-claims file's model facts with the ``rules`` complement of *this* tree recomputed,
    no decoding: the facts the model wrote do not depend on the rules code, so a change to
    ``rules`` is measured on the same facts (a report in this script's format, for --compare).
    On the tree that wrote the dump it gives the decoded figures back (session 32)."""
    from core.decompose.atomic import COMPLEMENT_NOTE, AtomicDecomposer
    from core.decompose.base import Claim
    from core.decompose.rules import RulesDecomposer
    from core.evaluate.decompose import THRESHOLDS, in_fold, load_decompose_dataset

    thresholds = THRESHOLDS["jaccard"]
    answers = [a for p in args.path for a in [x for x in load_decompose_dataset("auto", p)
                                                if in_fold(x.topic, args.fold)][: args.limit or None]]
    dumped = json.loads(args.recomplement.read_text())
    out: dict = {"paths": [str(p) for p in args.path], "fold": args.fold, "limit": args.limit,
                 "recomplemented": str(args.recomplement), "standalone": args.standalone, "runtimes": {}}
    for rt, recs in dumped.items():
        dec = AtomicDecomposer(llm=None, fallback_factory=lambda: RulesDecomposer(resolve_pronouns=args.standalone))
        claims_of = {}
        for text, cs in recs.items():
            model = [Claim(i, c["text"], tuple(c["span"]), checkable=c["checkable"], note=c["note"])
                     for i, c in enumerate(c for c in cs if c.get("note") != COMPLEMENT_NOTE)]
            claims_of[text] = [{"text": c.text, "span": list(c.span), "checkable": c.checkable, "note": c.note}
                               for c in dec._complemented(text, model)]
        rows = per_answer(answers, claims_of, thresholds)
        tp, prod, gold = (sum(r["tp"][0] for r in rows), sum(r["prod"] for r in rows), sum(r["gold"] for r in rows))
        out["runtimes"][rt] = {
            "model": {"lora_sha256": f"{rt} facts of {args.recomplement.name}, this tree's complement"},
            "pooled": {"precision": tp / prod if prod else 0.0, "recall": tp / gold if gold else 0.0,
                       "f1": f1(tp, prod, gold), "produced": prod, "matched": tp, "gold": gold},
            "complement": dec.stats["complement"],
            "per_answer": [{"matched": r["tp"], "produced": r["prod"], "gold": r["gold"]} for r in rows]}
    print(json.dumps({rt: r["pooled"] for rt, r in out["runtimes"].items()}, indent=1))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1) + "\n")


def main() -> None:
    from core.decompose.atomic import RELATION_WORDS
    from core.evaluate.decompose import THRESHOLDS, evaluate_decompose_sets, in_fold, load_decompose_dataset
    from core.settings import load_settings
    from core.workbench import Workbench
    from models.atomic import RUNTIME_ENV

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", type=Path, action="append", default=[])
    ap.add_argument("--fold", default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--runtimes", default="lora,merged")
    ap.add_argument("--bootstrap", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--memo", action="store_true",
                    help="answer a prompt seen before from memory (FEVERFact rows repeat their intro's sentences); "
                         "outputs are unchanged (a prompt's answer is a function of its tokens: models/llm.py), "
                         "ms per sentence are then not a user's")
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("A.json", "B.json"), action="append",
                    help="no decoding: pair two earlier reports of this script (e.g. two adapters) and bootstrap "
                         "F1(B) - F1(A); repeated (one pair per topic fold), the answers of all pairs are also pooled")
    ap.add_argument("--dump-claims", type=Path, default=None,
                    help="also write every answer's claims (dataset text: keep it out of the repository) for "
                         "offline studies such as the complement ablation (--without-complement)")
    ap.add_argument("--without-complement", type=Path, default=None, metavar="CLAIMS.json",
                    help="no decoding: re-score a --dump-claims file without the claims the rules complement added")
    ap.add_argument("--recomplement", type=Path, default=None, metavar="CLAIMS.json",
                    help="no decoding: recompute the rules complement of this tree over a --dump-claims file's "
                         "model facts (a change to rules measured on the same facts; pair reports with --compare)")
    ap.add_argument("--standalone", action="store_true",
                    help="score the claims as check makes them (subject named instead of an opening pronoun)")
    ap.add_argument("--guard", choices=("shipped", "relation-words"), default="shipped",
                    help="relation-words: the guard lets core.decompose.atomic.RELATION_WORDS through (measured in "
                         "session 13, not adopted); compare two reports with --compare")
    ap.add_argument("--end-bias", type=float, default=0.0,
                    help="lower the end-of-answer logit by this much once a fact has begun (AtomicDecomposer.end_bias)")
    ap.add_argument("--split-longer", type=int, default=0,
                    help="give facts of at least this many words back to the model (AtomicDecomposer.split_longer)")
    ap.add_argument("--negation-guard", choices=("on", "off"), default="on",
                    help="off: keep facts that drop their sentence's negation (AtomicDecomposer.negation_guard, "
                         "measured in session 30); the facts it dropped go to --dump-claims' file")
    ap.add_argument("--json", type=Path, required=True)
    args = ap.parse_args()
    if args.compare:
        res = (compare(*args.compare[0], args.bootstrap, args.seed) if len(args.compare) == 1
               else compare_pooled(args.compare, args.bootstrap, args.seed))
        print(json.dumps(res, indent=1))
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=1) + "\n")
        return
    if not args.path:
        ap.error("--path is required (unless --compare)")
    if args.without_complement:
        without_complement(args)
        return
    if args.recomplement:
        recomplement(args)
        return
    runtimes = [r.strip() for r in args.runtimes.split(",") if r.strip()]
    thresholds = THRESHOLDS["jaccard"]
    answers = [a for p in args.path for a in [x for x in load_decompose_dataset("auto", p)
                                                if in_fold(x.topic, args.fold)][: args.limit or None]]
    out: dict = {"paths": [str(p) for p in args.path], "fold": args.fold, "limit": args.limit, "memo": args.memo,
                 "standalone": args.standalone, "guard": args.guard, "end_bias": args.end_bias,
                 "split_longer": args.split_longer, "negation_guard": args.negation_guard, "runtimes": {},
                 "load_average_start": os.getloadavg()}
    counts, recs = {}, {}
    for rt in runtimes:
        os.environ[RUNTIME_ENV] = rt
        dec = Workbench(load_settings(None)).decomposer("atomic", standalone=args.standalone)
        if args.guard == "relation-words":
            dec.relation_words = RELATION_WORDS
        dec.end_bias, dec.split_longer = args.end_bias, args.split_longer
        dec.negation_guard = args.negation_guard == "on"
        model = dec.llm.ref.manifest()
        if (rt == "merged") != bool(model.get("lora_merged")):
            raise SystemExit(f"runtime {rt}: the decomposer loaded {model['path']} (is the merged model built?)")
        recorded: dict[str, list[dict]] = {}
        orig = dec.decompose

        def recording(text, _orig=orig, _rec=recorded):
            claims = _orig(text)
            _rec[text] = [{"text": c.text, "span": list(c.span), "checkable": c.checkable, "note": c.note}
                          for c in claims]
            return claims

        dec.decompose = recording  # type: ignore[method-assign]
        if args.memo:
            memo: dict[str, str] = {}
            gen = dec.llm.generate

            def remembered(messages, _gen=gen, _memo=memo, **kw):
                key = json.dumps([messages, {k: v for k, v in kw.items() if k != "stop_when"}], default=repr)
                if key not in _memo:
                    _memo[key] = _gen(messages, **kw)
                return _memo[key]

            dec.llm.generate = remembered
        c0 = os.times()
        report = evaluate_decompose_sets(sets=[("auto", p) for p in args.path], decomposers={"atomic": dec}, matcher=None,
                                         method="jaccard", limit=args.limit, fold=args.fold, references=False)
        c1 = os.times()
        rows = per_answer(answers, recorded, thresholds)
        pooled = report["pooled"]["atomic"]
        assert sum(r["tp"][0] for r in rows) == pooled["matched"] and sum(r["prod"] for r in rows) == pooled["produced"]
        counts[rt], recs[rt] = rows, recorded
        out["runtimes"][rt] = {"model": model, "pooled": pooled,
                               "per_file": {r["path"]: r["systems"]["atomic"] for r in report["reports"]},
                               "cpu_s": (c1.user - c0.user) + (c1.system - c0.system),
                               "guard_stats": dict(dec.stats),
                               # per answer, in the dataset's order: counts only (no dataset text in the repo)
                               "per_answer": [{"matched": r["tp"], "produced": r["prod"], "gold": r["gold"]} for r in rows]}
        print(rt, {k: pooled[k] for k in ("precision", "recall", "f1", "claims_per_sentence", "ms_per_sentence")},
              file=sys.stderr, flush=True)
    if len(runtimes) == 2:
        a, b = runtimes
        out["paired"] = paired(a, counts[a], b, counts[b], args.bootstrap, args.seed)
        out["paired"]["answers_with_equal_claims"] = sum(recs[a][x.text] == recs[b][x.text] for x in answers)
        print(json.dumps(out["paired"], indent=1), file=sys.stderr)
    if args.dump_claims:
        args.dump_claims.write_text(json.dumps({rt: recs[rt] for rt in runtimes}) + "\n")
        args.dump_claims.with_suffix(".negation.json").write_text(json.dumps(list(dec.dropped_negation), indent=1) + "\n")
    out["load_average_end"] = os.getloadavg()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
