"""Verifier training checkpoints (models/train_nli.py): resumable without pickle.

A run interrupted under ``nice`` on a shared machine must continue exactly where it
stopped: same weights, same AdamW moments and step counts, same learning-rate schedule.
"""

from __future__ import annotations

import json

import pytest
import torch

from models.nli import EMBEDDED_NLI_DIR
from models.train_nli import LABEL2ID, collate, encode, load_checkpoint, load_fp32, save_checkpoint

PAIRS = [
    {"premise": "Antoine Henri Becquerel was a French experimental physicist.",
     "hypothesis": "Marie Curie was born in Warsaw.", "label": "neutral"},
    {"premise": "The Eiffel Tower is a lattice tower on the Champ de Mars in Paris, France.",
     "hypothesis": "The Eiffel Tower is located in Berlin.", "label": "contradiction"},
]


def _setup():
    from transformers import AutoTokenizer, get_linear_schedule_with_warmup

    torch.manual_seed(0)
    model = load_fp32(EMBEDDED_NLI_DIR)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    sched = get_linear_schedule_with_warmup(opt, 2, 10)
    tok = AutoTokenizer.from_pretrained(EMBEDDED_NLI_DIR)
    return model, opt, sched, tok


def _step(model, opt, sched, tok):
    batch = collate(encode(tok, PAIRS, 64), tok.pad_token_id)
    model(**batch).loss.backward()
    opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model, opt, sched, tok = _setup()
    for _ in range(2):
        _step(model, opt, sched, tok)
    ckpt = tmp_path_factory.mktemp("ckpt") / "checkpoint"
    save_checkpoint(ckpt, model, opt, sched, {"step": 2, "seen": 4, "losses": [1.0]})
    return model, opt, sched, tok, ckpt


def test_checkpoint_holds_no_pickle(trained):
    *_, ckpt = trained
    names = sorted(p.name for p in ckpt.iterdir())
    assert names == ["model.safetensors", "optimizer.safetensors", "state.json"]
    state = json.loads((ckpt / "state.json").read_text())
    assert state["step"] == 2 and state["scheduler"]["last_epoch"] == 2
    assert all(v["step"] == 2.0 for v in state["optimizer_scalars"].values())


def test_resume_restores_weights_moments_and_schedule(trained):
    model, opt, sched, tok, ckpt = trained
    model2, opt2, sched2, _ = _setup()
    meta = load_checkpoint(ckpt, model2, opt2, sched2)
    assert meta["seen"] == 4
    for (n, p), p2 in zip(model.named_parameters(), model2.parameters(), strict=True):
        assert torch.equal(p, p2), n
        st, st2 = opt.state[p], opt2.state[p2]
        assert torch.equal(st["exp_avg"], st2["exp_avg"]) and torch.equal(st["exp_avg_sq"], st2["exp_avg_sq"])
        assert float(st["step"]) == float(st2["step"])
    assert sched2.get_last_lr() == sched.get_last_lr()
    assert [g["lr"] for g in opt2.param_groups] == [g["lr"] for g in opt.param_groups]
    # one more step from either side lands on the same weights (dropout RNG restored too)
    rng = torch.get_rng_state()
    _step(model2, opt2, sched2, tok)
    torch.set_rng_state(rng)
    _step(model, opt, sched, tok)
    diff = max((p - p2).abs().max().item() for p, p2 in zip(model.parameters(), model2.parameters(), strict=True))
    assert diff < 1e-6, diff
    assert LABEL2ID["neutral"] == 1


def test_device_choice_trains_on_a_gpu_only_where_there_is_one():
    """``--device auto`` takes a CUDA GPU when torch sees one (the lent machine) and the CPU
    otherwise; asking for a GPU that is not there, or for an unknown device, stops with a message."""
    from models.train_nli import pick_device

    assert pick_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert pick_device("cpu").type == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit, match="no CUDA GPU"):
            pick_device("cuda")
    with pytest.raises(SystemExit, match="auto, cpu or cuda"):
        pick_device("tpu")

