"""The app as textual-serve runs it: one process per browser tab (`python -m studytui.serve.served`).

The terminal launcher refuses to start without a terminal; here the terminal is the browser,
reached through textual-serve's web driver (set in TEXTUAL_DRIVER by the server), so that check
is skipped and everything else (store, keymap, saving the draft on exit) is the same.
"""

from __future__ import annotations

import argparse
import signal
import sys

from studytui.core.errors import StudyError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="studytui-served")
    parser.add_argument("--data-dir")
    parser.add_argument("--content")
    args = parser.parse_args(argv)
    args.command = None
    # Ctrl+C at the server's terminal reaches this process too (same process group). The server
    # stops each tab's app in order (a quit message, then the draft is saved on the way out), so
    # the signal itself is ignored here rather than cutting the app off mid-save.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from studytui.tui.launch import run_app

    try:
        return run_app(args)
    except StudyError as exc:
        sys.stderr.write(f"studytui: error: {exc}\n")
        return exc.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
