"""``claimscope search | decompose | verify | check``: the stages from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from tui.cli.options import (
    DOCUMENT_FIELDS,
    EXPAND_LLM_HELP,
    FROM_SETTINGS,
    GROUNDING_HELP,
    MODE_HELP,
    PROMPT_HELP,
    STDIN,
    VERDICT_RULE_HELP,
    check_inputs,
    database,
    expander_of,
    raise_input,
    run_options_of,
    run_settings_of,
    searcher_of,
    settings_of,
    stdin_text,
    verifier_of,
    workbench_of,
)
from tui.cli.render import print_check, print_expansion, print_hits, print_sentences, print_verdict
from tui.cli.root import app

# ---------------------------------------------------------------- search


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for (a claim or question).")],
    source: Annotated[
        list[str] | None, typer.Option("--source", "-s", help="Source name (repeatable; default: all).")
    ] = None,
    mode: Annotated[str | None, typer.Option("--mode", "-m", help=MODE_HELP + FROM_SETTINGS)] = None,
    k: Annotated[int, typer.Option("-k", min=1, max=1000, help="Number of passages.")] = 10,
    prompt: Annotated[str | None, typer.Option("--prompt", help=PROMPT_HELP)] = None,
    llm: Annotated[str | None, typer.Option(help=EXPAND_LLM_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per passage on stdout.")] = False,
    sentences: Annotated[int, typer.Option(
        "--sentences", min=0, max=100,
        help="Also rank the passages' sentences together (the evidence-sentence ranking a check's verifier "
             "judges first) and show the best N; with --json each passage gets its sentences' ranks. "
             "Not for bm25 / query2doc (no sentence vectors).")] = 0,
) -> None:
    """Ranked passages with title, each retriever's score and rank, and the best-matching
    sentence. With --mode hyde / query2doc the LLM's pseudo-document is shown on stderr,
    marked as generated: it shapes the query and is never evidence."""
    from core.pipeline.stored import expand_cached
    from core.retrieve.searcher import EMBEDDING_MODES, check_query
    from core.settings import check_text_size

    mode = mode or settings_of(ctx).mode
    check_query(query, mode)  # before the sources are opened (a fresh database indexes wiki-vital first)
    if sentences and mode not in EMBEDDING_MODES:
        raise_input(f"--sentences ranks sentences by their vectors: use a mode that has them ({', '.join(EMBEDDING_MODES)}), "
                    f"not {mode}")

    check_text_size(query, "the query")
    db = database(ctx)
    searcher = searcher_of(ctx, db, source, mode)
    expander = expander_of(ctx, mode, prompt, llm)
    expansion = expand_cached(db, expander, query) if expander is not None else None
    if expansion is not None:
        print_expansion(expansion)
    hits = searcher.search(query, k=k, mode=mode, sources=source, expansion=expansion)
    ranked = searcher.rank_evidence_sentences(query, hits, mode) if sentences else []
    print_hits(hits, mode, as_json, searcher)
    if ranked and not as_json:
        print_sentences(ranked[:sentences], {h.passage.id: h.rank for h in hits})


# ---------------------------------------------------------------- decompose


@app.command()
def decompose(
    ctx: typer.Context,
    text: Annotated[str | None, typer.Argument(help="The text to split into claims ('-': standard input).")] = None,
    decomposer: Annotated[
        str | None, typer.Option(help="rules (atomic, decontextualised), sentence, llm (GGUF model), or atomic "
                                  "(the trained FActScore-style decomposer)." + FROM_SETTINGS)
    ] = None,
    file: Annotated[Path | None, typer.Option("--file", help="Read the text from this file: text or Markdown, or a saved web page / PDF / Word file read as its prose ('-': standard input).")] = None,
    jsonl: Annotated[Path | None, typer.Option(help="Batch: one JSON object per line with 'text' and optional 'id' ('-': standard input); JSONL out.")] = None,
    llm: Annotated[
        str | None, typer.Option(help="GGUF model for --decomposer llm: embedded or a path to a .gguf file." + FROM_SETTINGS)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per claim.")] = False,
    standalone: Annotated[bool, typer.Option(
        "--standalone/--as-written",
        help="atomic and rules: name the answer's subject instead of its pronoun, as check does "
             "(a claim retrieved from a whole corpus must say who), or keep the facts as written, "
             "FActScore's style (its annotators keep the pronoun).")] = False,
) -> None:
    """Split a text (an argument, --file F, or --jsonl F; '-' reads standard input) into
    claims, each with its character span, as check splits it (a Markdown answer read as prose);
    questions, references, a chat answer's frame, fragments, abstentions, opinions and advice
    are kept but marked not checkable. With --jsonl, every input line gives one output line per
    claim, tagged with the input's id."""
    from rich.text import Text

    from core.decompose.citations import decompose_cited
    from tui.console import err, out

    if sum(x is not None for x in (text, file, jsonl)) != 1:
        raise_input("give exactly one of: TEXT, --file F, --jsonl F")
    items = check_inputs(text, file, jsonl)  # also refuses an empty text or one over the size limit
    settings = settings_of(ctx)
    dec = workbench_of(ctx, llm=llm).decomposer(decomposer or settings.decomposer, standalone=standalone)
    for ext_id, body in items:
        # as a check splits it: a Markdown answer's layout read as prose, [n] markers kept apart
        claims = [c.claim for c in decompose_cited(body, dec)]
        for warning in getattr(dec, "warnings", []):
            err.print(f"claimscope: warning: {'input ' + str(ext_id) + ': ' if ext_id else ''}{warning}", markup=False)
        for c in claims:
            if as_json or jsonl is not None:
                obj = {"idx": c.idx, "text": c.text, "span": list(c.span), "checkable": c.checkable,
                       "note": c.note, "context": c.context}
                sys.stdout.write(json.dumps({"id": ext_id, **obj} if jsonl is not None else obj) + "\n")
                continue
            line = Text(f"{c.idx + 1:>3}. ")
            line.append(c.text, style="" if c.checkable else "dim")
            if not c.checkable:
                line.append(f"  [not checkable: {c.note}]", style="yellow")
            elif c.note:
                line.append(f"  [{c.note}]", style="dim")
            out.print(line)


# ---------------------------------------------------------------- verify


@app.command()
def verify(
    ctx: typer.Context,
    claim: Annotated[str, typer.Argument(help="The claim to verify ('-': standard input).")],
    source: Annotated[
        list[str] | None, typer.Option("--source", "-s", help="Source name (repeatable; default: all).")
    ] = None,
    mode: Annotated[str | None, typer.Option("--mode", "-m", help=MODE_HELP + FROM_SETTINGS)] = None,
    k: Annotated[int | None, typer.Option("-k", min=1, max=100, help="Passages to verify against." + FROM_SETTINGS)] = None,
    verifier: Annotated[
        str | None, typer.Option(help="NLI model: embedded, a local folder or a cached HF id." + FROM_SETTINGS)
    ] = None,
    grounding: Annotated[bool | None, typer.Option(help=GROUNDING_HELP + FROM_SETTINGS)] = None,
    verdict_rule: Annotated[str | None, typer.Option(help=VERDICT_RULE_HELP + FROM_SETTINGS)] = None,
    prompt: Annotated[str | None, typer.Option("--prompt", help=PROMPT_HELP)] = None,
    llm: Annotated[str | None, typer.Option(help=EXPAND_LLM_HELP)] = None,
    against: Annotated[list[Path] | None, typer.Option("--against", help=VERIFY_AGAINST_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Verify one claim against a knowledge source, or against given documents (--against):
    verdict, signed support score, evidence. With --mode hyde / query2doc the expansion is
    audited for leakage against the evidence."""
    from core.pipeline.runner import verify_claim
    from core.settings import check_text_size

    if claim.strip() == STDIN:  # `… | claimscope verify -`: it used to verify the claim "-"
        claim = " ".join(stdin_text().split())
    if not claim.strip():  # before the sources are opened (a fresh database indexes wiki-vital first)
        raise_input("the claim is empty")
    check_text_size(claim, "the claim")
    if against and (k is not None or prompt is not None or llm is not None):
        raise_input("--against judges every passage of the given documents: drop -k / --prompt / --llm")
    docs = against_documents(against, None, source, mode)  # a bad file exits 2 before the database is opened
    s = run_settings_of(ctx, mode=mode, top_k=k, verifier=verifier, grounding=grounding)
    mode, k, verifier, grounding = s.mode, s.top_k, s.verifier, s.grounding
    if docs:
        from core.pipeline.given import verify_given

        options = run_options_of(ctx, verifier, grounding, verdict_rule)
        print_verdict(verify_given(workbench_of(ctx), database(ctx), options, docs, claim), as_json)
        return
    db = database(ctx)
    searcher = searcher_of(ctx, db, source, mode)
    expander = expander_of(ctx, mode, prompt, llm)
    splitter = workbench_of(ctx).splitter() if expander is not None else None
    result = verify_claim(db, searcher, verifier_of(ctx, verifier, grounding, verdict_rule), claim, sources=source, k=k, mode=mode,
                          expander=expander, splitter=splitter)
    if result.expansion is not None and not as_json:
        print_expansion(result.expansion, result.leakage.matched if result.leakage else None)
    print_verdict(result, as_json)


# ---------------------------------------------------------------- check

CHECK_HELP = (
    "Check a text: split it into claims, retrieve evidence for each, verify, score. "
    "Give the text as an argument, or --file F ('-' reads standard input), or --jsonl F (one object per line with "
    "'text' and optional 'id'; one run per line; optional 'documents', a list of strings or of objects with 'text': "
    "that line is checked against those documents only; a RAGAS log's 'response' or 'answer' and "
    "'retrieved_contexts' or 'contexts' are read as 'text' and 'documents'). Results go to stdout (or --out), progress "
    "to stderr. An interrupted run is kept: finish it with --resume RUN. Re-running the same "
    "--jsonl file resumes it: a line whose id and text already have a run made with the same "
    "settings reuses that run (finishing it if it was interrupted) instead of starting a new one. "
    "A text (or batch line) over 100,000 characters is refused: split it. "
    "Exit codes: 0 done, 2 bad input, 3 unknown run or source, 6 an answer below --fail-under, "
    "130 interrupted (resumable)."
)


@app.command(help=CHECK_HELP)
def check(
    ctx: typer.Context,
    text: Annotated[str | None, typer.Argument(help="The text to check ('-': standard input).")] = None,
    file: Annotated[Path | None, typer.Option("--file", help="Read the text from this file: text or Markdown, or a saved web page / PDF / Word file read as its prose ('-': standard input).")] = None,
    jsonl: Annotated[Path | None, typer.Option("--jsonl", help="Batch: JSONL with 'text' (and 'id'); '-' reads standard input.")] = None,
    resume: Annotated[int | None, typer.Option("--resume", help="Finish an interrupted run.")] = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="Write JSONL results here.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table, json or jsonl.")] = "table",
    source: Annotated[list[str] | None, typer.Option("--source", "-s", help="Source (repeatable).")] = None,
    mode: Annotated[str | None, typer.Option("--mode", "-m", help=MODE_HELP + FROM_SETTINGS)] = None,
    k: Annotated[int | None, typer.Option("-k", min=1, max=100, help="Passages per claim." + FROM_SETTINGS)] = None,
    decomposer: Annotated[
        str | None, typer.Option(help="Decomposer: rules (atomic claims), sentence, llm or atomic (trained)." + FROM_SETTINGS)
    ] = None,
    verifier: Annotated[
        str | None, typer.Option(help="NLI model: embedded, a folder or a cached HF id." + FROM_SETTINGS)
    ] = None,
    grounding: Annotated[bool | None, typer.Option(help=GROUNDING_HELP + FROM_SETTINGS)] = None,
    verdict_rule: Annotated[str | None, typer.Option(help=VERDICT_RULE_HELP + FROM_SETTINGS)] = None,
    prompt: Annotated[str | None, typer.Option("--prompt", help=PROMPT_HELP)] = None,
    llm: Annotated[str | None, typer.Option(help=EXPAND_LLM_HELP)] = None,
    claim_date: Annotated[
        str | None, typer.Option(help="When the text was written, YYYY[-MM[-DD]]: later evidence is flagged.")
    ] = None,
    against: Annotated[list[Path] | None, typer.Option("--against", help=AGAINST_HELP)] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help=NO_CACHE_HELP)] = False,
    ray: Annotated[bool, typer.Option("--ray", help=RAY_HELP)] = False,
    address: Annotated[str | None, typer.Option("--address", help="With --ray: a running Ray cluster (HOST:PORT).")] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, max=1024, help="With --ray: checking actors.")] = 2,
    ship_index: Annotated[bool, typer.Option("--ship-index", help=SHIP_HELP)] = False,
    fail_under: Annotated[float | None, typer.Option("--fail-under", min=0.0, max=1.0, help=FAIL_UNDER_HELP)] = None,
    english_only: Annotated[bool | None, typer.Option("--english-only/--all-languages", help=ENGLISH_ONLY_HELP + FROM_SETTINGS)] = None,
) -> None:
    from core.pipeline.events import Event, EventKind
    from core.pipeline.runner import Pipeline
    from store import runs as rq
    from tui.console import err, progress_bar

    if fmt not in ("table", "json", "jsonl"):
        raise_input(f"unknown format {fmt!r} (table, json or jsonl)")
    given = [x is not None for x in (text, file, jsonl, resume)]
    if sum(given) != 1:
        raise_input("give exactly one of: TEXT, --file F, --jsonl F, --resume RUN")
    if ray or address or ship_index:
        from core.pipeline.cluster import import_ray

        if jsonl is None:
            raise_input("--ray checks a --jsonl batch: give --jsonl F")
        if no_cache:
            raise_input("--no-cache times a local run; the Ray workers keep their own stage cache (drop --ray)")
        import_ray()  # without the extra: "install claimscope[cluster]", before any model loads
    line_docs: list = []  # each batch line's own documents (field 'documents'), or None
    inputs = check_inputs(text, file, jsonl, documents=line_docs)
    per_line = any(d is not None for d in line_docs)
    if per_line:
        refuse_line_documents(inputs, line_docs, against, source, mode)
    against_docs = against_documents(against, resume, source, mode)
    settings = run_settings_of(ctx, mode=mode, top_k=k, decomposer=decomposer, verifier=verifier, grounding=grounding,
                               english_only=english_only)
    # a run checked in every language because nobody chose (neither the option nor the setting) says
    # so on stderr when some of its claims read as another language (:func:`warn_other_languages`)
    warn_languages = english_only is None and not settings.english_only
    mode, k, decomposer, verifier, grounding, english_only = (settings.mode, settings.top_k, settings.decomposer,
                                                              settings.verifier, settings.grounding, settings.english_only)
    given = named_documents(against_docs, inputs, line_docs)
    if given:
        warn_document_languages(given, workbench_of(ctx).language_guard())
    db = database(ctx)
    if resume is not None and rq.get_run(db, resume) is None:
        from core.errors import NotFoundError

        raise NotFoundError(f"no run {resume} in {settings.db_path}")
    pipeline = against_pipeline(ctx, db, against_docs, resume, decomposer, verifier, grounding, verdict_rule, english_only)
    if per_line:
        from core.pipeline.given import given_pipeline

        options = run_options_of(ctx, verifier, grounding, verdict_rule, decomposer=decomposer, english_only=english_only)

        def line_pipeline(i: int):
            """Line i's pipeline over its own documents, built (and the documents stored) when it runs."""
            p = given_pipeline(workbench_of(ctx), db, options, docs=line_docs[i])
            p.use_cache = not no_cache
            return p
    elif pipeline is None:
        searcher = searcher_of(ctx, db, source, mode)
        expander = expander_of(ctx, mode, prompt, llm)
        pipeline = Pipeline(
            db, workbench_of(ctx).decomposer(decomposer), searcher,
            verifier_of(ctx, verifier, grounding, verdict_rule),
            sources=source, k=k, mode=mode, expander=expander,
            splitter=workbench_of(ctx).splitter() if expander is not None else None,
            language_guard=workbench_of(ctx).language_guard() if english_only else None,
        )
    if no_cache and pipeline is not None:
        pipeline.use_cache = False  # nothing is read from (or written to) the stage cache
    if ray or address or ship_index:
        options = run_options_of(ctx, verifier, grounding, verdict_rule, decomposer=decomposer, mode=mode, k=k,
                                 sources=tuple(source or ()), english_only=english_only)
        # lines with their own documents: each line's pipeline, its documents stored here before Ray starts
        batch_pipeline = [line_pipeline(i) for i in range(len(inputs))] if per_line else pipeline
        results = ray_batch(ctx, batch_pipeline, options, inputs, out_path, fmt, address, workers, ship_index)
        if warn_languages:
            warn_other_languages(results, workbench_of(ctx).language_guard())
        gate(results, fail_under)
        return
    sink = out_path.open("w", encoding="utf-8") if out_path else None
    results = []
    run_id = resume
    try:
        with progress_bar() as update:
            def listen(event: Event) -> None:
                if event.kind is EventKind.RUN_STARTED:
                    update(f"run {event.run_id}", 0, event.payload["claims"])
                elif event.kind is EventKind.VERDICT_READY:
                    update(f"run {event.run_id}", 1, None)

            for i, (ext_id, body) in enumerate(inputs or [(None, None)]):
                if per_line:
                    pipeline = line_pipeline(i)
                # A batch line already run with the same settings (an earlier, interrupted
                # invocation) is resumed or reused, never started twice.
                prior = rq.find_run(db, ext_id, rq.input_hash(body), pipeline.config()) if jsonl and body else None
                run_id = resume if body is None else (
                    prior.id if prior else pipeline.start(body, ext_id, listen, claim_date=claim_date))
                if prior is not None:
                    update(f"run {run_id}", 0, len(rq.run_claims(db, run_id)))
                if prior is None or prior.status != "done":
                    pipeline.resume(run_id, listen)
                result = {
                    "run_id": run_id, "id": rq.get_run(db, run_id).external_id,
                    "claims": rq.run_results(db, run_id), "scores": rq.run_scores(db, run_id),
                }
                results.append(result)
                if sink:
                    sink.write(json.dumps(result) + "\n")
                    sink.flush()
    except KeyboardInterrupt:
        err.print(f"interrupted: finish with `claimscope check --resume {run_id}`", markup=False)
        raise typer.Exit(130) from None
    finally:
        if sink:
            sink.close()
    print_check(results, fmt)
    if warn_languages:
        warn_other_languages(results, workbench_of(ctx).language_guard())
    gate(results, fail_under)


def warn_other_languages(results: list[dict], guard) -> None:
    """One line on stderr when verified claims read as another language (for a batch, one line for
    all its runs): every model claimscope embeds reads English, so their verdicts mean little, and
    ``--english-only`` would have noted them and left them unverified. Nothing stored changes. The guard
    (core/language.py) reads the claims' texts; on English sets it calls about one sentence in
    14,000 another language (docs/benchmarks.md), so the line is rare where it is wrong."""
    from collections import Counter

    from core.language import language_names, other_languages
    from tui.console import err

    found = []  # (run id, claims in another language, checked claims, their languages)
    for result in results:
        claims = [c["text"] for c in result["claims"] if c["checkable"]]
        langs = other_languages(claims, guard)
        if langs:
            found.append((result["run_id"], sum(langs.values()), len(claims), langs))
    if not found:
        return
    advice = ("claimscope's models read English, so those verdicts mean little: "
              "--english-only notes such claims and leaves them unverified")
    if len(results) == 1:
        run_id, n, of, langs = found[0]
        err.print(f"run {run_id}: {n} of {of} checked claims read as another language ({language_names(langs)}); {advice}",
                  markup=False)
        return
    total = sum((langs for *_, langs in found), Counter())
    names = language_names(total, 3)
    runs = ", ".join(str(run_id) for run_id, *_ in found[:5]) + (" …" if len(found) > 5 else "")
    err.print(f"{len(found)} of {len(results)} runs have claims that read as another language ({names}; runs {runs}): "
              f"{sum(total.values())} claims in all; {advice}", markup=False)


def named_documents(against_docs, inputs, line_docs) -> list[tuple[str, Any]]:
    """(name, document) of a check's given documents, as a warning names them: ``--against``'s by
    title, a batch line's as "line ID: document N"."""
    named = [(d.title or d.ext_id, d) for d in against_docs or []]
    for i, ((ext_id, _), docs) in enumerate(zip(inputs, line_docs, strict=False)):  # line_docs: [] unless per line
        named += [(f"line {ext_id or i + 1}: {d.title}", d) for d in docs or []]
    return named


def warn_document_languages(docs: list[tuple[str, Any]], guard, named: int = 3) -> None:
    """One line on stderr when given documents ((name, document): ``--against``'s, or a batch line's
    ``documents``) are written in another language: the verifier reads English, so claims judged
    against them tend to end "not enough info" for want of reading them, not for want of evidence."""
    from core.language import LANGUAGE_NAMES
    from tui.console import err

    other = [(name, lang) for name, d in docs if (lang := guard.document_language(d.text)) is not None]
    if other:
        shown = ", ".join(f"{name!r} ({LANGUAGE_NAMES.get(lang, lang)})" for name, lang in other[:named])
        more = f" and {len(other) - named} more" if len(other) > named else ""
        err.print(f"{len(other)} of {len(docs)} given documents read as another language: {shown}{more}; "
                  "claimscope's verifier reads English, so claims judged against them may end 'not enough info'",
                  markup=False)


def refuse_line_documents(inputs, line_docs, against, source, mode) -> None:
    """Batch lines with their own ``documents`` are each checked against those only: every line must
    have them, and nothing may name other evidence (``--against``, ``--source``, ``--mode``). Refused
    before the database is opened."""
    missing = [ext_id for (ext_id, _), docs in zip(inputs, line_docs, strict=True) if docs is None]
    if missing:
        named = ", ".join(repr(f) for f in DOCUMENT_FIELDS)
        raise_input(f"line id {missing[0]!r} has no documents ({named}) while other lines have theirs: give every "
                    "line its documents, or none (then --against F or a knowledge source is the evidence)")
    if against:
        raise_input("the lines carry their own 'documents': drop --against")
    if source or mode is not None:
        raise_input("the lines carry their own 'documents', which are checked without retrieval: drop --source / --mode")


FAIL_UNDER_HELP = (
    "Exit 6 when an answer's factual precision (supported claims / checkable claims) is below this, "
    "after every result is stored and printed: a gate for pipelines that check LLM answers."
)
FAIL_UNDER_EXIT = 6


def gate(results: list[dict], fail_under: float | None) -> None:
    """``--fail-under P``: name the answers whose factual precision is below P on stderr and exit
    6. Why a code of its own: 1 means the tool failed, and a pipeline must tell a bad answer
    from a broken check. An answer with no checkable claim has no precision (FActScore leaves it
    undefined); it is named as unscored and does not fail the gate. Each message is one line
    (never wrapped), for the pipeline's log."""
    from tui.console import err

    if fail_under is None:
        return
    scored = [(r, (r["scores"].get("factual_precision") or {}).get("value")) for r in results]
    unscored = [r for r, fp in scored if fp is None]
    below = [(r, fp) for r, fp in scored if fp is not None and fp < fail_under]
    if unscored:
        err.print(f"claimscope: {len(unscored)} of {len(results)} answers have no checkable claim (no factual "
                  f"precision): " + ", ".join(_run_name(r) for r in unscored), markup=False, soft_wrap=True)
    if below:
        err.print(f"claimscope: {len(below)} of {len(results)} answers below factual precision {fail_under:g}: "
                  + ", ".join(f"{_run_name(r)} {fp:.2f}" for r, fp in below), markup=False, soft_wrap=True)
        raise typer.Exit(FAIL_UNDER_EXIT)


def _run_name(result: dict) -> str:
    return f"run {result['run_id']}" + (f" (id {result['id']})" if result.get("id") is not None else "")


ENGLISH_ONLY_HELP = (
    "Claims of sentences in another language are shown, noted 'not English (reads as …)' and not verified: "
    "every model claimscope embeds reads English (language read by langid.py and spaCy's stop-word lists)."
)
NO_CACHE_HELP = (
    "Recompute every stage: reuse no stored decomposition or claim result (the stage cache), "
    "for honest timing. Stored runs are kept."
)

RAY_HELP = ("Check the --jsonl batch on a Ray actor pool (pip install 'claimscope[cluster]'): each worker loads "
            "the models once; this process stores every result. Without --address a local Ray with --workers CPUs. "
            "Given documents (--against, or each line's 'documents') travel with the answers.")
SHIP_HELP = ("With --ray: send the knowledge source to the workers through Ray's object store (nodes without a "
             "shared file system) instead of opening the database's path read-only. Given documents always "
             "travel that way.")


def ray_batch(ctx, pipeline, options, inputs, out_path, fmt, address, workers, ship_index) -> list[dict]:
    """``check --jsonl F --ray``: core/pipeline/cluster.py checks, this process writes; the
    output is the local batch's (runs in input order), and so are the results returned.
    ``pipeline``: the batch's, or one per line (lines with their own documents)."""
    import contextlib
    import functools

    from core.pipeline.cluster import ClusterOptions, RayBatch
    from core.pipeline.events import Event, EventKind
    from core.workbench import cluster_stages
    from store import runs as rq
    from tui.console import err, progress_bar

    settings = workbench_of(ctx).settings
    db = pipeline[0].db if isinstance(pipeline, list) else pipeline.db
    try:
        with progress_bar() as update:
            done = [0]

            def on_done(run_id: int, ext_id: str | None, _claims: int) -> None:
                done[0] += 1
                update(f"{done[0]}/{len(inputs)} answers (run {run_id})", 0, None)

            def listen(event: Event) -> None:
                if event.kind is EventKind.RUN_STARTED:
                    update(f"run {event.run_id}", 0, event.payload["claims"])
                elif event.kind is EventKind.VERDICT_READY:
                    update(f"run {event.run_id}", 1, None)

            def warn(message: str) -> None:
                err.print(f"claimscope: warning: {message}", markup=False)

            stages = functools.partial(cluster_stages, settings, options)
            batch = RayBatch(pipeline, stages, ClusterOptions(address, workers, ship_index),
                             listener=listen, on_done=on_done, warn=warn)
            # Ray's own notices (a worker died, …) go to stderr: stdout carries only the results.
            with contextlib.redirect_stdout(sys.stderr):
                run_ids = batch.run(inputs)
    except KeyboardInterrupt:
        err.print("interrupted: re-run the same command to finish the batch (finished answers are kept)", markup=False)
        raise typer.Exit(130) from None
    results = [{"run_id": r, "id": rq.get_run(db, r).external_id, "claims": rq.run_results(db, r),
                "scores": rq.run_scores(db, r)} for r in run_ids]
    if out_path:
        with out_path.open("w", encoding="utf-8") as sink:
            for result in results:
                sink.write(json.dumps(result) + "\n")
    print_check(results, fmt)
    if batch.failed:
        err.print(f"{len(batch.failed)} answers failed (recorded; re-run the same command to retry): "
                  + ", ".join(batch.failed), markup=False)
        raise typer.Exit(1)
    return results


VERIFY_AGAINST_HELP = (
    "Verify against these documents only (repeatable; .txt/.md/.html/.pdf/.docx/.jsonl as for check --against): every "
    "passage is judged (past 24, the 12 that match the claim best), no knowledge source is used, the documents are "
    "stored with the run."
)
AGAINST_HELP = (
    "Check against these documents only (repeatable): .txt/.md/.html/.pdf/.docx = one document per file (a "
    "saved web page read as its main text, a PDF as its text layer, a Word file as its paragraphs), .jsonl = one per "
    "line with 'text' and optional 'title', 'id', 'url'. No knowledge source is used; every passage of "
    "the documents is judged (past 24 passages, the 12 that match the claim best). The documents are stored with the run."
)


def against_documents(against, resume, source, mode) -> list | None:
    """The ``--against`` files' documents (None without the option), read and checked before the
    database is opened, so a bad file exits 2 with nothing created; ``mode`` is the option as given."""
    from core.pipeline.given import load_given_files

    if not against:
        return None
    if source or mode is not None:
        raise_input("--against checks against the given documents only: drop --source / --mode")
    if resume is not None:
        raise_input("--resume reuses the run's stored documents: drop --against")
    return load_given_files(against)


def against_pipeline(ctx, db, docs, resume, decomposer, verifier, grounding, verdict_rule=None, english_only=False):
    """The pipeline of a run against given documents (core/pipeline/given.py): the ``--against``
    files' documents (:func:`against_documents`), or the stored documents of the run being resumed;
    None for a knowledge-source run."""
    from core.pipeline.given import given_from_config, given_pipeline
    from store import runs as rq

    stored = given_from_config(db, rq.get_run(db, resume).config) if resume is not None else None
    if not docs and stored is None:
        return None
    options = run_options_of(ctx, verifier, grounding, verdict_rule, decomposer=decomposer, english_only=english_only)
    return given_pipeline(workbench_of(ctx), db, options, docs=docs, stored=stored)


@app.command()
def structured(
    ctx: typer.Context,
    document: Annotated[Path, typer.Argument(help="Markdown or text: lead, ## body sections with [n] markers, references.")],
    source: Annotated[list[str] | None, typer.Option("--source", "-s", help="N=FILE: the text of reference [n] (repeatable).")] = None,
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    grounding: Annotated[bool, typer.Option(help=GROUNDING_HELP)] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Lead → body → source support (PeopleProfiles, "Structured support"): each lead sentence with the body
    sentences that support it and, through their citations, the sources; signed scores with mean and product
    propagation."""
    from tui.structured_view import run_structured

    run_structured(workbench_of(ctx), database(ctx), document, source, verifier.strip(), grounding, as_json)
