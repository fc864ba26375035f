"""Speed of `calc occupancy` and `calc tile`: the whole commands as ratios to
`python -c "import rich.console"` (within 1.5x by CPU, like every command: interleaved with that
yardstick in the same run, median and minimum of the rounds, see benchmarks/_timing.py),
in-process CalcSpec.run() (CPU < 5 ms: the TUI recomputes on every keystroke, the sweep plot
included), and checking the whole H200 record against the arithmetic. Runs in temporary data,
cache and XDG directories.

Run: .venv/bin/python benchmarks/bench_occupancy.py [--rounds N] [--warmup N] [--runs N] [--limit 1.5]
Exits 1 if a target is missed.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

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

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "gpu" / "records" / "2026-12-01-occupancy-h200.json"
COMMANDS: list[tuple[str, list[str]]] = [
    ("calc occupancy", ["calc", "occupancy", "--gpu", "h200", "--threads", "256", "--regs", "64"]),
    ("calc occupancy --json", ["calc", "occupancy", "--gpu", "h200", "--threads", "256", "--regs", "64", "--json"]),
    ("calc occupancy --sweep smem", ["calc", "occupancy", "--cc", "8.6", "--threads", "128", "--regs", "40", "--dyn-smem", "40KiB",
                                     "--sweep", "smem"]),
    ("calc tile", ["calc", "tile", "--gpu", "b200", "--tile", "256x128x64", "--dtype", "fp8"]),
]
FORMS = {
    "occupancy": {"gpu": "h200", "threads": "256", "regs": "64"},
    "occupancy --sweep regs": {"gpu": "h200", "threads": "256", "regs": "64", "sweep": "regs"},
    "occupancy --sweep smem": {"gpu": "h200", "threads": "256", "regs": "64", "dyn_smem": "40KiB", "sweep": "smem"},
    "tile": {"gpu": "h100", "tile": "128x256x64", "threads": "384", "warp_specialized": "yes"},  # 1 producer + 2 consumers
}
RUN_TARGET_S = 0.005


def in_process(runs: int) -> dict[str, list[Sample]]:
    from studytui.calc.forms import CALCULATORS

    out = {}
    for label, values in FORMS.items():
        spec = CALCULATORS[label.split()[0]]
        spec.run(values)  # loads the tables and the catalog once per process
        samples = []
        for _ in range(runs):
            start = clock()
            spec.run(values)
            samples.append(since(start))
        out[label] = samples
    return out


def fixture_check() -> tuple[int, int, float]:
    from studytui.calc.occupancy import blocks_per_sm, get_cc

    record = json.loads(RECORD.read_text())
    cc = get_cc("9.0")
    start = time.perf_counter()
    exact = 0
    for k, threads, dyn, max_dyn, carveout, blocks, _err in record["rows"]:
        kernel = record["kernels"][k]
        occ = blocks_per_sm(cc, threads, kernel["num_regs"], kernel["static_smem"], dyn, max_dyn_smem=max_dyn, carveout=carveout)
        exact += occ.blocks == blocks
    return exact, len(record["rows"]), time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    args = command_arguments(__doc__, argv, runs=(50, 'each CalcSpec.run'))
    isolate("studytui-bench-occupancy-")
    print(machine_line(), flush=True)
    base = studytui_command()
    over = compare_commands([(label, base + argv) for label, argv in COMMANDS], rounds=args.rounds, warmup=args.warmup,
                            limit=args.limit)
    ok = not over
    for label, samples in in_process(args.runs).items():
        ok &= report(f"CalcSpec.run {label}", samples, RUN_TARGET_S)
    exact, total, seconds = fixture_check()
    print(f"H200 record: {exact} of {total} configurations exact ({exact / total:.2%}), checked in {seconds * 1000:.0f} ms")
    ok &= exact == total
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
