"""Occupancy check on a real GPU: the CUDA driver's occupancy API over many configurations.

Builds kernels whose register count (-maxrregcount) and static shared memory differ, reads back
what the compiler really gave them (cuFuncGetAttribute: NUM_REGS, SHARED_SIZE_BYTES), and asks
cuOccupancyMaxActiveBlocksPerMultiprocessor how many blocks fit on one SM for many block sizes,
dynamic shared memory sizes (with and without the opt-in above 48 KB) and carve-out preferences,
so that every limiter (warps, blocks, registers, shared memory) is reached. It also asks
cuOccupancyMaxActiveClusters about thread-block clusters. It only records: the comparison with
studytui's calculator runs without a GPU (tests/test_occupancy_fixture.py).

Uses only ctypes and libcuda (no Python CUDA package needed). Run from the repository root on a
machine with an NVIDIA GPU and nvcc (or with --cubins pointing at prebuilt cubins):
    python3 benchmarks/gpu/occupancy_check.py --out occupancy.json
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL_SOURCE = HERE / "occupancy_kernels.cu"

REG_CAPS = [24, 32, 37, 40, 48, 56, 64, 72, 83, 96, 104, 128, 129, 152, 168, 200, 232, 255]
STATIC_SMEM = [0, 1000, 8192, 20000, 40000, 49152]
BLOCK_SIZES = [1, 32, 33, 64, 96, 100, 128, 160, 192, 224, 256, 288, 320, 384, 448, 512, 576,
               640, 768, 896, 1000, 1024]
# Dynamic shared memory (bytes) without the opt-in (default limit 48 KB per block) ...
DYN_DEFAULT = [0, 100, 1024, 3000, 9000, 16384, 20000, 30000, 40000, 47000, 60000]
# ... and with the opt-in set to the largest value the device allows.
DYN_OPTIN = [0, 500, 4000, 12000, 24000, 33000, 50000, 70000, 90000, 110000, 130000, 150000,
             170000, 190000, 210000, 225000]
CARVEOUTS = [0, 10, 25, 50, 75, 100]
CLUSTER_SIZES = [1, 2, 4, 8, 12, 16]

# Driver API enums (cuda.h, CUDA 13.0).
CU_FUNC = {"MAX_THREADS_PER_BLOCK": 0, "SHARED_SIZE_BYTES": 1, "CONST_SIZE_BYTES": 2,
           "LOCAL_SIZE_BYTES": 3, "NUM_REGS": 4, "PTX_VERSION": 5, "BINARY_VERSION": 6,
           "MAX_DYNAMIC_SHARED_SIZE_BYTES": 8, "PREFERRED_SHARED_MEMORY_CARVEOUT": 9,
           "NON_PORTABLE_CLUSTER_SIZE_ALLOWED": 14}
CU_DEV = {"MAX_THREADS_PER_BLOCK": 1, "MAX_SHARED_MEMORY_PER_BLOCK": 8, "WARP_SIZE": 10,
          "MAX_REGISTERS_PER_BLOCK": 12, "MULTIPROCESSOR_COUNT": 16,
          "MAX_THREADS_PER_MULTIPROCESSOR": 39, "COMPUTE_CAPABILITY_MAJOR": 75,
          "COMPUTE_CAPABILITY_MINOR": 76, "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 81,
          "MAX_REGISTERS_PER_MULTIPROCESSOR": 82, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 97,
          "MAX_BLOCKS_PER_MULTIPROCESSOR": 106, "RESERVED_SHARED_MEMORY_PER_BLOCK": 111,
          "CLUSTER_LAUNCH": 120}
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4


class LaunchAttribute(ctypes.Structure):
    # CUlaunchAttribute: id, 4 bytes of padding, a 64-byte value union (clusterDim is 3 uints).
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint * 16)]


class LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("numAttrs", ctypes.c_uint)]


class CudaError(RuntimeError):
    def __init__(self, name: str, what: str):
        super().__init__(f"{what}: {name}")
        self.name = name


class Driver:
    """The few driver-API calls the check needs, through ctypes."""

    def __init__(self, lib: ctypes.CDLL | None = None):
        self.lib = lib or ctypes.CDLL("libcuda.so.1")
        self._check(self.lib.cuInit(0), "cuInit")
        self.device = ctypes.c_int()
        self._check(self.lib.cuDeviceGet(ctypes.byref(self.device), 0), "cuDeviceGet")
        self.context = ctypes.c_void_p()
        self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), self.device), "cuDevicePrimaryCtxRetain")
        self._check(self.lib.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def _error_name(self, rc: int) -> str:
        name = ctypes.c_char_p()
        if self.lib.cuGetErrorName(rc, ctypes.byref(name)) == 0 and name.value:
            return name.value.decode()
        return f"CUresult {rc}"

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise CudaError(self._error_name(rc), what)

    def driver_version(self) -> int:
        v = ctypes.c_int()
        self._check(self.lib.cuDriverGetVersion(ctypes.byref(v)), "cuDriverGetVersion")
        return v.value

    def device_name(self) -> str:
        buf = ctypes.create_string_buffer(256)
        self._check(self.lib.cuDeviceGetName(buf, 256, self.device), "cuDeviceGetName")
        return buf.value.decode()

    def device_attr(self, name: str) -> int:
        v = ctypes.c_int()
        self._check(self.lib.cuDeviceGetAttribute(ctypes.byref(v), CU_DEV[name], self.device), f"device {name}")
        return v.value

    def load(self, image: bytes) -> ctypes.c_void_p:
        module = ctypes.c_void_p()
        self._check(self.lib.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image)), "cuModuleLoadData")
        return module

    def function(self, module: ctypes.c_void_p, name: str) -> ctypes.c_void_p:
        fn = ctypes.c_void_p()
        self._check(self.lib.cuModuleGetFunction(ctypes.byref(fn), module, name.encode()), f"cuModuleGetFunction {name}")
        return fn

    def func_attr(self, fn: ctypes.c_void_p, name: str) -> int:
        v = ctypes.c_int()
        self._check(self.lib.cuFuncGetAttribute(ctypes.byref(v), CU_FUNC[name], fn), f"func {name}")
        return v.value

    def set_func_attr(self, fn: ctypes.c_void_p, name: str, value: int) -> None:
        self._check(self.lib.cuFuncSetAttribute(fn, CU_FUNC[name], ctypes.c_int(value)), f"set {name}={value}")

    def max_active_blocks(self, fn: ctypes.c_void_p, threads: int, dyn_smem: int) -> tuple[int | None, str | None]:
        v = ctypes.c_int()
        rc = self.lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(v), fn, ctypes.c_int(threads), ctypes.c_size_t(dyn_smem))
        return (v.value, None) if rc == 0 else (None, self._error_name(rc))

    def max_active_clusters(
        self, fn: ctypes.c_void_p, threads: int, dyn_smem: int, cluster: int, sms: int
    ) -> tuple[int | None, str | None]:
        attr = LaunchAttribute()
        attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value[0], attr.value[1], attr.value[2] = cluster, 1, 1
        cfg = LaunchConfig(cluster * sms, 1, 1, threads, 1, 1, dyn_smem, None, ctypes.pointer(attr), 1)
        v = ctypes.c_int()
        rc = self.lib.cuOccupancyMaxActiveClusters(ctypes.byref(v), fn, ctypes.byref(cfg))
        return (v.value, None) if rc == 0 else (None, self._error_name(rc))

    def max_potential_cluster_size(self, fn: ctypes.c_void_p, threads: int, dyn_smem: int, sms: int) -> tuple[int | None, str | None]:
        cfg = LaunchConfig(16 * sms, 1, 1, threads, 1, 1, dyn_smem, None, None, 0)
        v = ctypes.c_int()
        rc = self.lib.cuOccupancyMaxPotentialClusterSize(ctypes.byref(v), fn, ctypes.byref(cfg))
        return (v.value, None) if rc == 0 else (None, self._error_name(rc))


def kernel_names() -> list[tuple[str, int]]:
    """(function name, static shared memory it declares) in each cubin."""
    return [(f"heavy_s{s}", s) for s in STATIC_SMEM]


def build_cubins(arch: str, out_dir: Path, jobs: int) -> dict[int, Path]:
    """One cubin per register cap, built in parallel; ptxas -v output kept beside each."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    out_dir.mkdir(parents=True, exist_ok=True)

    def one(cap: int) -> tuple[int, Path]:
        cubin = out_dir / f"heavy_r{cap}.cubin"
        if not cubin.exists():
            cmd = [nvcc, "-cubin", f"-arch={arch}", f"-maxrregcount={cap}", "-Xptxas", "-v", "-o", str(cubin), str(KERNEL_SOURCE)]
            res = subprocess.run(cmd, capture_output=True, text=True)
            (out_dir / f"heavy_r{cap}.log").write_text(res.stdout + res.stderr)
            if res.returncode != 0:
                raise RuntimeError(f"nvcc failed for cap {cap}: {res.stderr[-2000:]}")
        return cap, cubin

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(one, REG_CAPS))


def ptxas_report(log: Path) -> dict[str, int]:
    """Registers per function as ptxas -v printed them (a second witness beside NUM_REGS)."""
    if not log.exists():
        return {}
    regs: dict[str, int] = {}
    current = None
    for line in log.read_text().splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = m.group(1)
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            regs[current] = int(m.group(1))
    return regs


def command_output(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unavailable ({exc})"


def dump(record: dict) -> str:
    """JSON with one query row per line, so the fixture reads and diffs line by line."""
    head = {k: v for k, v in record.items() if k not in ("rows", "kernels", "clusters")}
    text = json.dumps(head, indent=1)[:-2]
    for key in ("kernels", "clusters", "rows"):
        items = ",\n  ".join(json.dumps(item) for item in record[key])
        text += f',\n "{key}": [\n  {items}\n ]'
    return text + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="JSON record to write")
    ap.add_argument("--cubins", default="", help="folder of prebuilt heavy_r<cap>.cubin (built there if missing)")
    ap.add_argument("--jobs", type=int, default=max(1, min(16, os.cpu_count() or 1)))
    ap.add_argument("--seed", type=int, default=16)
    args = ap.parse_args(argv)

    started = time.time()
    drv = Driver()
    major = drv.device_attr("COMPUTE_CAPABILITY_MAJOR")
    minor = drv.device_attr("COMPUTE_CAPABILITY_MINOR")
    device = {name.lower(): drv.device_attr(name) for name in CU_DEV}
    sms = device["multiprocessor_count"]
    optin = device["max_shared_memory_per_block_optin"]
    arch = f"sm_{major}{minor}"
    cubin_dir = Path(args.cubins) if args.cubins else Path("/tmp/occupancy-cubins")
    t0 = time.time()
    cubins = build_cubins(arch, cubin_dir, args.jobs)
    build_s = time.time() - t0

    rng = random.Random(args.seed)
    kernels: list[dict] = []
    rows: list[list] = []
    clusters: list[dict] = []

    def add_kernel(name: str, cap: int | None, fn: ctypes.c_void_p, ptxas: dict[str, int], declared_smem: int) -> int:
        info = {
            "name": f"{name}@r{cap}" if cap else name,
            "function": name,
            "maxrregcount": cap,
            "num_regs": drv.func_attr(fn, "NUM_REGS"),
            "static_smem": drv.func_attr(fn, "SHARED_SIZE_BYTES"),
            "declared_static_smem": declared_smem,
            "local_bytes": drv.func_attr(fn, "LOCAL_SIZE_BYTES"),
            "max_threads_per_block": drv.func_attr(fn, "MAX_THREADS_PER_BLOCK"),
            "binary_version": drv.func_attr(fn, "BINARY_VERSION"),
            "ptxas_regs": ptxas.get(name),
        }
        kernels.append(info)
        return len(kernels) - 1

    def query(k: int, fn, threads: int, dyn: int, carveout: int | None) -> None:
        max_dyn = drv.func_attr(fn, "MAX_DYNAMIC_SHARED_SIZE_BYTES")
        blocks, err = drv.max_active_blocks(fn, threads, dyn)
        rows.append([k, threads, dyn, max_dyn, carveout, blocks, err])

    modules = {cap: drv.load(path.read_bytes()) for cap, path in cubins.items()}
    handles: list[tuple[int, ctypes.c_void_p]] = []
    for cap in REG_CAPS:
        ptxas = ptxas_report(cubin_dir / f"heavy_r{cap}.log")
        for name, smem in kernel_names():
            fn = drv.function(modules[cap], name)
            handles.append((add_kernel(name, cap, fn, ptxas, smem), fn))
    light_fn = drv.function(modules[REG_CAPS[0]], "light")
    light_ptxas = ptxas_report(cubin_dir / f"heavy_r{REG_CAPS[0]}.log")
    handles.append((add_kernel("light", None, light_fn, light_ptxas, 0), light_fn))

    # Phase 1: default per-block limit (48 KB; no opt-in). Every block size, dynamic sizes drawn
    # from the list, plus both sides of the 48 KB edge.
    for k, fn in handles:
        static = kernels[k]["static_smem"]
        edge = device["max_shared_memory_per_block"] - static - device["reserved_shared_memory_per_block"]
        for threads in BLOCK_SIZES:
            for dyn in rng.sample(DYN_DEFAULT, 1):
                query(k, fn, threads, dyn, None)
        for dyn in {
            max(0, edge),
            max(0, edge) + 1,
            max(0, edge + device["reserved_shared_memory_per_block"]),
            max(0, edge + device["reserved_shared_memory_per_block"]) + 1,
        }:
            query(k, fn, rng.choice(BLOCK_SIZES), dyn, None)

    # Phase 2: opt in to the largest per-block shared memory, then sizes up to it and past it.
    for k, fn in handles:
        static = kernels[k]["static_smem"]
        top = optin - static
        drv.set_func_attr(fn, "MAX_DYNAMIC_SHARED_SIZE_BYTES", top)
        for threads in BLOCK_SIZES:
            for dyn in rng.sample(DYN_OPTIN, 1):
                query(k, fn, threads, dyn, None)
        for dyn in (top, top + 1, top - 127, top - 128 - device["reserved_shared_memory_per_block"]):
            query(k, fn, rng.choice(BLOCK_SIZES), max(0, dyn), None)

    # Phase 3: carve-out preferences on a fresh load of a few kernels (the preference is a hint
    # the occupancy API honours when the blocks fit in the carve-out it names).
    carve_module = drv.load(cubins[64].read_bytes())
    for name, _smem in (("heavy_s0", 0), ("heavy_s8192", 8192), ("heavy_s40000", 40000)):
        fn = drv.function(carve_module, name)
        k = add_kernel(name, 64, fn, ptxas_report(cubin_dir / "heavy_r64.log"), _smem)
        drv.set_func_attr(fn, "MAX_DYNAMIC_SHARED_SIZE_BYTES", optin - kernels[k]["static_smem"])
        for carve in CARVEOUTS:
            drv.set_func_attr(fn, "PREFERRED_SHARED_MEMORY_CARVEOUT", carve)
            for threads in (32, 128, 256, 512):
                for dyn in (0, 2000, 9000, 30000, 70000, 120000):
                    query(k, fn, threads, dyn, carve)

    # Phase 4: clusters (informational: how many clusters fit on the whole GPU depends on how
    # SMs are grouped into GPCs, which the per-SM arithmetic does not model).
    cluster_fns = [
        (i, fn) for i, fn in handles if kernels[i]["function"] in ("heavy_s0", "light") and kernels[i]["maxrregcount"] in (None, 32, 128)
    ]
    for k, fn in cluster_fns:
        for non_portable in (0, 1):
            drv.set_func_attr(fn, "NON_PORTABLE_CLUSTER_SIZE_ALLOWED", non_portable)
            potential, perr = drv.max_potential_cluster_size(fn, 128, 0, sms)
            clusters.append({"kernel": k, "non_portable": non_portable, "query": "max_potential_cluster_size",
                             "threads": 128, "dyn_smem": 0, "result": potential, "error": perr})
            for cluster in CLUSTER_SIZES:
                for threads, dyn in ((128, 0), (256, 0), (1024, 0), (128, 100000)):
                    n, err = drv.max_active_clusters(fn, threads, dyn, cluster, sms)
                    blocks, berr = drv.max_active_blocks(fn, threads, dyn)
                    clusters.append({"kernel": k, "non_portable": non_portable, "query": "max_active_clusters",
                                     "threads": threads, "dyn_smem": dyn, "cluster": cluster,
                                     "result": n, "error": err, "blocks_per_sm": blocks})

    record = {
        "kind": "occupancy-check",
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hardware": {
            "name": drv.device_name(),
            "compute_capability": f"{major}.{minor}",
            "device_attributes": device,
            "driver_version": drv.driver_version(),
            "nvidia_smi": command_output(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm", "--format=csv,noheader"]),
            "nvcc": (command_output([shutil.which("nvcc") or "nvcc", "--version"]).splitlines() or [""])[-1],
            "python": sys.version.split()[0],
        },
        "workload": (
            f"{len(kernels)} kernels (a register-heavy kernel built with -maxrregcount in {REG_CAPS} "
            f"and static shared memory {STATIC_SMEM} bytes, plus a light kernel), {len(rows)} "
            "occupancy queries: block sizes 1-1024, dynamic shared memory with and without the "
            "opt-in above 48 KB, carve-out preferences, and thread-block cluster queries"),
        "precision": "n/a (integer resource counts)",
        "baseline": "cuOccupancyMaxActiveBlocksPerMultiprocessor (CUDA driver API) on the kernels' "
                    "NUM_REGS and SHARED_SIZE_BYTES as read back with cuFuncGetAttribute",
        "correctness_method": "studytui's calculator (studytui.calc.occupancy) must give the same "
                              "blocks per SM for every row, exactly (tests/test_occupancy_fixture.py); "
                              "register counts cross-checked against ptxas -v",
        "build_seconds": round(build_s, 2),
        "run_seconds": round(time.time() - started, 2),
        "kernels": kernels,
        "columns": ["kernel", "threads", "dyn_smem", "max_dyn_smem_attr", "carveout_percent", "blocks_per_sm", "error"],
        "rows": rows,
        "clusters": clusters,
    }
    Path(args.out).write_text(dump(record))
    limited = sum(1 for r in rows if r[5] == 0)
    print(f"{record['hardware']['name']} cc {major}.{minor}: {len(kernels)} kernels, {len(rows)} queries "
          f"({limited} with no block fitting), {len(clusters)} cluster queries, errors "
          f"{sum(1 for r in rows if r[6])}; build {build_s:.1f}s, total {time.time() - started:.1f}s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
