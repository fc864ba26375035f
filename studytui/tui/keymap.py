"""User key remapping: `keys.yaml` in the data directory maps binding ids to keys.

    # keys.yaml
    next: j            # one key
    previous: k
    search: slash,f    # several keys, comma separated (or a YAML list)

Ids are listed on the help screen (`?`). A file that is not YAML stops the app with one line
naming it; an unknown id or a bad key list is skipped with a warning and the app starts. A key
is a Textual key name (letters, digits and `_`, joined by `+`: j, G, ctrl+x, shift+tab, f12,
slash, question_mark) or one printable character; the footer and the help screen draw what is
given here, so anything else (escape sequences, other control, bidi or space characters, or a
name over MAX_KEY_LENGTH characters) is refused with a warning. A key
that another action already uses is not taken from it: the clash is reported (`conflicts`).
No Textual here.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any, Iterable

from studytui.core.errors import UsageError

KEYMAP_FILE = "keys.yaml"
# The names Textual uses for keys people often write as characters.
_KEY_NAMES = {"/": "slash", "?": "question_mark", "+": "plus", "-": "minus", ".": "full_stop", ",": "comma",
              " ": "space", "esc": "escape", "return": "enter"}


MAX_KEY_LENGTH = 40  # "ctrl+shift+question_mark" is 24
MAX_KEYS = 16  # keys for one binding
_NAMED_KEY = re.compile(r"[A-Za-z0-9_]+(?:\+[A-Za-z0-9_]+)*\Z")


def valid_key(key: str) -> bool:
    """True for a key name the footer may draw: a Textual name (ascii letters, digits, '_',
    modifiers joined by '+') or one printable, non-space character ('/', '?', 'é')."""
    if len(key) == 1:
        return key.isprintable() and not key.isspace() and unicodedata.category(key)[0] not in "CZM"
    return len(key) <= MAX_KEY_LENGTH and _NAMED_KEY.match(key) is not None


def _key_name(key: str) -> str:
    key = key.strip()
    return _KEY_NAMES.get(key, _KEY_NAMES.get(key.lower(), key) if len(key) > 1 else key)


def _short_repr(value: Any, limit: int = 60) -> str:
    """repr() of a value for a warning, cut to `limit` characters: reprlib looks at a few items
    and levels only, so a 100,000-item list (aliases within their budget) costs nothing."""
    import reprlib

    text = reprlib.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_keymap(data: Any, known_ids: Iterable[str], where: str, warnings: list[str] | None = None) -> dict[str, str]:
    """Validate a loaded keys.yaml document into {binding id: "key[,key...]"}.

    With a `warnings` list, an unknown id or a bad key list is reported there and skipped;
    without one it raises UsageError."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{where}: expected a mapping of binding ids to keys, e.g. 'next: j'")
    known = set(known_ids)
    keymap: dict[str, str] = {}

    def problem(message: str) -> None:
        if warnings is None:
            raise UsageError(message)
        warnings.append(message)

    for binding_id, keys in data.items():
        if binding_id not in known:
            import difflib

            name = str(binding_id)
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75) if len(name) <= 60 else []
            hint = f"; did you mean '{close[0]}'?" if close else " (the help screen, ?, lists every id)"
            shown = name if len(name) <= 60 else name[:59] + "…"
            problem(f"{where}: unknown binding id '{shown}' ignored{hint}")
            continue
        if isinstance(keys, list) and keys and all(isinstance(k, str) and k.strip() for k in keys):
            names = [k.strip() for k in keys]
        elif isinstance(keys, str) and keys.strip() and all(k.strip() for k in keys.split(",")):
            names = [k.strip() for k in keys.split(",")]
        else:
            problem(f"{where}: the keys for '{binding_id}' must be a key name or a list of them, not {_short_repr(keys)}; ignored")
            continue
        bad = next((k for k in names if not valid_key(k)), None)
        if bad is not None or len(names) > MAX_KEYS:
            why = (f"{_short_repr(bad)} is not a key name (letters, digits and names like ctrl+x, shift+tab, f1, "
                   "slash; no control, space or escape characters)") if bad is not None else f"more than {MAX_KEYS} keys"
            problem(f"{where}: the keys for '{binding_id}' were not applied: {why}; ignored")
            continue
        keymap[binding_id] = ",".join(names)
    return keymap


def conflicts(keymap: dict[str, str], defaults: dict[str, str], where: str = KEYMAP_FILE) -> tuple[dict[str, str], list[str]]:
    """(keymap without stolen keys, one message per key that another action already uses).

    `defaults` maps every binding id to its own keys. A key is stolen when the learner gives it
    to an action while another action still has it (by default or by its own remapping); the
    other action keeps it, and the remapped action keeps its remaining keys (or its default)."""
    current = {binding_id: keymap.get(binding_id, keys) for binding_id, keys in defaults.items()}
    owners: dict[str, list[str]] = {}
    for binding_id, keys in current.items():
        for key in keys.split(","):
            owners.setdefault(_key_name(key), []).append(binding_id)
    kept: dict[str, str] = {}
    messages: list[str] = []
    for binding_id, keys in keymap.items():
        mine = []
        for key in keys.split(","):
            others = [o for o in owners.get(_key_name(key), []) if o != binding_id and o not in keymap]
            if others:
                messages.append(
                    f"{where}: '{binding_id}: {key}' not applied: {key} is already the key of '{others[0]}' "
                    f"(give '{others[0]}' another key in {where} to free it)"
                )
            else:
                mine.append(key)
        if mine:
            kept[binding_id] = ",".join(mine)
    return kept, messages


def load_keymap(data_dir: Path, known_ids: Iterable[str], warnings: list[str] | None = None) -> dict[str, str]:
    """The keymap from `data_dir/keys.yaml`, or {} when there is no such file."""
    path = data_dir / KEYMAP_FILE
    if not path.exists():
        return {}  # (a FIFO, device or folder by that name is refused by the reader: one line naming it)
    # Only when the file exists: yaml costs time at startup. Bounded in size and in aliases (an
    # alias bomb is one line naming the file, like any file that is not YAML).
    from studytui.core.yamlio import load_user_yaml

    return parse_keymap(load_user_yaml(path, "keys.yaml"), known_ids, str(path), warnings)
