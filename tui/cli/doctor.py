"""``claimscope doctor`` (what is installed and found; core/doctor.py) and ``--version``."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from tui.cli.options import settings_of
from tui.cli.root import app, state_of


@app.command()
def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What is installed and found: Python, claimscope, the models with their sha256 (embedder,
    verifier, spaCy, GGUF LLM), the database (path, schema version, sources, passages), the GPU,
    the llama.cpp build and onnxruntime. Paste it into a bug report. Reads only; exits 5 when a
    model is missing, 4 when the database is unusable, 1 for another problem, with one line
    per problem on stderr."""
    from core.doctor import doctor as run_doctor
    from core.doctor import exit_code

    checks = run_doctor(settings_of(ctx), state_of(ctx).config)
    if as_json:
        sys.stdout.write(json.dumps([c.as_dict() for c in checks], indent=1) + "\n")
    else:
        width = max(len(c.name) for c in checks)
        section = None
        for c in checks:
            if c.section != section:
                section = c.section
                print(f"{section}:")
            print(f"  {c.name.ljust(width)}  {c.value}" + ("  [PROBLEM]" if c.problem else ""))
    for c in checks:
        if c.problem:
            print(f"claimscope doctor: problem: {c.problem}", file=sys.stderr)
    code = exit_code(checks)
    if code:
        raise typer.Exit(code)
