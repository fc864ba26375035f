"""Start-up imports made cheaper, for the command line (issue 27).

`pathlib` imports `urllib.parse` for one function, `quote_from_bytes`, which only `Path.as_uri()`
calls; `urllib.parse` in turn imports `ipaddress`. Together they are about 4% of the yardstick the
benchmarks measure against (`python -c "import rich.console"`), paid by every command, none of
which calls `as_uri` on a warm path.

`import_pathlib()` imports pathlib while `sys.modules` holds a stand-in for `urllib.parse`: every
name pathlib takes from it is a function that imports the real `urllib.parse` when first called
and hands the call on. The stand-in is taken out of `sys.modules` as soon as pathlib is imported,
so anything that imports `urllib.parse` later (or calls `Path.as_uri()`) gets the real module.
Nothing changes where pathlib or urllib.parse is already imported: then this does nothing.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

__all__ = ["import_pathlib"]


def _deferred(name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module("urllib.parse"), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"urllib.parse.{name}, imported when first called (studytui.core.imports)."
    return call


def import_pathlib() -> None:
    """Import pathlib without importing urllib.parse (see the module's docstring)."""
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    import types

    stand_in = types.ModuleType("urllib.parse", "A stand-in while pathlib is imported (studytui.core.imports).")

    def module_getattr(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _deferred(name)

    setattr(stand_in, "__getattr__", module_getattr)  # noqa: B010  (a module's own __getattr__)
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib  # noqa: F401
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]
