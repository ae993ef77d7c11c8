"""Plots in the workbench, drawn with textual-plotext (Textualize's wrapper of plotext).

Why textual-plotext and not textual-plot: both were tried on the same three plots at 120×40
(benchmarks/plot_libraries.py, pictures under benchmarks/results/plots/). plotext has a real
stacked bar, so the support scores of a run stack by verdict in the verdict colours with a
legend; an empty bin draws nothing; titles and categorical tick labels come built in.
textual-plot overlays bars (a stack has to be faked by drawing the tallest first), draws a
row of blocks for a zero-height bar, and collapsed to a few cells inside a grid until given
explicit heights; its strength, pan and zoom with the mouse, matters little for these small
summaries. docs/benchmarks.md ("Plots in the workbench") keeps the comparison.

Three plots:
- :class:`SupportPlot` (scores screen, f4): the run's support scores, P(entail) − P(contradict)
  in [-1, 1], in ten bins, stacked by verdict;
- :class:`PrecisionPlot` (history screen): factual precision of the runs of one text over
  time (run by run), or per-answer factual precision of a batch (a histogram).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual_plotext import PlotextPlot

VERDICTS = (("supported", "verdict-supported"), ("refuted", "verdict-refuted"),
            ("not_enough_info", "verdict-nei"), ("conflicting", "verdict-conflicting"))
SUPPORT_BINS = tuple(round(-1 + 0.2 * i, 1) for i in range(10))  # left edges; the last bin is closed
PRECISION_BINS = tuple(round(0.1 * i, 1) for i in range(10))


def _rgb(colour: str) -> tuple[int, int, int]:
    c = colour.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def binned(values: Sequence[float], edges: Sequence[float], width: float) -> list[int]:
    """Counts per bin [edge, edge + width); the last bin also takes its right edge."""
    counts = [0] * len(edges)
    for v in values:
        i = int((v - edges[0]) / width + 1e-9)
        counts[min(len(edges) - 1, max(0, i))] += 1
    return counts


def _integer_yticks(plt, top: int) -> None:
    step = max(1, -(-top // 5))
    ticks = list(range(0, top + 1, step))
    plt.yticks(ticks, [str(t) for t in ticks])


class SupportPlot(PlotextPlot):
    """Support scores of a run's judged claims, ten bins over [-1, 1], stacked by verdict."""

    DEFAULT_CSS = "SupportPlot { height: 14; }"

    def show(self, claims: Sequence, colours: Mapping[str, str]) -> None:
        """``claims``: anything with ``verdict`` and ``support`` (store.runs.ClaimRow, ClaimView)."""
        plt = self.plt
        plt.clear_figure()
        judged = [c for c in claims if c.verdict and c.support is not None]
        stacks, names, palette = [], [], []
        for verdict, var in VERDICTS:
            values = [c.support for c in judged if c.verdict == verdict]
            if values:
                stacks.append(binned(values, SUPPORT_BINS, 0.2))
                names.append(f"{verdict.replace('_', ' ')} {len(values)}")
                palette.append(_rgb(colours.get(var, "#888888")))
        plt.title(f"support score (P(entail) − P(contradict)) of {len(judged)} judged claims, by verdict")
        if stacks:
            plt.stacked_bar([f"{e:+.1f}" for e in SUPPORT_BINS], stacks, labels=names, color=palette, width=0.8)
            _integer_yticks(plt, max(sum(col) for col in zip(*stacks, strict=True)))
        self.refresh()


class PrecisionPlot(PlotextPlot):
    """Factual precision of several runs: over time, or as a batch's distribution."""

    DEFAULT_CSS = "PrecisionPlot { height: 14; }"

    def show_over_time(self, points: Sequence[tuple[int, float | None]], colour: str) -> None:
        """``points``: (run id, factual precision or None), oldest first."""
        plt = self.plt
        plt.clear_figure()
        shown = [(rid, fp) for rid, fp in points if fp is not None]
        plt.title(f"factual precision of the {len(points)} run(s) of this text, oldest first")
        plt.ylim(0, 1)
        plt.yticks([0, 0.25, 0.5, 0.75, 1], ["0", ".25", ".5", ".75", "1"])
        if shown:
            xs = list(range(1, len(shown) + 1))
            plt.plot(xs, [fp for _, fp in shown], color=_rgb(colour), marker="braille")
            plt.scatter(xs, [fp for _, fp in shown], color=_rgb(colour), marker="●")
            plt.xticks(xs, [f"run {rid}" for rid, _ in shown])
            plt.xlim(0.5, len(shown) + 0.5)
        self.refresh()

    def show_batch(self, values: Sequence[float], colour: str, label: str) -> None:
        """A histogram of per-answer factual precision in ten bins of 0.1."""
        plt = self.plt
        plt.clear_figure()
        counts = binned(values, PRECISION_BINS, 0.1)
        mean = sum(values) / len(values) if values else None
        plt.title(f"per-answer factual precision, {label}: {len(values)} answers"
                  + ("" if mean is None else f", mean {mean:.2f}"))
        plt.bar([f"{e:.1f}–{e + 0.1:.1f}" for e in PRECISION_BINS], counts, color=_rgb(colour), width=0.8)
        _integer_yticks(plt, max(counts, default=0) or 1)
        self.refresh()
