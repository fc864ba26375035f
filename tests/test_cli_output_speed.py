"""Issue 27: the everyday commands print without rich.table, json's indenting encoder or a
Console.print per line, and the output is the same as before.

`output.print_table` replaces rich.table.Table(box=None, pad_edge=False): the same characters and
styles (compared byte for byte, colour codes included, at several widths, against Rich drawing the
same table); `output.json_text` replaces json.dumps(indent=2) (the same text, the same refusals);
`output.LinePrinter` prints many lines with one Console.print (the same text). What each command
loads is checked in a subprocess, as in tests/test_cli_speed.py.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import textwrap
from datetime import date, datetime, timedelta, timezone

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from studytui.cli import main
from studytui.cli.output import Column, LinePrinter, json_text, print_table
from studytui.core.text import json_escaped
from tests.support import random_cell

WIDTHS = (20, 40, 60, 80, 100, 120, 200)


def _console(width: int, buffer: io.StringIO) -> Console:
    return Console(file=buffer, width=width, force_terminal=True, color_system="truecolor", highlight=False)


def _rich_table(columns: list[Column], rows: list[list], show_header: bool = True, collapse_padding: bool = False) -> Table:
    table = Table(box=None, pad_edge=False, show_header=show_header, header_style="bold", collapse_padding=collapse_padding)
    for c in columns:
        table.add_column(c.header, justify=c.justify, style=c.style or None, no_wrap=c.no_wrap, width=c.width,
                         min_width=c.min_width, max_width=c.max_width, overflow=c.overflow, header_style=c.header_style or None)
    for row in rows:
        table.add_row(*[cell.copy() if isinstance(cell, Text) else cell for cell in row])
    return table


def _both(columns: list[Column], rows: list[list], width: int, **options: bool) -> tuple[str, str]:
    theirs, ours = io.StringIO(), io.StringIO()
    _console(width, theirs).print(_rich_table(columns, rows, **options))
    print_table(_console(width, ours), columns, [[c.copy() if isinstance(c, Text) else c for c in row] for row in rows], **options)
    return theirs.getvalue(), ours.getvalue()


# -- print_table against rich.table ------------------------------------------------------------

WORDS = ["a", "bb", "flash", "attention", "—", "日本語", "x" * 30, "GPU", "✎", "○", "", "  ", "tab\there", "bell\x07x",
         "two\nlines", "trailing  ", "Stream-K:"]
STYLES = ["", "cyan", "bold", "dim", "bold underline", "green on blue", "italic"]


def _random_table(rnd: random.Random) -> tuple[list[Column], list[list], dict[str, bool]]:
    columns = [
        Column(header=rnd.choice(["state", "id", "", "title", "N", "✎", "saved (UTC)"]),
               justify=rnd.choice(["left", "right", "left", "center"]), style=rnd.choice(STYLES), no_wrap=rnd.random() < 0.5,
               width=rnd.choice([None, None, None, None, 1, 5, 12]), min_width=rnd.choice([None, None, 3, 8, 19]),
               max_width=rnd.choice([None, None, 10, 40]), overflow=rnd.choice(["ellipsis", "fold", "crop"]),
               header_style=rnd.choice(["", "", "red"]))
        for _ in range(rnd.randint(1, 5))
    ]
    rows = []
    for _ in range(rnd.randint(0, 6)):
        row: list = []
        for _column in columns:
            row.append(random_cell(rnd, WORDS, STYLES))
        rows.append(row)
    return columns, rows, {"show_header": rnd.random() < 0.8, "collapse_padding": rnd.random() < 0.3}


def test_print_table_draws_what_rich_table_draws_byte_for_byte() -> None:
    """Random tables (wide characters, control characters, tabs, several lines in a cell, spans,
    every justification and overflow, fixed, minimum and maximum widths, narrow consoles): the
    same output as rich.table, escape codes and all."""
    rnd = random.Random(27)
    for trial in range(600):
        columns, rows, options = _random_table(rnd)
        width = rnd.choice((7, *WIDTHS))
        theirs, ours = _both(columns, rows, width, **options)
        assert ours == theirs, (trial, width, options, columns, rows)


def test_the_commands_tables_are_the_tables_rich_drew() -> None:
    """The real tables (`list` both ways, `search` both ways, `progress`, `history`, the practice
    summary) with the columns each command had given rich.table, at every width."""
    from studytui.cli.commands import guide as cmd
    from studytui.guide import load_guide
    from studytui.guide.search import SearchIndex

    entries = load_guide().entries
    rows = [(e, "○ pending" if i % 3 else "◐ learning", i % 7 == 0) for i, e in enumerate(entries)]
    for width in (60, 80, 100, 120, 200):
        # list, as a table (rich.table with these columns drew it) and as two-line records
        for wide in (False, True):
            reference = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
            reference.add_column("state", no_wrap=True)
            reference.add_column("✎", no_wrap=True)
            reference.add_column("id", style="cyan", no_wrap=True)
            if wide:
                reference.add_column("kind", no_wrap=True)
            reference.add_column("title")
            current = None
            for e, state, noted in rows:
                if e.section_id != current:
                    current = e.section_id
                    reference.add_row("", "", "", *([""] if wide else []), Text(e.section_title, style="bold underline"))
                reference.add_row(state, "✎" if noted else "", e.id, *([e.kind or "-"] if wide else []), Text(e.title))
            theirs, ours = io.StringIO(), io.StringIO()
            _console(width, theirs).print(reference)
            cmd._list_table(_console(width, ours), rows, wide=wide)
            assert ours.getvalue() == theirs.getvalue(), (width, wide)
        theirs, ours = io.StringIO(), io.StringIO()
        con = _console(width, theirs)
        current, reference = None, None
        for e, state, noted in rows:
            if reference is None or e.section_id != current:
                if reference is not None:
                    con.print(reference)
                current = e.section_id
                con.print(Text(e.section_title, style="bold underline"))
                reference = Table(box=None, pad_edge=False, show_header=False)
                reference.add_column("state", no_wrap=True, min_width=11)
                reference.add_column("entry")
            entry = Text(e.title)
            entry.append("\n")
            entry.append(e.id, style="cyan")
            reference.add_row(state + (" ✎" if noted else ""), entry)
        con.print(reference)
        cmd._list_records(_console(width, ours), rows)
        assert ours.getvalue() == theirs.getvalue(), width
        # search's records
        hits = SearchIndex(entries).search("attention")[:10]
        reference = Table(box=None, pad_edge=False, show_header=False)
        reference.add_column("rank", no_wrap=True, justify="right", style="dim")
        reference.add_column("entry")
        for rank, h in enumerate(hits, 1):
            entry = Text(h.entry.title)
            entry.append("\n")
            entry.append(h.entry.id, style="cyan")
            entry.append(f"  {h.entry.section_title} · matched in {h.matched}", style="dim")
            reference.add_row(f"{rank}.", entry)
        theirs, ours = io.StringIO(), io.StringIO()
        _console(width, theirs).print(reference)
        cmd._search_records(_console(width, ours), hits)
        assert ours.getvalue() == theirs.getvalue(), width
    # search's table, progress's, history's and the practice summary's columns, through _both
    bar = Text()
    bar.append("███", style="green")
    bar.append("╳", style="blue")
    bar.append("▒▒", style="yellow")
    bar.append("··········", style="dim")
    tables = [
        ([Column("id", style="cyan", no_wrap=True, width=22), Column("title", width=40), Column("section", style="dim", width=22),
          Column("matched in", style="dim", no_wrap=True, width=15)],
         [[h.entry.id, Text(h.entry.title), Text(h.entry.section_title), h.matched] for h in SearchIndex(entries).search("kernel")[:10]],
         {}),
        ([Column("section", no_wrap=True), Column("covered", no_wrap=True, min_width=16),
          Column("%", justify="right", no_wrap=True, min_width=4),
          *(Column(n, justify="right", no_wrap=True, min_width=len(n)) for n in ("done", "skipped", "learning", "pending", "total"))],
         [[Text(e.section_title, style="bold" if i == 4 else ""), bar, f"{i * 7}%", str(i), "0", "1", str(9 - i), "10"]
          for i, e in enumerate(entries[::30])],
         {"collapse_padding": True}),
        ([Column("N", justify="right", no_wrap=True, min_width=1), Column("saved (UTC)", no_wrap=True, min_width=19),
          Column("chars", justify="right", no_wrap=True), Column("text", min_width=8), Column("", style="dim", no_wrap=True)],
         [[str(n), "2026-03-01 10:00:00", str(40 * n), Text(e.summary[:150] + " ⏎ more", no_wrap=True, overflow="ellipsis"),
           "restores 1, current" if n == 3 else ""] for n, e in enumerate(entries[:4], 1)],
         {}),
        ([Column("practice", no_wrap=True, overflow="ellipsis", max_width=30), Column("mastery", justify="right", no_wrap=True),
          Column("%", justify="right", no_wrap=True), Column("due", justify="right", no_wrap=True)],
         [[Text(e.section_title), f"{i}/12", f"{100 * i / 12:.0f}%", str(i % 3)] for i, e in enumerate(entries[::20])],
         {}),
    ]
    for columns, table_rows, options in tables:
        for width in WIDTHS:
            theirs, ours = _both(columns, table_rows, width, **options)
            assert ours == theirs, (columns, width)


def test_a_table_keeps_no_color_and_the_width_of_the_terminal(capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the command: piped output has no escape codes and fits COLUMNS (the table at 120
    columns, records at 80); NO_COLOR drops colours, not bold."""
    for columns in ("80", "120"):
        monkeypatch.setenv("COLUMNS", columns)
        assert main(["list"]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "Attention Is All You Need" in out
        assert max(cell_len(line) for line in out.splitlines()) <= int(columns)
        assert ("state" in out.splitlines()[0]) == (columns == "120")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[1m" in out and "\x1b[36m" not in out  # the header bold, the ids not cyan


# -- json_text against json.dumps ----------------------------------------------------------------

def _value(rnd: random.Random, depth: int = 0) -> object:
    strings = ["", "a", "é", "\x7f", "\x85", "\u202e", "\u2066x", '"q"', "\\", "\n\t", "日本", "\x00", "✎"]
    kind = rnd.random()
    if depth > 3 or kind < 0.4:
        return rnd.choice([None, True, False, 0, -3, 10**30, 1.5, -0.0, 1e300, 3.14159, rnd.choice(strings) + rnd.choice(strings)])
    if kind < 0.65:
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(0, 4))]
    if kind < 0.7:
        return [rnd.choice(strings) for _ in range(rnd.randint(0, 4))]
    if kind < 0.75:
        return tuple(_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3)))
    if kind < 0.8:
        return {rnd.choice([1, 2.5, None, True, "k"]): _value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))}
    return {rnd.choice(strings) + str(i): _value(rnd, depth + 1) for i in range(rnd.randint(0, 4))}


def _dumped(value: object) -> str:
    try:
        return json_escaped(json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def _ours(value: object) -> str:
    try:
        return json_text(value)
    except (TypeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def test_json_text_is_json_dumps_with_an_indent_and_the_escapes() -> None:
    rnd = random.Random(27)
    for _ in range(3000):
        value = _value(rnd)
        assert _ours(value) == _dumped(value), value
    for refused in (float("nan"), [1, float("inf")], {"a": [set()]}, {"k": -float("inf")}, {"a": {(1,): 2}}, object()):
        assert _ours(refused) == _dumped(refused) and _ours(refused).split(":")[0] in ("ValueError", "TypeError")


def test_list_json_is_what_json_dumps_wrote(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    out = capsys.readouterr().out
    assert out == json_escaped(json.dumps(json.loads(out), indent=2, ensure_ascii=False)) + "\n"


# -- LinePrinter ----------------------------------------------------------------------------------

def test_lines_printed_together_are_the_lines_printed_one_by_one() -> None:
    heading = Text("centred", justify="center")
    url = Text("https://example.com/a", style="link https://example.com/a")
    lines: list = [Text("plain"), Text("bold", style="bold"), None, Text("tab\there"), Text("two\nlines", style="dim"),
                   heading, Text("a " * 60), url]
    for width in (20, 80):
        outs = []
        for together in (False, True):
            buffer = io.StringIO()
            con = Console(file=buffer, width=width, force_terminal=True, color_system="standard", highlight=False)
            with (LinePrinter(con) if together else con) as printer:
                for line in lines:
                    if line is None:
                        printer.print()
                    elif line is heading:
                        printer.print(line)  # not soft-wrapped, justified: printed by the console itself
                    else:
                        printer.print(line, soft_wrap=True)
            outs.append(buffer.getvalue())
        # (a link's id is drawn at random: compared without it)
        import re

        assert re.sub(r"id=\d+;", "", outs[1]) == re.sub(r"id=\d+;", "", outs[0])
    assert LinePrinter(Console(file=io.StringIO(), width=33)).width == 33


# -- search and plan work only for what they print -------------------------------------------------

def test_the_plan_forecast_extended_is_the_forecast_made_afresh() -> None:
    from studytui.store.attempts import Attempt
    from studytui.study import plan as P

    now = datetime(2026, 12, 2, 15, 30, tzinfo=timezone.utc)
    rnd = random.Random(27)
    for _ in range(30):
        attempts = [Attempt((now - timedelta(days=rnd.uniform(0, 90))).isoformat(), rnd.choice(["p1", "p2", "p3"]),
                            rnd.randint(0, 3), "1", rnd.random() < 0.6, None) for _ in range(rnd.randint(0, 5))]
        forecast = P._Forecast(attempts, now, timezone.utc, 180.0, None)
        for days in (120, 480, 30, 1920, 3650):
            until = date(2026, 12, 2) + timedelta(days=days)
            assert forecast.load(until) == P.forecast_reviews(attempts, now, timezone.utc, until, 180.0), days


def test_the_forecast_reviewing_one_card_on_equals_replaying_every_attempt_again() -> None:
    """The forecast reviews each problem's card on by one imagined right answer at a time
    (schedule.Imagined); the same as replaying the learner's attempts with the imagined ones
    added, from the start, for each step (what it did before: slower, and it overwrote the kept
    replay practice reads)."""
    from studytui.practice import schedule
    from studytui.store.attempts import Attempt

    now = datetime(2026, 12, 2, 15, 30, tzinfo=timezone.utc)
    rnd = random.Random(2027)
    for _ in range(25):
        history = sorted((Attempt((now - timedelta(days=rnd.uniform(0, 60))).isoformat(), "p", rnd.randint(0, 3), "1",
                                  rnd.random() < 0.5, None) for _ in range(rnd.randint(1, 6))), key=lambda a: a.at)
        imagined = schedule.Imagined(list(reversed(history)))  # (any order: it sorts by time)
        replayed = list(history)
        assert imagined.due == schedule._replay({"p": replayed})["p"].due
        at = max(imagined.due, now)
        for _step in range(rnd.randint(1, 8)):
            got = imagined.right_at(at)
            replayed.append(Attempt(at.isoformat(timespec="microseconds"), "p", 0, "(forecast)", True, None))
            assert got == schedule._replay({"p": replayed})["p"].due
            at = max(got, at) + timedelta(hours=rnd.uniform(0, 48))


def test_the_forecast_leaves_the_kept_replay_of_the_learners_attempts_alone(tmp_path, monkeypatch) -> None:
    """`plan` imagines reviews; practice's kept replay (one cache file) stays that of the learner's
    own attempts, so `practice` after `plan` does not replay them again."""
    from studytui.practice import schedule
    from studytui.store.attempts import Attempt
    from studytui.study import plan as P

    monkeypatch.setenv("STUDYTUI_CACHE_DIR", str(tmp_path))
    now = datetime(2026, 12, 2, 15, 30, tzinfo=timezone.utc)
    attempts = [Attempt((now - timedelta(minutes=5)).isoformat(), "p1", 0, "1", False, None)]
    kept = schedule.reviews(attempts)
    replays = []
    monkeypatch.setattr(schedule, "_replay", lambda by_problem: replays.append(by_problem) or {})
    load = P.forecast_reviews(attempts, now, timezone.utc, date(2027, 6, 1), 180.0)
    assert load.by_day and replays == []  # the learner's reviews came from the kept replay
    assert schedule.reviews(attempts) == kept and replays == []  # and it is still kept


# -- what each command loads ------------------------------------------------------------------------

# Modules the output no longer needs: Rich's table layout (and fractions, through its ratios), its
# padding, its emoji table (a str printed goes through it), its Markdown.
NOT_LOADED = ("rich.table", "rich._ratio", "fractions", "rich.padding", "rich._emoji_codes", "rich.markdown")


def _loaded(argv: list[str], data: str) -> list[str]:
    import os

    code = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from studytui.cli import main
        with contextlib.redirect_stdout(io.TextIOWrapper(io.BytesIO())), contextlib.redirect_stderr(io.StringIO()):
            code = main({argv!r})
        print(json.dumps([code, sorted(m for m in {NOT_LOADED!r} + ("rich",) if m in sys.modules)]))
        """
    )
    # Its own cache folder too: the module's fixture runs before conftest's per-test folders.
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1", "STUDYTUI_DATA_DIR": data, "STUDYTUI_CACHE_DIR": data + "-cache"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    status, names = json.loads(out.stdout.strip().splitlines()[-1])
    assert status == 0, argv
    return list(names)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A data directory with a mark, a note with a history and a practice attempt (as
    benchmarks/bench_cli.py seeds one), and the guide cache filled."""
    data = str(tmp_path_factory.mktemp("output-speed-data"))
    for argv in (["mark", "gqa", "learning"], ["note", "gqa", "--text", "a note"], ["note", "gqa", "--text", "a second note"],
                 ["practice", "answer", "sh-ridge-point", "1", "--seed", "0"], ["list", "--json"]):
        _loaded(argv, data)
    return data


@pytest.mark.parametrize("argv", [["list"], ["list", "--section", "2"], ["search", "roofline"], ["history", "gqa"], ["show", "gqa"],
                                  ["next"], ["progress"], ["plan"]], ids=" ".join)
def test_a_command_loads_no_table_layout(argv: list[str], seeded: str) -> None:
    loaded = _loaded(argv, seeded)
    assert "rich" in loaded and not set(loaded) & set(NOT_LOADED), loaded


@pytest.mark.parametrize("argv", [["list", "--json"], ["search", "roofline", "--json"], ["show", "gqa", "--json"], ["next", "--json"]],
                         ids=" ".join)
def test_json_output_loads_no_rich(argv: list[str], seeded: str) -> None:
    assert _loaded(argv, seeded) == []
