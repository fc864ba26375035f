"""A problem's hand formula (`by_hand`): the worked solution's arithmetic, evaluated for a variant.

The formula is written over the question's numbers (`{param}` placeholders) and the names of its
`given` figures. `studytui check` evaluates it for every seed and rejects a problem whose hand
formula lands outside the tolerance of the calculator's answer, or that uses a number the
learner is never told (unit constants and powers of 2 and 10 aside).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from studytui.practice import handcalc
from studytui.practice.model import render

if TYPE_CHECKING:
    from studytui.practice.given import Fact
    from studytui.practice.model import Variant

_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


@dataclass
class Hand:
    """The hand formula of one variant: the expression(s) as rendered, and what they give."""

    expression: str  # number problems: the expression; choice problems: 'choice: expression; ...'
    value: float | None = None  # number problems (SI)
    choice: str | None = None  # choice problems: the choice the formula picks
    per_choice: dict[str, float | bool] = field(default_factory=dict)


def expressions(variant: Variant) -> dict[str, str]:
    """The rendered formula(s): {'': expr} for a number problem, {choice label: expr} otherwise."""
    raw = variant.problem.by_hand
    if raw is None:
        return {}
    if isinstance(raw, str):
        return {"": render(raw, variant.values)}
    shared = render(raw["let"], variant.values).strip().rstrip(";") + "; " if "let" in raw else ""
    return {render(label, variant.values): shared + render(expr, variant.values) for label, expr in raw.items() if label != "let"}


def evaluate(variant: Variant, facts: list[Fact] | None = None) -> Hand:
    """Evaluate the hand formula. handcalc.HandError for a formula that is not plain arithmetic."""
    from studytui.practice.given import env
    from studytui.practice.given import facts as all_facts

    found = all_facts(variant) if facts is None else facts
    names = env(found)
    p = variant.problem
    exprs = expressions(variant)
    if p.kind == "number":
        expr = exprs.get("", "")
        value = handcalc.evaluate(expr, names)
        if isinstance(value, (bool, str)):
            raise handcalc.HandError(f"{expr!r} gives {value!r}, not a number")
        return Hand(expr, value=float(value))
    text = "; ".join(f"{label}: {e}" for label, e in exprs.items())
    results: dict[str, float | bool] = {}
    for label, expr in exprs.items():
        got = handcalc.evaluate(expr, names)
        if isinstance(got, str):
            raise handcalc.HandError(f"{expr!r} gives {got!r}, not a number or a condition")
        results[label] = got
    if p.pick:
        listed = [c for c in variant.listed_choices if c in results]
        numbers = {c: float(results[c]) for c in listed}
        if p.pick in ("min", "max"):
            best = (min if p.pick == "min" else max)(numbers, key=lambda c: numbers[c])
            return Hand(text, choice=best, per_choice=results)
        target_value = handcalc.evaluate(render(p.target, variant.values), names)
        if isinstance(target_value, (bool, str)):
            raise handcalc.HandError(f"target {p.target!r} is not a number")
        for c in listed:
            on_target = math.isclose(numbers[c], target_value, rel_tol=1e-9)
            if on_target or ((numbers[c] <= target_value) if p.pick == "first_at_most" else (numbers[c] >= target_value)):
                return Hand(text, choice=c, per_choice=results)
        return Hand(text, choice=None, per_choice=results)
    true = [label for label, ok in results.items() if ok is True or (not isinstance(ok, bool) and ok != 0)]
    return Hand(text, choice=true[0] if len(true) == 1 else None, per_choice=results)


def stated_numbers(variant: Variant, facts: Iterable[Fact], extra: Iterable[str] = ()) -> set[float]:
    """Every number the learner is shown: in the question, the choices, the given lines, the target."""
    texts = [variant.question, *variant.listed_choices, *(f.text for f in facts), *extra]
    out: set[float] = set()
    for text in texts:
        text = re.sub(r"(?<=\d)[xX](?=\d)", " x ", text)  # '4096x14336' states both numbers
        for m in _NUMBER.finditer(text):
            value = float(m.group(1))
            out.add(value)
            out.add(value / 100)  # '90%' states 0.9 too
    return out


def _power(value: float, base: int, lo: int, hi: int) -> bool:
    if value <= 0:
        return False
    k = round(math.log(value, base))
    return lo <= k <= hi and math.isclose(value, float(base) ** k, rel_tol=1e-12)


def unstated(variant: Variant, facts: Iterable[Fact]) -> list[float]:
    """Numbers the hand formula uses that the learner is not shown (a hidden constant is a bug)."""
    found = list(facts)
    stated = stated_numbers(variant, found, [render(variant.problem.target, variant.values)] if variant.problem.target else [])
    out = []
    for expr in expressions(variant).values():
        for lit in handcalc.literals(expr):
            v = abs(lit.value)
            if lit.exponent or v == 0 or _power(v, 2, -20, 80) or _power(v, 10, -18, 18):
                continue
            if any(math.isclose(v, s, rel_tol=1e-9) for s in stated):
                continue
            out.append(lit.value)
    return out


def unknown_names(variant: Variant, facts: Iterable[Fact]) -> list[str]:
    known = {f.name for f in facts}
    return sorted({n for e in expressions(variant).values() for n in handcalc.names(e)} - known)


# ---- the worked solution ----------------------------------------------------------------------

_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?!\w)(?!\s*\()")


def _num(value: float | bool | str) -> str:
    """A step's value: 'true'/'false', a whole number as it is (1024), else four figures."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if float(value).is_integer() and abs(value) < 1e7:
        return str(int(value))
    return f"{value:.4g}"


def _put_in(expr: str, names: dict[str, float | bool | str]) -> str:
    """The expression with every known name replaced by its value (functions and keywords stay)."""
    return _NAME.sub(lambda m: _num(names[m.group(1)]) if m.group(1) in names else m.group(1), expr)


def _step_lines(text: str, names: dict[str, float | bool | str], label: str = "") -> tuple[list[str], float | bool | str]:
    """One formula's steps, each 'name = expression = numbers = value', and its result."""
    lines = []
    value: float | bool | str = 0.0
    for name, expr in handcalc.steps(text):
        expr = " ".join(expr.split())
        value = handcalc.evaluate(expr, names)
        shown = [expr]
        filled = _put_in(expr, names)
        if filled != expr:
            shown.append(filled)
        if _num(value) != filled:
            shown.append(_num(value))
        head = f"{label}{name} = " if name else label
        if name:
            names[name] = value
        lines.append(head + " = ".join(shown))
    return lines, value


def worked(variant: Variant, found: list[Fact] | None = None) -> tuple[list[str], float | str | None]:
    """The worked solution of a variant from its hand formula: the given figures it uses, then each
    step with the numbers put in. Returns the lines and what the formula gives (SI value or choice).
    handcalc.HandError (or practice.given.GivenError) for a problem whose formula does not run."""
    from studytui.practice.answers import format_value
    from studytui.practice.given import facts as all_facts

    p = variant.problem
    found = all_facts(variant) if found is None else found
    raw = p.by_hand
    if raw is None:
        return [], None
    used = set().union(*(handcalc.names(t) for t in expressions(variant).values()))
    names: dict[str, float | bool | str] = {f.name: f.value for f in found}
    lines = ["By hand, in SI units (s, B, FLOP, FLOP/s, B/s):"]
    lines += [f"{f.name} = {_num(f.value)} (given: {f.text})" for f in found if f.name in used]
    if isinstance(raw, str):
        steps, value = _step_lines(render(raw, variant.values), names)
        steps[-1] = "answer = " + steps[-1]
        if not isinstance(value, (bool, str)):
            steps[-1] += f" -> {format_value(float(value), p.unit)}"
            return lines + steps, float(value)
        return lines + steps, None
    if "let" in raw:
        shared, _ = _step_lines(render(raw["let"], variant.values).strip().rstrip(";") + "; 0", names)
        lines += shared[:-1]
    results: dict[str, float | bool | str] = {}
    for label, expr in raw.items():
        if label == "let":
            continue
        choice = render(label, variant.values)
        steps, results[choice] = _step_lines(render(expr, variant.values), dict(names), f"{choice}: ")
        lines += steps
    hand = evaluate(variant, found)
    if p.pick in ("min", "max"):
        lines.append(f"the {'smallest' if p.pick == 'min' else 'largest'}: {hand.choice}")
    elif p.pick:
        lines.append(f"the first, in the order {', '.join(variant.listed_choices)}, "
                     f"{'at most' if p.pick == 'first_at_most' else 'at least'} {render(p.target, variant.values)}: {hand.choice}")
    else:
        lines.append(f"the one that holds: {hand.choice}")
    return lines, hand.choice
