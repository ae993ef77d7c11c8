"""The house's layering: the import-linter contracts in pyproject.toml hold (they count imports
inside functions and under TYPE_CHECKING, which a run-time check cannot see), each stage
package imports alone, and core/, store/ and models/ never load the TUI or textual (checked
in a fresh interpreter)."""

from __future__ import annotations

import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str) -> list[str]:
    names = [package]
    for info in pkgutil.walk_packages([str(ROOT / package.replace(".", "/"))], prefix=f"{package}."):
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


def test_the_cli_and_settings_start_without_the_store_or_the_retrieval_stack():
    """A command that never opens the database (``decompose``, ``verify`` with given evidence,
    ``--help``) starts without sqlite-utils (~0.1 s) or the retrieval stack: the error handler
    needs only ``store.errors``, the settings only ``core.retrieve.modes``; ``store.open_db``
    still loads on first use (PEP 562)."""
    code = ("import sys, tui.cli.root, core.settings, core.workbench, store; "
            "print(sorted(m for m in sys.modules if m in ('sqlite_utils', 'store.db', 'core.retrieve.searcher'))); "
            "from store import open_db, write_tx; import store.db; "
            "assert open_db is store.db.open_db and write_tx is store.db.write_tx; "
            "assert store.StoreError is store.db.StoreError; print('ok')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["[]", "ok"], res.stdout


STAGES = ["core.ingest", "core.decompose", "core.retrieve", "core.verify", "core.score", "core.diagnostics",
          "core.pipeline", "core.evaluate", "core.workbench", "core.settings"]


def test_each_stage_package_imports_alone():
    for name in STAGES:
        res = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True, cwd=ROOT,
                             timeout=120)
        assert res.returncode == 0, f"{name}: {res.stderr.strip().splitlines()[-1:]}"


def test_import_linter_contracts_hold():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    res = subprocess.run([exe, "--no-cache"], capture_output=True, text=True, cwd=ROOT, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "0 broken" in res.stdout, res.stdout[-3000:] + res.stderr[-2000:]
    assert res.returncode == 0
    assert res.stdout.count(" KEPT") >= 4  # every contract of pyproject.toml ran


def test_stage_packages_never_reach_the_store_at_run_time():
    """The forbidden contract's run-time twin: importing every stage module loads no store module."""
    stage_modules = [m for pkg in ("core.decompose", "core.verify", "core.score", "core.diagnostics") for m in _modules(pkg)]
    code = (
        "import importlib, sys\n"
        f"for m in {stage_modules!r}: importlib.import_module(m)\n"
        "print(sorted(m for m in sys.modules if m == 'store' or m.startswith('store.')))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
