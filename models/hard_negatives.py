"""Document-level training pairs and hard negatives for verifier v2 (``models/train_nli.py``).

Why: the v1 verifier was trained on sentence pairs, so at inference it reads "a passage about
the same kind of thing" as entailment or contradiction. The field's answer (MiniCheck, Tang
et al. 2024 §3; FactCG, Lei et al. 2025 §3; VitaminC, Schuster et al. 2021 §3; FactCC,
Kryscinski et al. 2020 §3.1) is document-level pairs with *minimal-edit* negatives that make
the evidence almost support the claim. This module builds such pairs from texts we already
have, reproducibly (seeded) and without any network:

* **wiki-vital** passages (the Wikipedia summaries the product searches): a sentence of an
  article is the claim (leading pronoun replaced by the title) and

  - ``entail_full`` / ``entail_window``: the article's passage (<= 128 words) or a 1-3
    sentence window containing that sentence -> entailment;
  - ``delete``: the same passage with the claim's sentence deleted -> neutral (an *on-topic*
    passage about the claim's own subject that does not state the fact);
  - ``swap``: one entity / number / date of the claim replaced by another of the same spaCy
    type taken from another article (FactCC's entity/number swaps) -> contradiction;
  - ``negate``: the claim negated (FactCC's negation) -> contradiction;
  - ``same_name``: a passage from *another* article that mentions the claim's subject
    (Becquerel's article mentions Marie Curie) -> neutral;
  - ``same_kind``: a passage about another thing of the same kind (same description head,
    e.g. Sapporo for Tokyo) that shares a content word with the claim -> neutral.

* **SciFact** training claims against their whole cited abstract window (<= 128 words
  around the rationale) -> the gold label; the same window with the rationale sentences
  deleted -> neutral.

Every pair is returned as ``{premise, hypothesis, label, topic, gen}``; ``gen`` names the
recipe so the training log can count (and ablate) each one.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_PRONOUN = re.compile(r"^(He|She|It|They|His|Her|Its|Their)\b")
_NEG = re.compile(r"\b(is|was|are|were|has|had|can|could|will|would|does|did)\b")
_STOP = frozenset(
    ["a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "but", "is", "was", "are", "were", "be", "been", "it", "its", "this", "that", "these", "those", "as", "he", "she", "they", "his", "her", "their", "which", "who", "whom", "also", "has", "had", "have", "not", "no", "into", "than", "then", "there", "one", "two", "first", "most", "more", "other", "such"])
SWAP_TYPES = ("PERSON", "GPE", "ORG", "NORP", "DATE", "CARDINAL", "LOC", "ORDINAL", "QUANTITY",
              "PERCENT", "MONEY", "EVENT", "WORK_OF_ART", "LANGUAGE", "FAC")
MAX_WORDS = 128


def split_sentences(text: str) -> list[str]:
    """Cheap sentence split (punctuation + capital); good enough for encyclopaedic text."""
    return [s.strip() for s in _SENT_SPLIT.split(text.strip()) if s.strip()]


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 2}


def window(sents: list[str], max_words: int = MAX_WORDS) -> list[str]:
    """Leading sentences of a passage up to ``max_words`` words (the product's chunk size)."""
    out, n = [], 0
    for s in sents:
        w = len(s.split())
        if out and n + w > max_words:
            break
        out.append(s)
        n += w
    return out


def wiki_vital_articles(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    arts = []
    for key, entry in data.items():
        text = (entry.get("extract") or "").strip()
        if not text:
            continue
        arts.append({"title": entry.get("title") or key, "text": text,
                     "description": entry.get("description") or "", "topic": entry.get("topic") or ""})
    return arts


def _claimify(sent: str, title: str) -> str:
    """Replace a leading pronoun with the article title so the claim stands alone."""
    m = _PRONOUN.match(sent)
    if not m:
        return sent
    word = m.group(1)
    rep = title + ("'s" if word in ("His", "Her", "Its", "Their") else "")
    return rep + sent[len(word):]


def negate(claim: str) -> str | None:
    """FactCC-style negation: 'X was Y' -> 'X was not Y' (first auxiliary only)."""
    m = _NEG.search(claim)
    if not m or re.search(r"\b(not|never|no)\b", claim):
        return None
    return claim[:m.end()] + " not" + claim[m.end():]


def _kind_key(description: str) -> str:
    """Head of a Wikidata-style description ('City in Hokkaido, Japan' -> 'city')."""
    words = re.findall(r"[A-Za-z]+", description.lower())
    for w in words:
        if w not in _STOP and not w.isdigit() and len(w) > 2 and w not in ("century", "american",
                                                                          "english", "french"):
            return w
    return ""


def windowed_articles(path: Path, exclude_titles: set[str]) -> list[dict]:
    """wiki-vital's articles minus ``exclude_titles``, each with its sentences (``sents``) and
    the 1–3 sentence window claims are drawn from (``win``): every generator's starting point."""
    arts = [a for a in wiki_vital_articles(path) if a["title"] not in exclude_titles]
    for a in arts:
        a["sents"] = split_sentences(a["text"])
        a["win"] = window(a["sents"])
    return arts


def indices_by_kind(arts: list[dict], kind: Callable[[str], str | None]) -> dict[str, list[int]]:
    """Article indices grouped by ``kind`` of their description (articles without one left out)."""
    by_kind: dict[str, list[int]] = defaultdict(list)
    for i, a in enumerate(arts):
        k = kind(a["description"])
        if k:
            by_kind[k].append(i)
    return by_kind


def build_wiki_pairs(path: Path, n_claims: int, seed: int, exclude_titles: set[str],
                     nlp) -> list[dict]:
    """Pairs from ``n_claims`` claim sentences of wiki-vital articles (see module docstring)."""
    rng = random.Random(f"wiki-{seed}")
    arts = windowed_articles(path, exclude_titles)
    # Entity pool by type for swaps: spaCy NER over the windows, once.
    rng.shuffle(arts)
    use = arts[: min(len(arts), int(n_claims * 1.6))]
    pool: dict[str, list[str]] = defaultdict(list)
    ents_by_art: dict[int, list] = {}
    for i, doc in enumerate(nlp.pipe((" ".join(a["win"]) for a in use), batch_size=64)):
        ents = [(e.text, e.label_) for e in doc.ents if e.label_ in SWAP_TYPES]
        ents_by_art[i] = ents
        for t, lab in ents:
            pool[lab].append(t)
    # mention index for same-name pairs: last word of a person-like title / whole title
    by_kind = indices_by_kind(arts, _kind_key)
    mention_cands: dict[str, list[int]] = defaultdict(list)
    used_titles = {a["title"] for a in use if len(a["title"]) > 3}
    for j, a in enumerate(arts):
        words = re.findall(r"[\w'.-]+", a["text"])
        found = set()
        for s in range(len(words)):
            for w in range(1, 5):
                cand = " ".join(words[s:s + w]).rstrip(".")
                if cand in used_titles and cand != a["title"]:
                    found.add(cand)
        for m in found:
            mention_cands[m].append(j)

    out: list[dict] = []
    made = 0
    for i, a in enumerate(use):
        if made >= n_claims:
            break
        win = a["win"]
        if len(win) < 2:
            continue
        cands = [j for j, s in enumerate(win) if 6 <= len(s.split()) <= 40]
        if not cands:
            continue
        j = rng.choice(cands)
        claim = _claimify(win[j], a["title"])
        cw = content_words(claim)
        if len(cw) < 3:
            continue
        made += 1
        full = " ".join(win)
        topic = a["title"]

        def add(premise: str, hyp: str, label: str, gen: str, topic: str = topic) -> None:
            out.append({"premise": premise, "hypothesis": hyp, "label": label, "topic": topic, "gen": gen})

        # entailment: full passage, or a 1-3 sentence window containing the sentence
        if rng.random() < 0.5:
            add(full, claim, "entailment", "entail_full")
        else:
            width = rng.choice([1, 2, 3])
            s0 = max(0, min(j - rng.randrange(width), len(win) - width))
            add(" ".join(win[s0:s0 + width]), claim, "entailment", "entail_window")
        # deletion -> neutral, unless another sentence restates the claim
        rest = [s for k, s in enumerate(win) if k != j]
        overlap = max((len(cw & content_words(s)) / len(cw) for s in rest), default=0)
        if overlap < 0.6:
            add(" ".join(rest), claim, "neutral", "delete")
        # swap one entity of the claim (or, half the time, of the premise's copy) -> contradiction
        claim_ents = [(t, lab) for t, lab in ents_by_art.get(i, []) if t in claim and t not in a["title"]]
        if claim_ents:
            t, lab = rng.choice(claim_ents)
            options = [x for x in pool[lab] if x != t and x not in full and x.lower() != t.lower()]
            if options:
                new = rng.choice(options)
                if rng.random() < 0.7:
                    add(full, claim.replace(t, new), "contradiction", "swap")
                else:
                    edited = win[j].replace(t, new)
                    prem = " ".join([*win[:j], edited, *win[j + 1:]])
                    add(prem, claim, "contradiction", "swap")
        # negation -> contradiction (every other claim, to keep the class balance)
        if made % 2 == 0:
            neg = negate(claim)
            if neg:
                add(full, neg, "contradiction", "negate")
        # same-name: another article that mentions this subject -> neutral
        others = [k for k in mention_cands.get(a["title"], []) if arts[k]["title"] != a["title"]]
        if others:
            b = arts[rng.choice(others)]
            sents = b["sents"]
            hit = next((k for k, s in enumerate(sents) if a["title"] in s), 0)
            s0 = max(0, hit - rng.randrange(2))
            prem = " ".join(window(sents[s0:]))
            if len(cw & content_words(prem)) / len(cw) < 0.8:
                add(prem, claim, "neutral", "same_name")
        # same kind: another thing of the same kind sharing a content word -> neutral
        kind = _kind_key(a["description"])
        peers = [k for k in by_kind.get(kind, []) if arts[k]["title"] != a["title"]]
        rng.shuffle(peers)
        for k in peers[:30]:
            b = arts[k]
            prem = " ".join(b["win"])
            shared = len(cw & content_words(prem)) / len(cw)
            if 0.2 <= shared < 0.8 and a["title"] not in prem:
                add(prem, claim, "neutral", "same_kind")
                break
    return out


def build_scifact_doc_pairs(claims_path: Path, corpus_path: Path, seed: int) -> list[dict]:
    """SciFact train claims vs a <=128-word abstract window around the rationale (gold label),
    and the same window with the rationale deleted (neutral)."""
    rng = random.Random(f"scifact-doc-{seed}")
    corpus = {}
    with open(corpus_path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            corpus[int(d["doc_id"])] = d
    out = []
    with open(claims_path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            for doc_id, sets in (rec.get("evidence") or {}).items():
                doc = corpus.get(int(doc_id))
                labels = {s["label"] for s in sets}
                if doc is None or len(labels) != 1:
                    continue
                label = {"SUPPORT": "entailment", "CONTRADICT": "contradiction"}[labels.pop()]
                abstract = doc["abstract"]
                rat = sorted({i for s in sets for i in s["sentences"] if i < len(abstract)})
                if not rat:
                    continue
                # window: start a little before the first rationale sentence
                start = max(0, rat[0] - rng.randrange(3))
                win_idx, n = [], 0
                for k in range(start, len(abstract)):
                    w = len(abstract[k].split())
                    if win_idx and n + w > MAX_WORDS:
                        break
                    win_idx.append(k)
                    n += w
                if not set(rat) <= set(win_idx):
                    win_idx = rat  # rationale longer than the window: keep just the rationale
                prem = " ".join(abstract[k] for k in win_idx)
                out.append({"premise": prem, "hypothesis": rec["claim"], "label": label,
                            "topic": str(doc_id), "gen": "scifact_doc"})
                rest = [abstract[k] for k in win_idx if k not in rat]
                if len(rest) >= 2:
                    out.append({"premise": " ".join(rest), "hypothesis": rec["claim"], "label": "neutral",
                                "topic": str(doc_id), "gen": "scifact_delete"})
    return out


def _subject_free(words: set[str], title: str) -> set[str]:
    """Content words minus the subject's own name (what the claim says *about* the subject)."""
    return words - content_words(title)


def build_wiki_neutral_pairs(path: Path, n_claims: int, seed: int, exclude_titles: set[str],
                             per_claim: int = 2) -> list[dict]:
    """Harder *same-name* and *same-kind* neutrals, each with its entailment anchor (no spaCy).

    Why: after the first v2 run the Becquerel / Chien-Shiung Wu / Sapporo failures remained
    (docs/verifier_v2.md): a passage about someone or something else that shares the claim's
    *predicate* ("physicist", "Nobel Prize", "most populous city") is read as entailment or
    contradiction. ``build_wiki_pairs`` picks any mentioning passage / the first same-kind
    peer; here, per claim, the passages chosen are those that share the *most* of what the
    claim says about its subject (content words minus the subject's name) while still not
    stating it (shared share < 0.6, and the subject's name not in a same-kind passage), the
    MiniCheck §3 idea of evidence that *almost* supports the claim. Each claim also gets its
    own passage (or a 1-3 sentence window) as entailment, so the contrast is the subject, not
    the wording.

    Gens: ``anchor_full`` / ``anchor_window`` (entailment), ``same_name_hard``,
    ``same_kind_hard`` (neutral).
    """
    rng = random.Random(f"wiki-neutral-{seed}")
    arts = windowed_articles(path, exclude_titles)
    for a in arts:
        a["cw"] = content_words(" ".join(a["win"]))
    by_kind = indices_by_kind(arts, _kind_key)
    titles = {a["title"] for a in arts if len(a["title"]) > 3}
    mentions: dict[str, list[int]] = defaultdict(list)
    for j, a in enumerate(arts):
        words = re.findall(r"[\w'.-]+", a["text"])
        found = set()
        for s in range(len(words)):
            for w in range(1, 5):
                cand = " ".join(words[s:s + w]).rstrip(".")
                if cand in titles and cand != a["title"]:
                    found.add(cand)
        for m in found:
            mentions[m].append(j)
    order = list(range(len(arts)))
    rng.shuffle(order)
    out: list[dict] = []
    made = 0

    def add(premise: str, hyp: str, label: str, gen: str, topic: str) -> None:
        out.append({"premise": premise, "hypothesis": hyp, "label": label, "topic": topic, "gen": gen})

    for i in order:
        if made >= n_claims:
            break
        a = arts[i]
        win = a["win"]
        if len(win) < 2:
            continue
        cands = [j for j, s in enumerate(win) if 6 <= len(s.split()) <= 40]
        rng.shuffle(cands)
        for j in cands[:per_claim]:
            claim = _claimify(win[j], a["title"])
            about = _subject_free(content_words(claim), a["title"])
            if len(about) < 2:
                continue
            negs = []
            # same-name: passages of other articles that mention the subject, most predicate overlap
            scored = []
            for k in set(mentions.get(a["title"], [])):
                b = arts[k]
                sents = b["sents"]
                hit = next((h for h, s in enumerate(sents) if a["title"] in s), 0)
                prem = " ".join(window(sents[max(0, hit - rng.randrange(2)):]))
                shared = len(about & content_words(prem)) / len(about)
                if shared < 0.6:
                    scored.append((shared, prem, b["title"]))
            if scored:
                scored.sort(key=lambda x: -x[0])
                negs.append((scored[0][1], "same_name_hard"))
            # same-kind: peer of the same kind with the most predicate overlap, not naming the subject
            best = None
            for k in by_kind.get(_kind_key(a["description"]), []):
                b = arts[k]
                if b["title"] == a["title"]:
                    continue
                prem = " ".join(b["win"])
                if a["title"] in prem:
                    continue
                shared = len(about & b["cw"]) / len(about)
                if 0.25 <= shared < 0.6 and (best is None or shared > best[0]):
                    best = (shared, prem)
            if best:
                negs.append((best[1], "same_kind_hard"))
            if not negs:
                continue
            made += 1
            if rng.random() < 0.5:
                add(" ".join(win), claim, "entailment", "anchor_full", a["title"])
            else:
                width = rng.choice([1, 2, 3])
                s0 = max(0, min(j - rng.randrange(width), len(win) - width))
                add(" ".join(win[s0:s0 + width]), claim, "entailment", "anchor_window", a["title"])
            for prem, gen in negs:
                add(prem, claim, "neutral", gen, a["title"])
    return out


_HEAD_CUT = re.compile(r"\s(?:of|in|on|from|who|that|for|by|at|with)\s|[,;(]")


def _kind_head(description: str) -> str:
    """Head noun of a description's first phrase ('French physicist (1852-1908)' ->
    'physicist', 'Capital and largest city of Japan' -> 'city'): stricter than ``_kind_key``,
    whose first-content-word rule pairs 'State of controlled ...' with 'Malaysian state'."""
    first = _HEAD_CUT.split(description.lower(), maxsplit=1)[0]
    words = re.findall(r"[a-z]+", first)
    return words[-1] if words and len(words[-1]) > 2 and words[-1] not in _STOP else ""


def build_subject_swap_pairs(path: Path, n_claims: int, seed: int, exclude_titles: set[str]) -> list[dict]:
    """*Subject-swap* neutrals: the claim's own sentence with another subject of the same kind.

    Why: the Becquerel / Chien-Shiung Wu / Sapporo failures survived the hard same-name and
    same-kind neutrals of ``build_wiki_neutral_pairs`` (docs/verifier_v2.md, runs 2-3): the
    model reads "a French physicist" against "a Polish-born physicist" as a contradiction
    whoever the subject is, and "the fifth-most populous city" as support for "the most
    populous city". Those passages rarely share the claim's exact predicate. Here the
    predicate is kept *verbatim* and only the subject differs, so the one thing that decides
    the label is who the sentence is about (the minimal-edit idea of MiniCheck §3 / FactCC
    §3.1, applied to the subject slot):

    - ``swap_premise``: the premise is a passage about B (another article of the same kind,
      same description head) in which the claim's sentence, with A's title replaced by B's,
      stands among B's own sentences (or alone) -> neutral for the claim about A;
    - ``swap_claim``: the claim with A's title replaced by B's, against A's own passage
      (which does not name B) -> neutral;
    - ``swap_anchor``: the claim against A's own passage or a 1-3 sentence window ->
      entailment, so the pair contrasts the subject and nothing else.

    Only claims whose sentence opens with A's full title (after the leading pronoun is
    replaced), then a lower-case word (the predicate), and names A by no partial name (a bare surname would keep pointing at A) are used.
    """
    rng = random.Random(f"subject-swap-{seed}")
    arts = windowed_articles(path, exclude_titles)
    by_kind = indices_by_kind(arts, _kind_head)
    order = list(range(len(arts)))
    rng.shuffle(order)
    out: list[dict] = []
    made = 0

    def add(premise: str, hyp: str, label: str, gen: str, topic: str) -> None:
        out.append({"premise": premise, "hypothesis": hyp, "label": label, "topic": topic, "gen": gen})

    for i in order:
        if made >= n_claims:
            break
        a = arts[i]
        title, win = a["title"], a["win"]
        peers = [k for k in by_kind.get(_kind_head(a["description"]), []) if arts[k]["title"] != title]
        if len(win) < 2 or not peers or "(" in title:
            continue
        cands = [j for j, s in enumerate(win) if 6 <= len(s.split()) <= 40]
        if not cands:
            continue
        j = rng.choice(cands)
        claim = _claimify(win[j], title)
        # the subject slot: the sentence opens with the title and goes on with the predicate
        # ("Marie Curie was ...", not "Athena or Athene ..." / "Tokyo (東京) ...")
        nxt = claim[len(title):].split(maxsplit=1)
        if (not claim.startswith(title + " ") or claim.count(title) != 1 or not nxt
                or not nxt[0].islower() or nxt[0] in ("or", "and", "nor")):
            continue
        rest_of_claim = claim.replace(title, " ")
        name_parts = [w for w in re.findall(r"[A-Za-z][\w'-]+", title) if len(w) > 3]
        if any(re.search(rf"\b{re.escape(w)}\b", rest_of_claim) for w in name_parts):
            continue
        rng.shuffle(peers)
        b = next((arts[k] for k in peers[:20]
                  if title not in arts[k]["text"] and arts[k]["title"] not in a["text"]
                  and "(" not in arts[k]["title"]), None)
        if b is None:
            continue
        made += 1
        swapped_claim = claim.replace(title, b["title"])
        # premise: B's passage with the swapped sentence among B's own sentences, or alone
        if rng.random() < 0.6:
            b_sents = list(b["win"])
            b_sents.insert(rng.randrange(len(b_sents) + 1), swapped_claim)
            premise = " ".join(window(b_sents))
            if swapped_claim not in premise:  # cut off by the word limit: keep it first
                premise = " ".join(window([swapped_claim, *b["win"]]))
        else:
            premise = swapped_claim
        add(premise, claim, "neutral", "swap_premise", title)
        add(" ".join(win), swapped_claim, "neutral", "swap_claim", b["title"])
        if rng.random() < 0.5:
            add(" ".join(win), claim, "entailment", "swap_anchor", title)
        else:
            width = rng.choice([1, 2, 3])
            s0 = max(0, min(j - rng.randrange(width), len(win) - width))
            add(" ".join(win[s0:s0 + width]), claim, "entailment", "swap_anchor", title)
    return out
