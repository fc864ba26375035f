"""How fast is `studytui profile`, and how much memory does it take, on large inputs (issue 30)?

- a 10,000-kernel Nsight Compute raw export: the real H200 full-set export's header (2,240 metric
  columns, content/profiles/h200/ops-full-raw.csv) with its 11 kernel rows repeated, renumbered, to
  10,000 rows (about 197 MB: what `ncu --set full` over 10,000 kernels exports);
- the same 10,000 kernels from the default set (568 columns, ops-default-raw.csv);
- a 100 MB PyTorch profiler trace: the Llama decoder-layer trace's events
  (llama8b-layer-prefill-decode.trace.json.gz) repeated with shifted times and fresh External ids.

For each: the whole command (`studytui profile FILE --json`, a process of its own: wall time, CPU
time (user + system, from os.wait4) and peak resident memory; median of the runs) and, in process,
load + analyze with tracemalloc's peak of Python allocations. The readers stream, so memory grows
with the kernels kept, not with the file size. A second or more per input, so no process-start
yardstick applies; compare CPU with wall to see how busy the machine was. Runs in temporary data,
cache and XDG directories.

Run: python benchmarks/bench_profile.py [--runs N] [--keep DIR]
"""

from __future__ import annotations

import csv
import gzip
import json
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
from _timing import argument_parser, isolate, load_average, machine_line, run_process, studytui_command  # noqa: E402

H200 = ROOT / "content" / "profiles" / "h200"
KERNELS = 10_000
TRACE_BYTES = 100 * 1000 * 1000


def ncu_export(source: Path, target: Path, kernels: int) -> int:
    with source.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    header, units, body = rows[0], rows[1], rows[2:]
    with target.open("w", encoding="utf-8", newline="") as out:
        w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(header)
        w.writerow(units)
        for i in range(kernels):
            row = list(body[i % len(body)])
            row[0] = str(i)
            w.writerow(row)
    return target.stat().st_size


def big_trace(source: Path, target: Path, size: int) -> tuple[int, int]:
    doc = json.load(gzip.open(source))
    events = doc.pop("traceEvents")
    span = max(e.get("ts", 0) + e.get("dur", 0) for e in events if isinstance(e.get("ts"), (int, float))) + 1000.0
    max_ext = max((e.get("args", {}).get("External id", 0) for e in events if isinstance(e.get("args"), dict)), default=0) + 1
    kernels = 0
    with target.open("w", encoding="utf-8") as out:
        out.write(json.dumps(doc)[:-1] + ', "traceEvents": [\n')
        copy, first = 0, True
        while out.tell() < size:
            for e in events:
                e2 = dict(e)
                if isinstance(e2.get("ts"), (int, float)):
                    e2["ts"] = e2["ts"] + copy * span
                args = e2.get("args")
                if isinstance(args, dict) and isinstance(args.get("External id"), int):
                    e2["args"] = {**args, "External id": args["External id"] + copy * max_ext}
                if isinstance(args, dict) and isinstance(args.get("correlation"), int):
                    e2["args"] = {**e2["args"], "correlation": args["correlation"] + copy * 1_000_000}
                kernels += e2.get("cat") == "kernel"
                out.write(("" if first else ",\n") + json.dumps(e2))
                first = False
            copy += 1
        out.write("\n]}\n")
    return target.stat().st_size, kernels


def whole_command(path: Path, runs: int) -> tuple[float, float, float]:
    """(median wall seconds, median CPU seconds, peak RSS MiB) of `studytui profile PATH --json`,
    each run a fresh process."""
    walls, cpus, peaks = [], [], []
    for _ in range(runs):
        run = run_process([*studytui_command(), "profile", str(path), "--json"])
        if isinstance(run, str):
            raise SystemExit(f"studytui profile {path.name} failed ({run})")
        walls.append(run.wall)
        cpus.append(run.cpu)
        peaks.append(run.rss_mib)
    return statistics.median(walls), statistics.median(cpus), max(peaks)


def in_process(path: Path) -> tuple[float, float, float, int]:
    """(wall and CPU seconds for load + analyze, peak MiB of Python allocations under tracemalloc,
    kernels): timed without tracemalloc, which slows Python several times; measured again under it."""
    from studytui.profile import analyze, load

    start, start_cpu = time.perf_counter(), time.process_time()
    report = analyze(load(path))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    n = len(report.kernels)
    del report
    tracemalloc.start()
    analyze(load(path))
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return elapsed, cpu, peak / 2**20, n


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--runs", type=int, default=3, help="whole-command runs per input (default 3)")
    parser.add_argument("--keep", metavar="DIR", help="write the inputs here and keep them")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    root = isolate("studytui-bench-profile-")
    folder = Path(args.keep) if args.keep else root / "inputs"
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{machine_line()}\ninputs in {folder}", flush=True)
    cases = []
    for name, source in (("full-set", H200 / "ops-full-raw.csv"), ("default-set", H200 / "ops-default-raw.csv")):
        target = folder / f"ncu-{name}-{KERNELS}.csv"
        start = time.perf_counter()
        size = ncu_export(source, target, KERNELS)
        print(f"wrote {target.name}: {size / 1e6:,.0f} MB, {KERNELS:,} kernels ({time.perf_counter() - start:.1f} s)")
        cases.append((f"ncu raw, {name}, {KERNELS:,} kernels, {size / 1e6:,.0f} MB", target))
    target = folder / "trace-100MB.json"
    size, kernels = big_trace(H200 / "llama8b-layer-prefill-decode.trace.json.gz", target, TRACE_BYTES)
    print(f"wrote {target.name}: {size / 1e6:,.0f} MB, {kernels:,} kernels")
    cases.append((f"torch trace, {size / 1e6:,.0f} MB, {kernels:,} kernels", target))
    gz = folder / "trace-100MB.json.gz"
    with target.open("rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
    cases.append((f"the same trace gzipped ({gz.stat().st_size / 1e6:,.1f} MB)", gz))
    print()
    # Every whole command first, while this process is small: a child's peak RSS (from wait4)
    # counts what it shares with this process between fork and exec, and the in-process runs
    # below grow this one to hundreds of MiB (a 530 MiB "peak" for a 200 MiB command, once).
    commands = [whole_command(path, args.runs) for _label, path in cases]
    for (label, path), (wall, cpu, rss) in zip(cases, commands):
        inner, inner_cpu, peak, n = in_process(path)
        print(f"{label}\n  studytui profile --json: median {wall:.2f} s wall, {cpu:.2f} s CPU, of {args.runs}; "
              f"peak RSS {rss:,.0f} MiB\n"
              f"  load + analyze in process: {inner:.2f} s wall, {inner_cpu:.2f} s CPU; "
              f"peak Python allocations {peak:,.0f} MiB ({n:,} kernels kept)",
              flush=True)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\n(this benchmark process itself peaked at {baseline:,.0f} MiB RSS, writing the inputs included)")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
