"""``claimscope agreement | icat | attribute | acu | characteristics``: scores and diagnostics
of stored runs and single pairs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from tui.cli.options import database, raise_input, verifier_of, workbench_of
from tui.cli.render import print_scores
from tui.cli.root import app


@app.command()
def agreement(
    ctx: typer.Context,
    runs: Annotated[list[int], typer.Argument(help="Run ids (one or more).")],
    binary: Annotated[bool, typer.Option("--binary", help="Supported vs not, instead of the four verdicts.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Agreement of model verdicts with human labels (TUI or imported): Cohen's κ,
    Krippendorff's α (nominal), confusion matrix; per run and across the runs."""
    from dataclasses import asdict

    from core.pipeline.stored import runs_agreement
    from tui.console import err, out

    result = runs_agreement(database(ctx), runs, binary)
    missing = [rid for rid, a in result["runs"].items() if a.n == 0]
    if missing:
        err.print(f"no human labels in run(s) {', '.join(map(str, missing))}: label claims in the TUI, or import "
                  "a dataset's labels (`claimscope eval factuality … --store`)", markup=False)
    if as_json:
        sys.stdout.write(json.dumps({"runs": {str(k): asdict(v) for k, v in result["runs"].items()},
                                     "all": asdict(result["all"])}) + "\n")
        return

    def fmt(x):
        return "—" if x is None else f"{x:.3f}"

    rows = list(result["runs"].items()) + ([("all", result["all"])] if len(runs) > 1 else [])
    for name, a in rows:
        if a.n == 0:
            continue
        out.print(f"run {name}: n {a.n}  agreement {fmt(a.observed)}  Cohen κ {fmt(a.kappa)}  "
                  f"Krippendorff α {fmt(a.alpha)}  labels from {dict(a.origins)}", markup=False)
        out.print("  human \\ model   " + "".join(f"{lab[:14]:>15}" for lab in a.labels), markup=False)
        for h in a.labels:
            out.print(f"  {h[:15]:<16}" + "".join(f"{a.confusion[h][m]:>15}" for m in a.labels), markup=False)


@app.command()
def icat(
    ctx: typer.Context,
    run: Annotated[int, typer.Argument(help="Run id.")],
    aspect: Annotated[list[str] | None, typer.Option("--aspect", "-a", help="An aspect of the query (repeatable).")] = None,
    aspects_from: Annotated[
        str, typer.Option(help="Where aspects come from: user (--aspect), llm (ICAT-A) or source (document labels, ICAT-M).")
    ] = "user",
    align: Annotated[str, typer.Option(help="Claim → aspect alignment: embedding (default), llm or source.")] = "embedding",
    query: Annotated[str | None, typer.Option(help="The query the answer responds to.")] = None,
    beta: Annotated[float, typer.Option(help="ICAT-β: weight of coverage against factuality.")] = 1.0,
    llm: Annotated[str, typer.Option(help="GGUF model for --aspects-from llm / --align llm.")] = "embedded",
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored detail as JSON.")] = False,
) -> None:
    """ICAT (Samarinas et al.): factuality, coverage of the query's aspects by supported claims, and
    ICAT-β; aligns the run's claims to the aspects and stores the score with the run."""
    from core.errors import NotFoundError
    from core.pipeline.stored import run_source_labels, set_run_icat
    from core.score.icat import LLMJSONAdapter, aspects_from_list, aspects_from_source_labels, generate_aspects
    from store import runs as rq

    db = database(ctx)
    if rq.get_run(db, run) is None:
        raise NotFoundError(f"no run {run}")
    gen = None
    if "llm" in (aspects_from, align):
        gen = LLMJSONAdapter(workbench_of(ctx, llm=llm).llm())
    if aspects_from == "user":
        if not aspect:
            raise_input("give the aspects with --aspect (or --aspects-from llm|source)")
        aspects = aspects_from_list(aspect)
    elif aspects_from == "llm":
        if not query:
            raise_input("--aspects-from llm needs --query")
        aspects = generate_aspects(gen, query)
    elif aspects_from == "source":
        aspects = aspects_from_source_labels([run_source_labels(db, run)[0]])
        if not aspects:
            raise_input(f"the documents retrieved for run {run} carry no aspect labels (meta \"aspects\")")
    else:
        raise_input(f"unknown --aspects-from {aspects_from!r} (user, llm or source)")
    encode = workbench_of(ctx).embedder().encode if align == "embedding" else None
    set_run_icat(db, run, aspects, method=align, query=query, beta=beta, encode=encode, llm=gen)
    scores = rq.run_scores(db, run)
    if as_json:
        sys.stdout.write(json.dumps(scores["icat"]["detail"]) + "\n")
        return
    print_scores({"icat": scores["icat"]})


@app.command()
def attribute(
    ctx: typer.Context,
    expertqa: Annotated[Path, typer.Option(help="ExpertQA JSONL: the answers to attribute.")],
    index: Annotated[int, typer.Option(min=1, help="Which question (line order, from 1).")] = 1,
    system: Annotated[str | None, typer.Option(help="Which system's answer (default: the first).")] = None,
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored detail as JSON.")] = False,
) -> None:
    """Attribution of a cited answer (ExpertQA, Malaviya et al.): each claim against the sources it
    cites — Complete / Partial / Incomplete / Missing / N/A — stored as a run."""
    from core.evaluate.attribution import load_expertqa
    from core.pipeline.stored import store_attribution
    from core.score.attribution import AnswerAttribution, Attributor
    from tui.console import out

    answers = load_expertqa(expertqa)
    questions = list(dict.fromkeys(a.question for a in answers))
    if index > len(questions):
        raise_input(f"{expertqa} has {len(questions)} questions, not {index}")
    mine = [a for a in answers if a.question == questions[index - 1] and (system is None or a.system == system)]
    if not mine:
        raise_input(f"question {index} has no answer by system {system!r}")
    ans = mine[0]
    wb = workbench_of(ctx)
    att = Attributor(wb.nli(verifier), wb.splitter(), decomposer=wb.decomposer("rules"))
    result = AnswerAttribution([att.attribute_claim(i, c.text, c.citations, ans.sources) for i, c in enumerate(ans.claims)])
    text = " ".join(c.text for c in ans.claims)
    run_id = store_attribution(database(ctx), text, result, ans.sources, f"{expertqa.name}:{index}:{ans.system}")
    if as_json:
        sys.stdout.write(json.dumps({"run_id": run_id, **result.detail()}) + "\n")
        return
    score = "—" if result.score is None else f"{result.score:.2f}"
    out.print(f"run {run_id}: {ans.system} on {ans.question!r}: AutoAIS {score}; {result.labels}", markup=False)
    for c in result.claims:
        p = f" P(entail) {c.check.probs[0]:.2f}" if c.check else ""
        out.print(f" {c.idx + 1:>2}. {c.label:<10}{p}  cites {list(c.citations) or '-'}  {c.text}", markup=False)
        for i, s, pe in (c.check.sentences if c.check else ()):
            out.print(f"       ↳ sentence {i + 1} ({pe:.2f}): {s[:160]}", markup=False, style="dim")
        for a, ok in c.atoms:
            out.print(f"       · {'✓' if ok else '✗'} {a}", markup=False, style="dim")


# ---------------------------------------------------------------- end of issue 6 commands

# ---------------------------------------------------------------- context usage, characteristics


@app.command()
def acu(
    ctx: typer.Context,
    claim: Annotated[str, typer.Argument(help="The claim.")],
    evidence: Annotated[str, typer.Option("--evidence", "-e", help="One piece of evidence (text).")],
    stance: Annotated[
        str | None,
        typer.Option(help="The evidence's stance (supports, insufficient-supports, insufficient-neutral, "
                          "insufficient-contradictory, insufficient-refutes, refutes); default: the verifier's."),
    ] = None,
    claimant: Annotated[str | None, typer.Option(help="Who made the claim (the prompt's Claimant line).")] = None,
    shots: Annotated[int, typer.Option(help="0 or 3 worked examples (Hagström et al., Tables 12–14).")] = 3,
    llm: Annotated[str | None, typer.Option(help="GGUF model: embedded (SmolLM2) or a .gguf path.")] = None,
    verifier: Annotated[str, typer.Option(help="NLI model giving the stance when --stance is not given.")] = "embedded",
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Context usage (ACU, Hagström et al. §5): P(True / None / False) for the claim alone and with the
    evidence, ΔP rescaled (Eq. 1), and ACU summed with the stance's signs on [−3, 3];
    negative = context repulsion."""
    from core.diagnostics.acu import ContextUsageScorer, normalise_stance, stance_from_nli
    from core.settings import check_text_size
    from tui.console import out

    for text, what in ((claim, "the claim"), (evidence, "the evidence")):
        if not text.strip():
            raise_input(f"{what} is empty")
        check_text_size(text, what)
    if shots not in (0, 3):
        raise_input("--shots must be 0 or 3")
    source = "human"
    if stance is not None:
        stance = normalise_stance(stance)
    else:
        stance, source = stance_from_nli(verifier_of(ctx, verifier, grounding=False).nli.predict([(evidence, claim)])[0]), "verifier"
    wb = workbench_of(ctx)
    wb = wb.with_settings(wb.settings.with_overrides(llm=llm))
    scorer = ContextUsageScorer(wb.llm(), shots=shots)
    usage = scorer.score(claim, evidence, stance, claimant)
    if as_json:
        sys.stdout.write(json.dumps({**usage.as_dict(), "stance_source": source, "model": scorer.manifest()}) + "\n")
        return
    out.print(f"stance: {stance} ({source}); {scorer.llm.ref.model_id}, {shots}-shot", markup=False)
    out.print(f"{'':<8}{'P(t|C)':>9}{'P(t|C,E)':>10}{'ΔP':>8}{'D':>4}", markup=False)
    from core.diagnostics.acu import DIRECTION

    for t in ("True", "None", "False"):
        out.print(f"{t:<8}{usage.p_claim[t]:>9.3f}{usage.p_evidence[t]:>10.3f}{usage.delta[t]:>+8.3f}"
                  f"{DIRECTION[stance][t]:>+4d}", markup=False)
    flags = [f for f, on in (("context repulsion", usage.repulsion), ("memory conflict", usage.memory_conflict)) if on]
    out.print(f"ACU {usage.acu_sum:+.3f} on [−3, 3] (mean form {usage.acu_mean:+.3f})"
              + (f" — {', '.join(flags)}" if flags else ""), markup=False)


@app.command()
def characteristics(
    ctx: typer.Context,
    claim: Annotated[str, typer.Argument(help="The claim.")],
    evidence: Annotated[str, typer.Option("--evidence", "-e", help="The evidence text.")],
    url: Annotated[str | None, typer.Option(help="Where the evidence comes from (site flags).")] = None,
    claim_date: Annotated[str | None, typer.Option(help="The claim's date, YYYY[-MM[-DD]].")] = None,
    evidence_date: Annotated[str | None, typer.Option(help="The evidence's publication date.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The context characteristics of a claim–evidence pair (DRUID, Hagström et al. §4.1): similarity,
    readability, lengths, entity overlap, hedging, source references, verdict words, site
    flags and whether the evidence was published after the claim."""
    from tui.console import out

    for text, what in ((claim, "the claim"), (evidence, "the evidence")):
        if not text.strip():
            raise_input(f"{what} is empty")
    c = workbench_of(ctx).characterizer().characterize(
        claim, evidence, url=url, claim_date=claim_date, evidence_date=evidence_date)
    if as_json:
        sys.stdout.write(json.dumps(c.as_dict()) + "\n")
        return
    for key, value in c.as_dict().items():
        out.print(f"{key:<26}{value}", markup=False)
    out.print(f"{'flags':<26}{', '.join(c.flags()) or '-'}", markup=False)
