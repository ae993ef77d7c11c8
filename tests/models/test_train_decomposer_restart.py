"""Warm restart of the decomposer's training (models/train_decomposer.py ``--init-adapter
--start-step``): adapter weights from a PEFT folder (safetensors), the learning-rate schedule
where the interrupted run left it, fresh AdamW moments. A half-loaded adapter or a schedule
restarted from its warm-up would silently train something else, so both are checked here.
"""

from __future__ import annotations

import pytest
import torch

from models.train_decomposer import load_init_adapter, main, make_schedule, position_schedule


class Block(torch.nn.Module):
    """Stand-in for one attention block: LoRA targets named as in the SmolLM2 config."""

    def __init__(self) -> None:
        super().__init__()
        self.q_proj = torch.nn.Linear(8, 8)
        self.v_proj = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.v_proj(torch.relu(self.q_proj(x)))


def lora(r: int = 4, targets: tuple[str, ...] = ("q_proj", "v_proj")):
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)  # same base weights and LoRA init every time
    return get_peft_model(Block(), LoraConfig(r=r, lora_alpha=2 * r, target_modules=list(targets)))


def test_schedule_positioned_at_step_n_matches_the_uninterrupted_run():
    total, n = 130, 83
    p = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.AdamW([p], lr=6e-4)
    sched = make_schedule(opt, total, 0.05)
    lrs = []
    for _ in range(total):
        lrs.append(opt.param_groups[0]["lr"])  # the lr step k+1 is taken with
        p.grad = torch.ones(2)
        opt.step()
        sched.step()
    assert lrs[0] < lrs[5] and lrs[-1] < lrs[n] < lrs[10]  # warm-up, then decay

    q = torch.nn.Parameter(torch.zeros(2))
    opt2 = torch.optim.AdamW([q], lr=6e-4)
    sched2 = make_schedule(opt2, total, 0.05)
    position_schedule(sched2, n)
    assert opt2.param_groups[0]["lr"] == pytest.approx(lrs[n])
    assert opt2.param_groups[0]["lr"] == pytest.approx(6e-4 * (total - n) / (total - 6))
    assert not opt2.state  # fresh moments: nothing carried over
    for k in range(n, total):
        assert opt2.param_groups[0]["lr"] == pytest.approx(lrs[k])
        q.grad = torch.ones(2)
        opt2.step()
        sched2.step()


def test_init_adapter_loads_every_lora_tensor(tmp_path):
    trained = lora()
    with torch.no_grad():
        for name, prm in trained.named_parameters():
            if "lora_" in name:
                prm.add_(torch.randn_like(prm))
    trained.save_pretrained(str(tmp_path / "adapter"))
    fresh = lora()
    x = torch.randn(3, 8)
    assert not torch.allclose(fresh(x), trained(x))
    assert load_init_adapter(fresh, tmp_path / "adapter") == 4  # A and B of q_proj and v_proj
    for (n1, p1), (n2, p2) in zip(trained.named_parameters(), fresh.named_parameters(), strict=True):
        assert n1 == n2 and torch.equal(p1, p2), n1
    assert torch.allclose(fresh(x), trained(x))


def test_init_adapter_that_does_not_fit_is_refused(tmp_path):
    lora(r=4).save_pretrained(str(tmp_path / "r4"))
    with pytest.raises(ValueError, match="shapes differ"):
        load_init_adapter(lora(r=8), tmp_path / "r4")
    lora(targets=("q_proj",)).save_pretrained(str(tmp_path / "q_only"))
    with pytest.raises(ValueError, match="2 tensors missing"):
        load_init_adapter(lora(), tmp_path / "q_only")
    with pytest.raises(ValueError, match=r"no adapter_model\.safetensors"):
        load_init_adapter(lora(), tmp_path)


@pytest.mark.parametrize("argv", [["--start-step", "83"], ["--init-adapter", "x", "--resume"]])
def test_restart_options_are_checked_before_any_model_loads(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "--init-adapter" in capsys.readouterr().err
