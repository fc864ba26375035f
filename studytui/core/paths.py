"""Where content and user data live.

Content: `--content DIR`, else the copy inside an installed wheel (`studytui/_content`), else the
checkout's top-level `content/`.
Data: `--data-dir DIR` / `STUDYTUI_DATA_DIR`, else a source checkout's `progress/`, else the
platform's user data directory. Never a cache directory: notes are not disposable.
Cache: `STUDYTUI_CACHE_DIR`, else the platform's user cache directory (platformdirs'
`user_cache_dir`: `~/.cache/studytui` on Linux). Only what can be rebuilt goes there (the parsed
guide), never anything of the data directory's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from studytui.core.errors import UsageError

PACKAGE_DIR = Path(__file__).resolve().parent.parent
CHECKOUT_DIR = PACKAGE_DIR.parent
DATA_ENV = "STUDYTUI_DATA_DIR"
CONTENT_ENV = "STUDYTUI_CONTENT_DIR"
CACHE_ENV = "STUDYTUI_CACHE_DIR"
APP_NAME = "studytui"


def is_source_checkout() -> bool:
    """True when running from a git checkout of studytui (an editable install or PYTHONPATH)."""
    return (CHECKOUT_DIR / "pyproject.toml").is_file() and (CHECKOUT_DIR / "content").is_dir() and (
        CHECKOUT_DIR / ".git"
    ).exists()


def content_dir(override: str | os.PathLike[str] | None = None) -> Path:
    if override is None:
        override = os.environ.get(CONTENT_ENV) or None
    if override is not None:
        path = Path(override).expanduser()
        if not path.is_dir():
            raise UsageError(f"content directory not found: {path}")
        return path
    packaged = PACKAGE_DIR / "_content"
    if packaged.is_dir():
        return packaged
    return CHECKOUT_DIR / "content"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The data directory in use (not created here; the store creates it on first write)."""
    if override is None:
        override = os.environ.get(DATA_ENV) or None
    if override is not None:
        path = Path(override).expanduser()
        if path.exists() and not path.is_dir():
            raise UsageError(f"data directory is not a directory: {path}")
        return path
    if is_source_checkout():
        return CHECKOUT_DIR / "progress"
    from platformdirs import user_data_dir

    return Path(user_data_dir("studytui", appauthor=False))


def cache_dir() -> Path:
    """Where studytui keeps what it can always rebuild (the parsed guide): STUDYTUI_CACHE_DIR,
    else platformdirs' user cache directory. On Linux that is $XDG_CACHE_HOME/studytui (when
    absolute) or ~/.cache/studytui, computed here without importing platformdirs (about 20 ms,
    on every command); a test keeps the two equal."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        if os.path.isabs(xdg):
            return Path(xdg) / APP_NAME
        home = os.environ.get("HOME", "")
        if os.path.isabs(home):
            return Path(home) / ".cache" / APP_NAME
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP_NAME, appauthor=False))


def inside_checkout(path: str | os.PathLike[str]) -> bool:
    """True when `path` lies inside this source checkout (the default `progress/` does): deleting
    the clone, or `git clean -fdX` (progress/ is git-ignored), deletes what is there."""
    if not is_source_checkout():
        return False
    try:
        Path(path).expanduser().resolve().relative_to(CHECKOUT_DIR.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


CHECKOUT_WARNING = (
    "this is inside a source checkout: deleting the clone or `git clean -fdX` deletes your notes; "
    f"set {DATA_ENV} or --data-dir to keep them elsewhere"
)
BACKUP_HINT = "back up: studytui export FILE.json (studytui import FILE.json reads it back)"


def exposure_warning(data: str | os.PathLike[str]) -> str | None:
    """One line when other users of this machine can read the notes: the database (or its -wal/-shm
    file) is readable by group or others (and then the directory too, if they can enter it). None when
    it is private (or not there yet: studytui creates it 0700, the database 0600)."""
    import stat

    directory = Path(data).expanduser()
    exposed: list[str] = []
    fixes: list[str] = []
    try:
        st = os.stat(directory)
    except OSError:
        return None
    # A directory others can list (a checkout's progress/ comes 0755 from git) shows them only file
    # names: what holds the notes is the database, created 0600. So it is the files that count.
    listable = stat.S_ISDIR(st.st_mode) and bool(st.st_mode & 0o055)
    files = []
    for name in ("studytui.db", "studytui.db-wal", "studytui.db-shm"):
        try:
            fst = os.stat(directory / name)
        except OSError:
            continue
        if stat.S_ISREG(fst.st_mode) and fst.st_mode & 0o044:  # (anything else is refused on open)
            files.append(f"{name} is {stat.filemode(fst.st_mode)}")
    if files:
        exposed.append(", ".join(files))
        fixes.append(f"chmod 600 {directory / 'studytui.db'}*")
        if listable:
            exposed.append(f"the data directory is {stat.filemode(st.st_mode)}")
            fixes.append(f"chmod 700 {directory}")
    if not exposed:
        return None
    return f"other users on this machine can read your notes ({'; '.join(exposed)}); fix: {' && '.join(fixes)}"
