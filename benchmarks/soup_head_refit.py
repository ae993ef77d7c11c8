"""A verifier soup with its classifier refitted: measured against a rule written first (issue 16).

Two seeds of one recipe start from the same pretrained encoder but from different random
classifier heads. Their uniform soup (Wortsman et al. 2022, "Model soups", §2;
``models/interpolate.py``) averages the encoders, which share a starting point, and also the two
heads, which do not. This script keeps the soup's encoder and pooler and refits only the
classifier (384 → 3): multinomial logistic regression on the soup's pooler outputs for pairs of
one parent's training mix (a train_nli.py bundle), the standardisation folded into the linear
layer, so the result is an ordinary ``BertForSequenceClassification`` folder.

    PYTHONPATH=. python benchmarks/soup_head_refit.py --model runs/soup_v9 --bundle gpu/mix_run9.json.xz \\
        --n 30000 --out runs/soup_v9_head

Nothing here changes what ships (docs/verifier_v2.md, "A soup of run 9's two CPU seeds").
"""

from __future__ import annotations

import argparse
import json
import lzma
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def fold_standardisation(coef: np.ndarray, intercept: np.ndarray, mean: np.ndarray,
                         scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(W, b) of one linear layer equal to a linear model fitted on standardised features:
    coef · ((x − mean) / scale) + intercept = W · x + b."""
    W = coef / scale
    return W, intercept - W @ mean


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--bundle", type=Path, required=True)
    ap.add_argument("--n", type=int, default=30_000)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    import torch
    from safetensors.torch import save_file
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler
    from transformers import AutoTokenizer

    from models.train_nli import LABEL2ID, collate, encode, load_fp32

    torch.set_num_threads(args.threads)
    with lzma.open(args.bundle, "rt", encoding="utf-8") as fh:
        mix = json.load(fh)["mix"]
    pairs = random.Random(args.seed).sample(mix, min(args.n, len(mix)))
    tok = AutoTokenizer.from_pretrained(args.model)
    model = load_fp32(args.model)
    model.eval()
    feats = encode(tok, pairs, args.max_length)
    order = np.argsort([len(f["input_ids"]) for f in feats], kind="stable")
    X = np.zeros((len(pairs), model.config.hidden_size), dtype=np.float32)
    t0 = time.perf_counter()
    with torch.no_grad():
        for s in range(0, len(order), 64):
            idx = order[s:s + 64]
            batch = collate([feats[i] for i in idx], tok.pad_token_id)
            batch.pop("labels")
            X[idx] = model.bert(**batch).pooler_output.numpy()
    y = np.array([LABEL2ID[p["label"]] for p in pairs])
    print(f"pooled {len(pairs)} pairs in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    scaler = StandardScaler().fit(X)
    lr = LogisticRegression(C=args.C, max_iter=3000).fit(scaler.transform(X), y)
    W, b = fold_standardisation(lr.coef_, lr.intercept_, scaler.mean_, scaler.scale_)  # (3, hidden), (3,)
    before = (model.classifier(torch.from_numpy(X)).argmax(1).numpy() == y).mean()
    with torch.no_grad():
        model.classifier.weight.copy_(torch.from_numpy(W.astype(np.float32)))
        model.classifier.bias.copy_(torch.from_numpy(b.astype(np.float32)))
    after = (model.classifier(torch.from_numpy(X)).argmax(1).numpy() == y).mean()
    print(f"training-pair accuracy: averaged head {before:.4f}, refitted head {after:.4f}", file=sys.stderr)

    args.out.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(args.out)
    state = {k: v.detach().to(torch.float16).contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(args.out / "model.safetensors"), metadata={"format": "pt"})
    for name in ("tokenizer.json", "tokenizer_config.json"):
        if (args.model / name).exists():
            shutil.copy(args.model / name, args.out / name)
    (args.out / "head_refit.json").write_text(json.dumps({
        "method": "soup encoder + classifier refitted by multinomial logistic regression on pooler outputs",
        "model": str(args.model), "bundle": str(args.bundle), "n": len(pairs), "C": args.C, "seed": args.seed,
        "train_accuracy_averaged_head": float(before), "train_accuracy_refitted_head": float(after),
        "labels": {k: int((y == v).sum()) for k, v in LABEL2ID.items()},
    }, indent=2) + "\n")


if __name__ == "__main__":
    main()
