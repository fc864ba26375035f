"""Nothing outside studytui/tui imports Textual, so the command line starts fast."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CORE_MODULES = [
    "studytui", "studytui.cli", "studytui.guide", "studytui.guide.search", "studytui.study.check",
    "studytui.core.handoff", "studytui.core.paths", "studytui.store", "studytui.study.flow", "studytui.study.session",
    "studytui.core.state", "studytui.calc",
    "studytui.calc.forms", "studytui.cli.commands.guide", "studytui.cli.commands.study", "studytui.cli.commands.calc",
    "studytui.cli.commands.serve", "studytui.exports.vault", "studytui.exports.anki", "studytui.serve.server",
]


def _modules_after(code: str) -> set[str]:
    script = textwrap.dedent(code) + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import json

    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def _textual(loaded: set[str]) -> bool:
    return any(m == "textual" or m.startswith("textual.") for m in loaded)


def test_core_modules_import_no_textual():
    # Importing only adds modules, so if all of them together load no Textual, none does alone;
    # one interpreter instead of one each. On a failure, each is tried alone to name it.
    if _textual(_modules_after("\n".join(f"import {m}" for m in CORE_MODULES))):
        culprits = [m for m in CORE_MODULES if _textual(_modules_after(f"import {m}"))]
        pytest.fail(f"these import Textual: {culprits}")


COMMANDS = [
    ["list", "--json"], ["search", "roofline", "--json"], ["show", "gqa"], ["check"], ["where"], ["progress", "--json"],
    ["calc", "roofline", "--gpu", "h200", "--intensity", "100", "--json"], ["gpus", "--json"],
]


def _after_commands(commands: list[list[str]]) -> set[str]:
    return _modules_after(
        f"""
        import contextlib, io
        from studytui.cli import main
        for argv in {commands!r}:
            with contextlib.redirect_stdout(io.StringIO()):
                code = main(argv)
            assert code == 0, (argv, code)
        """
    )


def test_commands_import_no_textual():
    # As above: all the commands run in one interpreter; on a failure each runs alone.
    if _textual(_after_commands(COMMANDS)):
        culprits = [argv for argv in COMMANDS if _textual(_after_commands([argv]))]
        pytest.fail(f"these commands import Textual: {culprits}")
