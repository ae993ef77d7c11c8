"""Does all-MiniLM-L6-v2 fine-tuned on SciFact *train* claims find dev claims' abstracts better?
(issue 21: the measure before any adapter is built into the product.)

Training pairs: each training claim (with evidence, else its cited abstracts) → the passage that
holds its first rationale sentence and up to two rationale sentences as written (the two texts the
default's two stages embed), one hard negative each (a passage of another abstract from the
claim's dense top 20 in the evaluation database; else a random passage). Loss: multiple-negatives
ranking (in-batch + the hard negatives, scale 20), AdamW lr 2e-5, batch 32, linear decay after
10 warm-up steps, mean pooling as the shipped embedder; torch on the CPU.

Measured on dev claims: the corpus's passages and sentences re-embedded with the tuned model
(torch fp32), dense-only document recall@5 and the default's two stages with the shipped fusion
rules (benchmarks/fusion_joint_fit.py's vectorised copy), against the same database's vectors of
the shipped embedder (its int8 copy on VNNI CPUs: two runtimes, which the report's ``base`` names),
paired bootstrap over claims.

    PYTHONPATH=. python benchmarks/embedder_finetune_probe.py --db DB \\
        --out /tmp/emb_scifact --json benchmarks/results/embedder_finetune_probe_scifact.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.fusion_joint_fit import (  # noqa: E402
    corpus_sentences,
    evaluate,
    gather,
    only,
    paired,
    sentence_links,
    write_report,
)
from core.evaluate.retrieval import scifact_bench  # noqa: E402
from core.evaluate.retrieval_sets import load_retrieval_set  # noqa: E402
from core.ingest.index import passage_embedding_text  # noqa: E402
from core.retrieve.fusion import FusionParams, load_fusion  # noqa: E402
from core.retrieve.sentence_score import load_params as load_sentence_score  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "scifact"
DENSE_ONLY = (FusionParams("rrf", 5, {"bm25": 0.0, "dense": 1.0}), FusionParams("rrf", 5, {"fused": 1.0, "sentence": 0.0}))


def training_examples(bench, claims_path: Path, corpus_path: Path, seed: int) -> list[tuple[str, str, str]]:
    """(claim, positive, hard negative) triples from the training claims (module docstring)."""
    rng = random.Random(seed)
    abstracts = {str(d["doc_id"]): d["abstract"] for d in map(json.loads, corpus_path.read_text().splitlines())}
    passages: dict[str, list[tuple[int, str, str]]] = {}
    for pid, ext, title, text in bench.db.execute(
            "SELECT p.id, d.ext_id, p.title, p.text FROM passages p JOIN documents d ON d.id = p.document_id"):
        passages.setdefault(ext, []).append((pid, passage_embedding_text(title, text), text))
    text_of = {pid: t for ps in passages.values() for pid, t, _ in ps}
    every = list(text_of.values())
    out = []
    for c in map(json.loads, claims_path.read_text().splitlines()):
        gold = set(c["evidence"]) or {str(d) for d in c.get("cited_doc_ids", [])}
        ranked = bench.dense["flat"].retrieve(c["claim"], 20)
        negatives = [text_of[pid] for pid, _ in ranked if bench.doc_of[pid] not in gold][:3]
        for d in sorted(gold):
            if d not in passages:
                continue
            rationale = [i for e in c["evidence"].get(d, []) for i in e["sentences"]]
            if rationale:
                first = abstracts[d][rationale[0]].strip()
                holding = [t for _, t, raw in passages[d] if first[:60] in raw] or [passages[d][0][1]]
                positives = [holding[0], *(abstracts[d][i].strip() for i in rationale[:2])]
            else:
                positives = [passages[d][0][1]]
            for p in positives:
                out.append((c["claim"], p, rng.choice(negatives) if negatives else rng.choice(every)))
    return out


def train(base: Path, examples: list[tuple[str, str, str]], out: Path, epochs: int, lr: float, batch: int,
          seed: int) -> dict:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = SentenceTransformer(str(base), device="cpu")
    net, tok = model[0].auto_model, model.tokenizer
    net.train()
    steps = epochs * (len(examples) // batch)
    opt = torch.optim.AdamW(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10) * max(0.0, 1 - s / steps))

    def encode(texts: list[str]):
        b = tok(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
        mask = b["attention_mask"].unsqueeze(-1).float()
        pooled = (net(**b).last_hidden_state * mask).sum(1) / mask.sum(1)
        return torch.nn.functional.normalize(pooled, dim=-1)

    t0, losses = time.perf_counter(), []
    for _ in range(epochs):
        rng.shuffle(examples)
        for i in range(0, len(examples) - batch + 1, batch):
            chunk = examples[i : i + batch]
            q = encode([e[0] for e in chunk])
            d = encode([e[1] for e in chunk] + [e[2] for e in chunk])
            loss = torch.nn.functional.cross_entropy(20.0 * q @ d.T, torch.arange(len(chunk)))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
    net.eval()
    model.save(str(out))
    return {"examples": len(examples), "steps": steps, "train_s": time.perf_counter() - t0,
            "loss_first10": float(np.mean(losses[:10])), "loss_last10": float(np.mean(losses[-10:]))}


def reembedded(bench, model_dir: Path):
    """(corpus tuple as fusion_joint_fit.corpus_sentences gives it, passage matrix, query encoder)
    with every passage and sentence of the database embedded by ``model_dir``."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu")
    rows = bench.db.execute("SELECT title, text FROM passages ORDER BY id").fetchall()
    passages = model.encode([passage_embedding_text(title, text) for title, text in rows], batch_size=64,
                            normalize_embeddings=True)
    pids, texts, owner, sent = sentence_links(bench.db)
    corpus = (pids, model.encode(texts, batch_size=128, normalize_embeddings=True), owner, sent)
    return corpus, passages, lambda text: model.encode([text], normalize_embeddings=True)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="SciFact evaluation database (indexed if new)")
    ap.add_argument("--out", type=Path, required=True, help="folder for the tuned model")
    ap.add_argument("--corpus", type=Path, default=DATA / "corpus.jsonl")
    ap.add_argument("--train", type=Path, default=DATA / "claims_train.jsonl")
    ap.add_argument("--dev", type=Path, default=DATA / "claims_dev.jsonl")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    from core.settings import load_settings
    from core.workbench import Workbench
    from models.embed import resolve_embedder

    wb = Workbench(load_settings(None))
    with scifact_bench(args.corpus, wb.embedder, wb.splitter, index_kinds=["flat"], db_path=args.db) as bench:
        examples = training_examples(bench, args.train, args.corpus, args.seed)
        report = {"task": "embedder_finetune_probe", "base": bench.embedder.ref.model_id,
                  "recipe": {"epochs": args.epochs, "lr": args.lr, "batch": args.batch, "seed": args.seed,
                             "loss": "multiple-negatives ranking, scale 20, one hard negative"}}
        report["training"] = train(resolve_embedder("default").path, examples, args.out, args.epochs, args.lr,
                                   args.batch, args.seed)
        print(f"trained: {report['training']}", file=sys.stderr)
        dev = load_retrieval_set("scifact", args.dev, args.corpus).claims
        shipped = [only(c, ("bm25", "dense")) for c in gather(bench, dev, corpus_sentences(
            bench.db, bench.embedder.ref.model_id))]
        t0 = time.perf_counter()
        corpus, passages, encode = reembedded(bench, args.out)
        report["reembed_s"] = time.perf_counter() - t0
        tuned = [only(c, ("bm25", "dense")) for c in gather(bench, dev, corpus, encode, passages)]
    rules = (load_fusion(), load_sentence_score())
    for name, (first, second) in (("dense", DENSE_ONLY), ("hybrid-sentence", rules)):
        a = evaluate(shipped, first, [second])[0][:, 0]
        b = evaluate(tuned, first, [second])[0][:, 0]
        report[name] = {"shipped_recall@5": float(a.mean()), "tuned_recall@5": float(b.mean()), **paired(a, b)}
    write_report(report, args.json)


if __name__ == "__main__":
    main()
