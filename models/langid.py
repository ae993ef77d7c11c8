"""Language identification for the English-only guard (core/language.py).

Every model claimscope embeds reads English: the spaCy parser the decomposers use, the
embedder, the verifier and the LLM. A French or Japanese sentence still goes through them
and comes out with a confident-looking verdict ("Paris est la capitale de la France." was
*supported*, +0.04, by the Notre-Dame de Paris passage). The guard needs to know which
language a sentence reads as.

The embedded identifier is langid.py (Lui and Baldwin, "langid.py: An Off-the-shelf Language
Identification Tool", ACL 2012 demo): a multinomial naive Bayes over byte n-grams, trained on
97 languages across five domains. It ships in the PyPI package ``py3langid`` (BSD-3-Clause),
whose model file is an LZMA-compressed NumPy ``.npz`` read with ``allow_pickle=False``; it is
located with ``find_spec`` like every embedded default (models/registry.py). The pluggable
alternative is any model file in py3langid's format (``python -m py3langid.train``), for a
user who wants other languages or domains. Loading takes ~0.5 s, so the guard loads it only
when a sentence's own words leave its language in doubt (core/language.py).
"""

from __future__ import annotations

import threading
from pathlib import Path

from models.registry import ModelError, ModelRef, package_dir

EMBEDDED_LANGID_PACKAGE = "py3langid"
EMBEDDED_LANGID_ID = "langid.py (py3langid, 97 languages)"


def resolve_language_id(spec: str | None = None) -> ModelRef:
    """The identifier's model file: the embedded one (``None``, ``default``, ``embedded``) or a
    py3langid-format file the user names."""
    if spec is None or spec.strip().lower() in {"", "default", "embedded"}:
        pkg = package_dir(EMBEDDED_LANGID_PACKAGE)
        path = pkg / "data" / "model.npz.xz" if pkg is not None else None
        if path is None or not path.exists():
            raise ModelError("the embedded language identifier is missing: install it with "
                             "`pip install py3langid` (or run `make install`)")
        return ModelRef("langid", EMBEDDED_LANGID_ID, path, embedded=True)
    path = Path(spec).expanduser()
    if not path.is_file():
        raise ModelError(f"language identifier {spec}: no such model file (a py3langid .npz.xz)")
    return ModelRef("langid", str(path.resolve()), path.resolve())


class LanguageIdentifier:
    """``rank(text)``: (language code, probability) pairs, most probable first. Loaded on the
    first call (thread-safe: the workbench's workers may decompose concurrently)."""

    def __init__(self, ref: ModelRef | None = None) -> None:
        self.ref = ref if ref is not None else resolve_language_id()
        self._model = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self):
        with self._lock:
            if self._model is None:
                try:
                    from py3langid.langid import LanguageIdentifier as _Identifier
                except ImportError as exc:
                    raise ModelError("the language identifier needs py3langid: `pip install py3langid`") from exc
                try:
                    self._model = _Identifier.from_modelpath(self.ref.path, norm_probs=True)
                except (OSError, ValueError, KeyError) as exc:
                    raise ModelError(f"{self.ref.path} is not a py3langid model ({exc})") from None
        return self._model

    def rank(self, text: str) -> list[tuple[str, float]]:
        return [(lang, float(p)) for lang, p in self._load().rank(text)]

    def classify(self, text: str) -> tuple[str, float]:
        """The most probable language and its probability (normalised over the model's languages)."""
        lang, p = self._load().classify(text)
        return lang, float(p)
