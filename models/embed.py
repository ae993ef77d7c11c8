"""Dense text embeddings (sentence-transformers), behind the :class:`Embedder` protocol.

A sentence-transformers folder whose modules are exactly Transformer → mean pooling →
Normalize (the embedded all-MiniLM-L6-v2) is run by :class:`MeanPoolingEmbedder`: the same
three steps on the transformers model directly, without importing sentence-transformers,
whose import pulls scikit-learn (measured: 1.4 of a check's ~8 start-up seconds on 2 cores)
for nothing claimscope calls. Any other folder goes through sentence-transformers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
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
        return encode_sorted(texts, self._dim, batch_size, progress, lambda batch: self._model.encode(
            batch, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False,
        ))


def encode_sorted(
    texts: Sequence[str], dim: int, batch_size: int, progress: Callable[[int], None] | None,
    encode_batch: Callable[[list[str]], np.ndarray],
) -> np.ndarray:
    """``encode_batch`` over ``texts`` in batches of similar length, longest first (less
    padding), the vectors put back in the input order; ``progress`` is told each batch's size."""
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    order = np.argsort([-len(t) for t in texts], kind="stable")
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for start in range(0, len(texts), batch_size):
        idx = order[start : start + batch_size]
        out[idx] = encode_batch([texts[i] for i in idx])
        if progress:
            progress(len(idx))
    return out


_MEAN_POOLING = {
    "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}


def mean_pooling_config(folder: Path) -> int | None:
    """The max sequence length when ``folder`` is a plain Transformer → mean pooling →
    Normalize sentence-transformers model (what :class:`MeanPoolingEmbedder` reproduces),
    else None (anything else: prompts, lower-casing, other pooling, extra modules)."""
    try:
        modules = json.loads((folder / "modules.json").read_text())
        types = [m["type"].rsplit(".", 1)[-1] for m in sorted(modules, key=lambda m: m["idx"])]
        if types != ["Transformer", "Pooling", "Normalize"] or modules[0].get("path", "") != "":
            return None
        pooling = json.loads((folder / modules[1]["path"] / "config.json").read_text())
        if any(pooling.get(k, False) != v for k, v in _MEAN_POOLING.items()) or any(
            v for k, v in pooling.items() if k.startswith("pooling_mode") and k not in _MEAN_POOLING
        ) or pooling.get("include_prompt", True) is not True:
            return None
        st = json.loads((folder / "sentence_bert_config.json").read_text())
        if st.get("do_lower_case") or set(st) - {"max_seq_length", "do_lower_case"}:
            return None
        if (folder / "config_sentence_transformers.json").exists():
            prompts = json.loads((folder / "config_sentence_transformers.json").read_text())
            if prompts.get("prompts") or prompts.get("default_prompt_name"):
                return None
        return int(st["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


class MeanPoolingEmbedder:
    """Transformer → mean of the token vectors over the attention mask → L2 normalisation:
    sentence-transformers' three modules for such a folder, computed the same way (texts
    stripped, ``longest_first`` truncation at the folder's max sequence length, length-sorted
    batches), so the vectors match sentence-transformers' to float rounding."""

    def __init__(
        self, ref: ModelRef, max_seq_length: int, device: str = "cpu", runtime: str = "torch",
        onnx_dir: Path | None = None,
    ) -> None:
        """``runtime``: "torch"; "onnx-fp32": the fp32 ONNX export in ``onnx_dir`` (built by
        ``make install`` / ``python -m models.onnx_build --embedder``; torch's vectors to float
        rounding, so stored indexes stay valid); "onnx-int8": the SmoothQuant int8 copy built
        beside it (models.onnx_build.INT8_RECIPE; 0.57 of fp32's CPU time when indexing,
        cosine ≈ .998 to fp32's vectors), under its own model id; "auto": int8 where its products
        are exact (VNNI CPUs, :func:`models.onnx_build.int8_products_saturate`; the same rule as
        the verifier's), else fp32, else torch. Each ONNX copy is served only while its recorded
        sha256 matches the weights. Tokenising, pooling and normalisation are the same code for
        all; ONNX skips torch's model (and transformers' modeling imports)."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        assert ref.path is not None
        self.ref = ref
        self._device = device
        self.max_seq_length = max_seq_length
        self._session = None
        self._fast = None  # models.tokenizer.FolderTokenizer: the embedded model on ONNX Runtime
        self.runtime = "torch-fp32"
        if runtime in ("auto", "onnx-fp32", "onnx-int8") and device == "cpu" and onnx_dir is not None:
            from models.onnx_build import (
                INT8_ID,
                ONNX_FILE,
                ONNX_FP32_FILE,
                int8_products_saturate,
                open_session,
            )

            if runtime == "onnx-int8" or (runtime == "auto" and not int8_products_saturate()):
                self._session = open_session(onnx_dir, ONNX_FILE, Path(ref.path))
                if self._session is not None:
                    self.runtime = "onnx-int8"
                    # other vectors than fp32's: their own model id, so they are stored, cached and
                    # FAISS-indexed apart and never compared with fp32's (or another recipe's)
                    self.ref = replace(ref, model_id=f"{ref.model_id}{INT8_ID}")
            if self._session is None and runtime != "onnx-int8":
                self._session = open_session(onnx_dir, ONNX_FP32_FILE, Path(ref.path))
                if self._session is not None:
                    self.runtime = "onnx-fp32"
            if self._session is not None:
                self._inputs = {i.name for i in self._session.get_inputs()}
        try:
            if self._session is not None and ref.embedded:
                # no transformers import (it imports torch): the same Rust tokenizer, called directly
                from models.tokenizer import FolderTokenizer

                self._fast = FolderTokenizer(Path(ref.path))
                self._dim = int(json.loads((Path(ref.path) / "config.json").read_text(encoding="utf-8"))["hidden_size"])
            else:
                from transformers import AutoConfig, AutoTokenizer
                from transformers.utils import logging as hf_logging

                hf_logging.set_verbosity_error()
                hf_logging.disable_progress_bar()
                self._tokenizer = AutoTokenizer.from_pretrained(str(ref.path), local_files_only=True)
                self._dim = int(AutoConfig.from_pretrained(str(ref.path), local_files_only=True).hidden_size)
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"could not load embedding model {ref.model_id}: {exc}") from exc
        if self._session is None:
            import torch
            from transformers import AutoModel

            try:
                self._model = AutoModel.from_pretrained(
                    str(ref.path), local_files_only=True, use_safetensors=True, dtype=torch.float32
                ).eval().to(device)
            except (OSError, ValueError) as exc:
                raise ModelError(f"could not load embedding model {ref.model_id}: {exc}") from exc
            self._torch = torch

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
        if self._session is not None:
            return encode_sorted(texts, self._dim, batch_size, progress, self._encode_onnx)
        torch = self._torch

        def encode_batch(batch: list[str]) -> np.ndarray:
            enc = self._tokenizer(
                [str(t).strip() for t in batch], padding=True, truncation="longest_first",
                max_length=self.max_seq_length, return_tensors="pt",
            ).to(self._device)
            with torch.inference_mode():
                tokens = self._model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(tokens.dtype)
                mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                vecs = torch.nn.functional.normalize(mean, p=2, dim=1)
            return vecs.float().cpu().numpy()

        return encode_sorted(texts, self._dim, batch_size, progress, encode_batch)

    def _encode_onnx(self, batch: list[str]) -> np.ndarray:
        """The torch steps on the ONNX token vectors, in float32 numpy."""
        texts = [str(t).strip() for t in batch]
        enc = self._fast.batch(texts, None, self.max_seq_length) if self._fast is not None else self._tokenizer(
            texts, padding=True, truncation="longest_first", max_length=self.max_seq_length, return_tensors="np",
        )
        tokens = self._session.run(None, {k: v.astype(np.int64) for k, v in enc.items() if k in self._inputs})[0]
        mask = enc["attention_mask"][..., None].astype(tokens.dtype)
        mean = (tokens * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
        # torch.nn.functional.normalize: x / max(||x||, eps)
        return (mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def load_embedder(
    spec: str | None = None, device: str = "cpu", runtime: str | None = None,
) -> SentenceTransformerEmbedder | MeanPoolingEmbedder:
    """The embedder for ``spec``: :class:`MeanPoolingEmbedder` for a plain mean-pooling folder
    (the default), sentence-transformers for every other. The embedded default runs on its ONNX
    copies when built (``runtime`` "auto", the default: the SmoothQuant int8 copy on VNNI CPUs,
    under its own model id, else the fp32 export, torch's vectors within 2e-7);
    ``CLAIMSCOPE_EMBED_RUNTIME`` = ``onnx-fp32`` / ``onnx-int8`` / ``torch`` picks one. A source
    indexed under another id gets this one's vectors before its next run
    (core.workbench.Workbench.unembedded_sources)."""
    ref = resolve_embedder(spec)
    runtime = runtime or os.environ.get("CLAIMSCOPE_EMBED_RUNTIME", "auto")
    if ref.path is not None and (max_len := mean_pooling_config(Path(ref.path))) is not None:
        from models.onnx_build import EMBEDDER_ONNX_DIR

        return MeanPoolingEmbedder(ref, max_len, device=device, runtime=runtime,
                                   onnx_dir=EMBEDDER_ONNX_DIR if ref.embedded else None)
    return SentenceTransformerEmbedder(ref, device=device)
