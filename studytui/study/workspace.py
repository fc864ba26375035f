"""Opening the workspace: the guide and the progress store, with progress recorded under renamed
entries' old ids moved onto the ids the guide uses now.

Every front end opens them here (the commands, the app in `studytui.tui.launch`, the server's
check before it starts), so a renamed entry keeps its progress whichever one runs first.
Commands that only read (`studytui plan`) use `read_workspace()`: the same progress, aliases
followed in memory, and nothing written.
Only the standard library at import time; the guide and the store are imported when opened.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studytui.core.tuples import Tuple

if TYPE_CHECKING:
    from studytui.guide.model import Guide
    from studytui.store.attempts import Attempt
    from studytui.store.model import EntryProgress
    from studytui.store.store import Store

PathLike = str | os.PathLike[str]


def open_workspace(
    content: PathLike | None = None,
    data_dir: PathLike | None = None,
    *,
    guide: Guide | None = None,
    salvage: bool = False,
) -> tuple[Guide, Store]:
    """(guide, store): the guide from `content` (or `guide`, already loaded: a synthetic one, or
    one a command loaded before deciding to open the store), the store in `data_dir` (resolved
    as `--data-dir` is), aliases followed. `salvage=True` opens a damaged store for reading what
    is left (`studytui export`). The caller closes the store (`with store:`)."""
    if guide is None:
        from studytui.guide import load_guide

        guide = load_guide(content)
    from studytui.store import open_store

    store = open_store(data_dir, salvage=salvage)
    try:
        follow_aliases(guide, store)
    except BaseException:
        store.close()
        raise
    return guide, store


def open_existing_workspace(
    content: PathLike | None = None,
    data_dir: PathLike | None = None,
    *,
    guide: Guide | None = None,
) -> tuple[Guide, Store | None]:
    """As `open_workspace`, but no store (None) when the data directory holds no database yet:
    for commands that only read progress (`list`, `search`, `guide diff`)."""
    if guide is None:
        from studytui.guide import load_guide

        guide = load_guide(content)
    from studytui.store import db_path

    if not db_path(data_dir).exists():
        return guide, None
    return open_workspace(data_dir=data_dir, guide=guide)


def follow_aliases(guide: Guide, store: Store) -> list[tuple[str, str]]:
    """Move progress stored under old ids (`aliases` in the content) onto the current ids; the
    (old, new) pairs moved. A guide without aliases costs no query."""
    from studytui.study.flow import alias_map

    aliases = alias_map(guide)
    return store.follow_aliases(aliases) if aliases else []



class WorkspaceSnapshot(Tuple):
    """What `read_workspace` read: the guide, and the store's progress as `open_workspace` would
    leave it (rows and events under an old id re-keyed onto the entry's id now, rows of both ids
    merged the way the store merges them; ids the guide no longer has kept as stored)."""

    guide: Guide
    states: dict[str, EntryProgress]
    events: list[dict[str, Any]]
    attempts: list[Attempt]


def read_workspace(
    content: PathLike | None = None,
    data_dir: PathLike | None = None,
    *,
    command: str,
    guide: Guide | None = None,
) -> WorkspaceSnapshot:
    """The guide and everything the store holds, for a command that only reads (`command`, as in
    `studytui COMMAND`): no schema upgrade, no write, no file created, aliases followed in memory
    only. No database yet (or an empty file): no progress. A database from an older studytui,
    which opening would upgrade, is refused with one line saying what to run first (StoreError);
    files the store refuses anyway (not ours, damaged, newer) get its own message."""
    if guide is None:
        from studytui.guide import load_guide

        guide = load_guide(content)
    from studytui.core.paths import data_dir as resolve
    from studytui.store import DB_NAME, open_store

    path = resolve(data_dir) / DB_NAME
    try:
        if not path.exists() or (path.is_file() and path.stat().st_size == 0):
            return WorkspaceSnapshot(guide, {}, [], [])  # nothing recorded yet (opening an empty file would create the schema)
    except OSError:
        pass  # the store's own open says what is wrong with the path
    if _refuse_upgrade(path, command):
        return WorkspaceSnapshot(guide, {}, [], [])  # a SQLite file without a table: the same (opening it would create the schema)
    with open_store(path.parent) as store:
        states, events, attempts = store.states(), store.events(), store.attempts()
    return WorkspaceSnapshot(guide, *_follow_aliases_in_memory(guide, states, events), attempts)


def _follow_aliases_in_memory(
    guide: Guide, states: dict[str, EntryProgress], events: list[dict[str, Any]]
) -> tuple[dict[str, EntryProgress], list[dict[str, Any]]]:
    """`follow_aliases` without the write: (states, events) re-keyed as the store would re-key them."""
    from studytui.study.flow import alias_map, canonical_states

    aliases = alias_map(guide)
    if not aliases:
        return states, events
    current, orphans = canonical_states(guide, states)
    events = [
        {**event, "entry_id": aliases[event["entry_id"]]} if event.get("entry_id") in aliases else event
        for event in events
    ]
    return {**orphans, **current}, events


def _refuse_upgrade(path: Path, command: str) -> bool:
    """Opening a file from an older studytui upgrades it (a write, with a backup): a command that
    only reads asks the learner to let another command do that first. Files the store itself
    refuses (not ours, damaged, newer) are left to its own messages: it writes nothing to them.
    True for a SQLite file with no table at all, which opening would give the schema (a write).

    The version is read from the file's header bytes, which creates nothing beside the file (a
    SQLite connection to a WAL database would leave -wal and -shm files). Only when the header
    looks old while a write-ahead log is there (it may hold a newer header), or says nothing
    about studytui, is SQLite asked."""
    import sqlite3

    from studytui.core.errors import StoreError
    from studytui.store import schema

    if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        return False  # the store opens such a file read-only and reads it as it is
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError:
        return False
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return False
    version, app_id = int.from_bytes(header[60:64], "big"), int.from_bytes(header[68:72], "big")
    wal = path.with_name(path.name + "-wal")
    logged = wal.exists() and wal.stat().st_size > 0

    def uri() -> str:
        # Read-only; without a write-ahead log, immutable too, so SQLite creates no -shm file.
        # (Built only when SQLite is asked: Path.as_uri imports urllib.parse, which a current
        # store never needs.)
        return f"{path.resolve().as_uri()}?mode=ro" + ("" if logged else "&immutable=1")

    def needs_upgrade(version: int, app_id: int) -> bool:
        return (app_id == schema.APPLICATION_ID and version < schema.SCHEMA_VERSION) or (app_id == 0 and version >= 1)

    if version == 0 and app_id == 0 and not logged:
        try:
            conn = sqlite3.connect(uri(), uri=True)
            try:
                return not schema.table_names(conn)
            finally:
                conn.close()
        except sqlite3.Error:
            return False  # the store's own open says what is wrong with it
    if not needs_upgrade(version, app_id):
        return False
    if logged:
        try:
            conn = sqlite3.connect(uri(), uri=True)
            try:
                version, app_id = schema.user_version(conn), schema.application_id(conn)
            finally:
                conn.close()
        except sqlite3.Error:
            return False
        if not needs_upgrade(version, app_id):
            return False
    raise StoreError(
        f"{path} is from an older studytui (schema version {version}): 'studytui {command}' only reads, so it does "
        f"not upgrade it - run 'studytui progress' once (it upgrades the file and keeps a backup), then {command} again"
    )
