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
    from models.onnx_build import INT8_ID, SOURCE_FILE, build_embedder, int8_products_saturate
    from models.registry import ModelRef
    from tests.conftest import save_tiny_classifier

    folder = save_tiny_classifier(tmp_path / "tiny", {0: "entailment", 1: "neutral", 2: "contradiction"})
    ref, out = ModelRef("embedder", "tiny", folder), tmp_path / "onnx"
    torch_emb = MeanPoolingEmbedder(ref, 128, runtime="auto", onnx_dir=out)
    assert torch_emb.runtime == "torch-fp32"  # nothing built yet
    build_embedder(folder, out)
    onnx_emb = MeanPoolingEmbedder(ref, 128, runtime="onnx-fp32", onnx_dir=out)
    assert onnx_emb.runtime == "onnx-fp32" and not hasattr(onnx_emb, "_model")  # no torch model built
    # the default: the int8 copy where its products are exact, else fp32
    auto = MeanPoolingEmbedder(ref, 128, runtime="auto", onnx_dir=out)
    assert auto.runtime == ("onnx-fp32" if int8_products_saturate() else "onnx-int8")
    assert MeanPoolingEmbedder(ref, 128, runtime="torch", onnx_dir=out).runtime == "torch-fp32"
    docs = [json.loads(line) for line in (data_dir / "fixtures" / "scifact_mini_corpus.jsonl").open()]
    texts = [" ".join(d["abstract"]) for d in docs[:12]] + ["  padded with spaces  ", "x", ""]
    a, b = torch_emb.encode(texts, batch_size=4), onnx_emb.encode(texts, batch_size=4)
    assert a.shape == b.shape == (len(texts), onnx_emb.dim) and b.dtype == np.float32
    assert np.abs(a - b).max() < 1e-5
    assert not np.allclose(a[0], a[1], atol=1e-3)  # real, distinct vectors
    int8 = MeanPoolingEmbedder(ref, 128, runtime="onnx-int8", onnx_dir=out)  # other vectors …
    assert int8.runtime == "onnx-int8" and int8.ref.model_id == f"tiny{INT8_ID}"  # … under another model id
    c = int8.encode(texts, batch_size=4)
    assert c.shape == b.shape and not np.allclose(c, b, atol=1e-6)
    assert np.isclose(np.linalg.norm(c[:-1], axis=1), 1.0, atol=1e-4).all()  # still unit vectors
    source = json.loads((out / SOURCE_FILE).read_text())
    (out / SOURCE_FILE).write_text(json.dumps(source | {"safetensors_sha256": "0" * 64}))
    assert MeanPoolingEmbedder(ref, 128, runtime="auto", onnx_dir=out).runtime == "torch-fp32"
    (out / SOURCE_FILE).write_text(json.dumps(source | {"quantisation": "dynamic int8, per-channel weights, MatMul only"}))
    older = MeanPoolingEmbedder(ref, 128, runtime="auto", onnx_dir=out)  # an int8 copy of an earlier recipe …
    assert older.runtime == "onnx-fp32"  # … is never served


def test_the_embedded_int8_copy_keeps_the_fp32_vectors_and_their_retrieval(data_dir):
    """The default embedder on VNNI CPUs (SmoothQuant int8, models/onnx_build.INT8_RECIPE)
    against the fp32 export on SciFact dev claims and abstracts (never calibrated on). Measured
    (AVX-512 VNNI): mean cosine .998 to fp32's vectors (the recipe without smoothing: .995), and
    dense recall@5 .903 vs fp32's .908 on 100 claims over 392 abstracts."""
    import pytest

    from models.embed import load_embedder
    from models.onnx_build import INT8_ID, int8_products_saturate

    if int8_products_saturate():
        pytest.skip("no VNNI: int8 is not the default on this CPU (its u8×s8 products may clip)")
    int8, fp32 = load_embedder(runtime="onnx-int8"), load_embedder(runtime="onnx-fp32")
    if (int8.runtime, fp32.runtime) != ("onnx-int8", "onnx-fp32"):
        pytest.skip("the embedder's ONNX copies are not built here (make install builds them)")
    assert int8.ref.model_id.endswith(INT8_ID) and fp32.ref.model_id != int8.ref.model_id
    corpus = {d["doc_id"]: d for d in map(json.loads, (data_dir / "scifact" / "corpus.jsonl").open())}
    claims = [c for c in map(json.loads, (data_dir / "scifact" / "claims_dev.jsonl").open()) if c["cited_doc_ids"]][:60]
    ids = sorted({i for c in claims for i in c["cited_doc_ids"]} | set(list(corpus)[:100]))
    texts = [f"{corpus[i]['title']}. {' '.join(corpus[i]['abstract'])}" for i in ids]
    vectors, recall = {}, {}
    for name, embedder in (("int8", int8), ("fp32", fp32)):
        docs, queries = embedder.encode(texts), embedder.encode([c["claim"] for c in claims])
        vectors[name] = docs
        top = np.argsort(-(queries @ docs.T), axis=1)[:, :5]
        recall[name] = np.mean([len({ids[j] for j in row} & set(c["cited_doc_ids"])) / len(set(c["cited_doc_ids"]))
                                       for row, c in zip(top, claims, strict=True)])
    cos = (vectors["int8"] * vectors["fp32"]).sum(1)
    assert cos.mean() > 0.996 and cos.min() > 0.98
    assert recall["fp32"] > 0.8  # a real retrieval (recall@5), and int8 within two of its 60 claims
    assert recall["int8"] >= recall["fp32"] - 2 / len(claims)
