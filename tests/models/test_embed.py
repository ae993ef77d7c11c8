"""The embedded embedder runs without sentence-transformers (issue 18: its import pulls
scikit-learn into every check) and gives sentence-transformers' vectors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from models.embed import MeanPoolingEmbedder, SentenceTransformerEmbedder, mean_pooling_config
from models.registry import resolve_embedder

ROOT = Path(__file__).resolve().parents[2]


def test_default_embedder_matches_sentence_transformers(embedder, data_dir):
    assert isinstance(embedder, MeanPoolingEmbedder) and embedder.max_seq_length == 256
    docs = [json.loads(line) for line in (data_dir / "fixtures" / "scifact_mini_corpus.jsonl").open()]
    texts = [" ".join(d["abstract"]) for d in docs[:20]] + ["  padded with spaces  ", "x", " ".join(d["title"] for d in docs)]
    ours = embedder.encode(texts, batch_size=8)
    reference = SentenceTransformerEmbedder(resolve_embedder(None)).encode(texts, batch_size=8)
    assert ours.shape == reference.shape == (len(texts), 384)
    assert np.abs(ours - reference).max() < 1e-5  # the same computation, to float rounding
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_other_pooling_goes_through_sentence_transformers(tmp_path):
    src = resolve_embedder(None).path
    assert mean_pooling_config(src) == 256
    folder = tmp_path / "cls"
    (folder / "1_Pooling").mkdir(parents=True)
    for name in ("modules.json", "sentence_bert_config.json"):
        shutil.copy(src / name, folder / name)
    pooling = json.loads((src / "1_Pooling" / "config.json").read_text())
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling | {"pooling_mode_mean_tokens": False,
                                                                             "pooling_mode_cls_token": True}))
    assert mean_pooling_config(folder) is None
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    assert mean_pooling_config(folder) == 256
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128, "do_lower_case": True}))
    assert mean_pooling_config(folder) is None
    assert mean_pooling_config(tmp_path / "missing") is None


def test_loading_the_default_embedder_imports_no_sentence_transformers():
    code = (
        "import sys\nfrom models.embed import load_embedder\nload_embedder().encode(['a sentence'])\n"
        "print(sorted(m for m in ('sentence_transformers', 'sklearn') if m in sys.modules))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == "[]"


def test_onnx_export_gives_torch_vectors_and_a_stale_export_is_never_used(tmp_path, data_dir):
    """The fp32 ONNX export of a mean-pooling embedder (models/onnx_build.build_embedder):
    served only while it matches the weights, with torch's vectors (stored FAISS indexes stay
    valid: within 1e-5, measured 1.7e-7 on the embedded model)."""
    from models.onnx_build import SOURCE_FILE, build_embedder
    from models.registry import ModelRef
    from tests.conftest import save_tiny_classifier

    folder = save_tiny_classifier(tmp_path / "tiny", {0: "entailment", 1: "neutral", 2: "contradiction"})
    ref, out = ModelRef("embedder", "tiny", folder), tmp_path / "onnx"
    torch_emb = MeanPoolingEmbedder(ref, 128, runtime="auto", onnx_dir=out)
    assert torch_emb.runtime == "torch-fp32"  # nothing built yet
    build_embedder(folder, out)
    onnx_emb = MeanPoolingEmbedder(ref, 128, runtime="auto", onnx_dir=out)
    assert onnx_emb.runtime == "onnx-fp32" and not hasattr(onnx_emb, "_model")  # no torch model built
    assert MeanPoolingEmbedder(ref, 128, runtime="torch", onnx_dir=out).runtime == "torch-fp32"
    docs = [json.loads(line) for line in (data_dir / "fixtures" / "scifact_mini_corpus.jsonl").open()]
    texts = [" ".join(d["abstract"]) for d in docs[:12]] + ["  padded with spaces  ", "x", ""]
    a, b = torch_emb.encode(texts, batch_size=4), onnx_emb.encode(texts, batch_size=4)
    assert a.shape == b.shape == (len(texts), onnx_emb.dim) and b.dtype == np.float32
    assert np.abs(a - b).max() < 1e-5
    assert not np.allclose(a[0], a[1], atol=1e-3)  # real, distinct vectors
    int8 = MeanPoolingEmbedder(ref, 128, runtime="onnx-int8", onnx_dir=out)  # opt-in: other vectors …
    assert int8.runtime == "onnx-int8" and int8.ref.model_id == "tiny@onnx-int8"  # … under another model id
    c = int8.encode(texts, batch_size=4)
    assert c.shape == b.shape and not np.allclose(c, b, atol=1e-6)
    assert np.isclose(np.linalg.norm(c[:-1], axis=1), 1.0, atol=1e-4).all()  # still unit vectors
    source = json.loads((out / SOURCE_FILE).read_text())
    (out / SOURCE_FILE).write_text(json.dumps(source | {"safetensors_sha256": "0" * 64}))
    assert MeanPoolingEmbedder(ref, 128, runtime="auto", onnx_dir=out).runtime == "torch-fp32"
