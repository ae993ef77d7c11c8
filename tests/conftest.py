"""Shared fixtures: real data from ../shared/data, the real embedded models, temp databases."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see tui/cli.py: no spin-waiting under load
# models/llm_batch.py records its kernel check per machine: the tests' own records, never the user's
if "CLAIMSCOPE_CACHE_DIR" not in os.environ:
    os.environ["CLAIMSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="claimscope-test-cache-")
    atexit.register(shutil.rmtree, os.environ["CLAIMSCOPE_CACHE_DIR"], True)
# The suite's verdict and probability assertions run on the verifier's fp32 export: torch's
# probabilities on every x86-64 CPU (to ~1e-6). The default int8 copy's integer kernels differ
# between CPUs (AVX-512 VNNI vs AVX2's saturating u8×s8 products), so it is checked against fp32
# with tolerances in tests/models/test_nli_onnx.py, never by exact verdicts of the whole pipeline.
os.environ.setdefault("CLAIMSCOPE_NLI_RUNTIME", "onnx-fp32")
# The same for the embedder: its fp32 export gives torch's vectors on every CPU; the default int8
# copy (VNNI CPUs) is checked against it in tests/models/test_embed.py.
os.environ.setdefault("CLAIMSCOPE_EMBED_RUNTIME", "onnx-fp32")

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CLAIMSCOPE_SHARED_DATA", ROOT.parent / "shared" / "data"))
FIXTURES = DATA / "fixtures"


def pytest_configure(config):
    if not DATA.is_dir():
        raise pytest.UsageError(f"shared data not found at {DATA} (set CLAIMSCOPE_SHARED_DATA)")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def embedder():
    from models.embed import load_embedder

    return load_embedder()


@pytest.fixture(scope="session")
def splitter():
    from models.nlp import SpacySentenceSplitter

    return SpacySentenceSplitter()


def indexed_fixture(tmp_path_factory, name: str, file: str, fmt: str, embedder, splitter):
    """A fresh database with one fixture file of ../shared/data/fixtures indexed as source ``name``."""
    from core.ingest.index import add_source
    from core.ingest.sources import load_documents
    from store import open_db

    db = open_db(tmp_path_factory.mktemp(name) / f"{name}.db")
    add_source(db, name, load_documents(FIXTURES / file), fmt=fmt, path="fixture", embedder=embedder, splitter=splitter)
    return db


@pytest.fixture(scope="session")
def mini_db(tmp_path_factory, embedder, splitter):
    """A database with the SciFact mini corpus indexed once for the whole session (read-only use)."""
    return indexed_fixture(tmp_path_factory, "scifact-mini", "scifact_mini_corpus.jsonl", "scifact", embedder, splitter)


@pytest.fixture(scope="session")
def mini_claims():
    from core.evaluate.datasets import load_scifact_claims

    return load_scifact_claims(FIXTURES / "scifact_mini_claims.jsonl")


def save_tiny_classifier(folder: Path, id2label: dict[int, str]) -> Path:
    """A tiny random BERT classifier saved as safetensors + the MiniLM tokenizer, so the real
    loading code path runs in tests without training (models.md §5)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from models.registry import resolve_embedder

    tok = AutoTokenizer.from_pretrained(str(resolve_embedder().path))
    torch.manual_seed(0)
    cfg = BertConfig(
        num_labels=len(id2label), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, vocab_size=tok.vocab_size, id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    BertForSequenceClassification(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_nli_dir(tmp_path_factory) -> Path:
    return save_tiny_classifier(
        tmp_path_factory.mktemp("tiny-nli"), {0: "entailment", 1: "neutral", 2: "contradiction"}
    )
