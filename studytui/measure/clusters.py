"""`studytui measure --clusters`: record cudaOccupancyMaxActiveClusters on the learner's GPU.

The same table as content/hardware/measured/device/h200-sxm-clusters.yaml (which
benchmarks/gpu/capture_clusters.cu recorded on an H200): for cluster sizes 1-16 along x (9-16 with
the non-portable attribute, and once without it, which must fail), a few 2-D and 3-D shapes, and
kernel configurations giving 1-32 blocks per SM, the clusters the driver says fit at once, beside
the occupancy calculator's blocks per SM. The correctness check launches, at 1 block per SM and
each size, exactly that many clusters whose blocks wait for one another (all must be resident at
once), then one more cluster (some must time out). The L2 device attributes are read too, so
`calc l2` and `calc occupancy --cluster` use the learner's own figures.

The logic here drives a `ClusterBackend`; the real one (studytui.measure.cuda_driver, ctypes over
the CUDA driver) is imported only when a measurement runs, and the tests drive a fake.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, Protocol, Sequence

SCHEMA = "studytui-cluster-capacity/1"
SIZES = tuple(range(1, 17))
PORTABLE = 8
SHAPES = ((2, 1, 1), (1, 2, 1), (4, 1, 1), (2, 2, 1), (1, 4, 1), (8, 1, 1), (4, 2, 1), (2, 4, 1), (1, 8, 1), (2, 2, 2),
          (1, 1, 8), (16, 1, 1), (4, 4, 1), (8, 2, 1), (2, 8, 1), (1, 16, 1), (12, 1, 1), (3, 4, 1), (6, 2, 1), (3, 1, 1), (1, 3, 1))
SHAPE_BLOCKS_PER_SM = (1, 2, 4, 8, 16)
THREADS_ALONE = (1024, 512, 256, 128, 96, 64)
MIXED = ((256, 60 * 1024), (512, 100 * 1024), (128, 28 * 1024))
RESIDENCY_TIMEOUT_NS = 200_000_000
ATTRIBUTES = (  # (name as cudaDeviceProp spells it, CUdevice_attribute, unit)
    ("l2CacheSize", 38, "bytes"), ("persistingL2CacheMaxSize", 108, "bytes"), ("accessPolicyMaxWindowSize", 109, "bytes"),
    ("multiProcessorCount", 16, "SMs"), ("sharedMemPerMultiprocessor", 81, "bytes"), ("sharedMemPerBlockOptin", 97, "bytes"),
    ("reservedSharedMemPerBlock", 111, "bytes"), ("maxBlocksPerMultiProcessor", 106, "blocks"),
    ("regsPerMultiprocessor", 82, "32-bit registers"), ("clusterLaunch", 120, "bool"),
)


class ClusterBackend(Protocol):
    def describe(self) -> dict[str, Any]:
        """name, compute_capability (X.Y), sm_count, memory_bytes, driver_api, attributes {name: int}."""

    def kernel(self) -> dict[str, int]:
        """The probe kernel's num_regs and static_smem (read back from the driver)."""

    def blocks_per_sm(self, threads: int, dyn_smem: int) -> int: ...

    def max_active_clusters(self, threads: int, dyn_smem: int, dims: tuple[int, int, int], nonportable: bool) -> int | str:
        """Clusters that fit at once, or the driver's error text."""

    def max_potential_cluster_size(self, nonportable: bool) -> int: ...

    def residency(self, dyn_smem: int, size: int, clusters: int, timeout_ns: int) -> dict[str, Any]:
        """Launch `clusters` clusters of `size` 64-thread blocks that wait for each other: blocks,
        arrived, blocks_timed_out, status."""


def _smem_for(backend: ClusterBackend, threads: int, want: int, optin: int) -> int | None:
    """The largest dynamic shared memory (128-B steps) giving exactly `want` blocks per SM."""
    lo, hi, best = 0, optin // 128, None
    while lo <= hi:
        mid = (lo + hi) // 2
        got = backend.blocks_per_sm(threads, mid * 128)
        if got >= want:
            if got == want:
                best = mid * 128
            lo = mid + 1
        else:
            hi = mid - 1
    return best


def record_clusters(backend: ClusterBackend, accelerator: str | None, *, software: dict[str, Any] | None = None,
                    progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Query the table and check it; the record as a mapping (the content file's schema)."""
    dev = backend.describe()
    major = int(str(dev["compute_capability"]).split(".")[0])
    if major < 9:
        from studytui.core.errors import UsageError

        raise UsageError(f"{dev['name']} is compute capability {dev['compute_capability']}: thread-block clusters need 9.0 or later")
    attrs = dict(dev.get("attributes") or {})
    optin = int(attrs.get("sharedMemPerBlockOptin") or 0)
    sms = int(dev["sm_count"])
    kernel = backend.kernel()

    configs: list[tuple[int, int, int, str]] = []
    progress("finding kernel configurations for 1..32 blocks per SM")
    for want in range(1, 33):
        smem = _smem_for(backend, 64, want, optin)
        if smem is not None:
            configs.append((64, smem, backend.blocks_per_sm(64, smem), "64 threads, shared memory sets blocks/SM"))
    for threads in THREADS_ALONE:
        configs.append((threads, 0, backend.blocks_per_sm(threads, 0), "threads alone set blocks/SM (no shared memory)"))
    for threads, smem in MIXED:
        if smem <= optin:
            configs.append((threads, smem, backend.blocks_per_sm(threads, smem), "threads and shared memory"))

    rows: list[dict[str, Any]] = []
    failed_without: list[int] = []
    errors: list[str] = []
    progress(f"querying cudaOccupancyMaxActiveClusters over {len(configs)} configurations x {len(SIZES)} sizes")

    def query(threads: int, smem: int, bps: int, dims: tuple[int, int, int]) -> None:
        size = dims[0] * dims[1] * dims[2]
        got = backend.max_active_clusters(threads, smem, dims, size > PORTABLE)
        if isinstance(got, str):
            errors.append(f"{dims} threads {threads} smem {smem}: {got}")
            return
        rows.append({"cluster": list(dims), "size": size, "portable": size <= PORTABLE, "threads": threads, "dyn_smem": smem,
                     "regs": kernel["num_regs"], "blocks_per_sm": bps, "max_active_clusters": got})

    for threads, smem, bps, _how in configs:
        if bps < 1:
            continue
        for size in SIZES:
            query(threads, smem, bps, (size, 1, 1))
            if size > PORTABLE and isinstance(backend.max_active_clusters(threads, smem, (size, 1, 1), False), str):
                failed_without.append(size)
    for threads, smem, bps, _how in configs:
        if threads == 64 and bps in SHAPE_BLOCKS_PER_SM:
            for dims in SHAPES:
                query(threads, smem, bps, dims)

    # checks: under the per-SM bound, the same answer for every shape of a size, the residency launch
    by_key: dict[tuple[int, int], set[int]] = {}
    over = [r for r in rows if r["max_active_clusters"] > sms * r["blocks_per_sm"] // r["size"]]
    for r in rows:
        by_key.setdefault((r["size"], r["blocks_per_sm"]), set()).add(r["max_active_clusters"])
    shapes_agree = all(len(v) == 1 for v in by_key.values())
    one = next((c for c in configs if c[0] == 64 and c[2] == 1), None)
    residency: list[dict[str, Any]] = []
    exact = None
    if one is not None:
        progress("residency check at 1 block per SM: launching exactly max_active_clusters clusters, then one more")
        exact = True
        for size in SIZES:
            n = next((r["max_active_clusters"] for r in rows if r["size"] == size and r["blocks_per_sm"] == 1
                      and r["cluster"] == [size, 1, 1] and r["threads"] == 64), None)
            if not n:
                exact = False
                continue
            fit = backend.residency(one[1], size, n, RESIDENCY_TIMEOUT_NS)
            more = backend.residency(one[1], size, n + 1, RESIDENCY_TIMEOUT_NS)
            fit_ok = fit["status"] == "no error" and fit["blocks_timed_out"] == 0 and fit["arrived"] == n * size
            more_ok = more["status"] == "no error" and more["blocks_timed_out"] > 0
            exact = exact and fit_ok and more_ok
            residency.append({"size": size, "launched_clusters": n, "blocks": n * size, "all_coresident": fit_ok,
                              "blocks_timed_out": fit["blocks_timed_out"]})
            residency.append({"size": size, "launched_clusters": n + 1, "blocks": (n + 1) * size,
                              "all_coresident": more["status"] == "no error" and more["blocks_timed_out"] == 0,
                              "blocks_timed_out": more["blocks_timed_out"]})
    passed = not over and not errors and shapes_agree and bool(exact)

    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "schema": SCHEMA,
        "accelerator": accelerator or "",
        "date": now,
        "hardware": {"name": dev["name"], "catalog_id": accelerator, "sm_count": sms, "memory_bytes": dev.get("memory_bytes"),
                     "compute_capability": str(dev["compute_capability"]), "driver_api": dev.get("driver_api")},
        "software": dict(software or {}, backend=type(backend).__name__),
        "workload": ("probe kernel (one shared-memory store and load per block; "
                     f"{kernel['num_regs']} registers, {kernel['static_smem']} B static shared memory); 64 threads with dynamic "
                     "shared memory chosen (binary search, 128-B steps) for exactly 1..32 blocks per SM, threads alone "
                     f"({', '.join(map(str, THREADS_ALONE))}), a few mixes; cluster sizes 1..16 along x and {len(SHAPES)} shapes"),
        "precision": "n/a (integer resource counts)",
        "baseline": "the naive bound floor(SMs x blocks_per_sm / cluster_size)",
        "correctness": {
            "method": ("every query's status checked; each answer at most the naive bound; every shape of a size gives the "
                       "size's answer; at 1 block per SM for each size a cluster launch of exactly max_active_clusters "
                       "clusters whose blocks wait (200 ms, %globaltimer) for the whole grid must have none time out, "
                       "and one cluster more must have blocks time out"),
            "over_the_bound": len(over), "query_errors": errors[:20], "shapes_agree": shapes_agree,
            "residency_all_sizes_exact": exact, "passed": passed,
        },
        "device_attributes": {name: {"value": attrs[name], "unit": unit, "cudaDeviceAttr": code}
                              for name, code, unit in ATTRIBUTES if name in attrs},
        "max_potential_cluster_size": {"portable": backend.max_potential_cluster_size(False),
                                       "nonportable": backend.max_potential_cluster_size(True)},
        "nonportable_without_attribute": {"sizes": sorted(set(failed_without))},
        "one_block_per_sm": {"residency_check": residency},
        "rows": rows,
    }


def summary(record: dict[str, Any], sizes: Sequence[int] = (2, 3, 4, 8, 12, 16)) -> list[tuple[int, int | None, int]]:
    """(size, max_active_clusters at 1 block per SM, the naive bound) for the sizes people ask about."""
    sms = int(record["hardware"]["sm_count"])
    found = {r["size"]: r["max_active_clusters"] for r in record["rows"] if r["blocks_per_sm"] == 1 and r["cluster"][1:] == [1, 1]}
    return [(size, found.get(size), sms // size) for size in sizes]
