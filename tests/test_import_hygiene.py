"""core/, store/ and models/ never import the TUI or textual (checked in a fresh interpreter)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str) -> list[str]:
    names = [package]
    for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
        if not info.name.endswith("__main__") and ".train_" not in info.name:
            names.append(info.name)
    return names


def test_headless_packages_do_not_load_textual_or_tui():
    modules = _modules("core") + _modules("store") + _modules("models")
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith(('textual.', 'tui')))\n"
        "print(','.join(bad))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "", f"headless packages imported: {res.stdout.strip()}"
    assert len(modules) > 10  # the walk really found the modules


def test_store_imports_nothing_of_core_or_models():
    code = "import sys, store, store.sources, store.records; print(any(m.startswith(('core', 'models')) for m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.stdout.strip() == "False", res.stderr
