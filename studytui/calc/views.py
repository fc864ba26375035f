"""What a calculator may hand the front ends besides its rows: a sweep for the app to plot, and
tables for the CLI to print under the rows (a CalcSpec's `sweep` and `tables` make them). Plain
data, no Textual, no Rich; imported only by the calculators that use them. (NamedTuples: cheaper
to define than dataclasses, and `studytui calc --help` imports every calculator.)
"""

from __future__ import annotations

from typing import NamedTuple


class Sweep(NamedTuple):
    """What a calculator with plot="sweep" draws: one result along one input, the other inputs
    held, as a line with the inputs now marked."""

    points: tuple[tuple[float, float, bool], ...]  # (x, y, whether this is the inputs now)
    title: str
    x_label: str
    y_label: str
    line_label: str
    y_max: float  # the top of the y axis (room for the legend above the line)
    y_ticks: tuple[int, ...]


class TextTable(NamedTuple):
    """A table the CLI prints under a calculator's rows (plain text cells that never wrap)."""

    title: str
    columns: tuple[tuple[str, bool], ...]  # (header, right-aligned); a header may have two lines
    rows: tuple[tuple[str, ...], ...]
    replaces: str = ""  # rows whose label starts with this are in the table, not in the rows above it
