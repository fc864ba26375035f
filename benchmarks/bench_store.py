"""How fast is the progress store? Target (issue 3): open the store and read all progress for the
whole guide in under 20 ms.

Prints the median of repeated runs for:
- open_store() + states() on a database with progress and a note on every entry of the real guide,
  and on a synthetic 5,000-entry database (in-process, warm OS cache, imports already done);
- the same in a fresh process each time (interpreter start + imports + open + read), and the whole
  command `studytui progress --json`: interleaved with `python -c pass` (the floor of any Python
  process) in the same run, as ratios to it, CPU and wall, median and minimum of the rounds (see
  benchmarks/_timing.py);
- the import cost of sqlite3 and of studytui.store, via `python -X importtime`;
- `PRAGMA quick_check` alone (run by every open_store), on those databases and on one holding a
  44 MB note (the size of the largest imported note tried in hostile testing).

Runs in temporary data, cache and XDG directories.

Run: python benchmarks/bench_store.py [--runs N] [--rounds N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import Sample, argument_parser, clock, compare_commands, isolate, machine_line, report, since  # noqa: E402


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


def in_process(data: Path, runs: int) -> list[Sample]:
    from studytui.store import open_store

    times = []
    for _ in range(runs):
        t0 = clock()
        store = open_store(data)
        states = store.states()
        times.append(since(t0))
        store.close()
        assert states
    return times


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


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--runs", type=int, default=30, help="in-process runs (default 30)")
    parser.add_argument("--rounds", type=int, default=15, help="measured interleaved rounds of the processes (default 15)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.rounds < 1:
        parser.error("--runs and --rounds must be at least 1")
    tmp = isolate("studytui-bench-store-")
    print(machine_line(), flush=True)

    from studytui.guide import load_guide
    from studytui.guide.synthetic import synthetic_guide

    guide = load_guide()
    real, synthetic = tmp / "real", tmp / "synthetic"
    fill(real, [e.id for e in guide.entries])
    fill(synthetic, [e.id for e in synthetic_guide(5000).entries])
    read_once = "import sys; from studytui.store import open_store; open_store(sys.argv[1]).states()"

    print("store benchmark (target, issue 3: open + read all progress < 20 ms, in process)")
    report(f"real guide, {len(guide.entries)} entries: open_store + states()", in_process(real, args.runs), 0.020)
    report("synthetic guide, 5000 entries: open_store + states()", in_process(synthetic, args.runs), 0.020)
    print("fresh processes (import store + open + read; the whole `progress --json` on the real guide):")
    compare_commands(
        [
            ("read, real guide", [sys.executable, "-c", read_once, str(real)]),
            ("read, 5000 entries", [sys.executable, "-c", read_once, str(synthetic)]),
            ("studytui progress --json", [sys.executable, "-m", "studytui.cli", "--data-dir", str(real), "progress", "--json"]),
        ],
        rounds=args.rounds, warmup=1, limit=None, yardstick=("python -c pass", [sys.executable, "-c", "pass"]),
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
        ms, mb = quick_check_ms(data, max(5, args.runs // 3))  # wall: a fraction of a process, no yardstick
        print(f"    {label:12s} ({mb:6.1f} MB file)               {ms:7.2f} ms")
    print("import cost (python -X importtime, cumulative, median of 5):")
    print(f"    sqlite3                                     {import_cost_ms('sqlite3'):7.1f} ms")
    print(f"    studytui.store                              {import_cost_ms('studytui.store'):7.1f} ms")


if __name__ == "__main__":
    main()
