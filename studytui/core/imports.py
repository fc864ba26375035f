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

    stand_in.quote_from_bytes = _deferred("quote_from_bytes")  # type: ignore[attr-defined]
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib  # noqa: F401
    except ImportError:  # a pathlib that takes another name: forget the half-made one, import it plainly
        for name in [m for m in sys.modules if m == "pathlib" or m.startswith("pathlib.")]:
            del sys.modules[name]
        del sys.modules["urllib.parse"]
        import pathlib  # noqa: F401,F811
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]
