"""Printing that more than one command module needs (command modules never import each other).

Rich is imported when something is printed.
"""

from __future__ import annotations

from typing import Any


def print_practice_progress(info: dict[str, Any] | None) -> None:
    """The practice part of `studytui progress` (`study.progress.practice_progress`); nothing
    when no problems load."""
    if not info:
        return
    from rich.table import Table
    from rich.text import Text

    from studytui.cli.output import console

    con = console()
    table = Table(box=None, header_style="bold", pad_edge=False, title=None)
    table.add_column("practice", no_wrap=True, overflow="ellipsis", max_width=max(12, con.width - 30))
    table.add_column("mastery", justify="right", no_wrap=True)
    table.add_column("%", justify="right", no_wrap=True)
    table.add_column("due", justify="right", no_wrap=True)
    for m in info["sections"]:
        table.add_row(Text(m["title"]), f"{m['mastered']}/{m['problems']}", f"{100 * m['mastery']:.0f}%", str(m["due"]))
    con.print()
    con.print(table)
    con.print(Text(f"{info['due']} problem(s) due for review: studytui practice due", style="dim"))
