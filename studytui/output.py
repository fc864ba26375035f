"""Output helpers for the CLI: Rich for people, plain JSON for scripts.

Rich is imported lazily so `--json` paths stay fast.
"""

from __future__ import annotations

import json
import os
import sys
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def console():  # -> rich.console.Console
    from rich.console import Console

    # Rich honours NO_COLOR itself; it also drops styling when stdout is not a terminal.
    return Console(highlight=False, no_color=bool(os.environ.get("NO_COLOR")) or None)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def hyperlink(url: str, text: str | None = None) -> str:
    """An OSC 8 terminal hyperlink: clickable where the terminal supports it, plain elsewhere."""
    label = text or url
    return f"\x1b]8;;{url}\x1b\\{label}\x1b]8;;\x1b\\"
