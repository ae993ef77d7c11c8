"""A cache of stage outputs across runs, keyed on (stage, manifest key, input hash).

The manifest key is a hash of everything that determines a stage's output — model ids and
file hashes, thresholds, top-k, sources and their index state — so a hit is exactly the
output the stage would compute again. Outputs are JSON (never pickle). Callers hold the
write transaction for :func:`put`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import sqlite_utils


def key_of(obj: Any) -> str:
    """A stable sha256 of a JSON-serialisable description (sorted keys)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def get(db: sqlite_utils.Database, stage: str, manifest_key: str, input_text: str) -> Any | None:
    row = db.execute(
        "SELECT output FROM stage_cache WHERE stage = ? AND manifest_key = ? AND input_sha256 = ?",
        [stage, manifest_key, hashlib.sha256(input_text.encode()).hexdigest()],
    ).fetchone()
    return json.loads(row[0]) if row else None


def put(db: sqlite_utils.Database, stage: str, manifest_key: str, input_text: str, output: Any) -> None:
    db.execute(
        "INSERT OR REPLACE INTO stage_cache (stage, manifest_key, input_sha256, output) VALUES (?, ?, ?, ?)",
        [stage, manifest_key, hashlib.sha256(input_text.encode()).hexdigest(), json.dumps(output)],
    )


def clear(db: sqlite_utils.Database, stage: str | None = None) -> int:
    cur = db.execute("DELETE FROM stage_cache" + (" WHERE stage = ?" if stage else ""), [stage] if stage else [])
    return cur.rowcount
