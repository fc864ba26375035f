"""Speed of `studytui guide diff` on a README the size of the guide's (every shipped entry).

The README is rendered by the test suite's own renderer (tests/test_guide_diff.py), never copied
from upstream. Targets: the whole command within 1.5x of `python -c "import rich.console"` by CPU,
like every command (interleaved with that yardstick in the same run, median and minimum of the
rounds, see benchmarks/_timing.py); parsing and comparing in process under 50 ms of CPU. Runs in
temporary data, cache and XDG directories. Exits 1 if a target is missed.

Run: python benchmarks/bench_guide_diff.py [--rounds N] [--warmup N] [--runs N] [--limit 1.5]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
from _timing import clock, command_arguments, compare_commands, isolate, machine_line, report, since, studytui_command  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = command_arguments(__doc__, argv, runs=(30, 'parse + compare'), what='command')
    folder = isolate("studytui-bench-guide-diff-")
    sys.path.insert(0, str(ROOT / "tests"))
    from studytui.guide import load_guide
    from studytui.guide.diff import compare
    from studytui.guide.readme import parse_readme
    from test_guide_diff import model, render  # the tests' README renderer

    guide = load_guide()
    text = render(model(guide))
    readme = folder / "README.md"
    readme.write_text(text, encoding="utf-8")
    times = []
    for _ in range(args.runs):
        start = clock()
        compare(guide, parse_readme(text))
        times.append(since(start))
    print(f"{machine_line()}\nREADME of {len(text) // 1024} KiB, {len(guide.entries)} entries", flush=True)
    ok = report("parse + compare (in process)", times, 0.050)
    over = compare_commands([("guide diff README.md", studytui_command() + ["guide", "diff", str(readme)])],
                            rounds=args.rounds, warmup=args.warmup, limit=args.limit)
    return 0 if ok and not over else 1


if __name__ == "__main__":
    raise SystemExit(main())
