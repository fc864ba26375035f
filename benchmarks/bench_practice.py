"""Speed of practice: loading the problems, grading (one calculator run per answer), the review
schedule replayed from attempts, and the commands as a learner runs them.

Targets: grading an answer well under one frame in process (CPU < 16 ms, so the app's Enter feels
instant); the practice commands within 1.5x of `python -c "import rich.console"` by CPU, like
every other command (issue 27): interleaved with that yardstick in the same run, median and
minimum of the rounds (see benchmarks/_timing.py). Runs in temporary data, cache and XDG
directories. Exits 1 when a target is missed.

Run: python benchmarks/bench_practice.py [--rounds N] [--warmup N] [--runs N] [--limit 1.5]
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import (  # noqa: E402
    Sample,
    clock,
    command_arguments,
    compare_commands,
    isolate,
    machine_line,
    report,
    since,
    studytui_command,
)

COMMANDS = [
    ("practice show", ["practice", "show", "sh-time-floor"]),
    ("practice answer --json", ["practice", "answer", "sh-time-floor", "1 ms", "--json"]),
    ("practice due --json", ["practice", "due", "--json"]),
    ("progress --json", ["progress", "--json"]),
]


def load_times(runs: int = 20) -> list[Sample]:
    from studytui.core.paths import content_dir
    from studytui.practice.loader import parse_problems

    times = []
    for _ in range(runs):
        start = clock()
        parsed = parse_problems(content_dir())
        times.append(since(start))
        assert parsed.problems and not parsed.errors
    return times


def grade_times() -> list[Sample]:
    from studytui.practice.grading import expected
    from studytui.practice.loader import load_problems

    times = []
    for problem in load_problems().problems:
        for seed in range(3):
            variant = problem.variant(seed)
            start = clock()
            expected(variant)
            times.append(since(start))
    return times


def replay_times(n_attempts: int = 2000, runs: int = 5) -> list[Sample]:
    from studytui.practice.schedule import reviews
    from studytui.store.attempts import Attempt

    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    attempts = [
        Attempt((t0 + dt.timedelta(hours=7 * i)).isoformat(), f"p{i % 60}", i // 60, "1", i % 3 != 0)
        for i in range(n_attempts)
    ]
    times = []
    for _ in range(runs):
        start = clock()
        reviews(attempts)
        times.append(since(start))
    return times


def main(argv: list[str] | None = None) -> int:
    args = command_arguments(__doc__, argv, runs=(20, 'the problem load'))
    isolate("studytui-bench-practice-")
    print(machine_line(), flush=True)
    ok = True
    report("load + validate all problems (in process, uncached)", load_times(args.runs))
    ok &= report("grade one variant (calculator run, in process)", grade_times(), 0.016)
    report("replay the schedule of 2,000 attempts (in process)", replay_times())
    cmd = studytui_command()
    over = compare_commands([(label, cmd + argv) for label, argv in COMMANDS], rounds=args.rounds, warmup=args.warmup,
                            limit=args.limit)
    return 0 if ok and not over else 1


if __name__ == "__main__":
    raise SystemExit(main())
