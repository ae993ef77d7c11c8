"""The retrieval modes and their groups, apart from ``searcher.py`` so that the settings can
name them without importing the retrieval stack (numpy, sqlite-utils, the index readers).
"""

from __future__ import annotations

MODES = ("bm25", "dense", "hybrid", "hybrid-sentence", "rrf", "hyde", "query2doc")
# "hybrid-sentence" (the default): the hybrid plus the best-sentence fusion
# (core/retrieve/sentence_score.py) over sentence vectors stored at index time
# (core.ingest.index.ensure_sentence_vectors). Dev document R@5 against the hybrid: SciFact .930 vs
# .911, Climate-FEVER .838 vs .824, WiCE .981 vs .981; the 150-word answer's `check` takes the same
# time (3.2 s on 2 cores; 7.2 s against 4.4 s when the sentences were embedded per search), and
# SciFact verdicts through retrieval hold (learned rule macro-F1 .489 vs .494) (docs/benchmarks.md, issue 21).
HYBRID_MODES = ("hybrid", "hybrid-sentence")
# modes that score sentences by their vectors on every search: a run completes a source's stored
# sentence vectors first (core.ingest.index.ensure_sentence_vectors; a database indexed before
# they were stored)
SENTENCE_VECTOR_MODES = ("hybrid-sentence",)
# modes whose search loads the embedder anyway: their hits' sentences can be ranked by sentence
# vectors (:meth:`Searcher.rank_evidence_sentences`) without loading a model a mode does not need
EMBEDDING_MODES = ("dense", *HYBRID_MODES, "rrf", "hyde")
DEFAULT_MODE = "hybrid-sentence"  # the settings' default, the demo's, and every caller's that names none
EXPANSION_MODES = ("hyde", "query2doc")
# modes that search the stored passage vectors (a source without this embedder's vectors must be
# embedded first: core.workbench.Workbench.unembedded_sources); bm25 and query2doc never load it
VECTOR_MODES = ("dense", *HYBRID_MODES, "rrf", "hyde")
