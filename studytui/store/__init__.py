"""The local progress store (SQLite). See `connection.py` for the durability rules.

    from studytui.store import open_store
    from studytui.study.flow import alias_map, next_entry, progress_summary

    store = open_store()                       # --data-dir / STUDYTUI_DATA_DIR / default; no file yet
    store.follow_aliases(alias_map(guide))     # once after opening: progress follows renamed entries
    states = store.states()                    # {stored id: EntryProgress}, one query
    summary = progress_summary(guide, states)  # counts, covered fraction, orphans
    store.set_state(entry.id, "done")          # every write: one transaction, durable on return

Stored ids are kept as written; `studytui.study.flow.canonical_states` maps ids that are aliases onto
current entries and sets orphans apart, so readers never need to do that themselves.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from studytui.core.errors import StoreError
from studytui.store.connection import DB_NAME
from studytui.store.model import STATES, EntryProgress, NoteVersion
from studytui.store.store import Store

__all__ = ["DB_NAME", "STATES", "EntryProgress", "ImportReport", "NoteVersion", "Store", "StoreError", "open_store", "db_path"]


def __getattr__(name: str) -> Any:
    if name == "ImportReport":  # (in transfer.py: only an import makes one)
        from studytui.store.transfer import ImportReport

        return ImportReport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def db_path(data_dir: Path | str | os.PathLike[str] | None = None) -> Path:
    """The database file for a data directory (resolved like the CLI's --data-dir)."""
    from studytui.core.paths import data_dir as resolve

    return resolve(data_dir) / DB_NAME


def open_store(data_dir: Path | str | os.PathLike[str] | None = None, salvage: bool = False) -> Store:
    """Open (never create until the first write) the store in `data_dir`.

    Raises StoreError, naming the file, when it is damaged, not SQLite, not studytui's, or from a
    newer studytui; such a file is left untouched. `salvage=True` opens a damaged file anyway,
    for reading what is left (`Store.damaged` says what is wrong; writes are refused).
    A file or directory that cannot be written opens read-only (`Store.read_only`).
    """
    return Store(db_path(data_dir), salvage=salvage)
