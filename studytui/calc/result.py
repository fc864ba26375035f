"""The object every calculator returns: numbers (SI), display rows, worked formulas, caveats."""

from __future__ import annotations

from typing import Any

from studytui.core.records import Record


# A plain class, not a dataclass: every calculator imports it, and on Python 3.11 a dataclass's
# generated methods cost about a millisecond each time it is imported (issue 27).
class Result(Record):
    """One calculation.

    values: JSON-ready numbers in SI units (seconds, bytes, FLOP, FLOP/s, B/s) and short strings.
    rows: (label, formatted value) pairs for a table.
    explain: every formula with the numbers substituted (what --explain prints).
    assumptions / warnings: sentences a reader must see next to the numbers.
    """

    __slots__ = ("calculator", "values", "rows", "explain", "assumptions", "warnings")

    def __init__(
        self,
        calculator: str,
        values: dict[str, Any] | None = None,
        rows: list[tuple[str, str]] | None = None,
        explain: list[str] | None = None,
        assumptions: list[str] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.calculator = calculator
        self.values: dict[str, Any] = {} if values is None else values
        self.rows: list[tuple[str, str]] = [] if rows is None else rows
        self.explain: list[str] = [] if explain is None else explain
        self.assumptions: list[str] = [] if assumptions is None else assumptions
        self.warnings: list[str] = [] if warnings is None else warnings

    def row(self, label: str, text: str) -> None:
        self.rows.append((label, text))

    def step(self, text: str) -> None:
        self.explain.append(text)

    def assume(self, text: str) -> None:
        if text not in self.assumptions:
            self.assumptions.append(text)

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"calculator": self.calculator}
        out.update(self.values)
        out["assumptions"] = list(self.assumptions)
        out["warnings"] = list(self.warnings)
        out["explain"] = list(self.explain)
        return out
