"""Speed of the everyday commands, as ratios to the floor of any CLI that prints with Rich.

Issue 27's target: every everyday command within 1.5x of `python -c "import rich.console"`,
measured in one run on the same machine in the same minute. The runs are interleaved (one round
runs the yardstick and every command once, in a new shuffled order each round), so a machine that
slows down or speeds up mid-run moves every figure alike. Each run is timed twice: CPU time (the
child's user + system time, from os.wait4) and wall time. The criterion is the CPU ratio: on a
shared machine a process spends part of its wall time waiting for a core, and that wait is the
neighbours', not the command's. Each figure is shown as the median and the minimum over the
rounds, each over the yardstick's median and minimum. The load average is printed before and
after: compare ratios, never milliseconds measured on another day.

Every run gets its own temporary data, cache and XDG directories (nothing of the learner's is
read or written): a few marks, a note and a practice attempt are put in the data directory
first, and the unmeasured first round fills the guide cache, as a learner's machine is after the
first run. `practice answer`, the one command that adds to the store each run, runs on a copy of
that directory put back before each of its runs, so every run finds the store as seeded. The
defaults (7 rounds after 1 unmeasured) take one to two minutes on 2 cores.

Run: python benchmarks/bench_cli.py [--rounds N] [--warmup N] [--only WORDS] [--limit 1.5] [--markdown] [--practised]
     python benchmarks/bench_cli.py --load     (the in-process content load, uncached)
Exits 1 when a command's CPU ratio (median) is over --limit, or a command fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
from _timing import (  # noqa: E402
    LIMIT,
    RICH_IMPORT,
    RICH_LABEL,
    Job,
    Sample,
    argument_parser,
    clock,
    figures,
    instructions,
    interleave,
    isolate,
    machine_line,
    markdown,
    print_ratios,
    report,
    since,
    studytui_command,
)

ROUNDS = 7  # measured rounds: about 10 s each on the 2-core machine
WARMUP = 1  # unmeasured rounds first (bytecode written, guide cache filled)
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


def load_times(runs: int = 30) -> list[Sample]:
    """Reading, parsing and validating every content file in process (no cache)."""
    from studytui.core.paths import content_dir
    from studytui.guide.loader import parse_content

    path = content_dir()
    times = []
    for _ in range(runs):
        start = clock()
        parsed = parse_content(path)
        times.append(since(start))
        assert parsed.guide is not None, parsed.problems
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"measured rounds (default {ROUNDS})")
    parser.add_argument("--warmup", type=int, default=WARMUP, help=f"unmeasured rounds first (default {WARMUP})")
    parser.add_argument("--only", help="comma-separated words: only the commands whose label holds one")
    parser.add_argument("--limit", type=float, default=LIMIT,
                        help=f"the CPU ratio (median) a command must stay at or under (default {LIMIT})")
    parser.add_argument("--markdown", action="store_true", help="also print the table as Markdown (for the docs)")
    parser.add_argument("--load", action="store_true", help="time loading the content in process instead")
    parser.add_argument("--practised", action="store_true",
                        help="a learner further on: every practice problem's solution shown once (a miss), so every one has a "
                             "review to replay and to forecast (plan's work grows with them)")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each command's instructions with valgrind, once each, as ratios to the "
                             "yardstick's: a figure the machine's load does not move (slow: about a minute)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.warmup < 0:
        parser.error("--rounds must be at least 1 and --warmup at least 0")
    isolate("studytui-bench-cli-")
    os.environ.update(NO_COLOR="1", COLUMNS="120")  # the same output whatever terminal runs this
    print(machine_line(), flush=True)
    if args.load:
        # In process, no child to compare: an absolute budget (issue 27's cache makes this the cold path).
        return 0 if report("load + validate content (in process, uncached)", load_times(), 0.030) else 1
    only = [w.strip() for w in args.only.split(",")] if args.only else None
    chosen = [(label, argv) for label, argv in COMMANDS if not only or any(word in label for word in only)]
    if not chosen:
        parser.error(f"--only {args.only!r} matches no command")
    cmd = studytui_command()
    for seed in SEED:
        subprocess.run(cmd + seed, capture_output=True)  # a failure shows when that command runs
    if args.practised:
        _answer_every_problem(cmd)
    jobs = [Job(RICH_LABEL, [sys.executable, "-c", RICH_IMPORT])] + [_job(label, cmd + argv) for label, argv in chosen]
    samples, failed = interleave(jobs, args.rounds, args.warmup)
    if RICH_LABEL in failed:
        raise SystemExit(f"the yardstick failed: {failed[RICH_LABEL]}")
    results = figures(samples, RICH_LABEL)
    over = print_ratios(results, failed, rounds=args.rounds, warmup=args.warmup, limit=args.limit)
    if args.instructions:
        print_instructions(jobs, failed)
    if args.markdown:
        print()
        print(markdown(results, prefix="studytui "))
    return 1 if over else 0


def _answer_every_problem(cmd: list[str]) -> None:
    """Every problem's solution shown once (`practice answer ID --reveal`, which counts as a
    miss: each then has a review, soon due), for `--practised`."""
    import json

    listed = subprocess.run(cmd + ["practice", "--json"], capture_output=True, text=True, check=True)
    ids = [p["id"] for p in json.loads(listed.stdout)["problems"]]
    for pid in ids:
        subprocess.run(cmd + ["practice", "answer", pid, "--reveal", "--seed", "0"], capture_output=True)
    print(f"practised: every problem ({len(ids)}) revealed once (a miss each)", flush=True)


def _job(label: str, argv: list[str]) -> Job:
    """A command's job. One that adds to the store every run (`practice answer` records an
    attempt) gets a copy of the seeded data directory of its own, put back before each of its
    runs: every run of it, and of every other command, finds the store as seeded, whatever the
    shuffled order (an attempt more in the shared store made the next `plan`, `progress` or
    `practice` replay one more review: 7% more instructions)."""
    if label != "practice answer":
        return Job(label, argv)
    import shutil

    seeded = Path(os.environ["STUDYTUI_DATA_DIR"])
    snapshot, own = seeded.with_name("data-answer-seeded"), seeded.with_name("data-answer")
    shutil.copytree(seeded, snapshot)

    def restore() -> None:
        shutil.rmtree(own, ignore_errors=True)
        shutil.copytree(snapshot, own)

    return Job(label, argv, env={**os.environ, "STUDYTUI_DATA_DIR": str(own)}, before=restore)


def print_instructions(jobs: list[Job], failed: dict[str, str]) -> None:
    """Each job's instruction count (one run each, warm: after the timed rounds) over the
    yardstick's. Shown beside the CPU ratios, not instead of them: the target is CPU time, and an
    instruction is not a fixed amount of it (a cache miss costs more than an add)."""
    counts: dict[str, int | str] = {}
    for job in jobs:
        if job.label not in failed:
            if job.before is not None:
                job.before()
            counts[job.label] = instructions(job.argv, job.env)
    floor = counts.get(RICH_LABEL)
    if not isinstance(floor, int):
        print(f"instructions: not counted ({floor})")
        return
    print(f"instructions (valgrind callgrind, one warm run each): yardstick {floor / 1e6:.1f} M")
    for job in jobs[1:]:
        got = counts.get(job.label, failed.get(job.label, "failed"))
        shown = f"{got / 1e6:8.1f} M  {got / floor:.2f}x" if isinstance(got, int) else f"not counted ({got})"
        print(f"  {job.label:24s} {shown}")


if __name__ == "__main__":
    raise SystemExit(main())
