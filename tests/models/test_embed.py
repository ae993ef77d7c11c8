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


def test_onnx_copy_gives_torchs_vectors_and_a_stale_copy_is_never_served(tmp_path, monkeypatch, data_dir):
    """The fp32 ONNX Runtime copy (models/onnx_build.py build_embedder) serves the embedded model
    with torch's vectors (so stored vectors and FAISS indexes stay valid), only while its recorded
    sha256 is the installed weights'."""
    import models.onnx_build as ob
    from models.embed import load_embedder

    ref = resolve_embedder(None)
    ob.build_embedder(ref.path, tmp_path)
    monkeypatch.setattr(ob, "EMBEDDER_ONNX_DIR", tmp_path)
    docs = [json.loads(line) for line in (data_dir / "fixtures" / "scifact_mini_corpus.jsonl").open()]
    texts = [" ".join(d["abstract"]) for d in docs[:12]] + ["  padded  ", "x", "word " * 400]
    onnx, torch_ = load_embedder(runtime="auto"), load_embedder(runtime="torch")
    assert (onnx.runtime, torch_.runtime) == ("onnx-fp32", "torch-fp32")
    assert onnx.ref.model_id == torch_.ref.model_id  # same vectors: same stored embeddings
    fp32 = onnx.encode(texts, batch_size=4)
    assert np.abs(fp32 - torch_.encode(texts, batch_size=4)).max() < 1e-5
    int8 = load_embedder(runtime="onnx-int8")  # opt-in: other vectors, so another model id
    assert int8.runtime == "onnx-int8" and int8.ref.model_id == f"{torch_.ref.model_id}@onnx-int8"
    vecs = int8.encode(texts, batch_size=4)
    assert (vecs * fp32).sum(1).min() > 0.97  # close (measured ≥ .990 on wiki-vital passages) …
    assert not np.allclose(vecs, fp32, atol=1e-4)  # … but not the same vectors
    source = json.loads((tmp_path / ob.SOURCE_FILE).read_text())
    (tmp_path / ob.SOURCE_FILE).write_text(json.dumps(source | {"safetensors_sha256": "0" * 64}))
    assert load_embedder(runtime="auto").runtime == "torch-fp32"
