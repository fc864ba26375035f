"""Spaced review with FSRS, replayed from the recorded attempts.

The scheduler's state is never stored: each problem's card is rebuilt by replaying its attempts in
time order. Two stores merged by import therefore agree on every due date, and a change of
scheduler parameters applies to the whole history. Fuzzing is off so replay is deterministic.

Ratings: a miss is Again (it comes back within ten minutes); a hit after a miss since the last hit is
Hard; a hit at the first try is Good (its interval grows quickly with each further hit).

Mastery: a problem is mastered when its last answer was right at the first try on its variant. A
right answer after a miss on the same variant is graded right and moves on to a new variant, but
it is not mastery (the miss may have been followed by a guess the feedback narrowed down); the
schedule keeps the lapse (Again, then Hard: back within the hour).
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from studytui.core.tuples import Tuple

if TYPE_CHECKING:
    from fsrs import Card, Scheduler  # imported when first needed: nothing practised, nothing imported

    from studytui.store.attempts import Attempt


# Named tuples, not frozen dataclasses: cheaper to create at import (see practice/model.py).
class Review(Tuple):
    """One problem's review state, replayed from its attempts."""

    problem_id: str
    due: _dt.datetime
    last_correct: bool
    attempts: int
    last_seed: int
    correct_count: int
    mastered: bool = False  # the last answer was right at the first try on its variant
    after_miss: bool = False  # the last answer was right, after a miss on the same variant

    @property
    def state(self) -> str:
        return state_of_flags(self.last_correct, self.mastered)


# One short learning step: a problem answered right at the first try graduates at once to a
# days-long interval; a miss comes back after RELEARN, and again until it is hit.
RELEARN = _dt.timedelta(minutes=10)


def _import_fsrs() -> None:
    from studytui.core.imports import import_fsrs  # without typing_extensions: see there

    import_fsrs()


_SCHEDULER: list[Scheduler] = []  # the one scheduler, made when first needed


def _scheduler() -> Scheduler:
    """studytui's FSRS scheduler. One for the process: FSRS sets a scheduler's fields only when it
    is made, and with fuzzing off a review reads them and nothing else, so every replay and every
    forecast card can share it (making one checks its parameters: 8 ms for a plan's 91 cards)."""
    if not _SCHEDULER:
        _import_fsrs()
        from fsrs import Scheduler

        _SCHEDULER.append(Scheduler(learning_steps=(RELEARN,), relearning_steps=(RELEARN,), enable_fuzzing=False))
    return _SCHEDULER[0]


def _time(text: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(text).astimezone(_dt.timezone.utc)


def rating_sequence(attempts: Sequence[Attempt]) -> list[str]:
    """The FSRS rating each attempt counts as ('again', 'hard', 'good'), in order."""
    out, missed = [], False
    for a in attempts:
        if not a.correct:
            out.append("again")
            missed = True
        else:
            out.append("hard" if missed else "good")
            missed = False
    return out


def first_try(attempts: Sequence[Attempt]) -> list[bool]:
    """Per attempt (in time order): right, with no earlier miss on the same variant."""
    missed: set[int] = set()
    out = []
    for a in attempts:
        out.append(a.correct and a.seed not in missed)
        if not a.correct:
            missed.add(a.seed)
    return out


NEW, MASTERED, AFTER_MISS, MISSED = "new", "mastered", "right after a miss", "missed"
MARKS = {NEW: "·", MASTERED: "✓", AFTER_MISS: "~", MISSED: "✗"}
LEGEND = "✓ mastered (right first time)  ~ right after a miss  ✗ wrong  · not tried."


def state_of_flags(last_correct: bool, mastered: bool) -> str:
    return MASTERED if mastered else (AFTER_MISS if last_correct else MISSED)


def problem_state(attempts: Sequence[Attempt]) -> str:
    """A problem's state from its attempts in time order: new, mastered, right after a miss, missed."""
    if not attempts:
        return NEW
    return state_of_flags(attempts[-1].correct, first_try(attempts)[-1])


def mark(attempts: Sequence[Attempt]) -> str:
    """The list's mark for a problem: ✓ mastered, ~ right after a miss, ✗ missed, · not tried."""
    return MARKS[problem_state(attempts)]


def reviews(attempts: Iterable[Attempt]) -> dict[str, Review]:
    """Per problem with at least one attempt: its next due time and last result. Kept between
    runs (`_kept`): the same attempts replayed by the same scheduler give the same reviews, and
    loading FSRS took more than the rest of `studytui practice`."""
    by_problem: dict[str, list[Attempt]] = {}
    for a in sorted(attempts, key=lambda a: a.at):
        by_problem.setdefault(a.problem_id, []).append(a)
    if not by_problem:
        return {}  # nothing practised yet: not even the scheduler is imported
    digest, files = _digest(by_problem), _fsrs_files()
    kept = _kept(by_problem, digest, files)
    if kept is not None:
        return kept
    taken_at = _time_now()
    out = _replay(by_problem)
    _keep(out, digest, files, taken_at)
    return out


class Imagined:
    """One problem's FSRS card after its attempts, reviewed further by imagined right answers (the
    plan's forecast): each `right_at` is one more review, the same as replaying the attempts with
    a right one added at that time (`reviews`), without replaying them all again or keeping it."""

    def __init__(self, history: Sequence[Attempt]) -> None:
        self._scheduler, self._ratings = _scheduler(), _ratings()
        ordered = sorted(history, key=lambda a: a.at)
        self._card = _card_after(self._scheduler, self._ratings, ordered)
        self._missed = bool(ordered) and not ordered[-1].correct  # a right answer after a miss counts as hard

    @property
    def due(self) -> _dt.datetime:
        return self._card.due

    def right_at(self, at: _dt.datetime) -> _dt.datetime:
        """Review the card as answered right at `at`; the next due time."""
        rating = self._ratings["hard" if self._missed else "good"]
        self._card, _ = self._scheduler.review_card(self._card, rating, review_datetime=at)
        self._missed = False
        return self._card.due


def _ratings() -> dict[str, Any]:
    _import_fsrs()
    from fsrs import Rating

    return {"again": Rating.Again, "hard": Rating.Hard, "good": Rating.Good}


def _card_after(scheduler: Scheduler, ratings: Mapping[str, Any], history: Sequence[Attempt]) -> Card:
    """A new FSRS card reviewed once for each attempt (in the order given) as `rating_sequence` rates it."""
    _import_fsrs()
    from fsrs import Card as NewCard

    card = NewCard(card_id=1)
    for attempt, rating in zip(history, rating_sequence(history)):
        card, _ = scheduler.review_card(card, ratings[rating], review_datetime=_time(attempt.at))
    return card


def _replay(by_problem: Mapping[str, list[Attempt]]) -> dict[str, Review]:
    scheduler, ratings = _scheduler(), _ratings()
    out: dict[str, Review] = {}
    for pid, history in by_problem.items():
        card = _card_after(scheduler, ratings, history)
        last = history[-1]
        clean = first_try(history)[-1]
        out[pid] = Review(pid, card.due, last.correct, len(history), last.seed, sum(a.correct for a in history),
                          mastered=clean, after_miss=last.correct and not clean)
    return out


# -- the replay kept between runs ------------------------------------------------------------------
# One file (studytui.core.jsoncache) holding the reviews of the last set of attempts replayed, with
# a BLAKE2b digest of everything the replay reads from them (each attempt's problem, time, variant
# and result, in order). It is used only for exactly those attempts, replayed by this code and the
# same installed FSRS (its files are the stamps); anything else replays again.
_CACHE_NAME = "practice-schedule:1"
_CACHE_CODE = ("practice/schedule.py", "core/jsoncache.py")


def _time_now() -> float:
    from studytui.core import jsoncache

    return jsoncache.now()


def _digest(by_problem: Mapping[str, list[Attempt]]) -> str:
    from studytui.core.jsoncache import digest_hex

    rows = [[pid, a.at, a.seed, bool(a.correct)] for pid, history in by_problem.items() for a in history]
    return digest_hex(repr(rows).encode("utf-8", "surrogatepass"))


def _fsrs_files() -> list[str]:
    """The installed FSRS package's modules, found without importing it (empty when it is not
    installed: then nothing is kept, and the replay says why it cannot run)."""
    import os
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec("fsrs")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = list(spec.submodule_search_locations)[0]
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
    except OSError:
        return []
    return [folder] + [os.path.join(folder, n) for n in names]


_REVIEW_TYPES = (str, bool, int, int, int, bool, bool)


def _kept(by_problem: Mapping[str, list[Attempt]], digest: str, files: list[str]) -> dict[str, Review] | None:
    from studytui.core import jsoncache

    got = jsoncache.get(_CACHE_NAME, _CACHE_CODE, files) if files else None
    if got is None:
        return None
    value, _ = got
    if type(value) is not dict or value.get("digest") != digest:
        return None
    rows = value.get("reviews")
    if type(rows) is not dict or rows.keys() != by_problem.keys():
        return None
    out: dict[str, Review] = {}
    for pid, row in rows.items():
        if type(row) is not list or len(row) != len(_REVIEW_TYPES) or any(type(v) is not t for v, t in zip(row, _REVIEW_TYPES)):
            return None
        try:
            due_at = _dt.datetime.fromisoformat(row[0])
        except ValueError:
            return None
        if due_at.tzinfo is None:
            return None
        out[pid] = Review(pid, due_at, *row[1:])
    return out


def _keep(out: Mapping[str, Review], digest: str, files: list[str], taken_at: float) -> None:
    from studytui.core import jsoncache

    if not files:
        return
    rows = {pid: [r.due.isoformat(), bool(r.last_correct), int(r.attempts), int(r.last_seed), int(r.correct_count),
                  bool(r.mastered), bool(r.after_miss)] for pid, r in out.items()}
    jsoncache.put(_CACHE_NAME, {"digest": digest, "reviews": rows}, jsoncache.stamps_of(files), _CACHE_CODE, taken_at)


# -- the plan's imagined reviews, kept between runs ----------------------------------------------
# A problem whose review is not yet due gets the same imagined reviews whenever the plan is made:
# the first at its due time, each next at the due time the one before gives. They depend on its
# attempts and on FSRS alone, not on the clock, so they are kept per problem (keyed by a digest
# of its attempts and the first review's time) and a plan made again neither replays nor imports
# FSRS for them. (The plan imagines an overdue review at the start of today: the same all day.)
_FORECAST_NAME = "practice-forecast:1"
_FORECAST_MARGIN = _dt.timedelta(days=366)  # worked out this much further than asked, for the next days' plans
_FORECAST_ROWS = 4096  # problems' rows kept in all (this run's first): a file of a few hundred KB at most


def imagined_times(histories: Mapping[str, Sequence[Attempt]], starts: Mapping[str, _dt.datetime],
                   until: _dt.datetime, limit: int) -> dict[str, list[_dt.datetime]]:
    """Per problem of `starts`: the times of its imagined right answers (UTC), the first at its
    start, each next at the due time FSRS gives after the one before (a day later when it gives
    none later), every one before `until`, at most `limit`. The same as walking `Imagined`
    forward; kept between runs (see above)."""
    files = _fsrs_files()
    kept = _kept_times(files)
    out: dict[str, list[_dt.datetime]] = {}
    used: dict[str, tuple[_dt.datetime, list[_dt.datetime]]] = {}
    fresh = False
    for pid, start in starts.items():
        key = _times_key(histories[pid], start)
        got = kept.get(key)
        if got is None or not (got[0] >= until or len(got[1]) >= limit):
            reach = until + _FORECAST_MARGIN
            got, fresh = (reach, _walk(histories[pid], start, reach, limit)), True
        used[key] = got
        out[pid] = [t for t in got[1] if t < until]
    if fresh and files:
        # This run's rows first, then what other stores (another --data-dir) had kept, up to a bound.
        others = [(key, row) for key, row in kept.items() if key not in used][: max(0, _FORECAST_ROWS - len(used))]
        _keep_times({**used, **dict(others)}, files)
    return out


def _walk(history: Sequence[Attempt], start: _dt.datetime, until: _dt.datetime, limit: int) -> list[_dt.datetime]:
    imagined = Imagined(history)
    at = start.astimezone(_dt.timezone.utc)
    times: list[_dt.datetime] = []
    while len(times) < limit and at < until:
        times.append(at)
        following = imagined.right_at(at).astimezone(_dt.timezone.utc)
        at = following if following > at else at + _dt.timedelta(days=1)
    return times


def _times_key(history: Sequence[Attempt], start: _dt.datetime) -> str:
    from studytui.core.jsoncache import digest_hex

    rows = [[a.at, a.seed, bool(a.correct)] for a in sorted(history, key=lambda a: a.at)]
    return digest_hex(repr((rows, start.astimezone(_dt.timezone.utc).isoformat())).encode("utf-8", "surrogatepass"))


def _kept_times(files: list[str]) -> dict[str, tuple[_dt.datetime, list[_dt.datetime]]]:
    """The kept imagined reviews, by key (`_times_key`): (worked out until, times); only rows
    that check out (times aware, in order, before their end), and none when FSRS or this code
    changed."""
    from studytui.core import jsoncache

    got = jsoncache.get(_FORECAST_NAME, _CACHE_CODE, files) if files else None
    if got is None or type(got[0]) is not dict:
        return {}
    out = {}
    for key, row in got[0].items():
        try:
            end, texts = row
            if type(end) is not str or type(texts) is not list or not all(type(t) is str for t in texts):
                continue
            reach = _dt.datetime.fromisoformat(end)
            times = [_dt.datetime.fromisoformat(t) for t in texts]
        except (TypeError, ValueError):
            continue
        if reach.tzinfo is None or any(t.tzinfo is None for t in times):
            continue
        if any(b <= a for a, b in zip(times, times[1:])) or (times and times[-1] >= reach):
            continue
        out[key] = (reach, times)
    return out


def _keep_times(rows: Mapping[str, tuple[_dt.datetime, list[_dt.datetime]]], files: list[str]) -> None:
    from studytui.core import jsoncache

    value = {key: [reach.isoformat(), [t.isoformat() for t in times]] for key, (reach, times) in rows.items()}
    jsoncache.put(_FORECAST_NAME, value, jsoncache.stamps_of(files), _CACHE_CODE, jsoncache.now())


def due(review_map: Mapping[str, Review], now: _dt.datetime, known: Iterable[str] | None = None) -> list[Review]:
    """Reviews due at `now`, most overdue first (only problems in `known`, when given)."""
    keep = set(known) if known is not None else None
    items = [r for r in review_map.values() if r.due <= now and (keep is None or r.problem_id in keep)]
    return sorted(items, key=lambda r: r.due)


REVEALED = "(solution shown)"  # the answer recorded when a learner sees the solution before a right answer


def current_seed(attempts: Sequence[Attempt]) -> int:
    """The variant a learner works on now: a new one after each correct answer and after each
    solution shown before one (a revealed variant is spent), the same one after a miss (so hints
    apply to the numbers on screen)."""
    return sum(1 for a in attempts if a.correct or a.answer == REVEALED)


def revealed(attempts: Sequence[Attempt], seed: int) -> bool:
    """Whether the solution of this variant was shown before it was answered right."""
    return any(a.seed == seed and a.answer == REVEALED for a in attempts)


def misses_since_hit(attempts: Sequence[Attempt]) -> int:
    n = 0
    for a in reversed(attempts):
        if a.correct:
            break
        n += 1
    return n


class Mastery(Tuple):
    """One section's practice: how many problems, tried, mastered, due."""

    section_id: str
    problems: int
    attempted: int
    mastered: int  # last answer right at the first try on its variant
    due: int
    after_miss: int = 0  # last answer right, after a miss on its variant: not mastered


    @property
    def share(self) -> float:
        return self.mastered / self.problems if self.problems else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "section_id": self.section_id, "problems": self.problems, "attempted": self.attempted,
            "mastered": self.mastered, "mastery": round(self.share, 4), "right_after_miss": self.after_miss, "due": self.due,
        }


def mastery(problems_by_section: Mapping[str, Sequence[str]], review_map: Mapping[str, Review], now: _dt.datetime) -> dict[str, Mastery]:
    """Per section: the share of its problems mastered (last answer right at the first try on its
    variant), how many were last right only after a miss, and how many are due."""
    out = {}
    for sid, ids in problems_by_section.items():
        rs = [review_map[i] for i in ids if i in review_map]
        out[sid] = Mastery(sid, len(ids), len(rs), sum(r.mastered for r in rs), sum(r.due <= now for r in rs),
                           after_miss=sum(r.after_miss for r in rs))
    return out
