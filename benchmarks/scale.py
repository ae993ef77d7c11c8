"""Past one machine: search at 100k / 300k / 1M passages, and `check --jsonl` on Ray.

Writes ``benchmarks/results/scale.json``:

- ``search["<passages>"]["bm25" | "dense" | "hybrid"]`` → ``p50_ms``, ``p95_ms``, ``recall_at_10``
  (dense and hybrid against exact search: flat inner product over every vector, fused with the
  same BM25 ranking; BM25 is SQLite FTS5's exact ranking, so 1.0), plus per size the index kind,
  build times, disk sizes and the resident memory of a fresh process that opens the store and the
  index and runs every query (``rss_mb`` after, ``peak_rss_mb``).
- ``batch`` → ``check --jsonl`` on N answers: single process, Ray local with 2 workers, and a
  cluster simulated on this machine (``ray start --head --num-cpus 1`` + ``ray start --address
  127.0.0.1:PORT --num-cpus 1``): wall seconds, answers per minute, speed-up over single.

The corpus (benchmarks/scale_corpus.py) is real text from ../shared/data, read in place; the
store, indexes and logs go under ``--work`` (default /tmp/claimscope-scale), never the repository.
Vectors: the real embeddings ``scale_corpus.py`` wrote, the rest derived from them with noise
(said so in the JSON). Load average is recorded beside every timing: the machine is shared.

    PYTHONPATH=. python benchmarks/scale_corpus.py /tmp/claimscope-scale 840   # real vectors
    PYTHONPATH=. python benchmarks/scale.py search --work /tmp/claimscope-scale
    PYTHONPATH=. python benchmarks/scale.py bm25s --work /tmp/claimscope-scale     # after search
    PYTHONPATH=. python benchmarks/scale.py batch --work /tmp/claimscope-scale --answers 12
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale_corpus import DATA, base_passages, derived_vectors, passages  # noqa: E402

from models.bm25_index import TANTIVY_MIN_PASSAGES  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "scale.json"
SIZES = (100_000, 300_000, 1_000_000)
DEPTH = 100  # what the searcher fuses in hybrid mode (core/retrieve/searcher.py)


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _save(key: str, value) -> None:
    out = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    out[key] = value
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")


def queries() -> list[str]:
    """200 real claims: 100 SciFact (train), 100 Climate-FEVER."""
    sci = [json.loads(x)["claim"] for x in (DATA / "scifact" / "claims_train.jsonl").read_text().splitlines()[:100]]
    cf = [json.loads(x)["claim"] for x in (DATA / "climate_fever" / "dev.jsonl").read_text().splitlines()[:100]]
    return sci + cf


# ---------------------------------------------------------------- search


def grow_store(db_path: Path, texts: list[str], start: int, stop: int) -> float:
    """Passages ``start:stop`` into the store (the real schema and FTS5 triggers), one
    document per passage, in transactions of 20,000; returns seconds."""
    from store import open_db

    db = open_db(db_path)
    t0 = time.perf_counter()
    if start == 0:
        db.execute("INSERT INTO sources(name, format, chunk_words, chunk_overlap) VALUES ('scale', 'jsonl', 128, 32)")
        db.conn.commit()
    sid = db.execute("SELECT id FROM sources WHERE name = 'scale'").fetchone()[0]
    for lo in range(start, stop, 20_000):
        hi = min(stop, lo + 20_000)
        db.conn.execute("BEGIN IMMEDIATE")
        db.conn.executemany(
            "INSERT INTO documents(id, source_id, ext_id, title, text, content_hash) VALUES (?, ?, ?, '', '', '')",
            [(i + 1, sid, str(i)) for i in range(lo, hi)])
        db.conn.executemany(
            """INSERT INTO passages(id, document_id, source_id, idx, title, text, char_start, char_end,
                 first_sentence, sentences) VALUES (?, ?, ?, 0, '', ?, 0, ?, 0, ?)""",
            [(i + 1, i + 1, sid, texts[i], len(texts[i]), json.dumps([[0, len(texts[i])]])) for i in range(lo, hi)])
        db.conn.execute("COMMIT")
    db.execute("UPDATE sources SET n_passages = ?, n_documents = ? WHERE id = ?", [stop, stop, sid])
    db.conn.commit()
    db.conn.close()
    return time.perf_counter() - t0


def vectors_for(n: int, real: np.ndarray, origin: np.ndarray):
    """(ids, vectors) batches for the first ``n`` passages (ids = passage ids, 1-based)."""
    start = 0
    for v in derived_vectors(real, origin[:n], batch=50_000):
        yield np.arange(start + 1, start + 1 + len(v), dtype=np.int64), v
        start += len(v)


def exact_topk(qv: np.ndarray, n: int, real: np.ndarray, origin: np.ndarray, k: int = DEPTH) -> np.ndarray:
    """Exact inner-product top ``k`` ids per query, streamed over the vectors (bounded memory)."""
    best_s = np.full((len(qv), 0), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(qv), 0), dtype=np.int64)
    for ids, v in vectors_for(n, real, origin):
        s = qv @ v.T
        s_all = np.concatenate([best_s, s], axis=1)
        i_all = np.concatenate([best_i, np.broadcast_to(ids, s.shape)], axis=1)
        top = np.argsort(-s_all, axis=1)[:, :k]
        best_s, best_i = np.take_along_axis(s_all, top, 1), np.take_along_axis(i_all, top, 1)
    return best_i


def build_index(folder: Path, n: int, real: np.ndarray, origin: np.ndarray) -> tuple[str, float]:
    """The index the store would choose for ``n`` passages (models/vector_index.py)."""
    from models.vector_index import EXACT_LIMIT, IVF_TRAIN_PER_CELL, VectorIndex, build_ivf, ivf_cells

    t0 = time.perf_counter()
    if n <= EXACT_LIMIT:
        ids, vecs = zip(*vectors_for(n, real, origin), strict=True)
        VectorIndex.build(np.concatenate(ids), np.concatenate(vecs), "flat").save(folder / f"{n}.flat.faiss")
        return "flat", time.perf_counter() - t0
    cells = ivf_cells(n)
    step = max(1, n // (IVF_TRAIN_PER_CELL * cells))
    sample = np.concatenate([v[::step].copy() for _i, v in vectors_for(n, real, origin)])
    build_ivf(folder / f"{n}.ivf.faiss", vectors_for(n, real, origin), n, real.shape[1], sample, cells)
    return "ivf", time.perf_counter() - t0


def build_tantivy(db_path: Path) -> tuple[float, float]:
    """The Tantivy BM25 index of the store's source, as the store builds it (core/ingest/index.py,
    from the stored passages in batches): seconds and disk MB."""
    from core.ingest.index import bm25_dir, bm25_index
    from store import open_db
    from store import sources as sq

    db = open_db(db_path)
    info = sq.get_source(db, "scale")
    shutil.rmtree(bm25_dir(db), ignore_errors=True)
    t0 = time.perf_counter()
    assert bm25_index(db, info, 0) is not None
    seconds = time.perf_counter() - t0
    mb = sum(p.stat().st_size for p in bm25_dir(db).rglob("*") if p.is_file()) / 2**20
    db.conn.close()
    return seconds, round(mb, 1)


def measure(db_path: Path, index_path: Path, kind: str, qfile: Path, truth_file: Path, engine: str = "fts5") -> dict:
    """In a fresh process: open the store and the index, run every query in every mode, with
    BM25 by ``engine``: ``fts5`` (SQLite; its top 100 per query saved beside ``truth_file`` as
    the reference ranking) or ``tantivy`` (models/bm25_index.py, built beforehand; recall@10 of
    BM25 = overlap of its top 10 with FTS5's, hybrid against RRF of FTS5's BM25 and exact dense)."""
    from core.retrieve.searcher import BM25Retriever, reciprocal_rank_fusion
    from models.vector_index import VectorIndex
    from store import open_db
    from store import sources as sq

    data = np.load(qfile, allow_pickle=False)
    qtexts = json.loads(Path(str(qfile) + ".json").read_text())
    truth = np.load(truth_file)
    fts_file = truth_file.with_name("fts_rank.json")
    db = open_db(db_path)
    bm25 = BM25Retriever(db, sq.list_sources(db), tantivy_min=0 if engine == "tantivy" else 10**12)
    assert set(bm25.engines.values()) == {engine}, bm25.engines
    fts_rank = json.loads(fts_file.read_text()) if engine == "tantivy" else []
    index = VectorIndex.load(index_path, kind)
    times: dict[str, list[float]] = {"bm25": [], "dense": [], "hybrid": []}
    recall: dict[str, list[float]] = {"bm25": [], "dense": [], "hybrid": []}
    for qi, (q, v, exact) in enumerate(zip(qtexts, data, truth, strict=True)):
        t0 = time.perf_counter()
        b = bm25.retrieve(q, DEPTH)
        sq.get_passages(db, [i for i, _ in b[:10]])
        t1 = time.perf_counter()
        d = index.search(v, DEPTH)
        sq.get_passages(db, [i for i, _ in d[:10]])
        t2 = time.perf_counter()
        b2 = bm25.retrieve(q, DEPTH)
        d2 = index.search(v, DEPTH)
        h = reciprocal_rank_fusion({"bm25": b2, "dense": d2})[:10]
        sq.get_passages(db, [i for i, _ in h])
        t3 = time.perf_counter()
        times["bm25"].append(t1 - t0)
        times["dense"].append(t2 - t1)
        times["hybrid"].append(t3 - t2)
        ex_dense = [(int(i), 0.0) for i in exact]
        if engine == "fts5":
            fts_rank.append([i for i, _ in b])
        ref = [(i, 0.0) for i in fts_rank[qi]]
        ex_h = {i for i, _ in reciprocal_rank_fusion({"bm25": ref, "dense": ex_dense})[:10]}
        top_ref = set(fts_rank[qi][:10])  # FTS5 ranks every match exactly: 1.0 for itself
        recall["bm25"].append(len({i for i, _ in b[:10]} & top_ref) / len(top_ref) if top_ref else 1.0)
        recall["dense"].append(len({i for i, _ in d[:10]} & {int(i) for i in exact[:10]}) / 10)
        recall["hybrid"].append(len({i for i, _ in h} & ex_h) / 10)
    curve = {}
    if kind == "ivf":  # recall / latency of the dense search against the cells probed
        import faiss

        ivf = faiss.extract_index_ivf(index._index)
        default = ivf.nprobe
        for nprobe in sorted({max(1, ivf.nlist // d) for d in (32, 16, 8, 4)} | {default}):
            ivf.nprobe = nprobe
            lat, rec = [], []
            for v, exact in zip(data, truth, strict=True):
                t0 = time.perf_counter()
                d = index.search(v, 10)
                lat.append(time.perf_counter() - t0)
                rec.append(len({i for i, _ in d} & {int(i) for i in exact[:10]}) / 10)
            curve[str(nprobe)] = {"p50_ms": round(float(np.percentile(lat, 50)) * 1000, 2),
                                  "p95_ms": round(float(np.percentile(lat, 95)) * 1000, 2),
                                  "recall_at_10": round(float(np.mean(rec)), 4)}
        ivf.nprobe = default
        curve = {"nlist": int(ivf.nlist), "default_nprobe": int(default), "by_nprobe": curve}
    status = dict(x.split(":", 1) for x in Path("/proc/self/status").read_text().splitlines() if ":" in x)
    rss = int(status["VmRSS"].split()[0]) / 1024
    peak = int(status["VmHWM"].split()[0]) / 1024  # this process only (ru_maxrss survives exec)
    out = {m: {"p50_ms": round(float(np.percentile(times[m], 50)) * 1000, 2),
               "p95_ms": round(float(np.percentile(times[m], 95)) * 1000, 2),
               "recall_at_10": round(float(np.mean(recall[m])), 4)} for m in times}
    if engine == "fts5":
        fts_file.write_text(json.dumps(fts_rank))
    out["rss_mb"] = round(rss, 1)
    out["peak_rss_mb"] = round(peak, 1)
    if curve:
        out["ivf"] = curve
    return out


def search_main(work: Path, sizes: list[int]) -> None:
    work.mkdir(parents=True, exist_ok=True)
    real = np.load(work / "vectors.npy")
    base = base_passages()
    texts, origin = passages(max(sizes), base)
    from models.embed import load_embedder

    qs = queries()
    qv = load_embedder(None).encode(qs)
    np.save(work / "queries.npy", qv)
    (work / "queries.npy.json").write_text(json.dumps(qs))
    db_path = work / "scale.db"
    for p in work.glob("scale.db*"):
        p.unlink() if p.is_file() else shutil.rmtree(p)
    results: dict = {}
    done = 0
    for n in sorted(sizes):
        fts_s = grow_store(db_path, texts, done, n)
        done = n
        kind, index_s = build_index(work, n, real, origin)
        truth = exact_topk(qv, n, real, origin)
        np.save(work / "truth.npy", truth)
        index_path = work / f"{n}.{kind}.faiss"
        tantivy_s, tantivy_mb = build_tantivy(db_path)
        runs = {}
        for engine in ("fts5", "tantivy"):  # FTS5 first: its ranking is the reference
            out = subprocess.run([sys.executable, __file__, "measure", str(db_path), str(index_path), kind,
                                  str(work / "queries.npy"), str(work / "truth.npy"), engine],
                                 capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            if out.returncode != 0:
                raise SystemExit(out.stderr)
            runs[engine] = json.loads(out.stdout.strip().splitlines()[-1])
        disk = {"sqlite_mb": round(sum(p.stat().st_size for p in work.glob("scale.db*") if p.is_file()) / 2**20, 1),
                "index_mb": round(sum(p.stat().st_size for p in work.glob(f"{n}.{kind}.faiss*")) / 2**20, 1)}
        chosen = "tantivy" if n > TANTIVY_MIN_PASSAGES else "fts5"
        m = runs[chosen]
        results[str(n)] = {**{k: m[k] for k in ("bm25", "dense", "hybrid")}, "bm25_engine": chosen, "index": kind,
                           "rss_mb": m["rss_mb"], "peak_rss_mb": m["peak_rss_mb"], "ivf": m.get("ivf"),
                           "fts_insert_s": round(fts_s, 1), "index_build_s": round(index_s, 1), **disk,
                           "engines": {e: {"bm25": r["bm25"], "hybrid": r["hybrid"], "rss_mb": r["rss_mb"],
                                           "peak_rss_mb": r["peak_rss_mb"]} for e, r in runs.items()},
                           "load_avg": load()}
        results[str(n)]["engines"]["tantivy"].update(build_s=round(tantivy_s, 1), disk_mb=tantivy_mb)
        _save("search", {**(json.loads(RESULTS.read_text()).get("search", {}) if RESULTS.exists() else {}),
                         **results})  # each size as soon as it is measured
        print(json.dumps({n: results[str(n)]}), file=sys.stderr, flush=True)
        for p in work.glob(f"{n}.{kind}.faiss*"):
            if n != max(sizes):
                p.unlink()
    meta = json.loads((work / "vectors.json").read_text())
    _save("search", {**(json.loads(RESULTS.read_text()).get("search", {}) if RESULTS.exists() else {}), **results})
    _save("search_setup", {
        "passages": "real text from ../shared/data (benchmarks/scale_corpus.py): "
                    f"{len(base)} distinct texts; past those, two real texts joined at random",
        "vectors": f"{meta['embedded']} passages embedded with all-MiniLM-L6-v2 in {meta['seconds']:.0f} s; every "
                   "other vector = a real one + N(0, 0.35²/384) noise, renormalised",
        "queries": "200 real claims (100 SciFact train, 100 Climate-FEVER dev), embedded for real",
        "timing": "per query: retrieval + reading the top 10 passages; query embedding not included "
                  "(the same at every size)",
        "recall": "dense: top 10 vs exact inner product over all vectors; hybrid: RRF(k=60) of the same BM25 "
                  "top 100 with the index's vs the exact dense top 100",
        "bm25": "search[n].bm25 / .hybrid: the engine the store chooses at n (bm25_engine: Tantivy above "
                f"{TANTIVY_MIN_PASSAGES} passages, else SQLite FTS5); both engines under search[n].engines, each "
                "measured in its own fresh process (rss_mb). recall_at_10 of BM25 = overlap of the engine's top 10 "
                "with FTS5's (1.0 for FTS5 itself); hybrid recall against RRF of FTS5's BM25 top 100 and the exact "
                "dense top 100. Tantivy build: from the stored passages in batches of 20,000 "
                "(core/ingest/index.py bm25_index)",
        "hnsw": "not built at these sizes: 94 s at 100k already (vector_index_flat_vs_hnsw.json)",
        "cpu": os.cpu_count(),
    })


# ---------------------------------------------------------------- another BM25 engine


def bm25s_main(work: Path, n: int) -> None:
    """bm25s (a sparse-matrix BM25, already the comparison engine of
    benchmarks/bm25_fts5_vs_bm25s.py) over the same ``n`` passages and queries as FTS5: build
    time, latency, memory, and the overlap of its top 10 with FTS5's (different tokenisers:
    FTS5 stems with Porter, bm25s here does not, so the overlap is not 1 by construction)."""
    import bm25s

    from core.retrieve.searcher import BM25Retriever
    from store import open_db
    from store import sources as sq

    texts, _ = passages(n, base_passages())
    qs = queries()
    t0 = time.perf_counter()
    tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    del texts
    index = bm25s.BM25()
    index.index(tokens, show_progress=False)
    del tokens
    build = time.perf_counter() - t0
    lat = []
    got = []
    for q in qs:
        t0 = time.perf_counter()
        ids, _ = index.retrieve(bm25s.tokenize([q], stopwords="en", show_progress=False), k=10, show_progress=False)
        lat.append(time.perf_counter() - t0)
        got.append({int(i) + 1 for i in ids[0]})
    status = dict(x.split(":", 1) for x in Path("/proc/self/status").read_text().splitlines() if ":" in x)
    db = open_db(work / "scale.db")
    fts = BM25Retriever(db, sq.list_sources(db))
    overlap = [len(g & {i for i, _ in fts.retrieve(q, 10)}) / 10 for g, q in zip(got, qs, strict=True)]
    out = {"passages": n, "build_s": round(build, 1),
           "p50_ms": round(float(np.percentile(lat, 50)) * 1000, 2),
           "p95_ms": round(float(np.percentile(lat, 95)) * 1000, 2),
           "top10_overlap_with_fts5": round(float(np.mean(overlap)), 4),
           "rss_mb": round(int(status["VmRSS"].split()[0]) / 1024, 1),
           "peak_rss_mb": round(int(status["VmHWM"].split()[0]) / 1024, 1), "load_avg": load()}
    print(json.dumps(out), file=sys.stderr)
    _save("bm25s", out)


# ---------------------------------------------------------------- batch throughput


def _env(token: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "OMP_WAIT_POLICY": "PASSIVE", "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": token}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def batch_main(work: Path, n_answers: int, single: dict | None = None) -> None:
    """One knowledge source (the SciFact abstracts cited by the answers), N answers built from
    SciFact claims; the same batch three ways, each on a fresh copy of the store."""
    work.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(16)
    env = _env(token)
    cli = [sys.executable, "-m", "tui.cli"]
    claims = [json.loads(x) for x in (DATA / "scifact" / "claims_train.jsonl").read_text().splitlines()]
    claims = [c for c in claims if c.get("cited_doc_ids")][: n_answers * 3]
    cited = {d for c in claims for d in c["cited_doc_ids"]}
    corpus = [x for x in (DATA / "scifact" / "corpus.jsonl").read_text().splitlines() if json.loads(x)["doc_id"] in cited]
    (work / "batch_corpus.jsonl").write_text("\n".join(corpus) + "\n")
    (work / "batch_answers.jsonl").write_text("".join(
        json.dumps({"id": f"q{i}", "text": " ".join(c["claim"] for c in claims[3 * i:3 * i + 3])}) + "\n"
        for i in range(n_answers)))
    base = work / "batch_base.db"
    for p in work.glob("batch_*.db*"):
        if single is None or not p.name.startswith(("batch_single", "batch_base")):
            p.unlink() if p.is_file() else shutil.rmtree(p)
    if single is None or not base.exists():
        subprocess.run(
            [*cli, "--db", str(base), "source", "add", "sci", str(work / "batch_corpus.jsonl")],
            env=env, check=True, capture_output=True)
    check = ["check", "--jsonl", str(work / "batch_answers.jsonl"), "--format", "jsonl", "--source", "sci"]

    def run(name: str, extra: list[str]) -> dict:
        db = work / f"batch_{name}.db"
        shutil.copy(base, db)
        shutil.copytree(base.with_name(base.name + ".faiss"), db.with_name(db.name + ".faiss"))
        before = load()
        t0 = time.perf_counter()
        out = subprocess.run([*cli, "--db", str(db), *check, *extra], env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if out.returncode != 0:
            raise SystemExit(out.stderr[-3000:])
        verdicts = [[c["verdict"] for c in json.loads(x)["claims"]] for x in out.stdout.splitlines()]
        res = {"wall_s": round(wall, 1), "answers_per_min": round(60 * n_answers / wall, 2),
               "load_avg_before": before, "load_avg_after": load(), "verdicts": verdicts}
        print(name, json.dumps(res)[:300], file=sys.stderr, flush=True)
        return res

    out = {"answers": n_answers, "claims_per_answer": 3, "source_passages": len(corpus)}
    if single is None:
        out["single"] = run("single", [])
    else:  # an earlier single-process run of the same batch (its store is kept under --work)
        out["single"] = single
    out["ray_local_2"] = run("ray_local", ["--ray", "--workers", "2"])
    ray_bin = str(Path(sys.executable).with_name("ray"))
    port = _port()
    procs = []
    try:
        for args in (["--head", f"--port={port}", "--node-ip-address", "127.0.0.1", "--include-dashboard", "false"],
                     [f"--address=127.0.0.1:{port}", "--node-ip-address", "127.0.0.1"]):
            procs.append(subprocess.Popen([ray_bin, "start", "--block", "--num-cpus", "1", "--disable-usage-stats",
                                           *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True))
            time.sleep(20)
        out["ray_cluster_2_nodes"] = run("ray_cluster", ["--ray", "--address", f"127.0.0.1:{port}", "--workers", "2"])
    finally:
        for p in reversed(procs):
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(60)
    for k in ("ray_local_2", "ray_cluster_2_nodes"):
        out[k]["speedup_vs_single"] = round(out["single"]["wall_s"] / out[k]["wall_s"], 2)
        out[k]["same_verdicts_as_single"] = out[k]["verdicts"] == out["single"]["verdicts"]
    out["note"] = ("wall time of the whole command, model loading included (the driver loads the embedder and "
                   "verifier for the run manifest; each Ray actor loads every model once; Ray start included)")
    _save("batch", out)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "measure":
        a = sys.argv[2:]
        print(json.dumps(measure(Path(a[0]), Path(a[1]), a[2], Path(a[3]), Path(a[4]), *a[5:6])))
        raise SystemExit(0)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("search", "batch", "bm25s"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/claimscope-scale"))
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--answers", type=int, default=12)
    ap.add_argument("--single-from", type=Path, help="batch: reuse a single-process result (JSON file)")
    args = ap.parse_args()
    if args.what == "search":
        search_main(args.work, args.sizes)
    elif args.what == "bm25s":
        bm25s_main(args.work, max(args.sizes))
    else:
        batch_main(args.work, args.answers, json.loads(args.single_from.read_text()) if args.single_from else None)
