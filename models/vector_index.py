"""FAISS vector index over passage embeddings, saved beside the database.

Exact inner-product search (``IndexFlatIP``) up to ``EXACT_LIMIT`` vectors; above that (kind
``auto``) an inverted-file index (IVF, :func:`build_ivf`): k-means cells trained on a sample,
vectors added in batches and each batch's inverted lists written to disk, then merged into one
``.ivfdata`` file that is memory-mapped when the index is opened — building holds one batch in
memory, searching only the pages of the cells it probes (measured at a million passages in
benchmarks/scale.py). An HNSW graph (M = 32, as ICAT uses HNSW32 for large corpora,
seed 004 §5.4) is kept as an explicit kind: its build time grows past an hour at a million
vectors on two cores, and the graph must live in memory. The index is a cache: it is rebuilt
from the vectors stored in SQLite whenever they change, and written atomically (temp file +
rename) so a crash never leaves a half-written index behind.
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
IVF_TRAIN_PER_CELL = 40  # k-means sample: 40 vectors per cell (faiss warns below 39)
IVF_NPROBE_FRACTION = 1 / 8  # cells probed per query (recall / latency curve: benchmarks/results/scale.json)
IVF_MIN_NPROBE = 16


def ivf_cells(n: int) -> int:
    """Number of IVF cells: about √n (the faiss guideline for up to a few million vectors)."""
    return max(16, int(np.sqrt(n) + 0.5))


def ivf_nprobe(nlist: int) -> int:
    return min(nlist, max(IVF_MIN_NPROBE, int(nlist * IVF_NPROBE_FRACTION + 0.5)))


class VectorIndex:
    def __init__(self, index, kind: str) -> None:  # index: faiss.Index
        self._index = index
        self.kind = kind

    @classmethod
    def build(cls, ids: np.ndarray, vectors: np.ndarray, kind: str = "auto") -> VectorIndex:
        import faiss

        dim = vectors.shape[1]
        if kind == "auto":  # the store builds large sources with build_ivf (core/ingest/index.py)
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

        if kind == "ivf":  # OnDiskInvertedLists: the lists file (.ivfdata beside it) is memory-mapped
            index = faiss.read_index(str(path))
            ivf = faiss.extract_index_ivf(index)
            ivf.nprobe = ivf_nprobe(ivf.nlist)
            return cls(index, kind)
        index = faiss.read_index(str(path))
        if kind == "hnsw":
            faiss.downcast_index(index.index).hnsw.efSearch = HNSW_EF_SEARCH
        return cls(index, kind)


def build_ivf(path: Path, batches, n: int, dim: int, sample: np.ndarray, nlist: int | None = None,
              progress=None) -> VectorIndex:
    """An IVF-Flat inner-product index of ``n`` vectors, built in bounded memory and saved at
    ``path`` with its inverted lists in ``path.ivfdata`` (memory-mapped by :meth:`VectorIndex.load`).

    ``batches`` yields (ids, vectors) — read from SQLite batch by batch by the caller; ``sample``
    (≈ ``IVF_TRAIN_PER_CELL`` × cells vectors) trains the coarse quantiser. Each batch is added
    to a copy of the trained empty index and written as a shard; the shards' lists are then
    merged into the one on-disk file (faiss ``OnDiskInvertedLists``) and the shards removed. The
    finished files replace the old ones by rename, so a crash leaves the old index or none."""
    import faiss

    nlist = nlist or ivf_cells(n)
    quantizer = faiss.IndexFlatIP(dim)
    trained = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    trained.train(np.ascontiguousarray(sample, dtype=np.float32))
    work = Path(tempfile.mkdtemp(dir=path.parent, prefix=path.name + ".build."))
    try:
        shards = []
        for i, (ids, vecs) in enumerate(batches):
            shard = faiss.clone_index(trained)
            shard.add_with_ids(np.ascontiguousarray(vecs, dtype=np.float32), np.asarray(ids, dtype=np.int64))
            shards.append(str(work / f"shard{i}.index"))
            faiss.write_index(shard, shards[-1])
            del shard
            if progress:
                progress(len(ids))
        # The index file names its lists file by path, so the lists get their final, unique
        # name now (``<index>.<token>.ivfdata``); the index file is renamed into place last, and
        # the lists of the index it replaced are removed after that.
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".ivfdata")
        os.close(fd)
        lists = Path(name)
        merged = faiss.clone_index(trained)
        _merge_ondisk(merged, shards, str(lists))
        faiss.write_index(merged, str(work / "index"))
        for shard in shards:
            os.unlink(shard)
        os.replace(work / "index", path)
        for old in path.parent.glob(path.name + ".*.ivfdata"):
            if old != lists:
                old.unlink(missing_ok=True)
    finally:
        for f in work.glob("*"):
            f.unlink()
        work.rmdir()
    return VectorIndex.load(path, "ivf")


def _merge_ondisk(index, shard_files: list[str], lists_file: str) -> None:
    """faiss.contrib.ondisk.merge_ondisk, keeping the memory-mapped shard indexes alive until
    the merge is done (faiss 1.15 unmaps a shard's lists when its index is collected, and the
    contrib version lets that happen mid-merge: a segmentation fault)."""
    import faiss

    shards = [faiss.read_index(f, faiss.IO_FLAG_MMAP) for f in shard_files]
    lists = faiss.InvertedListsPtrVector()
    for shard in shards:
        lists.push_back(faiss.extract_index_ivf(shard).invlists)
    ivf = faiss.extract_index_ivf(index)
    ondisk = faiss.OnDiskInvertedLists(ivf.nlist, ivf.code_size, lists_file)
    ntotal = ondisk.merge_from_multiple(lists.data(), lists.size(), False)
    index.ntotal = ivf.ntotal = ntotal
    ivf.replace_invlists(ondisk, True)
    ondisk.this.disown()
    del lists, shards


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
