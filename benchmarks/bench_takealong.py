"""How long do the take-along exports take? Whole-process wall time, median of repeated runs, with
progress and a note on every entry of the real guide (the largest vault a learner can have):

- `studytui export cards.apkg` (Anki package: glossary + problems met);
- `studytui export DIR --format vault` into an empty folder, and again over the existing vault
  (nothing changed: every file is checked and left as it is);
- `studytui import DIR` from that vault (nothing to change: every file read and compared).

Run: python benchmarks/bench_takealong.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import report, studytui_command, time_process  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    from studytui.guide import load_guide
    from studytui.store import open_store

    guide = load_guide()
    cli = studytui_command()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        data = base / "data"
        with open_store(data) as store:
            for i, entry in enumerate(guide.entries):
                store.set_state(entry.id, ("done", "learning", "skipped")[i % 3])
                store.set_note(entry.id, f"Notes on {entry.title}: tiling, occupancy, bandwidth.\n" * 8)
        env = dict(os.environ, STUDYTUI_DATA_DIR=str(data))
        print(f"{len(guide.entries)} entries with progress and a note, {len(guide.glossary)} glossary terms")
        # The machine's load shows in every figure: a plain command, measured alongside, for scale.
        report("baseline: progress --json", time_process([*cli, "progress", "--json"], runs=args.runs, env=env))
        report("export cards.apkg (anki)", time_process([*cli, "export", str(base / "cards.apkg")], runs=args.runs, env=env))
        fresh = base / "fresh"

        def fresh_vault() -> list[float]:
            times = []
            for _ in range(args.runs):
                shutil.rmtree(fresh, ignore_errors=True)
                times += time_process([*cli, "export", str(fresh), "--format", "vault"], runs=1, warmup=0, env=env)
            return times

        report("export DIR --format vault (empty folder)", fresh_vault())
        report(
            "export DIR --format vault (over itself)",
            time_process([*cli, "export", str(fresh), "--format", "vault"], runs=args.runs, env=env),
        )
        report("import DIR (vault, nothing changed)", time_process([*cli, "import", str(fresh)], runs=args.runs, env=env))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
