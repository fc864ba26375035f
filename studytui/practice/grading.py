"""Grade an answer by running the calculator for exactly that variant, at the moment of grading.

Nothing about the answer is stored in content: a problem names its calculator, the arguments
(templated from its parameters) and the result key. Choice problems either read a categorical
result (bound, fits, physically possible) or compare runs (`pick: min` - which GPU is faster).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from studytui.core.errors import UsageError
from studytui.core.records import Record
from studytui.practice.answers import format_value, parse_answer, percent_text, rounds_to, tolerance_text
from studytui.practice.model import Variant, render

if TYPE_CHECKING:
    from studytui.calc.result import Result


class ProblemBroken(UsageError):
    """The calculator refused this variant or gave no usable answer (a content bug `check` catches)."""


class Expected(Record):
    """The right answer for one variant: a number (SI) or a choice label, and the worked solution."""

    __slots__ = ("value", "choice", "explain", "per_choice")

    def __init__(self, value: float | None = None, choice: str | None = None, explain: list[str] | None = None,
                 per_choice: dict[str, float] | None = None) -> None:
        self.value = value
        self.choice = choice
        self.explain: list[str] = [] if explain is None else explain
        self.per_choice: dict[str, float] = {} if per_choice is None else per_choice  # picking problems: each run's answer

    def display(self, unit: str) -> str:
        return self.choice if self.choice is not None else format_value(self.value or 0.0, unit)


class Grade(Record):
    """One answer graded: right or not, the expected answer, the next hint and the solution."""

    __slots__ = ("problem_id", "seed", "answer", "correct", "expected", "given", "relative_error", "hint", "solution", "unit",
                 "slips", "counted", "after_miss")

    def __init__(self, problem_id: str, seed: int, answer: str, correct: bool, expected: Expected, given: float | None = None,
                 relative_error: float | None = None, hint: str | None = None, solution: list[str] | None = None, unit: str = "",
                 slips: tuple[tuple[float, str], ...] = (), counted: bool = True, after_miss: bool = False) -> None:
        self.problem_id = problem_id
        self.seed = seed
        self.answer = answer
        self.correct = correct
        self.expected = expected
        self.given = given  # numeric answers, SI
        self.relative_error = relative_error
        self.hint = hint  # the next hint after a miss, in order
        self.solution: list[str] = [] if solution is None else solution
        self.unit = unit
        self.slips = slips  # the problem's own slips for this variant: (slipped / right, what it means)
        # False: this variant was settled first (answered right, or its solution shown): graded, not recorded
        self.counted = counted
        # right, but this variant was missed before: the review records the lapse, mastery does not count it
        self.after_miss = after_miss

    @property
    def mastered(self) -> bool:
        """Whether this answer masters the problem: right at the first try on its variant, recorded."""
        return self.correct and self.counted and not self.after_miss


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        # A result that names what binds (occupancy's limited_by) lists every tie; one is an answer.
        if len(value) != 1:
            raise ValueError(f"{list(value)} names {len(value)} answers")
        return _label(value[0])
    return str(value).strip().lower()


def _answer_value(variant: Variant, result: Result) -> Any:
    """The answer: a key of the result, or an expression over its keys (in SI units)."""
    p = variant.problem
    if p.answer_key in result.values:
        return result.values[p.answer_key]
    from studytui.practice.handcalc import HandError, evaluate

    env = {k: v for k, v in result.values.items() if isinstance(v, (int, float, str))}  # bools too: 'x if fits else 0'
    try:
        return evaluate(render(p.answer_key, variant.values), env)
    except HandError as exc:
        raise ProblemBroken(f"problem '{p.id}': the {p.calc_name} calculator has no result '{p.answer_key}' ({exc})") from None


def _run(variant: Variant, args: dict[str, str]) -> Result:
    from studytui.calc.forms import run

    p = variant.problem
    try:
        return run(p.calc_name, args, None)
    except UsageError as exc:
        raise ProblemBroken(f"problem '{p.id}' (seed {variant.seed}): the {p.calc_name} calculator refused it: {exc}") from None


def _number(variant: Variant, result: Result) -> float:
    p = variant.problem
    value = _answer_value(variant, result)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProblemBroken(f"problem '{p.id}' (seed {variant.seed}): result '{p.answer_key}' is {value!r}, not a finite number")
    return float(value)


def expected(variant: Variant) -> Expected:
    """Run the calculator for this variant and read the answer."""
    p = variant.problem
    if p.pick:
        runs: dict[str, float] = {}
        explains: dict[str, list[str]] = {}
        for choice in variant.choices:
            result = _run(variant, variant.args(choice))
            runs[choice] = _number(variant, result)
            explains[choice] = list(result.explain)
        explain = []
        if p.pick in ("min", "max"):
            ordered = sorted(runs.items(), key=lambda kv: kv[1], reverse=p.pick == "max")
            best, runner_up = ordered[0], ordered[1]
            if math.isclose(best[1], runner_up[1], rel_tol=1e-6):
                raise ProblemBroken(f"problem '{p.id}' (seed {variant.seed}): '{best[0]}' and '{runner_up[0]}' tie; no single answer")
            winner = best[0]
        else:
            winner = _first_meeting(variant, runs)
            explain.append(f"the first choice, in the order {', '.join(variant.listed_choices)}, with {p.answer_key} "
                           f"{'<=' if p.pick == 'first_at_most' else '>='} {render(p.target, variant.values)}: {winner}")
        for choice in variant.listed_choices:
            explain.append(f"{choice}: {p.answer_key} = {runs[choice]:.4g}")
            explain.extend("  " + line for line in explains[choice])
        return Expected(choice=winner, explain=explain, per_choice=runs)
    result = _run(variant, variant.args())
    if p.kind == "choice":
        try:
            label = _label(_answer_value(variant, result))
        except ValueError as exc:
            raise ProblemBroken(f"problem '{p.id}' (seed {variant.seed}): {exc}; a choice problem needs one") from None
        matches = [c for c in variant.choices if c.lower() == label]
        if not matches:
            raise ProblemBroken(
                f"problem '{p.id}' (seed {variant.seed}): the answer {label!r} is not among the choices {list(variant.choices)}"
            )
        explain = list(result.explain)
        if p.answer_key not in result.values:
            explain.append(f"answer = {render(p.answer_key, variant.values)} -> {matches[0]}")
        return Expected(choice=matches[0], explain=explain)
    explain = list(result.explain)
    if p.answer_key not in result.values:
        explain.append(f"answer = {render(p.answer_key, variant.values)} = {_number(variant, result):.4g}")
    return Expected(value=_number(variant, result), explain=explain)


def _first_meeting(variant: Variant, runs: dict[str, float]) -> str:
    from studytui.practice.handcalc import HandError, evaluate

    p = variant.problem
    try:
        target = evaluate(render(p.target, variant.values), {})
    except HandError as exc:
        raise ProblemBroken(f"problem '{p.id}': target: {exc}") from None
    if isinstance(target, (bool, str)):
        raise ProblemBroken(f"problem '{p.id}': target {p.target!r} is not a number")
    for choice in variant.listed_choices:
        value = runs[choice]
        # "At most" and "at least" include the target itself (occupancy steps land on it exactly).
        on_target = math.isclose(value, target, rel_tol=1e-9)
        if on_target or ((value <= target) if p.pick == "first_at_most" else (value >= target)):
            return choice
    raise ProblemBroken(f"problem '{p.id}' (seed {variant.seed}): no choice meets the target {p.target!r}")


def _norm(text: str) -> str:
    """A choice as typed, compared loosely: case, hyphens, underscores and spaces do not matter,
    and '-bound' / ' bound' is dropped ('Memory-bound' is 'memory')."""
    words = re.sub(r"[\s_\-]+", " ", text.strip().lower()).strip()
    return re.sub(r"\s*bound$", "", words).strip() or words


def parse_choice(variant: Variant, answer: str) -> str:
    """A choice by its label (any case, '-bound' allowed), its number as shown (1-based), or a
    prefix of at least three letters that only one choice starts with."""
    text = str(answer).strip()
    choices = variant.choices
    if len(text) > 60:
        raise UsageError(f"answer: {len(text)} characters is not one of the choices")
    for c in choices:
        if c.lower() == text.lower():
            return c
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    typed = _norm(text)
    loose = [c for c in choices if _norm(c) == typed]
    if len(loose) == 1:
        return loose[0]
    if len(typed) >= 3:
        starts = [c for c in choices if _norm(c).startswith(typed)]
        if len(starts) == 1:
            return starts[0]
    listed = ", ".join(f"{i}) {c}" for i, c in enumerate(choices, 1))
    raise UsageError(f"answer: {text!r} is not one of the choices: {listed}")


def solution(variant: Variant, exp: Expected) -> list[str]:
    """The worked solution: the problem's hand formula with this variant's numbers (the given
    figures it uses, then each step), then what to notice. The calculator's own steps are left out:
    they run on placeholder inputs where a problem needs only one of its results (a roofline with 1
    FLOP to read a memory time). Where the calculator's answer, as shown, differs from the hand
    formula's, a line says by how much."""
    from studytui.practice.byhand import worked
    from studytui.practice.given import GivenError
    from studytui.practice.handcalc import HandError

    p = variant.problem
    try:
        lines, hand = worked(variant)
    except (HandError, GivenError):  # a broken formula (`check` reports it): the calculator's steps instead
        lines, hand = list(exp.explain), None
    if not lines:
        lines = list(exp.explain)
    if p.kind == "number" and isinstance(hand, float) and exp.value is not None and exp.value:
        if format_value(hand, p.unit) != format_value(exp.value, p.unit):
            off = abs(hand - exp.value) / abs(exp.value)
            places = next((d for d in range(1, 7) if round(off * 100, d) > 0), 6)
            lines.append(f"The calculator gives {exp.display(p.unit)}, {percent_text(off, places)} from the hand formula "
                         f"(within the {percent_text(p.tolerance)} that counts).")
    return [*lines, "", variant.notice]


# A miss's size is printed with up to this many decimals of a percent; an error that equals the
# tolerance at that precision counts as within it, so a refusal never reads "1% ... within 1%".
_SHOWN_DECIMALS = 4


def within(relative_error: float, tolerance: float) -> bool:
    """Right by the relative tolerance, compared as printed (to 4 decimals of a percent)."""
    return relative_error <= tolerance or round(relative_error * 100, _SHOWN_DECIMALS) <= round(tolerance * 100, _SHOWN_DECIMALS)


def grade(variant: Variant, answer: str, misses_before: int = 0, reveal: bool = False) -> Grade:
    """Grade one answer. `misses_before`: earlier misses on this problem, to pick the next hint.

    Bad answers (not a number, wrong unit, not a choice) raise UsageError before anything runs.
    """
    p = variant.problem
    given: float | None = None
    picked: str | None = None
    if p.kind == "choice":
        picked = parse_choice(variant, answer)
    else:
        given = parse_answer(answer, p.unit)
    exp = expected(variant)
    rel: float | None = None
    if p.kind == "choice":
        correct = picked == exp.choice
    else:
        assert given is not None and exp.value is not None
        rel = abs(given - exp.value) / abs(exp.value) if exp.value else (0.0 if given == 0 else math.inf)
        correct = within(rel, p.tolerance) or rounds_to(str(answer), given, exp.value, p.unit)
    g = Grade(p.id, variant.seed, str(answer), correct, exp, given=given, relative_error=rel if rel is None or math.isfinite(rel) else None,
              unit=p.unit, slips=variant_slips(variant) if not correct else ())
    hints = variant.hints
    if not correct and hints:
        g.hint = hints[min(misses_before, len(hints) - 1)]
    if correct or reveal:
        g.solution = solution(variant, exp)
    return g


# Factors a slip is off by, whatever the problem: a unit a power of 1000 or 1024 away, GB read
# as GiB (or back), a factor of 2. These apply both ways (a unit slip can make an answer too high
# or too low); a problem's own slips say their direction (practice.grading.slip). `{unit}` is the
# question's unit. The factor of 2 names no cause: each of them (2 FLOPs per multiply-add, a
# link's one-way or bidirectional rate, the causal half) doubles or halves an answer depending on
# where it enters, so a problem names its own with the direction it goes.
_UNIT = "a unit slip: the answer is in {unit}, and a bare number is read in {unit}"
_GENERAL_SLIPS: tuple[tuple[float, str], ...] = (
    (1e3, _UNIT), (1e6, _UNIT), (1e9, _UNIT), (1e12, _UNIT),
    (1024.0, _UNIT + " (KiB, MiB and GiB are 1024 apart)"),
    (1024.0**2, _UNIT + " (KiB, MiB and GiB are 1024 apart)"),
    (1024.0**3, _UNIT + " (B and GiB are 2^30 apart)"),
    (2.0**30 / 1e9, "exactly the gap between GiB and GB (1 GiB = 2^30 B = 1.074 x 10^9 B): check which one the question uses"),
    (2.0**20 / 1e6, "exactly the gap between MiB and MB (1 MiB = 2^20 B = 1.049 x 10^6 B): check which one the question uses"),
    (2.0**40 / 1e12, "exactly the gap between TiB and TB (1 TiB = 2^40 B = 1.1 x 10^12 B): check which one the question uses"),
    (2.0, "a factor of 2 somewhere in the working: check each step that doubles or halves, such as the FLOPs "
          "per multiply-add (2), a link's one-way or bidirectional rate, or the causal half of the scores"),
)
SLIP_MATCH = 0.015  # a miss is a slip when its ratio is within 1.5% of the slip's factor ...


def _matches(q: float, factor: float, tolerance: float) -> bool:
    """... or, for a factor near 1, within a twentieth of its distance from 1 (a 5% miss is not
    'exactly the gap between MiB and MB', 4.9%); and only a slip whose factor the tolerance would
    refuse is named (with 5% counting, the MiB/MB gap never is)."""
    if within(abs(factor - 1), tolerance):  # an answer off by exactly this factor counts as right
        return False
    return abs(math.log(q / factor)) <= min(math.log1p(SLIP_MATCH), 0.05 * abs(math.log(factor)))


def _found_slip(result: Grade, problem_slips: tuple[tuple[float, str], ...] = (), unit: str = "",
                tolerance: float = 0.0) -> tuple[float, str] | None:
    """(given / right, what it means) of the slip a miss looks like, if one explains it."""
    if result.given is None or result.expected.value is None or result.given <= 0 or result.expected.value <= 0:
        return None
    q = result.given / result.expected.value
    for factor, says in problem_slips:  # directional: the factor is the slipped answer over the right one
        if factor > 0 and abs(factor - 1) > SLIP_MATCH and _matches(q, factor, tolerance):
            return factor, says.replace("{unit}", unit or "plain numbers")
    general = list(_GENERAL_SLIPS)
    if unit == "%":
        general.insert(0, (100.0, "a factor of 100: the answer is a percentage (62%, not 0.62)"))
    for factor, says in general:  # either way
        if _matches(q, factor if q > 1 else 1 / factor, tolerance):
            return (factor if q > 1 else 1 / factor), says.replace("{unit}", unit or "plain numbers")
    return None


def slip(result: Grade, problem_slips: tuple[tuple[float, str], ...] = (), unit: str = "", tolerance: float = 0.0) -> str | None:
    """The slip a miss looks like, if one explains it: the problem's own first (each only in the
    direction it goes: the 2:4 sparse peak makes a ridge point too high, never too low), then the
    general ones (either way)."""
    found = _found_slip(result, problem_slips, unit, tolerance)
    return found[1] if found else None


def slip_env(variant: Variant) -> dict[str, Any]:
    """The names a slip's factor may use: the given figures, and the sparse and vector-pipe
    figures next to a given peak (practice.given.slip_figures)."""
    from studytui.practice.given import GivenError, env, facts, slip_figures

    if not variant.problem.slips:
        return {}
    try:
        return {**env(facts(variant)), **slip_figures(variant)}
    except GivenError:
        return {}


def variant_slips(variant: Variant) -> tuple[tuple[float, str], ...]:
    """The problem's own slips with this variant's numbers: (factor, what it means), the factor
    being the slipped answer over the right one (above 1: the slip makes the answer too high;
    below 1: too low). A slip whose factor names a figure this variant's GPU lacks (no sparse
    figure), or is 1 here (the sparse peak does not change a memory-bound time), does not apply."""
    from studytui.practice.handcalc import HandError, evaluate

    out = []
    names = slip_env(variant)
    for factor, says in variant.problem.slips:
        try:
            value = evaluate(render(factor, variant.values), names)
        except HandError:
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 and abs(value - 1) > SLIP_MATCH:
            out.append((float(value), render(says, variant.values)))
    return tuple(out)


def _beyond(share: float, tolerance: float) -> str:
    """A relative miss as a percentage with the fewest decimals that show it is beyond the
    tolerance printed the same way (1.2% against 1%, never '1%' against 'within 1%')."""
    for decimals in range(_SHOWN_DECIMALS + 1):
        if round(share * 100, decimals) > round(tolerance * 100, decimals):
            return percent_text(share, decimals)
    return percent_text(share, _SHOWN_DECIMALS)


# How far off a miss is, in bands, so that a miss never hands out the key (243 given and "243
# times too low" is the answer): the ratio when it is 1.5 or more, else the share of the answer.
TIMES_BANDS = (1.5, 3.0, 10.0, 100.0)
SHARE_BANDS = (0.1, 0.25)
POINT_BANDS = (1.0, 5.0, 20.0)  # percentage points, on a percentage question


def _pct(share: float) -> str:
    return f"{round(share * 100, 6):g}%"


def _band(value: float, edges: tuple[float, ...], text: Any, floor: str = "") -> str:
    """The band `value` falls in: 'under A' below the first edge (or `floor`), 'A to B', 'over Z'."""
    if value < edges[0]:
        return floor or f"under {text(edges[0])}"
    for lo, hi in zip(edges, edges[1:]):
        if value < hi:
            return f"{text(lo)} to {text(hi)}"
    return f"over {text(edges[-1])}"


def miss_size(given: float, want: float, tolerance: float, unit: str = "") -> str:
    """A miss's size as a band with its direction: 'over 100 times too low', '3 to 10 times too
    high', 'under 10% too low', on a percentage question 'under 1 percentage point too high, a
    miss of 10% to 25%'. Bands above the tolerance start at twice it where that is under 10%, so a miss
    just outside the tolerance reads 'under 2% too low (within 1% counts)', never as within it."""
    direction = "too high" if given > want else "too low"
    if given <= 0 or want <= 0:
        return f"{_beyond(abs(given - want) / abs(want) if want else 1.0, tolerance)} {direction}"
    ratio = max(given, want) / min(given, want)
    if ratio >= TIMES_BANDS[0]:
        return f"{_band(ratio, TIMES_BANDS, lambda x: f'{x:g}')} times {direction}"
    share = abs(given - want) / want
    edges = tuple(e for e in ((2 * tolerance,) if 2 * tolerance < SHARE_BANDS[0] else ()) + SHARE_BANDS if e > tolerance)
    share_text = _band(share, edges, _pct) if edges else f"over {_pct(tolerance)}"
    if unit == "%":
        points = abs(given - want) * 100
        point_text = _band(points, POINT_BANDS, lambda x: f"{x:g}")
        noun = "percentage point" if point_text == "under 1" else "percentage points"
        return f"{point_text} {noun} {direction}, a miss of {share_text}"
    return f"{share_text} {direction}"


def _slip_size(factor: float, given: float, want: float, tolerance: float) -> str:
    """The size of a miss a slip explains: the slip's own factor ('about 1000 times too low'), or
    under 1.5x the miss itself, printed beyond the tolerance ('7.4% too high'): with the slip
    named, the learner has the answer's size anyway."""
    direction = "too high" if factor > 1 else "too low"
    ratio = max(factor, 1 / factor)
    if ratio >= TIMES_BANDS[0]:
        return f"about {ratio:.0f} times {direction}" if ratio >= 100 else f"about {float(f'{ratio:.2g}'):g} times {direction}"
    return f"{_beyond(abs(given - want) / want, tolerance)} {direction}"


def miss_text(result: Grade, tolerance: float, problem_slips: tuple[tuple[float, str], ...] | None = None, unit: str | None = None) -> str:
    """How far off a wrong answer is, in words a learner can use, never so exact that it gives
    the key away: a band ('over 100 times too low', '3 to 10 times too high', 'under 10% too low')
    with the tolerance; too high and too low read alike. A miss that looks like a known slip names
    it, and then says the slip's own factor ('about 1000 times too low ... a unit slip'): the
    diagnosis is the lesson."""
    if result.relative_error is None or result.given is None or result.expected.value is None:
        return "Not yet: that is not the answer."
    unit = result.unit if unit is None else unit
    rule = tolerance_text(tolerance, unit)
    found = _found_slip(result, result.slips if problem_slips is None else problem_slips, unit, tolerance)
    given, want = result.given, result.expected.value
    size = _slip_size(found[0], given, want, tolerance) if found else miss_size(given, want, tolerance, unit)
    text = f"Not yet: {size} ({rule})."
    if found:
        text += f" That looks like {found[1]}."
    return text


def miss_json(result: Grade, tolerance: float) -> dict[str, Any] | None:
    """A miss as data, as coarse as its words: direction, size band, slip (what `practice answer
    --json` prints in place of the exact relative error, which would give the key away)."""
    if result.correct or result.given is None or result.expected.value is None:
        return None
    found = _found_slip(result, result.slips, result.unit, tolerance)
    return {
        "direction": "too high" if result.given > result.expected.value else "too low",
        "size": (_slip_size(found[0], result.given, result.expected.value, tolerance) if found
                 else miss_size(result.given, result.expected.value, tolerance, result.unit)),
        "slip": found[1] if found else None,
    }
