"""Dense text embeddings (sentence-transformers), behind the :class:`Embedder` protocol."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from models.registry import ModelError, ModelRef, resolve_embedder


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors (so inner product = cosine)."""

    ref: ModelRef

    @property
    def dim(self) -> int: ...

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray: ...


class SentenceTransformerEmbedder:
    """Any sentence-transformers model folder; the embedded default is all-MiniLM-L6-v2."""

    def __init__(self, ref: ModelRef, device: str = "cpu") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()  # claimscope shows its own progress on stderr

        self.ref = ref
        try:
            self._model = SentenceTransformer(str(ref.path), device=device, local_files_only=True)
        except Exception as exc:
            raise ModelError(f"could not load embedding model {ref.model_id}: {exc}") from exc
        self._dim = int(self._model.get_embedding_dimension())

    @property
    def dim(self) -> int:
        return self._dim

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Encode in length-sorted batches (less padding), reporting progress per batch."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            idx = order[start : start + batch_size]
            vecs = self._model.encode(
                [texts[i] for i in idx],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            out[idx] = vecs
            if progress:
                progress(len(idx))
        return out


def load_embedder(spec: str | None = None, device: str = "cpu") -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(resolve_embedder(spec), device=device)
