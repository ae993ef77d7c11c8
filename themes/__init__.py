"""Textual themes for the workbench: dark, light and high-contrast.

Verdict colours are theme variables (``verdict-supported`` …) so widgets never hard-code a
colour and every theme, including high-contrast, keeps the four verdicts distinguishable.
"""

from __future__ import annotations

from pathlib import Path

from textual.theme import Theme

DARK = Theme(
    name="claimscope-dark",
    primary="#5FA8D3",
    secondary="#9D8DF1",
    accent="#F2C14E",
    foreground="#E6E6E6",
    background="#14161A",
    surface="#1D2026",
    panel="#262A31",
    success="#5DBB63",
    warning="#F2C14E",
    error="#E5534B",
    dark=True,
    variables={
        "verdict-supported": "#5DBB63",
        "verdict-refuted": "#E5534B",
        "verdict-nei": "#8B949E",
        "verdict-conflicting": "#F2C14E",
    },
)

LIGHT = Theme(
    name="claimscope-light",
    primary="#1F6FB2",
    secondary="#6A4FC9",
    accent="#B7791F",
    foreground="#1B1F24",
    background="#FAFAF7",
    surface="#FFFFFF",
    panel="#ECEDEA",
    success="#2F855A",
    warning="#B7791F",
    error="#C53030",
    dark=False,
    variables={
        "verdict-supported": "#2F855A",
        "verdict-refuted": "#C53030",
        "verdict-nei": "#5A636E",
        "verdict-conflicting": "#B7791F",
    },
)

HIGH_CONTRAST = Theme(
    name="claimscope-high-contrast",
    primary="#FFFFFF",
    secondary="#00FFFF",
    accent="#FFFF00",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#1A1A1A",
    success="#00FF00",
    warning="#FFFF00",
    error="#FF3030",
    dark=True,
    variables={
        "verdict-supported": "#00FF00",
        "verdict-refuted": "#FF3030",
        "verdict-nei": "#FFFFFF",
        "verdict-conflicting": "#FFFF00",
    },
)

THEMES: dict[str, Theme] = {t.name: t for t in (DARK, LIGHT, HIGH_CONTRAST)}

# Styles shared by all themes (dialogs, verdict classes), loaded by the app after its own.
THEMES_CSS = Path(__file__).with_name("claimscope.tcss")
