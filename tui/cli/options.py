"""What the commands share: the settings, the database, the stages built through
core.workbench (the one composition root), option help texts and input checks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from tui.cli.root import state_of


def settings_of(ctx: typer.Context):
    from core.settings import load_settings

    st = state_of(ctx)
    settings = load_settings(st.config)
    return settings.with_overrides(db_path=st.db_path)


def run_settings_of(ctx: typer.Context, **given):
    """The settings with the options the user gave (None: not given, the setting stands),
    so ``claimscope.toml``'s run defaults reach check / verify unless an option overrides them."""

    return settings_of(ctx).with_overrides(**given)


def database(ctx: typer.Context):
    from store import open_db

    return open_db(settings_of(ctx).db_path)


def workbench_of(ctx: typer.Context, **overrides):
    """The stages the settings describe, built by core.workbench — the one composition root,
    the same the TUI builds its runs from — once per invocation, so every model loads once
    and with the settings' device. ``overrides`` (None: keep the setting) give a workbench
    on changed settings that shares the loaded models."""
    from core.workbench import Workbench

    st = state_of(ctx)
    if st.workbench is None:
        st.workbench = Workbench(settings_of(ctx))
    if any(v is not None for v in overrides.values()):
        return st.workbench.with_settings(st.workbench.settings.with_overrides(**overrides))
    return st.workbench


def verifier_of(ctx: typer.Context, spec: str, grounding: bool = True, verdict_rule: str | None = None):
    """The verifier with the settings' thresholds and the grounding guard (evidence must
    mention the claim's subject): an NLI cross-encoder, or an LLM judge for ``llm`` / a
    ``.gguf`` path (models/llm_judge.py). ``verdict_rule`` (checked) overrides the settings'."""
    return workbench_of(ctx).verifier(run_options_of(ctx, spec, grounding, verdict_rule))


def run_options_of(ctx: typer.Context, spec: str, grounding: bool, verdict_rule: str | None = None, **more):
    """The settings' run options with these choices: ``verdict_rule`` None keeps the settings'
    rule, another value is checked like the file's."""
    from core.workbench import RunOptions

    settings = workbench_of(ctx).settings
    rule = settings.with_overrides(verdict_rule=verdict_rule).verdict_rule
    return RunOptions.from_settings(settings).with_(verifier=spec.strip(), grounding=grounding, verdict_rule=rule, **more)


FROM_SETTINGS = " [default: the settings' (claimscope.toml)]"
VERDICT_RULE_HELP = ("How judgements become a verdict: rules (thresholds) or learned (a logistic regression "
                     "over the judgements and where they come from).")
GROUNDING_HELP = "Only evidence that names the claim's subject (in its text or document title) decides."
MODE_HELP = ("Retrieval: bm25, dense, hybrid (fitted fusion, the subject's own document first), hybrid-sentence "
             "(the default: hybrid + each passage's best sentence, from sentence vectors stored at indexing), "
             "rrf (plain reciprocal-rank fusion), or with an LLM query expansion: hyde or query2doc.")
PROMPT_HELP = "HyDE prompt preset: encyclopedic, scientific or factcheck (default: the settings'; Query2doc has its own)."
EXPAND_LLM_HELP = "GGUF model writing hyde / query2doc expansions: embedded (SmolLM2) or a .gguf path."


def expander_of(ctx: typer.Context, mode: str, prompt: str | None, llm: str | None):
    """The query expander of an expansion mode (None for the others), built like the TUI's."""
    return workbench_of(ctx, hyde_prompt=prompt, llm=llm).expander(mode)


def raise_input(message: str):
    """Bad command-line input: reported like any other input error (exit code 2)."""
    from core.errors import InputError

    raise InputError(message)


def searcher_of(ctx: typer.Context, db, sources: list[str] | None, mode: str | None = None):
    """A Searcher over ``db``; built-in sources that are asked for (or, on an empty database,
    the default wiki-vital) are indexed on first use, with a progress bar, then reused; sources
    without this embedder's vectors (or sentence vectors) are embedded first when the retrieval
    ``mode`` needs them."""
    from tui.console import err, progress_bar

    wb = workbench_of(ctx)
    missing = wb.missing_builtins(db, tuple(sources or ()))
    unembedded = [n for n in wb.unembedded_sources(db, tuple(sources or ()), mode) if n not in missing]
    if missing:
        err.print(f"first use of the built-in source {', '.join(missing)}: indexing it once (two or three minutes on 2 cores)")
    if unembedded:
        err.print(f"{', '.join(unembedded)}: passages without vectors from {wb.embedder().ref.model_id} "
                  "(indexed with another embedding model); embedding them once")
    unsentenced = [n for n in wb.sources_without_sentence_vectors(db, tuple(sources or ()), mode) if n not in missing]
    if unsentenced:
        err.print(f"{', '.join(unsentenced)}: sentences without stored vectors from {wb.embedder().ref.model_id} "
                  f"(indexed before they were stored); embedding each sentence once")
    if missing or unembedded or unsentenced:
        with progress_bar() as update:
            wb.ensure_sources(db, tuple(sources or ()), progress=update, mode=mode)
    return wb.searcher(db)


STDIN = "-"  # --file - / --jsonl - read standard input


def stdin_text() -> str:
    """Standard input, all of it, as a file's text is read (UTF-8, universal newlines; binary refused)."""
    from core.ingest.sources import decode_text

    return decode_text(sys.stdin.buffer.read(), "standard input")


# A batch line's answer and its own documents, by the first of these names it has: ours, then a RAGAS
# evaluation log's (``response`` / ``retrieved_contexts`` in RAGAS ≥ 0.2, ``answer`` / ``contexts``
# before), so an evaluation pipeline's log is checked as it is written.
TEXT_FIELDS = ("text", "response", "answer")
DOCUMENT_FIELDS = ("documents", "retrieved_contexts", "contexts")


def first_field(obj: dict, names: tuple[str, ...]) -> str:
    """The first of ``names`` that ``obj`` has, else the first name (for the error message)."""
    return next((n for n in names if n in obj), names[0])


def check_inputs(text, file, jsonl, documents: list | None = None) -> list[tuple[str | None, str]]:
    """(external id, text) per run to create; [] when resuming. Every text is checked here
    (empty, too long, not text) so a bad batch line stops the batch before anything runs.
    ``--file -`` and ``--jsonl -`` read standard input, so an answer or a batch can be piped in;
    so does the text ``-``.
    ``documents``: when a list is given, each batch line's own given documents (its field
    ``documents``, core/pipeline/given.py :func:`line_documents`), or None, are appended to it in
    the order of the items (read here because standard input is read once)."""
    from core.errors import InputError
    from core.ingest.sources import empty_document_reason, json_lines, jsonl_records, read_answer_file, record_field
    from core.settings import check_text_size

    if text is not None and text.strip() == STDIN:  # `… | claimscope check -`, as most tools read it
        text, file = None, Path(STDIN)
    if text is not None:
        if not text.strip():
            raise InputError("the text is empty")
        check_text_size(text, "the text")
        return [(None, text)]
    if file is not None and str(file) == STDIN:
        # a pipe: `llm-answer | claimscope check --file -`
        body = stdin_text()
        if not body.strip():
            raise InputError("is empty", "standard input")
        check_text_size(body, "the text", "standard input")
        return [(None, body)]
    if file is not None:
        file = file.expanduser()
        if not file.exists():
            raise InputError("no such file", file)
        if file.is_dir():
            raise InputError("is a directory, expected a text file", file)
        body = read_answer_file(file)
        if not body.strip():
            raise InputError(empty_document_reason(file, raw_empty=True), file)
        check_text_size(body, "the text", file)
        return [(file.name, body)]
    if jsonl is not None:
        if str(jsonl) == STDIN:
            where: str | Path = "standard input"
            records = json_lines(stdin_text().split("\n"), where)
        else:
            where = jsonl = jsonl.expanduser()
            if not jsonl.exists():
                raise InputError("no such file", jsonl)
            records = jsonl_records(jsonl)
        items = []
        for lineno, obj in records:
            field = first_field(obj, TEXT_FIELDS)
            body = obj.get(field)
            if not isinstance(body, str) or not body.strip():
                raise InputError(f"needs a non-empty string field {field!r}" + (
                    "" if field in obj else f" (or {', '.join(repr(f) for f in TEXT_FIELDS[1:])}, a RAGAS log's)"),
                    where, lineno)
            check_text_size(body, f"field {field!r}", where, lineno)
            ext_id = record_field(obj, "id", (str, int), where, lineno, required=False)
            items.append((str(lineno if ext_id is None else ext_id), body))
            if documents is not None:
                from core.pipeline.given import line_documents

                field = first_field(obj, DOCUMENT_FIELDS)
                documents.append(None if obj.get(field) is None else line_documents(obj[field], where, lineno, field))
        if not items:
            raise InputError("contains no inputs", where)
        return items
    return []


def write_report(report: dict, json_out: Path | None) -> None:
    from tui.console import err

    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
        err.print(f"report written to {json_out}")
