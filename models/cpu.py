"""The CPU's instruction-set flags, for the choices that depend on them.

Why: two of them pick a precision by what the hardware computes exactly or fast. The int8 ONNX
copies are served by default only where VNNI makes their products exact
(``models.onnx_build.int8_products_saturate``); bf16 training is only faster where bfloat16 is
multiplied in hardware (``models.train_decomposer.native_bf16``). One reader serves both.
(``core.machine`` records the flags in run manifests; ``models`` never imports ``core``.)
"""

from __future__ import annotations

from functools import cache


@cache
def cpu_flags(path: str = "/proc/cpuinfo") -> frozenset[str] | None:
    """The flags of the first processor block of ``path`` (``flags`` on x86, ``Features`` on
    Arm), or None where it cannot be read (not Linux). Read once per process."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip().lower() in ("flags", "features"):
                    return frozenset(value.split())
    except OSError:
        return None
    return frozenset()
