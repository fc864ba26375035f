"""Opening the workspace: the guide and the progress store, with progress recorded under renamed
entries' old ids moved onto the ids the guide uses now.

Every front end opens them here (the commands, the app in `studytui.tui.launch`, the server's
check before it starts), so a renamed entry keeps its progress whichever one runs first.
Only the standard library at import time; the guide and the store are imported when opened.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studytui.guide.model import Guide
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

