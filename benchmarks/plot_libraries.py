"""textual-plotext vs textual-plot, side by side, for the workbench's three plots at 120×40:
the same data (support scores of a run by verdict, precision of runs over time, per-answer
precision of a batch) drawn by each library, saved as SVG screenshots (and PNGs through
headless Chromium when it is installed) under benchmarks/results/plots/ to look at.

    python benchmarks/plot_libraries.py

The choice and why are written in docs/benchmarks.md ("Plots in the workbench").
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

OUT = ROOT / "benchmarks" / "results" / "plots"
SUPPORT = {  # a run's support scores, by verdict
    "supported": [0.91, 0.84, 0.77, 0.62, 0.95, 0.88],
    "refuted": [-0.81, -0.66, -0.92],
    "not_enough_info": [0.05, -0.12, 0.21, 0.33, -0.02],
    "conflicting": [0.12, -0.08],
}
COLOURS = {"supported": "#5DBB63", "refuted": "#E5534B", "not_enough_info": "#8B949E", "conflicting": "#F2C14E"}
OVER_TIME = [0.4, 0.5, 0.5, 0.6, 0.75, 0.8]
BATCH = [0.2, 0.45, 0.5, 0.62, 0.7, 0.71, 0.8, 0.8, 0.85, 0.9, 1.0, 1.0, 1.0]
BINS = [(-1 + i * 0.2) for i in range(10)]


def _counts(values):
    return [sum(lo <= v < lo + 0.2 or (lo == BINS[-1] and v == 1.0) for v in values) for lo in BINS]


def plotext_app():
    from textual.app import App
    from textual.containers import Grid
    from textual_plotext import PlotextPlot

    class A(App):
        CSS = "Grid { grid-size: 1 3; }"

        def compose(self):
            with Grid():
                yield PlotextPlot(id="a")
                yield PlotextPlot(id="b")
                yield PlotextPlot(id="c")

        def on_mount(self):
            plt = self.query_one("#a", PlotextPlot).plt
            labels = [f"{lo:+.1f}" for lo in BINS]
            plt.stacked_bar(labels, [_counts(v) for v in SUPPORT.values()], labels=list(SUPPORT),
                            color=[tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in COLOURS.values()])
            plt.title("support score by verdict")
            plt = self.query_one("#b", PlotextPlot).plt
            plt.plot(list(range(1, len(OVER_TIME) + 1)), OVER_TIME, marker="braille")
            plt.scatter(list(range(1, len(OVER_TIME) + 1)), OVER_TIME)
            plt.ylim(0, 1)
            plt.title("precision over runs")
            plt = self.query_one("#c", PlotextPlot).plt
            plt.hist(BATCH, bins=10)
            plt.title("per-answer precision")

    return A()


def textual_plot_app():
    from textual.app import App
    from textual.containers import Vertical
    from textual_plot import HiResMode, PlotWidget

    class A(App):
        CSS = "PlotWidget { height: 1fr; }"

        def compose(self):
            with Vertical():
                yield PlotWidget(id="a")
                yield PlotWidget(id="b")
                yield PlotWidget(id="c")

        def on_mount(self):
            p = self.query_one("#a", PlotWidget)
            base = [0] * len(BINS)
            for (name, values), colour in zip(SUPPORT.items(), COLOURS.values(), strict=True):
                counts = _counts(values)
                top = [b + c for b, c in zip(base, counts, strict=True)]
                p.bar([lo + 0.1 for lo in BINS], top, width=0.18, bar_style=colour, label=name)
                base = top
            p.show_legend()
            p.set_xlabel("support score by verdict")
            p = self.query_one("#b", PlotWidget)
            p.plot(list(range(1, len(OVER_TIME) + 1)), OVER_TIME, hires_mode=HiResMode.BRAILLE)
            p.scatter(list(range(1, len(OVER_TIME) + 1)), OVER_TIME)
            p.set_ylimits(0, 1)
            p.set_xlabel("precision over runs")
            p = self.query_one("#c", PlotWidget)
            p.bar([i / 10 + 0.05 for i in range(10)],
                  [sum(i / 10 <= v < (i + 1) / 10 or (i == 9 and v == 1.0) for v in BATCH) for i in range(10)],
                  width=0.08, bar_style="#2f6fb3")
            p.set_xlabel("per-answer precision")

    return A()


async def shoot(app, path: Path) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        app.save_screenshot(str(path))


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, make in (("textual-plotext", plotext_app), ("textual-plot", textual_plot_app)):
        svg = OUT / f"{name}.svg"
        asyncio.run(shoot(make(), svg))
        browser = shutil.which("chromium")
        if browser:
            with tempfile.TemporaryDirectory() as profile:
                subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                f"--user-data-dir={profile}", "--window-size=1500,1000",
                                f"--screenshot={OUT / f'{name}.png'}", svg.as_uri()],
                               capture_output=True, check=False, timeout=120)
        print(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
