"""Issue 27 for `calc`, `gpus` and `profile`: each command loads only what it needs (checked in a
subprocess, with the calculators' YAML kept parsed), and what it no longer loads it still draws
exactly as before (rich.table drew the calculators' rows and tables)."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import textwrap

import pytest

from studytui.calc.registry import MODULES, names
from studytui.core.paths import CHECKOUT_DIR

H200_CSV = str(CHECKOUT_DIR / "content" / "profiles" / "h200" / "ops-default-raw.csv")

# What no warm command here needs: YAML (kept parsed), Rich's emoji codes (a str printed as markup
# loads them; these commands print Text), and what other commands use.
HEAVY = ("yaml", "studytui.core.yamlio", "rich._emoji_codes", "textual", "markdown_it", "rich.markdown", "sqlite3",
         "studytui.store", "studytui.guide")

# command line -> heavy modules it may still load (the reason after the set).
COMMANDS: list[tuple[str, set[str]]] = [
    ("calc roofline --gpu h200 --flops 1e12 --bytes 1e9", set()),
    ("calc gemm --gpu h100 --m 8192 --n 8192 --k 8192", set()),
    ("calc transformer --model llama-3.1-70b --batch 8 --context 8192", set()),
    ("calc collective --op all_reduce --gpus 8 --bytes 1GiB --gpu h200", set()),
    ("calc collective --op all_reduce --gpus 8 --bytes 1GiB --gpu h200 --profile measured", set()),
    ("calc specdec --alpha 0.8 --gamma 4", set()),
    ("calc kv --model deepseek-v3 --context 128k --batch 8", set()),
    ("calc memory --model qwen3-235b-a22b --gpu h200 --tp 8", set()),
    ("calc occupancy --gpu h200 --threads 256 --regs 64 --dyn-smem 40KiB", set()),
    ("calc tile --gpu b200 --tile 256x128x64 --dtype fp8 --stages auto", set()),
    ("calc l2 --gpu h200 --bytes 40MiB", set()),
    ("gpus", set()),
    ("gpus h200", set()),
    (f"profile {H200_CSV}", set()),
]


def _loaded(argv: list[str], columns: str = "120") -> tuple[int, list[str], str]:
    """Run the command in a new process: its exit status, the studytui.calc and heavy modules it
    imported, and what it printed."""
    code = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from studytui.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            try:
                code = main({argv!r})
            except SystemExit as exc:  # --help
                code = exc.code
        heavy = {HEAVY!r}
        loaded = sorted(m for m in sys.modules if m in heavy or m.startswith("studytui.calc."))
        print(json.dumps([code, loaded, out.getvalue()]))
        """
    )
    env = {**os.environ, "COLUMNS": columns, "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    status, loaded, printed = json.loads(done.stdout.strip().splitlines()[-1])
    return status, loaded, printed


@pytest.mark.parametrize("argv, allowed", COMMANDS, ids=[a for a, _ in COMMANDS])
def test_each_command_loads_only_what_it_needs(argv: str, allowed: set[str]) -> None:
    # A first run keeps the calculators' YAML parsed (the content files come from the checkout:
    # older than jsoncache.RACY_S), as on a learner's machine; the second is measured.
    _loaded(shlex.split(argv))
    status, loaded, printed = _loaded(shlex.split(argv))
    assert status == 0 and printed
    heavy = {m for m in loaded if not m.startswith("studytui.calc.")}
    assert heavy <= allowed, f"studytui {argv} loads {sorted(heavy - allowed)}"
    words = shlex.split(argv)
    if words[0] == "calc":  # its own calculator's module, and no other calculator's
        calculators = {m for m in loaded if m in MODULES}
        own = f"studytui.calc.{words[1]}"
        assert own in calculators, loaded
        shared = {"studytui.calc.roofline", "studytui.calc.kv", "studytui.calc.transformer", "studytui.calc.occupancy"}
        assert calculators - {own} <= shared, f"{argv} imports other calculators: {sorted(calculators - {own} - shared)}"


def test_calc_help_still_lists_every_calculator_and_its_presets() -> None:
    status, _loaded_modules, printed = _loaded(["calc", "--help"])
    assert status == 0 and all(f"  {name}" in printed for name in names())
    status, _loaded_modules, printed = _loaded(["calc", "kv", "--help"])
    assert status == 0 and "model presets: " in printed and "llama-3.1-70b" in printed and "--context" in printed


def test_a_calculators_flags_are_parsed_alike_with_and_without_their_help() -> None:
    """Without --help a calculator's parser is built without its help text; it takes the same flags."""
    from studytui.cli import build_parser

    argv = ["calc", "memory", "--model", "qwen3-235b-a22b", "--gpu", "h200", "--tp", "8", "--json"]
    quick = vars(build_parser(argv).parse_args(argv))
    full = vars(build_parser(argv + ["--help"]).parse_args(argv))
    for parsed in (quick, full):
        parsed.pop("calc_parser")
        parsed.pop("func")
    assert quick == full


# -- the rows, as rich.table drew them ------------------------------------------------------------

CASES = [
    ("roofline", {"gpu": "h200", "flops": "1e12", "bytes": "1e9"}),
    ("roofline", {"gpu": "h200", "flops": "1e12", "bytes": "1e9", "time": "3ms"}),
    ("gemm", {"gpu": "h100", "m": "8192", "n": "8192", "k": "8192"}),
    ("transformer", {"model": "deepseek-v3", "batch": "64", "context": "32768", "gpu": "b200", "tp": "8"}),
    ("collective", {"op": "all_reduce", "gpus": "8", "bytes": "1GiB", "gpu": "h200"}),
    ("specdec", {"alpha": "0.8", "gamma": "4"}),
    ("memory", {"model": "qwen3-235b-a22b", "gpu": "h200", "tp": "8"}),
    ("occupancy", {"gpu": "h200", "threads": "256", "regs": "64", "dyn_smem": "40KiB"}),  # with its sweep table
    ("tile", {"gpu": "b200", "tile": "256x128x64", "dtype": "fp8", "stages": "auto"}),
]


def _old_print_result(out, title, result, tables) -> None:
    """What _print_result drew with rich.table (its rows, then each TextTable)."""
    from rich.table import Table
    from rich.text import Text

    from studytui.cli.output import visible

    moved = tuple(t.replaces for t in tables if t.replaces)
    table = Table(title=Text(visible(title)), show_header=False, title_justify="left", box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for label, value in result.rows:
        if not (moved and label.startswith(moved)):
            table.add_row(Text(visible(str(label))), Text(visible(str(value))))
    out.print(table)
    for text_table in tables:
        extra = Table(title=Text(visible(text_table.title)), title_justify="left", box=None, pad_edge=False, header_style="bold")
        for header, right in text_table.columns:
            extra.add_column(Text(visible(header)), justify="right" if right else "left", no_wrap=True)
        for row in text_table.rows:
            extra.add_row(*(Text(visible(str(cell))) for cell in row))
        out.print()
        out.print(extra)


@pytest.mark.parametrize("name, values", CASES, ids=[f"{n}-{i}" for i, (n, _v) in enumerate(CASES)])
def test_a_result_is_drawn_exactly_as_rich_table_drew_it(name: str, values: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows and tables under a title, character for character and style for style, at widths
    where everything fits, where the values wrap, and where even the labels must."""
    from rich.console import Console

    from studytui.calc.registry import spec
    from studytui.cli import output
    from studytui.cli.commands import calc as cmd

    calc_spec = spec(name)
    result = calc_spec.run(values, strict=True)
    tables = calc_spec.tables(result) if calc_spec.tables else ()
    for width in (12, 31, 47, 64, 80, 97, 120, 250):
        for terminal in (False, True):
            drawn = []
            for draw in ("old", "new"):
                buf = io.StringIO()
                con = Console(file=buf, width=width, force_terminal=terminal, color_system="truecolor" if terminal else None,
                              highlight=False)
                if draw == "old":
                    _old_print_result(con, calc_spec.title, result, tables)
                else:
                    monkeypatch.setattr(output, "console", lambda con=con: con)
                    cmd._print_result(calc_spec.title, result, False, tables)
                drawn.append(buf.getvalue())
            # the new drawing goes on with the assumptions: the rows and tables come first, the same
            assert drawn[1].startswith(drawn[0]), (name, width, terminal)
