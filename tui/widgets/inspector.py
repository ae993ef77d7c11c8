"""The evidence inspector: for the selected claim, each retrieved passage with its title,
source and URL, its retrieval scores and ranks, the judged sentences highlighted (the
deciding one strongest), the entail / neutral / contradict probabilities as bars, the
passage's context characteristics (Hagström et al., "A Reality Check on Context Utilisation" §4.1) and, once computed (``a``), its context
usage (ACU, Hagström et al., "A Reality Check on Context Utilisation" §5). A claim retrieved with a query expansion (Yoon et al., "Hypothetical Documents or Knowledge Leakage?") shows the
generated text apart, labelled as generated, and a flag when it already states the evidence."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.inspect import ClaimView, EvidenceView, JudgementView
from tui.widgets.verdicts import BADGES, attribution_badge, prob_bar

# retrieval stages beyond fused / bm25 / dense (core/retrieve/searcher.py): the passage's best
# sentence (cosine, rank in the pool), the fitted fusion before the subject rule, and the
# subject's own document (rank among its passages)
EXTRA_STAGES = ("sentence", "fusion", "subject")


def _extra_stages(ev: EvidenceView) -> list[str]:
    """The best-sentence stage's score and rank; the fusion's own and the subject rule's when
    the subject rule acted on this claim (otherwise the fused score above already is the fusion's)."""
    stages = ev.stages or {}
    shown = EXTRA_STAGES if "subject" in stages else ("sentence",)
    return [_fmt(s, r, name) for name, (s, r) in stages.items() if name in shown]


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


def characteristics_text(claim: ClaimView, ev: EvidenceView, characterizer: Any) -> Text:
    """One dim line of numbers and a line of flags (Hagström et al., "A Reality Check on Context Utilisation" §4.1, Table 10's quantities)."""
    c = characterizer.characterize(claim.text, ev.text, url=ev.url, claim_date=claim.claim_date,
                                   evidence_date=ev.date)
    nums = [f"jaccard {c.jaccard:.2f}", f"overlap {c.claim_overlap:.2f}",
            f"Flesch {c.flesch_reading_ease:.0f}" if c.flesch_reading_ease is not None else "Flesch –",
            f"{c.claim_length}/{c.evidence_length} chars",
            f"entities {c.entity_overlap:.2f}" if c.entity_overlap is not None else "entities –"]
    text = Text("  ".join(nums), style="dim")
    flags = c.flags()
    detail = {"hedging": c.hedge_words, "hedging discourse": c.hedge_discourse_markers,
              "cites a source": c.external_source_cues}
    if flags:
        text.append("\n")
        for i, flag in enumerate(flags):
            words = detail.get(flag)
            text.append(("  " if i else "") + f"⚑ {flag}" + (f" ({', '.join(words[:3])})" if words else ""),
                        style="italic")
    return text


def context_usage_text(ev: EvidenceView, colours: Mapping[str, str]) -> Text | None:
    """The stored ACU of this passage: ΔP per answer, the sum on [-3, 3], repulsion."""
    u = ev.context_usage
    if u is None:
        return None
    text = Text(f"ACU {u.acu_sum:+.2f}", style="bold")
    text.append(f"  (ΔP True {u.delta['True']:+.2f}  None {u.delta['None']:+.2f}  False {u.delta['False']:+.2f}; "
                f"stance {u.stance} from the {u.stance_source}; {u.shots}-shot)", style="dim")
    if u.repulsion:
        text.append("  context repulsion", style=f"bold {colours.get('verdict-refuted', 'red')}")
    if u.memory_conflict:
        text.append("  memory conflict", style="italic")
    return text


def expansion_card(claim: ClaimView, colours: Mapping[str, str]) -> Group | None:
    """The generated text the claim was retrieved with, never as evidence (Yoon et al., "Hypothetical Documents or Knowledge Leakage?")."""
    x = claim.expansion
    if x is None:
        return None
    warn = colours.get("warning", "yellow")
    parts: list = []
    if x.matched:
        head = Text(f"⚑ the {x.method} expansion already states the retrieved evidence (leakage)", style=f"bold {warn}")
        parts.append(head)
        for m in x.matches[:2]:
            line = Text("  generated “", style="dim")
            line.append(m.sentence, style=warn)
            line.append(f"” is entailed by evidence “{m.premise[:160]}” (P {m.p_entailment:.2f})", style="dim")
            parts.append(line)
    elif x.matched is False:
        parts.append(Text(f"{x.method} expansion: no generated sentence is entailed by the retrieved evidence",
                          style="dim"))
    parts.append(Text(f"generated by {x.model} ({x.preset} prompt) — not evidence, never judged:", style="dim"))
    for doc in x.documents:
        parts.append(Text(" ".join(doc.split())[:600], style="dim italic"))
    return Group(*parts)


def evidence_card(claim: ClaimView, ev: EvidenceView, colours: Mapping[str, str], characterizer: Any = None) -> Group:
    deciding = next((j for j in ev.judgements if j.id == claim.deciding_judgement_id), None)
    best = deciding or ev.best()
    head = Text()
    head.append(f"#{ev.rank} ", style="bold")
    head.append(ev.title or ev.doc_id, style="bold")
    source = "given" if ev.source == "_given" else ev.source  # a document given to the run (core/pipeline/given.py)
    head.append(f"  {source}:{ev.doc_id}", style="dim")
    if deciding is not None and claim.verdict in BADGES:
        icon, name, var = BADGES[claim.verdict]
        head.append(f"  {icon} decides: {name}", style=f"bold {colours.get(var, '')}")
    parts: list = [head]
    if ev.url:
        parts.append(Text(ev.url, style=f"underline {colours.get('primary', '')}"))
    parts.append(Text(
        "  ".join([_fmt(ev.fused_score, ev.rank, "fused"), _fmt(ev.bm25_score, ev.bm25_rank, "bm25"),
                   _fmt(ev.dense_score, ev.dense_rank, "dense"), *_extra_stages(ev)]),
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
    acu = context_usage_text(ev, colours)
    if acu is not None:
        parts.append(acu)
    if characterizer is not None:
        parts.append(characteristics_text(claim, ev, characterizer))
    parts.append(passage_text(ev, deciding, colours))
    return Group(*parts, Text(""))


def attribution_card(claim: ClaimView, detail: Mapping, sources: Mapping[str, str | None],
                     colours: Mapping[str, str]) -> Group:
    """An attributed claim (ExpertQA, Malaviya et al.): its label, what it cites, the evidence sentences AutoAIS
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

    def show(self, claim: ClaimView | None, colours: Mapping[str, str], attribution: Mapping | None = None,
             characterizer: Any = None) -> None:
        """Show ``claim``'s evidence; ``attribution`` (an ``attribution`` score detail) shows
        an attributed answer's claim beside the sources it cites instead; ``characterizer``
        (core.diagnostics.characteristics.Characterizer) adds each passage's context characteristics."""
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
        expansion = expansion_card(claim, colours)
        if expansion is not None:
            cards.append(Static(expansion, classes="card expansion"))
        cards += [Static(evidence_card(claim, ev, colours, characterizer), classes="card") for ev in claim.evidence]
        self.mount_all(cards)
        self.scroll_home(animate=False)
