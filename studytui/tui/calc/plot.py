"""The roofline plot: log-log, one roof per GPU ceiling, the ridge marked, workloads as points.

Drawn with textual-plotext. The widget keeps one plotext figure and replaces its data in place
(`show`), then refreshes: nothing is remounted, so redraws do not flicker. Every number on the
plot comes from a calculator result or from the calc package's RooflineTerms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from textual.content import Content
from textual_plotext import PlotextPlot

from studytui.calc.roofline import RooflineTerms
from studytui.tui.format import visible_controls

TERA = 1e12
ROOF_COLOURS = {"vendor": "blue", "measured": "green", "compare": "magenta"}
POINT_COLOURS = ("red", "orange", "cyan", "yellow")
_SUFFIXES = ((1e9, "G"), (1e6, "M"), (1e3, "k"))


@dataclass(frozen=True)
class Roof:
    """One ceiling pair: a GPU's peak FLOP/s (for one precision) and its memory bandwidth."""

    label: str
    peak_flops: float
    mem_bw: float
    kind: str = "vendor"  # vendor | measured | compare

    @property
    def ridge_point(self) -> float:
        return RooflineTerms(1.0, 1.0, self.peak_flops, self.mem_bw).ridge_point

    def attainable(self, intensity: float) -> float:
        return RooflineTerms(intensity, 1.0, self.peak_flops, self.mem_bw).attainable_flops


@dataclass(frozen=True)
class WorkPoint:
    """A workload at its arithmetic intensity and the FLOP/s it can reach (or did reach)."""

    label: str
    intensity: float
    flops_rate: float


def tick_label(value: float) -> str:
    for scale, suffix in _SUFFIXES:
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def decades(lo: float, hi: float) -> list[float]:
    """Powers of ten covering [lo, hi]."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [10.0**e for e in range(first, last + 1)]


def _positive(values: Sequence[float]) -> list[float]:
    return [v for v in values if v > 0 and math.isfinite(v)]


class RooflinePlot(PlotextPlot):
    """Roofs and workload points; call `show` to redraw, `blank` when there is nothing valid."""

    DEFAULT_CSS = """
    RooflinePlot {
        height: 1fr;
        min-height: 12;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.roofs: tuple[Roof, ...] = ()
        self.points: tuple[WorkPoint, ...] = ()
        self.message = ""
        self._version = 0
        self._rendered: tuple[tuple[Any, ...], Any] | None = None
        self._draw()

    def on_unmount(self) -> None:
        # PlotextPlot subscribes to the app's theme signal with a callback that holds this widget;
        # the signal only drops dead subscribers when the theme changes, so without this every
        # closed calculator screen would stay in memory (and each opening would get slower).
        self.app.theme_changed_signal.unsubscribe(self)

    def render(self) -> Any:
        # Textual asks for a render on every refresh (focus changes, resizes, the screen coming
        # back); plotext rebuilds the whole canvas each time, so reuse it while nothing changed.
        if self._version == 1:
            return ""  # nothing drawn yet: the screen fills the plot in after its first frame
        if not self.roofs:
            return Content(f"\n  {self.message or 'Roofline: no valid inputs'}")  # no empty axes to misread
        key = (self._version, self.size.width, self.size.height, self.app.theme, self.theme)
        if self._rendered is None or self._rendered[0] != key:
            self._rendered = (key, super().render())
        return self._rendered[1]

    def show(self, roofs: Sequence[Roof], points: Sequence[WorkPoint] = ()) -> None:
        roofs_t, points_t = tuple(roofs), tuple(p for p in points if p.intensity > 0 and p.flops_rate > 0)
        if roofs_t == self.roofs and points_t == self.points and not self.message:
            return
        self.roofs, self.points, self.message = roofs_t, points_t, ""
        self._draw()
        self.refresh()

    def blank(self, message: str) -> None:
        """Nothing to plot (the inputs are not valid): show why instead of an old picture."""
        if not self.roofs and not self.points and self.message == message:
            return
        self.roofs, self.points, self.message = (), (), message
        self._draw()
        self.refresh()

    def _draw(self) -> None:
        self._version = getattr(self, "_version", 0) + 1
        self._draw_figure()

    def _draw_figure(self) -> None:
        # plotext's own log scale rewrites its data on every build (a second build fails), so the
        # axes are drawn linear over log10 values, with ticks labelled by the real decades.
        plt = self.plt
        plt.clear_data()
        plt.xlabel("arithmetic intensity (FLOP/byte), log scale")
        plt.ylabel("TFLOP/s, log")
        if not self.roofs:
            plt.title(self.message or "Roofline: no valid inputs")
            plt.xticks([0.0, 1.0], ["1", "10"])
            plt.yticks([0.0, 1.0], ["1", "10"])
            plt.scatter([0.0, 1.0], [0.0, 1.0], marker=" ")
            return
        ridges = [roof.ridge_point for roof in self.roofs]
        xs = _positive([*ridges, *(p.intensity for p in self.points)])
        x_ticks = decades(min(xs) / 10.0, max(xs) * 10.0)
        lo, hi = x_ticks[0], x_ticks[-1]
        y_values: list[float] = []
        title_parts = []
        for roof in self.roofs:
            ridge = roof.ridge_point
            vertices = [lo, ridge, hi] if lo < ridge < hi else [lo, hi]
            ys = [roof.attainable(x) / TERA for x in vertices]
            y_values += ys
            colour = ROOF_COLOURS.get(roof.kind, "blue")
            # Labels name GPUs and kernels from the learner's files: control characters escaped.
            plt.plot(_log(vertices), _log(ys), label=visible_controls(roof.label), color=colour, marker="braille")
            plt.scatter(_log([ridge]), _log([roof.peak_flops / TERA]), marker="◆", color=colour)
            title_parts.append(f"ridge {ridge:.4g} FLOP/B ({roof.kind})")
        for i, point in enumerate(self.points):
            y = point.flops_rate / TERA
            y_values.append(y)
            plt.scatter(_log([point.intensity]), _log([y]), marker="●", color=POINT_COLOURS[i % len(POINT_COLOURS)],
                        label=visible_controls(point.label))
        ys_ok = _positive(y_values)
        y_ticks = decades(min(ys_ok), max(ys_ok))
        plt.xticks(_log(x_ticks), [tick_label(x) for x in x_ticks])
        plt.yticks(_log(y_ticks), [tick_label(y) for y in y_ticks])
        plt.xlim(math.log10(lo), math.log10(hi))
        plt.ylim(math.log10(y_ticks[0]), math.log10(y_ticks[-1]))
        plt.title("  ".join(title_parts[:2]))


def _log(values: Sequence[float]) -> list[float]:
    return [math.log10(v) for v in values]
