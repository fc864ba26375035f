"""What a calculator may hand the front ends besides its rows: a sweep for the app to plot, and
tables for the CLI to print under the rows (a CalcSpec's `sweep` and `tables` make them). Plain
data, no Textual, no Rich; imported only by the calculators that use them. (Plain classes,
studytui.core.records: cheaper to define than dataclasses or named tuples, and `studytui calc
--help` imports every calculator.)
"""

from __future__ import annotations

from studytui.core.records import FrozenRecord


class Sweep(FrozenRecord):
    """What a calculator with plot="sweep" draws: one result along one input, the other inputs
    held, as a line with the inputs now marked."""

    __slots__ = ("points", "title", "x_label", "y_label", "line_label", "y_max", "y_ticks")

    points: tuple[tuple[float, float, bool], ...]  # (x, y, whether this is the inputs now)
    title: str
    x_label: str
    y_label: str
    line_label: str
    y_max: float  # the top of the y axis (room for the legend above the line)
    y_ticks: tuple[int, ...]

    def __init__(
        self,
        points: tuple[tuple[float, float, bool], ...],
        title: str,
        x_label: str,
        y_label: str,
        line_label: str,
        y_max: float,
        y_ticks: tuple[int, ...],
    ) -> None:
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "x_label", x_label)
        object.__setattr__(self, "y_label", y_label)
        object.__setattr__(self, "line_label", line_label)
        object.__setattr__(self, "y_max", y_max)
        object.__setattr__(self, "y_ticks", y_ticks)


class TextTable(FrozenRecord):
    """A table the CLI prints under a calculator's rows (plain text cells that never wrap)."""

    __slots__ = ("title", "columns", "rows", "replaces")

    title: str
    columns: tuple[tuple[str, bool], ...]  # (header, right-aligned); a header may have two lines
    rows: tuple[tuple[str, ...], ...]
    replaces: str  # rows whose label starts with this are in the table, not in the rows above it

    def __init__(
        self,
        title: str,
        columns: tuple[tuple[str, bool], ...],
        rows: tuple[tuple[str, ...], ...],
        replaces: str = "",
    ) -> None:
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "replaces", replaces)
