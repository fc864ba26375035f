"""How fast is the progress store? Target (issue 3): open the store and read all progress for the
whole guide in under 20 ms.

Prints the median of repeated runs for:
- open_store() + states() on a database with progress and a note on every entry of the real guide,
  and on a synthetic 5,000-entry database (in-process, warm OS cache, imports already done);
- the same in a fresh process each time (interpreter start + imports + open + read);
- the whole command `studytui progress --json`, as a process;
- the import cost of sqlite3 and of studytui.store, via `python -X importtime`;
- `PRAGMA quick_check` alone (run by every open_store), on those databases and on one holding a
  44 MB note (the size of the largest imported note tried in hostile testing).

Run: python benchmarks/bench_store.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def fill(data: Path, entry_ids: list[str]) -> None:
    from studytui.store import open_store

    store = open_store(data)
    conn = store._write_conn()  # bulk load in one transaction: only the setup, not what is timed
    conn.execute("BEGIN IMMEDIATE")
    states = ("done", "learning", "skipped", "pending")
    for i, entry_id in enumerate(entry_ids):
        conn.execute(
            "INSERT INTO entries (entry_id, state, state_changed_at, last_opened_at, note, note_updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (entry_id, states[i % 4], "2026-11-01T10:00:00.000000+00:00", "2026-11-01T10:00:00.000000+00:00",
             f"Notes on {entry_id}: tiling, occupancy, bandwidth. " * 6, "2026-11-01T10:00:00.000000+00:00"),
        )
        conn.execute(
            "INSERT INTO events (at, kind, entry_id, data) VALUES ('2026-11-01T10:00:00.000000+00:00', 'state', ?, '{}')",
            (entry_id,),
        )
    conn.execute("COMMIT")
    store.close()


def in_process(data: Path, runs: int) -> float:
    from studytui.store import open_store

    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        store = open_store(data)
        states = store.states()
        times.append(time.perf_counter() - t0)
        store.close()
        assert states
    return statistics.median(times) * 1000


def quick_check_ms(data: Path, runs: int) -> tuple[float, float]:
    """(median ms of PRAGMA quick_check, file size in MB)."""
    import sqlite3

    db = data / "studytui.db"
    times = []
    for _ in range(runs):
        conn = sqlite3.connect(db)
        t0 = time.perf_counter()
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        times.append(time.perf_counter() - t0)
        conn.close()
    return statistics.median(times) * 1000, db.stat().st_size / 1e6


def whole_process(argv: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def import_cost_ms(module: str) -> float:
    """Cumulative import time of `module` in a fresh interpreter (median of 5)."""
    values = []
    for _ in range(5):
        err = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                             capture_output=True, text=True, check=True).stderr
        for line in err.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[2] == module:
                values.append(int(parts[1]) / 1000)
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    from studytui.guide import load_guide
    from studytui.guide.synthetic import synthetic_guide

    guide = load_guide()
    tmp = Path(tempfile.mkdtemp(prefix="studytui-bench-"))
    real, synthetic = tmp / "real", tmp / "synthetic"
    fill(real, [e.id for e in guide.entries])
    fill(synthetic, [e.id for e in synthetic_guide(5000).entries])
    env = {**os.environ, "STUDYTUI_DATA_DIR": str(real)}
    read_once = "import sys; from studytui.store import open_store; open_store(sys.argv[1]).states()"
    python_only = whole_process([sys.executable, "-c", "pass"], args.runs, env)

    print(f"store benchmark (median of {args.runs} runs; target: open + read all progress < 20 ms)")
    print(f"  real guide, {len(guide.entries)} entries, progress + note on each:")
    print(f"    open_store + states(), in process           {in_process(real, args.runs):7.2f} ms")
    print("  synthetic guide, 5000 entries, progress + note on each:")
    print(f"    open_store + states(), in process           {in_process(synthetic, args.runs):7.2f} ms")
    for label, data in (("real guide", real), ("5000 entries", synthetic)):
        ms = whole_process([sys.executable, "-c", read_once, str(data)], args.runs, env)
        print(f"  fresh process: import store + open + read, {label:12s} {ms:7.1f} ms  ({ms - python_only:.1f} ms over bare python)")
    ms = whole_process([sys.executable, "-m", "studytui.cli", "progress", "--json"], args.runs, env)
    print(
        f"  whole process `studytui progress --json` (real guide) {ms:7.1f} ms  ({ms - python_only:.1f} ms over bare python "
        f"{python_only:.1f} ms)"
    )
    huge = tmp / "huge"
    fill(huge, [e.id for e in guide.entries])
    from studytui.store import model, open_store

    big = open_store(huge)
    limit, model.NOTE_LIMIT = model.NOTE_LIMIT, 64 * 1024 * 1024  # a note from before the 8 MiB limit
    try:
        big.set_note(guide.entries[0].id, "forty-four megabytes of imported note text. " * 1_000_000)
    finally:
        model.NOTE_LIMIT = limit
    big.close()
    print("integrity check on open (PRAGMA quick_check alone):")
    for label, data in (("real guide", real), ("5000 entries", synthetic), ("44 MB note", huge)):
        ms, mb = quick_check_ms(data, max(5, args.runs // 3))
        print(f"    {label:12s} ({mb:6.1f} MB file)               {ms:7.2f} ms")
    print("import cost (python -X importtime, cumulative, median of 5):")
    print(f"    sqlite3                                     {import_cost_ms('sqlite3'):7.1f} ms")
    print(f"    studytui.store                              {import_cost_ms('studytui.store'):7.1f} ms")


if __name__ == "__main__":
    main()
