"""Records without dataclasses (issue 27), for the calculators, the profiles and practice.

Every `calc` command imports the modules that define its records, and on Python 3.11 each
dataclass costs about a millisecond of generated code at import (a typed named tuple, a fraction
of that: each of its string annotations is compiled). So the records are plain classes with
`__slots__` and an `__init__` of their own, compiled once into their module's bytecode like any
function, and they take the rest of a dataclass's behaviour from here:

- `Record`: `==` when of the same class with equal values in every slot, unhashable (as a
  mutable dataclass is), a repr `Name(field=value, ...)`, and `_asdict()`;
- `FrozenRecord`: also no assignment after `__init__` (FrozenInstanceError, as a frozen
  dataclass), a hash of the values, and `_replace(**changes)` (dataclasses.replace).

(The `dataclasses` module itself is imported by Rich anyway: only the generated code is saved.)
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any, TypeVar


class Record:
    """`==` over every slot of the subclass (in `__slots__` order), and a dataclass-style repr."""

    __slots__: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value: unhashable

    def _values(self) -> tuple[Any, ...]:
        """What `==` compares and the hash covers: every slot (a subclass may leave some out)."""
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({shown})"

    def _asdict(self) -> dict[str, Any]:
        """Every slot and its value, in order."""
        return {name: getattr(self, name) for name in self.__slots__}


_Frozen = TypeVar("_Frozen", bound="FrozenRecord")


class FrozenRecord(Record):
    """A `Record` that cannot be changed once made (its `__init__` sets the slots through
    `object.__setattr__`), hashed by its values: a frozen dataclass's behaviour."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:  # type: ignore[override]  # (a Record is unhashable; a frozen one is not)
        return hash(self._values())

    def _replace(self: _Frozen, **changes: Any) -> _Frozen:
        """A copy with the values in `changes` replaced (dataclasses.replace): made through the
        class's own `__init__`, which takes every slot by name."""
        return type(self)(**{**self._asdict(), **changes})
