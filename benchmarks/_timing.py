"""Shared helpers for the benchmarks.

- `isolate()`: a temporary data, cache and XDG directory for this run, so a benchmark never reads
  or writes a learner's own files (the guide cache included); removed when the run ends.
- `interleave()`: whole-process runs of a yardstick and the commands, one of each per round in a
  shuffled order, each timed by wall clock and by CPU (the child's user + system time, from
  os.wait4). A machine that slows down mid-run slows every job of a round alike.
- `figures()` / `print_ratios()`: the median and the minimum of those rounds, each as a ratio to
  the yardstick's median and minimum in the same run. The criterion is the CPU ratio (median):
  on a shared machine a process waits for a core for part of its wall time, and the wait says
  more about the neighbours than about the command.
- `report()`: in-process figures, wall and CPU (time.process_time), median and minimum.
"""

from __future__ import annotations

import argparse
import atexit
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

Sample = tuple[float, float]  # (wall seconds, CPU seconds)

RICH_IMPORT = "import rich.console"
RICH_LABEL = f'python -c "{RICH_IMPORT}"'
LIMIT = 1.5  # issue 27: every everyday command within 1.5x of the Rich import
ISOLATED_VARS = ("STUDYTUI_DATA_DIR", "STUDYTUI_CACHE_DIR", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                 "XDG_STATE_HOME", "PYTHONPYCACHEPREFIX")


def studytui_command() -> list[str]:
    exe = shutil.which("studytui", path=os.path.dirname(sys.executable)) or shutil.which("studytui")
    return [exe] if exe else [sys.executable, "-m", "studytui.cli"]


def argument_parser(doc: str | None) -> argparse.ArgumentParser:
    """A parser whose --help prints the benchmark's docstring as written."""
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def command_arguments(doc: str | None, argv: list[str] | None, *, runs: tuple[int, str] | None = None,
                      limit: bool = True, what: str = "commands") -> argparse.Namespace:
    """The arguments every command benchmark takes: --rounds and --warmup of the interleaved
    rounds, --runs (default, what is run) of an in-process part, --limit of the CPU ratio;
    checked, with one usage line for a bad value."""
    parser = argument_parser(doc)
    parser.add_argument("--rounds", type=int, default=9, help=f"measured interleaved rounds of the {what} (default 9)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured rounds first (default 1)")
    if runs is not None:
        parser.add_argument("--runs", type=int, default=runs[0], help=f"in-process runs of {runs[1]} (default {runs[0]})")
    if limit:
        whose = f"{what}'" if what.endswith("s") else f"{what}'s"
        parser.add_argument("--limit", type=float, default=LIMIT, help=f"the {whose} CPU ratio limit (default {LIMIT})")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.warmup < 0 or (runs is not None and args.runs < 1):
        parser.error("--rounds" + (" and --runs" if runs is not None else "") + " must be at least 1, --warmup at least 0")
    return args


def isolate(prefix: str = "studytui-bench-") -> Path:
    """Point this process, and every process it starts, at a fresh temporary folder: data
    (STUDYTUI_DATA_DIR), cache (STUDYTUI_CACHE_DIR), the XDG data/cache/config/state homes and
    Python's bytecode cache (PYTHONPYCACHEPREFIX, so no run writes into the checkout or the
    virtualenv). Call it after parsing the arguments (so --help creates nothing) and before
    importing studytui. The folder is removed when the process exits; returns it."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, root, True)
    paths = {
        "STUDYTUI_DATA_DIR": root / "data",
        "STUDYTUI_CACHE_DIR": root / "cache",
        "XDG_DATA_HOME": root / "xdg" / "data",
        "XDG_CACHE_HOME": root / "xdg" / "cache",
        "XDG_CONFIG_HOME": root / "xdg" / "config",
        "XDG_STATE_HOME": root / "xdg" / "state",
        "PYTHONPYCACHEPREFIX": root / "pycache",
    }
    for name, path in paths.items():
        if name != "STUDYTUI_DATA_DIR":  # the store creates its own directory, private
            path.mkdir(parents=True)
        os.environ[name] = str(path)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached (under the prefix), as in an install
    return root


def isolated_env() -> dict[str, str]:
    """The variables isolate() set, to pass on where the environment is not inherited (tmux)."""
    return {name: os.environ[name] for name in ISOLATED_VARS if name in os.environ}


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1, 5, 15 min)"
    except OSError:
        return "n/a"


def machine_line() -> str:
    return (f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}; "
            f"load average before: {load_average()}")


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    cpu: float  # seconds of user + system time, the child's and its waited-for children's
    rss_mib: float  # peak resident memory


def run_process(argv: Sequence[str], env: dict[str, str] | None = None) -> Run | str:
    """One whole-process run (stdout discarded), or why it failed (its last line of stderr)."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    proc.stderr.close()
    if proc.returncode != 0:
        last = (err.decode(errors="replace").strip().splitlines() or [""])[-1][:160]
        return f"exit {proc.returncode}: {last}"
    return Run(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)  # ru_maxrss: KiB on Linux


@dataclass
class Job:
    label: str
    argv: list[str]
    env: dict[str, str] | None = None
    before: Callable[[], None] | None = None  # run before each of its runs, not timed


def interleave(jobs: Sequence[Job], rounds: int, warmup: int = 1, seed: int = 27,
               ) -> tuple[dict[str, list[Sample]], dict[str, str]]:
    """({label: [(wall, CPU) per measured round]}, {label: why it failed}): every job once per round,
    in a new shuffled order each round; the first `warmup` rounds are not kept."""
    samples: dict[str, list[Sample]] = {job.label: [] for job in jobs}
    failed: dict[str, str] = {}
    order = list(jobs)
    shuffle = random.Random(seed)
    for i in range(warmup + rounds):
        shuffle.shuffle(order)
        for job in order:
            if job.label in failed:
                continue
            if job.before is not None:
                job.before()
            run = run_process(job.argv, job.env)
            if isinstance(run, str):
                failed[job.label] = run
            elif i >= warmup:
                samples[job.label].append((run.wall, run.cpu))
    return samples, failed


def instructions(argv: Sequence[str], env: dict[str, str] | None = None) -> int | str:
    """The instructions one whole-process run executes, counted by valgrind (callgrind, no file
    written), or why it could not be counted. Unlike time, the count does not move with the load
    of the machine or its clock: the same command, the same count, within a fraction of a
    percent from run to run (valgrind runs it about 50 times slower), with the hash seed fixed."""
    import re
    import shutil

    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return "valgrind is not installed (apt-get install valgrind)"
    # One hash seed for every count: with a random one, the layout of dicts and sets (and so the
    # instructions) moves by a few million from run to run.
    env = {**(os.environ if env is None else env), "PYTHONHASHSEED": "0"}
    proc = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = proc.stderr.decode(errors="replace")
    found = re.findall(r"^==\d+== Collected : (\d+)$", err, re.M)
    if proc.returncode != 0 or not found:
        return f"exit {proc.returncode}: " + (err.strip().splitlines() or [""])[-1][:160]
    return int(found[-1])


@dataclass(frozen=True)
class Figure:
    label: str
    wall: float  # median seconds
    wall_min: float
    cpu: float  # median seconds
    cpu_min: float
    wall_ratio: float  # median over the yardstick's median
    wall_min_ratio: float  # minimum over the yardstick's minimum
    cpu_ratio: float
    cpu_min_ratio: float
    n: int

    def over(self, limit: float | None) -> bool:
        """Over the limit by the criterion: the CPU ratio of the medians."""
        return limit is not None and self.cpu_ratio > limit


def _ratio(x: float, floor: float) -> float:
    return x / floor if floor > 0 else math.inf


def figures(samples: dict[str, list[Sample]], yardstick: str) -> list[Figure]:
    """Every label with samples, the yardstick first, as medians, minimums and their ratios to the
    yardstick's (median to median, minimum to minimum)."""
    base = samples[yardstick]
    if not base:
        raise SystemExit(f"the yardstick ({yardstick}) has no measured run")
    w0, c0 = statistics.median(w for w, _ in base), statistics.median(c for _, c in base)
    wm0, cm0 = min(w for w, _ in base), min(c for _, c in base)
    out = []
    for label in [yardstick] + [k for k in samples if k != yardstick]:
        runs = samples[label]
        if not runs:
            continue
        w, c = statistics.median(x for x, _ in runs), statistics.median(x for _, x in runs)
        wm, cm = min(x for x, _ in runs), min(x for _, x in runs)
        out.append(Figure(label, w, wm, c, cm, _ratio(w, w0), _ratio(wm, wm0), _ratio(c, c0), _ratio(cm, cm0), len(runs)))
    return out


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def print_ratios(results: list[Figure], failed: dict[str, str], *, rounds: int, warmup: int, limit: float | None,
                 label_width: int = 24) -> list[str]:
    """Print the table (CPU first: the criterion; wall second) and return the labels over `limit`
    (by CPU ratio of the medians) or failed."""
    floor = results[0]
    print(f"yardstick: {floor.label}: CPU median {floor.cpu * 1000:.1f} ms (min {floor.cpu_min * 1000:.1f}), "
          f"wall median {floor.wall * 1000:.1f} ms (min {floor.wall_min * 1000:.1f}); "
          f"{_count(rounds, 'interleaved round')} after {warmup} unmeasured")
    if warmup == 0:
        print("  note: no unmeasured round, so the measured ones include writing every module's bytecode into this "
              "run's fresh cache (PYTHONPYCACHEPREFIX)")
    if floor.wall > 0 and floor.cpu / floor.wall < 0.8:
        print(f"  note: the yardstick ran on a core for {floor.cpu / floor.wall:.0%} of its wall time (a busy machine): "
              "read the CPU ratios")
    criterion = f"; criterion: CPU ratio (median) <= {limit}x" if limit is not None else ""
    print(f"ratios to the yardstick: median / median and min / min{criterion}")
    print(f"  {'command':<{label_width}} {'CPU median':>10} {'ratio':>6} {'min':>6}   {'wall median':>11} {'ratio':>6} {'min':>6}")
    over = []
    for fig in results[1:]:
        flag = ""
        if fig.over(limit):
            over.append(fig.label)
            flag = f"   << OVER {limit}x (CPU)" + ("" if fig.cpu_min_ratio > (limit or 0) else "; the minimums are within")
        print(f"  {fig.label:<{label_width}} {fig.cpu * 1000:7.1f} ms {fig.cpu_ratio:5.2f}x {fig.cpu_min_ratio:5.2f}x   "
              f"{fig.wall * 1000:8.1f} ms {fig.wall_ratio:5.2f}x {fig.wall_min_ratio:5.2f}x{flag}")
    for label, why in failed.items():
        print(f"  {label:<{label_width}} FAILED ({why})")
        over.append(label)
    print(f"load average after: {load_average()}")
    if limit is not None:
        print(f"over {limit}x by CPU: {', '.join(over)}" if over else f"every command within {limit}x by CPU")
    return over


def markdown(results: list[Figure], prefix: str = "") -> str:
    """The table as Markdown: CPU ratios first (the criterion), wall ratios second."""
    lines = ["| Command | CPU ratio (median) | CPU ratio (min) | Wall ratio (median) | Wall ratio (min) |", "|---|---|---|---|---|"]
    floor = results[0]
    lines.append(f"| `{floor.label}` (the yardstick: {floor.cpu * 1000:.0f} ms CPU, {floor.wall * 1000:.0f} ms wall) "
                 "| 1.00x | 1.00x | 1.00x | 1.00x |")
    for fig in results[1:]:
        lines.append(f"| `{prefix}{fig.label}` | {fig.cpu_ratio:.2f}x | {fig.cpu_min_ratio:.2f}x | {fig.wall_ratio:.2f}x "
                     f"| {fig.wall_min_ratio:.2f}x |")
    return "\n".join(lines)


def compare_commands(commands: Sequence[tuple[str, list[str]]], *, rounds: int, warmup: int, limit: float | None,
                     yardstick: tuple[str, list[str]] | None = None, env: dict[str, str] | None = None) -> list[str]:
    """Interleave the yardstick (the Rich import unless given) with `commands` (label, argv), print
    the ratios; return the labels over `limit` or failed."""
    label, argv = yardstick or (RICH_LABEL, [sys.executable, "-c", RICH_IMPORT])
    jobs = [Job(label, argv, env)] + [Job(name, cmd, env) for name, cmd in commands]
    samples, failed = interleave(jobs, rounds, warmup)
    if label in failed:
        raise SystemExit(f"the yardstick failed: {failed[label]}")
    return print_ratios(figures(samples, label), failed, rounds=rounds, warmup=warmup, limit=limit)


def clock() -> Sample:
    """(wall, CPU of this process) now; since(clock()) is the (wall, CPU) elapsed."""
    return time.perf_counter(), time.process_time()


def since(start: Sample) -> Sample:
    wall, cpu = clock()
    return wall - start[0], cpu - start[1]


def report(name: str, samples: Sequence[Sample], budget_s: float | None = None) -> bool:
    """One in-process figure: the median and minimum of wall and CPU time; a budget is judged on
    the CPU median (the wall median is printed beside it)."""
    walls, cpus = [w for w, _ in samples], [c for _, c in samples]
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    line = (f"{name:<52} CPU median {cpu * 1000:8.2f} ms (min {min(cpus) * 1000:.2f})  "
            f"wall median {wall * 1000:8.2f} ms (min {min(walls) * 1000:.2f}), n={len(samples)}")
    ok = True
    if budget_s is not None:
        ok = cpu < budget_s
        line += f"  budget < {budget_s * 1000:g} ms CPU: {'ok' if ok else 'OVER'}"
    print(line, flush=True)
    return ok
