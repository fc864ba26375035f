"""How the store's values sit in its rows, shared by `store.py` (reads and writes) and `transfer.py`
(JSON export and import): the entry columns, JSON text, event payloads and id checks."""

from __future__ import annotations

import json
from typing import Any

from studytui.core.errors import UsageError
from studytui.store.model import DEFAULT_STATE, STATES, EntryProgress, check_text

_ENTRY_COLUMNS = "entry_id, state, state_changed_at, last_opened_at, note, note_updated_at"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


def _progress(row: tuple[Any, ...]) -> EntryProgress:
    """A stored row; a state that is not one of ours (a hand-edited file) reads as pending."""
    p = EntryProgress(*row)
    return p if p.state in STATES else p._replace(state=DEFAULT_STATE)


def _loads(raw: Any, default: Any = None) -> Any:
    try:
        return json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        return default


def _event_data(raw: Any) -> dict[str, Any]:
    """An event's payload; unreadable JSON (a hand-edited file) is kept as text, never an error."""
    value = _loads(raw, _UNREADABLE)
    if isinstance(value, dict):
        return value
    return {"unreadable": raw if isinstance(raw, str) else repr(raw)}


_UNREADABLE = object()


def _check_id(entry_id: Any, what: str = "entry id") -> str:
    if not isinstance(entry_id, str) or not entry_id.strip():
        raise UsageError(f"{what} must be a non-empty string, not {entry_id!r}")
    return check_text(entry_id, what)
