"""benchmarks/bench_tui.py's measuring parts: what an app writes to its terminal is read from
tmux's control-mode notifications, and a process's CPU time counts every thread of it."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import bench_tui  # noqa: E402


def test_output_notifications_are_unescaped():
    r"""tmux writes bytes below 32 and the backslash itself as \ooo."""
    assert bench_tui.unescape_output(b"40 120\\015\\012") == b"40 120\r\n"
    assert bench_tui.unescape_output(b"a\\134b \\033[1m") == b"a\\b \x1b[1m"
    assert bench_tui.unescape_output(b"plain") == b"plain"


def test_screen_text_keeps_the_printable_text_across_split_chunks():
    screen = bench_tui.ScreenText()
    frame = "\x1b[?1049h\x1b]0;title\x07\x1b(B\x1b[1;1H\x1b[38;5;253;48;5;17mStart \x1b[1mhere\x1b[0m ○ ▶ done\x1b\\".encode()
    added = "".join(screen.feed(frame[i:i + 3]) for i in range(0, len(frame), 3))  # splits sequences and characters
    assert added == "Start here ○ ▶ done"
    assert "".join(screen.text) == added


def test_cpu_seconds_counts_every_thread_of_the_process():
    """A frame written by Textual's writer thread, or work moved to a worker thread, is the app's
    CPU time too: the figure is the whole process's, not its main thread's."""
    start = bench_tui.cpu_seconds(os.getpid())
    stop = time.process_time() + 0.3

    def burn() -> None:
        while time.thread_time() < 0.3 and time.process_time() < stop + 5:
            pass

    worker = threading.Thread(target=burn)
    worker.start()
    worker.join()
    used = bench_tui.cpu_seconds(os.getpid()) - start
    assert used >= 0.25  # the thread's 0.3 s, give or take a clock tick
