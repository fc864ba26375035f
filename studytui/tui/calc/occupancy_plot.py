"""The occupancy sweep plot: occupancy against threads per block, registers per thread or dynamic
shared memory, the other inputs held, with the current configuration marked (the old spreadsheet
calculator's three charts, one at a time). Every point comes from studytui.calc.occupancy.sweep.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from textual.content import Content
from textual_plotext import PlotextPlot

AXIS_LABELS = {
    "threads": "threads per block",
    "regs": "registers per thread",
    "smem": "dynamic shared memory per block (KiB)",
}


def sweep_points(values: Mapping[str, Any], axis: str) -> list[dict[str, Any]]:
    """The sweep along `axis` for a calc occupancy result's values (empty if it cannot be drawn)."""
    from studytui.calc.occupancy import blocks_per_sm, get_cc, sweep

    cc = get_cc(str(values["cc"]))
    occ = blocks_per_sm(cc, int(values["threads"]), int(values["regs"]), int(values["static_smem_bytes"]), int(values["dyn_smem_bytes"]))
    return sweep(occ, axis, values.get("carveout_percent"))


class OccupancyPlot(PlotextPlot):
    """Occupancy (%) along one axis; `show(values, axis)` redraws, `blank` explains an empty plot."""

    DEFAULT_CSS = """
    OccupancyPlot {
        height: 1fr;
        min-height: 12;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.points: tuple[tuple[float, float, bool], ...] = ()
        self.axis = "threads"
        self.message = ""
        self.title_text = ""
        self._version = 0
        self._rendered: tuple[tuple[Any, ...], Any] | None = None
        self._draw()

    def on_unmount(self) -> None:
        self.app.theme_changed_signal.unsubscribe(self)  # see RooflinePlot.on_unmount

    def render(self) -> Any:
        if self._version == 1:
            return ""
        if not self.points:
            return Content(f"\n  {self.message or 'Occupancy: no valid inputs'}")
        key = (self._version, self.size.width, self.size.height, self.app.theme, self.theme)
        if self._rendered is None or self._rendered[0] != key:
            self._rendered = (key, super().render())
        return self._rendered[1]

    def show(self, values: Mapping[str, Any], axis: str | None) -> None:
        axis = axis if axis in AXIS_LABELS else "threads"
        raw = sweep_points(values, axis)
        scale = 1024.0 if axis == "smem" else 1.0
        points = tuple((p[axis] / scale, 100.0 * p["occupancy"], bool(p["current"])) for p in raw)
        title = f"occupancy vs {AXIS_LABELS[axis]}, cc {values['cc']} (set 'sweep' for another axis)"
        if points == self.points and axis == self.axis and not self.message:
            return
        self.points, self.axis, self.message, self.title_text = points, axis, "", title
        self._draw()
        self.refresh()

    def blank(self, message: str) -> None:
        if not self.points and self.message == message:
            return
        self.points, self.message = (), message
        self._draw()
        self.refresh()

    def _draw(self) -> None:
        self._version = getattr(self, "_version", 0) + 1
        plt = self.plt
        plt.clear_data()
        plt.xlabel(AXIS_LABELS.get(self.axis, ""))
        plt.ylabel("occupancy %")
        if not self.points:
            plt.title(self.message or "Occupancy: no valid inputs")
            plt.scatter([0.0, 1.0], [0.0, 1.0], marker=" ")
            return
        xs = [x for x, _y, _c in self.points]
        ys = [y for _x, y, _c in self.points]
        plt.plot(xs, ys, marker="braille", color="blue", label="occupancy")
        now = [(x, y) for x, y, current in self.points if current]
        if now:
            plt.scatter([now[0][0]], [now[0][1]], marker="●", color="red", label="this configuration")
        plt.ylim(0, 125)  # headroom so the legend does not hide a point at 100%
        plt.yticks(_ticks([0, 25, 50, 75, 100]), [str(t) for t in (0, 25, 50, 75, 100)])
        plt.title(self.title_text)


def _ticks(values: Sequence[int]) -> list[float]:
    return [float(v) for v in values]
