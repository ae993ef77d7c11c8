"""Diagnostics: why a verdict came out as it did, beside the verdict, never changing it.

``characteristics.py`` (evidence characteristics and their lexicons / site lists in ``data/``,
Wan et al.'s DRUID study of context usage) and ``acu.py`` (accumulated context usage of an LLM,
ΔP per stance). Pure computations: core.pipeline.stored keeps their results. To add a
diagnostic, add a module with a pure function or a scorer class and its stored writer in
core/pipeline/stored.py.
"""
