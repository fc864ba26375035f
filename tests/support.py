"""Helpers the command-line and safety tests share."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging for ever (a blocking open of a FIFO)."""
    def expired(*_: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def app_refusal(data: Path) -> tuple[int, str]:
    """Start the study app at a pseudo-terminal on `data` and return its exit code and stderr, for
    a data directory the app must refuse before it draws anything (an unreadable keys.yaml)."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "studytui.cli", "--data-dir", str(data)],
                            stdin=slave, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    try:
        _, raw = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the app started despite an unreadable keys.yaml")
    finally:
        os.close(master)
    return proc.returncode, raw.decode("utf-8", "replace")
