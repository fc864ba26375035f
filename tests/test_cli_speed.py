"""Issue 27: every command loads only what it needs. Checked in a subprocess, as a learner runs it.

`benchmarks/bench_cli.py` measures the time; this test pins what the time is made of, so a heavy
import creeping onto a command's path fails here, on any machine, however busy.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import subprocess
import sys
import textwrap

import pytest

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
    code = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from studytui.cli import main
        with contextlib.redirect_stdout(io.TextIOWrapper(io.BytesIO())), contextlib.redirect_stderr(io.StringIO()):
            code = main({argv!r})
        heavy = {HEAVY!r}
        print(json.dumps([code, sorted(h for h in heavy if h in sys.modules)]))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    code_, names = json.loads(out.stdout.strip().splitlines()[-1])
    return code_, set(names)


@pytest.fixture(scope="module")
def warm_cache() -> None:
    """The guide cache filled once, as on a learner's machine after the first run."""
    _loaded(["list", "--json"])


@pytest.mark.parametrize("argv, allowed", EXPECTED, ids=[" ".join(a) for a, _ in EXPECTED])
def test_each_command_loads_only_what_it_needs(argv: list[str], allowed: set[str], warm_cache: None) -> None:
    _loaded(["mark", "gqa", "learning"])  # a store to read
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
