"""YAML the calculators read, kept parsed between runs (issue 27).

The hardware catalog, the model presets, the measured profiles and the compute-capability tables
are YAML, and parsing them (with PyYAML imported for it) cost more than the arithmetic of any
calculator. So what is built from those files is kept in the user cache directory as plain JSON
(`studytui.core.jsoncache`), keyed by the files' stamps (mtime, ctime, size, inode) and by the
code that builds it, and read back while every file is as it was:

- `parsed_yaml`: one file's document (a model preset, the tables, a user's hardware file). Only
  the parse is kept: the caller checks the document exactly as it checks one parsed from the
  file (a preset is validated on every load).
- `kept` / `keep`, and `Batch` for a folder's files: a value built from the files, for a caller
  that checks what it reads back itself (the shipped catalog's accelerators, each value checked
  for its field's type in `studytui.calc.hardware`; a measured profile's summary in
  `studytui.calc.profiles`): a wrong shape means the files are read again.

What is never kept: a value that does not come back from JSON exactly as it was built (a date, a
key that is not text: `jsoncache.put` refuses it, and that file is parsed on every run), anything
from a file that fails to parse or to check (its error is raised again on every run, from the
file), and anything from a file changed in the last `jsoncache.RACY_S` seconds. Which files are
read (a folder's listing) is never kept either: callers list the folder on every run, so an added
file is read at once.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

from studytui.core import jsoncache

# The modules whose code decides what a kept document holds (within the package); fileio holds
# the size a YAML file may have.
CODE_FILES = ("calc/parsed.py", "core/yamlio.py", "core/fileio.py", "core/jsoncache.py")


def _limit() -> int | None:
    """The size a YAML file may have now, where this process may have changed it (a test lowers
    `fileio.YAML_LIMIT`); None while fileio is not even imported: every kept document was parsed
    within the limit its code gives (an edit of fileio.py is a change of code: nothing is kept)."""
    fileio = sys.modules.get("studytui.core.fileio")
    limit = getattr(fileio, "YAML_LIMIT", None)
    return limit if isinstance(limit, int) else None


def yaml_files(directory: Any) -> list[Any]:
    """What `directory.glob("*.yaml")` lists (a Path for every entry whose name ends in .yaml, in
    the folder's order; none when it cannot be listed), without the pattern's regular expression,
    which pathlib compiles on every run."""
    try:
        with os.scandir(directory) as entries:
            names = [entry.name for entry in entries]
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []
    return [directory / name for name in names if os.path.normcase(name).endswith(".yaml")]


def parsed_yaml(path: str | os.PathLike[str], what: str, parse: Callable[[Any], Any]) -> Any:
    """What `parse(path)` returns for the YAML file `path`: from the cache while the file is
    unchanged, else from `parse` (whose errors propagate; nothing is kept then). `what` names
    the kind of file ("hardware", "model preset") and is part of the name it is kept under."""
    where = os.path.abspath(os.fspath(path))
    name = f"yaml:{what}:{where}"
    # (A file now over the size a YAML file may have is parsed: `parse` refuses it.)
    value = kept(name, [where], ())
    if value is not None:
        return value
    taken_at = jsoncache.now()
    stamps = jsoncache.stamps_of([where])
    value = parse(path)
    jsoncache.put(name, value, stamps, CODE_FILES, taken_at)
    return value


class Batch:
    """A value built from several YAML files (a folder's listing, which the caller takes on every
    run), kept as one: `value` is the kept value when it was built from exactly these files, in
    this order, by this code (`code`, within the package), none of them changed since; else None.
    The caller checks its shape; when it builds the value from the files instead, it calls
    `start` before reading the first one and `keep` once it is built."""

    def __init__(self, paths: list[Any], what: str, code: tuple[str, ...] = ()) -> None:
        self.wheres = [os.path.abspath(os.fspath(path)) for path in paths]
        self.name = f"yaml-files:{what}:" + "\0".join(self.wheres)
        self.code = code
        self.value: Any = kept(self.name, self.wheres, code) if self.wheres else None
        self.taken_at: float | None = None
        self.stamps: jsoncache.Stamps = []

    def start(self) -> None:
        """Stamp the files, before they are read."""
        self.taken_at = jsoncache.now()
        self.stamps = jsoncache.stamps_of(self.wheres)

    def keep(self, value: Any) -> bool:
        """Keep `value`, built from the files stamped by `start`."""
        if self.taken_at is None or not self.wheres:
            return False
        return keep(self.name, value, self.stamps, self.code, self.taken_at)


def kept(name: str, files: list[str], code: tuple[str, ...]) -> Any:
    """The value kept under `name` when it was built from exactly the YAML files `files`
    (absolute paths), none of which, nor the code files `code`, changed since, and none of which
    is now over the size a YAML file may have; else None. The caller checks its shape."""
    got = jsoncache.get(name, CODE_FILES + code, files)
    if got is None:
        return None
    value, stamps = got
    limit = _limit()
    if any(stamp is None or (limit is not None and stamp[2] > limit) for _, stamp in stamps):
        return None
    return value


def keep(name: str, value: Any, stamps: jsoncache.Stamps, code: tuple[str, ...], taken_at: float) -> bool:
    """Keep `value`, built from the files in `stamps` (taken at `taken_at`, before reading them)."""
    return jsoncache.put(name, value, stamps, CODE_FILES + code, taken_at)


def tables_yaml(path: str, what: str, field: str, refusal: str) -> Any:
    """A YAML file of tables the calculators read (compute capabilities, a measured device
    record), kept parsed as `parsed_yaml` keeps it; a YAML error is FieldError(field,
    "<refusal> PATH: <error>")."""

    def parse(where: str) -> Any:
        import yaml

        from studytui.calc.units import FieldError
        from studytui.core import fileio
        from studytui.core.yamlio import safe_load

        try:
            return safe_load(fileio.read_text_bounded(where, fileio.YAML_LIMIT, what))
        except yaml.YAMLError as exc:
            raise FieldError(field, f"{refusal} {where}: {type(exc).__name__} {exc}") from None

    return parsed_yaml(path, what, parse)
