"""What every benchmark report records about the software and the machine."""

from __future__ import annotations

import os
import platform


def claimscope_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("claimscope")
    except PackageNotFoundError:
        return "unknown"


def machine(device: str = "cpu") -> dict:
    """Cores, device, platform, and the CPU with its ISA extensions: figures computed by
    floating-point kernels are exact only on the same CPU (core/machine.py)."""
    from core.machine import cpu

    name, isa = cpu()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return {"cpus": cpus, "device": device, "platform": platform.platform(), "cpu": name, "isa": list(isa)}
