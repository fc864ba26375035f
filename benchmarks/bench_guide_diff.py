"""Speed of `studytui guide diff` on a README the size of the guide's (every shipped entry).

The README is rendered by the test suite's own renderer (tests/test_guide_diff.py), never copied
from upstream. Target: the whole command under 300 ms; parsing and comparing in process under
50 ms. Run: python benchmarks/bench_guide_diff.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT / "tests"))
from _timing import report, studytui_command, time_process  # noqa: E402


def main() -> int:
    from studytui.guide import load_guide
    from studytui.guide.diff import compare
    from studytui.guide.readme import parse_readme
    from test_guide_diff import model, render  # noqa: E402 - the tests' README renderer

    guide = load_guide()
    text = render(model(guide))
    folder = Path(tempfile.mkdtemp(prefix="studytui-bench-"))
    readme = folder / "README.md"
    readme.write_text(text, encoding="utf-8")
    times = []
    for _ in range(30):
        start = time.perf_counter()
        compare(guide, parse_readme(text))
        times.append(time.perf_counter() - start)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; README of {len(text) // 1024} KiB, "
          f"{len(guide.entries)} entries")
    ok = report("parse + compare (in process)", times, 0.050)
    env = dict(os.environ, STUDYTUI_DATA_DIR=str(folder / "data"))
    ok &= report("studytui guide diff README.md", time_process(studytui_command() + ["guide", "diff", str(readme)], env=env), 0.300)
    # A reference from bench_cli.py, timed in the same run, to read the figures on a busy machine.
    report("studytui list --json (reference)", time_process(studytui_command() + ["list", "--json"], env=env))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
