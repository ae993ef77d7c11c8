"""wiki-vital's first index (``source add wiki-vital`` on an empty database) split into its
stages, in one process, with wall and CPU seconds (issue 18, "Indexing"): model loading, reading
the package's data, sentence splitting, chunking, embedding, the SQLite passages + FTS5 insert,
the FAISS index. The workbench's own models are used (the indexing splitter and the embedder's
default runtime), so this times what ``claimscope source add wiki-vital`` runs.

    PYTHONPATH=. python benchmarks/index_stages.py /tmp/empty.db [--out benchmarks/results/index_stages.json]

On a shared machine the CPU seconds (user + sys) are the figure to compare; the load average at
the start and the end is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", type=Path, help="a database path that does not exist yet")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.db.exists():
        raise SystemExit(f"{args.db} exists: the figure is the first index, on an empty database")
    t_start, load0 = time.perf_counter(), os.getloadavg()
    import core.ingest.index as ix
    import store.sources as sq
    from core.ingest.sources import WIKI_VITAL, load_builtin
    from core.settings import Settings
    from core.workbench import Workbench
    from store import open_db

    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def timed(label, f):
        def g(*a, **k):
            t, c = time.perf_counter(), time.process_time()
            try:
                return f(*a, **k)
            finally:
                wall[label] = wall.get(label, 0.0) + time.perf_counter() - t
                cpu[label] = cpu.get(label, 0.0) + time.process_time() - c
        return g

    wb = Workbench(Settings())
    emb = timed("load models", lambda: (wb.embedder(), wb.index_splitter()))()
    embedder, splitter = emb
    docs = timed("read wiki-vital", load_builtin)(WIKI_VITAL.name)
    splitter.split = timed("sentences", splitter.split)
    ix.chunk = timed("chunking", ix.chunk)
    ix.embed_with_cache = timed("embedding", ix.embed_with_cache)
    sq.insert_document = timed("SQLite passages + FTS5", sq.insert_document)
    ix.vector_index = timed("FAISS", ix.vector_index)
    db = open_db(args.db)
    rep = timed("add_source (all of the above but loading)", ix.add_source)(
        db, WIKI_VITAL.name, docs, fmt="builtin", path=None, embedder=embedder, splitter=splitter,
        attribution=WIKI_VITAL.attribution, licence=WIKI_VITAL.licence,
    )
    times = os.times()
    out = {
        "stages_wall_s": {k: round(v, 2) for k, v in wall.items()},
        "stages_cpu_s": {k: round(v, 2) for k, v in cpu.items()},
        "process_wall_s": round(time.perf_counter() - t_start, 2),
        "process_cpu_s": round(times.user + times.system, 2),
        "documents": len(docs), "passages": rep.passages_added,
        "splitter": getattr(splitter, "pipe", "parser"), "embedder_runtime": getattr(embedder, "runtime", "torch"),
        "load_average_start_end": [load0, os.getloadavg()],
    }
    print(json.dumps(out, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
