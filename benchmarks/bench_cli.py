"""Speed of the everyday commands, as ratios to the floor of any CLI that prints with Rich.

Issue 27's target: every everyday command within 1.5x of `python -c "import rich.console"`,
measured in one run on the same machine in the same minute. The runs are interleaved (one round
runs the yardstick and every command once, in a shuffled order), so a machine that slows down or
speeds up mid-run moves every figure alike; each figure is the median over the rounds, and the
ratio is that median over the yardstick's median. The load average is printed before and after:
on a busy machine compare ratios, never milliseconds measured on another day.

The commands run with a temporary data directory (a few marks, a note, a practice attempt) and
a temporary cache directory (STUDYTUI_CACHE_DIR), warmed by the unmeasured first rounds, as a
learner's machine is after the first run.

Run: python benchmarks/bench_cli.py [--rounds N] [--only WORDS] [--limit 1.5] [--markdown]
     python benchmarks/bench_cli.py --load     (the in-process content load, uncached)
Exits 1 when a command's ratio is over --limit.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
from _timing import report, studytui_command  # noqa: E402

YARDSTICK = "import rich.console"
H200_CSV = str(ROOT / "content" / "profiles" / "h200" / "ops-default-raw.csv")

# (label, arguments): every everyday command of issue 27.
COMMANDS: list[tuple[str, list[str]]] = [
    ("show gqa", ["show", "gqa"]),
    ("show gqa --json", ["show", "gqa", "--json"]),
    ("next", ["next"]),
    ("list", ["list"]),
    ("list --json", ["list", "--json"]),
    ("search roofline", ["search", "roofline"]),
    ("progress", ["progress"]),
    ("mark gqa learning", ["mark", "gqa", "learning"]),
    ("note gqa", ["note", "gqa"]),
    ("note gqa --text", ["note", "gqa", "--text", "the same note each round"]),
    ("history gqa", ["history", "gqa"]),
    ("practice", ["practice"]),
    ("practice show", ["practice", "show", "sh-ridge-point"]),
    ("practice answer", ["practice", "answer", "sh-ridge-point", "1", "--seed", "0"]),
    ("practice due", ["practice", "due"]),
    ("calc roofline", ["calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9"]),
    ("calc gemm", ["calc", "gemm", "--gpu", "h100", "--m", "8192", "--n", "8192", "--k", "8192"]),
    ("calc transformer", ["calc", "transformer", "--model", "llama-3.1-70b", "--batch", "8", "--context", "8192"]),
    ("calc collective", ["calc", "collective", "--op", "all_reduce", "--gpus", "8", "--bytes", "1GiB", "--gpu", "h200"]),
    ("calc specdec", ["calc", "specdec", "--alpha", "0.8", "--gamma", "4"]),
    ("calc kv", ["calc", "kv", "--model", "deepseek-v3", "--context", "128k", "--batch", "8"]),
    ("calc memory", ["calc", "memory", "--model", "qwen3-235b-a22b", "--gpu", "h200", "--tp", "8"]),
    ("calc occupancy", ["calc", "occupancy", "--gpu", "h200", "--threads", "256", "--regs", "64", "--dyn-smem", "40KiB"]),
    ("calc tile", ["calc", "tile", "--gpu", "b200", "--tile", "256x128x64", "--dtype", "fp8", "--stages", "auto"]),
    ("gpus", ["gpus"]),
    ("gpus h200", ["gpus", "h200"]),
    ("plan", ["plan"]),
    ("profile (ncu csv)", ["profile", H200_CSV]),
]
# What the data directory holds before the first round.
SEED = [
    ["mark", "flashattention", "done"],
    ["mark", "gqa", "learning"],
    ["note", "gqa", "--text", "a first note"],
    ["practice", "answer", "sh-ridge-point", "1", "--seed", "0"],
]


def load_times(runs: int = 30) -> list[float]:
    """Reading, parsing and validating every content file in process (no cache)."""
    from studytui.core.paths import content_dir
    from studytui.guide.loader import parse_content

    path = content_dir()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        parsed = parse_content(path)
        times.append(time.perf_counter() - start)
        assert parsed.guide is not None, parsed.problems
    return times


def bench_env(data: str, cache: str) -> dict[str, str]:
    env = dict(os.environ, STUDYTUI_DATA_DIR=data, STUDYTUI_CACHE_DIR=cache, NO_COLOR="1", COLUMNS="120")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as in a normal install
    return env


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float] | str:
    """(wall seconds, CPU seconds: user + system) of one run, or why it failed."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {(err.decode(errors='replace').strip().splitlines() or [''])[-1][:120]}"
    return elapsed, usage.ru_utime + usage.ru_stime


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


Result = tuple[float, float, float, float]  # median wall s, its ratio, median CPU s, its ratio


def ratios(rounds: int, warmup: int, only: list[str] | None) -> tuple[dict[str, Result], dict[str, str]]:
    """({label: Result}, {label: why it failed}); the yardstick is under its own label."""
    cmd = studytui_command()
    data = tempfile.mkdtemp(prefix="studytui-bench-data-")
    cache = tempfile.mkdtemp(prefix="studytui-bench-cache-")
    env = bench_env(data, cache)
    for argv in SEED:
        subprocess.run(cmd + argv, capture_output=True, env=env)  # a failure shows when that command runs
    chosen = [(label, argv) for label, argv in COMMANDS if not only or any(word in label for word in only)]
    jobs = [(YARDSTICK, [sys.executable, "-c", YARDSTICK])] + [(label, cmd + argv) for label, argv in chosen]
    samples: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in jobs}
    failed: dict[str, str] = {}
    order = list(jobs)
    shuffle = random.Random(27)
    for i in range(warmup + rounds):
        shuffle.shuffle(order)
        for label, argv in order:
            if label in failed:
                continue
            elapsed = run_once(argv, env)
            if isinstance(elapsed, str):
                failed[label] = elapsed
            elif i >= warmup:
                samples[label].append(elapsed)
    def medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)

    wall0, cpu0 = medians(samples[YARDSTICK])
    out: dict[str, Result] = {}
    for label, runs in samples.items():
        if runs:
            wall, cpu = medians(runs)
            out[label] = (wall, wall / wall0, cpu, cpu / cpu0)
    return out, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="measured rounds (default 15)")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured rounds first (default 2)")
    parser.add_argument("--only", help="comma-separated words: only the commands whose label holds one")
    parser.add_argument("--limit", type=float, default=1.5, help="the ratio a command must stay at or under (default 1.5)")
    parser.add_argument("--markdown", action="store_true", help="also print the table as Markdown (for the docs)")
    parser.add_argument("--load", action="store_true", help="time loading the content in process instead")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; load average {load_average()}", flush=True)
    if args.load:
        return 0 if report("load + validate content (in process, uncached)", load_times(), 0.030) else 1
    only = [w.strip() for w in args.only.split(",")] if args.only else None
    results, failed = ratios(args.rounds, args.warmup, only)
    floor, _, cpu_floor, _ = results[YARDSTICK]
    print(f"yardstick: python -c {YARDSTICK!r}  median {floor * 1000:.1f} ms wall, {cpu_floor * 1000:.1f} ms CPU "
          f"({args.rounds} interleaved rounds)")
    print(f"  {'command':<22} {'wall':>9}  {'ratio':>6}   {'CPU':>9}  {'ratio':>6}")
    over = []
    for label, (med, ratio, cpu, cpu_ratio) in results.items():
        if label == YARDSTICK:
            continue
        flag = "" if ratio <= args.limit else f"  over {args.limit}x"
        if flag:
            over.append(label)
        print(f"  {label:<22} {med * 1000:6.1f} ms  {ratio:5.2f}x   {cpu * 1000:6.1f} ms  {cpu_ratio:5.2f}x{flag}")
    for label, why in failed.items():
        print(f"  {label:<22} failed ({why})")
        over.append(label)
    print(f"load average after: {load_average()}")
    if args.markdown:
        print("\n| Command | Wall (median) | Ratio | CPU (median) | Ratio |\n|---|---|---|---|---|")
        print(f"| `python -c \"{YARDSTICK}\"` (the yardstick) | {floor * 1000:.0f} ms | 1.00x | {cpu_floor * 1000:.0f} ms | 1.00x |")
        for label, (med, ratio, cpu, cpu_ratio) in results.items():
            if label != YARDSTICK:
                print(f"| `studytui {label}` | {med * 1000:.0f} ms | {ratio:.2f}x | {cpu * 1000:.0f} ms | {cpu_ratio:.2f}x |")
    if over:
        print(f"over {args.limit}x: {', '.join(over)}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
