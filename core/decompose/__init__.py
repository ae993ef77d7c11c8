"""Decompose stage: input text → claims, each with the span of the input it came from.

Interface: :class:`~core.decompose.base.Decomposer` (``decompose(text) -> list[Claim]``) in
``base.py``. Variants: ``sentence`` (base.py), ``rules`` (rules.py), ``llm`` (llm.py);
``citations.py`` keeps an answer's ``[n]`` markers on its claims. This module is the registry:
to add a variant, write a class with ``name`` and ``decompose`` that imports only ``base``, and
add one entry below — the CLI, the settings and the TUI read :data:`DECOMPOSERS`.
"""

from __future__ import annotations

from core.decompose.base import Claim, Decomposer, SentenceDecomposer

__all__ = ["DECOMPOSERS", "Claim", "Decomposer", "SentenceDecomposer", "make_decomposer"]

DECOMPOSERS = ("rules", "sentence", "llm")


def make_decomposer(name: str, splitter_factory, llm_spec: str | None = None) -> Decomposer:
    """``rules`` (default: deterministic atomic claims), ``sentence``, or ``llm`` (a GGUF model,
    ``llm_spec``: ``embedded`` or a path; llm.py)."""
    from core.errors import InputError

    if name == "sentence":
        return SentenceDecomposer(splitter_factory())
    if name == "rules":
        from core.decompose.rules import RulesDecomposer

        return RulesDecomposer()
    if name == "llm":
        from core.decompose.llm import LLMDecomposer
        from models.llm import load_llm

        return LLMDecomposer(load_llm(llm_spec))
    raise InputError(f"unknown decomposer {name!r} (available: {', '.join(DECOMPOSERS)})")
