"""A model folder's ``tokenizer.json`` run by the ``tokenizers`` library directly, for the
embedded models when ONNX Runtime serves them.

Why: transformers' fast tokenizer is this same Rust tokenizer, but importing transformers costs
~0.6 CPU-s and its ``configuration_utils`` imports torch (~1.3 CPU-s more on 2 cores): with both
embedded models on ONNX Runtime a check needs neither (issue 18). Only the calls claimscope makes
are provided, with transformers' semantics: pairs or single texts, ``longest_first`` truncation
to ``max_length`` (special tokens counted), padding to the longest in the batch with the pad
token, type id 0 and attention mask 0; and un-truncated ids / character offsets without special
tokens (the verifier's evidence windows). ``tests/models/test_tokenizer.py`` checks every call
against transformers on real pairs; plug-in models keep transformers' ``AutoTokenizer``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np


class FolderTokenizer:
    """The BERT-style tokenizer of a model folder (``tokenizer.json`` + ``tokenizer_config.json``)."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        raw = (folder / "tokenizer.json").read_text(encoding="utf-8")
        # one Rust tokenizer per setting: no shared mutable truncation / padding state between threads
        self._plain = Tokenizer.from_str(raw)
        self._plain.no_truncation()
        self._plain.no_padding()
        self._pad_token = str(config.get("pad_token", "[PAD]"))
        self._pad_id = self._plain.token_to_id(self._pad_token)
        if self._pad_id is None:
            raise ValueError(f"{folder}: pad token {self._pad_token!r} is not in the vocabulary")
        self._pad_type_id = int(config.get("pad_token_type_id", 0))
        self._raw = raw
        self._configured: dict[tuple[int, bool], object] = {}

    def _tokenizer(self, max_length: int, pad: bool):
        key = (max_length, pad)
        if key not in self._configured:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_str(self._raw)
            tok.enable_truncation(max_length, stride=0, strategy="longest_first", direction="right")
            if pad:
                tok.enable_padding(direction="right", pad_id=self._pad_id, pad_type_id=self._pad_type_id,
                                   pad_token=self._pad_token)
            else:
                tok.no_padding()
            self._configured[key] = tok
        return self._configured[key]

    def batch(
        self, first: Sequence[str], second: Sequence[str] | None, max_length: int,
    ) -> dict[str, np.ndarray]:
        """``tokenizer(first[, second], truncation="longest_first", max_length=…, padding=True,
        return_tensors="np")``: input_ids, token_type_ids, attention_mask (int64)."""
        inputs = list(first) if second is None else list(zip(first, second, strict=True))
        encs = self._tokenizer(max_length, True).encode_batch(inputs)
        return {
            "input_ids": np.array([e.ids for e in encs], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
        }

    def lengths(self, first: Sequence[str], second: Sequence[str], max_length: int) -> list[int]:
        """Tokens of each truncated pair, special tokens included (no padding)."""
        return [len(e.ids) for e in self._tokenizer(max_length, False).encode_batch(list(zip(first, second, strict=True)))]

    def ids(self, text: str) -> list[int]:
        """``tokenizer(text, add_special_tokens=False)["input_ids"]`` (no truncation)."""
        return self._plain.encode(text, add_special_tokens=False).ids

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """``tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]``."""
        return [tuple(o) for o in self._plain.encode(text, add_special_tokens=False).offsets]
