"""The evidence inspector: for the selected claim, each retrieved passage with its title,
source and URL, its retrieval scores and ranks, the judged sentences highlighted (the
deciding one strongest) and the entail / neutral / contradict probabilities as bars."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.inspect import ClaimView, EvidenceView, JudgementView
from tui.widgets.verdicts import BADGES, attribution_badge, prob_bar


def _fmt(value: float | None, rank: int | None, name: str) -> str:
    if value is None:
        return f"{name} –"
    return f"{name} {value:.3f}" + (f" (#{rank})" if rank is not None else "")


def passage_text(ev: EvidenceView, deciding: JudgementView | None, colours: Mapping[str, str]) -> Text:
    """The passage with judged sentences underlined and the deciding ones in reverse video."""
    text = Text(ev.text)
    judged = {i for j in ev.judgements for i in j.sentences if j.unit != "passage"}
    strong = set(deciding.sentences) if deciding is not None else set()
    accent = colours.get("accent", "yellow")
    for i, (a, b) in enumerate(ev.sentence_spans):
        if i in strong:
            text.stylize(f"bold reverse {accent}", a, b)
        elif i in judged:
            text.stylize("underline", a, b)
    return text


def evidence_card(claim: ClaimView, ev: EvidenceView, colours: Mapping[str, str]) -> Group:
    deciding = next((j for j in ev.judgements if j.id == claim.deciding_judgement_id), None)
    best = deciding or ev.best()
    head = Text()
    head.append(f"#{ev.rank} ", style="bold")
    head.append(ev.title or ev.doc_id, style="bold")
    head.append(f"  {ev.source}:{ev.doc_id}", style="dim")
    if deciding is not None and claim.verdict in BADGES:
        icon, name, var = BADGES[claim.verdict]
        head.append(f"  {icon} decides: {name}", style=f"bold {colours.get(var, '')}")
    parts: list = [head]
    if ev.url:
        parts.append(Text(ev.url, style=f"underline {colours.get('primary', '')}"))
    parts.append(Text(
        "  ".join([_fmt(ev.fused_score, ev.rank, "fused"), _fmt(ev.bm25_score, ev.bm25_rank, "bm25"),
                   _fmt(ev.dense_score, ev.dense_rank, "dense")]),
        style="dim",
    ))
    if best is not None:
        unit = {"sentence": "best sentence", "passage": "whole passage", "set": "sentence set"}[best.unit]
        grounded = "" if best.grounded else "  (does not name the claim's subject: cannot decide)"
        parts.append(Text(f"{unit}: P(e−c) {best.support:+.2f}{grounded}", style="italic"))
        if best.unit != "passage":
            parts.append(Text(f"“{best.text}”", style=colours.get("accent", "")))
        for name, p, var in zip(("entail", "neutral", "contradict"), best.probs,
                                ("verdict-supported", "verdict-nei", "verdict-refuted"), strict=True):
            parts.append(prob_bar(name, p, colours.get(var, "")))
    parts.append(passage_text(ev, deciding, colours))
    return Group(*parts, Text(""))


def attribution_card(claim: ClaimView, detail: Mapping, sources: Mapping[str, str | None],
                     colours: Mapping[str, str]) -> Group:
    """An attributed claim (seed 002): its label, what it cites, the evidence sentences AutoAIS
    kept (the two most entailing, with P(entail)) and the cited sources' text."""
    head = Text()
    head.append(claim.text, style="bold")
    head.append("\n")
    head.append_text(attribution_badge(detail["label"], colours))
    if detail.get("autoais") is not None:
        head.append(f"  AutoAIS {detail['autoais']}  P(entail) {detail['p_entailment']:.2f}", style="italic")
    cited = detail.get("citations") or []
    head.append("\ncites " + (" ".join(f"[{n}]" for n in cited) if cited else "nothing"), style="dim")
    parts: list = [head]
    for _, sentence, p in detail.get("sentences") or []:
        line = Text("  ")
        line.append(f"“{sentence}”", style=f"bold {colours.get('accent', '')}")
        line.append(f"  P(entail) {p:.2f}", style="dim")
        parts.append(line)
    for atom, ok in detail.get("atoms") or []:
        parts.append(Text(f"  {'✔' if ok else '✘'} {atom}", style="" if ok else "dim"))
    for n in cited:
        text = sources.get(str(n))
        body = Text(f"\n[{n}] ", style="bold")
        body.append(" ".join(text.split())[:800] if text else "(source unavailable: N/A)",
                    style="" if text else "italic")
        parts.append(body)
    return Group(*parts)


class EvidenceInspector(VerticalScroll):
    """Shows one claim's evidence; ``show(None)`` clears it."""

    DEFAULT_CSS = """
    EvidenceInspector { height: 1fr; }
    EvidenceInspector > .card { padding: 0 1; margin-bottom: 1; }
    """

    def show(self, claim: ClaimView | None, colours: Mapping[str, str], attribution: Mapping | None = None) -> None:
        """Show ``claim``'s evidence; ``attribution`` (an ``attribution`` score detail) shows
        an attributed answer's claim beside the sources it cites instead."""
        self.remove_children()
        if claim is None:
            self.mount(Static("Select a claim to see its evidence.", classes="card hint"))
            return
        attributed = {c["idx"]: c for c in (attribution or {}).get("claims", [])}.get(claim.idx)
        if attributed is not None:
            self.mount(Static(attribution_card(claim, attributed, attribution.get("sources", {}), colours),
                              classes="card"))
            self.scroll_home(animate=False)
            return
        head = Text()
        head.append(claim.text, style="bold")
        if claim.original_text:
            head.append(f"\n(edited; the decomposer said: {claim.original_text})", style="dim")
        if claim.citations:
            head.append(f"\ncites {', '.join(f'[{n}]' for n in claim.citations)}", style="dim")
        if not claim.checkable:
            head.append(f"\nnot checkable: {claim.note or 'not a factual claim'}", style="italic")
        elif claim.status != "done":
            head.append(f"\n{claim.status} …", style="italic")
        elif not claim.evidence:
            head.append("\nno evidence found in the sources", style="italic")
        cards = [Static(head, classes="card")]
        cards += [Static(evidence_card(claim, ev, colours), classes="card") for ev in claim.evidence]
        self.mount_all(cards)
        self.scroll_home(animate=False)
