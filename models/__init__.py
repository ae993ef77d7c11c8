"""Model wrappers: every model behind a small interface with an embedded default.

Heavy libraries (torch, transformers, sentence-transformers, faiss, spaCy) are imported
inside the functions that need them, so importing this package is cheap.
"""
