"""Issue 27: every command loads only what it needs. Checked in a subprocess, as a learner runs it.

`benchmarks/bench_cli.py` measures the time; this test pins what the time is made of, so a heavy
import creeping onto a command's path fails here, on any machine, however busy.
"""

from __future__ import annotations

import argparse
import importlib
import io
import subprocess
import sys

import pytest

from tests.support import heavy_modules_loaded

HEAVY = ("yaml", "markdown_it", "rich.markdown", "pygments", "sqlite_utils", "click", "textual", "fsrs", "genanki",
         "platformdirs", "studytui.calc", "studytui.practice", "studytui.core.yamlio")

# command line -> the heavy modules it may load (with a warm guide cache). What is listed beyond
# the guide's own needs is what the commands still parse or compute (the practice problems and
# the hardware catalog are YAML read by their own loaders; calculators for calc and grading).
EXPECTED: list[tuple[list[str], set[str]]] = [
    (["show", "gqa"], set()),
    (["show", "gqa", "--json"], set()),
    (["next"], set()),
    (["next", "--json"], set()),
    (["list"], set()),
    (["list", "--json"], set()),
    (["search", "roofline"], set()),
    (["mark", "gqa", "learning"], set()),
    (["note", "gqa"], set()),
    (["note", "gqa", "--text", "a note"], set()),
    (["history", "gqa"], set()),
    (["where"], set()),
    (["export", "-"], {"sqlite_utils", "click"}),  # export: sqlite-utils reads the store (rows_where)
]


def _loaded(argv: list[str]) -> tuple[int, set[str]]:
    return heavy_modules_loaded(argv, HEAVY)


@pytest.mark.parametrize("argv, allowed", EXPECTED, ids=[" ".join(a) for a, _ in EXPECTED])
def test_each_command_loads_only_what_it_needs(argv: list[str], allowed: set[str]) -> None:
    # A store to read, and the guide cache filled, as on a learner's machine after the first run
    # (in this test's data folder and this worker's cache folder: tests/conftest.py).
    _loaded(["mark", "gqa", "learning"])
    code, loaded = _loaded(argv)
    assert code == 0
    assert loaded <= allowed, f"studytui {' '.join(argv)} loads {sorted(loaded - allowed)}"


def test_a_cold_cache_loads_yaml_and_writes_nothing_into_the_data_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STUDYTUI_CACHE_DIR", str(tmp_path / "cold"))
    code, loaded = _loaded(["list", "--json"])
    assert code == 0 and "yaml" in loaded
    from studytui.core.paths import data_dir

    assert not data_dir().exists() or not any(p.name.startswith("guide-") for p in data_dir().rglob("*"))


def test_the_command_table_names_what_each_module_registers() -> None:
    from studytui.cli import COMMAND_MODULES, COMMANDS, ArgumentParser

    registered = {}
    for name in COMMAND_MODULES:
        parser = ArgumentParser(prog="t")
        sub = parser.add_subparsers(dest="command", parser_class=ArgumentParser)
        importlib.import_module(name).register(sub, None)
        registered.update(dict.fromkeys(sub.choices, name))
    assert COMMANDS == registered


@pytest.mark.parametrize(
    "argv, command",
    [
        (["next"], "next"), (["--data-dir", "list", "next"], "next"), (["--data", "show", "mark", "a", "done"], "mark"),
        (["--data-dir=x", "show", "a"], "show"), (["--help"], None), (["-h", "next"], None), (["nxt"], None), ([], None),
        (["--content", "c", "calc", "roofline"], "calc"),
    ],
)
def test_the_command_word_is_found_as_argparse_finds_it(argv: list[str], command: str | None) -> None:
    from studytui.cli import named_command

    assert named_command(argv) == command


def test_a_command_line_builds_only_its_command_in_full() -> None:
    from studytui.cli import COMMANDS, build_parser

    parser = build_parser(["next", "--json"])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(COMMANDS)  # every command is there, by name
    assert parser.parse_args(["next", "--json"]).json is True
    assert sub.choices["mark"].description is None and sub.choices["calc"].description is None  # only named
    full = build_parser(["--help"])
    sub = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    assert {"list", "calc", "practice", "next"} <= set(sub.choices)


def test_show_draws_the_entry_exactly_as_rich_markdown_did() -> None:
    """`show` no longer imports rich.markdown: its own drawing of the entry's Markdown gives the
    same characters and styles, at every width, for every entry."""
    from rich.console import Console
    from rich.markdown import Markdown

    from studytui.cli.commands import guide as cmd
    from studytui.guide import load_guide

    for entry in load_guide().entries:
        markdown = cmd._entry_markdown(entry)
        for width in (40, 80, 120):
            outs = []
            for draw in (lambda c: c.print(Markdown(markdown, hyperlinks=True)), lambda c: cmd._print_markdown(c, markdown)):
                buf = io.StringIO()
                draw(Console(file=buf, width=width, force_terminal=True, color_system="standard"))
                outs.append(buf.getvalue())
            assert outs[0] == outs[1], (entry.id, width)


def test_argparse_strings_translate_as_gettext_would(tmp_path, monkeypatch) -> None:
    """With no catalogue for gettext's domain anywhere in its folder, argparse gets the identity
    (and `locale` is never loaded to look); with one, every string still goes through gettext."""
    import argparse
    import gettext

    from studytui import cli

    monkeypatch.setattr(argparse, "_", gettext.gettext)
    folder = tmp_path / "locale"
    monkeypatch.setattr(gettext, "_default_localedir", str(folder))
    monkeypatch.setitem(gettext._localedirs, gettext.textdomain(), str(folder))  # type: ignore[attr-defined]
    assert not cli._catalogues_exist()  # no folder at all
    (folder / "de" / "LC_MESSAGES").mkdir(parents=True)
    (folder / "de" / "LC_MESSAGES" / "other.mo").write_bytes(b"")
    assert not cli._catalogues_exist()  # another domain's catalogue only
    cli._translate_once()
    assert argparse._ is cli._untranslated  # type: ignore[attr-defined]
    monkeypatch.setattr(argparse, "_", gettext.gettext)
    (folder / "de" / "LC_MESSAGES" / f"{gettext.textdomain()}.mo").write_bytes(b"")
    assert cli._catalogues_exist()
    cli._translate_once()
    assert hasattr(argparse._, "cache_info")  # type: ignore[attr-defined]  # looked up, once per string


def test_a_command_never_loads_locale_or_shutil_for_argparse() -> None:
    code = ("import sys, io, contextlib; from studytui.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): main(['where'])\n"
            "print(sorted(m for m in ('locale', 'shutil') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("columns", ["", "100", "0", "wide"])
def test_help_is_as_wide_as_argparse_would_make_it(columns: str, monkeypatch) -> None:
    import shutil

    from studytui.cli.parsing import terminal_columns

    monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns


def test_a_command_word_argparse_reads_otherwise_still_runs_that_command(monkeypatch, capsys) -> None:
    """Were `named_command` ever to guess another word than argparse reads, the command argparse
    picks stands on the placeholder parser; the whole parser is then built and that command runs."""
    from studytui import cli

    monkeypatch.setattr(cli, "named_command", lambda argv: "show")  # a wrong guess for `where`
    assert cli.main(["where"]) == 0
    assert "data" in capsys.readouterr().out.lower()


def test_commands_not_run_share_one_placeholder_and_stay_choices() -> None:
    from studytui import cli
    from studytui.cli.parsing import placeholder

    parser = cli.build_parser(["next"])
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) >= set(cli.COMMANDS)
    assert {id(p) for name, p in sub.choices.items() if name != "next"} == {id(placeholder())}
    with pytest.raises(SystemExit):
        parser.parse_args(["nxet"])  # (still refused as an invalid choice)
