"""The profile's roofline: log-log, the GPU's roofs (vendor solid; measured dashed and labelled
where a measured roof has a row of its own, else left to the header), each ridge point marked,
and the kernels as points, coloured by limiter, their size standing for their share of the time.

Drawn with textual-plotext like the calculators' plot (studytui.tui.calc.plot): the axes are
linear over log10 values, with ticks labelled by the real decades (plotext's own log scale
rewrites its data on every build). The widget keeps its figure and redraws in place (`show`);
the picture is rebuilt only when what it shows, its size or the theme changes.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from textual.color import Color
from textual.content import Content
from textual_plotext import PlotextPlot

from studytui.tui.profile.view import Dot, RoofLine

# Colours by limiter (plotext names); the words are in the legend under the plot, the table and
# the detail pane, so colour is never the only channel (NO_COLOR: letters instead, see `marker`).
BOUND_COLOURS = {"compute": "orange", "memory": "cyan", "latency": "magenta", "unknown": "gray"}
# The same colours for text: plotext's names are the 16 ANSI colours ("orange" is ANSI 3, yellow),
# which the theme maps; Rich styles (the table) and Textual content (the legend, the detail).
BOUND_RICH = {"compute": "yellow", "memory": "cyan", "latency": "magenta", "unknown": "bright_black"}
BOUND_STYLES = {bound: f"ansi_{name}" for bound, name in BOUND_RICH.items()}
BOUND_LETTERS = {"compute": "c", "memory": "m", "latency": "l", "unknown": "?"}
VENDOR_COLOUR = "blue"
MEASURED_COLOUR = "green"
SELECTED_COLOUR = "default"  # the plot's own foreground: no limiter has it, and it reads on every theme
SELECTED_MARKER = "◉"
# Marker by share of the time shown: (at least this share, glyph), largest first.
SIZES = ((0.20, "⬤"), (0.05, "●"), (0.01, "•"), (0.0, "·"))
DASHES = 24  # segments of a measured roof's slope, every other one drawn
# The flat part of a roof is drawn in characters, on the row its ridge point (◆) and its label sit
# on: a braille line is placed at a quarter of a row and shows up one row above them, where it
# reads as another roof's (plotext rounds a character and a braille dot to rows differently).
FLAT = "─"
FLAT_MEASURED = "┄"
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
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


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
        self.measured_shown: int | None = None  # measured roofs drawn in the last picture (None: not drawn yet)
        self.on_drawn: Callable[[], None] | None = None  # called when measured_shown changes (the legend follows)
        self.roofs: tuple[RoofLine, ...] = ()
        self.dots: tuple[Dot, ...] = ()
        self.selected: Dot | None = None
        self.no_color = False
        self.labels = True
        self.message = "Reading the profile…"
        self._y = (0.0, 1.0)  # the y range drawn (log10), while drawing
        self._flat: dict[RoofLine, float] = {}
        self._version = 0
        self._rendered: tuple[tuple[Any, ...], Any] | None = None

    def on_unmount(self) -> None:
        # PlotextPlot's theme subscription holds this widget until the theme next changes: drop it
        # (as the calculators' plot does), or every closed profile screen stays in memory.
        self.app.theme_changed_signal.unsubscribe(self)
        self.on_drawn = None

    def show(self, roofs: Sequence[RoofLine], dots: Sequence[Dot], selected: Dot | None = None, no_color: bool = False,
             labels: bool = True) -> None:
        """Draw these roofs and kernels (`labels`: name the axes; off where rows are few)."""
        roofs_t = tuple(r for r in roofs if _ok(r.peak) and _ok(r.bw))
        dots_t = tuple(d for d in dots if _ok(d.x) and _ok(d.y))
        state = (roofs_t, dots_t, selected, no_color, labels, "")
        if state == (self.roofs, self.dots, self.selected, self.no_color, self.labels, self.message):
            return
        self.roofs, self.dots, self.selected, self.no_color, self.labels, self.message = state
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
        plt.xlabel("FLOP/B (log)" if self.labels else "")
        plt.ylabel("FLOP/s" if self.labels else "")
        roofs, dots = self.roofs, self.dots
        xs = [r.ridge for r in roofs] + [d.x for d in dots]
        x_lo, x_hi = math.log10(min(xs) / 3.0), math.log10(max(xs) * 3.0)
        if x_hi - x_lo < 4:  # roofs alone, or kernels close together: four decades around them
            middle = (x_lo + x_hi) / 2
            x_lo, x_hi = middle - 2.5, middle + 1.5
        lo, hi = 10.0**x_lo, 10.0**x_hi
        ys = [r.peak for r in roofs] + [d.y for d in dots]
        y_lo = math.log10(min(ys) / 2.0) if dots else math.log10(min(r.attainable(lo) for r in roofs))
        y_hi = math.log10(max(ys) * 1.6)
        self._y = (y_lo, y_hi)
        self._flat = self._flat_rows()
        # A measured roof is drawn only where it has a row of its own: on a vendor roof's row it
        # would lie under it, its ridge an unlabelled second diamond (the header lists it).
        roofs = self._visible(roofs)
        shown = sum(1 for r in roofs if r.measured)
        if shown != self.measured_shown:
            self.measured_shown = shown
            if self.on_drawn is not None:
                self.call_later(self.on_drawn)
        # Measured roofs first: the vendor roofs (the bounds) are drawn whole over them.
        for roof in sorted(roofs, key=lambda r: not r.measured):
            self._roof(roof, lo, hi)
        for roof in sorted(roofs, key=lambda r: not r.measured):  # after every line: a ridge is not drawn over by another roof
            if lo < roof.ridge < hi:
                plt.scatter(_log([roof.ridge]), [self._flat[roof]], marker="◆", color=MEASURED_COLOUR if roof.measured else VENDOR_COLOUR)
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
        self._labels(x_lo, x_hi, y_lo, y_hi)
        x_ticks = [x for x in decades(lo, hi) if x_lo <= math.log10(x) <= x_hi]
        y_ticks = [y for y in decades(10.0**y_lo, 10.0**y_hi) if y_lo <= math.log10(y) <= y_hi]
        plt.xticks(_log(x_ticks), [tick(x) for x in x_ticks])
        plt.yticks(_log(y_ticks), [tick(y) for y in y_ticks])
        plt.xlim(x_lo, x_hi)
        plt.ylim(y_lo, y_hi)

    def _visible(self, roofs: Sequence[RoofLine]) -> tuple[RoofLine, ...]:
        """The vendor roofs, and the measured roofs whose flat part is on a row no vendor roof's is
        (the higher of two measured roofs on one row)."""
        rows = self._canvas_rows()
        taken = {self._row(self._flat[r], rows) for r in roofs if not r.measured}
        out = [r for r in roofs if not r.measured]
        for roof in sorted((r for r in roofs if r.measured), key=lambda r: -r.peak):
            row = self._row(self._flat[roof], rows)
            if row not in taken:
                taken.add(row)
                out.append(roof)
        return tuple(out)

    def _canvas_rows(self) -> int:
        """The plot area's height in rows (the widget less the frame, the x ticks and the label)."""
        return max(4, self.size.height - (4 if self.labels else 3))

    def _row(self, y: float, bins: int) -> int:
        """The row (of `bins` from the bottom) plotext puts the value `y` (log10) on: its own rounding."""
        y_lo, y_hi = self._y
        return math.floor(round(0.5 + (bins - 1) * (y - y_lo) / (y_hi - y_lo), 8))

    def _flat_rows(self) -> dict[RoofLine, float]:
        """The height (log10) each roof's flat part is drawn at: its peak. (A measured roof on the
        row of a vendor roof lies under it, but for the stretch between their ridge points.)"""
        return {roof: math.log10(roof.peak) for roof in self.roofs}

    def _labels(self, x_lo: float, x_hi: float, y_lo: float, y_hi: float) -> None:
        """Each vendor roof's precision and peak, written just left of its ridge point on the row of
        its flat part: above the bandwidth slope, where no kernel can be (one that is there is
        physically impossible, and flagged). Roofs on one row share one label."""
        cols = max(10, self.size.width - 7)  # less the y ticks and the frame
        rows = self._canvas_rows()
        per_col = (x_hi - x_lo) / cols
        groups: dict[int, list[RoofLine]] = {}
        for roof in sorted(self._visible(self.roofs), key=lambda r: -r.peak):
            groups.setdefault(self._row(math.log10(roof.peak), rows), []).append(roof)
        for group in groups.values():
            x = math.log10(min(r.ridge for r in group)) - 2 * per_col
            y = math.log10(group[0].peak)
            if x_lo < x and y_lo <= y <= y_hi:
                measured = group[0].measured  # a measured roof has a row of its own (`_visible`)
                text = ("measured " if measured else "") + ", ".join(f"{r.label} {tick(r.peak)}" for r in group)
                # On the plot's own background (plotext would take the canvas colour it has before
                # the theme is applied, white, on the first frame).
                self.plt.text(text, x, y, color=MEASURED_COLOUR if measured else VENDOR_COLOUR, alignment="right",
                              background=self._canvas())

    def _canvas(self) -> tuple[int, int, int] | None:
        """The colour textual-plotext paints the plot's background with: the theme's surface."""
        if self.theme != "auto":
            return None
        surface = self.app.theme_variables.get("surface")
        return Color.parse(surface).rgb if surface else None

    def _roof(self, roof: RoofLine, lo: float, hi: float) -> None:
        """The bandwidth slope in braille up to the row of the peak (not into the row above it),
        then the flat part in characters on that row; a measured roof dashed."""
        plt = self.plt
        colour = MEASURED_COLOUR if roof.measured else VENDOR_COLOUR
        a, b = math.log10(lo), math.log10(hi)
        peak = self._flat[roof]
        ridge = math.log10(roof.ridge) - (math.log10(roof.peak) - peak)  # where the slope meets the row drawn
        y_lo, y_hi = self._y
        rows = self._canvas_rows()
        # The highest braille dot still on the peak's row: plotext puts y on dot row
        # floor(0.5 + (4 rows - 1) t), and dot row d on character row d // 4.
        top = (4 * self._row(peak, rows) + 3) / (4 * rows - 1)
        slope_end = min(ridge, ridge - (peak - (y_lo + min(1.0, top) * (y_hi - y_lo))))
        if a < slope_end:
            end = min(slope_end, b)
            if roof.measured:  # dashed: the slope cut into DASHES pieces along x (log), every other one drawn
                step = (b - a) / DASHES
                for i in range(0, DASHES, 2):
                    x0, x1 = a + i * step, min(end, a + (i + 1) * step)
                    if x0 < x1:
                        plt.plot([x0, x1], [math.log10(roof.attainable(10.0**x)) for x in (x0, x1)], color=colour, marker="braille")
            else:
                plt.plot([a, end], [math.log10(roof.attainable(10.0**x)) for x in (a, end)], color=colour, marker="braille")
        if ridge < b:
            plt.plot([max(a, ridge), b], [peak, peak], color=colour, marker=FLAT_MEASURED if roof.measured else FLAT)
