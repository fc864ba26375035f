"""`Tuple`: a typed named tuple that costs a fraction of what `typing.NamedTuple` costs to define (issue 27).

`class Point(Tuple): x: int; y: int = 0` gives the class `typing.NamedTuple` would give: a tuple
subclass with the same fields, defaults, `_fields`, `_field_defaults`, `_make`, `_replace`,
`_asdict`, `__match_args__`, `__repr__`, pickling, `__annotations__`, docstring and methods
(tests/test_core_tuples.py compares the two). What it skips is what made defining one cost about
0.45 M instructions on Python 3.11 (a command defines twenty to thirty of them):
`typing.NamedTuple`'s check of every annotation, which under `from __future__ import annotations`
compiles each field's annotation string into a `ForwardRef`, and `collections.namedtuple`'s
compiling of a `__new__` for each class from source text. Here one `__new__` serves every record:
all fields given by position is the fast path (as fast as the compiled one); keywords and
defaults are bound by `_bind`, with the messages Python gives for a function's arguments. Type
checkers see `typing.NamedTuple` itself (the `TYPE_CHECKING` branch), so the fields are checked
where checking belongs: by mypy, not at every start-up.

Only what studytui's records use is supported: fields, defaults, methods, properties, class
attributes and docstrings. A generic named tuple, or a class body whose annotations are not in
`__annotations__` (Python 3.14's deferred annotations without the future import), is handed to
`typing.NamedTuple` unchanged.
"""

from __future__ import annotations

from operator import itemgetter
from types import GenericAlias
from typing import TYPE_CHECKING, Any

try:  # the C accessor collections.namedtuple's fields use; a property of an itemgetter otherwise
    from _collections import _tuplegetter as _field  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - other Python implementations
    def _field(index: int, doc: str) -> Any:
        return property(itemgetter(index), doc=doc)

__all__ = ["Tuple"]

# Names the record defines itself, so a body may not set them (the same names typing.NamedTuple
# guards), and the body entries that are not copied onto the class.
_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make",
     "_replace", "_asdict", "_source"}
)
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
_tuple_new = tuple.__new__


def _bind(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The field values of `cls(*args, **kwargs)`, in field order, or the TypeError a function
    with the fields as parameters (and their defaults) would raise."""
    fields, defaults = cls._fields, cls._field_defaults
    where = f"{cls.__name__}.__new__()"
    if len(args) > len(fields):
        least = len(fields) - len(defaults) + 1  # (the class itself counts, as Python counts it)
        takes = f"from {least} to {len(fields) + 1}" if least <= len(fields) else str(len(fields) + 1)
        raise TypeError(f"{where} takes {takes} positional arguments but {len(args) + 1} were given")
    for name in kwargs:
        if name not in fields:
            raise TypeError(f"{where} got an unexpected keyword argument {name!r}")
        if name in fields[: len(args)]:
            raise TypeError(f"{where} got multiple values for argument {name!r}")
    values = list(args)
    missing = []
    for name in fields[len(args):]:
        if name in kwargs:
            values.append(kwargs[name])
        elif name in defaults:
            values.append(defaults[name])
        else:
            missing.append(name)
    if missing:
        names = " and ".join(repr(n) for n in missing) if len(missing) <= 2 else (
            ", ".join(repr(n) for n in missing[:-1]) + f", and {missing[-1]!r}")
        raise TypeError(f"{where} missing {len(missing)} required positional argument{'s' if len(missing) > 1 else ''}: {names}")
    return tuple(values)


def _record_new(cls: Any, *args: Any, **kwargs: Any) -> Any:
    if kwargs or len(args) != len(cls._fields):
        args = _bind(cls, args, kwargs)
    return _tuple_new(cls, args)


def _make(cls: Any, iterable: Any) -> Any:
    result = _tuple_new(cls, iterable)
    if len(result) != len(cls._fields):
        raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
    return result


def _replace(self: Any, /, **changes: Any) -> Any:
    result = self._make([changes.pop(name, value) for name, value in zip(self._fields, self)])
    if changes:
        raise ValueError(f"Got unexpected field names: {list(changes)!r}")
    return result


def _repr(self: Any) -> str:
    return f"{type(self).__name__}({', '.join(f'{name}={value!r}' for name, value in zip(self._fields, self))})"


def _asdict(self: Any) -> dict[str, Any]:
    return dict(zip(self._fields, self))


def _getnewargs(self: Any) -> tuple[Any, ...]:
    return tuple(self)


class _TupleMeta(type):
    def __new__(mcls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if not bases:  # `Tuple` itself
            return super().__new__(mcls, typename, bases, ns)
        annotations = ns.get("__annotations__")
        if bases != (Tuple,) or not isinstance(annotations, dict) or "__orig_bases__" in ns:
            return _typed(typename, bases, ns)
        fields = tuple(annotations)
        defaults: dict[str, Any] = {}
        for name in fields:
            if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
                raise ValueError(f"{typename}: field {name!r} is not a name, or starts with an underscore")
            if name in ns:
                defaults[name] = ns[name]
            elif defaults:
                raise TypeError(
                    f"{typename}: field {name} has no default but follows {', '.join(defaults)}, "
                    f"which {'have' if len(defaults) > 1 else 'has'} one"
                )
        body: dict[str, Any] = {
            "__slots__": (),
            "__module__": ns["__module__"],
            "__qualname__": ns.get("__qualname__", typename),
            "__doc__": f"{typename}({', '.join(fields)}{',' if len(fields) == 1 else ''})",
            "_fields": fields,
            "_field_defaults": defaults,
            "__match_args__": fields,
            "__new__": _record_new,
            "_make": classmethod(_make),
            "_replace": _replace,
            "__repr__": _repr,
            "_asdict": _asdict,
            "__getnewargs__": _getnewargs,
            "__annotations__": dict(annotations),
            "__class_getitem__": classmethod(GenericAlias),
        }
        for index, name in enumerate(fields):
            body[name] = _field(index, f"Alias for field number {index}")
        record = type.__new__(type, typename, (tuple,), body)
        for key, value in ns.items():
            if key in _PROHIBITED:
                raise AttributeError(f"{typename}: {key} is made by the record itself; a class body may not set it")
            if key not in _SPECIAL and key not in defaults and key != "__qualname__":  # (a field's default is in `ns`)
                setattr(record, key, value)
                set_name = getattr(type(value), "__set_name__", None)
                if set_name is not None:
                    set_name(value, record, key)
        return record


def _typed(typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
    """The class `typing.NamedTuple` makes of this body (the cases `Tuple` does not cover), with
    the other bases as given (`Generic[T]`: subscriptable as typing makes it)."""
    import typing

    body = {key: value for key, value in ns.items() if key != "__qualname__"}
    named = typing._NamedTuple  # type: ignore[attr-defined]
    record = typing.NamedTupleMeta(typename, tuple(named if base is Tuple else base for base in bases) or (named,), body)  # type: ignore[attr-defined]
    if "__qualname__" in ns:
        record.__qualname__ = ns["__qualname__"]
    return record


if TYPE_CHECKING:
    from typing import NamedTuple as Tuple
else:

    class Tuple(metaclass=_TupleMeta):
        """Base of a cheap typed named tuple: see the module's docstring."""
