"""The profile's roofline: log-log, the GPU's roofs (vendor solid, measured dashed), each ridge
point marked, and the kernels as points, coloured by limiter, their size standing for their
share of the time.

Drawn with textual-plotext like the calculators' plot (studytui.tui.calc.plot): the axes are
linear over log10 values, with ticks labelled by the real decades (plotext's own log scale
rewrites its data on every build). The widget keeps its figure and redraws in place (`show`);
the picture is rebuilt only when what it shows, its size or the theme changes.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from textual.content import Content
from textual_plotext import PlotextPlot

from studytui.tui.profile.view import Dot, RoofLine

# Colours by limiter (plotext names); the words are in the legend under the plot, the table and
# the detail pane, so colour is never the only channel (NO_COLOR: letters instead, see `marker`).
BOUND_COLOURS = {"compute": "orange", "memory": "cyan", "latency": "magenta", "unknown": "gray"}
BOUND_LETTERS = {"compute": "c", "memory": "m", "latency": "l", "unknown": "?"}
VENDOR_COLOUR = "blue"
MEASURED_COLOUR = "green"
SELECTED_COLOUR = "red"
SELECTED_MARKER = "◉"
# Marker by share of the time shown: (at least this share, glyph), largest first.
SIZES = ((0.20, "⬤"), (0.05, "●"), (0.01, "•"), (0.0, "·"))
DASHES = 24  # segments of a measured roof, every other one drawn
_SUFFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def size_glyph(share: float) -> str:
    return next(glyph for floor, glyph in SIZES if share >= floor)


def marker(bound: str, share: float, no_color: bool = False) -> str:
    """The glyph of a kernel: its size by share of the time; without colour, the limiter's
    initial instead (upper case from 5% of the time)."""
    if no_color:
        letter = BOUND_LETTERS.get(bound, "?")
        return letter.upper() if share >= 0.05 else letter
    return size_glyph(share)


def tick(value: float) -> str:
    for scale, suffix in _SUFFIXES:
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def decades(lo: float, hi: float) -> list[float]:
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if last == first:
        last += 1
    return [10.0**e for e in range(first, last + 1)]


def _log(values: Sequence[float]) -> list[float]:
    return [math.log10(v) for v in values]


def _ok(v: float) -> bool:
    return v > 0 and math.isfinite(v)


class ProfilePlot(PlotextPlot):
    """Roofs and kernels; `show` redraws, `blank` says why there is nothing to draw."""

    DEFAULT_CSS = """
    ProfilePlot { height: 1fr; min-height: 6; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.roofs: tuple[RoofLine, ...] = ()
        self.dots: tuple[Dot, ...] = ()
        self.selected: Dot | None = None
        self.no_color = False
        self.message = "Reading the profile…"
        self._version = 0
        self._rendered: tuple[tuple[Any, ...], Any] | None = None

    def on_unmount(self) -> None:
        # PlotextPlot's theme subscription holds this widget until the theme next changes: drop it
        # (as the calculators' plot does), or every closed profile screen stays in memory.
        self.app.theme_changed_signal.unsubscribe(self)

    def show(self, roofs: Sequence[RoofLine], dots: Sequence[Dot], selected: Dot | None = None, no_color: bool = False) -> None:
        roofs_t = tuple(r for r in roofs if _ok(r.peak) and _ok(r.bw))
        dots_t = tuple(d for d in dots if _ok(d.x) and _ok(d.y))
        state = (roofs_t, dots_t, selected, no_color, "")
        if state == (self.roofs, self.dots, self.selected, self.no_color, self.message):
            return
        self.roofs, self.dots, self.selected, self.no_color, self.message = state
        self._changed()

    def blank(self, message: str) -> None:
        if not self.roofs and not self.dots and self.message == message:
            return
        self.roofs, self.dots, self.selected, self.message = (), (), None, message
        self._changed()

    def _changed(self) -> None:
        self._version += 1
        self.refresh()

    def render(self) -> Any:
        if self.message or not self.roofs:
            return Content(f"\n  {self.message or 'No GPU ceilings to draw: choose a GPU (g).'}")
        key = (self._version, self.size.width, self.size.height, self.app.theme, self.theme)
        if self._rendered is None or self._rendered[0] != key:
            self._draw()
            self._rendered = (key, super().render())
        return self._rendered[1]

    # -- drawing ----------------------------------------------------------------------------------
    def _draw(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.xlabel("FLOP/B (log)")
        plt.ylabel("FLOP/s")
        roofs, dots = self.roofs, self.dots
        xs = [r.ridge for r in roofs] + [d.x for d in dots]
        lo, hi = decades(min(xs) / 3.0, max(xs) * 3.0)[0], decades(min(xs) / 3.0, max(xs) * 3.0)[-1]
        ys = [r.peak for r in roofs] + [d.y for d in dots] + [min(r.attainable(lo) for r in roofs)]
        y_ticks = decades(min(ys), max(ys) * 1.5)
        y_lo = max(y_ticks[0], min(ys) / 3.0) if dots else y_ticks[0]
        y_lo = 10.0 ** math.floor(math.log10(y_lo))
        y_ticks = [t for t in y_ticks if t >= y_lo]
        for roof in sorted(roofs, key=lambda r: r.measured):
            self._roof(roof, lo, hi)
        # Small kernels first, so the large ones (and the selected one, last) stay on top.
        groups: dict[tuple[str, str], list[Dot]] = {}
        for dot in sorted(dots, key=lambda d: d.share):
            groups.setdefault((dot.bound, marker(dot.bound, dot.share, self.no_color)), []).append(dot)
        for (bound, glyph), members in sorted(groups.items(), key=lambda kv: max(d.share for d in kv[1])):
            plt.scatter(_log([d.x for d in members]), _log([d.y for d in members]), marker=glyph,
                        color=BOUND_COLOURS.get(bound, "gray"))
        if self.selected is not None and _ok(self.selected.x) and _ok(self.selected.y):
            plt.scatter(_log([self.selected.x]), _log([self.selected.y]), marker="X" if self.no_color else SELECTED_MARKER,
                        color=SELECTED_COLOUR)
        x_ticks = decades(lo, hi)
        plt.xticks(_log(x_ticks), [tick(x) for x in x_ticks])
        plt.yticks(_log(y_ticks), [tick(y) for y in y_ticks])
        plt.xlim(math.log10(lo), math.log10(hi))
        plt.ylim(math.log10(y_ticks[0]), math.log10(y_ticks[-1]))

    def _roof(self, roof: RoofLine, lo: float, hi: float) -> None:
        plt = self.plt
        colour = MEASURED_COLOUR if roof.measured else VENDOR_COLOUR
        ridge = roof.ridge
        vertices = [lo, ridge, hi] if lo < ridge < hi else [lo, hi]
        if roof.measured:
            # Dashed: the roof cut into DASHES pieces along x (log), every other piece drawn.
            a, b = math.log10(lo), math.log10(hi)
            step = (b - a) / DASHES
            for i in range(0, DASHES, 2):
                x0, x1 = a + i * step, a + (i + 1) * step
                seg = [x0, x1]
                if x0 < math.log10(ridge) < x1:
                    seg = [x0, math.log10(ridge), x1]
                plt.plot(seg, [math.log10(roof.attainable(10.0**x)) for x in seg], color=colour, marker="braille")
        else:
            plt.plot(_log(vertices), _log([roof.attainable(x) for x in vertices]), color=colour, marker="braille")
            plt.text(f"{roof.label} {tick(roof.peak)}", math.log10(hi), math.log10(roof.peak), color=colour, alignment="right")
        if lo < ridge < hi:
            plt.scatter(_log([ridge]), _log([roof.peak]), marker="◆", color=colour)
