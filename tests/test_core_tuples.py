"""core/tuples.Tuple against typing.NamedTuple: the same class for every use studytui makes of one."""

from __future__ import annotations

import copy
import pickle
import typing
from typing import Generic, NamedTuple, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studytui.core.tuples import Tuple

NAMES = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"]


def _pair(fields: list[str], n_defaults: int) -> tuple[type, type]:
    """The same record made both ways: (Tuple's, typing.NamedTuple's)."""
    annotations = {name: "int" for name in fields}
    defaults = {name: index * 10 for index, name in enumerate(fields) if index >= len(fields) - n_defaults}
    ours = type(Tuple)("Rec", (Tuple,), {"__module__": __name__, "__qualname__": "Rec", "__annotations__": dict(annotations), **defaults})
    theirs = typing.NamedTupleMeta("Rec", (typing._NamedTuple,), {"__module__": __name__, "__annotations__": dict(annotations), **defaults})  # type: ignore[attr-defined]
    return ours, theirs


def _outcome(make: typing.Callable[[], object]) -> tuple[str, object]:
    try:
        value = make()
    except Exception as error:  # the kind of error, not the wording
        return ("error", type(error))
    return ("value", tuple(value) if isinstance(value, tuple) else value)


@st.composite
def records_and_calls(draw: st.DrawFn) -> tuple[list[str], int, list[int], dict[str, int]]:
    fields = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6, unique=True))
    n_defaults = draw(st.integers(0, len(fields)))
    args = draw(st.lists(st.integers(-5, 5), max_size=len(fields) + 1))
    keywords = draw(st.dictionaries(st.sampled_from(NAMES + ["other", "_fields"]), st.integers(-5, 5), max_size=4))
    return fields, n_defaults, args, keywords


@given(records_and_calls())
def test_a_call_gives_what_named_tuple_gives(case) -> None:
    fields, n_defaults, args, keywords = case
    ours, theirs = _pair(fields, n_defaults)
    got = _outcome(lambda: ours(*args, **keywords))
    assert got == _outcome(lambda: theirs(*args, **keywords))
    assert _outcome(lambda: ours._make(args)) == _outcome(lambda: theirs._make(args))
    if got[0] == "value":
        a, b = ours(*args, **keywords), theirs(*args, **keywords)
        assert repr(a) == repr(b) and a._asdict() == b._asdict() and hash(a) == hash(b) and a == b
        assert _outcome(lambda: a._replace(**keywords)) == _outcome(lambda: b._replace(**keywords))
        for name in fields:
            assert getattr(a, name) == getattr(b, name)
        assert copy.copy(a) == a and copy.deepcopy(a) == a and type(copy.deepcopy(a)) is ours


@given(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6, unique=True), st.data())
def test_the_class_has_what_named_tuple_has(fields, data) -> None:
    ours, theirs = _pair(fields, data.draw(st.integers(0, len(fields))))
    for attribute in ("_fields", "_field_defaults", "__match_args__", "__doc__"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    # The annotations as written (strings under the future import); typing.NamedTuple compiles
    # them into ForwardRefs, the check Tuple leaves to mypy.
    assert ours.__annotations__ == {name: getattr(ref, "__forward_arg__", ref) for name, ref in theirs.__annotations__.items()}
    assert ours.__mro__[1:] == (tuple, object) and ours.__slots__ == ()
    for index, name in enumerate(fields):
        assert getattr(ours, name).__doc__ == getattr(theirs, name).__doc__ == f"Alias for field number {index}"


class Point(Tuple):
    """A point, with a method, a property and a class attribute."""

    x: int
    y: int = 0
    ORIGIN_NAME = "origin"

    def moved(self, dx: int) -> Point:
        return self._replace(x=self.x + dx)

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)


class Named:
    def __set_name__(self, owner: type, name: str) -> None:
        self.seen = (owner.__name__, name)


class WithDescriptor(Tuple):
    value: int
    marker = Named()


def test_methods_properties_class_attributes_docstring_and_set_name() -> None:
    p = Point(3)
    assert p == (3, 0) and isinstance(p, tuple) and p.moved(2) == Point(5, 0) and p.norm1 == 3
    assert Point.ORIGIN_NAME == "origin" and Point.__doc__.startswith("A point")
    assert Point.__qualname__ == "Point" and Point.__module__ == __name__
    assert WithDescriptor.marker.seen == ("WithDescriptor", "marker")
    for copied in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert copied == p and type(copied) is Point
    assert Point[int] is not None  # subscriptable like a named tuple class
    match p:
        case Point(x, y):
            assert (x, y) == (3, 0)
    with pytest.raises(AttributeError):
        p.x = 4  # type: ignore[misc]
    with pytest.raises(AttributeError):
        p.extra = 1  # type: ignore[attr-defined]  (no __dict__)


def test_a_field_without_default_after_one_with_is_refused_like_named_tuple_refuses_it() -> None:
    with pytest.raises(TypeError, match="field y has no default but follows x, which has one"):
        class Bad(Tuple):  # noqa: F841
            x: int = 0
            y: int


@pytest.mark.parametrize("name", ["_make", "_fields", "__new__", "__init__", "__getnewargs__"])
def test_what_named_tuple_will_not_overwrite_is_refused(name) -> None:
    with pytest.raises(AttributeError):
        type(Tuple)("Bad", (Tuple,), {"__module__": __name__, "__annotations__": {"x": "int"}, name: lambda *a: None})


def test_a_field_name_with_an_underscore_is_refused() -> None:
    with pytest.raises(ValueError):
        type(Tuple)("Bad", (Tuple,), {"__module__": __name__, "__annotations__": {"_x": "int"}})


T = TypeVar("T")


def test_what_it_does_not_cover_goes_to_named_tuple_unchanged() -> None:
    class Box(Tuple, Generic[T]):
        item: T

    assert Box(5).item == 5 and Box._fields == ("item",) and Box.__qualname__.endswith("Box")
    assert typing.get_args(Box[int]) == (int,) and typing.get_origin(Box[int]) is Box


def test_keywords_and_defaults_bind_as_a_named_tuple_binds_them() -> None:
    class Plain(NamedTuple):
        a: int
        b: int = 2

    class Ours(Tuple):
        a: int
        b: int = 2

    assert Ours(1) == Plain(1) and Ours(b=5, a=1) == Plain(b=5, a=1) == (1, 5)


def test_replace_refuses_a_field_the_record_lacks_and_positional_counts_read_as_python_says() -> None:
    p = Point(1, 2)
    with pytest.raises(ValueError, match="unexpected field names"):
        p._replace(z=3)
    with pytest.raises(TypeError, match=r"Point.__new__\(\) takes from 2 to 3 positional arguments but 4 were given"):
        Point(1, 2, 3)

    class Pair(Tuple):
        a: int
        b: int

    with pytest.raises(TypeError, match=r"Pair.__new__\(\) takes 3 positional arguments but 4 were given"):
        Pair(1, 2, 3)
