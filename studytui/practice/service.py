"""Practice for one learner: problems, their current variants, grading that records attempts,
due reviews and mastery. Shared by the command line and the app (no Textual, no Rich)."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Callable

from studytui.core.errors import UsageError
from studytui.practice import schedule
from studytui.practice.loader import ProblemSet, load_problems
from studytui.practice.model import SEED_LIMIT, Problem, ProblemHead, Variant

if TYPE_CHECKING:  # grading (and through it the calculators) loads only when an answer is graded
    from studytui.guide.model import Guide, Section
    from studytui.practice.grading import Grade
    from studytui.store.attempts import Attempt
    from studytui.store.store import Store

REVEALED = schedule.REVEALED  # the answer recorded when a learner asks for the solution first


def _utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def check_seed(seed: Any) -> int:
    if isinstance(seed, bool):
        raise UsageError(f"seed must be a whole number from 0 to {SEED_LIMIT}, not {seed!r}")
    try:
        value = int(str(seed).strip())
    except ValueError:
        raise UsageError(f"seed must be a whole number from 0 to {SEED_LIMIT}, not {seed!r}") from None
    if not 0 <= value <= SEED_LIMIT:
        raise UsageError(f"seed must be a whole number from 0 to {SEED_LIMIT}, not {seed!r}")
    return value


class Practice:
    def __init__(self, guide: Guide, store: Store, problems: ProblemSet | None = None,
                 now: Callable[[], _dt.datetime] = _utcnow) -> None:
        self.guide = guide
        self.store = store
        self.set = problems if problems is not None else load_problems(guide.content_dir)
        self.now = now
        self._attempts: list[Attempt] | None = None
        self._by_problem: dict[str, list[Attempt]] | None = None  # the same attempts, per problem
        self._reviews: dict[str, schedule.Review] | None = None  # replayed once per reading of the attempts

    # -- problems --------------------------------------------------------------------------
    @property
    def problems(self) -> tuple[Problem, ...]:
        return self.set.problems

    def get(self, problem_id: str) -> Problem:
        found = self.set.get(problem_id)
        if found is None:
            raise UsageError(f"unknown problem id '{problem_id}' (see 'studytui practice' for the list)")
        return found

    def section(self, key: str) -> Section:
        return self.guide.resolve_section(key)

    def for_section(self, section_id: str) -> list[Problem]:
        return self.set.for_section(section_id)

    def for_entry(self, entry_id: str) -> list[Problem]:
        return self.set.for_entry(entry_id)

    @property
    def heads(self) -> tuple[ProblemHead, ...]:
        """What the lists show of each problem, without reading the whole problems."""
        return self.set.heads

    def head(self, problem_id: str) -> ProblemHead:
        found = self.set.head(problem_id)
        if found is None:
            raise UsageError(f"unknown problem id '{problem_id}' (see 'studytui practice' for the list)")
        return found

    def heads_for_section(self, section_id: str) -> list[ProblemHead]:
        return self.set.heads_for_section(section_id)

    # -- attempts --------------------------------------------------------------------------
    def attempts(self, problem_id: str | None = None) -> list[Attempt]:
        if self._attempts is None:
            self._attempts = self.store.attempts()
            self._by_problem = None
        if problem_id is None:
            return list(self._attempts)
        if self._by_problem is None:  # one pass, not one per problem of a list
            self._by_problem = {}
            for a in self._attempts:
                self._by_problem.setdefault(a.problem_id, []).append(a)
        return list(self._by_problem.get(problem_id, ()))

    def refresh(self) -> None:
        self._attempts = None
        self._by_problem = None
        self._reviews = None

    def seed(self, problem_id: str, seed: Any = None) -> int:
        """The given seed, or the learner's current variant of this problem."""
        if seed is not None:
            return check_seed(seed)
        return schedule.current_seed(self.attempts(problem_id))

    def variant(self, problem_id: str, seed: Any = None) -> Variant:
        return self.get(problem_id).variant(self.seed(problem_id, seed))

    def answer(self, problem_id: str, value: str, seed: Any = None, reveal: bool = False) -> Grade:
        """Grade and record one attempt. Bad input raises UsageError and records nothing.

        A settled variant is spent: one whose solution was shown, on request or by a right answer.
        An answer to it is graded (so the learner sees whether the worked solution was understood)
        but not recorded, and `counted` says so. A miss answered with `reveal` shows the solution,
        so it spends the variant too. A right answer after a miss on the same variant is recorded
        (the schedule keeps the lapse) and moves on, but is not mastery: `after_miss` says so."""
        from studytui.practice.grading import grade

        problem = self.get(problem_id)
        self.refresh()  # another process (the app, a second shell) may have recorded attempts
        chosen = self.seed(problem_id, seed)
        history = [a for a in self.attempts(problem_id) if a.seed == chosen]
        result = grade(problem.variant(chosen), value, misses_before=schedule.misses_since_hit(history), reveal=reveal)
        if self._settled(history, chosen):
            result.counted = False
            return result
        result.after_miss = result.correct and any(not a.correct for a in history)
        self.store.record_attempt(problem_id, chosen, str(value).strip(), result.correct, result.relative_error)
        if reveal and not result.correct:
            self.store.record_attempt(problem_id, chosen, REVEALED, False, None)
        self.refresh()
        return result

    def settled(self, problem_id: str, seed: int) -> bool:
        """Whether this variant's answer may be shown: it was answered right, or its solution was
        shown (which spends it)."""
        return self._settled([a for a in self.attempts(problem_id) if a.seed == seed], seed)

    @staticmethod
    def _settled(history: list[Attempt], seed: int) -> bool:
        return any(a.correct for a in history) or schedule.revealed(history, seed)

    def show_json(self, problem_id: str, seed: Any = None) -> dict[str, Any]:
        """What `practice show ID --json` prints: the variant's question, given figures, hand
        formula and calculator call; the hand formula's value only once the variant is settled."""
        self.refresh()
        variant = self.variant(problem_id, seed)
        return variant_json(variant, settled=self.settled(problem_id, variant.seed))

    def reveal(self, problem_id: str, seed: Any = None) -> list[str]:
        """The worked solution on request. Before a right answer it counts as a miss (recorded),
        so the review schedule stays honest, and the variant is spent: the next one is new, and an
        answer to this one is no longer recorded."""
        from studytui.practice.grading import expected, solution

        problem = self.get(problem_id)
        chosen = self.seed(problem_id, seed)
        variant = problem.variant(chosen)
        lines = solution(variant, expected(variant))
        history = self.attempts(problem_id)
        solved = any(a.correct and a.seed == chosen for a in history)
        if not solved and not schedule.revealed(history, chosen):
            self.store.record_attempt(problem_id, chosen, REVEALED, False, None)
            self.refresh()
        return lines

    # -- review ----------------------------------------------------------------------------
    def reviews(self) -> dict[str, schedule.Review]:
        attempts = self.attempts()
        if self._reviews is None:
            self._reviews = schedule.reviews(attempts)
        return dict(self._reviews)

    def due(self) -> list[schedule.Review]:
        return schedule.due(self.reviews(), self.now(), known=(h.id for h in self.heads))

    def mastery(self) -> dict[str, schedule.Mastery]:
        by_section: dict[str, list[str]] = {s.id: [] for s in self.guide.sections}
        for h in self.heads:
            by_section.setdefault(h.section_id, []).append(h.id)
        by_section = {sid: ids for sid, ids in by_section.items() if ids}
        return schedule.mastery(by_section, self.reviews(), self.now())

    def last_result(self, problem_id: str) -> bool | None:
        history = self.attempts(problem_id)
        return history[-1].correct if history else None

    def state(self, problem_id: str) -> str:
        """new, mastered (right at the first try on its variant), right after a miss, or missed."""
        return schedule.problem_state(self.attempts(problem_id))

    def mark(self, problem_id: str) -> str:
        """The list's mark: ✓ mastered, ~ right after a miss (not mastered), ✗ missed, · not tried."""
        return schedule.mark(self.attempts(problem_id))


def variant_json(variant: Variant, settled: bool) -> dict[str, Any]:
    """One variant as data: question, `given` (name, text, SI value), `by_hand` (the expression as
    rendered, and its value) and `calc` (the exact call that grades it).

    Before the variant is settled (answered right, or its solution shown) nothing equal to the key
    is included: `by_hand.value` is null, and for a choice problem so is `per_choice` (each
    choice's value or condition names the answer); `answer_hidden` says so. Otherwise the key could
    be copied back as an answer and count. (The given figures are the question's own data: shown.)"""
    from studytui.practice import byhand
    from studytui.practice.given import facts

    p = variant.problem
    found = facts(variant)
    out: dict[str, Any] = {
        "id": p.id, "seed": variant.seed, "title": p.title, "section": p.section_id, "skill": p.skill, "entries": list(p.entries),
        "question": variant.question, "given": [{"name": f.name, "text": f.text, "value": f.value} for f in found],
        "kind": p.kind, "unit": p.unit, "tolerance": p.tolerance,
    }
    if p.kind == "choice":
        out["choices"] = list(variant.choices)
    hand = byhand.evaluate(variant, found)
    if p.kind == "number":
        out["by_hand"] = {"expression": hand.expression, "value": hand.value if settled else None}
    else:
        out["by_hand"] = {"expression": hand.expression, "value": hand.choice if settled else None,
                          "per_choice": hand.per_choice if settled else None}
    out["calc"] = variant.calc_call()
    out["answer_hidden"] = not settled
    return out
