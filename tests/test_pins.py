"""The libraries the app's snapshots depend on are pinned to exact versions in pyproject.toml,
and those are the versions installed here: what the tests pass with is what users install."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[1]
MUST_PIN = ("textual", "textual-plotext", "rich", "pytest-textual-snapshot", "syrupy")


def _pins() -> dict[str, str]:
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    pins = {}
    for requirement in requirements:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9][^;\s]*)", requirement.strip())
        if match:
            pins[match.group(1).lower()] = match.group(2)
    return pins


@pytest.mark.parametrize("name", MUST_PIN)
def test_snapshot_libraries_are_pinned_and_installed_as_pinned(name):
    pins = _pins()
    assert name in pins, f"{name} must be pinned with == in pyproject.toml"
    assert version(name) == pins[name], f"installed {name} {version(name)} is not the tested {pins[name]}"
