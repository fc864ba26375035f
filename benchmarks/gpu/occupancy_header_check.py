"""Cross-check for the compute capabilities without a GPU here: NVIDIA's own occupancy arithmetic.

cuda_occupancy.h (shipped with the CUDA Toolkit, header-only, runs on the CPU) carries the
per-architecture constants (resident blocks, allocation granularities, register-file slices,
carve-out sizes, the per-block reservation). This builds occupancy_header_check.cpp against it,
feeds it each compute capability's device properties from content/hardware/compute-capabilities/
and a seeded sample of launch configurations, and records what it answers. The test suite then
checks the calculator against every row (tests/test_occupancy.py), so a wrong table row or a wrong
rule shows up for 7.0-12.0 as it does for the H200's real API.

Run from the repository root where g++ and a CUDA Toolkit's include folder are:
    python3 benchmarks/gpu/occupancy_header_check.py --cuda-include /usr/local/cuda/include --out OUT.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from studytui.calc.occupancy import load_tables  # noqa: E402

THREADS = [1, 32, 33, 64, 96, 100, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1000, 1024]
REGS = [8, 16, 24, 32, 37, 40, 48, 56, 64, 72, 80, 96, 128, 129, 168, 200, 232, 255]
STATIC = [0, 1000, 8192, 20000, 49152]
DYN = [0, 100, 3000, 9000, 20000, 40000, 60000, 90000, 100000, 130000, 160000, 200000, 230000]
CARVEOUT = [-1, -1, -1, 0, 10, 25, 50, 75, 100]
PER_CC = 800


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=16)
    args = ap.parse_args(argv)
    header = Path(args.cuda_include) / "cuda_occupancy.h"
    version = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", (Path(args.cuda_include) / "cuda.h").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "occ"
        subprocess.run(["g++", "-O1", f"-I{args.cuda_include}", "-o", str(exe), str(Path(__file__).with_suffix(".cpp"))], check=True)
        rng = random.Random(args.seed)
        rows = []
        for cc in load_tables().capabilities.values():
            major, minor = cc.cc.split(".")
            props = [major, minor, cc.max_threads_per_block, cc.max_threads_per_sm, cc.max_registers_per_block,
                     cc.registers_per_sm, cc.warp_size, cc.shared_memory_per_block_default, cc.shared_memory_per_sm,
                     cc.shared_memory_per_block_optin, cc.reserved_shared_memory_per_block]
            configs = [
                (rng.choice(THREADS), rng.choice(REGS), rng.choice(STATIC), rng.choice(DYN), rng.choice(CARVEOUT)) for _ in range(PER_CC)
            ]
            text = "".join(f"{t} {r} {s} {d} {c}\n" for t, r, s, d, c in configs)
            out = subprocess.run([str(exe), *map(str, props)], input=text, capture_output=True, text=True, check=True).stdout.split("\n")
            for (t, r, s, d, c), line in zip(configs, out):
                if line.startswith("error"):
                    raise SystemExit(f"cuda_occupancy.h refused cc {cc.cc} {t} {r} {s} {d} {c}: {line}")
                rows.append([cc.cc, t, r, s, d, None if c < 0 else c, int(line)])
    record = {
        "kind": "occupancy-header-check",
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
        "hardware": "none: cuda_occupancy.h evaluated on the CPU for each compute capability's table row",
        "workload": f"{PER_CC} seeded random launch configurations per compute capability (threads {THREADS[0]}-{THREADS[-1]}, "
                    f"registers {REGS[0]}-{REGS[-1]}, static shared memory up to {STATIC[-1]} B, dynamic up to {DYN[-1]} B, "
                    "carve-out default or 0-100%), the kernel opted in to the largest dynamic shared memory",
        "precision": "n/a (integer resource counts)",
        "baseline": f"cudaOccMaxActiveBlocksPerMultiprocessor from cuda_occupancy.h, CUDA {version.group(1) if version else '?'}",
        "correctness_method": "the calculator must give the same blocks per SM for every row (tests/test_occupancy.py)",
        "header": str(header),
        "columns": ["cc", "threads", "regs", "static_smem", "dyn_smem", "carveout_percent", "blocks_per_sm"],
        "rows": rows,
    }
    body = ",\n  ".join(json.dumps(r) for r in rows)
    head = json.dumps({k: v for k, v in record.items() if k != "rows"}, indent=1)[:-2]
    Path(args.out).write_text(head + f',\n "rows": [\n  {body}\n ]\n}}\n')
    print(f"{len(rows)} rows from {header} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
