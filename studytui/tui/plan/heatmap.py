"""The activity calendar: a column per week (Monday at the top), a character per day, month and
weekday labels, and the legend under it.

Readable without colour: the characters carry the study time (`·` none, `░` under 30 min, `▒`
under 1 h, `▓` under 2 h, `█` 2 h or more: studytui.study.plan.shade, as `studytui plan` prints
them). Colour is a hint from the theme's own variables (component classes below), so the light,
dark, ANSI and high-contrast themes all draw it, and NO_COLOR drops it.

Where the widget is narrower than a year (57 cells), the oldest weeks give way: it shows the last
weeks that fit, labelled the same way.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Sequence

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from studytui.study.plan import SHADE_LEGEND, SHADES, Day, heatmap_rows, shade

if TYPE_CHECKING:
    from textual.geometry import Size

LABEL_WIDTH = 4  # "Mon "
LEVEL_CLASSES = tuple(f"heatmap--level-{i}" for i in range(len(SHADES)))
LEGEND_PARTS = tuple(SHADE_LEGEND.split("  "))  # "· none", "░ under 30 min", ...


def visible_days(days: Sequence[Day], width: int) -> list[Day]:
    """The days whose weeks fit in `width` cells beside the weekday labels: the newest ones."""
    if not days or width <= 0:
        return list(days)
    weeks_that_fit = max(1, width - LABEL_WIDTH)
    first = days[0].date
    start = first - timedelta(days=first.weekday())  # the Monday of the first column
    weeks = (days[-1].date - start).days // 7 + 1
    if weeks <= weeks_that_fit:
        return list(days)
    cut = start + timedelta(days=7 * (weeks - weeks_that_fit))
    return [d for d in days if d.date >= cut]


def legend_lines(width: int) -> list[str]:
    """The legend, its parts packed into lines of `width` (a part is never split)."""
    lines: list[str] = []
    line = ""
    for part in LEGEND_PARTS:
        if line and width > 0 and len(line) + 2 + len(part) > width:
            lines.append(line)
            line = part
        else:
            line = f"{line}  {part}" if line else part
    lines.append(line)
    return lines


class Heatmap(Widget):
    """Days shaded by study time, weeks as columns."""

    COMPONENT_CLASSES = {"heatmap--label", *LEVEL_CLASSES}
    DEFAULT_CSS = """
    Heatmap { width: 1fr; height: auto; }
    Heatmap > .heatmap--label { color: $text-muted; }
    Heatmap > .heatmap--level-0 { color: $text-muted; }
    Heatmap > .heatmap--level-1 { color: $success; }
    Heatmap > .heatmap--level-2 { color: $success; }
    Heatmap > .heatmap--level-3 { color: $success; text-style: bold; }
    Heatmap > .heatmap--level-4 { color: $success; text-style: bold; }
    """

    def __init__(self, days: Sequence[Day] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.days: tuple[Day, ...] = tuple(days)

    def set_days(self, days: Sequence[Day]) -> None:
        days = tuple(days)
        if days == self.days:
            return
        self.days = days
        if self.is_mounted:
            self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if not self.days:
            return 1
        return len(heatmap_rows(visible_days(self.days, width))) + len(legend_lines(width))

    def lines(self, width: int) -> list[str]:
        """The calendar as plain text at `width` (what the screen shows, less the colours)."""
        return self.render_text(width).plain.splitlines()

    def render(self) -> Text:
        return self.render_text(self.content_size.width)

    def render_text(self, width: int) -> Text:
        if not self.days:
            return Text("No activity yet.")
        label = self._style("heatmap--label")
        levels = [self._style(name) for name in LEVEL_CLASSES]
        rows = heatmap_rows(visible_days(self.days, width))
        out = Text(no_wrap=True, overflow="crop")
        months = " " * LABEL_WIDTH + rows[0][0]
        out.append(months[:width] if width > 0 else months, style=label)
        for name, cells in rows[1:]:
            out.append("\n")
            out.append(f"{name} ", style=label)
            row = Text()
            for cell in cells:
                if cell is None:
                    row.append(" ")
                    continue
                ch = shade(cell.seconds, cell.events)
                row.append(ch, style=levels[SHADES.index(ch)])
            row.rstrip()
            out.append_text(row)
        for line in legend_lines(width):
            out.append("\n")
            out.append(line, style=label)
        return out

    def _style(self, component: str) -> Style:
        if not self.is_mounted:
            return Style.null()
        return self.get_component_rich_style(component, partial=True, default=Style.null())
