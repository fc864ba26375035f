"""The object every calculator returns: numbers (SI), display rows, worked formulas, caveats."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Result:
    """One calculation.

    values: JSON-ready numbers in SI units (seconds, bytes, FLOP, FLOP/s, B/s) and short strings.
    rows: (label, formatted value) pairs for a table.
    explain: every formula with the numbers substituted (what --explain prints).
    assumptions / warnings: sentences a reader must see next to the numbers.
    """

    calculator: str
    values: dict[str, Any] = field(default_factory=dict)
    rows: list[tuple[str, str]] = field(default_factory=list)
    explain: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

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
