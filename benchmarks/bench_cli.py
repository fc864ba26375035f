"""Speed of the read-only commands and of loading the content.

Targets (issue 2): `studytui search roofline` and `studytui list --json` under 200 ms wall, whole
process, median of repeated runs; loading and validating the content under 30 ms.
Run: python benchmarks/bench_cli.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import report, studytui_command, time_process  # noqa: E402


def load_times(runs: int = 30) -> list[float]:
    from studytui.core.paths import content_dir
    from studytui.guide.loader import parse_content

    path = content_dir()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        parsed = parse_content(path)  # uncached: read, parse and validate every file
        times.append(time.perf_counter() - start)
        assert parsed.guide is not None, parsed.problems
    return times


def main() -> int:
    cmd = studytui_command()
    env = dict(os.environ, STUDYTUI_DATA_DIR=tempfile.mkdtemp(prefix="studytui-bench-"))
    ok = True
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    ok &= report("load + validate content (in process)", load_times(), 0.030)
    ok &= report("studytui search roofline", time_process(cmd + ["search", "roofline"], env=env), 0.200)
    ok &= report("studytui search roofline --json", time_process(cmd + ["search", "roofline", "--json"], env=env), 0.200)
    ok &= report("studytui list --json", time_process(cmd + ["list", "--json"], env=env), 0.200)
    ok &= report("studytui show gqa", time_process(cmd + ["show", "gqa"], env=env), 0.200)
    report("python -c pass (interpreter floor)", time_process([sys.executable, "-c", "pass"]))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
