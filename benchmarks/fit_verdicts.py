"""Fit the learned claim-verdict model (core/verify/verdict_model.py) on train splits only.

One command collects every training claim's judgements with the shipped verifier, turns them
into features, fits an L2 multinomial logistic regression and writes
``core/verify/data/verdict_model.json`` (with the training data named inside):

    python benchmarks/fit_verdicts.py [--only climate-fever,vitaminc,fever-wiki,scifact] [--scifact-db DB1] [--wiki-db DB2]

``DB1`` holds the source ``scifact`` (``claimscope --db DB1 source add scifact
../shared/data/scifact/corpus.jsonl -f scifact``), ``DB2`` the source ``wiki-vital`` (indexed by
the first ``claimscope --db DB2 demo``); one database holding both may be given twice. Training data (no dev / evaluation split is read):

- SciFact ``claims_train.jsonl``: each claim retrieved for (hybrid, top 5) over the SciFact
  corpus, as the product does (with ``--scifact-db``), or else judged against the abstracts it
  cites; gold SUPPORT → supported, CONTRADICT → refuted, no evidence → NEI.
- Climate-FEVER: the fit half of ``claimscope eval verdicts`` (seed 0; the other half is the
  held-out half that command reports), five curated sentences per claim with their article
  titles; DISPUTED → conflicting — the only source of that label.
- VitaminC real revisions (``real_dev_half.jsonl``, a training set for this project): the claim
  with its Wikipedia sentence (title = page) among 3 passages about other subjects — the
  sentences of other VitaminC pages sharing most words with the claim (the top-3 BM25 passages
  of wiki-vital with ``--vitaminc-wiki``) — gold = the pair's label; every fourth claim without
  its own sentence, gold NEI (other pages do not decide it).
- FEVER claims over wiki-vital (``fever-wiki``, needs ``--wiki-db``): claims of
  ``nli/fever_nli_rte`` retrieved for with the product's own searcher and judged by its
  verifier, kept only where the label is clear (:func:`collect_fever_wiki`) — the one set whose
  evidence comes from a source of entity documents, so the features about where evidence comes
  from (own article, named subject, ranks) are fitted on the cases they were made for.

Judgements are cached (``--cache``, outside the repository: it holds dataset text), so a refit
with other features or regularisation needs no model call: ``--from-cache FILE...``.

Weights per kind of source (``core.verify.verdict_model.source_kind``): ``--by-kind KIND=FILE[,FILE]``
(repeatable) fits one weight set per kind on those cached rows; ``--fallback JSON`` keeps an existing
file's weights as the top-level set (given documents, and any kind without its own) instead of
fitting them. The shipped file:

    python benchmarks/fit_verdicts.py --fallback core/verify/data/verdict_model.json \
        --by-kind entity=A.jsonl,B.jsonl --by-kind abstract=C.jsonl --out core/verify/data/verdict_model.json

(the file's top-level weights are kept, the per-kind sets named refitted, the others kept). Given
documents (``check --against``) have their own set, fitted on SciFact train claims judged against
the abstracts they cite through the given-document path (``--only scifact-given``):

    python benchmarks/fit_verdicts.py --only scifact-given --cache G.jsonl --out /tmp/unused.json
    python benchmarks/fit_verdicts.py --fallback core/verify/data/verdict_model.json \
        --by-kind given=G.jsonl --out core/verify/data/verdict_model.json

``--only fever-given --wiki-db DB`` collects a second, encyclopedic register the same way (FEVER
claims given their subject's wiki-vital article, and the article with the evidence deleted:
:func:`fever_given_items`). Neither register's weights are shipped: both were measured against
the fallback and lost on Factcheck-GPT (docs/benchmarks.md, sessions 11 and 12).

After the verifier's weights
change, rerun without ``--from-cache``: the features depend on the verifier.

``--anchors SHARE`` adds :func:`anchor_rows` to every fit, weighing SHARE of one dataset in total:
the subject's document (or another that names the subject) judged with one decisive unit, or with
nothing decisive, labelled by the evidence alone. Refitted on a v2 verifier's judgements without
them, the verdict layer learned "names the subject, so supported" (docs/verifier_v2.md, "Anchor
rows").
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from core.verify.base import Thresholds
from core.verify.verdict_model import FEATURES, extract, fit
from core.verify.verifier import VERDICTS, PassageEvidence, Verifier

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
VITAMINC = {"SUPPORTS": "supported", "REFUTES": "refuted", "NOT ENOUGH INFO": "not_enough_info"}


def _row(ds: str, claim: str, verdict, passages, terms, label: str) -> dict:
    """One training claim: its judgements (so features can be recomputed without the
    verifier: ``--from-cache``), titles, subject terms and gold label."""
    from core.verify.verifier import judgement_record

    js = [judgement_record(j, digits=5) for j in verdict.judgements]
    return {"dataset": ds, "label": label, "claim": claim, "terms": sorted(terms),
            "titles": {str(p.passage_id): p.title for p in passages}, "judgements": js}


def features_of(row: dict, zero: frozenset[str] = frozenset(), t: Thresholds | None = None) -> list[float]:
    """A cached row's feature vector; the features named in ``zero`` are set to 0 (an ablation:
    a constant column gets weight 0, so the fit is the one without those features). ``t``: the
    thresholds that decide which judgements count (default: the shipped ones)."""
    from core.verify.verifier import judgement_from_record

    js = [judgement_from_record(j) for j in row["judgements"]]
    titles = {int(k): v for k, v in row["titles"].items()}
    values = extract(row["claim"], js, titles, set(row["terms"]), t).values
    return [0.0 if name in zero else float(v) for name, v in zip(FEATURES, values, strict=True)]


def kind_of(row: dict) -> str:
    """The kind of source of a cached row's evidence (:func:`core.verify.verdict_model.source_kind`:
    its passages' source names and titles)."""
    from core.verify.verdict_model import source_kind

    srcs = row.get("sources", {})
    passages = [PassageEvidence(int(k), 0, (), "", t, srcs.get(k, "")) for k, t in row["titles"].items()]
    return source_kind(passages)


def collect_climate_fever(verifier: Verifier, terms_of, path: Path, seed: int = 0) -> list[dict]:
    from core.evaluate.verdicts import load_climate_fever_claims

    claims = load_climate_fever_claims(path)
    order = np.random.default_rng(seed).permutation(len(claims))
    out = []
    for i in sorted(order[: len(claims) // 2]):  # the fit half of `eval verdicts`
        claim, gold, sents = claims[i]
        passages = [PassageEvidence(j + 1, j + 1, (s,), s, title) for j, (s, title) in enumerate(sents)]
        v = verifier.verify(claim, passages)
        out.append(_row("climate-fever-fit-half", claim, v, passages, terms_of(claim), gold))
    return out


def collect_scifact(verifier: Verifier, terms_of, searcher, path: Path, k: int, limit: int | None) -> list[dict]:
    """With ``searcher``: hybrid top-k retrieval over the indexed corpus (the product's path).
    Without: the claim's cited abstracts (SciFact's oracle-abstract setting), one passage each."""
    from core.evaluate.datasets import load_scifact_claims
    from core.pipeline.runner import passage_evidence

    corpus = {}
    if searcher is None:
        with open(path.parent / "corpus.jsonl", encoding="utf-8") as fh:
            for line in fh:
                d = json.loads(line)
                corpus[str(d["doc_id"])] = (d["title"], tuple(d["abstract"]))
    out = []
    claims = load_scifact_claims(path)
    random.Random(0).shuffle(claims)
    for c in claims[: limit or None]:
        labels = {e["label"] for ev in c.evidence.values() for e in ev}
        gold = "supported" if "SUPPORT" in labels else "refuted" if "CONTRADICT" in labels else "not_enough_info"
        if searcher is None:
            docs = [corpus[d] for d in c.cited_doc_ids if d in corpus][:k]
            passages = [PassageEvidence(i + 1, i + 1, sents, " ".join(sents), title) for i, (title, sents) in enumerate(docs)]
        else:
            passages = passage_evidence(searcher.search(c.claim, k=k, mode="hybrid", sources=["scifact"]))
        v = verifier.verify(c.claim, passages)
        out.append(_row("scifact-train" if searcher else "scifact-train-cited", c.claim, v, passages, terms_of(c.claim), gold))
    return out


def collect_vitaminc(verifier: Verifier, terms_of, searcher, path: Path, limit: int, k: int = 3) -> list[dict]:
    """The claim's own sentence (title = its page) among k passages about other subjects:
    with ``searcher``, the top-k BM25 passages of wiki-vital; without, the k sentences of
    other VitaminC pages sharing the most words with the claim (as retrieval brings them)."""
    import re

    from core.pipeline.runner import passage_evidence

    with (gzip.open if path.suffix == ".gz" else open)(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    rng = random.Random(0)
    rng.shuffle(rows)

    def words(t: str) -> set[str]:
        return {w for w in re.findall(r"[a-z0-9]+", t.lower()) if len(w) > 3}

    pool = list({r["evidence"]: r for r in rows[limit:]}.values())[:5000]
    pool_words = [words(r["evidence"]) for r in pool]
    out = []
    for n, r in enumerate(rows[:limit]):
        claim, gold = r["claim"], VITAMINC[r["label"]]
        if searcher is not None:
            others = passage_evidence(searcher.search(claim, k=k, mode="bm25", sources=["wiki-vital"]))
        else:
            cw = words(claim)
            best = sorted(range(len(pool)), key=lambda i: -len(cw & pool_words[i]))
            picked = [pool[i] for i in best if pool[i]["page"] != r["page"]][:k]
            others = [PassageEvidence(100 + i, i + 1, (o["evidence"],), o["evidence"], o["page"]) for i, o in enumerate(picked)]
        if n % 4 == 3:  # without its own sentence: the other pages do not decide it
            passages, gold = others, "not_enough_info"
        else:
            ev = r["evidence"]
            own = PassageEvidence(-1, 0, (ev,), ev, r.get("page") or "")
            pos = rng.randint(0, len(others))
            passages = [*others[:pos], own, *others[pos:]]
            passages = [PassageEvidence(p.passage_id, i + 1, p.sentences, p.text, p.title) for i, p in enumerate(passages)]
        v = verifier.verify(claim, passages)
        out.append(_row("vitaminc-real", claim, v, passages, terms_of(claim), gold))
    return out


_FEVER_TOKENS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}",
                 "-COLON-": ":", "``": '"', "''": '"'}


def fever_detok(text: str) -> str:
    """FEVER's tokenised Wikipedia sentence as plain text ("Paris ( France ) ." → "Paris (France).")."""
    for k, v in _FEVER_TOKENS.items():
        text = text.replace(k, v)
    text = re.sub(r"\s+([.,;:!?%)\]}]|'s|n't|'re|'ve|'ll|'d)", r"\1", text)
    text = re.sub(r"([(\[{$])\s+", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in _STOP}


_STOP = {"the", "and", "was", "were", "for", "with", "that", "this", "from", "his", "her", "has", "had", "have",
         "are", "which", "who", "its", "also", "into", "than", "been", "one", "their", "they", "she", "him", "not"}


def evidence_found(evidence: list[str], sentences: list[str]) -> float:
    """How much of the gold evidence the retrieved text holds: the smallest, over the gold
    sentences, of the largest share of that sentence's content words found in one retrieved
    sentence (1: every gold sentence is there nearly verbatim)."""
    sents = [_content(s) for s in sentences]
    shares = []
    for ev in evidence:
        ew = _content(ev)
        if not ew:
            continue
        shares.append(max((len(ew & s) / len(ew) for s in sents), default=0.0))
    return min(shares) if shares else 0.0


def title_word_index(titles) -> dict[str, set[str]]:
    """Title word -> the titles holding it, to find a claim subject's own article
    (:func:`core.verify.verdict_model.title_is_subject` then decides)."""
    from core.verify.verdict_model import _words

    by_word: dict[str, set[str]] = {}
    for t in titles:
        for w in _words(t):
            by_word.setdefault(w, set()).add(t)
    return by_word


def load_fever_train(data: Path) -> list[tuple[str, str, list[str]]]:
    """(claim, SUPPORTS / REFUTES, gold evidence sentences) per claim of ``nli/fever_nli_rte``
    (FEVER shared-task claims with their gold evidence; this project's verifier trained on this
    file, it is no evaluation set), minus every claim or evidence sentence found in a dev /
    evaluation file (the verifier's decontamination lists, models/train_nli.py)."""
    import tomllib

    from models.train_nli import collect_blocklist, collect_premise_blocklist, norm_text, read_jsonl, sentence_keys

    cfg = tomllib.loads((Path(__file__).resolve().parents[1] / "models" / "train_nli_v2_run6.toml").read_text())
    claim_block = collect_blocklist(data, cfg)
    premise_block = collect_premise_blocklist(data, cfg)
    by_claim: dict[str, tuple[str, list[str]]] = {}
    dropped = 0
    for rec in read_jsonl(data / "nli" / "fever_nli_rte" / "dev_minus_eval.jsonl.gz"):
        claim, premise = rec["hypothesis"], rec["premise"]
        if norm_text(claim) in claim_block or any(k in premise_block for k in sentence_keys(premise)):
            dropped += 1
            continue
        label = "SUPPORTS" if rec["label"] == "entailment" else "REFUTES"
        ev = [fever_detok(s) for s in re.split(r"(?<= \.) ", premise) if s.strip()]
        if claim in by_claim and by_claim[claim][0] != label:
            by_claim[claim] = ("MIXED", [])
            continue
        by_claim.setdefault(claim, (label, []))[1].extend(ev)
    print(f"fever: {len(by_claim)} claims kept, {dropped} pairs dropped on dev / evaluation overlap", flush=True)
    return [(c, lab, ev) for c, (lab, ev) in by_claim.items() if lab != "MIXED"]


def _without_evidence(passages: list[PassageEvidence], evidence: list[str]) -> list[PassageEvidence]:
    """The passages with every sentence sharing ≥ .4 of any gold evidence sentence's content
    words removed (a passage left empty is dropped)."""
    out = []
    for p in passages:
        kept = tuple(s for s in p.sentences if evidence_found(evidence, [s]) < 0.4)
        if kept:
            out.append(PassageEvidence(p.passage_id, p.rank, kept, " ".join(kept), p.title))
    return out


def collect_fever_wiki(verifier: Verifier, terms_of, searcher, db, data: Path, limit: int, k: int = 10,
                       blind_titles: frozenset[str] = frozenset()) -> list[dict]:
    """FEVER claims through the product's own retrieval over wiki-vital (hybrid top ``k``, the
    demo's setting) and the product's verifier — so the features about where evidence comes
    from (own document, named subject, ranks) see real entity documents. Gold, kept only where
    it is clear: FEVER's label when the subject has its own wiki-vital article and the retrieved
    text holds FEVER's gold evidence (``evidence_found`` ≥ .5: the articles were revised since
    FEVER, and a sample at .5–.75 still states the fact in other words); NEI when the subject has no
    article of its own and nothing retrieved holds the evidence (< .4: passages about other
    things that mention it, the Becquerel shape). Every other claim is skipped: a lead section
    without FEVER's sentence may still state the fact in other words. Half the claims with an
    own article also get a twin with the evidence sentences deleted (gold NEI), so "own article
    present" does not stand for "decided". Up to 3 of 4 claims have an own article; claims whose
    retrieval reaches an article of ``blind_titles`` (the product-case / demo articles) are
    skipped, so the demo stays a test."""
    from core.pipeline.runner import passage_evidence
    from core.verify.verdict_model import title_is_subject

    claims = load_fever_train(data)
    random.Random(0).shuffle(claims)
    rng = random.Random(1)
    text_of: dict[str, str] = dict(db.execute("select title, text from documents").fetchall())
    by_word = title_word_index(text_of)  # wiki-vital title words → titles
    out, n_own, n_other, skipped = [], 0, 0, {"ambiguous": 0, "blind": 0}
    for claim, label, ev in claims:
        if len(out) >= limit:
            break
        terms = terms_of(claim)
        owns = {t for w in terms for t in by_word.get(w, ()) if title_is_subject(t, terms)}
        own = bool(owns)
        if (own and n_own >= limit * 3 // 4) or (not own and n_other >= limit // 4):
            continue
        # cheap test first: the own article must hold FEVER's evidence before anything is retrieved
        if own and max(evidence_found(ev, re.split(r"(?<=[.!?])\s+", text_of[t])) for t in owns) < 0.5:
            skipped["ambiguous"] += 1
            continue
        passages = passage_evidence(searcher.search(claim, k=k, mode="hybrid", sources=["wiki-vital"]))
        if any(p.title in blind_titles for p in passages):
            skipped["blind"] += 1
            continue
        found = evidence_found(ev, [s for p in passages for s in p.sentences])
        if (own and found < 0.5) or (not own and found >= 0.4):
            # the subject's own lead section without FEVER's sentence may still state (or
            # contradict) the claim in other words; another subject's article may hold it
            skipped["ambiguous"] += 1
            continue
        gold = VITAMINC[label] if own else "not_enough_info"
        n_own, n_other = n_own + own, n_other + (not own)
        v = verifier.verify(claim, passages)
        row = _row("fever-wiki-vital", claim, v, passages, terms, gold)
        row["evidence_found"] = round(found, 3)
        out.append(row)
        if own and rng.random() < 0.5:
            # its twin: the same retrieval with every sentence holding the evidence deleted → NEI
            # (FactCC §3.1 / MiniCheck §3 deletion at the claim level), so an own article that is
            # silent on the fact is seen too, not only own articles that decide
            silent = _without_evidence(passages, ev)
            twin = _row("fever-wiki-vital", claim, verifier.verify(claim, silent), silent, terms, "not_enough_info")
            twin["evidence_deleted"] = True
            out.append(twin)
        if len(out) % 50 == 0:
            print(f"  fever-wiki-vital {len(out)} claims ({n_own} with an own article), skipped {skipped}", flush=True)
    print(f"fever-wiki-vital: {len(out)} claims, skipped {skipped}", flush=True)
    return out


def product_case_titles() -> frozenset[str]:
    """Articles of the product-case fixture (the demo's and the issue's wiki-vital cases)."""
    path = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "verifier_product_cases.jsonl"
    with open(path, encoding="utf-8") as fh:
        return frozenset(a for line in fh if line.strip() for a in json.loads(line)["articles"])


def judge_given(verifier: Verifier, splitter, items: list[tuple[str, list[str], str]]):
    """Each item (claim, document texts, gold verdict) judged against its documents *given* with
    it, the way ``check --against`` and ``eval grounding`` judge them (core/pipeline/given.py:
    stored untitled under the reserved source in a temporary store, chunked, every sentence,
    passage window and sentence set judged; the word-piece grounding guard). Yields (claim,
    verdict, passages, gold, the given verifier)."""
    import tempfile

    from core.pipeline.given import GivenSearcher, given_verifier, store_given
    from core.pipeline.runner import passage_evidence
    from store import open_db
    from store.records import DocumentRecord

    given = given_verifier(verifier)
    with tempfile.TemporaryDirectory(prefix="claimscope-fit-given-") as tmp:
        db = open_db(Path(tmp) / "given.db")
        try:
            for claim, texts, gold in items:
                docs = [DocumentRecord(str(i), "", t) for i, t in enumerate(texts)]
                passages = passage_evidence(GivenSearcher(db, store_given(db, docs, splitter)).search(claim))
                yield claim, given.verify(claim, passages), passages, gold, given
        finally:
            db.close()


def collect_given(verifier: Verifier, splitter, dataset: str,
                  items: list[tuple[str, list[str], str]]) -> list[dict]:
    """Fitting rows of claims judged against their given documents (:func:`judge_given`). The rows
    are of source kind ``given``, the one kind whose weights this data can fit: a given document
    is the claim's whole evidence, often long, and every unit of it is judged, where the fallback
    weights were fitted on a few retrieved sentences (docs/benchmarks.md, sessions 11 and 12)."""
    out = []
    for claim, v, passages, gold, given in judge_given(verifier, splitter, items):
        terms = given.subject_terms(claim) if given.subject_terms else set()
        row = _row(dataset, claim, v, passages, terms, gold)
        row["sources"] = {str(p.passage_id): p.source for p in passages}  # the reserved source: kind "given"
        out.append(row)
    return out


def scifact_given_items(path: Path, limit: int | None) -> list[tuple[str, list[str], str]]:
    """SciFact train claims with the abstracts they cite; gold SUPPORT -> supported, CONTRADICT
    -> refuted, cited but no evidence -> NEI."""
    from core.evaluate.datasets import load_scifact_claims

    corpus: dict[str, str] = {}
    with open(path.parent / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            corpus[str(d["doc_id"])] = " ".join(" ".join(s.split()) for s in d["abstract"])
    claims = load_scifact_claims(path)
    random.Random(0).shuffle(claims)
    items = []
    for c in claims[: limit or None]:
        texts = [corpus[d] for d in c.cited_doc_ids if d in corpus]
        if not texts:
            continue
        labels = {e["label"] for ev in c.evidence.values() for e in ev}
        items.append((c.claim, texts, "supported" if "SUPPORT" in labels
                      else "refuted" if "CONTRADICT" in labels else "not_enough_info"))
    return items


def fever_given_items(claims: list[tuple[str, str, list[str]]], documents: dict[str, str], limit: int, terms_of,
                      blind_titles: frozenset[str] = frozenset()) -> list[tuple[str, list[str], str]]:
    """FEVER ``claims`` (:func:`load_fever_train`: ``nli/fever_nli_rte``, decontaminated) whose
    subject has exactly one article of its own among ``documents`` (wiki-vital, title → text)
    and whose article holds FEVER's gold evidence (``evidence_found`` ≥ .5): the article given
    as the document, gold = FEVER's label; and for every such claim a twin with each sentence
    holding the evidence deleted (gold NEI: FactCC §3.1 / MiniCheck §3 deletion at the document
    level), so a document about the claim's subject that is silent on the fact is seen beside
    the one that decides. An encyclopedic register of given documents beside SciFact's
    abstracts (CC BY-SA text); articles of ``blind_titles`` (the product cases and the demo)
    are never used."""
    from core.verify.verdict_model import title_is_subject

    text_of = {t: text for t, text in documents.items() if t not in blind_titles}
    by_word = title_word_index(text_of)
    items: list[tuple[str, list[str], str]] = []
    used = 0
    for claim, label, ev in claims:
        if used >= limit:  # claims, each with its article and (mostly) its silent twin
            break
        terms = terms_of(claim)
        owns = sorted({t for w in terms for t in by_word.get(w, ()) if title_is_subject(t, terms)})
        if len(owns) != 1:
            continue  # no article of its own, or more than one candidate subject
        sentences = re.split(r"(?<=[.!?])\s+", text_of[owns[0]])
        if evidence_found(ev, sentences) < 0.5:
            continue  # the lead section may state the fact in other words, or not at all
        silent = [x for x in sentences if evidence_found(ev, [x]) < 0.4]
        used += 1
        items.append((claim, [text_of[owns[0]]], VITAMINC[label]))
        if silent:
            items.append((claim, [" ".join(silent)], "not_enough_info"))
    return items


# Anchor rows: the sanity cases' situation, written as training rows. Why: refitted on a v2
# verifier's judgements of mostly-true training claims, the verdict layer learned "the claim names
# the judged document's subject, so supported" whatever the document says (docs/verifier_v2.md,
# "Run 8 again with seed 14"); zeroing the prior features did not cure it. These rows state what a
# person expects from the evidence alone: one decisive supporting unit -> supported, one decisive
# contradicting unit -> refuted, nothing decisive -> not enough info, whether the unit comes from the
# subject's own document or from a passage about someone else that names the subject. Subjects and
# sentences differ from benchmarks/verdict_candidates.py's sanity cases, which test the fit.
ANCHOR_SUBJECTS = (  # (claim, subject terms, own title, another document's title)
    ("Marie Curie was born in Warsaw.", ("curie", "marie"), "Marie Curie", "Henri Becquerel"),
    ("Tokyo is the most populous city of Japan.", ("tokyo",), "Tokyo", "Sapporo"),
    ("Albert Einstein died in Princeton.", ("albert", "einstein"), "Albert Einstein", "Princeton University"),
    ("The Amazon River flows into the Atlantic Ocean.", ("amazon", "river"), "Amazon River", "Orinoco"),
    ("Ada Lovelace wrote the first computer program.", ("ada", "lovelace"), "Ada Lovelace", "Charles Babbage"),
)
ANCHOR_DECISIVE = (0.85, 0.95, 0.99)     # P(entail) or P(contradict) of a decisive unit
ANCHOR_WEAK = (0.02, 0.05, 0.1, 0.2, 0.3)  # P(entail) and P(contradict) of a unit that decides nothing


def anchor_rows() -> list[dict]:
    """The anchor rows (dataset ``anchors``) in the cached-row format :func:`features_of` reads."""
    rows = []
    for claim, terms, own, other in ANCHOR_SUBJECTS:
        for title in (own, other):
            cases = [((e, 0.01), "supported") for e in ANCHOR_DECISIVE]
            cases += [((0.01, c), "refuted") for c in ANCHOR_DECISIVE]
            cases += [((e, c), "not_enough_info") for e in ANCHOR_WEAK for c in ANCHOR_WEAK]
            for (e, c), label in cases:
                unit = {"pid": 1, "kind": "sentence", "sents": [0], "text": f"{title}: {claim}", "rank": 1,
                        "probs": [e, round(1 - e - c, 5), c], "grounded": True}
                rows.append({"dataset": "anchors", "label": label, "claim": claim, "terms": sorted(terms),
                             "titles": {"1": title}, "judgements": [unit]})
    return rows


def weights_for(rows: list[dict], anchors: float = 0.0) -> np.ndarray:
    """Each dataset weighs the same in total (SciFact's retrieval claims would otherwise drown
    the rest); within a dataset, claims weigh 1. Anchor rows (:func:`anchor_rows`) weigh
    ``anchors`` times one dataset in total, and do not count as a dataset."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["dataset"]] = counts.get(r["dataset"], 0) + 1
    n_anchor = counts.pop("anchors", 0)
    mean = (len(rows) - n_anchor) / len(counts)
    return np.array([anchors * mean / n_anchor if r["dataset"] == "anchors" else mean / counts[r["dataset"]]
                     for r in rows])


def cross_validate(rows: list[dict], l2s, folds: int = 5, zero: frozenset[str] = frozenset(),
                   t: Thresholds | None = None, anchors: float = 0.0) -> dict:
    """Macro-F1 of each l2 over k folds of the training rows (chooses l2 without dev data);
    anchor rows are fitted in every fold and never scored."""
    from core.evaluate.metrics import macro_f1

    x = np.array([features_of(r, zero, t) for r in rows])
    y = [r["label"] for r in rows]
    w = weights_for(rows, anchors)
    real = np.array([i for i, r in enumerate(rows) if r["dataset"] != "anchors"])
    idx = real[np.random.default_rng(0).permutation(len(real))]
    scores = {}
    for l2 in l2s:
        pred = [""] * len(rows)
        for f in range(folds):
            test = idx[f::folds]
            train = np.setdiff1d(np.arange(len(rows)), test)
            m = fit(x[train], [y[i] for i in train], l2=l2, sample_weight=w[train])
            p = m.probabilities(x[test])
            for i, row in zip(test, p, strict=True):
                pred[i] = m.labels[int(row.argmax())]
        scores[l2] = macro_f1([y[i] for i in real], [pred[i] for i in real], VERDICTS)
    return scores


def with_anchors(rows: list[dict], anchors: float) -> list[dict]:
    """``rows`` plus the anchor rows when ``anchors`` > 0 (every fit adds them the same way)."""
    return rows + anchor_rows() if anchors else rows


def weights_note(anchors: float) -> str:
    """The ``sample_weights`` line of a fitted file's meta: what :func:`weights_for` did."""
    note = "each dataset weighs the same in total"
    if anchors:
        note += (f"; plus {anchors} dataset's weight of anchor rows (benchmarks/fit_verdicts.py anchor_rows: one "
                 "decisive unit -> its verdict, nothing decisive -> not enough info)")
    return note


def trained_on(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Rows per dataset and gold verdict, as a fitted file's meta records them."""
    return {d: {lab: sum(1 for r in rows if r["dataset"] == d and r["label"] == lab) for lab in VERDICTS}
            for d in sorted({r["dataset"] for r in rows})}


def choose_l2(rows: list[dict], l2_fixed: float | None, zero: frozenset[str], t: Thresholds | None,
              anchors: float) -> tuple[float, dict]:
    """``l2_fixed``, or the L2 with the best 5-fold CV macro-F1 on ``rows``; with the CV scores."""
    cv = cross_validate(rows, (l2_fixed,) if l2_fixed else (0.3, 1.0, 3.0, 10.0), zero=zero, t=t, anchors=anchors)
    return (l2_fixed or max(cv, key=lambda k: cv[k])), cv


def fit_by_kind(fallback, specs: list[str], l2_fixed: float | None, zero: frozenset[str] = frozenset(),
                t: Thresholds | None = None, anchors: float = 0.0):
    """``fallback`` with one weight set per kind of source, each fitted (L2 by 5-fold CV) on the
    cached rows named for it — data of that kind only (docs/benchmarks.md, "Source-kind-aware
    verdicts") — plus the anchor rows when ``anchors`` > 0."""
    from dataclasses import replace

    from core.verify.verdict_model import SOURCE_KINDS, SUBJECT_TITLE_WORDS

    by_kind = {}
    for spec in specs:
        kind, _, files = spec.partition("=")
        if kind not in SOURCE_KINDS or not files:
            raise SystemExit(f"--by-kind wants KIND=FILE[,FILE] with KIND one of {SOURCE_KINDS}, got {spec!r}")
        rows = []
        for name in files.split(","):
            with open(name, encoding="utf-8") as fh:
                rows += [json.loads(line) for line in fh]
        kinds = {k: sum(1 for r in rows if kind_of(r) == k) for k in SOURCE_KINDS}
        rows = with_anchors(rows, anchors)
        l2, cv = choose_l2(rows, l2_fixed, zero, t, anchors)
        meta = {
            "trained_on": trained_on(rows),
            "rows_by_detected_kind": kinds,
            "sample_weights": weights_note(anchors),
            "cross_validation_macro_f1": {str(k): v for k, v in cv.items()},
            **({"features_zeroed": sorted(zero)} if zero else {}),
        }
        by_kind[kind] = fit(np.array([features_of(r, zero, t) for r in rows]), [r["label"] for r in rows], l2=l2,
                            sample_weight=weights_for(rows, anchors), meta=meta)
        print(f"{kind}: {len(rows)} rows (detected kinds {kinds}), l2 {l2}, cv {cv}", flush=True)
    meta = {**fallback.meta, "kind_rule": (
        "core/verify/verdict_model.source_kind: evidence from a reserved source (name starting with '_', "
        "check --against) or without titles -> given; else entity when most distinct titles have at most "
        f"{SUBJECT_TITLE_WORDS} words (bracketed disambiguators dropped), else abstract; a kind without its "
        "own weights uses the top-level ones")}
    return replace(fallback, meta=meta, by_kind={**fallback.by_kind, **by_kind})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scifact-db", help="database with the scifact source")
    ap.add_argument("--wiki-db", help="database with the wiki-vital source")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "core" / "verify" / "data" / "verdict_model.json"))
    ap.add_argument("--cache", default="/tmp/claimscope_verdict_features.jsonl")
    ap.add_argument("--from-cache", nargs="+", metavar="FEATURES", help="refit from cached feature files (no model call)")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--scifact-limit", type=int, default=None, help="train claims used (default all 809)")
    ap.add_argument("--vitaminc-limit", type=int, default=400)
    ap.add_argument("--fever-limit", type=int, default=600, help="FEVER claims retrieved over wiki-vital (fever-wiki), or their rows given an article (fever-given)")
    # SciFact is collected on request (--only climate-fever,vitaminc,scifact): its cited-abstract
    # rows (science register, no retrieval) pulled the model towards `refuted` on encyclopedic
    # evidence, so the shipped model leaves them out (docs/benchmarks.md).
    # fever-wiki (needs --wiki-db) is opt-in: the shipped weights were fitted without it (a refit
    # with it lost on SciFact, docs/benchmarks.md "Refit with claims retrieved over wiki-vital")
    ap.add_argument("--only", default="climate-fever,vitaminc")
    ap.add_argument("--vitaminc-wiki", action="store_true",
                    help="VitaminC's other passages from wiki-vital BM25 (--wiki-db) instead of other VitaminC pages")
    ap.add_argument("--l2", type=float, help="L2 strength (default: chosen by 5-fold cross-validation)")
    ap.add_argument("--by-kind", action="append", default=[], metavar="KIND=FILE[,FILE]",
                    help="also fit weights for one kind of source (entity / abstract / given) on these cached "
                         "feature files; the main fit is the fallback for kinds without their own (repeatable)")
    ap.add_argument("--fallback", metavar="JSON",
                    help="with --by-kind: keep this model file's weights as the fallback (e.g. the shipped ones) "
                         "instead of fitting them")
    ap.add_argument("--zero-features", default="", metavar="NAME[,NAME]",
                    help="fit without these features (set to 0, so their weights are 0): an ablation")
    ap.add_argument("--anchors", type=float, default=0.0, metavar="SHARE",
                    help="add the anchor rows (one decisive unit -> its verdict, nothing decisive -> not enough "
                         "info; anchor_rows) weighing SHARE of one dataset in total, to every fit (default 0: none)")
    args = ap.parse_args()
    if args.anchors < 0:
        raise SystemExit(f"--anchors must be 0 or more, got {args.anchors}")
    zero = frozenset(f for f in args.zero_features.split(",") if f)
    if unknown := sorted(zero - set(FEATURES)):
        raise SystemExit(f"--zero-features: unknown features {unknown} (known: {', '.join(FEATURES)})")
    data = Path(args.data)
    t0 = time.perf_counter()
    from core.settings import load_settings

    # The verifier and thresholds of the settings: the embedded ones unless a config file names
    # others (CLAIMSCOPE_CONFIG, e.g. a candidate verifier with its own thresholds). The features
    # depend on the thresholds (which judgements count), so the fit uses the ones it will run under.
    settings = load_settings()
    t = settings.thresholds()
    if args.fallback:
        from dataclasses import replace

        from core.verify.verdict_model import load_verdict_model

        if not args.by_kind:
            raise SystemExit("--fallback needs --by-kind")
        base = load_verdict_model(args.fallback)
        model = fit_by_kind(base, args.by_kind, args.l2, zero, t, args.anchors)  # the file's other kinds keep theirs
        # each kind refitted here records its own command; the file's other kinds keep theirs
        model = replace(model, meta={**model.meta, **{
            f"refit_{k}": f"python benchmarks/fit_verdicts.py --fallback {Path(args.fallback).name} --by-kind {k}="
                          f"{','.join(Path(f).name for f in fs.split(','))}" + (f" --anchors {args.anchors}" if args.anchors else "")
            for k, _, fs in (spec.partition("=") for spec in args.by_kind)}})
        Path(args.out).write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
        return
    if args.from_cache:
        rows = []
        for name in args.from_cache:
            with open(name, encoding="utf-8") as fh:
                rows += [json.loads(line) for line in fh]
    else:
        from dataclasses import replace

        from core.retrieve.searcher import Searcher
        from models.embed import load_embedder
        from models.nli import load_nli
        from models.nlp import SubjectTerms
        from store import open_db

        terms_of = SubjectTerms()
        # the shipped weights were fitted on the lexical choice of judged sentences (before
        # Thresholds.sentence_choice = "retrieval"); these searches rank no sentences, so say so
        verifier = Verifier(load_nli(settings.verifier), replace(t, sentence_choice="lexical"), subject_terms=terms_of)
        rows = []
        only = args.only.split(",")
        emb = load_embedder()
        wiki = Searcher(open_db(args.wiki_db), lambda: emb) if args.wiki_db else None
        sci = Searcher(open_db(args.scifact_db), lambda: emb) if args.scifact_db else None
        if "climate-fever" in only:
            rows += collect_climate_fever(verifier, terms_of, data / "climate_fever" / "dev.jsonl")
            print(f"climate-fever: {len(rows)} claims, {time.perf_counter() - t0:.0f} s", flush=True)
        if "vitaminc" in only:
            n0 = len(rows)
            rows += collect_vitaminc(verifier, terms_of, wiki if args.vitaminc_wiki else None, data / "vitaminc" / "real_dev_half.jsonl",
                                     args.vitaminc_limit)
            print(f"vitaminc: {len(rows) - n0} claims, {time.perf_counter() - t0:.0f} s", flush=True)
        if "fever-wiki" in only:
            from core.workbench import RunOptions, Workbench

            if not args.wiki_db:
                raise SystemExit("fever-wiki needs --wiki-db (a database with the wiki-vital source)")
            # the product's own retrieval and verifier (the composition root's), not a bare Searcher
            wb = Workbench(settings)
            db = open_db(args.wiki_db)
            n0 = len(rows)
            rows += collect_fever_wiki(wb.verifier(RunOptions.from_settings(wb.settings)), terms_of, wb.searcher(db), db,
                                       data, args.fever_limit, blind_titles=product_case_titles())
            print(f"fever-wiki: {len(rows) - n0} claims, {time.perf_counter() - t0:.0f} s", flush=True)
        if "scifact-given" in only or "fever-given" in only:
            from models.nlp import SpacySentenceSplitter

            splitter = SpacySentenceSplitter()
        if "scifact-given" in only:
            n0 = len(rows)
            rows += collect_given(verifier, splitter, "scifact-train-given",
                                  scifact_given_items(data / "scifact" / "claims_train.jsonl", args.scifact_limit))
            print(f"scifact-given: {len(rows) - n0} claims, {time.perf_counter() - t0:.0f} s", flush=True)
        if "fever-given" in only:
            if not args.wiki_db:
                raise SystemExit("fever-given needs --wiki-db (a database with the wiki-vital source)")
            n0 = len(rows)
            claims = load_fever_train(data)
            random.Random(0).shuffle(claims)
            articles = dict(open_db(args.wiki_db).execute("select title, text from documents").fetchall())
            items = fever_given_items(claims, articles, args.fever_limit, terms_of, product_case_titles())
            rows += collect_given(verifier, splitter, "fever-wiki-vital-given", items)
            print(f"fever-given: {len(rows) - n0} claims, {time.perf_counter() - t0:.0f} s", flush=True)
        if "scifact" in only:
            n0 = len(rows)
            rows += collect_scifact(verifier, terms_of, sci, data / "scifact" / "claims_train.jsonl", 5,
                                    args.scifact_limit)
            print(f"scifact: {len(rows) - n0} claims, {time.perf_counter() - t0:.0f} s", flush=True)
        with open(args.cache, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
    rows = with_anchors(rows, args.anchors)
    l2, cv = choose_l2(rows, args.l2, zero, t, args.anchors)
    x = np.array([features_of(r, zero, t) for r in rows])
    y = [r["label"] for r in rows]
    meta = {
        "trained_on": trained_on(rows),
        "training_data": {
            "scifact-train": "SciFact claims_train.jsonl, hybrid top-5 retrieval over the SciFact corpus",
            "scifact-train-cited": "SciFact claims_train.jsonl with the abstracts each claim cites (oracle abstracts)",
            "climate-fever-fit-half": "Climate-FEVER dev.jsonl, the seed-0 fit half of `claimscope eval verdicts`",
            "fever-wiki-vital": "FEVER claims of nli/fever_nli_rte (the verifier's training file; claims and evidence "
                                "in any dev / evaluation file removed) retrieved for over wiki-vital (hybrid top 10, the "
                                "product's retrieval and verifier); gold = FEVER's label when the subject has its own "
                                "article and the retrieved text holds the gold evidence, NEI when the subject has no "
                                "article and nothing retrieved holds it; other claims and claims reaching a "
                                "product-case article skipped",
            "vitaminc-real": "VitaminC real_dev_half.jsonl (training set here): the pair's sentence among 3 "
                             "passages of other pages (wiki-vital BM25 or word-overlap VitaminC); every 4th claim "
                             "without it (NEI)",
        },
        "sample_weights": weights_note(args.anchors),
        "cross_validation_macro_f1": {str(k): v for k, v in cv.items()},
        **({"features_zeroed": sorted(zero)} if zero else {}),
        "verifier": f"{settings.verifier} (thresholds support {t.support}, refute {t.refute}, conflict {t.conflict})",
        "refit": "python benchmarks/fit_verdicts.py" + ("" if args.from_cache else f" --only {args.only}")
                 + (" --wiki-db DB" if args.wiki_db else "") + (" --scifact-db DB" if args.scifact_db else "")
                 + (f" --anchors {args.anchors}" if args.anchors else ""),
    }
    model = fit(x, y, l2=l2, sample_weight=weights_for(rows, args.anchors), meta=meta)
    if args.by_kind:
        model = fit_by_kind(model, args.by_kind, args.l2, zero, t, args.anchors)
    Path(args.out).write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"l2": l2, "cv_macro_f1": cv, "n": len(rows), "trained_on": meta["trained_on"],
                      "seconds": time.perf_counter() - t0}, indent=1))
    for lab, wrow in zip(model.labels, model.weights, strict=True):
        top = sorted(zip(FEATURES, wrow, strict=True), key=lambda kv: -abs(kv[1]))[:6]
        print(lab, ", ".join(f"{k} {v:+.2f}" for k, v in top))


if __name__ == "__main__":
    main()
