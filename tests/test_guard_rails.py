"""Guard rails (issue 25): ruff's lint and import-linter's layering contracts, both configured in
pyproject.toml, pass on the whole tree. They run here so that the README's test command runs them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    """The tool from this interpreter's environment (next to sys.executable), else from PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]' installs it)")
    return found


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_ruff_finds_nothing():
    proc = _run([_tool("ruff"), "check", "--no-cache", "studytui", "tests", "benchmarks", "scripts"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_import_contracts_are_kept():
    proc = _run([_tool("lint-imports"), "--no-cache"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout, proc.stdout
