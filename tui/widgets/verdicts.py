"""Verdict badges and probability bars as Rich text, coloured from the theme's variables
(``$verdict-supported`` …), so every theme, high-contrast included, sets the colours."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

BADGES = {
    "supported": ("✔", "supported", "verdict-supported"),
    "refuted": ("✘", "refuted", "verdict-refuted"),
    "not_enough_info": ("?", "not enough info", "verdict-nei"),
    "conflicting": ("⚡", "conflicting", "verdict-conflicting"),
}
STAGES = {"pending": "· pending", "retrieving": "⟳ retrieving", "verifying": "⟳ verifying", "error": "! error"}


def verdict_badge(label: str | None, status: str, checkable: bool, colours: Mapping[str, str]) -> Text:
    """The status column: a stage while the claim is worked on, then its verdict badge."""
    if not checkable:
        return Text("– not checkable", style="dim")
    if label in BADGES:
        icon, name, var = BADGES[label]
        return Text(f"{icon} {name}", style=f"bold {colours.get(var, '')}".strip())
    return Text(STAGES.get(status, status), style="italic" if status != "error" else f"bold {colours.get('error', '')}")


def support_text(support: float | None) -> Text:
    return Text("" if support is None else f"{support:+.2f}", justify="right")


def prob_bar(name: str, p: float, colour: str, width: int = 20) -> Text:
    """``entail   ████████░░░░ 0.62`` — a probability as a bar of ``width`` cells."""
    filled = round(max(0.0, min(1.0, p)) * width)
    bar = Text(f"{name:<11}")
    bar.append("█" * filled, style=colour)
    bar.append("░" * (width - filled), style="dim")
    bar.append(f" {p:.2f}")
    return bar


# ExpertQA attribution labels (ExpertQA, Malaviya et al. §3.3) and the theme variable each is drawn with.
ATTRIBUTION = {
    "Complete": ("✔", "verdict-supported"),
    "Partial": ("◐", "verdict-conflicting"),
    "Incomplete": ("✘", "verdict-refuted"),
    "Missing": ("∅", "verdict-nei"),
    "N/A": ("–", "verdict-nei"),
}


def attribution_badge(label: str, colours: Mapping[str, str]) -> Text:
    icon, var = ATTRIBUTION.get(label, ("?", "verdict-nei"))
    return Text(f"{icon} {label}", style=f"bold {colours.get(var, '')}".strip())
