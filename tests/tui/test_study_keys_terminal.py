"""Study keys sent in one chunk to the real app in tmux act on the entry the previous key left (issue 23).

`tmux send-keys` with several keys writes them to the terminal at once, as a fast typist over
SSH does; the app reads them in one go. Each burst is checked in the store afterwards (what the
learner's progress will say), and on the screen (what they saw).
"""

from __future__ import annotations

import os
import shlex
import sys
import time

import pytest

from studytui.guide import load_guide
from studytui.store import open_store


def _states(data) -> dict[str, str]:
    store = open_store(data)
    try:
        return {entry_id: p.state for entry_id, p in store.states().items()}
    finally:
        store.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_bursts_mark_the_entry_on_screen(tmp_path, tmux, size):
    guide = load_guide(None)
    entries = guide.entries
    ids = [e.id for e in entries]
    data = tmp_path / "data"
    session = f"studytui-keys-{os.getpid()}-{size[0]}"
    script = "import sys; from studytui.cli import main; sys.exit(main(sys.argv[1:]))"
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-c", script, "--data-dir", str(data)])

    def screen() -> str:
        return tmux("capture-pane", "-t", session, "-p")

    def wait(check, what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check():
                return
            time.sleep(0.05)
        raise AssertionError(f"{what} never happened; store {_states(data)}; screen:\n{screen()}")

    def burst(*keys: str) -> None:
        tmux("send-keys", "-t", session, "--", *keys)  # one call: one write to the terminal

    def settled_states(expected: dict[str, str], what: str) -> None:
        wait(lambda: _states(data) == expected, what)
        time.sleep(0.3)  # and nothing late changes it
        assert _states(data) == expected, what

    tmux("new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]), command)
    try:
        wait(lambda: "Overall" in screen() and entries[0].title[:20] in screen(), "the first frame")
        expected: dict[str, str] = {}

        burst("nd")
        expected[entries[1].id] = "done"
        settled_states(expected, "nd")
        wait(lambda: entries[1].title[:20] in screen(), "the entry n moved to on screen")

        burst("n" * 10 + "d")
        expected[entries[11].id] = "done"
        settled_states(expected, "ten n then d")
        wait(lambda: entries[11].title[:20] in screen(), "the tenth entry on screen")

        burst("pl")
        expected[entries[10].id] = "learning"
        settled_states(expected, "pl")

        at = ids.index("deepgemm")
        burst("/deepgemm", "Enter", "nd")
        expected[entries[at + 1].id] = "done"
        settled_states(expected, "/deepgemm Enter nd")
        wait(lambda: entries[at + 1].title[:12] in screen(), "the entry after DeepGEMM on screen")
        assert "deepgemm" not in _states(data)
    finally:
        tmux("kill-session", "-t", session)
