"""Does the store lose anything? kill -9 rounds and concurrent writers, counted.

Prints:
- kill -9: ROUNDS writer processes killed at random moments (during start-up, schema creation and
  writes); after each, PRAGMA integrity_check; at the end, every acknowledged write (reported by
  the writer only after the store returned) must be there;
- concurrent writers: WRITERS processes appending to one note, setting states and UI values at
  once on one database; every line of every writer must be there, in its order, with no lock error.

The test suite runs small versions of both (tests/test_store_durability.py); this runs them at
the sizes the README reports.

Runs in temporary data, cache and XDG directories, removed at the end.

Run: python benchmarks/stress_store.py [--rounds 250] [--writers 16] [--writes 100]
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import argument_parser, isolate  # noqa: E402

WRITER = r"""
import os, sys
from studytui.store import open_store
data, fd, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.write(fd, b"ready\n")
store = open_store(data)
i = start
while True:
    kind = i % 3
    if kind == 0:
        store.set_note(f"note-{i % 7}", f"version {i}")
    elif kind == 1:
        store.append_note("journal", f"line {i}")
    else:
        store.set_state(f"entry-{i}", ("learning", "done", "skipped")[(i // 3) % 3])
    os.write(fd, f"{i}\n".encode())
    i += 1
"""

CONCURRENT = r"""
import sys
from studytui.store import open_store
from studytui.core.errors import StoreError
data, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = open_store(data)
for i in range(n):
    try:
        store.append_note("shared", f"{name} {i}")
        print("ack", i, flush=True)  # acknowledged: the store returned
        store.set_state(f"{name}-{i}", "done")
        store.states()
        store.set_ui(f"{name}-pos", i)
    except StoreError as exc:  # a lock held past the busy timeout: reported, nothing half-written
        print("refused", i, exc, file=sys.stderr, flush=True)
print("finished", name)
"""


def kill_rounds(data: Path, rounds: int, seed: int) -> tuple[int, int, int]:
    """(rounds survived with an intact file, acknowledged writes, acknowledged writes lost)."""
    rng = random.Random(seed)
    acknowledged: list[int] = []
    survived = 0
    for round_no in range(rounds):
        delay = rng.choice([0.0, 0.03, 0.08]) + rng.uniform(0.0, 0.25)
        read_fd, write_fd = os.pipe()
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(data), str(write_fd), str(round_no * 1_000_000)],
                                pass_fds=(write_fd,))
        os.close(write_fd)
        first = os.read(read_fd, 6)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        chunks = [first]
        while chunk := os.read(read_fd, 65536):
            chunks.append(chunk)
        os.close(read_fd)
        acknowledged += [int(x) for x in b"".join(chunks).decode().split() if x != "ready"]
        db = data / "studytui.db"
        if db.exists():
            conn = sqlite3.connect(db)
            ok = conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            conn.close()
            survived += ok
        else:
            survived += 1
    from studytui.store import open_store

    store = open_store(data)
    states = store.states()
    journal = set(store.get_note("journal").splitlines())
    latest: dict[str, int] = {}
    lost = 0
    for i in acknowledged:
        if i % 3 == 0:
            latest[f"note-{i % 7}"] = i
        elif i % 3 == 1:
            lost += f"line {i}" not in journal
        else:
            lost += f"entry-{i}" not in states
    for key, i in latest.items():
        lost += int(states[key].note.split()[1]) < i
    store.close()
    return survived, len(acknowledged), lost


def concurrent(data: Path, writers: int, n: int) -> tuple[int, int, int]:
    """(writes refused with "locked ... try again", acknowledged appends, acknowledged appends lost
    or out of order)."""
    from studytui.store import open_store

    open_store(data).set_note("seed", "exists before the writers start")
    names = [f"w{k}" for k in range(writers)]
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, str(data), name, str(n)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in names]
    refused = acked = lost = 0
    acknowledged: dict[str, list[int]] = {}
    for name, p in zip(names, procs):
        out, err = p.communicate(timeout=1800)
        refused += err.count("refused")
        assert "Traceback" not in err, err
        acknowledged[name] = [int(line.split()[1]) for line in out.splitlines() if line.startswith("ack ")]
    store = open_store(data)
    shared = store.get_note("shared").splitlines()
    for name, indexes in acknowledged.items():
        mine = [line for line in shared if line.startswith(name + " ")]
        acked += len(indexes)
        # Every acknowledged append is there, in the order it was made.
        lost += sum(1 for i in indexes if f"{name} {i}" not in mine)
        lost += mine != sorted(mine, key=lambda line: int(line.split()[1]))
    store.close()
    return refused, acked, lost


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=250)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--writes", type=int, default=100, help="lines each concurrent writer appends")
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.writers < 1 or args.writes < 1:
        parser.error("--rounds, --writers and --writes must be at least 1")
    tmp = isolate("studytui-stress-")
    t0 = time.perf_counter()
    survived, acked, lost = kill_rounds(tmp / "kill", args.rounds, args.seed)
    print(f"kill -9: {survived}/{args.rounds} rounds left an intact file; {acked} acknowledged writes, "
          f"{lost} lost ({time.perf_counter() - t0:.0f} s)")
    t0 = time.perf_counter()
    refused, acked, lost = concurrent(tmp / "concurrent", args.writers, args.writes)
    print(f"concurrent: {args.writers} writers x {args.writes} rounds; {acked} acknowledged appends, {lost} lost or "
          f"out of order; {refused} writes refused as 'locked, try again' (busy timeout) "
          f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
