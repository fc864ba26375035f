"""Grade an answer by running the calculator for exactly that variant, at the moment of grading.

Nothing about the answer is stored in content: a problem names its calculator, the arguments
(templated from its parameters) and the result key. Choice problems either read a categorical
result (bound, fits, physically possible) or compare runs (`pick: min` - which GPU is faster).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from studytui.core.errors import UsageError
from studytui.practice.answers import format_value, parse_answer
from studytui.practice.model import Variant

if TYPE_CHECKING:
    from studytui.calc.result import Result


class ProblemBroken(UsageError):
    """The calculator refused this variant or gave no usable answer (a content bug `check` catches)."""


@dataclass
class Expected:
    """The right answer for one variant: a number (SI) or a choice label, and the worked solution."""

    value: float | None = None
    choice: str | None = None
    explain: list[str] = field(default_factory=list)
    per_choice: dict[str, float] = field(default_factory=dict)  # picking problems: each run's answer

    def display(self, unit: str) -> str:
        return self.choice if self.choice is not None else format_value(self.value or 0.0, unit)


@dataclass
class Grade:
    problem_id: str
    seed: int
    answer: str
    correct: bool
    expected: Expected
    given: float | None = None  # numeric answers, SI
    relative_error: float | None = None
    hint: str | None = None  # the next hint after a miss, in order
    solution: list[str] = field(default_factory=list)


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value).strip().lower()


def _run(variant: Variant, args: dict[str, str]) -> Result:
    from studytui.calc.forms import run

    p = variant.problem
    try:
        return run(p.calc_name, args, None)
    except UsageError as exc:
        raise ProblemBroken(f"problem '{p.id}' (seed {variant.seed}): the {p.calc_name} calculator refused it: {exc}") from None


def _number(variant: Variant, result: Result) -> float:
    p = variant.problem
    if p.answer_key not in result.values:
        raise ProblemBroken(f"problem '{p.id}': the {p.calc_name} calculator has no result '{p.answer_key}'")
    value = result.values[p.answer_key]
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
        ordered = sorted(runs.items(), key=lambda kv: kv[1], reverse=p.pick == "max")
        best, runner_up = ordered[0], ordered[1]
        if math.isclose(best[1], runner_up[1], rel_tol=1e-6):
            raise ProblemBroken(f"problem '{p.id}' (seed {variant.seed}): '{best[0]}' and '{runner_up[0]}' tie; no single answer")
        explain = []
        for choice in variant.choices:
            explain.append(f"{choice}: {p.answer_key} = {runs[choice]:.4g}")
            explain.extend("  " + line for line in explains[choice])
        return Expected(choice=best[0], explain=explain, per_choice=runs)
    result = _run(variant, variant.args())
    if p.kind == "choice":
        if p.answer_key not in result.values:
            raise ProblemBroken(f"problem '{p.id}': the {p.calc_name} calculator has no result '{p.answer_key}'")
        label = _label(result.values[p.answer_key])
        matches = [c for c in variant.choices if c.lower() == label]
        if not matches:
            raise ProblemBroken(
                f"problem '{p.id}' (seed {variant.seed}): the answer {label!r} is not among the choices {list(variant.choices)}"
            )
        return Expected(choice=matches[0], explain=list(result.explain))
    return Expected(value=_number(variant, result), explain=list(result.explain))


def parse_choice(variant: Variant, answer: str) -> str:
    """A choice by its label (any case) or its number (1-based)."""
    text = str(answer).strip()
    choices = variant.choices
    if len(text) > 60:
        raise UsageError(f"answer: {len(text)} characters is not one of the choices")
    for c in choices:
        if c.lower() == text.lower():
            return c
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    listed = ", ".join(f"{i}) {c}" for i, c in enumerate(choices, 1))
    raise UsageError(f"answer: {text!r} is not one of the choices: {listed}")


def solution(variant: Variant, exp: Expected) -> list[str]:
    """The worked solution: the calculator's own explain output for this variant, then what to notice."""
    return [*exp.explain, "", variant.notice]


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
        correct = rel <= p.tolerance
    g = Grade(p.id, variant.seed, str(answer), correct, exp, given=given, relative_error=rel if rel is None or math.isfinite(rel) else None)
    hints = variant.hints
    if not correct and hints:
        g.hint = hints[min(misses_before, len(hints) - 1)]
    if correct or reveal:
        g.solution = solution(variant, exp)
    return g


def miss_text(result: Grade, tolerance: float) -> str:
    """How far off a wrong answer is, in words a learner can use ('38% too high', '12 times too low')."""
    if result.relative_error is None or result.given is None or result.expected.value is None:
        return "Not yet: that is not the answer."
    given, want = result.given, result.expected.value
    high = given > want
    if result.relative_error < 2 or given == 0:
        size = f"{result.relative_error:.0%}"
    else:
        size = f"{(given / want if high else want / given):.3g} times"
    return f"Not yet: {size} too {'high' if high else 'low'} (within {tolerance:.0%} counts)."
