"""Output helpers for the CLI: Rich for people, plain JSON for scripts.

Rich is imported lazily so `--json` paths stay fast.
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Any

# The one escaping rule and `plural` (studytui.core.text), re-exported: CLI modules print through this module.
from studytui.core.text import (  # noqa: F401
    BIDI_CONTROLS,
    CONTROLS,
    escaped,
    for_terminal,
    json_escaped,
    one_line,
    plural,
    visible,
)

if TYPE_CHECKING:
    from rich.console import Console


@lru_cache(maxsize=1)
def console() -> Console:
    from rich.console import Console

    # Rich honours NO_COLOR itself; it also drops styling when stdout is not a terminal.
    return Console(highlight=False, no_color=bool(os.environ.get("NO_COLOR")) or None)


def print_json(obj: Any) -> None:
    """`obj` as JSON; DEL, C1 and bidi controls in its strings as \\u escapes (`json_escaped`), so
    a name from a catalog or the learner's file never acts on the terminal, and decodes the same."""
    sys.stdout.write(json_escaped(json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)) + "\n")


def hyperlink(url: str, text: str | None = None) -> str:
    """An OSC 8 terminal hyperlink: clickable where the terminal supports it, plain elsewhere."""
    label = text or url
    return f"\x1b]8;;{url}\x1b\\{label}\x1b]8;;\x1b\\"


def escape_markup(text: str) -> str:
    """Text that goes through Rich markup shown as written (brackets included)."""
    from rich.markup import escape

    return escape(text)


# -- layout for narrow terminals ------------------------------------------------------------


def wrap_words(text: str, width: int, first: str = "", rest: str | None = None, keep: Any = ()) -> list[str]:
    """`text` filled to `width` cells, `first` before the first line and `rest` (default: as many
    spaces as `first`) before the others. A word is never broken: one longer than a line (a URL)
    gets a line of its own, whole, so a copied URL still works. Each string in `keep` (a command,
    a quoted title, a file name with spaces) stays on one line where it fits on one."""
    from rich.cells import cell_len

    rest = " " * cell_len(first) if rest is None else rest
    spans = sorted({k.strip() for k in keep if k and k.strip() and " " in k.strip()}, key=len, reverse=True)
    token = re.compile("(?:" + "".join(re.escape(k) + "|" for k in spans) + r"\S)+") if spans else None
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line, empty = (rest if lines else first), True
        if cell_len(line) + cell_len(paragraph.strip()) <= width:
            lines.append((line + paragraph.strip()).rstrip())  # fits: its own spacing kept
            continue
        words = paragraph.split() if token is None else token.findall(paragraph)
        words.reverse()
        while words:
            word = words.pop()
            if " " in word and (cell_len(rest) + cell_len(word) > width or (empty and cell_len(line) + cell_len(word) > width)):
                words.extend(reversed(word.split()))  # a kept span longer than a line: its words again
                continue
            if not empty and cell_len(line) + 1 + cell_len(word) > width:
                lines.append(line)
                line, empty = rest, True
            line, empty = line + ("" if empty else " ") + word, False
        lines.append(line.rstrip() if empty else line)
    return lines


def clauses(text: str) -> list[str]:
    """The clauses of a report ("4 entries added, 0 notes updated; ..."), for `keep`: a count
    stays with what it counts."""
    return [c.strip() for c in re.split(r"[,;:]\s|\n", text) if " " in c.strip()]


def quoted(text: str) -> list[str]:
    """The 'quoted titles' and `code spans` of a message, for `keep`."""
    return re.findall(r"(?<!\w)'[^'\n]+'(?!\w)|`[^`\n]+`", text)


def print_wrapped(text: str, first: str = "", rest: str | None = None, style: str | None = None, con: Any = None,
                  keep: Any = ()) -> None:
    """Print `text` filled to the console width with a hanging indent (see `wrap_words`); never
    markup, and never cut: a line longer than the terminal (one long URL) is left to the
    terminal to fold, so copying it gives the URL whole."""
    from rich.text import Text

    con = console() if con is None else con
    text = visible(text)  # data (sources, notes): control characters escaped before measuring
    for line in wrap_words(text, con.width, first, rest, keep=[visible(k) for k in keep]):
        con.print(Text(line, style=style or ""), soft_wrap=True)


def write_wrapped(text: str, first: str = "", rest: str | None = None, keep: Any = (), stream: Any = None,
                  width: int | None = None) -> None:
    """`text` (lines ending in newlines) written to `stream` (default stdout) as plain text, each
    line filled to the terminal's width at word boundaries with a hanging indent: for messages
    that are not Rich output. As `for_terminal`: control characters shown escaped at a terminal."""
    stream = sys.stdout if stream is None else stream
    width = console().width if width is None else width
    shown = for_terminal(text, stream)
    keep = [for_terminal(k, stream) for k in keep]
    out = []
    for line in shown.rstrip("\n").split("\n"):
        out.extend(wrap_words(line, width, first, rest, keep=keep))
    stream.write("\n".join(out) + "\n")
    stream.flush()


def print_url(label: str, url: str, con: Any = None, indent: str = "", style: str = "italic") -> None:
    """A label and a URL, the URL whole on one line: beside the label where both fit, else on a
    line of its own under it (one longer than the terminal is left to the terminal to fold: it is
    still one line, and copying gives it whole). A wrapped URL with a line break in it does not
    work when copied. The URL is a link (OSC 8) where the terminal allows."""
    from rich.cells import cell_len
    from rich.style import Style
    from rich.text import Text

    con = console() if con is None else con
    label, url = visible(label), visible(url)
    link = Text(url, style=Style(link=url))
    lead = Text(indent) + Text(label, style=style)
    if cell_len(f"{indent}{label} {url}") <= con.width:
        con.print(lead + Text(" ") + link, soft_wrap=True)
    else:
        con.print(lead, soft_wrap=True)
        con.print(Text(" " * cell_len(indent)) + link, soft_wrap=True)


def print_parts(parts: list[str], sep: str = "  ", style: str | None = None, con: Any = None) -> None:
    """Short parts (a legend, then a command) on one line where they fit, else each on a line of
    its own: a command is never broken across lines."""
    from rich.cells import cell_len
    from rich.text import Text

    con = console() if con is None else con
    joined = sep.join(parts)
    for line in [joined] if cell_len(joined) <= con.width else parts:
        con.print(Text(line, style=style or ""), soft_wrap=True)
