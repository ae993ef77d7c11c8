"""Decompose stage: input text → claims, each with the span of the input it came from.

Interface: :class:`~core.decompose.base.Decomposer` (``decompose(text) -> list[Claim]``) in
``base.py``. Variants: ``sentence`` (base.py), ``rules`` (rules.py), ``llm`` (llm.py),
``atomic`` (atomic.py: the trained LoRA decomposer);
``citations.py`` keeps an answer's ``[n]`` markers on its claims. This module is the registry:
to add a variant, write a class with ``name`` and ``decompose`` that imports only ``base``, and
add one entry below — the CLI, the settings and the TUI read :data:`DECOMPOSERS`.
"""

from __future__ import annotations

from core.decompose.base import Claim, Decomposer, SentenceDecomposer

__all__ = ["BOTH_WAYS", "DECOMPOSERS", "Claim", "Decomposer", "SentenceDecomposer", "make_decomposer"]

DECOMPOSERS = ("rules", "sentence", "llm", "atomic")
BOTH_WAYS = ("atomic", "rules")  # write standalone claims or the facts as written; the others one way


def make_decomposer(name: str, splitter_factory, llm_spec: str | None = None, spacy_factory=None,
                    standalone: bool = True) -> Decomposer:
    """``rules`` (default: deterministic atomic claims), ``sentence``, ``llm`` (a GGUF model,
    ``llm_spec``: ``embedded`` or a path; llm.py), or ``atomic`` (the shipped LoRA adapter over
    the embedded SmolLM2 base it was trained on; ``llm_spec`` does not apply; atomic.py).
    ``spacy_factory`` returns the process's shared models.nlp.SpacyPipeline (the composition
    root passes it: one spaCy load per process); without it each decomposer loads its own.
    ``standalone`` (what a check needs): ``atomic`` and ``rules`` name the answer's subject
    instead of its pronoun; False keeps the facts as the sentence words them, FActScore's style
    (``atomic``'s rules complement follows; ``sentence`` and ``llm`` write one way)."""
    from core.errors import InputError

    if name == "sentence":
        return SentenceDecomposer(splitter_factory())
    if name == "rules":
        from core.decompose.rules import RulesDecomposer

        return RulesDecomposer(nlp=spacy_factory() if spacy_factory else None, resolve_pronouns=standalone)
    # the LLM decomposers parse with tagger and parser, and fall back to / complement with rules
    nlp = None
    if spacy_factory is not None:
        def nlp():
            return spacy_factory().view(("lemmatizer", "ner"))

    def fallback():
        from core.decompose.rules import RulesDecomposer

        return RulesDecomposer(nlp=spacy_factory() if spacy_factory else None,
                               resolve_pronouns=standalone or name != "atomic")
    if name == "llm":
        from core.decompose.llm import LLMDecomposer
        from models.llm import load_llm

        llm = load_llm(llm_spec)
        llm.preload()  # beside spaCy's load, which the first call needs first (LLM.preload)
        return LLMDecomposer(llm, nlp_factory=nlp, fallback_factory=fallback)
    if name == "atomic":
        from core.decompose.atomic import AtomicDecomposer
        from models.atomic import load_atomic_llm

        llm = load_atomic_llm()
        llm.preload()  # beside spaCy's load, which the first call needs first (LLM.preload)
        return AtomicDecomposer(llm, nlp_factory=nlp, fallback_factory=fallback, resolve_pronouns=standalone)
    raise InputError(f"unknown decomposer {name!r} (available: {', '.join(DECOMPOSERS)})")
