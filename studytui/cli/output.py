"""Output helpers for the CLI: Rich for people, plain JSON for scripts.

Rich is imported lazily so `--json` paths stay fast.
"""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable, Sequence

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
    con = Console(highlight=False, no_color=bool(os.environ.get("NO_COLOR")) or None)
    con.on_broken_pipe = _reader_gone  # type: ignore[method-assign]
    return con


def _reader_gone() -> None:
    """Rich's answer to a closed pipe (`studytui list | head -1`) is SystemExit(1); the command
    line's is that the reader went away, which is no error (exit 0, as the JSON commands give):
    what is left goes to the null device, and BrokenPipeError reaches cli.main."""
    stdout_to_null()
    raise BrokenPipeError("the reader of the output went away")


def stdout_to_null() -> None:
    """Point standard output's descriptor at the null device: what is still buffered for a reader
    that went away, or for a full disk, goes nowhere, and the exit does not fail on it again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def is_utf8(stream: Any) -> bool:
    """Whether a text stream encodes as UTF-8 (a stream that names no encoding counts as one)."""
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "").replace("_", "")
    return encoding in ("utf8", "utf8sig")


class LinePrinter:
    """A stand-in for the console that keeps the lines of text it is given and prints them all
    with one Console.print, for a report of many short lines (`plan`, `show`): Rich's
    bookkeeping for one print (its options, the terminal's size, the buffer) costs about as much
    as drawing a line, and drawing the lines joined is the same text, styles and all.

    `print(text, soft_wrap=True)` of a rich.text.Text with no justification, wrapping or ending
    of its own, and `print()`, are kept; anything else is printed at once, after what is kept
    (`flush`, also on leaving a `with` block). `width` is the console's, read once."""

    def __init__(self, con: Any) -> None:
        self.con = con
        self.width = con.width
        self._lines: list[Any] = []

    def print(self, *objects: Any, soft_wrap: bool = False, **options: Any) -> None:
        from rich.text import Text

        if not options and not objects:
            self._lines.append(Text())
            return
        if not options and soft_wrap and len(objects) == 1 and type(objects[0]) is Text:
            text = objects[0]
            if (text.justify is None and text.overflow is None and text.no_wrap is None and text.end == "\n"
                    and text.tab_size is None):
                self._lines.append(text)
                return
        self.flush()
        self.con.print(*objects, soft_wrap=soft_wrap, **options)

    def flush(self) -> None:
        if self._lines:
            from rich.text import Text

            lines, self._lines = self._lines, []
            self.con.print(Text("\n").join(lines), soft_wrap=True)

    def __enter__(self) -> LinePrinter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.flush()


def print_json(obj: Any) -> None:
    """`obj` as JSON; DEL, C1 and bidi controls in its strings as \\u escapes (`json_escaped`), so
    a name from a catalog or the learner's file never acts on the terminal, and decodes the same."""
    sys.stdout.write(for_stream(json_text(obj) + "\n"))


def for_stream(json_text: str, stream: Any = None) -> str:
    """JSON text as it can be written to `stream` (stdout): as it is for a UTF-8 stream; for
    another encoding (PYTHONIOENCODING=latin-1, an old locale) every character past ASCII as a
    JSON \\u escape (two for one past U+FFFF), so the output is still JSON, and decodes the same.
    (The stream's own fallback, backslash escapes such as \\xf3, is not JSON.)"""
    if json_text.isascii() or is_utf8(sys.stdout if stream is None else stream):
        return json_text
    import re

    return re.sub("[^\x00-\x7f]", _json_escape, json_text)


def _json_escape(match: Any) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(obj: Any, indent: str = "") -> str:
    """`json_escaped(json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False))`, the same
    text, written without json's indenting encoder: with `indent` json encodes in Python, a
    generator per list and dict, which was most of `list --json`'s own time (issue 27). Strings
    go through json's C encoder and are escaped one by one (only a string can hold a character
    `json_escaped` rewrites); a value json would refuse is refused the same way, by json itself.
    `indent` starts every line after the first, for an object written inside another one.
    It leaves no reference cycle behind (json.dumps with `indent` leaves one per call): the
    commands run without the cyclic collector, and `profile --json` calls this per kernel."""
    from json.encoder import encode_basestring

    parts: list[str] = []
    put = parts.append
    keys: dict[str, str] = {}  # the same few keys in every object: each encoded once

    def string(text: str) -> str:
        out = encode_basestring(text)
        return out if text.isascii() and "\x7f" not in text else json_escaped(out)

    def write(value: Any, indent: str) -> None:
        kind = type(value)
        if kind is str:
            put(string(value))
        elif kind is dict and value and all(type(key) is str for key in value):
            inner = indent + "  "
            between = ",\n" + inner
            put("{\n" + inner)
            first = True
            for key, item in value.items():
                head = keys.get(key)
                if head is None:
                    head = keys[key] = string(key) + ": "
                put(head if first else between + head)
                first = False
                write(item, inner)  # noqa: F821 (deleted after use: see the end)
            put("\n" + indent + "}")
        elif kind is list or kind is tuple or kind is dict and not value:
            if not value:
                put("{}" if kind is dict else "[]")
                return
            inner = indent + "  "
            if all(type(item) is str for item in value):
                put("[\n" + inner + (",\n" + inner).join(map(string, value)) + "\n" + indent + "]")
                return
            put("[\n" + inner)
            for i, item in enumerate(value):
                if i:
                    put(",\n" + inner)
                write(item, inner)  # noqa: F821 (deleted after use: see the end)
            put("\n" + indent + "]")
        elif value is None:
            put("null")
        elif value is True:
            put("true")
        elif value is False:
            put("false")
        elif kind is int:
            put(int.__repr__(value))
        elif kind is float and value == value and value not in (_INF, -_INF):
            put(float.__repr__(value))
        else:  # NaN, an infinity, an empty or unusual object, a subclass: json's own answer
            _json_fallback(parts, value, indent)

    try:
        write(obj, indent)
        return "".join(parts)
    finally:
        del write  # a nested function that calls itself is a cycle (it holds its own cell)


def _json_fallback(parts: list[str], value: Any, indent: str) -> None:
    """What json.dumps(indent=2) writes for `value` at this depth (or the error it raises)."""
    import json

    text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2)
    parts.append(json_escaped(text.replace("\n", "\n" + indent)))


_INF = float("inf")


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
    token: Any = None  # the pattern of a word or kept span, compiled when a paragraph must be filled
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line, empty = (rest if lines else first), True
        if cell_len(line) + cell_len(paragraph.strip()) <= width:
            lines.append((line + paragraph.strip()).rstrip())  # fits: its own spacing kept
            continue
        if token is None:
            spans = sorted({k.strip() for k in keep if k and k.strip() and " " in k.strip()}, key=len, reverse=True)
            token = re.compile("(?:" + "".join(re.escape(k) + "|" for k in spans) + r"\S)+") if spans else False
        words = paragraph.split() if token is False else token.findall(paragraph)
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


# -- aligned columns --------------------------------------------------------------------------
#
# `print_table` draws what `rich.table.Table(box=None, pad_edge=False)` drew for our commands, the
# same characters and styles at every width (tests/test_cli_output_speed.py compares the two),
# without rich.table: Table measures every cell through Measurement and Padding and renders every
# cell through render_lines, which was most of `list`'s time for its 137 rows (issue 27). Here a
# cell whose lines fit its column is measured with cell_len and drawn as segments directly; only a
# cell that must wrap or be cut (a long title at 80 columns) goes through Rich's own rendering.


class Column:
    """One column of `print_table`, with the meaning rich.table.Column gives these settings.
    (A plain class: a NamedTuple or a dataclass costs more to define than a command spends here.)"""

    __slots__ = ("header", "justify", "style", "no_wrap", "width", "min_width", "max_width", "overflow", "header_style")

    def __init__(self, header: str = "", justify: str = "left", style: str = "", no_wrap: bool = False,
                 width: int | None = None, min_width: int | None = None, max_width: int | None = None,
                 overflow: str = "ellipsis", header_style: str = "") -> None:
        self.header = header
        self.justify = justify  # "left" or "right" (any other goes through Rich)
        self.style = style
        self.no_wrap = no_wrap
        self.width = width  # fixed width of the text (padding not included)
        self.min_width = min_width
        self.max_width = max_width
        self.overflow = overflow
        self.header_style = header_style

    def __repr__(self) -> str:
        return f"Column({', '.join(f'{k}={getattr(self, k)!r}' for k in self.__slots__)})"


# Characters rich.text.Text drops (bell, backspace, vertical tab, form feed, carriage return) and
# the tab it expands: a cell holding one is drawn by Rich itself.
_TEXT_CONTROLS = frozenset("\x07\x08\x0b\x0c\x0d\t")
# Where str.splitlines (Text's measure) breaks a line and Text's wrapping does not.
_OTHER_BREAKS = frozenset("\x1c\x1d\x1e\x85\u2028\u2029")
# A cell with none of these is one line that Text keeps as it is.
_NOT_PLAIN = _TEXT_CONTROLS | _OTHER_BREAKS | {"\n"}


# A cell as print_table reads it: (plain text, the text's own style ("" for none), its spans,
# the rich.text.Text (None for a str), its lines, the cell_len of each, and the widest line as
# Text.__rich_measure__ measures it).
_Cell = tuple


def print_table(con: Any, columns: Sequence[Column], rows: Iterable[Sequence[Any]], header_style: str = "bold",
                show_header: bool = True, collapse_padding: bool = False, *, box: str | None = None,
                title: Any = None) -> None:
    """Rows of cells (a str is plain text, never markup; or a rich.text.Text) in aligned columns,
    one cell of padding either side of each column but the table's outer edges, the header in
    `header_style`, sized to the console's width: at most the widest cell in each column, and
    where the columns do not fit, the ones that may wrap are narrowed (widest first) and their
    cells wrapped, as rich.table.Table(box=None, pad_edge=False) sizes and draws them.

    `box="simple_head"` draws what Table(box=box.SIMPLE_HEAD, pad_edge=False) draws: a blank
    edge line above and below and a blank column either side, one cell between columns, a rule
    under the header. `title` (a rich.text.Text, or a str: plain text in the "table.title" style,
    as Table gives a str title, never markup) goes above, left-justified to the table's width
    (Table(title=..., title_justify="left")). On a console whose encoding is not UTF (Rich then
    swaps the box for its ASCII one) a boxed table is drawn by rich.table itself."""
    from rich.cells import cell_len
    from rich.segment import Segment
    from rich.style import Style

    count = len(columns)
    if not count:  # (Rich draws no title either)
        con.print()
        return
    boxed = box is not None
    if boxed:
        if box != "simple_head":
            raise ValueError(f"box must be None or 'simple_head', not {box!r}")
        if not con.encoding.startswith("utf"):  # ConsoleOptions.ascii_only: Box.substitute gives ASCII
            _print_rich_table(con, columns, rows, header_style, show_header, collapse_padding, title)
            return
    table = [[c.header for c in columns], *rows] if show_header else list(rows)
    # Table._extra_width: with a box, an edge either side and a divider between columns; the
    # columns are sized to what is left.
    extra = count + 1 if boxed else 0
    limit = con.width - extra
    # (left, right) padding of each column: pad_edge=False drops the outer ones; collapse_padding
    # keeps one cell between columns. Rich counts the same total in a column's width.
    pads = [(0 if i == 0 or collapse_padding else 1, 0 if i == count - 1 else 1) for i in range(count)]
    cells = [[_cell(value, cell_len) for value in row] for row in table]
    widest = [max((row[i][6] for row in cells), default=None) for i in range(count)]
    widths = [_column_width(columns[i], widest[i], sum(pads[i]), limit) or 1 for i in range(count)]
    if sum(widths) > limit:
        widths = _collapse(widths, [c.width is None and not c.no_wrap for c in columns], limit)
        if sum(widths) > limit:  # Rich's last resort: every column narrowed evenly
            from rich._ratio import ratio_reduce  # (its module imports fractions: only when columns must shrink)

            widths = ratio_reduce(sum(widths) - limit, [1] * count, widths, widths)
        widths = [_column_width(columns[i], widest[i], sum(pads[i]), w) for i, w in enumerate(widths)]
    get_style = con.get_style
    null = Style.null()
    head = get_style(header_style or "")
    body_styles = [get_style(c.style or "") for c in columns]
    head_styles = [head + get_style(c.header_style or "") for c in columns]
    options = None
    out: list[Any] = []
    new_line = Segment.line()
    table_width = sum(widths) + extra
    if title:
        options = con.options
        out.extend(_title(con, options, Segment, title, table_width))
    # SIMPLE_HEAD's edges, dividers, top and bottom are spaces and its header rule is "─", in
    # the table's border style (none): unstyled, written as part of the line's plain text.
    edge = " " if boxed else ""
    if boxed:
        out.append(Segment(" " * table_width))
        out.append(new_line)
    for index, row in enumerate(cells):
        header = show_header and index == 0
        styles = head_styles if header else body_styles
        drawn = []
        for i, cell in enumerate(row):
            left, right = pads[i]
            lines = _fast_cell(con, get_style, null, Segment, cell, columns[i], widths[i], left, right, styles[i])
            if lines is None:
                if options is None:
                    options = con.options
                lines = _rich_cell(con, options, cell, columns[i], widths[i], left, right, styles[i])
            drawn.append(lines)
        height = max(len(lines) for lines in drawn)
        if not height:  # no cell drew a line (columns narrowed to nothing): one blank line, as Rich
            drawn = [[[Segment(" " * w)]] for w in widths]
            height = 1
        for i, lines in enumerate(drawn):
            if len(lines) < height:  # the header sits at the bottom of its row, a cell at the top
                blank = [[Segment(" " * widths[i], styles[i])]] * (height - len(lines))
                drawn[i] = blank + lines if header else lines + blank
        for n in range(height):
            plain = edge  # unstyled text is written as it is: runs of it go out as one segment
            for i, lines in enumerate(drawn):
                if boxed and i:
                    plain += " "  # the divider (whitespace: the row's background, none)
                for segment in lines[n]:
                    if segment.style or segment.control:
                        if plain:
                            out.append(Segment(plain))
                            plain = ""
                        out.append(segment)
                    else:
                        plain += segment.text
            plain += edge
            if plain:
                out.append(Segment(plain))
            out.append(new_line)
        if boxed and header:  # Box.get_row(widths, "head", edge=True)
            out.append(Segment(" " + "─" * (table_width - 2) + " "))
            out.append(new_line)
    if boxed:
        out.append(Segment(" " * table_width))
        out.append(new_line)
    # Lines are never wider than the console unless the columns' minimums are (Rich then crops).
    con.print(_Segments(out), crop=table_width > con.width)


def _title(con: Any, options: Any, Segment: Any, title: Any, width: int) -> list[Any]:
    """The title's lines as Table draws them (console.render, the table's width, justified left),
    each newline a segment of its own as Console.print's cropping leaves it (printed uncropped)."""
    from rich.text import Text

    if isinstance(title, str):
        title = Text(title, style="table.title")
    out: list[Any] = []
    for segment in con.render(title, options.update(width=width, highlight=False, height=None, justify="left")):
        text = segment.text
        if "\n" not in text or segment.control:
            out.append(segment)
            continue
        for n, part in enumerate(text.split("\n")):
            if n:
                out.append(Segment.line())
            if part:
                out.append(Segment(part, segment.style))
    return out


def _print_rich_table(con: Any, columns: Sequence[Column], rows: Iterable[Sequence[Any]], header_style: str,
                      show_header: bool, collapse_padding: bool, title: Any) -> None:
    """The boxed table drawn by rich.table itself, for a console where Rich swaps the box (its
    ASCII box, on a console whose encoding is not UTF). A str is plain text here too."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    if isinstance(title, str):
        title = Text(title, style="table.title")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_header=show_header, header_style=header_style,
                  collapse_padding=collapse_padding, title=title or None, title_justify="left")
    for c in columns:
        table.add_column(Text(c.header), justify=c.justify, style=c.style, no_wrap=c.no_wrap,  # type: ignore[arg-type]
                         width=c.width, min_width=c.min_width, max_width=c.max_width, overflow=c.overflow,  # type: ignore[arg-type]
                         header_style=c.header_style)
    for row in rows:
        table.add_row(*(Text(cell) if isinstance(cell, str) else cell for cell in row))
    con.print(table)


class _Segments:
    """Segments already laid out in lines, printed as they are."""

    def __init__(self, segments: list[Any]) -> None:
        self.segments = segments

    def __rich_console__(self, console: Any, options: Any) -> Any:
        return self.segments


def _cell(value: Any, cell_len: Any) -> _Cell:
    if isinstance(value, str):
        if _NOT_PLAIN.isdisjoint(value):  # the usual cell: one line, nothing Rich would drop or expand
            size = cell_len(value)
            return value, "", (), None, [value], [size], size
        if _TEXT_CONTROLS.isdisjoint(value):
            lines = value.split("\n")
            sizes = [cell_len(line) for line in lines]
            widest = max(sizes) if _OTHER_BREAKS.isdisjoint(value) else _widest(value, cell_len)
            return value, "", (), None, lines, sizes, widest
        from rich.text import Text

        value = Text(value)  # drops the control characters as Rich would
    plain = value.plain
    if _NOT_PLAIN.isdisjoint(plain):
        size = cell_len(plain)
        return plain, value.style, value.spans, value, [plain], [size], size
    lines = plain.split("\n")
    sizes = [cell_len(line) for line in lines]
    widest = max(sizes) if _OTHER_BREAKS.isdisjoint(plain) else _widest(plain, cell_len)
    return plain, value.style, value.spans, value, lines, sizes, widest


def _widest(plain: str, cell_len: Any) -> int:
    return max((cell_len(line) for line in plain.splitlines()), default=0)


def _column_width(column: Column, widest: int | None, pad: int, limit: int) -> int:
    """The width Table._measure_column gives a column under `limit` (its maximum), padding
    included: the widest cell and its padding (a fixed width and its padding), within the
    column's minimum and maximum, never over the limit."""
    if limit < 1:
        return 0
    if column.width is not None:
        return min(column.width + pad, limit)
    high = limit if widest is None else min(widest + pad, limit)
    if column.min_width is not None:
        high = max(high, column.min_width + pad, 0)
    if column.max_width is not None:
        high = min(high, column.max_width + pad)
    return high


def _collapse(widths: list[int], wrapable: list[bool], limit: int) -> list[int]:
    """The column widths narrowed to fit `limit`, as rich.table narrows them. With one wrapable
    column (every everyday table: a column of titles) that column alone gives way, by the excess,
    which is what Rich's rule comes to for one column; with several, Rich's own rule decides
    (rich.table, imported only then: no everyday command at 80 or 120 columns gets there)."""
    total = sum(widths)
    if not any(wrapable):
        return widths
    if wrapable.count(True) == 1:
        at = wrapable.index(True)
        return [max(0, w - (total - limit)) if i == at else w for i, w in enumerate(widths)] if total else widths
    from rich.table import Table

    return list(Table._collapse_widths(widths, wrapable, limit))


def _fast_cell(con: Any, get_style: Any, null: Any, Segment: Any, cell: _Cell, column: Column, width: int, left: int,
               right: int, style: Any) -> list[list[Any]] | None:
    """The lines of a cell drawn as Rich draws them (each line justified with spaces in the text's
    own style, the column's style over all), wrapped or cut to its column by Text.wrap where a
    line does not fit; None for a cell only Rich's own rendering draws (a tab, a justification
    other than left or right)."""
    plain, base_name, spans, text, parts, sizes, _widest = cell
    inner = width - left - right
    justify = (text.justify if text is not None else None) or column.justify
    if inner < 1 or justify not in ("left", "right"):
        return None
    if text is not None and not _TEXT_CONTROLS.isdisjoint(plain):
        return None
    base = get_style(base_name, default=null) if base_name else null
    lefts, rights = " " * left, " " * right
    if max(sizes) > inner:
        return _wrapped(con, get_style, null, Segment, cell, column, justify, inner, style, lefts, rights)
    if not spans:
        plain_cell = not style and not base
        drawn = []
        for part, size in zip(parts, sizes):
            if justify == "right":
                stripped = part.rstrip()
                if len(stripped) != len(part):
                    from rich.cells import cell_len

                    part, size = stripped, cell_len(stripped)
                part = " " * (inner - size) + part
            else:
                part = part + " " * (inner - size)
            if plain_cell:
                drawn.append([Segment(lefts + part + rights)])
            else:
                line = [Segment(lefts, style)] if left else []
                line.append(Segment(part, style + base))
                if right:
                    line.append(Segment(rights, style))
                drawn.append(line)
        return drawn
    # Spans: each within one line (as Text.divide leaves them), none empty.
    lines = []
    start = 0
    placed = 0
    for part in parts:
        end = start + len(part)
        own = [(s - start, e - start, st) for s, e, st in spans if start <= s < end]
        if any(e > len(part) or e <= s for s, e, _st in own):
            return None
        placed += len(own)
        lines.append((part, own))
        start = end + 1
    if placed != len(spans):
        return None
    from rich.cells import cell_len

    drawn = []
    for part, own in lines:
        size = cell_len(part)
        if justify == "right":
            stripped = part.rstrip()
            if len(stripped) < len(part):
                own = [(s, min(e, len(stripped)), st) for s, e, st in own if s < len(stripped)]
                part = stripped
                size = cell_len(part)
            shift = inner - size
            part = " " * shift + part
            own = [(s + shift, e + shift, st) for s, e, st in own]
        else:
            part = part + " " * (inner - size)
        drawn.append(_draw(Segment, get_style, null, part, base, own, style, lefts, rights))
    return drawn


def _wrapped(con: Any, get_style: Any, null: Any, Segment: Any, cell: _Cell, column: Column, justify: str, inner: int,
             style: Any, lefts: str, rights: str) -> list[list[Any]] | None:
    """A cell with a line wider than its column: wrapped (or cut, for no_wrap) by Text.wrap as
    Text.__rich_console__ would; None where a line does not come out exactly as wide as the column."""
    from rich.cells import cell_len
    from rich.text import Text

    text = cell[3] if cell[3] is not None else Text(cell[0])
    no_wrap = text.no_wrap if text.no_wrap is not None else column.no_wrap
    overflow: Any = text.overflow or column.overflow
    how: Any = justify
    drawn = []
    for line in text.wrap(con, inner, justify=how, overflow=overflow, no_wrap=no_wrap):
        part = line.plain
        if cell_len(part) != inner:
            return None
        base = get_style(line.style, default=null) if line.style else null
        drawn.append(_draw(Segment, get_style, null, part, base, [tuple(span) for span in line.spans], style, lefts, rights))
    return drawn


def _draw(Segment: Any, get_style: Any, null: Any, part: str, base: Any, own: list, style: Any, lefts: str,
          rights: str) -> list[Any]:
    """One justified line of a cell: a segment for each stretch between span boundaries (as
    Text.render divides it), in the text's style and its spans', the column's style over all."""
    line = [Segment(lefts, style)] if lefts else []
    if not own:
        line.append(Segment(part, style + base))
    else:
        marks = sorted({0, len(part), *(s for s, _e, _st in own), *(e for _s, e, _st in own)})
        styled = [(s, e, get_style(st, default=null)) for s, e, st in own]
        for at, to in zip(marks, marks[1:]):
            current = base
            for s, e, st in styled:
                if s <= at and to <= e:
                    current = current + st
            line.append(Segment(part[at:to], style + current))
    if rights:
        line.append(Segment(rights, style))
    return line


def _rich_cell(con: Any, options: Any, cell: _Cell, column: Column, width: int, left: int, right: int,
               style: Any) -> list[list[Any]]:
    """A cell drawn by Rich, exactly as rich.table draws one: padded, wrapped or cut to the column."""
    from rich.padding import Padding
    from rich.text import Text

    renderable = cell[3] if cell[3] is not None else Text(cell[0])
    cell_options = options.update(width=width, justify=column.justify, no_wrap=column.no_wrap, overflow=column.overflow,
                                  height=None, highlight=False)
    lines: list[list[Any]] = con.render_lines(Padding(renderable, (0, right, 0, left)), cell_options, style=style)
    return lines
