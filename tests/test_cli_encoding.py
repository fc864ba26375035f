"""Output whose encoding is not UTF-8 (PYTHONIOENCODING=ascii or latin-1, an old locale): every
command still prints, with what the encoding lacks as backslash escapes, never a
UnicodeEncodeError traceback; and a note's text comes back whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from studytui.guide import load_guide

ROOT = Path(__file__).resolve().parent.parent
FIRST = load_guide().entries[0].id
TRACE = ROOT / "tests" / "data" / "profile" / "attention-variants.trace.json.gz"


def _run(argv: list[str], data: Path, encoding: str, stdin: str | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": encoding, "NO_COLOR": "1", "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-m", "studytui.cli", "--data-dir", str(data), *argv],
        input=None if stdin is None else stdin.encode("utf-8"), capture_output=True, env=env, timeout=120,
    )


@pytest.mark.parametrize(
    "argv",
    [["list"], ["show", FIRST], ["next"], ["progress"], ["history", FIRST], ["practice"], ["plan"],
     ["gpus"], ["search", "roofline"], ["profile", str(TRACE), "--gpu", "h200"]],
    ids=lambda argv: argv[0],
)
def test_an_ascii_stream_gets_escapes_not_a_traceback(tmp_path: Path, argv: list[str]) -> None:
    done = _run(argv, tmp_path / "data", "ascii")
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    assert b"Traceback" not in done.stderr and b"UnicodeEncodeError" not in done.stderr
    assert done.stdout.strip() and done.stdout.isascii()


def test_a_note_comes_back_whole_through_a_latin1_stream(tmp_path: Path) -> None:
    """`note ID` prints the note's bytes as stored (UTF-8), whatever the stream's encoding: a note
    is the learner's text, not output to translate; `show` escapes what latin-1 lacks."""
    data = tmp_path / "data"
    text = "ridge → 295 FLOP/byte; naïve ≈ 2× slower"
    assert _run(["note", FIRST, "--text", text], data, "latin-1").returncode == 0
    shown = _run(["note", FIRST], data, "latin-1")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.decode("utf-8").rstrip("\n") == text
    show = _run(["show", FIRST], data, "latin-1")
    assert show.returncode == 0 and b"Traceback" not in show.stderr
    # latin-1 has the ï and the ×; the arrow and ≈ come as escapes that decode to the same characters
    assert b"na\xefve" in show.stdout and b"\\u2192" in show.stdout and b"\\u2248" in show.stdout


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("argv", [["show", FIRST, "--json"], ["list", "--json"], ["profile", str(TRACE), "--json"]],
                         ids=lambda argv: argv[0])
def test_json_to_a_stream_that_is_not_utf8_is_still_json_and_the_same(tmp_path: Path, argv: list[str], encoding: str) -> None:
    data = tmp_path / "data"
    note = "naïve ≈ 2× — emoji 😀 and a bidi \u202e mark"
    assert _run(["note", FIRST, "--text", note], data, "utf-8").returncode == 0
    plain = _run(argv, data, "utf-8")
    other = _run(argv, data, encoding)
    assert plain.returncode == other.returncode == 0, other.stderr
    assert other.stdout.isascii() or encoding != "ascii"
    assert json.loads(other.stdout.decode(encoding)) == json.loads(plain.stdout.decode("utf-8"))
