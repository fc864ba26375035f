"""Start-up imports made cheaper, for the command line (issue 27).

`pathlib` imports `urllib.parse` for one function, `quote_from_bytes`, which only `Path.as_uri()`
calls; `urllib.parse` in turn imports `ipaddress`. Together they are about 4% of the yardstick the
benchmarks measure against (`python -c "import rich.console"`), paid by every command, none of
which calls `as_uri` on a warm path.

`import_pathlib()` imports pathlib while `sys.modules` holds a stand-in for `urllib.parse` that
has the one name pathlib takes from it: a function that imports the real `urllib.parse` when first
called and hands the call on. Any other name is missing, as from a module that lacks it: should
a later Python's pathlib take another, its import fails, and pathlib is imported again with the
real `urllib.parse` (the saving lost, which the import test, tests/test_core_imports.py, shows).
The stand-in is taken out of `sys.modules` as soon as pathlib is imported, so anything that
imports `urllib.parse` later (or calls `Path.as_uri()`) gets the real module.
Nothing changes where pathlib or urllib.parse is already imported: then this does nothing.

`import_fsrs()` does the same for the review scheduler FSRS and `typing_extensions`, which FSRS
takes only `Self` from, for annotations (a third of FSRS's import).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

__all__ = ["import_fsrs", "import_pathlib"]


def _deferred(name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module("urllib.parse"), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"urllib.parse.{name}, imported when first called (studytui.core.imports)."
    return call


def import_pathlib() -> None:
    """Import pathlib without importing urllib.parse (see the module's docstring)."""
    _import_with_stand_in("pathlib", "urllib.parse", lambda: {"quote_from_bytes": _deferred("quote_from_bytes")})


def import_fsrs() -> None:
    """Import FSRS (the review scheduler) without importing `typing_extensions`, which it takes
    `Self` from, for annotations it never evaluates (its modules use `from __future__ import
    annotations`). typing_extensions is a third of FSRS's import (10.8 M of 21.8 M instructions,
    half the yardstick's tenth), paid by every command that replays reviews (`plan`, `practice
    answer`). On Python 3.11 and later `typing_extensions.Self` is `typing.Self`, so the stand-in
    holds that same object; on 3.10 this does nothing. An FSRS that takes another name imports
    again with the real module, as import_pathlib does."""
    if sys.version_info < (3, 11):
        return

    def names() -> dict[str, Any]:
        import typing

        return {"Self": typing.Self}

    _import_with_stand_in("fsrs", "typing_extensions", names)


def _import_with_stand_in(name: str, stand_in_name: str, names: Callable[[], dict[str, Any]]) -> None:
    """Import `name` while `sys.modules` holds, for `stand_in_name`, a module with only `names()`;
    the stand-in is gone afterwards, so a later import of it gets the real module. Nothing is
    done where either is imported already. Should `name` take something the stand-in lacks, its
    half-made modules are forgotten and it is imported again, plainly."""
    if name in sys.modules or stand_in_name in sys.modules:
        return
    import types

    stand_in = types.ModuleType(stand_in_name, f"A stand-in while {name} is imported (studytui.core.imports).")
    for key, value in names().items():
        setattr(stand_in, key, value)
    sys.modules[stand_in_name] = stand_in
    try:
        __import__(name)
    except ImportError:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]
        if sys.modules.get(stand_in_name) is stand_in:
            del sys.modules[stand_in_name]
        __import__(name)
    finally:
        if sys.modules.get(stand_in_name) is stand_in:
            del sys.modules[stand_in_name]
