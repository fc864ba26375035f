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
    from rich.text import Text

    from studytui.cli.output import Column, console, print_table

    con = console()
    columns = [Column("practice", no_wrap=True, overflow="ellipsis", max_width=max(12, con.width - 30)),
               Column("mastery", justify="right", no_wrap=True), Column("%", justify="right", no_wrap=True),
               Column("due", justify="right", no_wrap=True)]
    rows = [[Text(m["title"]), f"{m['mastered']}/{m['problems']}", f"{100 * m['mastery']:.0f}%", str(m["due"])]
            for m in info["sections"]]
    con.print()
    print_table(con, columns, rows)
    con.print(Text(f"{info['due']} problem(s) due for review: studytui practice due", style="dim"))
