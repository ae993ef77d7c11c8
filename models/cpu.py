"""The CPU's name and instruction-set flags, for the choices that depend on them.

Why: two of them pick a precision by what the hardware computes exactly or fast. The int8 ONNX
copies are served by default only where VNNI makes their products exact
(``models.onnx_build.int8_products_saturate``); bf16 training is only faster where bfloat16 is
multiplied in hardware (``models.precision.native_bf16``). A run's manifest records the
name and the flags (``core.machine``), because model outputs are exact only on one CPU. One reader
serves all three (``models`` never imports ``core``, so the reader lives here).
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from functools import cache

# Keys of /proc/cpuinfo that name the CPU: x86 ("model name"), some Arm and MIPS kernels.
_NAME_KEYS = ("model name", "hardware", "cpu model")


@dataclass(frozen=True)
class CpuInfo:
    """The first processor block of ``/proc/cpuinfo``: the CPU's name (None where no line names
    it) and its flags (None where the file cannot be read, that is, not Linux)."""

    name: str | None
    flags: frozenset[str] | None


@cache
def cpu_info(path: str = "/proc/cpuinfo") -> CpuInfo:
    """Read ``path`` once per process: it cannot change while the process runs. The first
    processor block is enough (every core of one machine reports the same flags)."""
    name, flags = None, None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                if key in _NAME_KEYS and value.strip() and name is None:
                    name = value.strip()
                elif key in ("flags", "features") and flags is None:
                    flags = frozenset(value.split())
                elif key == "" and flags is not None:  # the end of the first processor block
                    break
    except OSError:
        return CpuInfo(None, None)
    return CpuInfo(name, flags if flags is not None else frozenset())


def cpu_flags(path: str = "/proc/cpuinfo") -> frozenset[str] | None:
    """The flags of the first processor block of ``path`` (``flags`` on x86, ``Features`` on
    Arm), or None where it cannot be read (not Linux)."""
    return cpu_info(path).flags


def cpu_name() -> str:
    """The CPU's name for logs and manifests: ``/proc/cpuinfo``'s, else the platform module's
    (empty on Linux, hence the file first), else the architecture."""
    return cpu_info().name or platform.processor() or platform.machine()
