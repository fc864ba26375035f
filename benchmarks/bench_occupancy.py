"""Speed of `calc occupancy` and `calc tile`: whole-process wall time (target < 200 ms, like the
other calculators), in-process CalcSpec.run() (target < 5 ms: the TUI recomputes on every
keystroke, the sweep plot included), and checking the whole H200 record against the arithmetic.

Run: .venv/bin/python benchmarks/bench_occupancy.py [--runs N]
Prints the median of N runs (default 15); exits 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import report, studytui_command, time_process  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "gpu" / "records" / "2026-12-01-occupancy-h200.json"
COMMANDS = [
    ["calc", "occupancy", "--gpu", "h200", "--threads", "256", "--regs", "64"],
    ["calc", "occupancy", "--gpu", "h200", "--threads", "256", "--regs", "64", "--json"],
    ["calc", "occupancy", "--cc", "8.6", "--threads", "128", "--regs", "40", "--dyn-smem", "40KiB", "--sweep", "smem"],
    ["calc", "tile", "--gpu", "b200", "--tile", "256x128x64", "--dtype", "fp8"],
]
FORMS = {
    "occupancy": {"gpu": "h200", "threads": "256", "regs": "64"},
    "occupancy --sweep regs": {"gpu": "h200", "threads": "256", "regs": "64", "sweep": "regs"},
    "occupancy --sweep smem": {"gpu": "h200", "threads": "256", "regs": "64", "dyn_smem": "40KiB", "sweep": "smem"},
    "tile": {"gpu": "h100", "tile": "128x256x64", "threads": "384"},
}
WALL_TARGET_S = 0.200
RUN_TARGET_S = 0.005


def in_process(runs: int) -> dict[str, list[float]]:
    from studytui.calc.forms import CALCULATORS

    out = {}
    for label, values in FORMS.items():
        spec = CALCULATORS[label.split()[0]]
        spec.run(values)  # loads the tables and the catalog once per process
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            spec.run(values)
            samples.append(time.perf_counter() - start)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    base = studytui_command()
    ok = True
    print(f"python {sys.version.split()[0]}; medians of {args.runs} whole-process runs, {max(args.runs, 50)} in-process runs")
    for argv in COMMANDS:
        ok &= report(
            "studytui " + " ".join(argv[:4]) + (" ..." if len(argv) > 4 else ""), time_process(base + argv, args.runs), WALL_TARGET_S
        )
    for label, samples in in_process(max(args.runs, 50)).items():
        ok &= report(f"CalcSpec.run {label}", samples, RUN_TARGET_S)
    exact, total, seconds = fixture_check()
    print(f"H200 record: {exact} of {total} configurations exact ({exact / total:.2%}), checked in {seconds * 1000:.0f} ms")
    ok &= exact == total
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
