"""The validated practice problems, kept between runs in the user cache directory (issue 27).

Parsing `content/problems/*.yaml` with PyYAML and validating every problem cost more than the rest
of `studytui practice`. Once the problems have loaded without an error they are kept as plain JSON
through the primitives every such cache shares (`studytui/core/jsoncache.py`), under a name that
holds the resolved content folder, and read back while nothing they were built from changed: the
`problems` folder itself (a file added, removed or renamed changes its stamp), every problem file,
and the code that reads them (CODE_FILES).

A kept set is never trusted blindly. Beyond jsoncache's own checks (owner, size, format, version,
stamps, digest), the payload rebuilds every Problem field by field with the type the model holds,
the loader's closed vocabularies (kinds, picks, units, given sources), finite numbers, unique ids,
and no control character in any text (the loader refuses them: an escape sequence must never reach
a terminal). Anything off and the problems are parsed from the YAML again, and kept anew.

Only a valid set is kept, so it holds no error messages; the line numbers the loader finds for
them (ProblemSet.files) are only needed by `studytui check`, which always parses the YAML.
"""

from __future__ import annotations

import math
from itertools import chain
from pathlib import Path
from typing import Any, Callable, TypeVar

from studytui.core import jsoncache
from studytui.core.jsoncache import Invalid, Stamps
from studytui.core.text import printable_but
from studytui.practice.loader import _CONTROL, PROBLEMS_DIR
from studytui.practice.model import HEAD_FIELDS, KINDS, PICKS, GivenSpec, Problem, ProblemHead

FORMAT = 1
T = TypeVar("T")
# The modules whose code decides what a problem set parsed from the YAML holds.
CODE_FILES = (
    "practice/loader.py", "practice/model.py", "practice/answers.py", "practice/given.py", "practice/cache.py",
    "core/yamlio.py", "core/jsoncache.py", "core/records.py", "core/errors.py",
)
GIVEN_SOURCES = ("gpu", "model", "cc", "value")  # given.SOURCES (a test keeps them equal), without importing given

# Every field of Problem and GivenSpec in the model's order, with the kind of value it holds. A
# test keeps these equal to the records' fields, so a field added to the model cannot be lost.
TEXT, OPT_TEXT, TEXTS, FLOAT, OPT_FLOAT, INT = "text", "text?", "texts", "float", "float?", "int"
GIVEN_SCHEMA = (("source", TEXT), ("ref", TEXT), ("figures", TEXTS), ("prefix", TEXT), ("name", TEXT), ("text", TEXT),
                ("value", TEXT))
PROBLEM_SCHEMA = (
    ("id", TEXT), ("section_id", TEXT), ("title", TEXT), ("entries", TEXTS), ("kind", TEXT), ("question", TEXT),
    ("calc_name", TEXT), ("calc_args", "args"), ("answer_key", TEXT), ("params", "params"), ("pick", OPT_TEXT),
    ("unit", TEXT), ("tolerance", FLOAT), ("choices", TEXTS), ("hints", TEXTS), ("notice", TEXT), ("skill", TEXT),
    ("given", "given"), ("by_hand", "by_hand"), ("target", TEXT), ("margin", OPT_FLOAT), ("slips", "slips"),
    ("source_file", TEXT), ("index", INT),
)


def value_name(root: Path) -> str:
    """The cache's name for a content folder (its resolved path)."""
    return f"practice:{FORMAT}:{root}"


def index_name(root: Path) -> str:
    """The name of the same folder's heads (`ProblemHead`): a twentieth of the whole set, all the
    lists read. Kept with the same stamps as the set, in a file of its own."""
    return f"practice-heads:{FORMAT}:{root}"


def source_files(root: Path) -> list[Path]:
    """What a problem set is built from: the problems folder (its listing) and each of its files,
    in the loader's order."""
    folder = root / PROBLEMS_DIR
    return [folder, *sorted(folder.glob("*.yaml"))] if folder.is_dir() else [folder]


# -- reading -------------------------------------------------------------------------------------


_BAD = (Invalid, TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError)  # a payload that is off


def _kept(name: str, root: Path, decode_value: Callable[[Any], T]) -> tuple[T, Stamps] | None:
    """`decode_value` of the value kept as `name` for `root`'s problems folder, with its stamps,
    when nothing it was built from changed and it checks out; else None (never raises)."""
    found = jsoncache.get(name, CODE_FILES)
    if found is None:
        return None
    value, stamps = found
    try:
        if not stamps or stamps[0][0] != str(root / PROBLEMS_DIR):
            raise Invalid("another folder")
        return decode_value(value), stamps
    except _BAD:
        return None


def read(root: Path) -> tuple[tuple[Problem, ...], Stamps] | None:
    """The kept problems of `root` (resolved) and the stamps they were kept under."""
    return _kept(value_name(root), root, decode)


def read_one(root: Path, problem_id: str) -> tuple[Problem | None, Stamps] | None:
    """One problem of the kept set (None when the set has no such id) and the set's stamps, with
    only that problem's row rebuilt and checked (`practice show ID`, `practice answer ID`: the
    other hundred are not decoded); None when the set is not valid for the files as they are."""
    return _kept(value_name(root), root, lambda value: decode_one(value, problem_id))


def read_heads(root: Path) -> tuple[tuple[ProblemHead, ...], Stamps] | None:
    """The kept heads of `root`'s problems and their stamps (the loader's rules for these fields)."""
    return _kept(index_name(root), root, decode_heads)


def decode_one(value: Any, problem_id: str) -> Problem | None:
    """The problem `problem_id` from the set's plain form (its row alone rebuilt), None when the
    set has no such id; Invalid when the table is off."""
    if type(value) is not dict or sorted(value) != ["columns", "format"] or value["format"] != FORMAT:
        raise Invalid("not a problem set")
    columns = value["columns"]
    if type(columns) is not dict or sorted(columns) != sorted(name for name, _ in PROBLEM_SCHEMA):
        raise Invalid("a table of the wrong shape")
    ids = columns["id"]
    if type(ids) is not list or any(type(columns[name]) is not list or len(columns[name]) != len(ids) for name in columns):
        raise Invalid("a column of the wrong length")
    if ids.count(problem_id) != 1:
        if problem_id in ids:
            raise Invalid("a problem id used twice")
        return None
    at = ids.index(problem_id)
    (problem,) = _Rebuild().problems({name: [column[at]] for name, column in columns.items()})
    return problem


# -- writing -------------------------------------------------------------------------------------


def write(root: Path, problems: tuple[Problem, ...], stamps: Stamps, taken_at: float) -> bool:
    """Keep `problems` (validated, built from the files in `stamps`, stamped at `taken_at`);
    False when they were not kept (a file changed too recently, a value JSON cannot carry as it
    is, or the cache directory cannot be written)."""
    try:
        value = encode(problems)
        if decode(value) != problems:
            return False  # something the plain form does not carry exactly: parse every time
    except _BAD:
        return False
    if not jsoncache.put(value_name(root), value, stamps, CODE_FILES, taken_at):
        return False
    write_heads(root, problems, stamps, taken_at)
    return True


def write_heads(root: Path, problems: tuple[Problem, ...], stamps: Stamps, taken_at: float) -> bool:
    """Keep the heads of `problems` (the same rules as `write`); False when they were not kept."""
    try:
        heads = encode_heads(problems)
        if decode_heads(heads) != tuple(p.head for p in problems):
            return False
    except _BAD:
        return False
    return jsoncache.put(index_name(root), heads, stamps, CODE_FILES, taken_at)


def encode_heads(problems: tuple[Problem, ...]) -> dict[str, Any]:
    """The heads' columns: the fields `ProblemHead` keeps, in the set's plain form."""
    kinds = dict(PROBLEM_SCHEMA)
    return {"format": FORMAT, "heads": {name: [_plain(getattr(p, name), kinds[name]) for p in problems] for name in HEAD_FIELDS}}


def decode_heads(value: Any) -> tuple[ProblemHead, ...]:
    """The heads from their plain form, checked as the set's columns are (Invalid when off)."""
    if type(value) is not dict or sorted(value) != ["format", "heads"] or value["format"] != FORMAT:
        raise Invalid("not a problem index")
    columns = value["heads"]
    if type(columns) is not dict or sorted(columns) != sorted(HEAD_FIELDS):
        raise Invalid("an index of the wrong shape")
    size = len(columns["id"]) if type(columns["id"]) is list else -1
    if any(type(columns[name]) is not list or len(columns[name]) != size for name in HEAD_FIELDS):
        raise Invalid("a column of the wrong length")
    kinds = dict(PROBLEM_SCHEMA)
    rebuild = _Rebuild()
    cols = [rebuild.column(columns[name], kinds[name]) for name in HEAD_FIELDS]
    if not set(columns["kind"]) <= set(KINDS) or len(set(columns["id"])) != size:
        raise Invalid("a value outside the loader's vocabulary, or an id used twice")
    texts = "\n".join(rebuild.texts)
    if not printable_but(texts, "\t\n") and _CONTROL.search(texts):
        raise Invalid("a control character")
    return tuple(map(ProblemHead, *cols))


def encode(problems: tuple[Problem, ...]) -> dict[str, Any]:
    """The problems as columns: every id in one list, every title in another, ... (PROBLEM_SCHEMA)."""
    return {"format": FORMAT, "columns": {name: [_plain(getattr(p, name), kind) for p in problems] for name, kind in PROBLEM_SCHEMA}}


def _plain(value: Any, kind: str) -> Any:
    if kind == TEXTS:
        return list(value)
    if kind == "args":
        return dict(value)
    if kind == "params":
        return {name: [dict(o) if isinstance(o, dict) else o for o in options] for name, options in value.items()}
    if kind == "given":
        return [[_plain(getattr(g, name), k) for name, k in GIVEN_SCHEMA] for g in value]
    if kind == "by_hand":
        return dict(value) if isinstance(value, dict) else value
    if kind == "slips":
        return [list(s) for s in value]
    return value


# -- the plain form, checked, back into the model --------------------------------------------------

_NONE = type(None)
_STR = frozenset({str})
_SCALARS = frozenset({str, int, float})
_DICT, _LIST = frozenset({dict}), frozenset({list})
_ARGS = frozenset({str, int, float, bool})  # a calculator argument may be a flag's true or false
_GIVEN_SOURCES = frozenset(GIVEN_SOURCES)
_TYPES = {TEXT: _STR, OPT_TEXT: frozenset({str, _NONE}), TEXTS: frozenset({list}), FLOAT: frozenset({float}),
          OPT_FLOAT: frozenset({float, _NONE}), INT: frozenset({int}), "args": frozenset({dict}), "params": frozenset({dict}),
          "given": frozenset({list}), "by_hand": frozenset({str, dict, _NONE}), "slips": frozenset({list})}


class _Rebuild:
    """Turns the plain columns back into Problems, checking every value (Invalid at the first
    wrong one). The simple kinds are checked a column at a time, and every text is gathered and
    searched for control characters at once, so a warm load stays a few milliseconds."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def strings(self, values: Any) -> list[str]:
        """`values` (a list) when every one is text; its texts are searched later."""
        if type(values) is not list or not set(map(type, values)) <= _STR:
            raise Invalid("text expected")
        self.texts.extend(values)
        return values

    def mappings(self, values: list[Any], allowed: frozenset[type], empty: bool = True) -> list[dict[str, Any]]:
        """`values` when each is a mapping of text to values of the `allowed` types (floats finite;
        none empty unless `empty`), checked all at once; their texts are searched later."""
        if not set(map(type, values)) <= _DICT or not (empty or all(values)):
            raise Invalid("a mapping expected")
        keys = list(chain.from_iterable(values))
        if not set(map(type, keys)) <= _STR:
            raise Invalid("a mapping with a key that is not text")
        self.texts.extend(keys)
        self.scalars(list(chain.from_iterable(map(dict.values, values))), allowed)
        return values

    def scalars(self, values: list[Any], allowed: frozenset[type] = frozenset({str, int, float})) -> None:
        """Invalid unless every value is of the `allowed` types, and every float finite."""
        kinds = set(map(type, values))
        if not kinds <= allowed:
            raise Invalid("a value of the wrong type")
        if str in kinds:
            self.texts.extend(values if len(kinds) == 1 else [v for v in values if type(v) is str])
        if float in kinds and not all(map(math.isfinite, values if len(kinds) == 1 else [v for v in values if type(v) is float])):
            raise Invalid("a number that is not finite")

    def params(self, column: list[Any]) -> list[dict[str, tuple[Any, ...]]]:
        """Each problem's parameters, each with a non-empty list of values: scalars, or flat
        mappings of scalars (the loader's rule)."""
        lists = list(chain.from_iterable(map(dict.values, self.mappings(column, _LIST))))
        if not all(lists):
            raise Invalid("a parameter without values")
        options = list(chain.from_iterable(lists))
        self.scalars([o for o in options if type(o) is not dict])
        self.mappings([o for o in options if type(o) is dict], _SCALARS, empty=False)
        return [{name: tuple(values) for name, values in params.items()} for params in column]

    def column(self, values: list[Any], kind: str) -> list[Any]:
        """One field's column, checked, as the model holds it."""
        if not set(map(type, values)) <= _TYPES[kind]:
            raise Invalid("a value of the wrong type")
        if kind == TEXT:
            self.texts.extend(values)
        elif kind == OPT_TEXT:
            self.texts.extend(v for v in values if v is not None)
        elif kind == TEXTS:  # (each value a list: checked above)
            self.strings(list(chain.from_iterable(values)))
            return list(map(tuple, values))
        elif kind in (FLOAT, OPT_FLOAT):
            if not all(map(math.isfinite, [v for v in values if v is not None])):
                raise Invalid("a number that is not finite")
        elif kind == INT:
            if not all(v >= 0 for v in values):
                raise Invalid("a negative index")
        elif kind == "args":
            return self.mappings(values, _ARGS)
        elif kind == "params":
            return self.params(values)
        elif kind == "given":
            return self.given_column(values)
        elif kind == "by_hand":
            return [self.by_hand(h) for h in values]
        elif kind == "slips":
            return [tuple(self.slip(s) for s in slips) for slips in values]
        return values

    def by_hand(self, value: Any) -> Any:
        """One expression (text), or a choice problem's mapping of choice to expression."""
        if type(value) is dict:
            return self.mappings([value], _STR)[0]
        if type(value) is str:
            self.texts.append(value)
        return value

    def slip(self, row: Any) -> tuple[str, str]:
        if type(row) is not list or len(row) != 2:
            raise Invalid("a slip of the wrong shape")
        factor, says = self.strings(row)
        return factor, says

    def given_column(self, column: list[Any]) -> list[tuple[GivenSpec, ...]]:
        """Every problem's given items, checked all at once (the shape of each, its texts, its
        source), one by one as the loader built them."""
        rows = list(chain.from_iterable(column))
        if not all(type(row) is list and len(row) == len(GIVEN_SCHEMA) for row in rows):
            raise Invalid("a given item of the wrong shape")
        if not {row[0] for row in rows} <= _GIVEN_SOURCES:
            raise Invalid("an unknown given source")
        self.strings([row[i] for row in rows for i in (0, 1, 3, 4, 5, 6)])
        figures = [row[2] for row in rows]
        if not set(map(type, figures)) <= _LIST:
            raise Invalid("text expected")
        self.strings(list(chain.from_iterable(figures)))
        specs = iter([GivenSpec(r[0], r[1], tuple(r[2]), r[3], r[4], r[5], r[6]) for r in rows])
        return [tuple(next(specs) for _ in given) for given in column]

    def problems(self, columns: Any) -> tuple[Problem, ...]:
        from studytui.practice.answers import UNITS

        names = [name for name, _ in PROBLEM_SCHEMA]
        if type(columns) is not dict or sorted(columns) != sorted(names):
            raise Invalid("a table of the wrong shape")
        size = len(columns["id"]) if type(columns["id"]) is list else -1
        if any(type(columns[name]) is not list or len(columns[name]) != size for name in names):
            raise Invalid("a column of the wrong length")
        cols = {name: self.column(columns[name], kind) for name, kind in PROBLEM_SCHEMA}
        if (not set(cols["kind"]) <= set(KINDS) or not set(cols["pick"]) <= {*PICKS, None} or not set(cols["unit"]) <= set(UNITS)
                or not all(0 < t <= 0.5 for t in cols["tolerance"]) or not all(m is None or 0 <= m < 1 for m in cols["margin"])):
            raise Invalid("a value outside the loader's vocabulary or range")
        if len(set(cols["id"])) != size:
            raise Invalid("a problem id used twice")
        texts = "\n".join(self.texts)  # the loader's rule: no control character but tab and line feed
        if not printable_but(texts, "\t\n") and _CONTROL.search(texts):
            raise Invalid("a control character")
        return tuple(map(Problem, *(cols[name] for name in names)))


def decode(value: Any) -> tuple[Problem, ...]:
    """The problems from their plain form; Invalid (or a TypeError, ...) when anything is off."""
    if type(value) is not dict or sorted(value) != ["columns", "format"] or value["format"] != FORMAT:
        raise Invalid("not a problem set")
    return _Rebuild().problems(value["columns"])


def stamps_of(root: Path) -> Stamps:
    return jsoncache.stamps_of(source_files(root))
