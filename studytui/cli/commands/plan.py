"""`studytui plan`: a study plan from the learner's own pace (issue 29).

    studytui plan [--hours-per-week H | --by DATE] [--json]

The figures come from `studytui.study.plan` (pure functions); this module reads the guide and the
store (`study.workspace.read_workspace`) and `plan.yaml`, and prints. It only reads: the store is
never written (a file that opening would upgrade is refused instead, with what to run), and
aliases are followed in memory, not in the file.

Only argparse and the standard library at module level; the handler imports the rest.
"""

from __future__ import annotations

import argparse
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from studytui.core.clock import local_zone as _local_zone  # the one choice of zone, shared with the app

DESCRIPTION = (
    "How long what is left of the guide takes, when you finish at your pace, what to read today, and "
    "a calendar of the last year. Every figure is an estimate: each entry starts from a default for its "
    "kind (plan.yaml in the data directory can change them), calibrated from your own history (the time "
    "from first opening an entry to marking it done, gaps over 3 h dropped). The pace is your study time "
    "per study day and study days per week over the last 8 weeks; --hours-per-week H sets a weekly budget "
    "instead, --by DATE gives the hours per week a goal date needs. Practice reviews due (FSRS) are "
    "counted as their own load. Nothing is written. See docs/study-plan.md."
)


def register(sub: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    p = sub.add_parser("plan", help="a study plan from your own pace: estimates, finish date, today, activity",
                       description=DESCRIPTION)
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--hours-per-week", metavar="H", help="plan with a weekly budget of H hours (more than 0, at most 168)")
    budget.add_argument("--by", metavar="DATE", help="the hours per week needed to finish by DATE (YYYY-MM-DD, today or later)")
    p.add_argument("--json", action="store_true", help="machine-readable output (durations in seconds)")
    p.set_defaults(func=cmd_plan)


# The clock and the time zone, read here (the front end), never inside the plan's logic. Tests
# replace `_now`.
def _now() -> datetime:
    return datetime.now(timezone.utc)


def cmd_plan(args: argparse.Namespace) -> int:
    from studytui.study import plan as planning

    now = _now()
    tz, zone_name = _local_zone()
    today = now.astimezone(tz).date()
    # Bad input is refused before anything is opened.
    hours = planning.parse_hours_per_week(args.hours_per_week) if args.hours_per_week is not None else None
    by = planning.parse_by(args.by, today) if args.by is not None else None

    from studytui.core.paths import data_dir
    from studytui.study.flow import canonical_states, pending_start
    from studytui.study.workspace import read_workspace

    directory = data_dir(args.data_dir)
    config = planning.load_config(directory / planning.CONFIG_NAME)
    workspace = read_workspace(args.content, directory, command="plan")
    guide, events, stored, attempts = workspace.guide, workspace.events, workspace.states, workspace.attempts
    states, _ = canonical_states(guide, stored)
    following = pending_start(guide, stored)  # the pending entries start there; those being learned come first
    problem_ids = _problems_in_content(Path(guide.content_dir), {a.problem_id for a in attempts}) if attempts else None
    result = planning.build_plan(
        guide, states, events, attempts, now, tz, config=config, hours_per_week=hours, by=by,
        start_index=following.index if following is not None else None, problem_ids=problem_ids,
        time_zone_name=zone_name,
    )
    if args.json:
        from studytui.cli.output import print_json

        print_json(result.to_dict())
        return 0
    _print_report(result)
    return 0


def _problems_in_content(content: Path, attempted: set[str]) -> set[str]:
    """Which of the attempted problems the content still has: those whose id appears in its
    problem files (as a whole word). Reviews of the others are not planned, as `practice due`
    leaves them out. This looks at the text rather than loading and checking every problem (a
    YAML parse that would double the command's start): a false match only keeps a review, and an
    unreadable file keeps them all."""
    from studytui.core import fileio

    folder = content / "problems"
    found: set[str] = set()
    try:
        files = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    except OSError:
        return set(attempted)
    for path in files:
        try:
            text = fileio.read_text_bounded(path, fileio.YAML_LIMIT, "a problem file")
        except (OSError, UnicodeDecodeError, fileio.RefusedFileError):
            return set(attempted)
        for pid in attempted - found:
            if _whole_word_in(pid, text):
                found.add(pid)
    return found


def _whole_word_in(word: str, text: str) -> bool:
    """Whether `word` occurs in `text` with neither a word character nor a hyphen on either side
    (what the pattern `(?<![\\w-])WORD(?![\\w-])` finds). With str.find: a pattern per problem id
    was compiled and run over every problem file, 57 ms for 91 practised problems (issue 27)."""
    size, end = len(word), len(text)
    at = text.find(word)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + size] if at + size < end else " "
        if not (before.isalnum() or before in "_-") and not (after.isalnum() or after in "_-"):
            return True
        at = text.find(word, at + 1)
    return False


# -- the report -----------------------------------------------------------------------------------

# A figure and its unit ("1 h 5 min", "3 h", "12 entries") stay on one line when the report wraps.
_FIGURE = re.compile(r"~ \S+|\d[\d,.]* (?:h(?: \d+ min)?|min|s|days?|weeks?|(?:more |finished |study )?(?:entries|entry|days?))\b")
_SHADE_STYLES = ("grey42", "green4", "green3", "green1", "bold bright_green")
_HOW = {"history": "your pace", "hours-per-week": "your weekly budget", "by": "the pace your goal needs"}


def _print_report(result: Any) -> None:
    from studytui.cli.output import LinePrinter, console

    with LinePrinter(console()) as con:  # some forty lines: printed together
        _report(result, con)


def _report(result: Any, con: Any) -> None:
    from rich.text import Text

    from studytui.cli.output import plural
    from studytui.core.state import glyph_of
    from studytui.study.plan import SHADE_LEGEND, SHADES, duration_text, heatmap_rows, later_text, pace_text, shade

    d = duration_text
    con.print(Text("Study plan: every duration and date below is an estimate", style="bold"), soft_wrap=True)
    local = result.as_of.astimezone(result.tz)
    _wrap(f"as of {local:%a %Y-%m-%d %H:%M} ({result.time_zone})", con=con, style="dim")
    con.print()

    left = result.estimates
    if left:
        _wrap(f"about {d(result.remaining_s)} for {plural(len(left), 'entry')} not done yet",
              first="Remaining  ", rest=" " * 11, con=con)
    else:
        _wrap("nothing: every entry is done or skipped", first="Remaining  ", rest=" " * 11, con=con)
    pace = result.pace
    if pace is None:
        _wrap("not measured yet" if not result.measured_pace.window_days else
              f"no study time in the last {result.measured_pace.window_days} days",
              first="Pace       ", rest=" " * 11, con=con)
    else:
        _wrap(pace_text(pace, result.today_date), first="Pace       ", rest=" " * 11, con=con)
    if result.reviews_before_finish:
        _wrap(
            f"{plural(result.reviews_before_finish, 'practice review')} forecast before the finish, about "
            f"{d(result.reviews_before_finish * result.reviews.review_s)} (each {d(result.reviews.review_s)})",
            first="Reviews    ", rest=" " * 11, con=con,
        )
    if result.finish is not None and left:
        weeks = (result.finish - result.today_date).days / 7
        span = "today" if result.finish == result.today_date else (
            f"in {(result.finish - result.today_date).days} days" if weeks < 2 else f"in about {weeks:.0f} weeks")
        _wrap(f"~ {result.finish.isoformat()} at {_HOW[pace.source]} ({span})", first="Finish     ",
              rest=" " * 11, con=con, style="bold")
    elif left:
        _wrap(result.finish_note, first="Finish     ", rest=" " * 11, con=con)
    con.print()

    today = result.today
    con.print(Text(f"Today, {today.date:%a %Y-%m-%d}", style="bold"), soft_wrap=True)
    if today.share_s is not None:
        line = f"share {d(today.share_s)}, studied {d(today.studied_s)}"
        if today.reviews or today.later:
            line += f", reviews {d(today.reviews_s)}"
        _wrap(f"{line}: {d(today.left_s or 0)} left", first="  ", con=con)
    # Due now means what `studytui practice due` offers now (the same rule); the rest of today's
    # reviews are named with the time practice offers each from.
    if today.reviews:
        ids = ", ".join(pid for pid, _ in today.reviews[:5]) + (", ..." if len(today.reviews) > 5 else "")
        _wrap(f"{plural(len(today.reviews), 'review')} due now: {ids} ('studytui practice due')", first="  ", con=con)
    if today.later:
        _wrap(f"{plural(len(today.later), 'review')} due later today: {later_text(today.later, result.tz, 5)} "
              "('studytui practice due' offers each from its time)", first="  ", con=con)
    if today.entries:
        for item in today.entries:
            e = item.estimate
            tail = "" if item.fits else " (starts today, carries on)"
            _wrap(f"{e.entry.id}: {e.entry.title} - {d(e.remaining_s)} left{tail}",
                  first=f"  {glyph_of(e.state)} ", con=con)
    elif left and today.share_s is not None:
        nxt = today.next_up
        _wrap(f"today's share is used up; next: {nxt.entry.id if nxt else '-'}", first="  ", con=con)
    if today.share_s is None and left:
        why = "the goal is out of reach" if pace is not None and not pace.feasible else "no pace yet"
        _wrap(f"({why}, so only the next entry is shown)", first="  ", con=con, style="dim")
    con.print()

    cal = result.calibration
    con.print(Text("Estimates per kind (yours = the default x your factor)", style="bold"), soft_wrap=True)
    kinds_in_guide = sorted({_kind(e) for e in result.estimates} | set(cal.kinds))
    con.print(Text(f"  {'kind':<10}{'default':>12}{'yours':>14}  from", style="dim"), soft_wrap=True)
    for key in _ordered_kinds(kinds_in_guide):
        f = cal.factor(key)
        default = result.config.kind_minutes(key) * 60
        source = {
            "kind": f"{plural(f.samples, 'entry')} of this kind",
            "overall": f"all {plural(cal.samples, 'entry')}" + (f" ({f.samples} of this kind)" if f.samples else ""),
            "default": "the default (no history)",
        }[f.basis]
        con.print(Text(f"  {key:<10}{d(default):>12}{d(default * f.factor):>14}  {source}"), soft_wrap=True)
    _wrap(f"method: {cal.method}" + (f"; configuration: {result.config.source}" if result.config.source else ""),
          first="  ", con=con, style="dim")
    _wrap("'studytui plan --json' lists every entry left with its estimate", first="  ", con=con, style="dim")
    con.print()

    days = result.days
    studied_days = sum(1 for x in days if x.seconds > 0)
    total = sum(x.seconds for x in days)
    _wrap(f"Activity, last 12 months: {plural(studied_days, 'study day')}, {d(total)} in all", con=con, style="bold")
    _wrap(f"streak: {plural(result.streak_days, 'day')} now, longest {plural(result.longest_streak_days, 'day')}",
          first="  ", con=con)
    rows = heatmap_rows(days)
    con.print(Text("    " + rows[0][0]), soft_wrap=True)
    for label, cells in rows[1:]:
        week_row = Text(f"{label} ")
        run, run_style = "", None  # days of one shade in a row: one stretch of text, one style
        for cell in cells:
            if cell is None:
                ch, style = " ", None
            else:
                ch = shade(cell.seconds, cell.events)
                style = _SHADE_STYLES[SHADES.index(ch)]
            if style != run_style and run:
                week_row.append(run, style=run_style)
                run = ""
            run, run_style = run + ch, style
        week_row.append(run, style=run_style)
        week_row.rstrip()
        con.print(week_row, soft_wrap=True)
    _wrap(SHADE_LEGEND, first="    ", con=con, style="dim")
    if result.notes:
        con.print()
        for note in result.notes:
            _wrap(note, first="note: ", con=con, style="dim")


def _kind(estimate: Any) -> str:
    from studytui.study.plan import kind_key

    return kind_key(estimate.entry)


def _ordered_kinds(keys: list[str]) -> list[str]:
    from studytui.study.plan import DEFAULT_MINUTES, NO_SOURCE

    order = [*DEFAULT_MINUTES, NO_SOURCE]
    return [k for k in order if k in keys]


def _wrap(text: str, first: str = "", rest: str | None = None, con: Any = None, style: str | None = None) -> None:
    from studytui.cli.output import print_wrapped

    print_wrapped(text, first=first, rest=rest, con=con, style=style, keep=_FIGURE.findall(text))
