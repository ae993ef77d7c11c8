"""models.tokenizer.FolderTokenizer gives transformers' tokenisation for every call the embedded
models make on ONNX Runtime, and a check's models then load without torch or transformers."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from models.nli import EMBEDDED_NLI_DIR
from models.registry import resolve_embedder
from models.tokenizer import FolderTokenizer
from tests.conftest import FIXTURES, ROOT

ODD = ["", " ", "Gödel's café — naïve résumé", "北京是中国的首都。", "emoji 😀 test", "tab\tnew\nline", "a" * 3000,
       "[CLS] [SEP] [PAD]", "x\u200by", "Ǆ ﬁ ½"]


@pytest.mark.parametrize("folder", [EMBEDDED_NLI_DIR, resolve_embedder(None).path], ids=["verifier", "embedder"])
def test_folder_tokenizer_matches_transformers(folder):
    from transformers import AutoTokenizer

    rows = [json.loads(line) for line in (FIXTURES / "fever_symmetric_dev_20.jsonl").open(encoding="utf-8")]
    rows += [json.loads(line) for line in (FIXTURES / "vitaminc_pairs_30.jsonl").open(encoding="utf-8")]
    wiki = [json.loads(line)["text"] for line in (FIXTURES / "wiki_vital_summaries_300.jsonl").open(encoding="utf-8")][:40]
    premises = [str(r.get("evidence") or r.get("premise") or "") for r in rows] + wiki + ODD
    claims = [str(r.get("claim") or r.get("hypothesis") or "") for r in rows] + [w[:90] for w in wiki] + ODD[::-1]
    assert len(premises) > 80 and sum(bool(p) for p in premises) > 70
    hf, ours = AutoTokenizer.from_pretrained(str(folder), local_files_only=True), FolderTokenizer(folder)
    for max_length in (256, 40):
        for i in range(0, len(premises), 32):
            p, c = premises[i : i + 32], claims[i : i + 32]
            for second in (c, None):
                a = hf(p, second, truncation="longest_first", max_length=max_length, padding=True, return_tensors="np")
                b = ours.batch(p, second, max_length)
                assert sorted(a) == sorted(b)
                assert all(np.array_equal(a[k], b[k]) for k in a)
        lengths = hf(premises, claims, truncation="longest_first", max_length=max_length,
                     return_attention_mask=False, return_token_type_ids=False)["input_ids"]
        assert ours.lengths(premises, claims, max_length) == [len(x) for x in lengths]
    for text in premises + claims:
        assert ours.ids(text) == hf(text, add_special_tokens=False)["input_ids"]
        offsets = hf(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        assert ours.offsets(text) == [tuple(o) for o in offsets]


def test_a_checks_models_load_without_torch_or_transformers_when_on_onnx():
    """spaCy (thinc would import torch), the embedder and the verifier on their ONNX exports."""
    code = (
        "import sys\nfrom models.nlp import SpacyPipeline, SubjectTerms\nfrom models.embed import load_embedder\n"
        "from models.nli import load_nli\nterms = SubjectTerms(pipeline=SpacyPipeline())('The Eiffel Tower is in Berlin.')\n"
        "e, n = load_embedder(), load_nli()\nv = e.encode(['a sentence'])\n"
        "p = n.predict_long([('Paris is the capital of France.', 'Paris is in France.')])[0].probs\n"
        "print(e.runtime, n.runtime, sorted(terms), round(float(abs(v).sum()), 3) > 0, float(p[0]) > 0.5,"
        " sorted(m for m in ('torch', 'transformers') if sys.modules.get(m)))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    runtimes, _, rest = res.stdout.strip().splitlines()[-1].partition(" [")
    if runtimes.split()[:2] != ["onnx-fp32", "onnx-fp32"]:
        pytest.skip(f"ONNX exports not built here (make install builds them): {runtimes}")
    assert rest == "'eiffel', 'tower'] True True []"
