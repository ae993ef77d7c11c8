"""Train claimscope's atomic-fact decomposer: a LoRA adapter over the embedded SmolLM2 GGUF.

Usage (from the repository root, offline; training-only deps: ``pip install '.[train]'``)::

    nice -n 5 .venv/bin/python -m models.train_decomposer --config models/train_decomposer.toml \
        --work runs/decomposer --log models/decomposer/training_log.jsonl [--resume] [--probe-steps N]

What it does, all driven by the TOML config:

* builds the data mix: FActScore dev human atomic facts of the topics of ``factscore_fold``
  (``K/N``, ``!K/N`` or ``all``; a topic's fold is the SHA-1 of the topic modulo N, as in
  ``core.evaluate.decompose.in_fold``, so a recipe is measured on folds it never saw before the
  shipped adapter trains on ``all``), FEVERFact validation and
  FActScore's human-written demonstrations; any sentence that also occurs in a blocklisted
  (evaluation) file is dropped;
* renders each sentence with the runtime's own prompt (``models/atomic.py``: context = the
  answer's first and previous sentence) through the GGUF's chat template, and the target as
  "- fact" lines ending with the end-of-turn token; the loss is on the answer tokens only;
* loads the installed Q4_1 GGUF dequantised (``gguf_file=``) — the exact weights llama.cpp
  applies the adapter to at run time — and trains a LoRA (``peft``) with AdamW, linear
  warm-up + linear decay, gradient clipping, length-bucketed batches;
* checkpoints every ``checkpoint_every`` steps to ``<work>/checkpoint`` (adapter, optimiser,
  scheduler, RNG, step); ``--resume`` continues from there;
* ``--init-adapter DIR --start-step N`` is a warm restart for a run whose checkpoint cannot be
  read (the first run's optimiser state was a torch pickle, which this project never loads):
  the adapter weights of step N (a PEFT folder, safetensors), the learning-rate schedule
  positioned at step N of the same plan, the plan's batches from N on, and FRESH AdamW moments
  (logged as a ``warm_restart`` event);
* writes the adapter in PEFT format to ``<work>/adapter`` and the base's config and tokenizer
  to ``<work>/base`` (what ``models/export_decomposer.py`` needs to write the LoRA GGUF), and
  appends every event (data mix, recipe, losses, timing) to the JSONL log.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import platform
import random
import re
import sys
import time
import tomllib
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch

from models.atomic import answer_text, context_of, flat_messages
from models.cpu import cpu_flags, cpu_name
from models.llm import EMBEDDED_LLM_FILE, EMBEDDED_LLM_PACKAGE
from models.precision import mixed_precision, native_bf16
from models.train_nli import load_training_state, save_training_state

REPO_ROOT = Path(__file__).resolve().parent.parent
_LOG_PATH: Path | None = None


def log_event(kind: str, **fields) -> None:
    rec = {"time": datetime.now(UTC).isoformat(timespec="seconds"), "event": kind, **fields}
    print(json.dumps(rec, ensure_ascii=False), flush=True)
    if _LOG_PATH is not None:
        _LOG_PATH.parent.mkdir(parents=True, exist_ok=True)
        with open(_LOG_PATH, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def base_gguf() -> Path:
    spec = importlib.util.find_spec(EMBEDDED_LLM_PACKAGE)  # never imported (models/llm.py)
    if spec is None or not spec.origin:
        sys.exit(f"{EMBEDDED_LLM_PACKAGE} is not installed")
    return Path(spec.origin).parent / EMBEDDED_LLM_FILE


def in_fold(topic: str, spec: str) -> bool:
    """Same convention as ``core.evaluate.decompose.in_fold`` ("K/N" keeps fold K, "!K/N" the
    rest); "all" keeps every topic (the shipped adapter, once the folds have measured the recipe)."""
    if spec == "all":
        return True
    m = re.fullmatch(r"(!?)(\d+)/(\d+)", spec)
    if not m:
        raise ValueError(f"bad fold {spec!r}")
    fold = int(hashlib.sha1(topic.encode("utf-8")).hexdigest(), 16) % int(m[3])
    return (fold == int(m[2])) != bool(m[1])


def norm(s: str) -> str:
    return " ".join(re.findall(r"\w+", s.lower()))


def read_jsonl(path: Path):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def build_mix(cfg: dict) -> tuple[list[dict], dict]:
    """Training examples {sentence, context, facts, source} and counts per source."""
    data = cfg["data"]
    root = (REPO_ROOT / data["root"]).resolve()
    cchars = cfg["prompt"]["context_chars"]
    block = set()
    for rel in data.get("blocklist_files", []):
        for rec in read_jsonl(root / rel):
            block.add(norm(rec.get("sentence") or ""))
    out: list[dict] = []
    counts: dict[str, dict] = {}
    fold = data["factscore_fold"]
    fs_source = "factscore_all" if fold == "all" else "factscore_fold" + fold.replace("/", "of")
    repeat = data.get("repeat", {})

    def times(source: str) -> int:
        """How often each example of ``source`` is seen per epoch: ``repeat``'s entry for the source,
        and "factscore" stands for FActScore's source whatever the fold (a fold run of the shipped
        config once trained without its repeat because the key named ``factscore_all``)."""
        if source in repeat:
            return int(repeat[source])
        return int(repeat.get("factscore", 1)) if source == fs_source else 1

    def add(source: str, sentence: str, context: str, facts: list[str]) -> None:
        c = counts.setdefault(source, {"used": 0, "no_facts": 0, "blocked": 0})
        facts = [f.strip() for f in facts if isinstance(f, str) and f.strip()]
        if not facts:
            c["no_facts"] += 1
            return
        if norm(sentence) in block:
            c["blocked"] += 1
            return
        c["used"] += 1
        for _ in range(times(source)):
            out.append({"source": source, "sentence": sentence.strip(), "context": context, "facts": facts})

    for rel in data["factscore_files"]:
        for rec in read_jsonl(root / rel):
            if not in_fold(str(rec.get("topic") or ""), data["factscore_fold"]):
                continue
            anns = [a for a in rec.get("annotations") or [] if isinstance(a, dict) and isinstance(a.get("text"), str)]
            for i, a in enumerate(anns):
                ctx = context_of(anns[0]["text"], anns[i - 1]["text"], cchars) if i else ""
                human = [f.get("text") for f in a.get("human-atomic-facts") or []]
                add(fs_source, a["text"], ctx, human)
                if data.get("factscore_model_facts") and any(isinstance(f, str) and f.strip() for f in human):
                    # InstructGPT's decomposition of the same sentence (FActScore's model-atomic-facts, what
                    # the annotators edited): one more target in the same style, only where people wrote facts
                    add(fs_source + "_instructgpt", a["text"], ctx,
                        [f.get("text") for f in a.get("model-atomic-facts") or []])
    for rel in data["feverfact_files"]:
        for rec in read_jsonl(root / rel):
            sc = rec.get("sentence_context") or []
            prev = sc[1] if len(sc) > 1 and isinstance(sc[1], str) else ""
            body = (rec.get("context") or "").split("\n", 1)
            first = body[1].split(". ")[0] + "." if len(body) > 1 and body[1] else ""
            sent = rec["sentence"]
            first = "" if norm(first) and norm(sent).startswith(norm(first)) else first
            add("feverfact_validation", sent, context_of(first, prev, cchars), rec.get("facts") or [])
    for rel in data["demons_files"]:
        seen = {norm(e["sentence"]) for e in out}
        for rec in read_jsonl(root / rel):
            if norm(rec["sentence"]) in seen:  # 3 complex demonstrations repeat simple ones
                continue
            add(rec.get("source") or Path(rel).stem, rec["sentence"], "", rec.get("facts") or [])
    unknown = sorted(set(repeat) - set(counts) - {"factscore"})
    if unknown:
        sys.exit(f"data.repeat names {', '.join(unknown)}, not a source of this mix ({', '.join(sorted(counts))}); "
                 "'factscore' repeats FActScore's facts whatever the fold")
    return out, counts


def encode(tok, examples: list[dict], max_length: int) -> tuple[list[dict], int]:
    feats, dropped = [], 0
    for ex in examples:
        msgs = flat_messages(ex["sentence"], ex["context"])
        prompt = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        p_ids = tok(prompt, add_special_tokens=False)["input_ids"]
        a_ids = tok(answer_text(ex["facts"]) + "<|im_end|>", add_special_tokens=False)["input_ids"]
        ids = p_ids + a_ids
        if len(ids) > max_length:
            dropped += 1
            continue
        feats.append({"input_ids": ids, "labels": [-100] * len(p_ids) + a_ids})
    return feats, dropped


def batches(feats: list[dict], batch_size: int, epochs: int, seed: int) -> list[list[int]]:
    """Per epoch: shuffle, sort blocks of 20 batches by length (less padding), shuffle batches."""
    rng = random.Random(seed)
    out = []
    for _ in range(epochs):
        idx = list(range(len(feats)))
        rng.shuffle(idx)
        block = batch_size * 20
        ep = []
        for s in range(0, len(idx), block):
            chunk = sorted(idx[s : s + block], key=lambda i: len(feats[i]["input_ids"]))
            ep += [chunk[j : j + batch_size] for j in range(0, len(chunk), batch_size)]
        rng.shuffle(ep)
        out += ep
    return out


def collate(feats: list[dict], pad_id: int) -> dict[str, torch.Tensor]:
    n = max(len(f["input_ids"]) for f in feats)
    ids = torch.full((len(feats), n), pad_id, dtype=torch.long)
    lab = torch.full((len(feats), n), -100, dtype=torch.long)
    att = torch.zeros((len(feats), n), dtype=torch.long)
    for i, f in enumerate(feats):
        k = len(f["input_ids"])
        ids[i, :k] = torch.tensor(f["input_ids"])
        lab[i, :k] = torch.tensor(f["labels"])
        att[i, :k] = 1
    return {"input_ids": ids, "labels": lab, "attention_mask": att}


def answer_loss(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean next-token cross-entropy over the answer tokens only. The vocabulary projection
    (49,152 x 576, a fifth of the model's multiply-adds per token) is applied only where a
    label exists, not to the prompt: same loss as ``model(labels=...)``, less time and memory."""
    hidden = model.base_model.model.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    labels = batch["labels"][:, 1:]
    keep = labels != -100
    logits = model.base_model.model.lm_head(hidden[:, :-1][keep])
    return torch.nn.functional.cross_entropy(logits.float(), labels[keep])


def make_schedule(opt: torch.optim.Optimizer, total: int, warmup_ratio: float) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up over ``warmup_ratio`` of ``total`` steps, then linear decay to 0 at ``total``."""
    warm = max(1, int(total * warmup_ratio))
    return torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm)) if s >= warm
        else (s + 1) / warm)


def position_schedule(sched: torch.optim.lr_scheduler.LambdaLR, step: int) -> None:
    """Put a fresh schedule where it stands after ``step`` optimiser steps (a warm restart):
    the optimiser's lr becomes the one the uninterrupted run would use for step ``step + 1``."""
    import warnings

    with warnings.catch_warnings():  # "scheduler.step() before optimizer.step()": intended here
        warnings.simplefilter("ignore", UserWarning)
        for _ in range(step):
            sched.step()


def load_init_adapter(model, folder: Path) -> int:
    """Load a PEFT adapter folder (``adapter_model.safetensors``; never a pickle) into the LoRA
    ``model``; every LoRA tensor of the model must be present with its shape, or ValueError
    (a silently half-loaded adapter would train from partly random weights). Returns the count."""
    from peft import get_peft_model_state_dict, set_peft_model_state_dict
    from safetensors.torch import load_file

    path = folder / "adapter_model.safetensors"
    if not path.exists():
        path = folder / "adapter.safetensors"
    if not path.exists():
        raise ValueError(f"no adapter_model.safetensors in {folder}")
    sd = load_file(str(path))
    want = get_peft_model_state_dict(model)
    missing = sorted(set(want) - set(sd))
    extra = sorted(set(sd) - set(want))
    if missing or extra:
        raise ValueError(f"adapter {path} does not fit the model: {len(missing)} tensors missing "
                         f"({missing[:2]}), {len(extra)} unexpected ({extra[:2]})")
    bad = [k for k in want if tuple(want[k].shape) != tuple(sd[k].shape)]
    if bad:
        raise ValueError(f"adapter {path}: shapes differ for {len(bad)} tensors ({bad[:2]})")
    set_peft_model_state_dict(model, sd)
    return len(sd)


def main(argv: list[str] | None = None) -> int:
    global _LOG_PATH
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--config", default="models/train_decomposer.toml")
    ap.add_argument("--work", default="runs/decomposer", help="checkpoints, PEFT adapter, HF base dir")
    ap.add_argument("--log", default="models/decomposer/training_log.jsonl")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--probe-steps", type=int, default=0, help="only time N steps (nothing saved)")
    ap.add_argument("--max-minutes", type=float, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--init-adapter", default=None,
                    help="warm restart: start from this PEFT adapter folder (fresh AdamW moments)")
    ap.add_argument("--start-step", type=int, default=0,
                    help="with --init-adapter: the step those weights were saved at (schedule and batches resume there)")
    args = ap.parse_args(argv)
    if args.start_step and not args.init_adapter:
        ap.error("--start-step needs --init-adapter")
    if args.init_adapter and args.resume:
        ap.error("--init-adapter and --resume exclude each other")
    cfg = tomllib.loads(Path(args.config).read_text(encoding="utf-8"))
    tr = cfg["train"]
    seed = int(cfg["seed"])
    work = Path(args.work)
    ckpt = work / "checkpoint"
    _LOG_PATH = None if args.probe_steps else Path(args.log)
    torch.set_num_threads(args.threads)
    random.seed(seed)
    torch.manual_seed(seed)

    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = base_gguf()
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    model.config.use_cache = False
    lc = cfg["lora"]
    model = get_peft_model(model, LoraConfig(
        r=lc["r"], lora_alpha=lc["alpha"], lora_dropout=lc["dropout"], target_modules=lc["target_modules"],
        bias="none", task_type="CAUSAL_LM"))

    examples, counts = build_mix(cfg)
    feats, dropped = encode(tok, examples, tr["max_length"])
    plan = batches(feats, tr["batch_size"], tr["epochs"], seed)[: tr.get("max_steps") or None]
    total = len(plan) if not args.probe_steps else args.probe_steps
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=tr["lr"],
                            weight_decay=tr["weight_decay"])
    sched = make_schedule(opt, total, tr["warmup_ratio"])
    step = 0
    if args.init_adapter:
        if not 0 <= args.start_step < total:
            sys.exit(f"--start-step {args.start_step} is outside the plan's {total} steps")
        n = load_init_adapter(model, Path(args.init_adapter))
        position_schedule(sched, args.start_step)
        step = args.start_step
        log_event("warm_restart", init_adapter=args.init_adapter, tensors=n, start_step=step, of=total,
                  lr=sched.get_last_lr()[0], optimizer="fresh AdamW moments (the earlier state is not carried over)",
                  config=cfg, config_path=args.config, base=str(gguf), mix={k: v for k, v in counts.items()},
                  examples=len(examples), encoded=len(feats), dropped_too_long=dropped,
                  torch=torch.__version__, threads=args.threads)
    elif args.resume and (ckpt / "state.json").exists():
        set_peft_model_state_dict(model, load_file(str(ckpt / "adapter.safetensors")))
        step = load_training_state(ckpt, model, opt, sched)["step"]  # safetensors + JSON, no pickle
        log_event("resume", step=step)
    else:
        log_event("start", config=cfg, config_path=args.config, base=str(gguf), base_file=gguf.name,
                  mix={k: v for k, v in counts.items()}, examples=len(examples), encoded=len(feats),
                  dropped_too_long=dropped, steps=total, batch_size=tr["batch_size"], epochs=tr["epochs"],
                  trainable_params=sum(p.numel() for p in model.parameters() if p.requires_grad),
                  torch=torch.__version__, python=platform.python_version(), threads=args.threads,
                  machine=platform.machine(), cpu=cpu_name())

    def save_ckpt() -> None:
        from peft import get_peft_model_state_dict
        from safetensors.torch import save_file

        ckpt.mkdir(parents=True, exist_ok=True)
        sd = {k: v.contiguous() for k, v in get_peft_model_state_dict(model).items()}
        save_file(sd, str(ckpt / "adapter.safetensors"))
        save_file(sd, str(ckpt / "adapter_model.safetensors"))  # with the config: a PEFT folder the exporter reads
        model.peft_config["default"].save_pretrained(str(ckpt))
        save_training_state(ckpt, model, opt, sched, {"step": step})

    start_step = step
    autocast = mixed_precision(tr.get("precision", "fp32"), native_bf16(cpu_flags()),
                               on_emulated=lambda: log_event("bf16_emulated"))
    budget = (args.max_minutes or tr.get("max_minutes") or 1e9) * 60
    t0 = time.time()
    model.train()
    run_loss, run_n, stopped = 0.0, 0, False
    while step < total:
        if time.time() - t0 > budget:
            stopped = True
            break
        batch = collate([feats[i] for i in plan[step]], tok.pad_token_id)
        with autocast:
            loss = answer_loss(model, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tr["grad_clip"])
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        run_loss += float(loss.detach())
        run_n += 1
        if step % tr["log_every"] == 0 or step == total or args.probe_steps:
            log_event("train", step=step, of=total, epoch=round(step * tr["batch_size"] / len(feats), 3),
                      loss=round(run_loss / run_n, 4), lr=sched.get_last_lr()[0],
                      s_per_step=round((time.time() - t0) / max(1, step - start_step), 2))
            run_loss, run_n = 0.0, 0
        if not args.probe_steps and step % tr["checkpoint_every"] == 0:
            save_ckpt()
    if args.probe_steps:
        print(f"probe: {(time.time() - t0) / max(1, step):.2f} s/step over {step} steps; "
              f"{len(plan)} steps planned for the full run")
        return 0
    save_ckpt()
    model.save_pretrained(str(work / "adapter"))
    base = work / "base"
    base.mkdir(parents=True, exist_ok=True)
    model.base_model.model.config.save_pretrained(str(base))
    tok.save_pretrained(str(base))
    log_event("end", step=step, of=total, stopped_early=stopped, minutes=round((time.time() - t0) / 60, 1),
              adapter=str(work / "adapter"), base_dir=str(base))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
