"""Helpers the command-line and safety tests share."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

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


def heavy_modules_loaded(argv: list[str], heavy: tuple[str, ...], env: dict[str, str] | None = None) -> tuple[int, set[str]]:
    """Run `studytui ARGV` in a fresh interpreter (output dropped): its exit status and which
    of the modules `heavy` it loaded."""
    import json
    import textwrap

    code = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from studytui.cli import main
        with contextlib.redirect_stdout(io.TextIOWrapper(io.BytesIO())), contextlib.redirect_stderr(io.StringIO()):
            code = main({argv!r})
        heavy = {heavy!r}
        print(json.dumps([code, sorted(h for h in heavy if h in sys.modules)]))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    status, names = json.loads(out.stdout.strip().splitlines()[-1])
    return status, set(names)


def corrupt_cache_file(path: Path, how: str) -> None:
    """Damage a cache file (studytui.core.jsoncache's framing) one way: "truncated", "a flipped
    byte", "garbage", "empty", or "another version" (the header names another studytui)."""
    import json

    raw = path.read_bytes()
    if how == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif how == "a flipped byte":
        i = len(raw) - 100
        path.write_bytes(raw[:i] + bytes([raw[i] ^ 0x01]) + raw[i + 1 :])
    elif how == "garbage":
        path.write_bytes(b"\x00\xff not json at all")
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "another version":
        head, _, payload = raw.partition(b"\n")
        header = json.loads(head)
        header["studytui"] = "0.0.0-other"
        path.write_bytes(json.dumps(header).encode() + b"\n" + payload)
    else:
        raise ValueError(how)


def random_cell(rnd: Any, words: list[str], styles: list[str], overflows: list[Any] | None = None) -> Any:
    """One cell of a random table for print_table's comparisons with rich.table: plain text (a
    str), a styled Text (with a random overflow when `overflows` is given), or a Text of styled
    pieces, sometimes with its own justification or no wrapping."""
    from rich.text import Text

    plain = " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 5)))
    kind = rnd.random()
    if kind < 0.4:
        return plain
    if kind < 0.7:
        if overflows is None:
            return Text(plain, style=rnd.choice(styles))
        return Text(plain, style=rnd.choice(styles), overflow=rnd.choice(overflows))
    text = Text(style=rnd.choice(styles))
    for _ in range(rnd.randint(1, 4)):
        text.append(rnd.choice(words + ["\n"]), style=rnd.choice(styles) or None)
    if rnd.random() < 0.2:
        text.justify = rnd.choice(["left", "right"])
    if rnd.random() < 0.2:
        text.no_wrap, text.overflow = True, "ellipsis"
    return text
