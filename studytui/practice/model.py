"""Problems as loaded from content, and the variant a seed picks.

The records are typed named tuples (immutable; `_fields` names the fields, `_replace` makes a
changed copy), not frozen dataclasses: every practice command builds this module first, and on
Python 3.11 a frozen dataclass costs about a millisecond to create at import (its methods are
generated and compiled), a named tuple a fifth of that (issue 27).
"""

from __future__ import annotations

import random
import re
from types import MappingProxyType
from typing import Any, Mapping

from studytui.core.tuples import Tuple

KINDS = ("number", "choice")
# Picking problems run the calculator once per choice: the choice with the smallest (largest)
# answer, or the first choice in the listed order whose answer is at most (at least) `target`.
PICKS = ("min", "max", "first_at_most", "first_at_least")
TARGET_PICKS = ("first_at_most", "first_at_least")
DEFAULT_TOLERANCE = 0.05
# A `pick: min|max` problem's winner must beat the next choice by this share at least (its `margin`):
# the calculators are models, so a 0.4% gap is no answer a learner can be sure of.
DEFAULT_MARGIN = 0.1
MARGIN_PICKS = ("min", "max")
MAX_HINTS = 3
SEED_LIMIT = 2**31 - 1

# {name} or {name.key}: a parameter, or a field of a parameter whose values are mappings.
PLACEHOLDER = r"\{([a-z_][a-z0-9_]*)(?:\.([a-z_][a-z0-9_]*))?\}"  # compiled by `re` on first use
CHOICE_PARAM = "choice"  # in a picking problem's args: the choice being run


class TemplateError(ValueError):
    """A template names a parameter (or a field of one) that the problem does not define."""


class GivenSpec(Tuple):
    """One item of a problem's `given` list (see practice.given): figures of a GPU, a model or a
    compute capability (`ref` is a template naming it), or one stated value of the problem's own."""

    source: str  # gpu | model | cc | value
    ref: str = ""
    figures: tuple[str, ...] = ()
    prefix: str = ""  # names become PREFIX_figure (two GPUs in one problem)
    name: str = ""  # source 'value': the name, the line shown and the value (an expression, units allowed)
    text: str = ""
    value: str = ""


class ProblemHead(Tuple):
    """What the lists need of a problem (`studytui practice`, `practice due`, `progress`, mastery):
    kept apart in the cache so those commands never decode the questions, hints and solutions
    (practice/cache.py)."""

    id: str
    section_id: str
    title: str
    entries: tuple[str, ...]
    kind: str
    skill: str


HEAD_FIELDS = ProblemHead._fields


class Problem(Tuple):
    """One practice problem as its file states it (the loader checked every field)."""

    id: str
    section_id: str
    title: str
    entries: tuple[str, ...]
    kind: str  # number | choice
    question: str
    calc_name: str
    calc_args: Mapping[str, Any]
    answer_key: str
    params: Mapping[str, tuple[Any, ...]] = MappingProxyType({})  # (read-only: a default every problem shares)
    pick: str | None = None  # choice problems that compare runs: the choice with the min/max answer
    unit: str = ""
    tolerance: float = DEFAULT_TOLERANCE
    choices: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    notice: str = ""
    skill: str = ""
    given: tuple[GivenSpec, ...] = ()
    # The worked solution's arithmetic over the question's numbers and the given names: one
    # expression (number problems), or one per choice template (choice problems: a condition, or
    # for picking problems the value compared).
    by_hand: str | Mapping[str, str] | None = None
    target: str = ""  # picking problems with a target: the threshold, an expression (units allowed)
    margin: float | None = None  # pick min/max: the least share by which the best choice beats the next
    slips: tuple[tuple[str, str], ...] = ()  # (factor template, what that factor means in this problem)
    source_file: str = ""
    # Position in its file's problem list: `check` finds any field's line from it when a message
    # needs one. (The field hides tuple.index, which nothing calls on a problem.)
    index: int = 0  # type: ignore[assignment]

    @property
    def head(self) -> ProblemHead:
        return ProblemHead(self.id, self.section_id, self.title, self.entries, self.kind, self.skill)

    def variant_count(self) -> int:
        n = 1
        for values in self.params.values():
            n *= max(1, len(values))
        return n

    def all_values(self) -> list[dict[str, Any]]:
        """Every combination of parameter values (the whole variant space, for checks and tests)."""
        combos: list[dict[str, Any]] = [{}]
        for name, options in self.params.items():
            combos = [{**c, name: o} for c in combos for o in options]
        return combos

    def variant(self, seed: int) -> "Variant":
        """The parameters a seed draws: the same seed always gives the same variant."""
        rng = random.Random(f"{self.id}:{int(seed)}")
        values = {name: rng.choice(options) for name, options in self.params.items()}
        return Variant(self, int(seed), values)


def render(template: str, values: Mapping[str, Any]) -> str:
    """Fill `{name}` and `{name.key}` placeholders; TemplateError for an undefined one."""

    def fill(match: re.Match[str]) -> str:
        name, key = match.group(1), match.group(2)
        if name not in values:
            raise TemplateError(f"'{{{match.group(0)[1:-1]}}}' names no parameter of this problem")
        value = values[name]
        if key is not None:
            if not isinstance(value, Mapping) or key not in value:
                raise TemplateError(f"'{{{name}.{key}}}': parameter '{name}' has no field '{key}'")
            value = value[key]
        elif isinstance(value, Mapping):
            raise TemplateError(f"'{{{name}}}' is a mapping; name one of its fields ({', '.join(map(str, value))})")
        return _text(value)

    return re.sub(PLACEHOLDER, fill, str(template))


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class Variant(Tuple):
    """One problem with its parameters fixed."""

    problem: Problem
    seed: int
    values: Mapping[str, Any]

    @property
    def question(self) -> str:
        # Whitespace collapsed after filling in: a parameter may be empty in some variants.
        return " ".join(render(self.problem.question, self.values).split())

    @property
    def listed_choices(self) -> tuple[str, ...]:
        """The choices in the order the problem lists them (what `first_at_most` walks)."""
        return tuple(render(c, self.values) for c in self.problem.choices)

    @property
    def choice_order(self) -> tuple[int, ...]:
        """The order this variant shows the choices in: a shuffle fixed by the problem and seed, so
        the right answer sits at no fixed place."""
        order = list(range(len(self.problem.choices)))
        random.Random(f"{self.problem.id}:{self.seed}:order").shuffle(order)
        return tuple(order)

    @property
    def choices(self) -> tuple[str, ...]:
        """The choices as shown (and numbered) to the learner."""
        listed = self.listed_choices
        return tuple(listed[i] for i in self.choice_order)

    def args(self, choice: str | None = None) -> dict[str, str]:
        """The calculator's arguments as a person would type them (strings, units allowed)."""
        values = dict(self.values)
        if choice is not None:
            values[CHOICE_PARAM] = choice
        rendered = {key: render(_text(v), values) for key, v in self.problem.calc_args.items()}
        # An argument that renders empty is left out: a parameter can omit a flag in some variants
        # (a prompt length only for prefill), so no variant passes a flag its calculator ignores.
        return {key: v for key, v in rendered.items() if v.strip()}

    @property
    def hints(self) -> tuple[str, ...]:
        return tuple(render(h, self.values) for h in self.problem.hints)

    @property
    def notice(self) -> str:
        return render(self.problem.notice, self.values)

    def calc_call(self) -> dict[str, Any]:
        """The exact calculator call that grades this variant (what `practice show --json` prints)."""
        call: dict[str, Any] = {"name": self.problem.calc_name, "answer_key": render(self.problem.answer_key, self.values)}
        if self.problem.pick:
            call["args"] = {c: self.args(c) for c in self.listed_choices}
            call["pick"] = self.problem.pick
            if self.problem.target:
                call["target"] = render(self.problem.target, self.values)
        else:
            call["args"] = self.args()
        return call
