"""Loaders for the public evaluation formats (as in ``../shared/data``), with line-numbered errors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.errors import InputError
from core.ingest.sources import jsonl_records, record_field


@dataclass(frozen=True)
class SciFactClaim:
    id: int
    claim: str
    # doc id → list of {"sentences": [...], "label": "SUPPORT" | "CONTRADICT"}
    evidence: dict[str, list[dict]]
    cited_doc_ids: tuple[str, ...]

    @property
    def gold_docs(self) -> set[str]:
        return set(self.evidence)


def load_scifact_claims(path: str | Path) -> list[SciFactClaim]:
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError("no such file", path)
    if path.is_dir():
        raise InputError("is a directory, expected a claims JSONL file", path)
    claims = []
    for lineno, obj in jsonl_records(path):
        cid = record_field(obj, "id", int, path, lineno)
        text = record_field(obj, "claim", str, path, lineno)
        evidence = record_field(obj, "evidence", dict, path, lineno, required=False) or {}
        cited = record_field(obj, "cited_doc_ids", list, path, lineno, required=False) or []
        claims.append(SciFactClaim(cid, text, {str(k): v for k, v in evidence.items()}, tuple(str(c) for c in cited)))
    if not claims:
        raise InputError("contains no claims", path)
    return claims


# --------------------------------------------------------------------------- verifier datasets
#
# Every verifier dataset becomes a list of :class:`NLIExample` (premise = evidence,
# hypothesis = claim) with the gold label normalised to the verifier's vocabulary:
#
# * 3-way sets (``vitaminc``, ``scifact``, ``climate-fever``, ``nli``): ``entailment`` /
#   ``neutral`` / ``contradiction`` (= supports / not enough info / refutes).
# * ``fever-symmetric``: ``entailment`` / ``contradiction`` only (the set has no NEI);
#   evaluated 2-way, a model's prediction is the larger of P(entailment), P(contradiction).
# * ``wice``: ``entailment`` / ``not_entailment``. WiCE's ``supported`` → ``entailment``;
#   ``partially_supported`` and ``not_supported`` → ``not_entailment``. WiCE's
#   ``not_supported`` means the cited page does not support the claim, *not* that it
#   refutes it, so neither "neutral" nor "contradiction" is the right gold label: the set
#   is evaluated 2-way, supported vs not supported, with "supported iff P(entailment) > 0.5".
#   The original WiCE label is kept in ``meta["wice_label"]``.
#
# :data:`DATASET_LABELS` gives each set's label space (the order used for confusion
# matrices and per-class F1).

VERIFIER_LABELS = ("entailment", "neutral", "contradiction")
NOT_ENTAILMENT = "not_entailment"

DATASET_LABELS: dict[str, tuple[str, ...]] = {
    "fever-symmetric": ("entailment", "contradiction"),
    "vitaminc": VERIFIER_LABELS,
    "scifact": VERIFIER_LABELS,
    "climate-fever": VERIFIER_LABELS,
    "wice": ("entailment", NOT_ENTAILMENT),
    "nli": VERIFIER_LABELS,
}
VERIFIER_DATASETS = tuple(DATASET_LABELS)
VITAMINC_SPLITS = ("dev", "train")

# Source label (lower case, "_" → " ") → normalised label, per dataset.
_FEVER_LABELS = {"supports": "entailment", "refutes": "contradiction"}
_FACT3_LABELS = {**_FEVER_LABELS, "not enough info": "neutral"}
_SCIFACT_LABELS = {"support": "entailment", "contradict": "contradiction"}
_WICE_LABELS = {"supported": "entailment", "partially supported": NOT_ENTAILMENT, "not supported": NOT_ENTAILMENT}
_NLI_LABELS = {name: name for name in VERIFIER_LABELS}


@dataclass(frozen=True)
class NLIExample:
    """One (evidence, claim) pair: ``premise`` is the evidence, ``hypothesis`` the claim."""

    premise: str
    hypothesis: str
    label: str  # normalised, one of DATASET_LABELS[dataset]
    group: str | None = None  # examples sharing a claim / page / document (kept together when splitting)
    meta: dict | None = None


def load_verifier_dataset(
    name: str, path: str | Path, corpus: str | Path | None = None, split: str | None = None
) -> list[NLIExample]:
    """Load a verifier benchmark file (public format, see ``../shared/docs/eval.md``).

    ``corpus`` is the SciFact corpus JSONL (``scifact`` only); ``split`` is ``"dev"`` or
    ``"train"`` (``vitaminc`` only): keep the pages that ``models.train_nli.vitaminc_split``
    assigns to that split, so ``split="dev"`` scores only pages the verifier was not trained on.
    Raises :class:`InputError` (file and line) on anything malformed.
    """
    if name not in DATASET_LABELS:
        raise InputError(f"unknown verifier dataset {name!r} (use one of {', '.join(VERIFIER_DATASETS)})")
    path = check_file(path, "dataset")
    if name == "scifact":
        if corpus is None:
            raise InputError("the scifact dataset needs the corpus JSONL (--corpus)", path)
    elif corpus is not None:
        raise InputError(f"a corpus is only used by the scifact dataset, not by {name}")
    if split is not None and name != "vitaminc":
        raise InputError(f"a split is only used by the vitaminc dataset, not by {name}")
    if name == "fever-symmetric":
        examples = load_fever_symmetric(path)
    elif name == "vitaminc":
        examples = load_vitaminc(path, split=split)
    elif name == "scifact":
        assert corpus is not None
        examples = load_scifact_pairs(path, corpus)
    elif name == "climate-fever":
        examples = load_climate_fever(path)
    elif name == "wice":
        examples = load_wice(path)
    else:
        examples = load_nli(path)
    return examples


def load_fever_symmetric(path: str | Path) -> list[NLIExample]:
    """FEVER-Symmetric: JSONL ``claim``, ``evidence``, ``label`` ∈ SUPPORTS / REFUTES (2-way).

    FEVER's tokenisation is undone (:func:`detokenize_fever`) in claim and evidence.
    """
    path = check_file(path, "dataset")
    out = []
    for lineno, obj in jsonl_records(path):
        claim = record_field(obj, "claim", str, path, lineno)
        evidence = record_field(obj, "evidence", str, path, lineno)
        label = _label(obj, "label", _FEVER_LABELS, path, lineno)
        meta = {"id": str(obj["id"])} if obj.get("id") is not None else None
        out.append(NLIExample(detokenize_fever(evidence), detokenize_fever(claim), label, None, meta))
    return _nonempty(out, path)


def load_vitaminc(path: str | Path, split: str | None = None) -> list[NLIExample]:
    """VitaminC: JSONL ``claim``, ``evidence``, ``label`` ∈ SUPPORTS / REFUTES / NOT ENOUGH INFO (3-way).

    ``group`` is the Wikipedia ``page`` (when present). With ``split``, keeps only pages for
    which ``models.train_nli.vitaminc_split(page) == split`` (then ``page`` is required).
    Text is kept as published (the verifier was trained on it in that form).
    """
    path = check_file(path, "dataset")
    if split is not None and split not in VITAMINC_SPLITS:
        raise InputError(f"unknown vitaminc split {split!r} (use {' or '.join(VITAMINC_SPLITS)})")
    split_of = None
    if split is not None:
        from models.train_nli import vitaminc_split as split_of  # lazy: the training module imports torch
    out = []
    for lineno, obj in jsonl_records(path):
        claim = record_field(obj, "claim", str, path, lineno)
        evidence = record_field(obj, "evidence", str, path, lineno)
        label = _label(obj, "label", _FACT3_LABELS, path, lineno)
        page = record_field(obj, "page", str, path, lineno, required=split is not None)
        if split_of is not None and split_of(page) != split:
            continue
        meta = {k: obj[k] for k in ("unique_id", "id", "case_id", "page") if obj.get(k) is not None} or None
        out.append(NLIExample(evidence, claim, label, page, meta))
    if not out and split is not None:
        raise InputError(f"contains no examples on vitaminc split {split!r}", path)
    return _nonempty(out, path)


def load_scifact_pairs(claims_path: str | Path, corpus_path: str | Path) -> list[NLIExample]:
    """SciFact claims + corpus → one pair per (claim, gold document), 3-way.

    Claims with evidence: premise = the rationale sentences of the document (the union of
    all its rationale sets, sentence indices into ``abstract``) in document order; label
    SUPPORT → entailment, CONTRADICT → contradiction. Claims without evidence (NEI): one
    pair per cited document, premise = the 3 abstract sentences sharing the most distinct
    content words with the claim (ties: earlier sentence), in document order; label
    neutral. ``group`` is the claim id.
    """
    claims_path = check_file(claims_path, "claims")
    corpus_path = check_file(corpus_path, "corpus")
    abstracts: dict[str, list[str]] = {}
    for lineno, obj in jsonl_records(corpus_path):
        doc_id = str(record_field(obj, "doc_id", (str, int), corpus_path, lineno))
        abstract = record_field(obj, "abstract", list, corpus_path, lineno)
        if not all(isinstance(s, str) for s in abstract):
            raise InputError("field 'abstract' must be a list of sentences (strings)", corpus_path, lineno)
        abstracts[doc_id] = [s.strip() for s in abstract]
    if not abstracts:
        raise InputError("contains no documents", corpus_path)

    def doc(doc_id: str, lineno: int) -> list[str]:
        if doc_id not in abstracts:
            raise InputError(f"document {doc_id} is not in the corpus {corpus_path}", claims_path, lineno)
        return abstracts[doc_id]

    out = []
    for lineno, obj in jsonl_records(claims_path):
        cid = str(record_field(obj, "id", (int, str), claims_path, lineno))
        claim = record_field(obj, "claim", str, claims_path, lineno)
        evidence = record_field(obj, "evidence", dict, claims_path, lineno, required=False) or {}
        cited = record_field(obj, "cited_doc_ids", list, claims_path, lineno, required=False) or []
        for doc_id, sets in evidence.items():
            sentences = doc(str(doc_id), lineno)
            if not isinstance(sets, list) or not sets:
                raise InputError(f"evidence for document {doc_id} must be a non-empty list of rationales", claims_path, lineno)
            labels, indices = set(), set()
            for rationale in sets:
                if not isinstance(rationale, dict):
                    raise InputError(f"evidence for document {doc_id}: each rationale must be an object", claims_path, lineno)
                labels.add(_label(rationale, "label", _SCIFACT_LABELS, claims_path, lineno))
                idx = record_field(rationale, "sentences", list, claims_path, lineno)
                for i in idx:
                    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(sentences):
                        raise InputError(
                            f"rationale sentence {i!r} is not a sentence index of document {doc_id} "
                            f"({len(sentences)} sentences)",
                            claims_path, lineno,
                        )
                    indices.add(i)
            if len(labels) != 1:
                raise InputError(f"document {doc_id} has conflicting labels {sorted(labels)}", claims_path, lineno)
            if not indices:
                raise InputError(f"document {doc_id} has no rationale sentences", claims_path, lineno)
            order = sorted(indices)
            premise = " ".join(sentences[i] for i in order)
            meta = {"claim_id": cid, "doc_id": str(doc_id), "sentences": order}
            out.append(NLIExample(premise, claim, labels.pop(), cid, meta))
        if evidence:
            continue
        for doc_id in cited:
            sentences = doc(str(doc_id), lineno)
            order = overlap_sentences(claim, sentences, 3)
            premise = " ".join(sentences[i] for i in order)
            meta = {"claim_id": cid, "doc_id": str(doc_id), "sentences": order, "nei": True}
            out.append(NLIExample(premise, claim, "neutral", cid, meta))
    return _nonempty(out, claims_path)


def overlap_sentences(claim: str, sentences: list[str], k: int) -> list[int]:
    """Indices of the ``k`` sentences sharing the most distinct content words with ``claim``
    (ties: the earlier sentence), returned in document order."""
    from core.text import content_words

    claim_words = set(content_words(claim))
    scored = sorted(range(len(sentences)), key=lambda i: (-len(claim_words & set(content_words(sentences[i]))), i))
    return sorted(scored[:k])


def load_climate_fever(path: str | Path) -> list[NLIExample]:
    """Climate-FEVER: one pair per (claim, evidence sentence), 3-way on ``evidence_label``
    (SUPPORTS / REFUTES / NOT_ENOUGH_INFO). ``group`` is the ``claim_id``; the claim-level
    label (which may be DISPUTED, a claim-level-only label) is kept in ``meta["claim_label"]``.
    """
    path = check_file(path, "dataset")
    out = []
    for lineno, obj in jsonl_records(path):
        cid = str(record_field(obj, "claim_id", (str, int), path, lineno))
        claim = record_field(obj, "claim", str, path, lineno)
        claim_label = record_field(obj, "claim_label", str, path, lineno, required=False)
        evidences = record_field(obj, "evidences", list, path, lineno)
        for n, ev in enumerate(evidences):
            if not isinstance(ev, dict):
                raise InputError(f"evidences[{n}] must be an object", path, lineno)
            text = record_field(ev, "evidence", str, path, lineno)
            label = _label(ev, "evidence_label", _FACT3_LABELS, path, lineno)
            meta = {"claim_id": cid, "claim_label": claim_label, "evidence_id": ev.get("evidence_id")}
            out.append(NLIExample(text, claim, label, cid, meta))
    return _nonempty(out, path)


def load_wice(path: str | Path) -> list[NLIExample]:
    """WiCE, evaluated 2-way: ``entailment`` (WiCE ``supported``) vs ``not_entailment``
    (``partially_supported`` or ``not_supported``).

    Why 2-way: WiCE's ``not_supported`` means the cited web page does not support the
    claim, not that it refutes it, and ``partially_supported`` means some part of the claim
    is unsupported; neither maps onto NLI's neutral / contradiction, so the verifier is
    scored on "is the claim supported?" only (supported iff P(entailment) > 0.5).

    Reads either format, detected per line: the oracle-chunks JSONL (``claim``, ``evidence``
    = the sentences of one chunk that contains the oracle sentences, ``label``, ``meta``; one
    claim has several chunks) or the claim-level JSONL (``claim``, ``evidence`` = every
    sentence of the cited page, ``supporting_sentences``, ``label``). The premise is the
    evidence sentences joined with spaces (for claim-level records that is the whole page,
    which cross-encoders truncate; the oracle chunks are the usual setting for pair
    classifiers). ``group`` is ``meta.id`` (the claim); ``meta["wice_label"]`` keeps the
    original label.
    """
    path = check_file(path, "dataset")
    out = []
    for lineno, obj in jsonl_records(path):
        claim = record_field(obj, "claim", str, path, lineno)
        evidence = record_field(obj, "evidence", list, path, lineno)
        if not all(isinstance(s, str) for s in evidence):
            raise InputError("field 'evidence' must be a list of sentences (strings)", path, lineno)
        raw = record_field(obj, "label", str, path, lineno)
        label = _label(obj, "label", _WICE_LABELS, path, lineno)
        info = record_field(obj, "meta", dict, path, lineno, required=False) or {}
        group = str(info["id"]) if info.get("id") is not None else None
        meta = {"wice_label": raw, "id": group, "format": "claim" if "supporting_sentences" in obj else "oracle_chunks"}
        premise = " ".join(s.strip() for s in evidence if s.strip())
        out.append(NLIExample(premise, claim, label, group, meta))
    return _nonempty(out, path)


def load_nli(path: str | Path) -> list[NLIExample]:
    """Generic NLI JSONL (``premise``, ``hypothesis``, ``label`` ∈ entailment / neutral /
    contradiction), plain or gzip-compressed (``.gz``), as the files under ``../shared/data/nli``."""
    path = check_file(path, "dataset")
    out = []
    for lineno, obj in jsonl_records(path):
        premise = record_field(obj, "premise", str, path, lineno)
        hypothesis = record_field(obj, "hypothesis", str, path, lineno)
        label = _label(obj, "label", _NLI_LABELS, path, lineno)
        meta = {k: obj[k] for k in ("id", "source") if obj.get(k) is not None} or None
        out.append(NLIExample(premise, hypothesis, label, None, meta))
    return _nonempty(out, path)


_FEVER_TOKENS = [
    (re.compile(r"-LRB-", re.IGNORECASE), "("),
    (re.compile(r"-RRB-", re.IGNORECASE), ")"),
    (re.compile(r"-LSB-", re.IGNORECASE), "["),
    (re.compile(r"-RSB-", re.IGNORECASE), "]"),
    (re.compile(r"-LCB-", re.IGNORECASE), "{"),
    (re.compile(r"-RCB-", re.IGNORECASE), "}"),
    (re.compile(r"-COLON-", re.IGNORECASE), ":"),
    (re.compile(r"``|''"), '"'),
]
_FEVER_SPACING = [
    (re.compile(r"([(\[{]) "), r"\1"),  # "( born" → "(born"
    (re.compile(r" ([)\]}])"), r"\1"),  # "1980 )" → "1980)"
    (re.compile(r" ([.,;:!?%])(?=\s|$)"), r"\1"),  # "name ." → "name."
    (re.compile(r" ('s|'re|'ve|'ll|'d|'m|n't)\b", re.IGNORECASE), r"\1"),  # "Devil 's" → "Devil's"
    (re.compile(r'" ([^"]*?) "'), r'"\1"'),  # '" I Kissed a Girl "' → '"I Kissed a Girl"'
]


def detokenize_fever(text: str) -> str:
    """Undo FEVER's PTB-style tokenisation: bracket and colon tokens (``-LRB-`` → ``(``,
    ``-RRB-`` → ``)``, ``-LSB-``/``-RSB-`` → ``[``/``]``, ``-COLON-`` → ``:``), ```` `` ```` /
    ``''`` → ``"``, and the spaces before punctuation and clitics (`` .``, `` ,``, `` 's``)."""
    for pattern, repl in _FEVER_TOKENS:
        text = pattern.sub(repl, text)
    for pattern, repl in _FEVER_SPACING:
        text = pattern.sub(repl, text)
    return " ".join(text.split())


def check_file(path: str | Path, what: str) -> Path:
    """The dataset file, or an InputError saying it is missing or a folder."""
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError(f"no such {what} file", path)
    if path.is_dir():
        raise InputError(f"is a directory, expected a {what} file", path)
    return path


def _label(obj: dict, key: str, allowed: dict[str, str], path: Path, lineno: int) -> str:
    raw = record_field(obj, key, str, path, lineno)
    norm = allowed.get(" ".join(raw.replace("_", " ").lower().split()))
    if norm is None:
        want = ", ".join(k.upper() for k in allowed)
        raise InputError(f"unknown {key} {raw!r} (expected one of: {want}; case and _ vs space ignored)", path, lineno)
    return norm


def _nonempty(examples: list[NLIExample], path: Path) -> list[NLIExample]:
    if not examples:
        raise InputError("contains no examples", path)
    return examples
