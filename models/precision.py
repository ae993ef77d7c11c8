"""Mixed precision for the two trainers (``models.train_nli``, ``models.train_decomposer``).

Why one place: both train on the 2-core CPU where no GPU is lent, and on Zen 4 cores with
AVX512-BF16 bfloat16 matrix products cut a step's time. Measured: the decomposer (session 9,
FActScore folds 0-1, 200 steps) 1.6x faster a step, losses equal to 3 digits, held-out fold-2 F1
-.004 [-.019, +.011] against fp32; the verifier (session 33, batch 32) 2.1x a step and 1.8-1.9x
over a whole pass, its replicate of run9a within seed noise (docs/verifier_v2.md, "Training in bf16
on the CPU"). Weights, optimiser moments and the loss stay in float32 (autocast keeps
``cross_entropy`` in float32), so a bf16 run differs from an fp32 one only by the rounding of its
products. ``"fp32"`` (no autocast) stays the default of every recipe: a run's precision is part of
what it measures.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import torch

PRECISIONS = ("fp32", "bf16")


def native_bf16(flags: frozenset[str] | None) -> bool | None:
    """Whether a CPU with these flags (``models.cpu.cpu_flags``) multiplies bfloat16 in hardware
    (AVX512-BF16 or AMX); None where the flags are unknown (not Linux)."""
    return None if flags is None else bool({"avx512_bf16", "amx_bf16"} & flags)


def mixed_precision(precision: str, native: bool | None = True, device_type: str = "cpu",
                    on_emulated: Callable[[], None] | None = None):
    """The autocast context for ``precision`` on ``device_type`` ("cpu" or "cuda").

    ``"bf16"``: matrix products in bfloat16 under autocast, everything else in float32.
    ``"fp32"``: autocast disabled. Without hardware bfloat16 (``native`` False) the products are
    emulated and slower than fp32: session 28, an Intel Xeon with AVX-512 VNNI but no AVX512-BF16,
    took 49.7 s a decomposer step in bf16 against 16.9 s in fp32. The run keeps the precision it
    was asked for, says what it costs on stderr and calls ``on_emulated`` (the trainer's log)."""
    if precision not in PRECISIONS:
        sys.exit(f"train.precision must be fp32 or bf16, not {precision!r}")
    if precision == "bf16" and native is False:
        print("warning: train.precision = \"bf16\" on a CPU without AVX512-BF16 / AMX: bfloat16 is emulated "
              "and a step takes about 3x as long as in fp32 (set precision = \"fp32\")", file=sys.stderr)
        if on_emulated is not None:
            on_emulated()
    return torch.autocast(device_type, dtype=torch.bfloat16, enabled=precision == "bf16")
