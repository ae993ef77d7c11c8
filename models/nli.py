"""Natural-language inference: (evidence, claim) → P(entailment), P(neutral), P(contradiction).

The embedded default is claimscope's own cross-encoder shipped in ``models/verifier/``
(see its model card). Any Hugging Face sequence-classification NLI model — a local folder
or an id already in the local HF cache — plugs in by config; its label order is read from
``config.id2label``. A 2-label model (supported / unsupported, as MiniCheck) maps
"supported" to entailment and "unsupported" to neutral (it cannot tell refutation apart).

Label order everywhere: ``LABELS = (entailment, neutral, contradiction)``, i.e.
supports / not enough info / refutes (ICAT's NLI label order, seed 004 §5.4).

Long evidence: the claim is kept whole and windows slide over the evidence tokens; each
window is scored and the strongest one decides (MiniCheck / AlignScore chunking). The
strongest window is the most decisive one, max(P(entailment), P(contradiction)), so a
refuting window is not hidden behind a neutral one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from models.registry import ModelError, ModelRef, _is_default, _resolve_hf, check_safe_weights

LABELS = ("entailment", "neutral", "contradiction")
ENTAIL, NEUTRAL, CONTRADICT = 0, 1, 2
EMBEDDED_NLI_DIR = Path(__file__).resolve().parent / "verifier"
EMBEDDED_NLI_ID = "claimscope/minilm-l6-nli3"
EMBEDDED_WINDOW_TOKENS = 96

_SYNONYMS = {
    "entailment": ENTAIL, "entail": ENTAIL, "entailed": ENTAIL, "supports": ENTAIL, "support": ENTAIL,
    "supported": ENTAIL, "true": ENTAIL, "yes": ENTAIL, "consistent": ENTAIL, "factual": ENTAIL,
    "neutral": NEUTRAL, "nei": NEUTRAL, "not enough info": NEUTRAL, "not_enough_info": NEUTRAL,
    "not enough information": NEUTRAL, "unverifiable": NEUTRAL, "unsupported": NEUTRAL,
    "not_entailment": NEUTRAL, "not entailment": NEUTRAL, "non-entailment": NEUTRAL, "unknown": NEUTRAL,
    "contradiction": CONTRADICT, "contradict": CONTRADICT, "contradicted": CONTRADICT,
    "refutes": CONTRADICT, "refute": CONTRADICT, "refuted": CONTRADICT, "false": CONTRADICT, "no": CONTRADICT,
}


def label_mapping(id2label: dict) -> list[int]:
    """For each output column of a model, the index in LABELS it feeds.

    Two-label models: the positive class → entailment, the other → neutral. Generic names
    (``LABEL_0``…) are refused: guessing an order silently would invert verdicts.
    """
    names = [str(id2label[i] if i in id2label else id2label[str(i)]).strip().lower() for i in range(len(id2label))]
    if len(names) == 2 and set(names) == {"label_0", "label_1"}:
        # MiniCheck-style binary models publish no names: 1 = supported.
        return [NEUTRAL, ENTAIL]
    mapped = []
    for name in names:
        if name not in _SYNONYMS:
            raise ModelError(
                f"cannot map the model's label {name!r} to entailment/neutral/contradiction "
                f"(labels: {names}); fix config.json id2label"
            )
        mapped.append(_SYNONYMS[name])
    if len(names) == 2 and CONTRADICT in mapped and ENTAIL in mapped:
        pass  # e.g. FEVER-style supports/refutes
    elif len(names) == 2:
        mapped = [ENTAIL if m == ENTAIL else NEUTRAL for m in mapped]
    if len(set(mapped)) != len(mapped):
        raise ModelError(f"two of the model's labels map to the same class: {names}")
    return mapped


@dataclass(frozen=True)
class WindowedPrediction:
    """The deciding window of a long-evidence pair: probabilities and its character span."""

    probs: np.ndarray  # (3,)
    window: int  # index of the deciding window (0 when the evidence fit whole)
    n_windows: int
    span: tuple[int, int]  # characters of the evidence the deciding window covers


class NLIModel(Protocol):
    ref: ModelRef

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """Probabilities (n, 3) in LABELS order; each pair is (premise = evidence, hypothesis = claim)."""
        ...

    def predict_long(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> list[WindowedPrediction]:
        """Like :meth:`predict`, for premises longer than the model's window: the deciding
        window per pair. The verifier calls this one, so every pair model must have it."""
        ...


class CrossEncoderNLI:
    """A transformers sequence-classification model used as an NLI cross-encoder."""

    def __init__(
        self, ref: ModelRef, device: str = "cpu", max_length: int = 256, window_tokens: int | None = None,
        runtime: str = "torch",
    ) -> None:
        """``runtime``: "torch" (fp32, every model), "onnx-fp32" or "onnx-int8" — the ONNX
        Runtime copies built by ``make onnx`` (models/onnx_build.py) beside the weights, used
        only when their recorded sha256 matches the safetensors file, else torch (a stale
        export never serves new weights) — or "auto": onnx-int8 when built (by the current
        recipe) and the CPU's int8 products are exact (VNNI), else onnx-fp32 when built, else torch.
        Tokenising, windows and label mapping are the same code for all."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        assert ref.path is not None
        check_safe_weights(ref.path)
        self.ref = ref
        self.device = device
        self.max_length = max_length
        # Evidence tokens per window. A small cross-encoder judges best at the length it was
        # trained on: a window much longer than that dilutes the one deciding sentence.
        self.window_tokens = window_tokens
        self._model = None
        self._session = None
        self._hf_tokenizer = None
        self._fast = None  # models.tokenizer.FolderTokenizer: the embedded verifier on ONNX Runtime
        self.runtime = "torch-fp32"
        self._choose_session(ref, runtime, device)
        try:
            if self._session is not None and ref.embedded:
                # no transformers import at all (it imports torch): the same Rust tokenizer, called directly
                from models.tokenizer import FolderTokenizer

                self._fast = FolderTokenizer(Path(ref.path))
                id2label = json.loads((Path(ref.path) / "config.json").read_text(encoding="utf-8"))["id2label"]
            else:
                from transformers import AutoConfig

                _quiet_transformers()
                self._hf_tokenizer = self.tokenizer
                id2label = AutoConfig.from_pretrained(str(ref.path), local_files_only=True).id2label
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"could not load NLI model {ref.model_id}: {exc}") from exc
        self.columns = label_mapping(dict(id2label))
        if self._session is None:
            self._load_torch()

    @property
    def tokenizer(self):
        """transformers' tokenizer of the model (loaded on first use when the embedded
        verifier runs on ONNX Runtime without it: exports and benchmarks ask for it)."""
        if self._hf_tokenizer is None:
            from transformers import AutoTokenizer

            _quiet_transformers()
            try:
                self._hf_tokenizer = AutoTokenizer.from_pretrained(str(self.ref.path), local_files_only=True)
            except (OSError, ValueError) as exc:
                raise ModelError(f"could not load NLI model {self.ref.model_id}: {exc}") from exc
        return self._hf_tokenizer

    def _choose_session(self, ref: ModelRef, runtime: str, device: str) -> None:
        if runtime == "auto" and device == "cpu":
            from models.onnx_build import int8_products_saturate

            if not int8_products_saturate():
                self._choose_session(ref, "onnx-int8", device)
            if self._session is None:
                self._choose_session(ref, "onnx-fp32", device)
        elif runtime == "onnx-int8" and device == "cpu":
            self._session = _onnx_session(ref.path)
            if self._session is not None:
                from models.onnx_build import VERIFIER_INT8_ID

                self.runtime = "onnx-int8"
                # a distinct id in manifests and stage-cache keys: int8 probabilities differ
                self.ref = replace(ref, model_id=f"{ref.model_id}{VERIFIER_INT8_ID}")
        elif runtime == "onnx-fp32" and device == "cpu":
            from models.onnx_build import ONNX_FP32_FILE

            # torch's probabilities to float rounding (1.5e-6 measured), in 0.57 of its CPU
            # time: the same model id, so runs and the stage cache do not tell them apart
            self._session = _onnx_session(ref.path, ONNX_FP32_FILE)
            if self._session is not None:
                self.runtime = "onnx-fp32"

    def _load_torch(self):
        """The torch model: loaded only when torch serves the pairs (or :attr:`model` is
        asked for, e.g. to export it) — an ONNX session never needs it, and building it imports
        transformers' modeling code (issue 18: ~1 CPU-s of a check's start-up on 2 cores)."""
        if self._model is None:
            import torch
            from transformers import AutoModelForSequenceClassification

            _quiet_transformers()
            try:
                model = AutoModelForSequenceClassification.from_pretrained(
                    str(self.ref.path), local_files_only=True, use_safetensors=True, dtype=torch.float32
                )
            except (OSError, ValueError) as exc:
                raise ModelError(f"could not load NLI model {self.ref.model_id}: {exc}") from exc
            self._model = model.eval().to(self.device)
            self._torch = torch
        return self._model

    @property
    def model(self):
        return self._load_torch()

    def _forward(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        if self._session is not None:
            enc = self._fast.batch(premises, hypotheses, self.max_length) if self._fast is not None else self.tokenizer(
                premises, hypotheses, truncation="longest_first", max_length=self.max_length,
                padding=True, return_tensors="np",
            )
            names = {i.name for i in self._session.get_inputs()}
            logits = self._session.run(None, {k: v.astype(np.int64) for k, v in enc.items() if k in names})[0]
            e = np.exp(logits - logits.max(axis=1, keepdims=True))
            probs = e / e.sum(axis=1, keepdims=True)
        else:
            enc = self.tokenizer(
                premises, hypotheses, truncation="longest_first", max_length=self.max_length,
                padding=True, return_tensors="pt",
            ).to(self.device)
            with self._torch.inference_mode():
                logits = self._model(**enc).logits.float()
            probs = self._torch.softmax(logits, dim=-1).cpu().numpy()
        out = np.zeros((len(premises), 3), dtype=np.float32)
        for col, target in enumerate(self.columns):
            out[:, target] += probs[:, col]
        return out

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """Batched with dynamic padding: pairs are sorted by their length in tokens (what a
        batch pads to; characters sorted worse: 10 % more time on a run's 262 windows) so each
        batch pads little."""
        out = np.zeros((len(pairs), 3), dtype=np.float32)
        if not pairs:
            return out
        premises, hypotheses = [p or "" for p, _ in pairs], [h or "" for _, h in pairs]
        if self._fast is not None:
            lengths = self._fast.lengths(premises, hypotheses, self.max_length)
        else:
            lengths = [len(ids) for ids in self.tokenizer(
                premises, hypotheses, truncation="longest_first",
                max_length=self.max_length, return_attention_mask=False, return_token_type_ids=False,
            )["input_ids"]]
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(pairs), batch_size):
            idx = order[start : start + batch_size]
            out[idx] = self._forward([pairs[i][0] or "" for i in idx], [pairs[i][1] or "" for i in idx])
        return out

    def windows(self, premise: str, hypothesis: str, stride_fraction: float = 0.5) -> list[tuple[int, int]]:
        """Character spans of evidence windows that fit beside the whole claim."""
        fast = self._fast
        claim_len = len(fast.ids(hypothesis) if fast else self.tokenizer(hypothesis, add_special_tokens=False)["input_ids"])
        budget = self.max_length - claim_len - 3  # [CLS] premise [SEP] claim [SEP]
        if self.window_tokens:
            budget = min(budget, self.window_tokens)
        if budget < 16:
            # A claim too long to leave room for evidence: one window, and the tokenizer
            # truncates the longer side (``longest_first``) — degraded, but never an error.
            return [(0, len(premise))]
        offsets = fast.offsets(premise) if fast else self.tokenizer(
            premise, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        if len(offsets) <= budget:
            return [(0, len(premise))]
        stride = max(1, int(budget * stride_fraction))
        spans = []
        for start in range(0, len(offsets), stride):
            window = offsets[start : start + budget]
            spans.append((window[0][0], window[-1][1]))
            if start + budget >= len(offsets):
                break
        return spans

    def predict_long(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> list[WindowedPrediction]:
        """Like :meth:`predict`, for evidence of any length: the most decisive window decides."""
        flat: list[tuple[str, str]] = []
        plan: list[list[tuple[int, int]]] = []
        for premise, hypothesis in pairs:
            spans = self.windows(premise, hypothesis)
            plan.append(spans)
            flat.extend((premise[s:e], hypothesis) for s, e in spans)
        probs = self.predict(flat, batch_size)
        out, pos = [], 0
        for spans in plan:
            block = probs[pos : pos + len(spans)]
            best = int(np.argmax(np.maximum(block[:, ENTAIL], block[:, CONTRADICT])))
            out.append(WindowedPrediction(block[best], best, len(spans), spans[best]))
            pos += len(spans)
        return out


def _quiet_transformers() -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def _onnx_session(model_dir: Path, file: str | None = None):
    """The ONNX Runtime session of ``file`` (default: the int8 one) built beside ``model_dir``'s
    weights, or None when it is missing, stale (built from other weights) or onnxruntime is
    not installed (threads and staleness: models.onnx_build.open_session)."""
    from models.onnx_build import ONNX_DIR, ONNX_FILE, VERIFIER_INT8_RECIPE, open_session

    return open_session(model_dir / ONNX_DIR, file or ONNX_FILE, model_dir, VERIFIER_INT8_RECIPE)


def resolve_nli(spec: str | None = None) -> ModelRef:
    if _is_default(spec):
        if not (EMBEDDED_NLI_DIR / "model.safetensors").exists():
            raise ModelError(
                f"the embedded verifier is missing from {EMBEDDED_NLI_DIR}; "
                "reinstall claimscope or train it with `python -m models.train_nli`"
            )
        return ModelRef("nli", EMBEDDED_NLI_ID, EMBEDDED_NLI_DIR, embedded=True)
    ref = _resolve_hf("nli", spec)
    assert ref.path is not None
    check_safe_weights(ref.path)
    return ref


RECIPE_MARKERS = ("training_summary.json", "interpolation.json")  # written by train_nli / interpolate


def recipe_model(path: str | Path | None) -> bool:
    """Whether a model folder was made by this project's verifier recipe (trained by
    models/train_nli.py or interpolated by models/interpolate.py)."""
    return path is not None and Path(path).is_dir() and any((Path(path) / m).is_file() for m in RECIPE_MARKERS)


def load_nli(
    spec: str | None = None, device: str = "cpu", max_length: int = 256, window_tokens: int | None = None,
    runtime: str | None = None,
) -> CrossEncoderNLI:
    """Load an NLI model. The embedded verifier was trained on pairs of ≤ 128 tokens, so its
    evidence windows default to 96 tokens (+ the claim ≈ 128): measured on a claim whose
    evidence sits after 30 filler sentences, 96-token windows let the right window decide
    where full-length (≈ 240-token) windows read the same text as neutral. A folder made by
    this project's recipe — ``models/train_nli.py`` (``training_summary.json``) or
    ``models/interpolate.py`` (``interpolation.json``) — was trained on the same ≤ 128-token
    pairs and gets the same windows, so a candidate verifier is measured on the path it would
    ship on. Other plug-in models use their whole ``max_length``."""
    ref = resolve_nli(spec)
    if window_tokens is None and (ref.embedded or recipe_model(ref.path)):
        window_tokens = EMBEDDED_WINDOW_TOKENS
    # "auto": the int8 ONNX copy when built and the CPU has VNNI (models.onnx_build.int8_products_saturate;
    # VERIFIER_INT8_RECIPE, SmoothQuant + per-channel MatMul weights + activations per token: 0.5-0.7
    # of fp32's CPU, argmax agreement .992 / .980 with fp32 on FEVER-Symmetric / VitaminC dev, and a
    # pair's probabilities the same in any batch), else the fp32 export (torch's probabilities), else torch
    # (docs/benchmarks.md, issue 18 "SmoothQuant"); CLAIMSCOPE_NLI_RUNTIME=onnx-fp32 or =torch opts out.
    runtime = runtime or os.environ.get("CLAIMSCOPE_NLI_RUNTIME", "auto")
    return CrossEncoderNLI(ref, device=device, max_length=max_length, window_tokens=window_tokens, runtime=runtime)
