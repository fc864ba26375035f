"""Issue 27: `studytui profile` draws its tables without rich.table.

`output.print_table(box="simple_head", title=...)` draws what rich.table.Table(box=box.SIMPLE_HEAD,
pad_edge=False, title=..., title_justify="left") draws: compared byte for byte, colour codes
included, on random tables at many widths, on a console whose encoding is not UTF (where Rich
swaps in its ASCII box and print_table hands the table to Rich), and on the profile command's
own tables, against the tables profile.py gave rich.table before. What the command loads is
checked in a subprocess.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from studytui.cli import output
from studytui.cli.output import Column, print_table
from tests.support import random_cell

ROOT = Path(__file__).resolve().parents[1]
H200 = ROOT / "content" / "profiles" / "h200"
DATA = ROOT / "tests" / "data" / "profile"


class _Latin1(io.StringIO):
    """A file whose encoding is not UTF: Rich's ConsoleOptions.ascii_only is then true."""

    encoding = "latin-1"


def _console(width: int, buffer: io.StringIO, *, color: str | None = "truecolor", no_color: bool = False,
             legacy_windows: bool = False, terminal: bool = True) -> Console:
    return Console(file=buffer, width=width, force_terminal=terminal, color_system=color, highlight=False,
                   no_color=no_color, legacy_windows=legacy_windows)


def _rich_table(columns: list[Column], rows: list[list], title: Any, header_style: str, show_header: bool,
                collapse_padding: bool) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title=title, title_justify="left", header_style=header_style,
                  show_header=show_header, collapse_padding=collapse_padding)
    for c in columns:
        table.add_column(c.header, justify=c.justify, style=c.style or None, no_wrap=c.no_wrap, width=c.width,
                         min_width=c.min_width, max_width=c.max_width, overflow=c.overflow,
                         header_style=c.header_style or None)
    for row in rows:
        table.add_row(*[cell.copy() if isinstance(cell, Text) else cell for cell in row])
    return table


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, Text) else value


# -- random tables against rich.table ---------------------------------------------------------------

WORDS = ["a", "bb", "flash", "attention", "—", "日本語", "x" * 30, "GPU", "✎", "○", "", "  ", "tab\there", "bell\x07x",
         "two\nlines", "trailing  ", "latency 84%,", "4.29 GFLOP", "1,234"]
STYLES = ["", "cyan", "bold", "dim", "bold underline", "green on blue", "italic", "table.title"]
TITLE_WORDS = ["Ranges", "Kernels,", "longest", "first", "(15 of 34;", "--top N)", "日本語の表", "x" * 45, "—", "two\nlines"]


def _title(rnd: random.Random) -> Any:
    kind = rnd.random()
    if kind < 0.2:
        return None
    plain = " ".join(rnd.choice(TITLE_WORDS) for _ in range(rnd.randint(1, 12)))
    if kind < 0.25:
        return ""
    if kind < 0.5:
        return plain  # a str: Rich gives it the table.title style
    title = Text(plain, style=rnd.choice(STYLES))
    if rnd.random() < 0.3:
        title.stylize(rnd.choice(STYLES[1:]), 0, rnd.randint(1, 10))
    if rnd.random() < 0.15:
        title.justify = rnd.choice(["right", "center", "left"])
    return title


def _random_table(rnd: random.Random) -> tuple[list[Column], list[list], dict[str, Any]]:
    columns = [
        Column(header=rnd.choice(["range", "kernels", "", "limiter (time)", "#", "✎", "GB/s"]),
               justify=rnd.choice(["left", "right", "left", "right", "center"]), style=rnd.choice(STYLES),
               no_wrap=rnd.random() < 0.5, width=rnd.choice([None, None, None, 1, 5, 12, 26]),
               min_width=rnd.choice([None, None, 3, 8, 19]), max_width=rnd.choice([None, None, None, 10, 40]),
               overflow=rnd.choice(["ellipsis", "fold", "crop", "fold"]), header_style=rnd.choice(["", "", "red"]))
        for _ in range(rnd.randint(1, 8))
    ]
    rows = []
    for _ in range(rnd.randint(0, 6)):
        row: list = []
        for _column in columns:
            row.append(random_cell(rnd, WORDS, STYLES, overflows=[None, "fold"]))
        rows.append(row)
    options = {"title": _title(rnd), "header_style": rnd.choice(["bold", "table.header", ""]),
               "show_header": rnd.random() < 0.85, "collapse_padding": rnd.random() < 0.2}
    return columns, rows, options


def _both(columns: list[Column], rows: list[list], width: int, options: dict[str, Any], **console: Any) -> tuple[str, str]:
    file = console.pop("file", io.StringIO)
    theirs, ours = file(), file()
    title = options["title"]
    _console(width, theirs, **console).print(_rich_table(columns, rows, _copy(title), options["header_style"],
                                                         options["show_header"], options["collapse_padding"]))
    print_table(_console(width, ours, **console), columns, [[_copy(c) for c in row] for row in rows],
                header_style=options["header_style"], show_header=options["show_header"],
                collapse_padding=options["collapse_padding"], box="simple_head", title=_copy(title))
    return theirs.getvalue(), ours.getvalue()


def test_a_boxed_table_with_a_title_is_what_rich_table_draws_byte_for_byte() -> None:
    """Random tables (wide characters, control characters, tabs, several lines in a cell, spans,
    every justification and overflow, fixed, minimum and maximum widths, titles that wrap, narrow
    consoles), boxed SIMPLE_HEAD with a left-justified title: the same output as rich.table,
    escape codes and all; with no colour, NO_COLOR, and a legacy Windows console too."""
    rnd = random.Random(2727)
    for trial in range(300):
        columns, rows, options = _random_table(rnd)
        width = rnd.choice((5, 9, 20, 40, 60, 80, 100, 120, 160, 200))
        console = rnd.choice([{}, {}, {}, {"no_color": True}, {"color": None}, {"terminal": False},
                              {"legacy_windows": True, "color": "standard"}])
        theirs, ours = _both(columns, rows, width, options, **console)
        assert ours == theirs, (trial, width, console, options, columns, rows)


def test_on_a_console_that_is_not_utf_rich_draws_the_table_with_its_ascii_box() -> None:
    """Rich swaps SIMPLE_HEAD for ASCII when the console's encoding is not UTF: print_table then
    hands the table to rich.table, so the output is still exactly Rich's."""
    rnd = random.Random(27)
    for trial in range(40):
        columns, rows, options = _random_table(rnd)
        rows = [[c.encode("latin-1", "replace").decode("latin-1") if isinstance(c, str) else Text(c.plain.encode(
            "latin-1", "replace").decode("latin-1"), style=c.style) for c in row] for row in rows]
        for width in (20, 80):
            theirs, ours = _both(columns, rows, width, options, file=_Latin1)
            assert ours == theirs, (trial, width, options, columns, rows)
    columns = [Column("range", width=8), Column("time", justify="right", no_wrap=True)]
    theirs, ours = _both(columns, [["attention", "1.2 us"]], 40, {"title": "Ranges", "header_style": "bold",
                                                                  "show_header": True, "collapse_padding": False},
                         file=_Latin1)
    assert ours == theirs and "-+-" in ours and "─" not in ours


def test_other_boxes_are_refused() -> None:
    with pytest.raises(ValueError):
        print_table(_console(80, io.StringIO()), [Column("a")], [["b"]], box="rounded")


# -- the profile command's tables, against the rich.table ones it drew before -----------------------

def _range_table_before(con: Any, ranges: list[Any]) -> None:
    """profile._range_table as it was, drawing with rich.table."""
    from studytui.cli.commands import profile as P
    from studytui.cli.output import one_line
    from studytui.profile.report import distinct_cuts, partial, share_parts, share_text, time_text

    shown = ranges[:P.MAX_RANGES]
    rows = [(str(r.kernels), time_text(r.duration_s), partial(r.gemm_flops, r.gemm_unknown, r.kernels, "FLOP")) for r in shown]
    shares = [share_text(r.time_by_bound, r.duration_s) for r in shown]
    heads = ("kernels", "time", "GEMM")
    fixed = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(heads)]
    names = ["  " * (r.depth - 1) + one_line(r.name.split(" > ")[-1]) for r in shown]
    room = con.width - sum(fixed) - 3 * 5
    limiter_min = max([len(p) for r in shown for p in share_parts(r.time_by_bound, r.duration_s)] + [len("limiter")])
    limiter_full = max([len(t) for t in shares] + [len("limiter (time)")])
    need = max(len(n) for n in names)
    name_w = min(need, max(P.MIN_NAME, room - limiter_min))
    limiter_w = max(limiter_min, min(limiter_full, room - name_w))
    cut = distinct_cuts(names, name_w) if name_w >= P.MIN_NAME else {n: n for n in names}
    table = Table(title=Text("Ranges", style="table.title"), box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left")
    table.add_column(Text("range"), no_wrap=False, overflow="fold", width=name_w)
    for h, w in zip(heads, fixed):
        table.add_column(Text(h), justify="right", no_wrap=True, min_width=w)
    table.add_column(Text("limiter (time)"), no_wrap=False, width=limiter_w)
    for name, row, r in zip(names, rows, shown):
        table.add_row(Text(cut[name], overflow="fold"), *(Text(cell) for cell in row),
                      Text(P._packed(share_parts(r.time_by_bound, r.duration_s), limiter_w)))
    con.print(table)
    if len(ranges) > P.MAX_RANGES:
        con.print(f"... and {len(ranges) - P.MAX_RANGES} more ranges (--json lists them all)", markup=False, emoji=False)


def _kernel_table_before(con: Any, title: str, shown: list[Any]) -> None:
    """profile._kernel_table as it was, drawing with rich.table."""
    from studytui.cli.commands import profile as P
    from studytui.cli.output import one_line
    from studytui.profile.report import distinct_cuts

    rows = [(str(r.kernel.index), *P._numbers(r)) for r in shown]
    fixed = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(("#", "time", "FLOP/B", "TFLOP/s", "GB/s", "bound"))]
    room = con.width - sum(fixed) - 3 * 7 - 3
    name_w = min(56, max(16, room * 3 // 5))
    range_w = max(8, room - name_w)
    names = P._short_names(shown)
    name_cut = distinct_cuts(names.values(), name_w)
    range_cut = distinct_cuts((one_line(r.range_name) for r in shown), range_w)
    table = Table(title=Text(title, style="table.title"), box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left")
    table.add_column(Text("#"), justify="right", no_wrap=True, min_width=fixed[0])
    table.add_column(Text("kernel"), no_wrap=False, overflow="fold", width=name_w)
    table.add_column(Text("range"), no_wrap=False, overflow="fold", width=range_w, style="dim")
    for label, w in zip(("time", "FLOP/B", "TFLOP/s", "GB/s"), fixed[1:5]):
        table.add_column(Text(label), justify="right", no_wrap=True, min_width=w)
    table.add_column(Text("bound"), no_wrap=True, min_width=fixed[5])
    for r, row in zip(shown, rows):
        table.add_row(Text(row[0]), Text(name_cut[names[r.kernel.index]], overflow="fold"),
                      Text(range_cut[one_line(r.range_name)], overflow="fold"), *(Text(cell) for cell in row[1:]))
    con.print(table)


PROFILES = sorted(H200.glob("*.csv")) + sorted(H200.glob("*.json.gz")) + sorted(DATA.glob("*.gz"))


@pytest.fixture(scope="module")
def reports() -> list[tuple[str, Any]]:
    from studytui.profile import analyze, load

    return [(path.name, analyze(load(str(path)), gpu=None, profile="vendor", data_dir=None)) for path in PROFILES]


def _kernels(report: Any, top: int) -> list[Any]:
    kernels = sorted(report.kernels, key=lambda r: -(r.kernel.duration_s or 0.0))  # as _print_report orders them
    return kernels if top == 0 else kernels[:top]


def test_the_profile_tables_are_what_rich_table_drew(reports: list[tuple[str, Any]]) -> None:
    """The range table and the kernel table of every profile in the repository (the kernels of
    the longest 15, and at 120 columns all of them), at every width in colour, at 80 and 120
    columns with NO_COLOR and piped too: the same bytes as the tables profile.py gave rich.table."""
    from studytui.cli.commands import profile as P

    assert sum(len(r.ranges) > 1 for _name, r in reports) >= 5  # range tables with several rows
    for name, report in reports:
        ranges = list(report.ranges)
        for width in (40, 60, 80, 100, 120, 160, 200):
            # in colour at every width; with NO_COLOR and piped at two (Rich's own tables are slow to draw)
            for console in [{}, {"no_color": True}, {"terminal": False, "color": None}] if width in (80, 120) else [{}]:
                drawn = []
                for table in (_range_table_before, P._range_table):
                    buffer = io.StringIO()
                    table(_console(width, buffer, **console), ranges)
                    drawn.append(buffer.getvalue())
                assert drawn[1] == drawn[0], (name, width, console)
                if width < 100:
                    continue  # (the command lists the kernels as lines below 120 columns)
                for top in (15, 0) if width == 120 and not console else (15,):  # (all 156 of a trace's: once)
                    shown = _kernels(report, top)
                    drawn = []
                    for table in (_kernel_table_before, P._kernel_table):
                        buffer = io.StringIO()
                        table(_console(width, buffer, **console), f"Kernels, longest first ({top})", shown)
                        drawn.append(buffer.getvalue())
                    assert drawn[1] == drawn[0], (name, width, console, top)


def test_the_profile_report_is_what_it_was(reports: list[tuple[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole report through the command's own printing, in colour, at 80 and 120 columns."""
    from studytui.cli.commands import profile as P

    for name, report in reports:
        for width in (80, 120):
            outs = []
            for before in (True, False):
                buffer = io.StringIO()
                con = _console(width, buffer)
                with monkeypatch.context() as patch:
                    patch.setattr(output, "console", lambda con=con: con)
                    if before:
                        patch.setattr(P, "_range_table", _range_table_before)
                        patch.setattr(P, "_kernel_table", _kernel_table_before)
                    P._print_report(report, 15)
                outs.append(buffer.getvalue())
            assert outs[1] == outs[0], (name, width)
            ranges = list(report.ranges)
            ranged = bool(ranges) and not (len(ranges) == 1 and ranges[0].name == "(no range)")
            assert (" ───" in outs[1]) == (width >= P.WIDE or ranged), (name, width)  # a table was drawn


# -- what the command loads ------------------------------------------------------------------------

NOT_LOADED = ("rich.table", "rich.box", "rich.padding", "rich._ratio", "fractions", "decimal", "numbers")


@pytest.mark.parametrize("argv", [
    [str(H200 / "ops-default-raw.csv")],
    [str(H200 / "ops-full-raw.csv"), "--top", "0"],
    [str(DATA / "nested-nvtx-2proc-raw.csv.gz")],
], ids=lambda argv: " ".join(Path(a).name for a in argv))
@pytest.mark.parametrize("columns", ["60", "80", "120", "200"])
def test_profile_loads_no_table_layout(argv: list[str], columns: str, tmp_path: Path) -> None:
    import os

    code = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from studytui.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["profile", *{argv!r}])
        print(json.dumps([code, "───" in out.getvalue(), sorted(m for m in {NOT_LOADED!r} + ("rich",) if m in sys.modules)]))
        """
    )
    env = {**os.environ, "COLUMNS": columns, "NO_COLOR": "1", "STUDYTUI_DATA_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    status, ruled, loaded = json.loads(run.stdout.strip().splitlines()[-1])
    # At 60 columns some of these tables must narrow every column evenly: that (and only that)
    # takes rich._ratio, which imports fractions and decimal (numbers through them).
    absent = NOT_LOADED if columns != "60" else NOT_LOADED[:3]
    assert status == 0 and "rich" in loaded and not set(loaded) & set(absent), loaded
    assert ruled  # a table was drawn (the ranges at any width; the kernels from 120 columns)
