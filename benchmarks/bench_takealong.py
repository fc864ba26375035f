"""How long do the take-along exports take? Whole processes, with progress and a note on every
entry of the real guide (the largest vault a learner can have):

- `studytui export cards.apkg` (Anki package: glossary + problems met);
- `studytui export DIR --format vault` into an empty folder, and again over an existing vault
  (nothing changed: every file is checked and left as it is);
- `studytui import DIR` from that vault (nothing to change: every file read and compared).

Each is interleaved with `python -c "import rich.console"` in the same run and printed as its
ratio to it, CPU (the criterion on a shared machine) and wall, median and minimum of the rounds
(see benchmarks/_timing.py). There is no target: these run now and then, not on every prompt.
Runs in temporary data, cache and XDG directories.

Run: python benchmarks/bench_takealong.py [--rounds N] [--warmup N]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import (  # noqa: E402
    RICH_IMPORT,
    RICH_LABEL,
    Job,
    argument_parser,
    figures,
    interleave,
    isolate,
    machine_line,
    print_ratios,
    studytui_command,
)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=9, help="measured interleaved rounds (default 9)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured rounds first (default 1)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.warmup < 0:
        parser.error("--rounds must be at least 1 and --warmup at least 0")
    base = isolate("studytui-bench-takealong-")
    from studytui.guide import load_guide
    from studytui.store import open_store

    guide = load_guide()
    cli = studytui_command()
    with open_store(base / "data") as store:  # STUDYTUI_DATA_DIR, set by isolate()
        for i, entry in enumerate(guide.entries):
            store.set_state(entry.id, ("done", "learning", "skipped")[i % 3])
            store.set_note(entry.id, f"Notes on {entry.title}: tiling, occupancy, bandwidth.\n" * 8)
    fresh, vault = base / "fresh", base / "vault"
    subprocess.run([*cli, "export", str(vault), "--format", "vault"], check=True, capture_output=True)
    print(f"{machine_line()}\n{len(guide.entries)} entries with progress and a note, {len(guide.glossary)} glossary terms",
          flush=True)
    jobs = [
        Job(RICH_LABEL, [sys.executable, "-c", RICH_IMPORT]),
        Job("export cards.apkg (anki)", [*cli, "export", str(base / "cards.apkg")]),
        Job("export --format vault (empty folder)", [*cli, "export", str(fresh), "--format", "vault"],
            before=lambda: shutil.rmtree(fresh, ignore_errors=True)),
        Job("export --format vault (over itself)", [*cli, "export", str(vault), "--format", "vault"]),
        Job("import DIR (vault, nothing changed)", [*cli, "import", str(vault)]),
    ]
    samples, failed = interleave(jobs, args.rounds, args.warmup)
    print_ratios(figures(samples, RICH_LABEL), failed, rounds=args.rounds, warmup=args.warmup, limit=None, label_width=38)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
