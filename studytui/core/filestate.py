"""Values computed from a file, kept while the file stays as it was (same mtime and size).

Calculators recompute on every keystroke and `check` runs often; the YAML behind them (profiles
of ~100 KB, the accelerator catalog) is parsed again only when the file changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Generic, TypeVar

T = TypeVar("T")
Stamp = tuple[int, int]
# (mtime in ns, ctime in ns, size, inode): what the parsed-guide cache keys on across processes. The
# ctime and the inode also change when a file is replaced by a rename or has its mtime set back.
FullStamp = tuple[int, int, int, int]


def file_stamp(path: Path) -> Stamp | None:
    """(mtime in ns, size) from one stat; None when the file cannot be read."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


def content_stamp(path: str | os.PathLike[str]) -> FullStamp | None:
    """(mtime in ns, ctime in ns, size, inode) from one stat; None when the file cannot be read."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return None
    return (stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino)


class PerFileState(Generic[T]):
    """One kept value per path, computed again when the file's stamp changes. A file that cannot
    be stat'ed is computed every time (the computation reports why it cannot be read)."""

    def __init__(self) -> None:
        self._kept: dict[Path, tuple[Stamp, T]] = {}

    def get(self, path: Path, compute: Callable[[Path], T]) -> T:
        stamp = file_stamp(path)
        kept = self._kept.get(path)
        if stamp is not None and kept is not None and kept[0] == stamp:
            return kept[1]
        value = compute(path)
        if stamp is not None:
            self._kept[path] = (stamp, value)
        return value
