"""`python -m studytui.measure`: the same as `studytui measure`, without the rest of the CLI."""

from __future__ import annotations

import argparse
import sys

from studytui.cli.commands.measure import add_arguments, handle
from studytui.core.errors import StudyError


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m studytui.measure")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--content", default=None)
    add_arguments(parser)
    args = parser.parse_args()
    try:
        return handle(args)
    except StudyError as exc:
        sys.stderr.write(f"studytui: error: {exc}\n")
        return exc.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
