"""The wheel carries the content: installed elsewhere, `studytui list` matches the checkout's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return next(out.glob("studytui-*.whl"))


def test_wheel_contains_content(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "studytui/_content/guide.yaml" in names
    assert any(n.startswith("studytui/_content/sections/") for n in names)
    assert "studytui/_content/glossary.yaml" in names


def test_installed_wheel_lists_the_same_guide(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)], check=True)
    env = dict(os.environ, PYTHONPATH=str(target), STUDYTUI_DATA_DIR=str(tmp_path / "data"))
    code = "import sys; from studytui.cli import main; sys.exit(main(['list', '--json']))"
    installed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    where = subprocess.run([sys.executable, "-c", "import studytui; print(studytui.__file__)"], capture_output=True,
                           text=True, env=env, cwd=tmp_path)
    assert str(target) in where.stdout, "the test must run the installed copy, not the checkout"
    checkout = subprocess.run([sys.executable, "-m", "studytui.cli", "list", "--json"], capture_output=True, text=True,
                              cwd=ROOT, env=dict(os.environ, STUDYTUI_DATA_DIR=str(tmp_path / "data2")))
    assert json.loads(installed.stdout) == json.loads(checkout.stdout)
