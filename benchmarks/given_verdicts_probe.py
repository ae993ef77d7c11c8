"""Verdict weights for given documents, fitted and scored on dumped judgements (no model call).

Why: a claim checked against documents the user gives (``check --against``, ``eval grounding``,
and Factcheck-GPT's claims with their own web evidence) is decided by the verdict file's
``given`` weights, which until now fall back to the top-level set, fitted on a few curated
Wikipedia sentences per claim (Climate-FEVER, VitaminC). Two ``given`` sets were fitted before, on
SciFact abstracts and on SciFact + FEVER over wiki-vital, and both lost Factcheck-GPT
(docs/benchmarks.md, sessions 11 and 12); neither register was the web. The grounding fit pool
(WiCE dev rows 101-349, ExpertQA dev rows 301-764: web pages with people's labels, never scored
by a grounding figure, benchmarks/grounding_fit_pool.py) is. This script turns `eval grounding
--dump-judgements` files into fitting rows and scores any verdict files on the same judgements:

    claimscope eval grounding --data fit_pool.jsonl --no-baselines --json P.json --dump-judgements POOL.jsonl
    claimscope eval grounding --dataset wice --path … --limit 100 --no-baselines --json W.json --dump-judgements WICE.jsonl
    python benchmarks/given_verdicts_probe.py fit-rows POOL.jsonl --out FIT.jsonl
    python benchmarks/fit_verdicts.py --fallback core/verify/data/verdict_model.json --by-kind given=FIT.jsonl \\
        --anchors 0.5 --out G.json
    python benchmarks/given_verdicts_probe.py score --set wice=WICE.jsonl --set expertqa=… --set factcheck-gpt=… \\
        --models core/verify/data/verdict_model.json G.json --json OUT.json

``score`` first checks that the first model file reproduces the verdict of every dumped sentence
(it should be the file the dump was made with), so the rescoring is ``eval grounding``'s own
``verdict_supported`` measure: a claim is supported iff every one of its sentences' verdicts is,
balanced accuracy per set, and a paired bootstrap over claims (2,000 draws, seed 0) for each
model against the first, per set and for the mean over sets.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fit_verdicts import features_of, kind_of
from grounding_paired import paired_bacc

from core.evaluate.grounding import bacc


def load_lines(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def fit_rows(lines: list[dict]) -> list[dict]:
    """The dumped sentences that can be labelled: claims of one sentence (a claim of several
    sentences is supported only if all are, so a 0 says nothing about any one of them), named
    ``<domain>-given-pool`` so that each domain weighs the same in the fit."""
    return [{**ln, "dataset": f"{ln['domain']}-given-pool"} for ln in lines if ln["sentences"] == 1]


def sentence_labels(lines: list[dict], model, t) -> list[str]:
    """Each dumped sentence's verdict under ``model`` (its weights for the sentence's kind of source)."""
    return [model.predict(np.array(features_of(ln, t=t)), kind_of(ln))[0] for ln in lines]


def claims_supported(lines: list[dict], labels: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(claim ids in dump order, gold 1|0, predicted 1|0): supported iff every sentence is."""
    order: dict[str, int] = {}
    gold: dict[str, int] = {}
    pred: dict[str, bool] = {}
    for ln, lab in zip(lines, labels, strict=True):
        rid = ln["id"]
        order.setdefault(rid, len(order))
        gold[rid] = int(ln["row_label"])
        pred[rid] = pred.get(rid, True) and lab == "supported"
    ids = sorted(order, key=order.__getitem__)
    return ids, np.array([gold[i] for i in ids]), np.array([int(pred[i]) for i in ids])


def paired(y: np.ndarray, base: np.ndarray, cand: np.ndarray, draws: int = 2000, seed: int = 0) -> dict:
    """ΔBAcc (cand − base) and its 95 % paired-bootstrap interval over claims (grounding_paired.paired_bacc)."""
    d = paired_bacc(y, base, cand, draws=draws, seed=seed)
    return {"delta": d["bacc"], "ci95": d["ci95"]}


def score(sets: dict[str, list[dict]], model_paths: list[str], draws: int = 2000) -> dict:
    from core.settings import load_settings
    from core.verify.verdict_model import load_verdict_model, model_digest

    t = load_settings().thresholds()  # the thresholds the dumps were made under (CLAIMSCOPE_CONFIG)
    models = [load_verdict_model(p) for p in model_paths]
    out: dict = {"models": [{"path": p, "digest": model_digest(p)} for p in model_paths], "sets": {}}
    preds: dict[str, list[np.ndarray]] = {}
    golds: dict[str, np.ndarray] = {}
    for name, lines in sets.items():
        per_model = [sentence_labels(lines, m, t) for m in models]
        mismatch = sum(a != ln["verdict"] for a, ln in zip(per_model[0], lines, strict=True))
        if mismatch:
            raise SystemExit(f"{name}: the first model reproduces {len(lines) - mismatch} of {len(lines)} dumped "
                             "verdicts; give the verdict file the dump was made with first")
        claims = [claims_supported(lines, labels) for labels in per_model]  # the same ids and gold for each
        golds[name], preds[name] = claims[0][1], [p for _, _, p in claims]
        y = golds[name]
        out["sets"][name] = {"claims": len(y), "sentences": len(lines), "bacc": [bacc(y, p) for p in preds[name]],
                             "supported": [int(p.sum()) for p in preds[name]],
                             "paired": [paired(y, preds[name][0], p, draws) for p in preds[name][1:]]}
    # the mean over sets, each set resampled on its own (the same draws for every model)
    rng = np.random.default_rng(0)
    names = list(sets)
    mean_deltas: list[list[float]] = [[] for _ in models[1:]]
    for _ in range(draws):
        idx = {n: rng.integers(0, len(golds[n]), len(golds[n])) for n in names}
        if any(len(set(golds[n][idx[n]])) < 2 for n in names):
            continue
        base = np.mean([bacc(golds[n][idx[n]], preds[n][0][idx[n]]) for n in names])
        for k in range(1, len(models)):
            mean_deltas[k - 1].append(np.mean([bacc(golds[n][idx[n]], preds[n][k][idx[n]]) for n in names]) - base)
    means = [float(np.mean([out["sets"][n]["bacc"][k] for n in names])) for k in range(len(models))]
    out["mean_bacc"] = means
    out["mean_paired"] = [{"delta": means[k] - means[0],
                           "ci95": [float(x) for x in np.percentile(d, [2.5, 97.5])] if d else [means[k] - means[0]] * 2}
                          for k, d in enumerate(mean_deltas, start=1)]
    return out


def format_score(report: dict) -> str:
    lines = []
    for k, m in enumerate(report["models"]):
        cells = []
        for name, e in report["sets"].items():
            cell = f"{name} {e['bacc'][k]:.3f} ({e['supported'][k]}/{e['claims']} supported)"
            if k:
                p = e["paired"][k - 1]
                cell += f" Δ {p['delta']:+.3f} [{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}]"
            cells.append(cell)
        mean = f"mean {report['mean_bacc'][k]:.3f}"
        if k:
            p = report["mean_paired"][k - 1]
            mean += f" Δ {p['delta']:+.3f} [{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}]"
        lines.append(f"{m['path']} ({m['digest']})\n  " + "\n  ".join([*cells, mean]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fit-rows", help="dumped sentences -> fit_verdicts.py cached rows (--by-kind given=OUT)")
    f.add_argument("dumps", nargs="+")
    f.add_argument("--out", required=True)
    s = sub.add_parser("score", help="verdict = supported BAcc of each verdict file on the same judgements")
    s.add_argument("--set", action="append", required=True, metavar="NAME=DUMP")
    s.add_argument("--models", nargs="+", required=True, help="verdict files; the first is the one the dumps were made with")
    s.add_argument("--draws", type=int, default=2000)
    s.add_argument("--json")
    args = ap.parse_args(argv)
    if args.cmd == "fit-rows":
        rows = [r for d in args.dumps for r in fit_rows(load_lines(d))]
        with open(args.out, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        counts: dict[str, int] = {}
        for r in rows:
            counts[f"{r['dataset']} {r['label']}"] = counts.get(f"{r['dataset']} {r['label']}", 0) + 1
        print(f"wrote {len(rows)} rows to {args.out}: {counts}")
        return 0
    sets = {}
    for spec in args.set:
        name, _, path = spec.partition("=")
        if not path:
            raise SystemExit(f"--set wants NAME=DUMP, got {spec!r}")
        sets[name] = load_lines(path)
    report = score(sets, args.models, args.draws)
    print(format_score(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
