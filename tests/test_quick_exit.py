"""A finished command ends with os._exit after flushing (studytui/__main__._quick_exit, issue 27):
nothing it wrote is lost, its output arrives whole, and the app and the servers exit the
ordinary way."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import studytui.cli as cli
from studytui.cli import main, quick_exit_allowed
from studytui.guide import load_guide

FIRST = load_guide().entries[0].id


def _studytui(data: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "studytui", "--data-dir", str(data), *argv],
                          capture_output=True, text=True, env=env, timeout=120)


def test_what_a_command_writes_is_in_the_store_for_the_next_process(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert _studytui(data, "mark", FIRST, "done").returncode == 0
    assert _studytui(data, "note", FIRST, "--text", "kept across the quick exit").returncode == 0
    shown = _studytui(data, "note", FIRST)
    assert shown.returncode == 0 and shown.stdout.strip() == "kept across the quick exit"
    # and by SQLite itself, outside studytui: the commits are in the database (or its WAL)
    with sqlite3.connect(data / "studytui.db") as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_long_output_arrives_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    done = _studytui(data, "list", "--json")
    assert done.returncode == 0 and done.stderr == ""
    assert main(["--data-dir", str(data), "list", "--json"]) == 0
    assert done.stdout == capsys.readouterr().out
    assert len(json.loads(done.stdout)) == len(load_guide().entries)


def test_a_usage_error_still_says_why(tmp_path: Path) -> None:
    done = _studytui(tmp_path / "data", "show", "no-such-entry-id")
    assert done.returncode == 2 and "no-such-entry-id" in done.stderr


def test_only_a_finished_command_may_skip_the_teardown(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import studytui.cli.commands.measure as measure
    import studytui.cli.commands.serve as serve
    import studytui.tui.launch as launch

    assert main(["--data-dir", str(tmp_path), "gpus"]) == 0
    assert quick_exit_allowed()
    assert main(["--data-dir", str(tmp_path), "show", "no-such-entry-id"]) == 2
    assert not quick_exit_allowed()  # (an error: the ordinary exit)
    # the servers and the app, their work stood in for: each returns, and still exits the ordinary way
    monkeypatch.setattr(serve, "cmd_serve", lambda args: 0)
    monkeypatch.setattr(measure, "handle", lambda args: 0)
    monkeypatch.setattr(launch, "launch", lambda args: 0)
    assert cli.LONG_RUNNING == {"serve", "measure"}
    for argv in (["serve"], ["measure"], []):
        assert main(["--data-dir", str(tmp_path), *argv]) == 0
        assert not quick_exit_allowed(), argv
    capsys.readouterr()


def test_the_quick_exit_flushes_and_keeps_the_status(tmp_path: Path) -> None:
    """The script's path itself: run() returns main's status through os._exit, after the flush."""
    code = (
        "import sys; sys.argv = ['studytui', '--data-dir', sys.argv[1], 'calc', 'roofline', '--gpu', 'h200', "
        "'--flops', '1e12', '--bytes', '1e9']\n"
        "from studytui.__main__ import run\nrun()\nprint('not reached')"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "d")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0 and "Roofline" in done.stdout and "not reached" not in done.stdout


def _unbuffered_off() -> dict[str, str]:
    """The environment without PYTHONUNBUFFERED (set on some machines): the output then sits in
    the buffer until the flush at the end, which is what these tests are about."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("PYTHONUNBUFFERED", None)
    return env


def test_a_short_output_left_in_the_buffer_arrives(tmp_path: Path) -> None:
    for argv in (["show", FIRST, "--json"], ["where"], ["calc", "specdec", "--alpha", "0.8", "--gamma", "4", "--json"]):
        done = subprocess.run([sys.executable, "-m", "studytui", "--data-dir", str(tmp_path / "d"), *argv],
                              capture_output=True, text=True, env=_unbuffered_off(), timeout=120)
        assert done.returncode == 0 and done.stdout.strip(), (argv, done.stderr)
        if argv[-1] == "--json":
            json.loads(done.stdout)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
def test_output_to_a_full_disk_is_an_error_not_a_silent_success(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "studytui", "--data-dir", str(tmp_path / "d"), "show", FIRST, "--json"],
                              stdout=full, stderr=subprocess.PIPE, text=True, env=_unbuffered_off(), timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == "studytui: error: the output could not be written (No space left on device)"


def test_a_reader_that_goes_away_is_not_an_error(tmp_path: Path) -> None:
    reader = subprocess.Popen(["head", "-c", "10"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    done = subprocess.run([sys.executable, "-m", "studytui", "--data-dir", str(tmp_path / "d"), "list", "--json"],
                          stdout=reader.stdin, stderr=subprocess.PIPE, text=True, env=_unbuffered_off(), timeout=120)
    reader.stdin.close()
    reader.wait(timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
@pytest.mark.parametrize("argv", [["mark", FIRST, "learning"], ["list"], ["list", "--json"], ["progress"]], ids=" ".join)
def test_a_full_disk_mid_command_is_said_truly_and_what_was_stored_stays(tmp_path: Path, argv: list[str]) -> None:
    data = tmp_path / "d"
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "studytui", "--data-dir", str(data), *argv],
                              stdout=full, stderr=subprocess.PIPE, text=True, env=_unbuffered_off(), timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == ["studytui: error: the output could not be written (No space left on device)"]
    if argv[0] == "mark":  # the mark was stored before it was printed: the message does not say otherwise
        shown = _studytui(data, "show", FIRST, "--json")
        assert json.loads(shown.stdout)["state"] == "learning"


@pytest.mark.parametrize("argv", [["list"], ["progress"], ["search", "attention"], ["list", "--json"]], ids=" ".join)
def test_a_reader_that_stops_after_one_line_is_not_an_error(tmp_path: Path, argv: list[str]) -> None:
    reader = subprocess.Popen(["head", "-n", "1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    done = subprocess.run([sys.executable, "-m", "studytui", "--data-dir", str(tmp_path / "d"), *argv],
                          stdout=reader.stdin, stderr=subprocess.PIPE, text=True, env=_unbuffered_off(), timeout=120)
    reader.stdin.close()
    reader.wait(timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
