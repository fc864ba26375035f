"""Handing a source URL to the learner: a browser when one can be used, else a link to click or copy.

Pure functions over the environment so the CLI and the TUI decide the same way and tests can
inject any environment. Over SSH, or on Linux without a display, the `webbrowser` module may pick
a text browser (lynx, w3m) and run it inside the very terminal studytui is using: never call it then.
"""

from __future__ import annotations

import base64
import os
import sys
from typing import Mapping


def browser_available(environ: Mapping[str, str] | None = None, platform: str | None = None) -> tuple[bool, str]:
    """Whether a graphical browser can be opened here, and why not when it cannot."""
    env = os.environ if environ is None else environ
    plat = sys.platform if platform is None else platform
    if env.get("SSH_CONNECTION") or env.get("SSH_TTY") or env.get("SSH_CLIENT"):
        return False, "this is an SSH session: the browser would open on the remote machine, if at all"
    if plat.startswith("linux") or "bsd" in plat:
        if not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
            return False, "no graphical display (DISPLAY/WAYLAND_DISPLAY unset)"
    return True, "a local browser is available"


def osc8_link(url: str, label: str | None = None) -> str:
    """A terminal hyperlink (OSC 8); terminals without support show the label alone."""
    return f"\x1b]8;;{url}\x1b\\{label or url}\x1b]8;;\x1b\\"


def osc52_copy_sequence(text: str, in_tmux: bool = False) -> str:
    """The OSC 52 sequence that asks the terminal to put `text` on the system clipboard.

    Inside tmux the sequence is wrapped in a DCS passthrough (inner ESCs doubled) so tmux hands
    it to the outer terminal.
    """
    payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
    seq = f"\x1b]52;c;{payload}\x07"
    if in_tmux:
        seq = "\x1bPtmux;" + seq.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return seq


def in_tmux(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return bool(env.get("TMUX"))
