"""``claimscope eval …``: every benchmark command in one place (quality and speed figures
on public datasets, JSON reports under benchmarks/results/)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from tui.cli.options import (
    EXPAND_LLM_HELP,
    FROM_SETTINGS,
    GROUNDING_HELP,
    VERDICT_RULE_HELP,
    database,
    raise_input,
    searcher_of,
    verifier_of,
    workbench_of,
    write_report,
)
from tui.cli.root import eval_app, state_of

# ---------------------------------------------------------------- eval


@eval_app.command("retrieval")
def eval_retrieval(
    ctx: typer.Context,
    claims: Annotated[Path, typer.Option(help="Claims JSONL (the dataset's own format).")],
    corpus: Annotated[Path | None, typer.Option(help="Corpus JSONL (SciFact; the other sets carry their pages).")] = None,
    dataset: Annotated[str, typer.Option(help="Dataset: scifact, climate-fever or wice.")] = "scifact",
    modes: Annotated[
        str, typer.Option(help="Comma-separated: bm25,dense,hybrid (fitted fusion, subject first),"
                          "hybrid-sentence (hybrid + each passage's best sentence),rrf (plain RRF),"
                          "fusion (hybrid-sentence without subject first),fitted (BM25 + dense fitted fusion alone),"
                          "rerank (hybrid-sentence + NLI cross-encoder on the top sentences),hyde,query2doc.")
    ] = "bm25,dense,rrf,hybrid",
    k: Annotated[str, typer.Option("--k", help="Comma-separated cut-offs.")] = "5,10",
    index_kinds: Annotated[
        str, typer.Option(help="Dense index kinds to compare: flat (exact), hnsw.")
    ] = "flat,hnsw",
    limit: Annotated[int | None, typer.Option(help="Only the first N claims.")] = None,
    llm: Annotated[str | None, typer.Option(help=EXPAND_LLM_HELP)] = None,
    prompt: Annotated[str, typer.Option("--prompt", help="HyDE prompt preset (SciFact: scientific).")] = "scientific",
    max_tokens: Annotated[int, typer.Option(min=1, max=2048, help="Expansion length cap (Yoon et al.: 512).")] = 512,
    verifier: Annotated[str, typer.Option(help="NLI cross-encoder of mode rerank: embedded, a folder or a cached HF id.")] = "embedded",
    rerank_top: Annotated[int, typer.Option(min=1, max=100, help="Mode rerank: evidence sentences the cross-encoder re-ranks.")] = 10,
    sentence_head: Annotated[bool, typer.Option(
        "--sentence-head/--no-sentence-head",
        help="Mode hybrid-sentence: the learned evidence-sentence head over abstract-length abstracts (off: the fused order only).",
    )] = True,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Document-level recall@k / ndcg@k and evidence-sentence recall@5 / @10 of each
    retrieval mode, index build time and query latency; hyde / query2doc also report the
    seconds each expansion took. With --db the generated expansions are kept (stage cache)
    for `eval leakage` on the same database."""
    from core.evaluate.retrieval import evaluate_retrieval, format_table
    from core.evaluate.retrieval_sets import RETRIEVAL_DATASETS
    from core.retrieve.expand import ExpansionParams
    from tui.console import progress_bar

    if dataset not in RETRIEVAL_DATASETS:
        raise_input(f"unknown retrieval dataset {dataset!r} (supported: {', '.join(RETRIEVAL_DATASETS)})")
    if dataset == "scifact" and corpus is None:
        raise_input("--dataset scifact needs --corpus (the SciFact corpus.jsonl)")
    with progress_bar() as update:
        report = evaluate_retrieval(
            dataset=dataset,
            claims_path=claims,
            corpus_path=corpus,
            modes=[m.strip() for m in modes.split(",") if m.strip()],
            ks=[int(x) for x in k.split(",") if x.strip()],
            index_kinds=[x.strip() for x in index_kinds.split(",") if x.strip()],
            embedder_factory=workbench_of(ctx).embedder,
            splitter_factory=workbench_of(ctx).splitter,
            db_path=state_of(ctx).db_path,
            limit=limit,
            progress=update,
            llm_factory=workbench_of(ctx, llm=llm).llm,
            hyde_prompt=prompt,
            params=ExpansionParams(max_tokens=max_tokens),
            nli_factory=lambda: workbench_of(ctx).nli(verifier),
            rerank_top=rerank_top,
            sentence_head=sentence_head,
        )
    sys.stdout.write(format_table(report) + "\n")
    write_report(report, json_out)


@eval_app.command("leakage")
def eval_leakage(
    ctx: typer.Context,
    claims: Annotated[Path, typer.Option(help="Claims JSONL (SciFact format, with gold evidence).")],
    corpus: Annotated[Path, typer.Option(help="Corpus JSONL (SciFact format).")],
    methods: Annotated[str, typer.Option(help="Comma-separated: query2doc,hyde.")] = "query2doc,hyde",
    k: Annotated[str, typer.Option("--k", help="Comma-separated cut-offs.")] = "5,10",
    repeats: Annotated[int, typer.Option(min=1, max=16, help="Generations per claim (Yoon et al.: 8), mean ± SE.")] = 1,
    llm: Annotated[str | None, typer.Option(help=EXPAND_LLM_HELP)] = None,
    prompt: Annotated[str, typer.Option("--prompt", help="HyDE prompt preset (SciFact: scientific).")] = "scientific",
    max_tokens: Annotated[int, typer.Option(min=1, max=2048, help="Expansion length cap (Yoon et al.: 512).")] = 512,
    verifier: Annotated[str, typer.Option(help="NLI model labelling (gold evidence, generated sentence) pairs.")] = "embedded",
    limit: Annotated[int | None, typer.Option(help="Only the first N claims.")] = None,
    min_entailment: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Also require P(entailment) ≥ this (0: the NLI argmax alone).")
    ] = 0.0,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """The query-expansion leakage audit of Yoon et al. (§3.3, Table 4): the share of claims whose expansion already
    states the gold evidence (matched), and recall@k / ndcg@k of each expansion and its
    unexpanded baseline on all, matched and unmatched claims."""
    from core.evaluate.leakage import evaluate_leakage, format_table
    from core.retrieve.expand import ExpansionParams
    from tui.console import progress_bar

    wb = workbench_of(ctx)
    nli = wb.nli(verifier)
    with progress_bar() as update:
        report = evaluate_leakage(
            claims_path=claims, corpus_path=corpus, embedder_factory=wb.embedder,
            splitter_factory=wb.splitter, nli=nli, llm_factory=workbench_of(ctx, llm=llm).llm,
            methods=[m.strip() for m in methods.split(",") if m.strip()],
            ks=[int(x) for x in k.split(",") if x.strip()], hyde_prompt=prompt,
            params=ExpansionParams(max_tokens=max_tokens), repeats=repeats, db_path=state_of(ctx).db_path,
            limit=limit, progress=update, min_entailment=min_entailment,
        )
    sys.stdout.write(format_table(report) + "\n")
    write_report(report, json_out)


@eval_app.command("verifier")
def eval_verifier(
    ctx: typer.Context,
    dataset: Annotated[
        str, typer.Option(help="fever-symmetric, vitaminc, scifact, climate-fever, wice or nli.")
    ],
    path: Annotated[Path, typer.Option(help="The dataset file (scifact: the claims JSONL).")],
    corpus: Annotated[Path | None, typer.Option(help="scifact: the corpus JSONL.")] = None,
    split: Annotated[
        str | None, typer.Option(help="vitaminc: 'dev' keeps only the pages the verifier never trained on.")
    ] = None,
    models: Annotated[
        str, typer.Option(help="Comma-separated NLI models: embedded, local folders, cached HF ids.")
    ] = "embedded",
    baselines: Annotated[bool, typer.Option("--baselines", help="Add majority, lexical and cosine baselines.")] = False,
    limit: Annotated[int | None, typer.Option(help="Only the first N pairs.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the calibration / evaluation split.")] = 0,
    device: Annotated[str, typer.Option(help="cpu or cuda.")] = "cpu",
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Accuracy, macro-F1, per-class F1, ECE (before/after temperature) and pairs/s of NLI models vs baselines."""
    import time

    from core.evaluate.verifier import evaluate_verifier, format_table
    from tui.console import progress_bar

    t0 = time.perf_counter()
    wb = workbench_of(ctx, device=device)
    loaded = {name.strip(): wb.nli(name.strip()) for name in models.split(",") if name.strip()}
    load_s = time.perf_counter() - t0
    with progress_bar() as update:
        report = evaluate_verifier(
            dataset=dataset, path=path, corpus=corpus, models=loaded, baselines=baselines, limit=limit,
            embedder_factory=wb.embedder if baselines else None,
            progress=update, seed=seed, split=split, device=device,
        )
    report["timing"]["models_load_s"] = load_s
    sys.stdout.write(format_table(report) + "\n")
    write_report(report, json_out)


@eval_app.command("verdicts")
def eval_verdicts(
    ctx: typer.Context,
    path: Annotated[Path, typer.Option(help="Climate-FEVER dev JSONL (claims with 5 evidence sentences).")],
    dataset: Annotated[str, typer.Option(help="climate-fever.")] = "climate-fever",
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    limit: Annotated[int | None, typer.Option(help="Only the first N claims.")] = None,
    grounding: Annotated[bool, typer.Option(help=GROUNDING_HELP)] = True,
    seed: Annotated[int, typer.Option(help="Seed of the fit / held-out split of claims.")] = 0,
    fix_support: Annotated[float | None, typer.Option(
        min=0.0, max=1.0, help="Hold the support threshold at this value and fit only refute and conflict "
                               "(a support threshold fitted on given documents).")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Claim verdicts (supported / refuted / NEI / conflicting) from several evidence sentences; fits the thresholds."""
    from core.evaluate.verdicts import evaluate_verdicts, format_table
    from tui.console import progress_bar

    if dataset != "climate-fever":
        raise_input(f"unknown verdict dataset {dataset!r} (supported: climate-fever)")
    with progress_bar() as update:
        report = evaluate_verdicts(path=path, verifier=verifier_of(ctx, verifier, grounding), seed=seed, limit=limit, progress=update,
                                   fix_support=fix_support)
    sys.stdout.write(format_table(report) + "\n")
    write_report(report, json_out)


@eval_app.command("decompose")
def eval_decompose(
    ctx: typer.Context,
    path: Annotated[list[Path], typer.Option(help="A dataset JSONL; repeat --path to run several files in one go.")],
    dataset: Annotated[str, typer.Option(help="factscore, factcheck-gpt, feverfact, or auto (detected per file).")] = "auto",
    decomposers: Annotated[str, typer.Option(help="Comma-separated: sentence,rules,llm,atomic.")] = "sentence,rules",
    match: Annotated[str, typer.Option(help="Claim matching: nli (bidirectional entailment), jaccard (token-set "
                                            "Jaccard >= 0.6 and >= 0.8, as PropSegmEnt) or embedding.")] = "nli",
    fold: Annotated[str | None, typer.Option(help="Only some topics: K/N keeps fold K of N (by topic hash), !K/N the rest.")] = None,
    references: Annotated[bool, typer.Option(help="Also score the decompositions the dataset ships (FActScore's "
                                                  "model-atomic-facts, FEVERFact's system predictions).")] = True,
    verifier: Annotated[str, typer.Option(help="NLI model for --match nli.")] = "embedded",
    llm: Annotated[str, typer.Option(help="GGUF model of the llm decomposer: embedded or a .gguf path.")] = "embedded",
    limit: Annotated[int | None, typer.Option(help="Only the first N answers of each file.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
    standalone: Annotated[bool, typer.Option(
        "--standalone/--as-written",
        help="atomic and rules: score the claims as check makes them (the answer's subject named instead "
             "of its pronoun) or as written, as `claimscope decompose` prints them by default.")] = False,
) -> None:
    """Precision, recall and F1 of produced claims against human atomic claims; claims and ms per sentence."""
    from core.evaluate.decompose import THRESHOLDS, evaluate_decompose, evaluate_decompose_sets, format_table, in_fold
    from tui.console import progress_bar

    if match not in THRESHOLDS:
        raise_input(f"unknown matching method {match!r} ({', '.join(THRESHOLDS)})")
    in_fold("", fold)  # a bad fold is reported before any model loads
    wb = workbench_of(ctx, llm=llm)
    decs = {n.strip(): wb.decomposer(n.strip(), standalone=standalone) for n in decomposers.split(",") if n.strip()}
    matcher = wb.nli(verifier) if match == "nli" else None if match == "jaccard" else wb.embedder()
    with progress_bar() as update:
        if len(path) == 1:
            report = evaluate_decompose(dataset=dataset, path=path[0], decomposers=decs, matcher=matcher, method=match,
                                        limit=limit, progress=update, fold=fold, references=references)
        else:
            report = evaluate_decompose_sets(sets=[(dataset, p) for p in path], decomposers=decs, matcher=matcher,
                                             method=match, limit=limit, progress=update, fold=fold, references=references)
    sys.stdout.write(format_table(report) + "\n")
    write_report(report, json_out)


@eval_app.command("attribution")
def eval_attribution(
    ctx: typer.Context,
    path: Annotated[Path, typer.Option("--path", "--data", help="ExpertQA JSONL (e.g. ../shared/data/expertqa/dev.jsonl).")],
    dataset: Annotated[str, typer.Option(help="expertqa.")] = "expertqa",
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    partial: Annotated[bool, typer.Option(help="Label Partial via atomic facts (rules decomposer; slower).")] = False,
    limit: Annotated[int | None, typer.Option(help="Only the first N answers.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """AutoAIS vs the experts' support labels (Complete vs not): precision, recall, F1 per system (Table 6)."""
    from core.evaluate.attribution import evaluate_attribution, format_table
    from core.score.attribution import Attributor
    from tui.console import progress_bar

    if dataset != "expertqa":
        raise_input(f"unknown attribution dataset {dataset!r} (supported: expertqa)")
    wb = workbench_of(ctx)
    attributor = Attributor(wb.nli(verifier), wb.splitter(), decomposer=wb.decomposer("rules") if partial else None)
    with progress_bar() as update:
        report = evaluate_attribution(path=path, attributor=attributor, limit=limit, progress=update)
    sys.stdout.write(format_table(report) + "\n")
    write_report(report, json_out)


@eval_app.command("grounding")
def eval_grounding(
    ctx: typer.Context,
    data: Annotated[Path | None, typer.Option("--data", help="Rows {id, doc, claim, label 1|0, domain?} (JSONL).")] = None,
    dataset: Annotated[str | None, typer.Option(help="Convert on the fly: wice, expertqa or factcheck-gpt (with --path).")] = None,
    path: Annotated[Path | None, typer.Option("--path", help="The --dataset's own file.")] = None,
    convert: Annotated[Path | None, typer.Option("--convert", help="Only write the --dataset as --data rows here.")] = None,
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    grounding: Annotated[bool, typer.Option(help=GROUNDING_HELP)] = True,
    baselines: Annotated[bool, typer.Option(help="Lexical-overlap and embedding-cosine baselines in the same run.")] = True,
    ablations: Annotated[bool, typer.Option(help="Also score other aggregations (windows only, sentences only, ...).")] = False,
    limit: Annotated[int | None, typer.Option(help="Only the first N rows.")] = None,
    split_claims: Annotated[str | None, typer.Option(
        "--split-claims", help="Decompose each claim first with this decomposer (rules, atomic, ...) and score the "
        "min over its parts (WiCE's Claim-Split).")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
    dump_judgements: Annotated[Path | None, typer.Option(
        "--dump-judgements", help="Also write every claim sentence's judgements here (JSONL, holds the dataset's "
        "text), to score or fit other verdict weights without a model call.")] = None,
) -> None:
    """Claim vs given document (LLM-AggreFact protocol): balanced accuracy per domain and mean, AUC, time per pair."""
    from core.evaluate.grounding import evaluate_grounding, format_table, load_dataset, write_rows
    from tui.console import err, progress_bar

    if (data is None) == (dataset is None):
        raise_input("give --data F.jsonl or --dataset NAME --path F")
    if dataset is not None and path is None:
        raise_input(f"--dataset {dataset} needs --path (its file)")
    rows = load_dataset("jsonl", data) if data is not None else load_dataset(dataset, path)
    if dump_judgements is not None:  # fail before any model call, not after the run
        try:
            dump_judgements.parent.mkdir(parents=True, exist_ok=True)
            dump_judgements.open("a", encoding="utf-8").close()
        except OSError as e:
            raise_input(f"--dump-judgements {dump_judgements}: {e.strerror or e}")
    if convert is not None:
        err.print(f"wrote {write_rows(rows, convert)} rows to {convert}", markup=False)
        return
    wb = workbench_of(ctx)
    with progress_bar() as update:
        report = evaluate_grounding(
            rows=rows, dataset=dataset or data.stem, path=path or data, verifier=verifier_of(ctx, verifier, grounding),
            splitter=wb.splitter(), embedder_factory=wb.embedder if baselines else None, baselines=baselines,
            ablations=ablations, limit=limit, chunk_words=wb.settings.chunk_words,
            chunk_overlap=wb.settings.chunk_overlap, progress=update,
            claim_splitter=wb.decomposer(split_claims) if split_claims else None, judgements_out=dump_judgements,
        )
    sys.stdout.write(format_table(report) + "\n")
    write_report(report, json_out)


@eval_app.command("factuality")
def eval_factuality(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Option(help="factscore or factcheck-gpt.")],
    path: Annotated[list[Path], typer.Option("--path", "--data", help="Dataset JSONL (repeatable).")],
    source: Annotated[str, typer.Option("--source", "-s", help="factscore: the knowledge source to search.")] = "wiki-vital",
    mode: Annotated[str, typer.Option("--mode", "-m", help="Retrieval: bm25, dense or hybrid.")] = "hybrid",
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="Passages per claim.")] = 10,
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    grounding: Annotated[bool, typer.Option(help=GROUNDING_HELP)] = True,
    verdict_rule: Annotated[str | None, typer.Option(help=VERDICT_RULE_HELP + FROM_SETTINGS)] = None,
    store: Annotated[bool, typer.Option("--store", help="Keep each answer as a run, human labels as annotations.")] = False,
    limit: Annotated[int | None, typer.Option(help="Only the first N answers of each file.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Claim verdicts vs human labels (κ, F1), per-answer factual precision vs the human one, claims without evidence."""
    from core.evaluate.factuality import DATASETS, evaluate_factuality, format_table
    from tui.console import progress_bar

    if dataset not in DATASETS:
        raise_input(f"unknown factuality dataset {dataset!r} ({', '.join(DATASETS)})")
    db = database(ctx)
    searcher = searcher_of(ctx, db, [source]) if dataset == "factscore" else None
    with progress_bar() as update:
        report = evaluate_factuality(
            dataset=dataset, paths=path, verifier=verifier_of(ctx, verifier, grounding, verdict_rule), searcher=searcher,
            splitter=workbench_of(ctx).splitter(), source=source, k=k, mode=mode, limit=limit, db=db, store=store,
            progress=update,
        )
    sys.stdout.write(format_table(report) + "\n")
    write_report(report, json_out)


@eval_app.command("acu")
def eval_acu(
    ctx: typer.Context,
    data: Annotated[Path, typer.Option(help="JSONL of {claim, evidence, stance[, claimant, id]}, or Climate-FEVER.")],
    shots: Annotated[int, typer.Option(help="0 or 3 worked examples.")] = 3,
    llm: Annotated[str | None, typer.Option(help="GGUF model: embedded (SmolLM2) or a .gguf path.")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N pairs.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """ACU over labelled (claim, evidence, stance) pairs, as Hagström et al. (DRUID) Table 22: mean ΔP per
    answer and stance, mean ACU sum, context-repulsion and memory-conflict shares, seconds per pair."""
    from core.evaluate.acu import evaluate_acu, format_table, load_acu_pairs
    from tui.console import progress_bar

    if shots not in (0, 3):
        raise_input("--shots must be 0 or 3")
    pairs = load_acu_pairs(data)
    scorer = workbench_of(ctx, llm=llm).context_usage(shots)
    with progress_bar() as update:
        report = evaluate_acu(pairs, scorer, limit=limit, progress=update)
    report["data"] = str(data)
    sys.stdout.write(format_table(report) + "\n")
    write_report(report, json_out)
