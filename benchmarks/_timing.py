"""Shared timing helpers for the benchmarks: whole-process wall time, median of repeated runs."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Sequence


def studytui_command() -> list[str]:
    exe = shutil.which("studytui", path=os.path.dirname(sys.executable)) or shutil.which("studytui")
    return [exe] if exe else [sys.executable, "-m", "studytui.cli"]


def time_process(argv: Sequence[str], runs: int = 15, warmup: int = 2, env: dict[str, str] | None = None) -> list[float]:
    """Wall-clock seconds of each run of a whole process (after `warmup` unmeasured runs)."""
    times = []
    for i in range(warmup + runs):
        start = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"benchmark command failed ({proc.returncode}): {' '.join(argv)}\n{proc.stderr.decode()}")
        if i >= warmup:
            times.append(elapsed)
    return times


def report(name: str, seconds: list[float], target_s: float | None = None) -> bool:
    med = statistics.median(seconds)
    line = f"{name:<48} median {med * 1000:8.1f} ms  (min {min(seconds) * 1000:.1f}, max {max(seconds) * 1000:.1f}, n={len(seconds)})"
    ok = True
    if target_s is not None:
        ok = med < target_s
        line += f"  target < {target_s * 1000:.0f} ms: {'PASS' if ok else 'FAIL'}"
    print(line, flush=True)
    return ok
