"""Every theme defines the verdict colours, and they are pairwise distinct within a theme."""

from themes import THEMES


def test_three_themes_with_distinct_verdict_colours():
    assert {"claimscope-dark", "claimscope-light", "claimscope-high-contrast"} == set(THEMES)
    for theme in THEMES.values():
        colours = [theme.variables[f"verdict-{v}"] for v in ("supported", "refuted", "nei", "conflicting")]
        assert len(set(colours)) == 4, theme.name
        assert theme.background != theme.foreground
