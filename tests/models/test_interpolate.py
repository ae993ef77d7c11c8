"""WiSE-FT weight interpolation (models/interpolate.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from models.interpolate import interpolate_dirs, interpolate_state

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "models" / "verifier"


def test_interpolation_is_the_convex_combination():
    base = {"w": torch.tensor([0.0, 2.0, -4.0]), "ids": torch.arange(3)}
    tuned = {"w": torch.tensor([4.0, 2.0, 0.0]), "ids": torch.arange(3)}
    assert torch.equal(interpolate_state(base, tuned, 0.0)["w"], base["w"])
    assert torch.equal(interpolate_state(base, tuned, 1.0)["w"], tuned["w"])
    assert torch.allclose(interpolate_state(base, tuned, 0.25)["w"], torch.tensor([1.0, 2.0, -3.0]))
    assert torch.equal(interpolate_state(base, tuned, 0.5)["ids"], torch.arange(3))
    with pytest.raises(ValueError):
        interpolate_state(base, {"w": tuned["w"]}, 0.5)  # not the same tensors
    with pytest.raises(ValueError):
        interpolate_state(base, tuned, 1.5)


def test_interpolated_shipped_model_loads_and_judges_like_its_ends(tmp_path):
    """Two real checkpoints: v1 and v1 with its classifier head's bias moved; the α = 0.5 model
    is v1 with the bias moved half way, and it loads and runs as a verifier."""
    from safetensors.torch import load_file, save_file

    from models.nli import CrossEncoderNLI
    from models.registry import ModelRef

    tuned = tmp_path / "tuned"
    tuned.mkdir()
    state = load_file(str(V1 / "model.safetensors"))
    bias = next(k for k in state if k.startswith("classifier") and k.endswith("bias"))
    state[bias] = (state[bias].float() + torch.tensor([2.0, 0.0, -2.0])).to(state[bias].dtype)
    save_file(state, str(tuned / "model.safetensors"), metadata={"format": "pt"})
    out = interpolate_dirs(V1, tuned, 0.5, tmp_path / "mid")
    mid = load_file(str(out / "model.safetensors"))
    base = load_file(str(V1 / "model.safetensors"))
    assert torch.allclose(mid[bias].float(), base[bias].float() + torch.tensor([1.0, 0.0, -1.0]), atol=1e-2)
    other = next(k for k in base if k != bias and base[k].is_floating_point())
    assert torch.equal(mid[other], base[other])
    pair = ("Marie Curie discovered polonium and radium.", "Marie Curie discovered polonium.")
    p_v1 = CrossEncoderNLI(ModelRef("nli", "v1", V1)).predict([pair])[0]
    p_mid = CrossEncoderNLI(ModelRef("nli", "mid", out)).predict([pair])[0]
    # LABELS order is (entailment, neutral, contradiction): the bias moved toward entailment
    assert p_v1.argmax() == p_mid.argmax() == 0 and p_mid[0] > p_v1[0]


def test_a_verifier_made_by_the_recipe_gets_the_shipped_windows(tmp_path):
    """`eval grounding --verifier PATH` on a candidate (trained or interpolated here) must judge
    with the embedded verifier's 96-token windows, the path it would ship on; any other plug-in
    folder keeps its whole max_length."""
    from models.nli import EMBEDDED_WINDOW_TOKENS, load_nli

    out = interpolate_dirs(V1, V1, 0.5, tmp_path / "mid")  # writes interpolation.json
    assert load_nli(str(out), runtime="torch").window_tokens == EMBEDDED_WINDOW_TOKENS
    plain = tmp_path / "plain"
    plain.mkdir()
    for f in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(V1 / f, plain / f)
    assert load_nli(str(plain), runtime="torch").window_tokens is None
    (plain / "training_summary.json").write_text("{}")
    assert load_nli(str(plain), runtime="torch").window_tokens == EMBEDDED_WINDOW_TOKENS
