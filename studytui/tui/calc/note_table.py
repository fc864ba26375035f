"""A calculation as Markdown for the learner's note: the inputs, then the results, as tables.

No Textual here. Text comes from the calculator's own rows (labels and formatted values), so the
note shows exactly what the screen showed.
"""

from __future__ import annotations

from typing import Iterable

# Everything str.splitlines() breaks on: a line break inside a cell would end the table row.
_LINE_BREAKS = dict.fromkeys(map(ord, "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), " ")


def _cell(text: object) -> str:
    # A pipe would end the cell and a line break the row; keep both literal.
    return str(text).translate(_LINE_BREAKS).replace("\\", "\\\\").replace("|", "\\|").strip() or " "


def _table(header: tuple[str, str], rows: Iterable[tuple[str, str]]) -> list[str]:
    lines = [f"| {_cell(header[0])} | {_cell(header[1])} |", "| --- | --- |"]
    lines += [f"| {_cell(label)} | {_cell(value)} |" for label, value in rows]
    return lines


def calculation_markdown(
    title: str,
    inputs: Iterable[tuple[str, str]],
    results: Iterable[tuple[str, str]],
    *,
    assumptions: Iterable[str] = (),
    warnings: Iterable[str] = (),
    when: str | None = None,
) -> str:
    """One block of Markdown, starting and ending with a blank line so it stands apart."""
    heading = f"### {title}" + (f" ({when})" if when else "")
    lines = ["", heading, "", *_table(("input", "value"), inputs), "", *_table(("result", "value"), results)]
    notes = [*(f"- warning: {w}" for w in warnings), *(f"- {a}" for a in assumptions)]
    if notes:
        lines += ["", *(line.translate(_LINE_BREAKS) for line in notes)]
    lines.append("")
    return "\n".join(lines) + "\n"
