"""The sweep plot, for a calculator with plot="sweep": one result along one input, the other
inputs held, with the inputs now marked (occupancy against threads per block, registers per thread
or dynamic shared memory). The line itself is the calculator's (`CalcSpec.sweep`, a
studytui.calc.views.Sweep); this widget only draws it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from textual.content import Content
from textual_plotext import PlotextPlot

if TYPE_CHECKING:
    from studytui.calc.views import Sweep


class SweepPlot(PlotextPlot):
    """A calculator's sweep; `show(sweep)` redraws, `blank` explains an empty plot."""

    DEFAULT_CSS = """
    SweepPlot {
        height: 1fr;
        min-height: 12;
    }
    """

    def __init__(self, empty: str, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.empty = empty  # shown while there is nothing to draw
        self.sweep: Sweep | None = None
        self.message = ""
        self._version = 0
        self._rendered: tuple[tuple[Any, ...], Any] | None = None
        self._draw()

    def on_unmount(self) -> None:
        self.app.theme_changed_signal.unsubscribe(self)  # see RooflinePlot.on_unmount

    def render(self) -> Any:
        if self._version == 1:
            return ""
        if self.sweep is None:
            return Content(f"\n  {self.message or self.empty}")
        key = (self._version, self.size.width, self.size.height, self.app.theme, self.theme)
        if self._rendered is None or self._rendered[0] != key:
            self._rendered = (key, super().render())
        return self._rendered[1]

    def show(self, sweep: Sweep) -> None:
        shown = self.sweep
        if shown is not None and (sweep.points, sweep.x_label) == (shown.points, shown.x_label) and not self.message:
            return  # the same line along the same input
        self.sweep = sweep if sweep.points else None
        self.message = ""
        self._draw()
        self.refresh()

    def blank(self, message: str) -> None:
        if self.sweep is None and self.message == message:
            return
        self.sweep, self.message = None, message
        self._draw()
        self.refresh()

    def _draw(self) -> None:
        self._version = getattr(self, "_version", 0) + 1
        plt = self.plt
        plt.clear_data()
        sweep = self.sweep
        if sweep is None:
            plt.title(self.message or self.empty)
            plt.scatter([0.0, 1.0], [0.0, 1.0], marker=" ")
            return
        plt.xlabel(sweep.x_label)
        plt.ylabel(sweep.y_label)
        xs = [x for x, _y, _c in sweep.points]
        ys = [y for _x, y, _c in sweep.points]
        plt.plot(xs, ys, marker="braille", color="blue", label=sweep.line_label)
        now = [(x, y) for x, y, current in sweep.points if current]
        if now:
            plt.scatter([now[0][0]], [now[0][1]], marker="●", color="red", label="this configuration")
        plt.ylim(0, sweep.y_max)  # headroom so the legend does not hide a point at the top
        plt.yticks(_ticks(sweep.y_ticks), [str(t) for t in sweep.y_ticks])
        plt.title(sweep.title)


def _ticks(values: Sequence[int]) -> list[float]:
    return [float(v) for v in values]
