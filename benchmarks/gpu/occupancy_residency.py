"""Residency on a real GPU: do as many blocks really sit on an SM at once as the occupancy API says?

For a set of configurations that reach every limiter, launches occupancy_probe.cu with enough
blocks for several waves; each block counts itself in on its SM (%smid), records the most blocks
seen at once, and stays resident for a few milliseconds. The most seen on any SM is compared with
cuOccupancyMaxActiveBlocksPerMultiprocessor (and, in the test suite, with studytui's calculator).
Uses ctypes and libcuda only; the kernels are built with nvcc.

Run from the repository root on a machine with an NVIDIA GPU and nvcc:
    python3 benchmarks/gpu/occupancy_residency.py --out residency.json
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from occupancy_check import CU_DEV, Driver, command_output, ptxas_report  # noqa: E402

SOURCE = HERE / "occupancy_probe.cu"
# (register cap, threads per block, dynamic shared memory bytes): every limiter binds somewhere.
CONFIGS = [
    (32, 32, 0), (32, 64, 0), (32, 96, 0), (32, 128, 0), (32, 256, 0), (32, 1024, 0), (32, 640, 0),
    (40, 256, 0), (48, 256, 0), (64, 256, 0), (64, 128, 0), (72, 384, 0), (96, 128, 0), (128, 128, 0),
    (128, 64, 0), (168, 96, 0), (255, 64, 0), (255, 256, 0), (255, 32, 0),
    (32, 128, 20000), (32, 128, 50000), (32, 64, 100000), (32, 256, 150000), (32, 32, 7000),
    (64, 128, 30000), (48, 192, 60000), (32, 128, 232000), (128, 96, 40000),
]
SPIN_CYCLES = 4_000_000  # about 2-3 ms at 1.4-2 GHz: every block of a wave is in before any leaves
SLOTS = 1024  # counters per %smid value (more than any SM id)


class Launcher(Driver):
    def alloc(self, nbytes: int) -> ctypes.c_uint64:
        ptr = ctypes.c_uint64()
        self._check(self.lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(nbytes)), "cuMemAlloc")
        return ptr

    def fill32(self, ptr: ctypes.c_uint64, value: int, count: int) -> None:
        self._check(self.lib.cuMemsetD32_v2(ptr, ctypes.c_uint(value), ctypes.c_size_t(count)), "cuMemsetD32")

    def read_u32(self, ptr: ctypes.c_uint64, count: int) -> list[int]:
        host = (ctypes.c_uint * count)()
        self._check(self.lib.cuMemcpyDtoH_v2(host, ptr, ctypes.c_size_t(4 * count)), "cuMemcpyDtoH")
        return list(host)

    def launch(self, fn, grid: int, block: int, smem: int, args: list) -> None:
        holders = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
        self._check(self.lib.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, smem, None, holders, None), "cuLaunchKernel")
        self._check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")


def build(arch: str, out_dir: Path, caps: list[int], jobs: int) -> dict[int, Path]:
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    out_dir.mkdir(parents=True, exist_ok=True)

    def one(cap: int) -> tuple[int, Path]:
        cubin = out_dir / f"probe_r{cap}.cubin"
        if not cubin.exists():
            res = subprocess.run([nvcc, "-cubin", f"-arch={arch}", f"-maxrregcount={cap}", "-Xptxas", "-v", "-o", str(cubin), str(SOURCE)],
                                 capture_output=True, text=True)
            (out_dir / f"probe_r{cap}.log").write_text(res.stdout + res.stderr)
            if res.returncode != 0:
                raise RuntimeError(f"nvcc failed for cap {cap}: {res.stderr[-2000:]}")
        return cap, cubin

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(one, caps))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--cubins", default="/tmp/occupancy-probe-cubins")
    ap.add_argument("--jobs", type=int, default=max(1, min(16, os.cpu_count() or 1)))
    args = ap.parse_args(argv)
    started = time.time()
    drv = Launcher()
    major, minor = drv.device_attr("COMPUTE_CAPABILITY_MAJOR"), drv.device_attr("COMPUTE_CAPABILITY_MINOR")
    device = {name.lower(): drv.device_attr(name) for name in CU_DEV}
    sms = device["multiprocessor_count"]
    caps = sorted({c for c, _t, _d in CONFIGS})
    cubins = build(f"sm_{major}{minor}", Path(args.cubins), caps, args.jobs)
    functions = {}
    for cap in caps:
        fn = drv.function(drv.load(cubins[cap].read_bytes()), "probe")
        static = drv.func_attr(fn, "SHARED_SIZE_BYTES")
        drv.set_func_attr(fn, "MAX_DYNAMIC_SHARED_SIZE_BYTES", device["max_shared_memory_per_block_optin"] - static)
        functions[cap] = (fn, drv.func_attr(fn, "NUM_REGS"), static, ptxas_report(Path(args.cubins) / f"probe_r{cap}.log").get("probe"))

    n_in = 4096
    d_in, d_out = drv.alloc(4 * n_in), drv.alloc(4 * 1024 * sms * 40)
    d_active, d_most = drv.alloc(4 * SLOTS), drv.alloc(4 * SLOTS)
    drv.fill32(d_in, 0x3F800000, n_in)  # 1.0f
    rows = []
    for cap, threads, dyn in CONFIGS:
        fn, regs, static, ptxas = functions[cap]
        api, err = drv.max_active_blocks(fn, threads, dyn)
        row = {"maxrregcount": cap, "num_regs": regs, "ptxas_regs": ptxas, "static_smem": static, "threads": threads,
               "dyn_smem": dyn, "api_blocks_per_sm": api, "api_error": err}
        if api:
            grid = sms * (api + 3)
            drv.fill32(d_active, 0, SLOTS)
            drv.fill32(d_most, 0, SLOTS)
            t0 = time.perf_counter()
            drv.launch(fn, grid, threads, dyn, [d_in, d_out, ctypes.c_int(1), d_active, d_most,
                                                 ctypes.c_longlong(SPIN_CYCLES), ctypes.c_int(dyn // 4)])
            most = [m for m in drv.read_u32(d_most, SLOTS) if m]
            left = sum(drv.read_u32(d_active, SLOTS))
            row.update(grid=grid, sms_used=len(most), observed_max=max(most), observed_min=min(most),
                       still_counted=left, launch_ms=round((time.perf_counter() - t0) * 1e3, 2))
        rows.append(row)
        print(f"r{regs:>3} t{threads:>5} dyn{dyn:>7}: api {api}, seen {row.get('observed_min')}-{row.get('observed_max')} "
              f"on {row.get('sms_used')} SMs", flush=True)

    record = {
        "kind": "occupancy-residency",
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hardware": {
            "name": drv.device_name(),
            "compute_capability": f"{major}.{minor}",
            "device_attributes": device,
            "driver_version": drv.driver_version(),
            "nvidia_smi": command_output(
                ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm", "--format=csv,noheader"]
            ),
            "nvcc": (command_output([shutil.which("nvcc") or "nvcc", "--version"]).splitlines() or [""])[-1],
        },
        "workload": f"{len(CONFIGS)} launches of occupancy_probe.cu (register caps {caps}, 32-1024 threads, dynamic shared "
        f"memory 0-232,000 B), each with {sms} SMs x (API blocks per SM + 3) blocks; every block holds its SM "
        f"for {SPIN_CYCLES:,} cycles",
        "precision": "n/a (integer counts)",
        "baseline": "cuOccupancyMaxActiveBlocksPerMultiprocessor for the same function and launch",
        "correctness_method": "the most blocks seen resident at once on each SM (atomic counters per %smid) must equal the "
        "API's blocks per SM on every SM used; the counters must return to zero; studytui's calculator "
        "must give the same number (tests/test_occupancy.py)",
        "spin_cycles": SPIN_CYCLES,
        "run_seconds": round(time.time() - started, 2),
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    agree = sum(1 for r in rows if r.get("observed_max") == r["api_blocks_per_sm"] == r.get("observed_min"))
    print(f"{agree} of {sum(1 for r in rows if r['api_blocks_per_sm'])} launches: every SM held exactly the API's blocks per SM")
    return 0


if __name__ == "__main__":
    sys.exit(main())
