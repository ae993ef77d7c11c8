"""The decomposer's data mix (models/train_decomposer.py ``build_mix``) on the real shared data:
FActScore topics by fold, or every topic for the shipped adapter, and the FEVERFact test
sentences never among the training examples."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from models.train_decomposer import REPO_ROOT, build_mix, in_fold, norm, read_jsonl

CONFIG = REPO_ROOT / "models" / "train_decomposer.toml"


def mix(fold: str) -> tuple[list[dict], dict]:
    cfg = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    cfg["data"]["factscore_fold"] = fold
    return build_mix(cfg)


def test_the_shipped_config_trains_on_every_topic_and_the_folds_partition_it():
    cfg = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert cfg["data"]["factscore_fold"] == "all" and in_fold("any topic", "all")
    examples, counts = mix("all")
    used = {f: mix(f)[1][f"factscore_fold{f.replace('/', 'of')}"]["used"] for f in ("0/3", "1/3", "2/3")}
    assert counts["factscore_all"]["used"] == sum(used.values()) > 0
    # "!2/3" is folds 0 and 1: what the recipe was measured with before every topic shipped
    assert mix("!2/3")[1]["factscore_fold!2of3"]["used"] == used["0/3"] + used["1/3"]
    # each FActScore sentence is seen twice per epoch (repeat), under the source name the config names
    assert sum(e["source"] == "factscore_all" for e in examples) == 2 * counts["factscore_all"]["used"]
    # ... and a fold run of the same config repeats its FActScore sentences too (the key is "factscore")
    fold_examples, fold_counts = mix("!2/3")
    assert sum(e["source"] == "factscore_fold!2of3" for e in fold_examples) == 2 * fold_counts["factscore_fold!2of3"]["used"]
    with pytest.raises(ValueError, match="bad fold"):
        in_fold("x", "every")


def test_a_repeat_that_names_no_source_of_the_mix_is_an_error():
    cfg = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    cfg["data"]["factscore_fold"] = "!2/3"
    cfg["data"]["repeat"] = {"factscore_all": 2}  # the fold run's source is factscore_fold!2of3
    with pytest.raises(SystemExit, match=r"data\.repeat names factscore_all, not a source of this mix"):
        build_mix(cfg)


def test_no_feverfact_test_sentence_is_trained_on():
    cfg = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    root = (REPO_ROOT / cfg["data"]["root"]).resolve()
    test = {norm(r["sentence"]) for rel in cfg["data"]["blocklist_files"] for r in read_jsonl(Path(root / rel))}
    examples, _ = mix("all")
    assert test and not {norm(e["sentence"]) for e in examples} & test


def test_precision_is_fp32_or_bf16_autocast_and_nothing_else():
    import torch

    from models.precision import mixed_precision

    x = torch.ones(2, 2)
    with mixed_precision("bf16"):
        assert (x @ x).dtype == torch.bfloat16  # matrix products in bf16
    with mixed_precision("fp32"):
        assert (x @ x).dtype == torch.float32
    with pytest.raises(SystemExit, match="fp32 or bf16"):
        mixed_precision("fp16")


def test_bf16_without_hardware_support_is_kept_but_said(capsys):
    """A CPU without AVX512-BF16 / AMX emulates bfloat16 (3x slower a step than fp32, measured):
    the run keeps the precision it was asked for, and says what it costs."""
    import torch

    from models.precision import mixed_precision, native_bf16

    assert native_bf16(frozenset({"avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile"})) is True
    assert native_bf16(frozenset({"avx2", "avx512f", "avx512_vnni"})) is False
    assert native_bf16(frozenset({"avx2", "amx_bf16"})) is True
    assert native_bf16(None) is None
    x = torch.ones(2, 2)
    with mixed_precision("bf16", native=False):
        assert (x @ x).dtype == torch.bfloat16
    assert "bfloat16 is emulated" in capsys.readouterr().err
    with mixed_precision("bf16", native=True), mixed_precision("fp32", native=False):
        pass
    assert capsys.readouterr().err == ""


def test_cpu_flags_are_the_first_processor_blocks(tmp_path):
    """One reader serves the int8 default, the bf16 warning and the run manifest's CPU name."""
    from models.cpu import cpu_flags, cpu_info

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: X\nflags\t\t: fpu avx2 avx512_vnni\n\n"
                    "processor\t: 1\nflags\t\t: fpu sse2\n")
    assert cpu_flags(str(info)) == frozenset({"fpu", "avx2", "avx512_vnni"})
    assert cpu_info(str(info)).name == "X"
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd\n\nprocessor\t: 1\nFeatures\t: fp\n\nHardware\t: late\n")
    assert cpu_flags(str(arm)) == frozenset({"fp", "asimd"})
    assert cpu_info(str(arm)).name is None  # a name after the first block is not read
    assert cpu_flags(str(tmp_path / "none")) is None
    assert cpu_info(str(tmp_path / "none")).name is None


def test_cpu_name_falls_back_to_the_platform_where_cpuinfo_names_none(monkeypatch):
    import models.cpu

    monkeypatch.setattr(models.cpu, "cpu_info", lambda: models.cpu.CpuInfo(None, None))
    monkeypatch.setattr(models.cpu.platform, "processor", lambda: "")
    monkeypatch.setattr(models.cpu.platform, "machine", lambda: "x86_64")
    assert models.cpu.cpu_name() == "x86_64"
    monkeypatch.setattr(models.cpu, "cpu_info", lambda: models.cpu.CpuInfo("AMD EPYC", None))
    assert models.cpu.cpu_name() == "AMD EPYC"


def test_instructgpt_facts_add_one_target_where_people_wrote_facts():
    """``factscore_model_facts``: FActScore's InstructGPT decomposition of a sentence is one more
    example beside the human facts, only for sentences people decomposed (an irrelevant sentence
    with no human facts must not learn to produce some)."""
    cfg = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    cfg["data"]["factscore_fold"] = "!2/3"
    cfg["data"]["factscore_model_facts"] = True
    examples, counts = build_mix(cfg)
    human = [e for e in examples if e["source"] == "factscore_fold!2of3"]
    model = [e for e in examples if e["source"] == "factscore_fold!2of3_instructgpt"]
    assert counts["factscore_fold!2of3_instructgpt"]["used"] == counts["factscore_fold!2of3"]["used"] == len(model)
    assert {e["sentence"] for e in model} == {e["sentence"] for e in human}
    by_sentence = {e["sentence"]: e for e in model}
    first = human[0]
    assert by_sentence[first["sentence"]]["context"] == first["context"]
    edited = sum(by_sentence[e["sentence"]]["facts"] != e["facts"] for e in human)
    assert 0 < edited < len(human)  # the annotators edited InstructGPT's facts of many sentences, not all
    assert len(examples) == len(mix("!2/3")[0]) + len(model)
