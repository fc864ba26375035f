"""Speed of the calculator paths: whole-process wall time (target < 200 ms) and in-process
CalcSpec.run() (target < 5 ms, the TUI calls it on every keystroke). Also checks that these paths
never import Textual.

Run: .venv/bin/python benchmarks/bench_calc.py [--runs N]
Prints the median of N runs (default 15) per command; exits 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = [
    ["calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9"],
    ["calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9", "--json"],
    ["calc", "gemm", "--gpu", "h100", "--m", "8192", "--n", "8192", "--k", "8192"],
    ["calc", "transformer", "--model", "llama-3.1-70b", "--batch", "8", "--context", "8192"],
    ["calc", "transformer", "--model", "deepseek-v3", "--tp", "8", "--batch", "64", "--context", "32k", "--json"],
    ["calc", "collective", "--op", "all_reduce", "--gpus", "8", "--bytes", "1GiB", "--gpu", "h200"],
    ["calc", "specdec", "--alpha", "0.8", "--gamma", "4"],
    ["gpus", "--json"],
    ["gpus", "h200"],
]
FORM_INPUTS = {
    "roofline": {"gpu": "h200", "flops": "1e12", "bytes": "1GB"},
    "gemm": {"gpu": "h100", "m": "8192", "n": "8192", "k": "8192"},
    "transformer": {"model": "llama-3.1-70b", "batch": "8", "context": "8192", "tp": "4"},
    "collective": {"op": "all_reduce", "gpus": "8", "bytes": "1GiB"},
    "specdec": {"alpha": "0.8", "gamma": "4", "cost_ratio": "0.05"},
    "kv": {"model": "deepseek-v3", "context": "128k"},
    "memory": {"model": "qwen3-235b-a22b", "gpu": "h200", "tp": "8"},
}
WALL_TARGET_S = 0.200
RUN_TARGET_S = 0.005


def studytui_command() -> list[str]:
    exe = Path(sys.executable).with_name("studytui")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("studytui")
    if found:
        return [found]
    return [sys.executable, "-m", "studytui.cli"]


def bench_env() -> dict[str, str]:
    """Bytecode cached as in a normal install (in a temp prefix, so the checkout stays clean)."""
    env = dict(os.environ, NO_COLOR="1", PYTHONPYCACHEPREFIX=str(Path(tempfile.gettempdir()) / "studytui-bench-pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def time_process(cmd: list[str], runs: int) -> float:
    env = bench_env()
    subprocess.run(cmd, capture_output=True, env=env, check=True)  # warm the page cache
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env, check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def textual_loaded(argv: list[str]) -> bool:
    code = (
        "import contextlib, io, sys, json\n"
        "from studytui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main({argv!r})\n"
        "print(json.dumps([rc, any(m == 'textual' or m.startswith('textual.') for m in sys.modules)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=bench_env()).stdout
    rc, loaded = json.loads(out.strip().splitlines()[-1])
    assert rc == 0, (argv, rc)
    return loaded


def time_forms(runs: int) -> dict[str, float]:
    from studytui.calc.forms import CALCULATORS

    medians = {}
    for name, values in FORM_INPUTS.items():
        spec = CALCULATORS[name]
        spec.run(values)  # first call loads the catalog / presets once per process
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            spec.run(values)
            samples.append(time.perf_counter() - start)
        medians[name] = statistics.median(samples)
    return medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    base = studytui_command()
    ok = True
    print(f"executable: {' '.join(base)}   python {sys.version.split()[0]}   runs: {args.runs} (median)")
    print(f"{'command':<92} {'median ms':>9}  {'<200ms':>6}  textual")
    for argv in COMMANDS:
        median = time_process(base + argv, args.runs)
        loaded = textual_loaded(argv)
        good = median < WALL_TARGET_S and not loaded
        ok &= good
        print(
            f"studytui {' '.join(argv):<83} {median * 1e3:>9.1f}  {'yes' if median < WALL_TARGET_S else 'NO':>6}  "
            f"{'LOADED' if loaded else 'no'}"
        )
    print(f"\n{'CalcSpec.run() in-process':<40} {'median ms':>9}  {'<5ms':>5}")
    for name, median in time_forms(max(args.runs, 50)).items():
        good = median < RUN_TARGET_S
        ok &= good
        print(f"{name:<40} {median * 1e3:>9.3f}  {'yes' if good else 'NO':>5}")
    print("\nall targets met" if ok else "\nTARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
