"""The machine a run was computed on, for its manifest.

Why: model outputs are reproducible bit for bit only on the same machine. The same
(model file, input, settings, seed) gives identical numbers there, but another CPU's
floating-point kernels (AVX2 vs AVX-512 code paths, another BLAS, a GPU build of llama.cpp)
round differently, and a probability can move in its third decimal (docs/architecture.md,
"Reproducibility"). A run therefore records its CPU and instruction-set extensions next to its
model files, so a difference between two runs can be told apart from a change of code.
"""

from __future__ import annotations

import os
import platform
from functools import cache

from models.cpu import cpu_info, cpu_name

# The instruction-set extensions that select different numeric kernels in torch, onnxruntime
# and llama.cpp; the rest of /proc/cpuinfo's flags do not change a result.
_ISA = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
        "avx512_bf16", "avx_vnni", "amx_tile", "amx_bf16", "asimd", "sve")


@cache
def cpu() -> tuple[str, tuple[str, ...]]:
    """(CPU model name, its numerically relevant ISA extensions), from the one reader of
    /proc/cpuinfo (``models.cpu``); off Linux the platform module's name is all there is."""
    return cpu_name(), tuple(f for f in _ISA if f in (cpu_info().flags or ()))


def machine_manifest() -> dict:
    """A run-manifest entry (role ``machine``, stored beside the model files' entries): the
    CPU's name as ``model_id``; architecture, OS, usable cores and ISA extensions as
    ``revision``."""
    name, isa = cpu()
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    revision = f"{platform.machine()} {platform.system()} cores={cores} isa={','.join(isa) or 'unknown'}"
    return {"role": "machine", "model_id": name, "path": None, "sha256": None, "revision": revision}
