"""Loaders for the public evaluation formats (as in ``../shared/data``), with line-numbered errors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.errors import InputError
from core.sources import _field, _jsonl_records


@dataclass(frozen=True)
class SciFactClaim:
    id: int
    claim: str
    # doc id → list of {"sentences": [...], "label": "SUPPORT" | "CONTRADICT"}
    evidence: dict[str, list[dict]]
    cited_doc_ids: tuple[str, ...]

    @property
    def gold_docs(self) -> set[str]:
        return set(self.evidence)


def load_scifact_claims(path: str | Path) -> list[SciFactClaim]:
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError("no such file", path)
    if path.is_dir():
        raise InputError("is a directory, expected a claims JSONL file", path)
    claims = []
    for lineno, obj in _jsonl_records(path):
        cid = _field(obj, "id", int, path, lineno)
        text = _field(obj, "claim", str, path, lineno)
        evidence = _field(obj, "evidence", dict, path, lineno, required=False) or {}
        cited = _field(obj, "cited_doc_ids", list, path, lineno, required=False) or []
        claims.append(SciFactClaim(cid, text, {str(k): v for k, v in evidence.items()}, tuple(str(c) for c in cited)))
    if not claims:
        raise InputError("contains no claims", path)
    return claims
