"""The app as textual-serve runs it: one process per browser tab (`python -m studytui.takealong.served`).

The terminal launcher refuses to start without a terminal; here the terminal is the browser,
reached through textual-serve's web driver (set in TEXTUAL_DRIVER by the server), so that check
is skipped and everything else (store, keymap, saving the draft on exit) is the same.
"""

from __future__ import annotations

import argparse
import sys

from studytui.errors import StudyError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="studytui-served")
    parser.add_argument("--data-dir")
    parser.add_argument("--content")
    args = parser.parse_args(argv)
    args.command = None
    from studytui.tui_launch import _launch

    try:
        return _launch(args, resume_gc=None)
    except StudyError as exc:
        sys.stderr.write(f"studytui: error: {exc}\n")
        return exc.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
