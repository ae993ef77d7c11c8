"""Rendering apart from logic: tables and lines for the terminal (stdout carries data,
stderr progress and diagnostics), from results the commands computed."""

from __future__ import annotations

import json
import sys


def source_label(name: str) -> str:
    """A source's name as a table shows it: the given documents' reserved source ``_given``
    (core/pipeline/given.py) reads "given"; JSON keeps the stored name."""
    return "given" if name == "_given" else name


def print_expansion(expansion, matched: bool | None = None) -> None:
    """The generated pseudo-document(s) on stderr, labelled as generated text."""
    from rich.text import Text

    from tui.console import err

    cached = ", cached" if expansion.cached else f", {expansion.seconds:.1f} s"
    err.print(Text(f"{expansion.method} expansion by {expansion.model.get('model_id')} ({expansion.preset} prompt{cached}) "
                   "— generated text, not evidence:", style="bold yellow"))
    for doc in expansion.documents:
        err.print(Text("  " + doc.replace("\n", " "), style="dim italic"))
    if matched is not None:
        err.print(Text("  leakage audit: the expansion already states the retrieved evidence" if matched
                       else "  leakage audit: no generated sentence is entailed by the retrieved evidence",
                       style="yellow" if matched else "dim"))


def print_sentences(ranked, passage_rank: dict[int, int]) -> None:
    """The evidence sentences ranked across passages (Searcher.rank_evidence_sentences), best
    first: the fused score, the dense and BM25 members' ranks (over abstracts, also the fused rank
    and the learned head's score, which set the order), the passage (its title and rank) and the text."""
    from rich.text import Text

    from tui.console import out

    out.print(Text("\nEvidence sentences across the passages (a check's verifier judges the first 8):", style="bold"))
    for n, s in enumerate(ranked, start=1):
        line = Text(f"{n:>2}. ", style="bold")
        line.append(s.passage.title or "(untitled)", style="cyan")
        # the third member, passage rank, is the "(passage #N)" shown before
        members = " · ".join(f"{name} #{s.ranks[name]}" for name in ("dense", "bm25") if name in s.ranks)
        if "head" in s.ranks:  # the abstracts' sentence head re-ordered the fused ranking
            members += f" · fused #{s.ranks['fused']} · head {s.scores['head']:+.2f}"
        line.append(f" (passage #{passage_rank.get(s.passage.id, s.passage_rank)})  {s.score:.3f} · {members}", style="dim")
        out.print(line)
        out.print(Text("    › " + s.text, style="green"))


def print_hits(hits, mode: str, as_json: bool, searcher) -> None:
    from rich.text import Text

    from store.sources import get_source
    from tui.console import err, out

    if as_json:
        for h in hits:
            sys.stdout.write(
                json.dumps(
                    {
                        "rank": h.rank,
                        "source": h.passage.source,
                        "doc_id": h.passage.doc_ext_id,
                        "title": h.passage.title,
                        "url": h.passage.url,
                        "passage_id": h.passage.id,
                        "scores": h.scores,
                        "ranks": h.ranks,
                        "sentence": h.sentence_text,
                        "text": h.passage.text,
                        **({"sentence_ranks": list(h.sentence_ranks)} if h.sentence_ranks is not None else {}),
                    }
                )
                + "\n"
            )
        return
    if not hits:
        err.print("no passages matched")
        return
    for h in hits:
        parts = [f"{mode} {h.score:.4g}"] + [
            f"{name} {h.scores[name]:.4g} (#{h.ranks[name]})" for name in h.scores if name != mode
        ]
        line = Text(f"{h.rank:>2}. ", style="bold")
        line.append(h.passage.title or "(untitled)", style="bold cyan")
        line.append(f"  [{h.passage.source}:{h.passage.doc_ext_id}]  ", style="dim")
        line.append(" · ".join(parts), style="dim")
        out.print(line)
        if h.sentence_text:
            out.print(Text("    › " + h.sentence_text, style="green"))
    notes = {h.passage.source for h in hits}
    for name in sorted(notes):
        info = get_source(searcher.db, name)
        if info and info.licence:
            err.print(f"[{name}] {info.licence}, {info.attribution}", markup=False)


VERDICT_STYLE = {"supported": "bold green", "refuted": "bold red", "not_enough_info": "bold", "conflicting": "bold yellow"}


def print_verdict(result, as_json: bool) -> None:
    from rich.text import Text

    from models.nli import LABELS
    from tui.console import out

    v = result.verdict
    by_id = {h.passage.id: h for h in result.hits}
    ranked = sorted(v.judgements, key=lambda j: -max(j.probs[0], j.probs[2]))
    if as_json:
        def pair(j):
            h = by_id[j.unit.passage_id]
            return {
                "doc_id": h.passage.doc_ext_id, "title": h.passage.title, "source": h.passage.source,
                "passage_rank": h.rank, "unit": j.unit.kind, "sentences": list(j.unit.sentences),
                "text": j.unit.text, "probs": dict(zip(LABELS, map(float, j.probs), strict=True)),
                "support": j.support,
            }
        obj = {
            "run_id": result.run_id, "claim": result.claim, "verdict": v.label, "support": v.support,
            "deciding": pair(v.deciding) if v.deciding else None, "pairs": [pair(j) for j in ranked],
        }
        if result.expansion is not None:  # generated text, kept apart from the evidence pairs
            obj["expansion"] = {
                "method": result.expansion.method, "preset": result.expansion.preset,
                "documents": list(result.expansion.documents), "model": result.expansion.model.get("model_id"),
                "matched": result.leakage.matched if result.leakage else None,
            }
        sys.stdout.write(json.dumps(obj) + "\n")
        return
    head = Text("verdict: ")
    head.append(v.label, style=VERDICT_STYLE[v.label])
    head.append(f"   support {v.support:+.2f}   (run {result.run_id})", style="dim")
    out.print(head)
    for j in ranked[:5]:
        h = by_id[j.unit.passage_id]
        mark = "▶" if j is v.deciding else " "
        line = Text(f" {mark} E {j.probs[0]:.2f}  N {j.probs[1]:.2f}  C {j.probs[2]:.2f}  ")
        line.append(f"{h.passage.title} [{source_label(h.passage.source)}:{h.passage.doc_ext_id}] {j.unit.kind}",
                    style="cyan")
        out.print(line)
        out.print(Text("     " + j.unit.text[:300], style="green" if j is v.deciding else ""))


def print_check(results: list[dict], fmt: str) -> None:
    from rich.text import Text

    from tui.console import out

    if fmt == "jsonl":
        for r in results:
            sys.stdout.write(json.dumps(r) + "\n")
        return
    if fmt == "json":
        sys.stdout.write(json.dumps(results, indent=2) + "\n")
        return
    for r in results:
        fp = r["scores"].get("factual_precision", {}).get("value")
        score = f"  factual precision {fp:.2f}" if fp is not None else "  (not scored yet)"
        out.print(Text(f"run {r['run_id']}" + (f" ({r['id']})" if r["id"] else "") + score, style="bold"))
        for c in r["claims"]:
            line = Text(f" {c['idx'] + 1:>2}. ")
            label = c["verdict"] or ("not checkable" if not c["checkable"] else c["status"])
            line.append(f"{label:<16}", style=VERDICT_STYLE.get(c["verdict"] or "", "dim"))
            line.append(f"{c['support']:+.2f}  " if c["support"] is not None else "       ")
            line.append(c["text"])
            out.print(line)
            ev = c["evidence"]
            if ev:
                body = " ".join(ev["text"][:200].split())
                out.print(Text(f"       ↳ {ev['title']} [{source_label(ev['source'])}:{ev['doc_id']}]: {body}", style="dim"))
    if len(results) > 1:
        out.print(Text(batch_summary(results), style="bold"))


def batch_summary(results: list[dict]) -> str:
    """The last line of a batch's table: how many answers, their mean factual precision (FActScore's
    batch score: the mean over answers that have a verified claim, as the HTML batch page reads it)
    and the verdicts of all their claims. Why: a fact-checker running a ``check --jsonl`` file in
    a terminal sees the batch at a glance, without exporting it."""
    values = [fp for r in results if (fp := (r["scores"].get("factual_precision") or {}).get("value")) is not None]
    verdicts = [c["verdict"] for r in results for c in r["claims"] if c["verdict"]]
    counts = ", ".join(f"{verdicts.count(v)} {v.replace('_', ' ')}" for v in VERDICT_STYLE if verdicts.count(v))
    mean = f"mean factual precision {sum(values) / len(values):.2f} over {len(values)} scored" if values else "none scored"
    return f"batch: {len(results)} answers, {mean}; {len(verdicts)} claims: {counts or 'none verified'}"


# ---------------------------------------------------------------- scores, attribution, agreement (issue 6)


def with_beta(result: dict, beta: float | None) -> None:
    """Recompute a stored ICAT score with another β for display (ICAT, "Beyond Factual Accuracy" §6.5: β is a live
    control; nothing is re-run or stored)."""
    from core.score.icat import ICAT_KIND, icat_from_detail

    icat = result["scores"].get(ICAT_KIND)
    if beta is None or not icat or not icat.get("detail"):
        return
    detail = icat_from_detail(icat["detail"], result["claims"], beta)
    result["scores"][ICAT_KIND] = {"value": detail["icat"], "detail": detail}


def print_scores(scores: dict) -> None:
    """One line per stored score kind, with what it counted."""
    from tui.console import out

    for kind, s in sorted(scores.items()):
        v, d = s.get("value"), s.get("detail") or {}
        shown = "—" if v is None else f"{v:.3f}"
        if kind == "factual_precision":
            extra = (f"{d.get('supported', 0)}/{d.get('verified', 0)} supported, {d.get('pending', 0)} pending, "
                     f"{d.get('abstentions', 0)} abstentions, {d.get('not_checkable', 0)} not checkable")
            if d.get("abstained"):
                extra += "; the answer abstained (no precision, as FActScore)"
        elif kind == "icat":
            names = {a["id"]: a["text"] for a in d.get("aspects", [])}
            gaps = ", ".join(names.get(g, str(g)) for g in d.get("gaps", [])) or "none"
            extra = (f"ICAT-β={d.get('beta', 1):g}: factuality {d.get('factuality', 0):.3f}, coverage "
                     f"{d.get('coverage', 0):.3f} ({len(d.get('covered', []))}/{d.get('n_aspects', 0)} aspects; "
                     f"alignment {d.get('alignment', {}).get('method', '?')}); gaps: {gaps}")
        elif kind == "attribution":
            extra = ", ".join(f"{k} {n}" for k, n in (d.get("labels") or {}).items())
        else:
            extra = ""
        out.print(f"  {kind:<18} {shown:>6}  {extra}", markup=False, highlight=False)
