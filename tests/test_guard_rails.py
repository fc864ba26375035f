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


def _contracts() -> list[dict]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        pytest.skip("tomllib needs Python 3.11")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def _subpackages() -> set[str]:
    """studytui's top-level packages, found on disk: a new one cannot be left out of a contract."""
    return {f"studytui.{p.parent.name}" for p in (ROOT / "studytui").glob("*/__init__.py")}


def _contract(contracts: list[dict], starts: str) -> dict:
    found = [c for c in contracts if c["name"].startswith(starts)]
    assert len(found) == 1, [c["name"] for c in contracts]
    return found[0]


def test_every_package_sits_in_a_layer_and_is_kept_from_textual():
    """The layers and the two Textual contracts list packages by hand (a layers contract takes no
    wildcard, and a forbidden contract cannot say "all but studytui.tui"): each top-level package
    other than the app is in a layer and in both Textual contracts (below the front ends: the
    stricter one too)."""
    contracts = _contracts()
    packages = _subpackages()
    assert {"studytui.core", "studytui.tui", "studytui.cli", "studytui.profile"} <= packages
    layers = _contract(contracts, "Layers")
    assert layers["containers"] == ["studytui"]
    in_layers = [[f"studytui.{name.strip()}" for name in layer.split(":")] for layer in layers["layers"]]
    front_ends = set(in_layers[0])
    assert "studytui.tui" in front_ends
    layered = {name for layer in in_layers for name in layer}
    assert packages - layered == set(), "packages in no layer of the layers contract"
    only_app = set(_contract(contracts, "Only the app imports Textual")["source_modules"])
    assert packages - {"studytui.tui"} - only_app == set(), "packages missing from the 'Only the app imports Textual' contract"
    below = set(_contract(contracts, "Nothing below the front ends reaches Textual")["source_modules"])
    assert packages - front_ends - below == set(), "packages missing from the 'Nothing below the front ends' contract"


def test_contracts_over_commands_and_app_modules_take_every_module():
    """The command-independence and launcher-only contracts name wildcards, so a new command module
    or app module is covered without an edit here."""
    contracts = _contracts()
    assert _contract(contracts, "Command modules never import each other")["modules"] == ["studytui.cli.commands.*"]
    app_class = _contract(contracts, "Inside the app only the launcher imports the App class")
    assert app_class["source_modules"] == ["studytui.tui.*"]
    assert app_class["forbidden_modules"] == ["studytui.tui.app"]
    assert app_class["ignore_imports"] == ["studytui.tui.launch -> studytui.tui.app"]



def test_the_readme_stays_a_newcomers_page():
    # Issue 25: the README is at most 15 KB (what it is, the quick start, keys, commands, links);
    # depth goes in docs/. Round 2 of its review found it had crept over without a word.
    size = (ROOT / "README.md").stat().st_size
    assert size <= 15_000, f"README.md is {size:,} bytes; move detail to docs/"
