"""Weight-space ensembling of two verifier checkpoints (WiSE-FT).

Why: every continued-training run of the verifier so far gained on the product's passages and
lost 0.5-2.5 points on FEVER-Symmetric (docs/verifier_v2.md). WiSE-FT (Wortsman et al. 2022,
"Robust fine-tuning of zero-shot models", §2) keeps the robustness of the starting model and
most of the fine-tuned gains by interpolating the weights of the two,

    θ_α = (1 − α) · θ_0 + α · θ_ft,

which is possible because θ_ft was fine-tuned from θ_0 (same architecture, same tensors). The
result is one model of the same size, so inference speed is unchanged.

Usage::

    python -m models.interpolate --base models/verifier --tuned runs/v2r4 --alpha 0.5 --out runs/wise_050

The tensors are mixed in float32 and written as float16 safetensors (the shipped format);
config and tokenizer files are copied from ``--base``. Never pickle.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import torch

_COPY = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def interpolate_state(base: dict[str, torch.Tensor], tuned: dict[str, torch.Tensor],
                      alpha: float) -> dict[str, torch.Tensor]:
    """θ_α = (1 − α)·θ_base + α·θ_tuned for every floating tensor (WiSE-FT §2, eq. 1).

    Integer tensors (position ids) must be equal in both and are copied. Raises ValueError
    when the two state dicts do not hold the same tensors: then θ_tuned was not fine-tuned
    from θ_base and the interpolation is meaningless.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if base.keys() != tuned.keys():
        raise ValueError(f"different tensors: {sorted(base.keys() ^ tuned.keys())[:5]}")
    out = {}
    for k, a in base.items():
        b = tuned[k]
        if a.shape != b.shape:
            raise ValueError(f"{k}: shape {tuple(a.shape)} vs {tuple(b.shape)}")
        if a.is_floating_point():
            mixed = (1.0 - alpha) * a.float() + alpha * b.float()
            out[k] = mixed.to(a.dtype).contiguous()
        else:
            if not torch.equal(a, b):
                raise ValueError(f"{k}: integer tensors differ")
            out[k] = a.clone()
    return out


def interpolate_dirs(base: Path, tuned: Path, alpha: float, out: Path) -> Path:
    """Write ``out/model.safetensors`` (+ config / tokenizer of ``base``) for one α."""
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    with safe_open(str(base / "model.safetensors"), framework="pt") as fh:
        metadata = fh.metadata() or {"format": "pt"}
    mixed = interpolate_state(load_file(str(base / "model.safetensors")),
                              load_file(str(tuned / "model.safetensors")), alpha)
    out.mkdir(parents=True, exist_ok=True)
    for name in _COPY:
        if (base / name).is_file():
            shutil.copyfile(base / name, out / name)
    save_file(mixed, str(out / "model.safetensors"), metadata=metadata)
    (out / "interpolation.json").write_text(json.dumps(
        {"method": "WiSE-FT (Wortsman et al. 2022, §2): (1 - alpha) * base + alpha * tuned",
         "base": str(base), "tuned": str(tuned), "alpha": alpha}, indent=1) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, type=Path, help="the starting model (θ_0), e.g. models/verifier")
    ap.add_argument("--tuned", required=True, type=Path, help="the model fine-tuned from it (θ_ft)")
    ap.add_argument("--alpha", required=True, type=float, action="append",
                    help="weight of the tuned model, 0..1 (repeat for several; out gets a _<alpha> suffix)")
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args(argv)
    for a in args.alpha:
        out = args.out if len(args.alpha) == 1 else args.out.with_name(f"{args.out.name}_{round(a * 100):03d}")
        try:
            interpolate_dirs(args.base, args.tuned, a, out)
        except (ValueError, FileNotFoundError) as exc:
            print(f"error: {exc}")
            return 2
        print(f"alpha {a}: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
