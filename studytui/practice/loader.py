"""Read `content/problems/*.yaml` into Problems. Every mistake is reported as FILE:LINE: message.

Loading checks the structure (fields, kinds, units, hint count, unique ids); `practice.check`
adds what needs the guide and the calculators (entry ids, running every problem over seeds).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeGuard

from studytui.core.errors import ContentError
from studytui.practice.answers import UNITS
from studytui.practice.model import (
    DEFAULT_MARGIN,
    DEFAULT_TOLERANCE,
    KINDS,
    MARGIN_PICKS,
    MAX_HINTS,
    PICKS,
    TARGET_PICKS,
    GivenSpec,
    Problem,
    ProblemHead,
)

if TYPE_CHECKING:  # PyYAML and the YAML reader load only when the problems are parsed (not from the cache)
    from studytui.core.jsoncache import Stamps
    from studytui.core.yamlio import YamlFile, YamlPath

PROBLEMS_DIR = "problems"
FILE_KEYS = {"section", "problems"}
PROBLEM_KEYS = {
    "id", "title", "entries", "kind", "params", "question", "calc", "unit", "tolerance", "choices", "hints", "notice",
    "skill", "given", "by_hand", "slips", "margin",
}
CALC_KEYS = {"name", "args", "answer", "pick", "target"}
GIVEN_SOURCES = ("gpu", "model", "cc")
GIVEN_KEYS = {"gpu", "model", "cc", "figures", "as", "name", "text", "value"}


class ProblemSet:
    """The problems of a content folder, with the errors found and the parsed files (for their
    lines; none when the set came from the cache, which holds only sets without an error). A
    plain class: a dataclass's generated methods cost a millisecond at import (model.py).

    From the cache, a set starts with its heads alone (`ProblemHead`: what the lists need) and
    reads the whole problems when first asked for them (`problems`, `get`, `for_section`, ...):
    `studytui practice`, `practice due` and `progress` never decode a question (issue 27)."""

    __slots__ = ("_problems", "_heads", "_load", "_load_one", "files", "errors")

    def __init__(self, problems: tuple[Problem, ...] = (), files: dict[str, YamlFile] | None = None,
                 errors: list[str] | None = None, *, heads: tuple[ProblemHead, ...] | None = None,
                 load: Callable[[], tuple[Problem, ...]] | None = None,
                 load_one: Callable[[str], Problem | None] | None = None) -> None:
        self._problems: tuple[Problem, ...] | None = problems if load is None else None
        self._heads = heads
        self._load = load
        self._load_one = load_one  # one problem, while the whole set is not read
        self.files: dict[str, YamlFile] = {} if files is None else files
        self.errors: list[str] = [] if errors is None else errors

    @property
    def problems(self) -> tuple[Problem, ...]:
        if self._problems is None:
            assert self._load is not None
            # The heads again from the problems read: the same when both were kept from the same
            # files; the files' own when they changed since (never a head of one version and a
            # problem of another).
            self._problems, self._load, self._load_one, self._heads = self._load(), None, None, None
        return self._problems

    @problems.setter
    def problems(self, value: tuple[Problem, ...]) -> None:
        self._problems, self._heads, self._load, self._load_one = value, None, None, None

    @property
    def heads(self) -> tuple[ProblemHead, ...]:
        if self._heads is None:
            self._heads = tuple(p.head for p in self.problems)
        return self._heads

    def __repr__(self) -> str:
        return f"ProblemSet({len(self.heads)} problems, {len(self.errors)} errors)"

    def get(self, problem_id: str) -> Problem | None:
        if self._problems is None and self._load_one is not None:
            return self._load_one(problem_id)
        for p in self.problems:
            if p.id == problem_id:
                return p
        return None

    def head(self, problem_id: str) -> ProblemHead | None:
        for h in self.heads:
            if h.id == problem_id:
                return h
        return None

    def for_section(self, section_id: str) -> list[Problem]:
        return [p for p in self.problems if p.section_id == section_id]

    def heads_for_section(self, section_id: str) -> list[ProblemHead]:
        return [h for h in self.heads if h.section_id == section_id]

    def for_entry(self, entry_id: str) -> list[Problem]:
        return [p for p in self.problems if entry_id in p.entries]


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _text(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


def _controls(raw: Any, path: YamlPath = ()) -> list[YamlPath]:
    """Paths of strings holding control characters (an escape sequence must never reach a terminal)."""
    if isinstance(raw, str):
        return [path] if _CONTROL.search(raw) else []
    if isinstance(raw, dict):
        return [p for k, v in raw.items() for p in _controls(v, path + (k,))]
    if isinstance(raw, list):
        return [p for i, v in enumerate(raw) for p in _controls(v, path + (i,))]
    return []


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


class _Reader:
    def __init__(self, yf: YamlFile, errors: list[str]) -> None:
        self.yf, self.errors = yf, errors

    def add(self, path: YamlPath, message: str) -> None:
        self.errors.append(f"{self.yf.where(path)}: {message}")

    def problem(self, index: int, raw: Any, section_id: str) -> Problem | None:
        where: YamlPath = ("problems", index)
        if not isinstance(raw, dict):
            self.add(where, "a problem must be a mapping")
            return None
        start = len(self.errors)
        for bad in _controls(raw):
            self.add(where + bad, "control character in text (escape sequences are not allowed in content)")
        for key in raw:
            if key not in PROBLEM_KEYS:
                self.add(where + (key,), f"unknown field '{key}' (fields: {', '.join(sorted(PROBLEM_KEYS))})")
        # YAML values, checked as they are read: a Problem is built only when none was reported.
        pid: Any = raw.get("id")
        if not (_text(pid) and pid == pid.strip().lower() and " " not in pid):
            self.add(where + ("id",), "id must be a lower-case slug such as 'decode-floor'")
        for key in ("title", "question"):
            if not _text(raw.get(key)):
                self.add(where + (key,), f"'{key}' is required (non-empty text)")
        entries = raw.get("entries")
        if not (isinstance(entries, list) and entries and all(_text(e) for e in entries)):
            self.add(where + ("entries",), "'entries' must list the entry ids this problem practises")
            entries = []
        kind = raw.get("kind", "number")
        if kind not in KINDS:
            self.add(where + ("kind",), f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        params = self.params(where, raw.get("params", {}))
        calc = raw.get("calc")
        name: Any
        args: Any
        answer: Any
        pick: Any
        target: Any = ""
        name = args = answer = pick = None
        if not isinstance(calc, dict):
            self.add(where + ("calc",), "'calc' must be a mapping with name, args and answer")
        else:
            for key in calc:
                if key not in CALC_KEYS:
                    self.add(where + ("calc", key), f"unknown field '{key}' (fields: {', '.join(sorted(CALC_KEYS))})")
            name, args, answer, pick = calc.get("name"), calc.get("args", {}), calc.get("answer"), calc.get("pick")
            target = calc.get("target", "")
            if pick in TARGET_PICKS and not (_text(target) or _scalar(target)):
                self.add(where + ("calc", "pick"), f"'pick: {pick}' needs 'target' (the threshold, units allowed)")
            if target not in ("", None) and pick not in TARGET_PICKS:
                self.add(where + ("calc", "target"), f"'target' is for 'pick: {' or '.join(TARGET_PICKS)}' only")
            if not _text(name):
                self.add(where + ("calc",), "'calc.name' must name a calculator")
            if not isinstance(args, dict) or not all(isinstance(k, str) and (_scalar(v) or isinstance(v, bool)) for k, v in args.items()):
                self.add(where + ("calc", "args"), "'calc.args' must map field names to values")
                args = {}
            if not _text(answer):
                self.add(where + ("calc",), "'calc.answer' must name the result key that answers the question")
            if pick is not None and pick not in PICKS:
                self.add(where + ("calc", "pick"), f"'pick' must be one of {', '.join(PICKS)}")
        unit = raw.get("unit", "")
        choices = raw.get("choices", [])
        if kind == "number":
            if not isinstance(unit, str) or unit not in UNITS:
                self.add(where + ("unit",), f"unknown unit {unit!r} (known: {', '.join(repr(u) for u in UNITS)})")
            if choices:
                self.add(where + ("choices",), "a number problem has no choices")
            if pick:
                self.add(where + ("calc", "pick"), "'pick' is for choice problems")
        elif kind == "choice":
            if not (isinstance(choices, list) and len(choices) >= 2 and all(_scalar(c) for c in choices)):
                self.add(where + ("choices",), "a choice problem lists at least two choices")
                choices = []
            choices = [str(c) for c in choices]
            if len(set(c.lower() for c in choices)) != len(choices):
                self.add(where + ("choices",), "choices must differ")
        tolerance = raw.get("tolerance", DEFAULT_TOLERANCE)
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 < tolerance <= 0.5:
            self.add(where + ("tolerance",), "tolerance is a relative error between 0 and 0.5 (default 0.05)")
            tolerance = DEFAULT_TOLERANCE
        margin = raw.get("margin")
        if margin is not None and pick not in MARGIN_PICKS:
            self.add(where + ("margin",), f"'margin' is for 'pick: {' or '.join(MARGIN_PICKS)}' problems only")
        elif margin is not None and (isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < 1):
            self.add(where + ("margin",), f"margin is the least share by which the best choice beats the next, from 0 to 1 "
                                          f"(default {DEFAULT_MARGIN:g})")
            margin = None
        if margin is None and pick in MARGIN_PICKS:
            margin = DEFAULT_MARGIN
        hints = raw.get("hints", [])
        if not (isinstance(hints, list) and all(_text(h) for h in hints)):
            self.add(where + ("hints",), "'hints' must be a list of sentences")
            hints = []
        elif len(hints) > MAX_HINTS:
            self.add(where + ("hints",), f"at most {MAX_HINTS} hints")
        notice = raw.get("notice", "")
        if not _text(notice):
            self.add(where + ("notice",), "'notice' is required: one or two sentences on what to notice")
        skill = raw.get("skill")
        if not (_text(skill) and skill == skill.strip().lower() and " " not in skill):
            self.add(where + ("skill",), "'skill' is required: a lower-case slug naming the skill practised, e.g. 'ridge-point'")
        given = self.given(where, raw.get("given", []))
        by_hand = raw.get("by_hand")
        if by_hand is None:
            self.add(where + ("by_hand",), "'by_hand' is required: the worked solution's arithmetic as one expression")
        elif kind == "choice":
            if not (isinstance(by_hand, dict) and by_hand and all(isinstance(k, str) and _text(v) for k, v in by_hand.items())):
                self.add(where + ("by_hand",), "a choice problem's 'by_hand' maps each choice to an expression")
            elif isinstance(choices, list) and set(by_hand) - {"let"} != {str(c) for c in choices}:
                self.add(where + ("by_hand",), f"'by_hand' must name every choice exactly (and may add 'let', steps shared by all): "
                                               f"{', '.join(map(str, choices))}")
        elif not (_text(by_hand) or _scalar(by_hand)):
            self.add(where + ("by_hand",), "'by_hand' is one expression (numbers, names, + - * / ** and min/max/ceil/floor/sqrt/log2)")
        slips = raw.get("slips", [])
        good_slips = isinstance(slips, list) and all(
            isinstance(s, dict) and set(s) == {"factor", "says"} and (_text(s["factor"]) or _scalar(s["factor"])) and _text(s["says"])
            for s in slips
        )
        if not good_slips:
            self.add(where + ("slips",), "'slips' lists {factor: ..., says: ...}: a factor a common slip is off by, and what it is")
            slips = []
        if len(self.errors) > start:
            return None
        return Problem(
            id=pid, section_id=section_id, title=raw["title"].strip(), entries=tuple(entries), kind=kind,
            question=" ".join(raw["question"].split()), calc_name=name, calc_args=dict(args), answer_key=answer,
            params=params, pick=pick, unit=unit if kind == "number" else "", tolerance=float(tolerance),
            choices=tuple(choices), hints=tuple(" ".join(h.split()) for h in hints), notice=" ".join(notice.split()),
            skill=str(skill), given=given,
            by_hand={str(k): " ".join(str(v).split()) for k, v in by_hand.items()} if isinstance(by_hand, dict)
            else " ".join(str(by_hand).split()),
            target=str(target or ""), margin=None if margin is None else float(margin),
            slips=tuple((str(s["factor"]), " ".join(str(s["says"]).split())) for s in slips),
            source_file=self.yf.display, index=index,  # the line is found only when a message needs it
        )

    def given(self, where: YamlPath, raw: Any) -> tuple[GivenSpec, ...]:
        from studytui.practice.given import CC_FIGURES, GPU_FIGURES, MODEL_FIGURES

        if raw is None:
            return ()
        if not isinstance(raw, list):
            self.add(where + ("given",), "'given' lists the figures shown under the question")
            return ()
        out: list[GivenSpec] = []
        for i, item in enumerate(raw):
            at = where + ("given", i)
            if not isinstance(item, dict):
                self.add(at, "a given item is a mapping: {gpu|model|cc: ..., figures: [...]} or {name, text, value}")
                continue
            unknown = [k for k in item if k not in GIVEN_KEYS]
            if unknown:
                self.add(at + (unknown[0],), f"unknown field '{unknown[0]}' (fields: {', '.join(sorted(GIVEN_KEYS))})")
                continue
            sources = [k for k in GIVEN_SOURCES if k in item]
            if not sources:
                if not (_text(item.get("name")) and str(item["name"]).isidentifier() and _text(item.get("text"))
                        and (_text(item.get("value")) or _scalar(item.get("value")))):
                    self.add(at, "a stated value needs 'name' (an identifier), 'text' (the line shown) and 'value'")
                    continue
                out.append(GivenSpec("value", name=item["name"], text=" ".join(item["text"].split()), value=str(item["value"])))
                continue
            if len(sources) > 1 or "name" in item or "text" in item or "value" in item:
                self.add(at, "a given item names one of gpu, model or cc, with its figures")
                continue
            source = sources[0]
            figures = item.get("figures")
            known: tuple[str, ...] = {"gpu": GPU_FIGURES, "model": MODEL_FIGURES, "cc": tuple(CC_FIGURES)}[source]
            if not (isinstance(figures, list) and figures and all(isinstance(f, str) for f in figures)):
                self.add(at + ("figures",), f"'figures' lists what to show (known: {', '.join(known)})")
                continue
            bad = [f for f in figures if f not in known and "{" not in f and not (source == "gpu" and f.startswith("peak_"))]
            if bad:
                self.add(at + ("figures",), f"unknown {source} figure '{bad[0]}' (known: {', '.join(known)})")
                continue
            prefix = item.get("as", "")
            if prefix and not (isinstance(prefix, str) and prefix.isidentifier()):
                self.add(at + ("as",), "'as' is a short identifier the figures' names start with")
                continue
            ref = item[source]
            if not (_text(ref) or _scalar(ref)):
                self.add(at + (source,), f"'{source}' names the {source} (a template such as '{{gpu.id}}')")
                continue
            out.append(GivenSpec(source, ref=str(ref), figures=tuple(figures), prefix=prefix))
        return tuple(out)

    def params(self, where: YamlPath, raw: Any) -> dict[str, tuple[Any, ...]]:
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            self.add(where + ("params",), "'params' maps each parameter to the list of values a seed picks from")
            return {}
        out: dict[str, tuple[Any, ...]] = {}
        for name, options in raw.items():
            ok_name = isinstance(name, str) and name.isidentifier() and name == name.lower() and name != "choice"
            if not ok_name:
                self.add(where + ("params", str(name)), f"parameter name {name!r} must be lower_case (and not 'choice')")
                continue
            good = isinstance(options, list) and options and all(
                _scalar(o) or (isinstance(o, dict) and o and all(isinstance(k, str) and _scalar(v) for k, v in o.items()))
                for o in options
            )
            if not good:
                self.add(where + ("params", name), f"parameter '{name}' needs a non-empty list of values (scalars or flat mappings)")
                continue
            out[name] = tuple(options)
        return out


def parse_problems(content_dir: str | os.PathLike[str] | Path) -> ProblemSet:
    """Every problem file under `content_dir/problems`; never raises for content problems."""
    from studytui.core.yamlio import YamlFile

    root = Path(content_dir)
    folder = root / PROBLEMS_DIR
    result = ProblemSet()
    if not folder.is_dir():
        return result
    problems: list[Problem] = []
    seen: dict[str, Problem] = {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            yf = YamlFile(path, _display(path, root))
        except ContentError as exc:
            result.errors.extend(exc.problems)
            continue
        result.files[yf.display] = yf
        reader = _Reader(yf, result.errors)
        data = yf.data
        if not isinstance(data, dict):
            reader.add((), "a problem file is a mapping with 'section' and 'problems'")
            continue
        for key in data:
            if key not in FILE_KEYS:
                reader.add((key,), f"unknown field '{key}' (fields: section, problems)")
        section_id = data.get("section")
        if not _text(section_id):
            reader.add(("section",), "'section' must name the guide section these problems belong to")
            continue
        items = data.get("problems")
        if not isinstance(items, list):
            reader.add(("problems",), "'problems' must be a list")
            continue
        for i, raw in enumerate(items):
            problem = reader.problem(i, raw, section_id)
            if problem is None:
                continue
            if problem.id in seen:
                first = seen[problem.id]
                at = f"{first.source_file}:{result.files[first.source_file].line_of(('problems', first.index, 'id'))}"
                reader.add(("problems", i, "id"), f"problem id '{problem.id}' is already used at {at}")
                continue
            seen[problem.id] = problem
            problems.append(problem)
    result.problems = tuple(problems)
    return result


# Problem sets this process loaded, per resolved content folder, with the stamps they were built
# from (the app asks again for every view): used while those files are unchanged.
_LOADED: dict[str, tuple[Stamps, ProblemSet]] = {}


def load_problems(content_dir: str | os.PathLike[str] | None = None) -> ProblemSet:
    """The validated problems: kept in this process and in the user cache (practice/cache.py)
    while no problem file changed, parsed from the YAML otherwise. ContentError on any problem."""
    from studytui.core import jsoncache
    from studytui.core.paths import content_dir as resolve
    from studytui.practice import cache

    root = resolve(content_dir).resolve()
    kept = _LOADED.get(str(root))
    if kept is not None and jsoncache.unchanged(kept[0]):
        return kept[1]
    heads = cache.read_heads(root)
    if heads is not None:  # the whole set is read when something asks for it
        index, stamps = heads
        result = ProblemSet(heads=index, load=lambda: _whole(root, stamps, index))
        result._load_one = lambda problem_id: _one(result, root, stamps, problem_id)
        _LOADED[str(root)] = (stamps, result)
        return result
    found = cache.read(root)
    if found is not None:
        problems, stamps = found
        result = ProblemSet(problems=problems)
        cache.write_heads(root, problems, stamps, jsoncache.now())  # (kept by a run before the heads were)
    else:
        taken_at = jsoncache.now()  # before the files are stamped and read
        stamps = cache.stamps_of(root)
        result = parse_problems(root)
        if result.errors:
            raise ContentError(result.errors)
        cache.write(root, result.problems, stamps, taken_at)
        if jsoncache.racy(stamps, taken_at):
            return result  # a file changed just now: a second change could keep its stamp, so keep nothing
    _LOADED[str(root)] = (stamps, result)
    return result


def _one(problems: ProblemSet, root: Path, stamps: Stamps, problem_id: str) -> Problem | None:
    """One problem of a set that started from its heads: its row of the kept set when that was
    built from the same files and the problem agrees with its head (or, like the heads, the set
    has no such id); else the whole set, read as `problems` reads it."""
    from studytui.practice import cache

    found = cache.read_one(root, problem_id)
    if found is not None and found[1] == stamps:
        problem, head = found[0], problems.head(problem_id)
        if (problem.head if problem is not None else None) == head:
            return problem
    problems._load_one = None
    return problems.get(problem_id)


def _whole(root: Path, stamps: Stamps, heads: tuple[ProblemHead, ...]) -> tuple[Problem, ...]:
    """The whole problems of a set that started from its heads: the kept set when it was built
    from the same files (the same stamps) and agrees with the heads, else the YAML parsed again;
    ContentError if that finds an error (the files changed since the heads were kept)."""
    from studytui.core import jsoncache
    from studytui.practice import cache

    found = cache.read(root)
    if found is not None and found[1] == stamps and tuple(p.head for p in found[0]) == heads:
        return found[0]
    taken_at = jsoncache.now()
    fresh = cache.stamps_of(root)
    parsed = parse_problems(root)
    if parsed.errors:
        raise ContentError(parsed.errors)
    cache.write(root, parsed.problems, fresh, taken_at)
    return parsed.problems
