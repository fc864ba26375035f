"""`Tuple`: a typed named tuple that costs what `collections.namedtuple` costs to define (issue 27).

`class Point(Tuple): x: int; y: int = 0` gives the class `typing.NamedTuple` would give: a
`collections.namedtuple` with the same fields, defaults, `__annotations__`, docstring and methods.
What it skips is `typing.NamedTuple`'s check of every annotation at class creation, which under
`from __future__ import annotations` compiles each field's annotation string into a `ForwardRef`:
about a sixth of a millisecond per record class on Python 3.11, and a command imports some thirty
of them. Type checkers see `typing.NamedTuple` itself (the `TYPE_CHECKING` branch), so the fields
are checked where checking belongs: by mypy, not at every start-up.

Only what studytui's records use is supported: fields, defaults, methods, properties, class
attributes and docstrings. A generic named tuple, or a class body whose annotations are not in
`__annotations__` (Python 3.14's deferred annotations without the future import), is handed to
`typing.NamedTuple` unchanged.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

__all__ = ["Tuple"]

# What typing.NamedTupleMeta refuses in a body, and what it does not copy onto the class.
_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make",
     "_replace", "_asdict", "_source"}
)
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
_namedtuple: Any = collections.namedtuple  # (called with computed fields: mypy checks the literal form)


class _TupleMeta(type):
    def __new__(mcls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if not bases:  # `Tuple` itself
            return super().__new__(mcls, typename, bases, ns)
        annotations = ns.get("__annotations__")
        if bases != (Tuple,) or not isinstance(annotations, dict) or "__orig_bases__" in ns:
            return _typed(typename, ns)
        defaults: list[Any] = []
        with_default: list[str] = []
        for name in annotations:
            if name in ns:
                defaults.append(ns[name])
                with_default.append(name)
            elif defaults:
                raise TypeError(
                    f"Non-default namedtuple field {name} cannot follow default field"
                    f"{'s' if len(defaults) > 1 else ''} {', '.join(with_default)}"
                )
        record = _namedtuple(
            typename, list(annotations), defaults=defaults, module=ns["__module__"]
        )
        record.__annotations__ = record.__new__.__annotations__ = dict(annotations)
        for key, value in ns.items():
            if key in _PROHIBITED:
                raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
            if key not in _SPECIAL and key not in record._fields:
                setattr(record, key, value)
                set_name = getattr(type(value), "__set_name__", None)
                if set_name is not None:
                    set_name(value, record, key)
        return record


def _typed(typename: str, ns: dict[str, Any]) -> Any:
    """The class `typing.NamedTuple` makes of this body (the cases `Tuple` does not cover)."""
    import typing

    body = {key: value for key, value in ns.items() if key != "__qualname__"}
    record = typing.NamedTupleMeta(typename, (typing._NamedTuple,), body)  # type: ignore[attr-defined]
    if "__qualname__" in ns:
        record.__qualname__ = ns["__qualname__"]
    return record


if TYPE_CHECKING:
    from typing import NamedTuple as Tuple
else:

    class Tuple(metaclass=_TupleMeta):
        """Base of a cheap typed named tuple: see the module's docstring."""
