"""User key remapping: `keys.yaml` in the data directory maps binding ids to keys.

    # keys.yaml
    next: j            # one key
    previous: k
    search: slash,f    # several keys, comma separated (or a YAML list)

Ids are listed on the help screen (`?`). A bad file stops the app with one line naming it.
No Textual here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from studytui.errors import UsageError

KEYMAP_FILE = "keys.yaml"


def parse_keymap(data: Any, known_ids: Iterable[str], where: str) -> dict[str, str]:
    """Validate a loaded keys.yaml document into {binding id: "key[,key...]"}."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{where}: expected a mapping of binding ids to keys, e.g. 'next: j'")
    known = set(known_ids)
    keymap: dict[str, str] = {}
    for binding_id, keys in data.items():
        if binding_id not in known:
            raise UsageError(f"{where}: unknown binding id '{binding_id}' (known: {', '.join(sorted(known))})")
        if isinstance(keys, list) and keys and all(isinstance(k, str) and k.strip() for k in keys):
            keymap[binding_id] = ",".join(k.strip() for k in keys)
        elif isinstance(keys, str) and keys.strip() and all(k.strip() for k in keys.split(",")):
            keymap[binding_id] = ",".join(k.strip() for k in keys.split(","))
        else:
            raise UsageError(f"{where}: the keys for '{binding_id}' must be a key name or a list of them, not {keys!r}")
    return keymap


def load_keymap(data_dir: Path, known_ids: Iterable[str]) -> dict[str, str]:
    """The keymap from `data_dir/keys.yaml`, or {} when there is no such file."""
    path = data_dir / KEYMAP_FILE
    if not path.is_file():
        return {}
    import yaml  # only when the file exists: yaml costs time at startup

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{path}{line}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    return parse_keymap(data, known_ids, str(path))
