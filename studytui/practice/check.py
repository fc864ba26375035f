"""Problems under `studytui check`: structure, entry links, and every problem run over seeds.

A problem is rejected (FILE:LINE) when its text or arguments name a parameter it does not define,
when its calculator refuses a variant, when an answer is not finite (or is zero, which no
relative tolerance can grade), or when a choice problem's answer is not one of its choices.

The hand-formula rule: a problem's `by_hand` expression, evaluated for every seed over the
question's numbers and its `given` figures, must agree with the calculator's answer within the
problem's tolerance (the same choice, for a choice problem), and may use no number the learner is
not shown (unit constants and powers of 2 and 10 aside).

The slip rule: each of a problem's `slips` factors is arithmetic over the parameters, the given
figures and the sparse and vector-pipe figures beside a given peak (`practice.given.slip_figures`),
and is the slipped answer over the right one (above 1: too high; below 1: too low), so never zero
or negative.

The margin rule: a `pick: min` or `pick: max` problem's best choice beats the next one by at least
its `margin` (default 10%) in every variant checked. The calculators are models: a 0.4% gap is no
answer a learner can be sure of, and one that a small change of the model would flip.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from studytui.practice.model import Problem, ProblemHead, TemplateError, render

if TYPE_CHECKING:
    from studytui.core.yamlio import YamlFile, YamlPath
    from studytui.guide.model import Guide

CHECK_SEEDS = tuple(range(12))


def seeds_for(problem: Problem, seeds: Iterable[int] = CHECK_SEEDS) -> list[int]:
    return list(seeds)


def _template_field(p: Problem, values: dict[str, Any]) -> YamlPath:
    """The path of the first field whose template fails (for its line number)."""
    fields: list[tuple[YamlPath, str]] = [(("question",), p.question)]
    fields += [(("choices", i), c) for i, c in enumerate(p.choices)]
    fields += [(("calc", "args", k), str(v)) for k, v in p.calc_args.items()]
    fields += [(("calc", "answer"), p.answer_key), (("calc", "target"), p.target)]
    fields += [(("hints", i), h) for i, h in enumerate(p.hints)] + [(("notice",), p.notice)]
    if isinstance(p.by_hand, str):
        fields.append((("by_hand",), p.by_hand))
    elif p.by_hand is not None:
        fields += [(("by_hand", k), v) for k, v in p.by_hand.items()]
    fields += [(("given", i), g.ref or g.text) for i, g in enumerate(p.given)]
    fields += [(("slips", i, key), text) for i, pair in enumerate(p.slips) for key, text in zip(("factor", "says"), pair)]
    if p.pick:
        values = {**values, "choice": ""}
    for path, text in fields:
        try:
            render(text, values)
        except TemplateError:
            return path
    return ("id",)


def check_problems(content_dir: str | Path, guide: Guide | None = None, seeds: Iterable[int] = CHECK_SEEDS) -> list[str]:
    from studytui.calc.hardware import held_catalogs

    with held_catalogs():  # one state of the hardware files for the whole check
        return _check_problems(content_dir, guide, seeds)


def _check_problems(content_dir: str | Path, guide: Guide | None, seeds: Iterable[int]) -> list[str]:
    from studytui.calc.forms import CALCULATORS
    from studytui.practice.grading import ProblemBroken, expected
    from studytui.practice.loader import parse_problems

    parsed = parse_problems(content_dir)
    out = list(parsed.errors)
    section_ids = {s.id for s in guide.sections} if guide is not None else None
    seeds = list(seeds)
    for p in parsed.problems:
        yf = parsed.files.get(p.source_file)

        def at(*path: object, p: Problem = p, yf: YamlFile | None = yf) -> str:  # bound to this problem (B023)
            return f"{p.source_file}:{yf.line_of(('problems', p.index, *path))}" if yf is not None else p.source_file
        if section_ids is not None and p.section_id not in section_ids:
            out.append(f"{at()}: problem '{p.id}': section '{p.section_id}' is not a section of the guide")
        if guide is not None:
            for entry_id in p.entries:
                if guide.get(entry_id) is None:
                    out.append(f"{at('entries')}: problem '{p.id}': entry '{entry_id}' is not in the guide")
        spec = CALCULATORS.get(p.calc_name)
        if spec is None:
            out.append(f"{at('calc', 'name')}: problem '{p.id}': unknown calculator '{p.calc_name}' (known: {', '.join(CALCULATORS)})")
            continue
        fields = {f.name for f in spec.fields}
        bad = [k for k in p.calc_args if k not in fields]
        if bad:
            out.append(f"{at('calc', 'args', bad[0])}: problem '{p.id}': {', '.join(bad)} not a field of '{p.calc_name}'")
            continue
        if p.pick and "{choice}" not in " ".join(str(v) for v in p.calc_args.values()):
            out.append(f"{at('calc', 'pick')}: problem '{p.id}': a picking problem puts '{{choice}}' in one of its args")
            continue
        for seed in seeds:
            variant = p.variant(seed)
            try:
                _ = (variant.question, variant.choices, variant.hints, variant.notice)
                variant.args(variant.choices[0] if p.pick else None)
                exp = expected(variant)
            except TemplateError as exc:
                out.append(f"{at(*_template_field(p, dict(variant.values)))}: problem '{p.id}': {exc}")
                break
            except ProblemBroken as exc:
                out.append(f"{at('calc')}: {exc}")
                break
            if p.kind == "number" and exp.value == 0:
                out.append(
                    f"{at('calc', 'answer')}: problem '{p.id}' (seed {seed}): the answer is zero; a relative tolerance cannot grade it"
                )
                break
            problem_found = hand_rule(p, variant, exp) or slip_rule(p, variant) or margin_rule(p, exp)
            if problem_found:
                where, message = problem_found
                out.append(f"{at(*where)}: problem '{p.id}' (seed {seed}): {message}")
                break
    return out


def hand_rule(p: Problem, variant: Any, exp: Any) -> tuple[YamlPath, str] | None:
    """What is wrong with this variant's hand formula, and the field to point at; None when it
    agrees with the calculator and uses only numbers the learner is shown."""
    from studytui.practice import byhand
    from studytui.practice.given import GivenError, facts
    from studytui.practice.handcalc import HandError

    try:
        found = facts(variant)
    except GivenError as exc:
        return ("given",), str(exc)
    try:
        missing = byhand.unknown_names(variant, found)
        if missing:
            return ("by_hand",), f"the hand formula uses {', '.join(missing)}, which no 'given' item names"
        hand = byhand.evaluate(variant, found)
        hidden = byhand.unstated(variant, found)
    except HandError as exc:
        return ("by_hand",), f"hand formula: {exc}"
    if hidden:
        return ("by_hand",), (f"the hand formula uses {', '.join(f'{h:g}' for h in hidden)}, which neither the question nor "
                              "'given' states")
    if p.kind == "number":
        assert hand.value is not None and exp.value is not None
        off = abs(hand.value - exp.value) / abs(exp.value)
        if off > p.tolerance:
            return ("by_hand",), (f"the hand formula gives {hand.value:.6g}, the calculator {exp.value:.6g}: {off:.1%} apart, "
                                  f"beyond the tolerance of {p.tolerance:.0%} (say in the question what the calculator counts)")
    elif hand.choice != exp.choice:
        return ("by_hand",), f"the hand formula picks {hand.choice!r}, the calculator {exp.choice!r}"
    return None


def slip_rule(p: Problem, variant: Any) -> tuple[YamlPath, str] | None:
    """What is wrong with this variant's slips: a factor that is not arithmetic, or that names a
    figure neither `given` nor a given peak's sparse or vector-pipe figure defines, or text naming
    an undefined parameter. A factor naming a figure this variant's GPU lacks does not apply."""
    from studytui.practice import handcalc
    from studytui.practice.given import GivenError, env, facts, slip_figure_names, slip_figures

    if not p.slips:
        return None
    try:
        found = facts(variant)
    except GivenError as exc:
        return ("given",), str(exc)
    known = {f.name for f in found} | slip_figure_names(variant)
    names = {**env(found), **slip_figures(variant)}
    for i, (factor, says) in enumerate(p.slips):
        try:
            text = render(factor, variant.values)
            render(says, variant.values)
        except TemplateError as exc:
            return ("slips", i), str(exc)
        try:
            used = handcalc.names(text)
            unknown = sorted(used - known)
            if unknown:
                return ("slips", i, "factor"), (f"the slip factor uses {', '.join(unknown)}, which no 'given' item (nor a given "
                                                "peak's sparse_<dtype> or vector_fp64) names")
            if used - names.keys():
                continue  # this GPU has no such figure (no sparse peak): the slip does not apply to it
            value = handcalc.evaluate(text, names)
        except handcalc.HandError as exc:
            return ("slips", i, "factor"), f"slip factor: {exc}"
        if isinstance(value, (bool, str)):
            return ("slips", i, "factor"), f"the slip factor {factor!r} gives {value!r}, not a number"
        if value <= 0:
            return ("slips", i, "factor"), (f"the slip factor {factor!r} gives {value:g}: a factor is the slipped answer over the "
                                            "right one (above 1 when the slip makes it too high, below 1 when too low)")
    return None


def margin_gap(p: Problem, exp: Any) -> tuple[str, str, float] | None:
    """For a `pick: min|max` problem: (best, runner-up, the share by which the best beats it)."""
    from studytui.practice.model import MARGIN_PICKS

    if p.pick not in MARGIN_PICKS or len(exp.per_choice) < 2:
        return None
    (best, a), (second, b) = sorted(exp.per_choice.items(), key=lambda kv: kv[1], reverse=p.pick == "max")[:2]
    low, high = min(a, b), max(a, b)
    return best, second, (high / low - 1 if low > 0 else float("inf"))


def margin_rule(p: Problem, exp: Any) -> tuple[YamlPath, str] | None:
    """What is wrong with this variant's choices: the best does not beat the next by the margin."""
    found = margin_gap(p, exp)
    if found is None or p.margin is None:
        return None
    best, second, gap = found
    if gap >= p.margin:
        return None
    return ("params",), (f"'{best}' beats '{second}' by {gap:.1%}, under the margin of {p.margin * 100:g}% (the calculators are "
                         "models: offer choices further apart, or state a smaller 'margin')")


def skills(problems: Iterable[Problem | ProblemHead]) -> dict[str, int]:
    """How many problems practise each skill."""
    out: dict[str, int] = {}
    for p in problems:
        out[p.skill] = out.get(p.skill, 0) + 1
    return dict(sorted(out.items()))
