"""Ingest stage: a knowledge source → documents → passages → the index the retrievers read.

``sources.py`` loads documents (JSONL, text folders, the built-in sources), ``chunk.py`` cuts
them into sentence-aligned passages, ``index.py`` stores passages, FTS5 rows and embeddings
incrementally and keeps the FAISS cache. Ingest owns its index, so it writes to ``store``.
To add a source format, add a loader to ``sources.py`` (and to ``BUILTINS`` for a built-in).
"""
