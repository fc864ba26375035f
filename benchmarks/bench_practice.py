"""Speed of practice: loading the problems, grading (one calculator run per answer), the review
schedule replayed from attempts, and the commands as a learner runs them.

Targets: grading an answer well under one frame in process (< 16 ms, so the app's Enter feels
instant); `studytui practice show/answer` under 200 ms wall, like the other commands.
Run: python benchmarks/bench_practice.py
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import report, studytui_command, time_process  # noqa: E402


def load_times(runs: int = 20) -> list[float]:
    from studytui.core.paths import content_dir
    from studytui.practice.loader import parse_problems

    times = []
    for _ in range(runs):
        start = time.perf_counter()
        parsed = parse_problems(content_dir())
        times.append(time.perf_counter() - start)
        assert parsed.problems and not parsed.errors
    return times


def grade_times() -> list[float]:
    from studytui.practice.grading import expected
    from studytui.practice.loader import load_problems

    times = []
    for problem in load_problems().problems:
        for seed in range(3):
            variant = problem.variant(seed)
            start = time.perf_counter()
            expected(variant)
            times.append(time.perf_counter() - start)
    return times


def replay_times(n_attempts: int = 2000, runs: int = 5) -> list[float]:
    from studytui.practice.schedule import reviews
    from studytui.store.attempts import Attempt

    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    attempts = [
        Attempt((t0 + dt.timedelta(hours=7 * i)).isoformat(), f"p{i % 60}", i // 60, "1", i % 3 != 0)
        for i in range(n_attempts)
    ]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        reviews(attempts)
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    cmd = studytui_command()
    env = dict(os.environ, STUDYTUI_DATA_DIR=tempfile.mkdtemp(prefix="studytui-bench-"))
    ok = True
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    report("load + validate all problems (in process, uncached)", load_times())
    ok &= report("grade one variant (calculator run, in process)", grade_times(), 0.016)
    report("replay the schedule of 2,000 attempts (in process)", replay_times())
    ok &= report("studytui practice show sh-time-floor", time_process(cmd + ["practice", "show", "sh-time-floor"], env=env), 0.200)
    ok &= report(
        "studytui practice answer ... --json", time_process(cmd + ["practice", "answer", "sh-time-floor", "1 ms", "--json"], env=env), 0.200
    )
    report("studytui practice due --json", time_process(cmd + ["practice", "due", "--json"], env=env))
    report("studytui progress --json", time_process(cmd + ["progress", "--json"], env=env))
    # The same machine's reference: a busy machine slows every command alike.
    report("reference: studytui list --json", time_process(cmd + ["list", "--json"], env=env))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
