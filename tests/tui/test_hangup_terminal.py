"""Closing the terminal (tmux kill-session: the pane's pty goes away, the app gets SIGHUP) saves
the note being typed and ends the process: no orphan left running without a terminal."""

from __future__ import annotations

import os
import shlex
import sys
import time

from studytui.store import open_store

SCRIPT = "import sys; from studytui.cli import main; sys.exit(main(sys.argv[1:]))"


def _start(_tmux, session: str, data) -> int:
    """The app in a new tmux session; its process id once its first frame is on screen."""
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-c", SCRIPT, "--data-dir", str(data)])
    _tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", f"exec {command}")
    deadline = time.monotonic() + 60
    while "Overall" not in _tmux("capture-pane", "-t", session, "-p"):
        assert time.monotonic() < deadline, "the app never painted"
        time.sleep(0.05)
    return int(_tmux("display-message", "-p", "-t", session, "#{pane_pid}").strip())


def _gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie child of the tmux server counts as gone: it has exited.
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().split(")")[-1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def test_closing_the_terminal_right_after_first_paint_ends_the_app(tmp_path, tmux):
    pids = []
    for i in range(3):  # a hang-up early in the app's life left orphans most of the time
        session = f"studytui-hup-{os.getpid()}-{i}"
        pids.append(_start(tmux, session, tmp_path / "data"))
        tmux("kill-session", "-t", session)
    try:
        assert all(_gone(pid) for pid in pids), "the app outlived its terminal"
    finally:
        for pid in pids:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass


def test_closing_the_terminal_while_typing_saves_the_note_and_exits(tmp_path, tmux):
    session = f"studytui-hup-typing-{os.getpid()}"
    pid = _start(tmux, session, tmp_path / "data")
    try:
        tmux("send-keys", "-t", session, "e")
        deadline = time.monotonic() + 20
        while "Done editing" not in tmux("capture-pane", "-t", session, "-p"):  # the editor has focus
            assert time.monotonic() < deadline, "the note editor never opened"
            time.sleep(0.05)
        tmux("send-keys", "-t", session, "-l", "typed just before the window closed")
        deadline = time.monotonic() + 20
        while "typed just before" not in tmux("capture-pane", "-t", session, "-p"):
            assert time.monotonic() < deadline, "the typing never showed:\n" + tmux("capture-pane", "-t", session, "-p")
            time.sleep(0.05)
        tmux("kill-session", "-t", session)
        assert _gone(pid), "the app outlived its terminal"
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    with open_store(tmp_path / "data") as store:
        notes = [p.note for p in store.states().values()]
    assert "typed just before the window closed" in notes
