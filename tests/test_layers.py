"""Nothing outside studytui/tui imports Textual, so the command line starts fast."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CORE_MODULES = [
    "studytui", "studytui.cli", "studytui.guide", "studytui.guide.search", "studytui.guide.check",
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


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_imports_no_textual(module):
    loaded = _modules_after(f"import {module}")
    assert not any(m == "textual" or m.startswith("textual.") for m in loaded), module


@pytest.mark.parametrize(
    "argv",
    [["list", "--json"], ["search", "roofline", "--json"], ["show", "gqa"], ["check"], ["where"], ["progress", "--json"],
     ["calc", "roofline", "--gpu", "h200", "--intensity", "100", "--json"], ["gpus", "--json"]],
)
def test_commands_import_no_textual(argv):
    loaded = _modules_after(
        f"""
        import contextlib, io
        from studytui.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            code = main({argv!r})
        assert code == 0, code
        """
    )
    assert "textual" not in loaded
