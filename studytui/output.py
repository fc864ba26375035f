"""Output helpers for the CLI: Rich for people, plain JSON for scripts.

Rich is imported lazily so `--json` paths stay fast.
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def console():  # -> rich.console.Console
    from rich.console import Console

    # Rich honours NO_COLOR itself; it also drops styling when stdout is not a terminal.
    return Console(highlight=False, no_color=bool(os.environ.get("NO_COLOR")) or None)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def hyperlink(url: str, text: str | None = None) -> str:
    """An OSC 8 terminal hyperlink: clickable where the terminal supports it, plain elsewhere."""
    label = text or url
    return f"\x1b]8;;{url}\x1b\\{label}\x1b]8;;\x1b\\"


# C0 controls except tab and newline, DEL, C1 controls (0x9b is CSI on some terminals), and a
# carriage return not ending a line (it would let text overwrite what is already on the line).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
_ANY_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def visible(text: str) -> str:
    """Control characters shown as `\\x1b`-style escapes; tabs and line breaks kept."""
    return _CONTROL.sub(_escape, text)


def one_line(text: str) -> str:
    """Every control character escaped, line breaks too: for one-line messages."""
    return _ANY_CONTROL.sub(_escape, text)


def for_terminal(text: str, stream: Any = None) -> str:
    """`text` made visible when `stream` (default stdout) is a terminal; verbatim otherwise, so
    pipes, files and scripts get the learner's bytes as stored."""
    stream = sys.stdout if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return visible(text) if tty else text


def escape_markup(text: str) -> str:
    """Text that goes through Rich markup shown as written (brackets included)."""
    from rich.markup import escape

    return escape(text)


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """'1 entry', '2 entries', '0 notes': the count with the word in the right number."""
    word = singular if count == 1 else (plural_form or (singular[:-1] + "ies" if singular.endswith("y") and singular[-2:-1] not in "aeiou" else singular + "s"))
    return f"{count:,} {word}"
