"""The real-text corpus of ``benchmarks/scale.py``: passages built from the research data in place.

Why a builder of its own: no single data set here has a million passages. Every text field
of the shared data (wiki-vital summaries, SciFact abstracts, Climate-FEVER, VitaminC, FEVER,
HoVer, WiCE, the NLI sets, …) with at least eight words is a *base* passage (deduplicated);
past those, passage ``i`` joins two base passages chosen by a fixed seed — real sentences,
a made-up order. Vectors: the first base passages that fit the embedding time budget are
embedded for real; every other passage gets the vector of a real one plus Gaussian noise,
renormalised (said so in the results). Nothing is copied into the repository: the texts are
read in place and the vectors written under /tmp.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MIN_WORDS, MAX_CHARS = 8, 1200


def _strings(obj) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def _files(data: Path) -> list[Path]:
    out = sorted(p for p in data.rglob("*") if p.suffix in (".jsonl", ".json") and p.is_file())
    try:
        from core.ingest.sources import wiki_vital_file

        out.insert(0, wiki_vital_file())
    except Exception:  # the wiki-vital package is optional for this benchmark
        pass
    return out


def base_passages(data: Path = DATA) -> list[str]:
    """Every distinct text of eight words or more in the data files, in file order."""
    seen: set[str] = set()
    out: list[str] = []
    for path in _files(data):
        try:
            if path.suffix == ".jsonl":
                objs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            else:
                objs = [json.loads(path.read_text(encoding="utf-8"))]
        except (OSError, ValueError):
            continue
        for obj in objs:
            for s in _strings(obj):
                s = " ".join(s.split())
                if len(s) <= MAX_CHARS and len(s.split()) >= MIN_WORDS and s not in seen:
                    seen.add(s)
                    out.append(s)
    return out


def passages(n: int, base: list[str], seed: int = 0) -> tuple[list[str], np.ndarray]:
    """``n`` passage texts and, per passage, the base passage whose vector it derives from
    (itself for the first ``len(base)``)."""
    rng = np.random.default_rng(seed)
    if n <= len(base):
        return base[:n], np.arange(n)
    extra = n - len(base)
    a = rng.integers(0, len(base), extra)
    b = rng.integers(0, len(base), extra)
    texts = base + [f"{base[i]} {base[j]}" for i, j in zip(a, b, strict=True)]
    return texts, np.concatenate([np.arange(len(base)), a])


def derived_vectors(real: np.ndarray, origin: np.ndarray, sigma: float = 0.35, seed: int = 1,
                    batch: int = 100_000) -> Iterator[np.ndarray]:
    """Vectors for passages whose origin base passage has no real vector: a real vector
    (origin modulo the embedded count) plus N(0, sigma²/dim) noise, L2-normalised; in batches so
    memory stays bounded."""
    rng = np.random.default_rng(seed)
    dim = real.shape[1]
    for start in range(0, len(origin), batch):
        o = origin[start:start + batch]
        idx = np.arange(start, start + len(o))
        v = real[o % len(real)].copy()
        fake = idx >= len(real)
        v[fake] += rng.standard_normal((int(fake.sum()), dim)).astype(np.float32) * (sigma / np.sqrt(dim))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        yield v.astype(np.float32)


def embed_main(out: Path, budget_s: float) -> None:
    """Embed base passages for ``budget_s`` seconds; write vectors (float32 .npy) as it goes."""
    from models.embed import load_embedder

    base = base_passages()
    print(f"{len(base)} base passages", file=sys.stderr, flush=True)
    emb = load_embedder(None)
    t0 = time.perf_counter()
    chunks: list[np.ndarray] = []
    done = 0
    while done < len(base) and time.perf_counter() - t0 < budget_s:
        batch = base[done:done + 2048]
        chunks.append(emb.encode(batch, batch_size=64))
        done += len(batch)
        np.save(out / "vectors.npy", np.concatenate(chunks))
        (out / "vectors.json").write_text(json.dumps({"embedded": done, "base": len(base),
                                                      "seconds": time.perf_counter() - t0}))
        print(f"{done} embedded in {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    embed_main(Path(sys.argv[1]), float(sys.argv[2]))
