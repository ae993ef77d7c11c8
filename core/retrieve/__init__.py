"""Retrieve stage: a claim → ranked passages, with each retriever's score and rank.

Interface: :class:`~core.retrieve.searcher.Retriever` (``search(query, k, sources)``) and the
:class:`~core.retrieve.searcher.Searcher` that runs one of ``MODES`` (bm25 over FTS5, dense over
FAISS, hybrid by reciprocal rank fusion, hyde / query2doc with an expansion) in ``searcher.py``.
``expand.py`` writes HyDE / Query2doc pseudo-documents (pure: the pipeline caches them);
``leakage.py`` audits whether an expansion restates the evidence. Retrieve reads its indexes
from ``store``. To add a retriever, implement ``Retriever`` and add its mode to ``MODES`` (``modes.py``).
"""
