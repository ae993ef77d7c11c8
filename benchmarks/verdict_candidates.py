"""Compare verdict-model candidates on the same judgements (docs/benchmarks.md, "Source-kind-aware
verdicts", the acceptance rule).

Why: each of the four measures costs minutes to tens of minutes of verifier time on 2 cores, and a
verdict model changes nothing the verifier does. So each benchmark's claims are judged **once**
(``collect``; rows in the ``benchmarks/fit_verdicts.py`` cache format plus the benchmark's gold,
outside the repository: they hold dataset text), and every candidate decides from those stored
judgements (``score``), so differences come from the weights alone; the noise is a paired bootstrap
over claims of (candidate − baseline).

    python benchmarks/verdict_candidates.py collect --bench demo --wiki-db WIKI.db --out demo.jsonl
    python benchmarks/verdict_candidates.py collect --bench climate-fever --out cf.jsonl
    python benchmarks/verdict_candidates.py collect --bench scifact --scifact-db SCI.db --limit 150 --out sci.jsonl
    python benchmarks/verdict_candidates.py collect --bench factcheck-gpt --out fc.jsonl
    python benchmarks/verdict_candidates.py score --rows demo.jsonl cf.jsonl sci.jsonl fc.jsonl \\
        --models core/verify/data/verdict_model.json CANDIDATE.json [--json OUT]

A new verifier with its own verdict weights against the shipped pair: collect the same benchmarks
with each verifier, then ``score --rows NEW... --thresholds S,R,C --baseline-rows OLD...
--baseline-thresholds S,R,C --models SHIPPED.json CANDIDATE.json`` (the baseline decides from the
old verifier's judgements of the same claims, each side at its own thresholds).

Each benchmark as its command builds it: Climate-FEVER as ``claimscope eval verdicts`` (five
sentences with their article titles, the seed-0 held-out half, sets always judged); Factcheck-GPT as
``claimscope eval factuality --dataset factcheck-gpt`` (the claim's own passages, split into sentences,
no titles; a claim without evidence is NEI unjudged); SciFact as
``benchmarks/verdicts_scifact_retrieval.py`` (hybrid top 5 over the indexed corpus, sets always
judged); the demo as ``claimscope demo`` (the rules decomposer's 7 claims of the demo answer, hybrid
top 10 over wiki-vital with the product's searcher). The first model given to ``score`` is the
baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
# The demo answer's claims as the rules decomposer splits it (tui/cli/runs.py DEMO_ANSWER; stored
# run of `claimscope demo`), and whether each is true. Screens before session 25 scored 7 claims, with
# "Marie Curie was a Polish-born physicist." where the rules decomposer now writes the first two.
DEMO_CLAIMS = (
    ("Marie Curie was Polish-born.", True),
    ("Marie Curie was a physicist.", True),
    ("Marie Curie was a chemist.", True),
    ("Marie Curie discovered polonium.", True),
    ("Marie Curie discovered radium.", True),
    ("Marie Curie was the first woman to win a Nobel Prize.", True),
    ("The Eiffel Tower is located in Berlin.", False),
    ("Photosynthesis converts light energy into chemical energy.", True),
)


def _row(bench: str, claim: str, verdict, passages, terms, gold: str, **extra) -> dict:
    from benchmarks.fit_verdicts import _row as fit_row

    row = fit_row(bench, claim, verdict, passages, terms, gold)
    row["bench"] = bench
    row["sources"] = {str(p.passage_id): getattr(p, "source", "") for p in passages}
    row.update(extra)
    return row


def collect(args) -> None:
    from core.settings import load_settings
    from core.workbench import RunOptions, Workbench

    wb = Workbench(load_settings())
    verifier = wb.verifier(RunOptions.from_settings(wb.settings))
    terms_of = verifier.subject_terms
    rows: list[dict] = []
    t0 = time.perf_counter()
    if args.bench == "demo":
        from core.pipeline.runner import passage_evidence
        from store import open_db

        searcher = wb.searcher(open_db(args.wiki_db))
        for claim, true in DEMO_CLAIMS:
            passages = passage_evidence(searcher.search(claim, k=10, mode="hybrid", sources=["wiki-vital"]))
            v = verifier.verify(claim, passages)
            rows.append(_row("demo", claim, v, passages, terms_of(claim), "supported" if true else "refuted"))
    elif args.bench == "climate-fever":
        from core.evaluate.verdicts import load_climate_fever_claims
        from core.verify.verifier import PassageEvidence

        claims = load_climate_fever_claims(args.path or DATA / "climate_fever" / "dev.jsonl")
        order = np.random.default_rng(0).permutation(len(claims))
        for i in sorted(order[len(claims) // 2 :]):  # the held-out half `eval verdicts` reports
            claim, gold, sents = claims[i]
            passages = [PassageEvidence(j + 1, j + 1, (s,), s, title) for j, (s, title) in enumerate(sents)]
            v = verifier.verify(claim, passages, always_sets=True)
            rows.append(_row("climate-fever", claim, v, passages, terms_of(claim), gold))
    elif args.bench == "scifact":
        from core.evaluate.datasets import load_scifact_claims
        from core.pipeline.runner import passage_evidence
        from core.retrieve.searcher import Searcher
        from models.embed import load_embedder
        from store import open_db

        emb = load_embedder()
        searcher = Searcher(open_db(args.scifact_db), lambda: emb)  # as verdicts_scifact_retrieval.py
        for c in load_scifact_claims(args.path or DATA / "scifact" / "claims_dev.jsonl")[: args.limit or None]:
            labels = {e["label"] for ev in c.evidence.values() for e in ev}
            gold = "supported" if "SUPPORT" in labels else "refuted" if "CONTRADICT" in labels else "not_enough_info"
            passages = passage_evidence(searcher.search(c.claim, k=5, mode="hybrid", sources=["scifact"]))
            v = verifier.verify(c.claim, passages, always_sets=True)
            rows.append(_row("scifact", c.claim, v, passages, terms_of(c.claim), gold))
    elif args.bench == "factcheck-gpt":
        from core.evaluate.factuality import _passages, load_factuality

        splitter = wb.splitter()
        if args.given_path:  # every unit judged, as check --against judges a claim's own documents
            from core.pipeline.given import given_verifier

            verifier = given_verifier(verifier)
            terms_of = verifier.subject_terms  # its grounding guard's terms (word pieces), as check --against
        answers, _ = load_factuality("factcheck-gpt", args.path or DATA / "factcheck_gpt" / "dev.jsonl")
        for ans in answers:
            for c in ans.claims:
                evidence = _passages(list(c.evidence), splitter)
                if not evidence:  # as evaluate_factuality: NEI without a model call
                    rows.append({"bench": "factcheck-gpt", "dataset": "factcheck-gpt", "label": c.label, "claim": c.text,
                                 "terms": [], "titles": {}, "sources": {}, "judgements": [], "unjudged": True,
                                 "answer": ans.id})
                    continue
                v = verifier.verify(c.text, evidence)
                rows.append(_row("factcheck-gpt", c.text, v, evidence, terms_of(c.text), c.label, answer=ans.id))
    elif args.bench == "factscore":
        # a secondary check, not one of the four measures: FActScore bios against wiki-vital, as
        # `claimscope eval factuality --dataset factscore --limit 8` (hybrid top 10, the first 8 bios
        # of each dev file); wiki-vital has the page of 1 of their 24 topics, so it tests the
        # entity weights on claims whose subject mostly has no own article
        from core.evaluate.factuality import load_factuality
        from core.pipeline.runner import passage_evidence
        from store import open_db

        searcher = wb.searcher(open_db(args.wiki_db))
        paths = [args.path] if args.path else [DATA / "factscore" / f"{n}_dev.jsonl"
                                               for n in ("ChatGPT", "InstructGPT", "PerplexityAI")]
        for path in paths:
            for ans in load_factuality("factscore", path)[0][:8]:
                for c in ans.claims:
                    hits = searcher.search(c.text, k=10, mode="hybrid", sources=["wiki-vital"], mark_sentences=False)
                    evidence = passage_evidence(hits)
                    if not evidence:
                        rows.append({"bench": "factscore", "dataset": "factscore", "label": c.label, "claim": c.text,
                                     "terms": [], "titles": {}, "sources": {}, "judgements": [], "unjudged": True})
                        continue
                    v = verifier.verify(c.text, evidence)
                    rows.append(_row("factscore", c.text, v, evidence, terms_of(c.text), c.label, answer=ans.id))
    else:
        raise SystemExit(f"unknown bench {args.bench!r}")
    with open(args.out, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    print(f"{args.bench}: {len(rows)} claims, {time.perf_counter() - t0:.0f} s, nli {verifier.nli.ref.model_id}",
          flush=True)


def predict_rows(rows: list[dict], model, t=None) -> list[str]:
    """Each row's learned verdict (a row never judged is NEI, as its command makes it); ``t``: the
    thresholds the rows' verifier runs with (default: the shipped ones)."""
    from benchmarks.fit_verdicts import features_of, kind_of

    out = []
    for r in rows:
        if r.get("unjudged"):
            out.append("not_enough_info")
            continue
        label, _ = model.predict(np.array(features_of(r, t=t)), kind=kind_of(r))
        out.append(label)
    return out


def measures(bench: str, gold: list[str], pred: list[str]) -> dict[str, float]:
    from core.evaluate.metrics import accuracy, macro_f1
    from core.score.agreement import agreement
    from core.verify.verifier import VERDICTS

    if bench in ("factcheck-gpt", "factscore"):
        a = agreement(list(zip(gold, pred, strict=True)), binary=True)
        return {"accuracy": a.observed, "kappa": a.kappa}
    if bench == "demo":
        return {"right": float(sum((p == "supported") == (g == "supported") for g, p in zip(gold, pred, strict=True)))}
    return {"accuracy": accuracy(gold, pred), "macro_f1": macro_f1(gold, pred, VERDICTS)}


def read_rows(names: list[str]) -> dict[str, list[dict]]:
    """The stored judgements of each benchmark, in file order."""
    benches: dict[str, list[dict]] = {}
    for name in names:
        with open(name, encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                benches.setdefault(r["bench"], []).append(r)
    return benches


def thresholds_of(spec: str | None):
    """``SUPPORT,REFUTE,CONFLICT`` as Thresholds (None: the shipped defaults)."""
    from dataclasses import replace

    from core.verify.base import Thresholds

    if spec is None:
        return Thresholds()
    try:
        s, r, c = (float(x) for x in spec.split(","))
    except ValueError:
        raise SystemExit(f"thresholds must be SUPPORT,REFUTE,CONFLICT (three numbers), got {spec!r}") from None
    return replace(Thresholds(), support=s, refute=r, conflict=c)


# The sanity cases every shippable verdict file must get right, for each kind of source: the
# subject's own document judged with one decisive unit, or with nothing decisive. Why: a file
# fitted on benchmarks whose claims are mostly true can learn a prior ("the claim names the
# document's subject, so supported") that the four measures reward; for a user it marks a claim
# the sources never state as supported (docs/verifier_v2.md, "Run 8 again with seed 14").
# tests/verify/test_verdict_model.py holds the shipped file to the first two on its own.
SANITY_CLAIM = "Isaac Newton was born in Woolsthorpe."
SANITY_CASES = (  # (unit text, P(entail), P(contradict), the verdict a person expects)
    ("Isaac Newton was born in Woolsthorpe Manor, Lincolnshire.", 0.95, 0.01, "supported"),
    ("Newton wrote the Principia.", 0.05, 0.05, "not_enough_info"),
    ("Isaac Newton was born in Grantham, not in Woolsthorpe.", 0.01, 0.95, "refuted"),
)


def sanity(model, t=None) -> dict[str, dict[str, str]]:
    """For each kind of source with its own weights (and the fallback, ``default``), the verdict
    of each sanity case, keyed by the verdict expected; a kind passes when all match."""
    from core.verify.verdict_model import extract
    from core.verify.verifier import EvidenceUnit, Judgement, PassageEvidence

    own = PassageEvidence(2, 2, ("s",), "t", "Isaac Newton")
    out: dict[str, dict[str, str]] = {}
    for kind in ("default", *sorted(model.by_kind)):
        got = {}
        for text, e, c, want in SANITY_CASES:
            j = Judgement(EvidenceUnit(2, "sentence", (0,), text, 2), np.array([e, 1 - e - c, c], dtype=np.float32),
                          grounded=True)
            x = extract(SANITY_CLAIM, [j], [own], {"newton"}, t).values
            got[want] = model.predict(np.array(x), kind=None if kind == "default" else kind)[0]
        out[kind] = got
    return out


def sanity_failures(checks: dict[str, dict[str, str]]) -> list[str]:
    """``kind: expected -> got`` for every sanity case a verdict file gets wrong."""
    return [f"{kind}: {want} -> {got}" for kind, cases in checks.items() for want, got in cases.items() if got != want]


def score(args) -> None:
    """Every model's measures on the stored judgements; the first model is the baseline. With
    ``--baseline-rows`` the baseline decides from another verifier's judgements of the same claims
    (at ``--baseline-thresholds``), so a new verifier with its verdict weights is compared with the
    shipped pair, still paired claim by claim."""
    from core.verify.verdict_model import load_verdict_model, model_digest

    benches = read_rows(args.rows)
    base_benches = read_rows(args.baseline_rows) if args.baseline_rows else benches
    if base_benches is not benches:
        for b, rows in benches.items():
            claims = [r["claim"] for r in rows]
            if [r["claim"] for r in base_benches.get(b, [])] != claims:
                raise SystemExit(f"--baseline-rows: benchmark {b!r} does not hold the same claims in the same order")
    t, t0 = thresholds_of(args.thresholds), thresholds_of(args.baseline_thresholds)
    models = [(p, load_verdict_model(p)) for p in args.models]
    base = args.models[0]
    preds = {p: {b: predict_rows(base_benches[b] if p == base else rows, m, t0 if p == base else t)
                 for b, rows in benches.items()} for p, m in models}
    report: dict = {"baseline": base, "thresholds": [t.support, t.refute, t.conflict],
                    "baseline_rows": args.baseline_rows, "baseline_thresholds": [t0.support, t0.refute, t0.conflict],
                    "models": {}}
    rng = np.random.default_rng(0)
    for p, vm in models:
        checks = sanity(vm, t0 if p == base else t)
        out: dict = {"digest": model_digest(p), "sanity": checks, "sanity_failures": sanity_failures(checks)}
        for b, rows in benches.items():
            gold = [r["label"] for r in rows]
            m = measures(b, gold, preds[p][b])
            entry = {"n": len(rows), **m, "predicted": {lab: preds[p][b].count(lab) for lab in sorted(set(preds[p][b]))}}
            if p != base and b != "demo":
                m0 = measures(b, gold, preds[base][b])
                for key in m:
                    deltas = []
                    for _ in range(args.resamples):
                        idx = rng.integers(0, len(rows), len(rows))
                        g = [gold[i] for i in idx]
                        deltas.append(measures(b, g, [preds[p][b][i] for i in idx])[key]
                                      - measures(b, g, [preds[base][b][i] for i in idx])[key])
                    se = float(np.std(deltas))
                    delta = m[key] - m0[key]
                    entry[f"delta_{key}"], entry[f"se_{key}"] = delta, se
                    entry[f"loss_{key}"] = bool(delta < -se)
            out[b] = entry
        report["models"][p] = out
    for p, out in report["models"].items():
        bad = out["sanity_failures"]
        parts = [f"{p} ({out['digest']})", f"  sanity: {'FAIL ' + '; '.join(bad) if bad else 'ok'}"]
        for b in ("climate-fever", "factcheck-gpt", "scifact", "demo", "factscore"):
            if b in out:
                e = out[b]
                keys = [k for k in ("accuracy", "macro_f1", "kappa", "right") if k in e]
                s = " ".join(f"{k} {e[k]:.3f}" + (f" (Δ {e['delta_' + k]:+.3f} ± {e['se_' + k]:.3f}"
                                                  f"{' LOSS' if e['loss_' + k] else ''})" if "delta_" + k in e else "")
                             for k in keys)
                parts.append(f"  {b}: {s}  {e['predicted']}")
        print("\n".join(parts), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="judge one benchmark's claims once and store the judgements")
    c.add_argument("--bench", required=True, choices=("demo", "climate-fever", "scifact", "factcheck-gpt", "factscore"))
    c.add_argument("--out", required=True)
    c.add_argument("--path", help="the benchmark's file (default: its file under ../shared/data)")
    c.add_argument("--wiki-db")
    c.add_argument("--scifact-db")
    c.add_argument("--limit", type=int, default=150, help="SciFact: the first N dev claims")
    c.add_argument("--given-path", action="store_true",
                   help="Factcheck-GPT: judge every unit of the claim's passages (the given-document path of "
                        "check --against) instead of the knowledge-source path eval factuality takes (an analysis)")
    s = sub.add_parser("score", help="decide every stored claim with each model; the first is the baseline")
    s.add_argument("--rows", nargs="+", required=True)
    s.add_argument("--models", nargs="+", required=True)
    s.add_argument("--resamples", type=int, default=1000)
    s.add_argument("--baseline-rows", nargs="+", help="the baseline model decides from these judgements (another "
                                                      "verifier's, of the same claims) instead of --rows")
    s.add_argument("--thresholds", metavar="S,R,C", help="support,refute,conflict of --rows' verifier (default: shipped)")
    s.add_argument("--baseline-thresholds", metavar="S,R,C", help="those of --baseline-rows' verifier (default: shipped)")
    s.add_argument("--json")
    args = ap.parse_args(argv)
    collect(args) if args.cmd == "collect" else score(args)


if __name__ == "__main__":
    main()
