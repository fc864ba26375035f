"""Text made safe to show: control and bidi characters escaped, one rule for every front end.

Data (a title, a note, a file name, an error quoting an argument) never reaches a terminal or a
browser as a command: the CLI (studytui.cli.output), the app (studytui.tui.format), the exports
and the server escape the same characters the same way.
"""

from __future__ import annotations

import sys
from typing import Any

# Bidirectional formatting characters (Unicode UAX #9): the marks U+061C (Arabic letter mark),
# U+200E and U+200F (left-to-right and right-to-left marks), the embeddings and overrides
# U+202A-U+202E and the isolates U+2066-U+2069. They reorder the text around them on screen, so a
# name can read as something it is not.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# Every character studytui never passes to a terminal from data (a regex class body): C0 controls,
# DEL, C1 controls (0x9b is CSI on some terminals) and the bidi controls. Shared with the app
# (studytui.tui.format), so the CLI and the app escape the same characters the same way.
CONTROLS = f"\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}"


def escaped(char: str) -> str:
    """One control character as visible text: '\\x1b' (C0, DEL, C1) or '\\u202e' (bidi)."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# The same characters as code points, for str.translate: no regex is compiled at import (each of
# these classes took about half a millisecond to compile, and every command imports this module;
# issue 27). `str.isprintable()` is False for every one of them, so printable text is returned as
# it is without a look at each character.
_BIDI_CODES = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_ANY_CONTROL_CODES = (*range(0x00, 0x20), *range(0x7F, 0xA0), *_BIDI_CODES)
# one_line: every control; visible: all of them except tab and newline (a carriage return is
# handled on its own: kept where it ends a line, escaped where it would let text overwrite what is
# already on the line).
_ONE_LINE = {code: escaped(chr(code)) for code in _ANY_CONTROL_CODES}
_VISIBLE = {code: text for code, text in _ONE_LINE.items() if code not in (0x09, 0x0A, 0x0D)}


def visible(text: str) -> str:
    """Control characters shown as `\\x1b`-style escapes (bidi controls as `\\u202e`); tabs and
    line breaks kept."""
    if text.isprintable():
        return text
    shown = text.translate(_VISIBLE)
    if "\r" in shown:
        shown = "\r\n".join(part.replace("\r", "\\x0d") for part in shown.split("\r\n"))
    return shown


def one_line(text: str) -> str:
    """Every control character escaped, line breaks too: for one-line messages."""
    return text if text.isprintable() else text.translate(_ONE_LINE)


def printable_but(text: str, allowed: str = "") -> bool:
    """True when every character of `text` is printable (`str.isprintable`) or in `allowed`: then
    it holds no control character of any kind. A fast test in C that most text passes; False only
    says to look closer (a no-break space is not printable either)."""
    for char in allowed:
        text = text.replace(char, " ")
    return text.isprintable()


def for_terminal(text: str, stream: Any = None) -> str:
    """`text` made visible when `stream` (default stdout) is a terminal; verbatim otherwise, so
    pipes, files and scripts get the learner's bytes as stored."""
    stream = sys.stdout if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return visible(text) if tty else text


class _JsonEscapes(dict):  # type: ignore[type-arg]
    """str.translate's table for `json_escaped`: DEL, the C1 controls and the bidi controls, which
    JSON (ensure_ascii=False) leaves raw and a terminal may act on, and the lone surrogates by
    which Python keeps a file name's bytes that are not UTF-8 (written raw, they would make the
    output not UTF-8; as \\udcXX escapes, json.loads gives back the same string). json.dumps
    already writes the C0 controls as \\u escapes."""

    def __missing__(self, code: int) -> str:
        if 0xD800 <= code <= 0xDFFF:
            return f"\\u{code:04x}"
        raise LookupError(code)  # str.translate: leave the character as it is


_UNSAFE_IN_JSON = _JsonEscapes({code: f"\\u{code:04x}" for code in (*range(0x7F, 0xA0), *_BIDI_CODES)})


def json_escaped(text: str) -> str:
    """JSON text with DEL, C1 and bidi controls written as \\u escapes: it decodes to the same
    value, and no character of it acts on a terminal."""
    return text if text.isprintable() else text.translate(_UNSAFE_IN_JSON)


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """'1 entry', '2 entries', '0 notes': the count with the word in the right number."""
    word = (
        singular
        if count == 1
        else (plural_form or (singular[:-1] + "ies" if singular.endswith("y") and singular[-2:-1] not in "aeiou" else singular + "s"))
    )
    return f"{count:,} {word}"


def percent(part: int, total: int) -> str:
    """'22%': the share of `total` that `part` is, rounded down, the one rule for every front end
    (`studytui progress`, the app's header): 100% only when all is covered, 0% for an empty total."""
    return f"{(100 * part // total) if total > 0 else 0}%"
