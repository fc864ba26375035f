"""Handing a source URL to the learner: a browser when one can be used, else a link to click or copy.

Pure functions over the environment so the CLI and the TUI decide the same way and tests can
inject any environment. Over SSH, or on Linux without a display, the `webbrowser` module may pick
a text browser (lynx, w3m) and run it inside the very terminal studytui is using: never call it then.
"""

from __future__ import annotations

import base64
import os
import re
import sys
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import quote, unquote, urlsplit

# The one policy for every link handed to a browser or the clipboard: entry URLs, links in notes
# and summaries, glossary and policy links. Only https to a named host; never a local path or
# another scheme (file:, javascript:, ssh:, data:...), judged after percent-decoding (Textual
# decodes link targets once; a target encoded twice is decoded again here).
ALLOWED_SCHEMES = ("https",)
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_HOST = re.compile(r"^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$")
# Characters left as they are when a URL is handed off; anything else (spaces...) is %-encoded.
_URL_SAFE = ":/?#[]@!$&'()*+,;=%~-._"


@dataclass(frozen=True)
class LinkCheck:
    """Whether a link may be handed off, and why not."""

    allowed: bool
    url: str
    reason: str = ""


def check_link(target: str) -> LinkCheck:
    """Apply the hand-off policy to a link target (see ALLOWED_SCHEMES). When allowed, `url` is
    the target to hand off, with spaces and other unsafe characters %-encoded."""
    raw = str(target).strip()
    if _CONTROLS.search(raw):
        return LinkCheck(False, raw, "it contains control characters")
    decoded = raw
    for _ in range(5):  # %2566 -> %66 -> f
        once = unquote(decoded)
        if once == decoded:
            break
        decoded = once
    try:
        parts = urlsplit(decoded.strip())
        host = parts.hostname
    except ValueError:
        return LinkCheck(False, raw, "it is not a valid URL")
    scheme = parts.scheme.lower()
    if not scheme or len(scheme) == 1:  # C:\... is a Windows path
        return LinkCheck(False, raw, "it is a local path, not a web address")
    if scheme == "http":
        return LinkCheck(False, raw, "it is plain http (not encrypted); only https links are opened")
    if scheme not in ALLOWED_SCHEMES:
        return LinkCheck(False, raw, f"only https links are opened, and this one is '{scheme}:'")
    if not host or not _HOST.match(parts.netloc.rsplit("@", 1)[-1].rsplit(":", 1)[0] if "[" not in parts.netloc else host.join("[]")):
        return LinkCheck(False, raw, "it names no valid host")
    return LinkCheck(True, quote(raw, safe=_URL_SAFE))


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
