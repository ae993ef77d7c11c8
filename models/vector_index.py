"""FAISS vector index over passage embeddings, saved beside the database.

Exact inner-product search (``IndexFlatIP``) up to ``EXACT_LIMIT`` vectors; above that an
HNSW graph (M = 32, as ICAT uses HNSW32 for large corpora, seed 004 §5.4), which trades a
little recall for sub-linear query time. The index is a cache: it is rebuilt from the
vectors stored in SQLite whenever they change, and written atomically (temp file + rename)
so a crash never leaves a half-written index behind.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

EXACT_LIMIT = 100_000
HNSW_M = 32
HNSW_EF_SEARCH = 128
HNSW_EF_CONSTRUCTION = 200


class VectorIndex:
    def __init__(self, index, kind: str) -> None:  # index: faiss.Index
        self._index = index
        self.kind = kind

    @classmethod
    def build(cls, ids: np.ndarray, vectors: np.ndarray, kind: str = "auto") -> VectorIndex:
        import faiss

        dim = vectors.shape[1]
        if kind == "auto":
            kind = "flat" if len(ids) <= EXACT_LIMIT else "hnsw"
        if kind == "flat":
            base = faiss.IndexFlatIP(dim)
        elif kind == "hnsw":
            base = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            base.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            base.hnsw.efSearch = HNSW_EF_SEARCH
        else:
            raise ValueError(f"unknown index kind {kind!r} (flat, hnsw or auto)")
        index = faiss.IndexIDMap2(base)
        index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids.astype(np.int64))
        return cls(index, kind)

    @property
    def size(self) -> int:
        return int(self._index.ntotal)

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        if self.size == 0:
            return []
        q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        scores, ids = self._index.search(q, min(k, self.size))
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i != -1]

    def save(self, path: Path) -> None:
        import faiss

        _atomic_write(path, lambda tmp: faiss.write_index(self._index, tmp))

    @classmethod
    def load(cls, path: Path, kind: str) -> VectorIndex:
        import faiss

        index = faiss.read_index(str(path))
        if kind == "hnsw":
            faiss.downcast_index(index.index).hnsw.efSearch = HNSW_EF_SEARCH
        return cls(index, kind)


def atomic_write_text(path: Path, text: str) -> None:
    """Write a small text file (the index's metadata) the same way as the index itself."""
    _atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def _atomic_write(path: Path, write) -> None:
    """``write(tmp)`` into a uniquely named temp file beside ``path``, flushed to disk, then
    renamed over it. Readers see the old file or the new one, never a half-written one, even if
    the process is killed mid-write; two processes saving at once each use their own temp
    file (a fixed ``.tmp`` name would let one rename the other's file away)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
