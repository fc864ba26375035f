"""Occupancy: how many blocks of a kernel fit on one SM, which resource limits it, what to change.

The arithmetic is the CUDA occupancy calculator's (cuda_occupancy.h, which the runtime ships):
each of four limits gives a number of blocks per SM and the smallest wins.

- warps:     max warps per SM // warps per block (a block is rounded up to whole warps)
- blocks:    the hardware's resident-block limit
- registers: a warp's registers are rounded up to the allocation unit (256) and come from one of
             four register-file slices, so warps per SM = 4 * ((regs per SM / 4) // regs per warp)
- shared:    (static + dynamic + the per-block reservation) rounded up to the granularity, out of
             the shared-memory carve-out the driver picks (the largest by default)

Verified exactly against cuOccupancyMaxActiveBlocksPerMultiprocessor on an H200 (the record
benchmarks/gpu/records/2026-12-01-occupancy-h200.json, replayed by tests/test_occupancy.py); the
tables per compute capability live in content/hardware/compute-capabilities/.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from studytui.calc.forms import CC_FIELDS, CalcSpec, DataDir, FieldSpec
from studytui.calc.result import Result
from studytui.calc.units import FieldError
from studytui.calc.views import Sweep, TextTable

LIMITERS = ("warps", "blocks", "registers", "shared memory")
_INT_FIELDS = (
    "warp_size", "max_threads_per_block", "registers_per_sm", "max_registers_per_block", "max_registers_per_thread",
    "register_allocation_unit", "sub_partitions", "shared_memory_per_block_default", "max_warps_per_sm",
    "max_blocks_per_sm", "shared_memory_per_sm", "shared_memory_per_block_optin", "shared_memory_granularity",
    "reserved_shared_memory_per_block",
)


@dataclass(frozen=True)
class ComputeCapability:
    """Per-SM limits of one NVIDIA compute capability (see the YAML for units and sources)."""

    cc: str
    architecture: str
    examples: str
    warp_size: int
    max_threads_per_block: int
    registers_per_sm: int
    max_registers_per_block: int
    max_registers_per_thread: int
    register_allocation_unit: int
    sub_partitions: int
    shared_memory_per_block_default: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    shared_memory_per_sm: int
    shared_memory_per_block_optin: int
    shared_memory_granularity: int
    reserved_shared_memory_per_block: int
    carveout_kib: tuple[int, ...]
    cluster_portable: int | None
    cluster_non_portable: int | None
    tensor_memory: dict[str, int] | None
    sources: tuple[str, ...]
    notes: str = ""

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * self.warp_size

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("cc", "architecture", "examples", *_INT_FIELDS)}
        out.update(
            max_threads_per_sm=self.max_threads_per_sm, carveout_kib=list(self.carveout_kib),
            cluster_portable=self.cluster_portable, cluster_non_portable=self.cluster_non_portable,
            tensor_memory=self.tensor_memory, sources=list(self.sources), notes=self.notes,
        )
        return out


@dataclass(frozen=True)
class Tables:
    capabilities: dict[str, ComputeCapability]
    accelerators: dict[str, str]  # catalog id -> cc
    not_modelled: dict[str, str]  # catalog id -> reason
    sources: dict[str, dict[str, str]]


def _tables_file(data_dir: str | os.PathLike[str] | None = None) -> Path:
    from studytui.core import paths
    from studytui.core.errors import UsageError

    bases = [paths.PACKAGE_DIR / "_content", paths.CHECKOUT_DIR / "content"]
    try:
        bases.insert(0, paths.content_dir())  # a --content / STUDYTUI_CONTENT_DIR folder may carry its own tables
    except UsageError:
        pass
    for base in bases:
        candidate = Path(base) / "hardware" / "compute-capabilities" / "nvidia.yaml"
        if candidate.is_file():
            return candidate
    raise FieldError("cc", "the compute-capability tables (content/hardware/compute-capabilities/nvidia.yaml) are missing")


@lru_cache(maxsize=4)
def _load(path: str) -> Tables:
    from studytui.core import fileio
    from studytui.guide.yamlio import safe_load

    raw = safe_load(fileio.read_text_bounded(path, fileio.YAML_LIMIT, "the compute-capability tables"))
    defaults = raw.get("defaults") or {}
    caps: dict[str, ComputeCapability] = {}
    for row in raw["compute_capabilities"]:
        merged = {**defaults, **row}
        cluster = merged.get("cluster") or {}
        caps[str(merged["cc"])] = ComputeCapability(
            cc=str(merged["cc"]), architecture=str(merged["architecture"]), examples=str(merged.get("examples", "")),
            **{k: int(merged[k]) for k in _INT_FIELDS},
            carveout_kib=tuple(int(x) for x in merged["carveout_kib"]),
            cluster_portable=cluster.get("portable"), cluster_non_portable=cluster.get("non_portable"),
            tensor_memory=merged.get("tensor_memory"), sources=tuple(merged.get("sources") or ()),
            notes=str(merged.get("notes") or ""),
        )
    return Tables(
        capabilities=caps,
        accelerators={str(k): str(v) for k, v in (raw.get("accelerators") or {}).items()},
        not_modelled={str(k): str(v) for k, v in (raw.get("not_modelled") or {}).items()},
        sources=raw.get("sources") or {},
    )


def load_tables(data_dir: str | os.PathLike[str] | None = None) -> Tables:
    import yaml

    path = _tables_file(data_dir)
    try:
        return _load(str(path))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise FieldError("cc", f"cannot read the compute-capability tables {path}: {type(exc).__name__} {exc}") from None


def get_cc(cc: str, data_dir: str | os.PathLike[str] | None = None) -> ComputeCapability:
    tables = load_tables(data_dir)
    key = str(cc).strip()
    if key.startswith("sm_") or key.startswith("sm"):
        digits = key.lstrip("sm_")
        key = f"{digits[:-1]}.{digits[-1]}" if digits.isdigit() and len(digits) >= 2 else key
    if key in tables.capabilities:
        return tables.capabilities[key]
    if key.replace(".", "", 1).isdigit() and "." not in key and f"{key}.0" in tables.capabilities:
        return tables.capabilities[f"{key}.0"]
    raise FieldError("cc", f"unknown compute capability {cc!r}; tables exist for {', '.join(tables.capabilities)}")


def cc_for_gpu(gpu: str, data_dir: str | os.PathLike[str] | None = None) -> tuple[ComputeCapability, str]:
    """The compute capability of a catalog accelerator, and its display name. Refuses what is not modelled."""
    from studytui.calc.hardware import load_catalog

    acc = load_catalog(data_dir).get(gpu)  # raises FieldError('gpu') for an unknown id
    tables = load_tables(data_dir)
    cc = acc.raw.get("compute_capability") or tables.accelerators.get(acc.id)
    if cc is None:
        reason = tables.not_modelled.get(acc.id) or "no compute capability is recorded for it"
        raise FieldError("gpu", f"{acc.name}: occupancy not modelled ({reason}); use --cc X.Y for an NVIDIA compute capability")
    return get_cc(str(cc), data_dir), f"{acc.name} (cc {cc})"


# ---- the arithmetic --------------------------------------------------------------------------

def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass
class Occupancy:
    """Blocks per SM for one launch configuration, with every limit and what was allocated."""

    cc: ComputeCapability
    threads: int
    regs: int
    static_smem: int
    dyn_smem: int
    warps_per_block: int
    regs_per_warp: int  # allocated (rounded up)
    regs_per_block: int  # allocated
    smem_per_block: int  # allocated: static + dynamic + reservation, rounded up
    smem_config: int  # the carve-out the blocks run in (bytes)
    limits: dict[str, int]  # blocks per SM from each limiter
    blocks: int
    refused: str = ""  # why not even one block can launch ("" when it can)
    binding: list[str] = field(default_factory=list)

    @property
    def active_warps(self) -> int:
        return self.blocks * self.warps_per_block

    @property
    def occupancy(self) -> float:
        return self.active_warps / self.cc.max_warps_per_sm


def _carveout_for(cc: ComputeCapability, wanted: int) -> int | None:
    """The smallest carve-out (bytes) holding `wanted` bytes; None if none does."""
    for kib in cc.carveout_kib:
        if kib * 1024 >= wanted:
            return kib * 1024
    return None


def blocks_per_sm(
    cc: ComputeCapability,
    threads: int,
    regs: int,
    static_smem: int = 0,
    dyn_smem: int = 0,
    *,
    opt_in: bool = True,
    max_dyn_smem: int | None = None,
    carveout: int | None = None,
) -> Occupancy:
    """Blocks of `threads` threads with `regs` registers each that fit on one SM.

    opt_in: the kernel opted in to more than 48 KB of shared memory per block
    (cudaFuncAttributeMaxDynamicSharedMemorySize); max_dyn_smem: that attribute's value when known
    (a launch asking for more dynamic shared memory fails); carveout: the preferred shared-memory
    carve-out in percent (cudaFuncAttributePreferredSharedMemoryCarveout), None = the driver's default.
    """
    warps = -(-threads // cc.warp_size)
    regs_per_warp = _round_up(regs * cc.warp_size, cc.register_allocation_unit)
    regs_per_block = regs_per_warp * warps
    smem_per_block = _round_up(static_smem + dyn_smem + cc.reserved_shared_memory_per_block, cc.shared_memory_granularity)
    refused = ""

    # warps
    if threads > cc.max_threads_per_block:
        warp_limit = 0
        refused = f"{threads} threads per block is over the limit of {cc.max_threads_per_block}"
    else:
        warp_limit = cc.max_warps_per_sm // warps

    # registers: the hardware checks a block as if its warps were spread over every slice
    assumed = regs_per_warp * _round_up(warps, cc.sub_partitions)
    if regs > cc.max_registers_per_thread:
        reg_limit = 0
        refused = refused or f"{regs} registers per thread is over the limit of {cc.max_registers_per_thread}"
    elif max(assumed, regs_per_block) > cc.max_registers_per_block:
        reg_limit = 0
        refused = refused or (
            f"{threads} threads x {regs} registers needs {max(assumed, regs_per_block):,} registers per block "
            f"(allocated per warp, rounded to {cc.register_allocation_unit}); the limit is {cc.max_registers_per_block:,}"
        )
    elif regs_per_warp == 0:
        reg_limit = cc.max_blocks_per_sm
    else:
        per_slice = (cc.registers_per_sm // cc.sub_partitions) // regs_per_warp
        reg_limit = (per_slice * cc.sub_partitions) // warps

    # shared memory
    per_block_limit = cc.shared_memory_per_block_default
    if opt_in and (max_dyn_smem is None or static_smem + max_dyn_smem > cc.shared_memory_per_block_default):
        per_block_limit = cc.shared_memory_per_block_optin
    per_block_limit += cc.reserved_shared_memory_per_block
    smem_config = cc.shared_memory_per_sm
    if max_dyn_smem is not None and dyn_smem > max_dyn_smem:
        smem_limit = 0
        refused = refused or f"{dyn_smem:,} B of dynamic shared memory is over the kernel's opt-in of {max_dyn_smem:,} B"
    elif smem_per_block > per_block_limit:
        smem_limit = 0
        usable = per_block_limit - cc.reserved_shared_memory_per_block
        what = "the per-block limit" if usable == cc.shared_memory_per_block_optin else "the 48 KiB limit without the opt-in"
        refused = refused or f"{static_smem + dyn_smem:,} B of shared memory per block is over {what} of {usable:,} B"
    else:
        if carveout is not None:
            preferred = _carveout_for(cc, carveout * cc.shared_memory_per_sm // 100)
            if preferred is not None and preferred >= smem_per_block:
                smem_config = preferred
            else:
                smem_config = _carveout_for(cc, smem_per_block) or cc.shared_memory_per_sm
        smem_limit = smem_config // smem_per_block if smem_per_block else cc.max_blocks_per_sm

    limits = {"warps": warp_limit, "blocks": cc.max_blocks_per_sm, "registers": reg_limit, "shared memory": smem_limit}
    blocks = min(limits.values())
    binding = [name for name in LIMITERS if limits[name] == blocks]
    return Occupancy(
        cc=cc, threads=threads, regs=regs, static_smem=static_smem, dyn_smem=dyn_smem, warps_per_block=warps,
        regs_per_warp=regs_per_warp, regs_per_block=regs_per_block, smem_per_block=smem_per_block,
        smem_config=smem_config, limits=limits, blocks=blocks, refused=refused, binding=binding,
    )


# ---- advice: what reaches the next occupancy step ----------------------------------------------

def next_steps(occ: Occupancy, carveout: int | None = None) -> list[dict[str, Any]]:
    """For each knob, the nearest value that raises active warps (none when already at 100%)."""
    cc = occ.cc
    if occ.blocks == 0 or occ.active_warps >= cc.max_warps_per_sm:
        return []
    base = occ.active_warps
    out: list[dict[str, Any]] = []

    def again(threads: int, regs: int, dyn: int) -> Occupancy:
        return blocks_per_sm(cc, threads, regs, occ.static_smem, dyn, carveout=carveout)

    for regs in range(occ.regs - 1, 0, -1):
        trial = again(occ.threads, regs, occ.dyn_smem)
        if trial.active_warps > base:
            out.append({"change": "registers", "value": regs, "blocks": trial.blocks, "occupancy": trial.occupancy,
                        "text": f"at most {regs} registers per thread (e.g. __launch_bounds__ or -maxrregcount)"})
            break
    # Shared memory: the largest dynamic size that fits one more block.
    if occ.static_smem + occ.dyn_smem > 0:
        want = occ.blocks + 1
        budget = occ.smem_config if carveout is None else cc.shared_memory_per_sm
        per_block = budget // want // cc.shared_memory_granularity * cc.shared_memory_granularity
        dyn = per_block - cc.reserved_shared_memory_per_block - occ.static_smem
        if 0 <= dyn < occ.dyn_smem:
            trial = again(occ.threads, occ.regs, dyn)
            if trial.active_warps > base:
                out.append({"change": "dynamic shared memory", "value": dyn, "blocks": trial.blocks, "occupancy": trial.occupancy,
                            "text": f"at most {dyn:,} B of dynamic shared memory per block"})
        elif dyn < 0 <= per_block - cc.reserved_shared_memory_per_block:
            total = per_block - cc.reserved_shared_memory_per_block
            out.append({"change": "shared memory", "value": total, "blocks": want, "occupancy": None,
                        "text": f"at most {total:,} B of shared memory per block in all (static + dynamic)"})
    for threads in range(_round_up(occ.threads, cc.warp_size) - cc.warp_size, 0, -cc.warp_size):
        trial = again(threads, occ.regs, occ.dyn_smem)
        if trial.active_warps > base:
            out.append({"change": "threads", "value": threads, "blocks": trial.blocks, "occupancy": trial.occupancy,
                        "text": f"{threads} threads per block"})
            break
    for threads in range(_round_up(occ.threads, cc.warp_size) + cc.warp_size, cc.max_threads_per_block + 1, cc.warp_size):
        trial = again(threads, occ.regs, occ.dyn_smem)
        if trial.active_warps > base:
            out.append({"change": "threads", "value": threads, "blocks": trial.blocks, "occupancy": trial.occupancy,
                        "text": f"{threads} threads per block (larger blocks, same resources per thread)"})
            break
    return out


# ---- sweeps ----------------------------------------------------------------------------------

SWEEPS = ("threads", "regs", "smem")


def sweep(occ: Occupancy, axis: str, carveout: int | None = None) -> list[dict[str, Any]]:
    """Occupancy along one axis, the others held (like the old spreadsheet's three charts)."""
    cc = occ.cc
    if axis == "threads":
        values = list(range(cc.warp_size, cc.max_threads_per_block + 1, cc.warp_size))
    elif axis == "regs":
        values = sorted({r for r in range(8, cc.max_registers_per_thread + 1, 8)} | {cc.max_registers_per_thread, occ.regs})
    elif axis == "smem":
        top = cc.shared_memory_per_block_optin - occ.static_smem
        step = 4096 if top > 65536 else 2048
        values = sorted({v for v in range(0, top + 1, step)} | {top, occ.dyn_smem})
    else:
        raise FieldError("sweep", f"unknown sweep {axis!r}; accepted: {', '.join(SWEEPS)}")
    points = []
    for value in values:
        threads, regs, dyn = occ.threads, occ.regs, occ.dyn_smem
        if axis == "threads":
            threads = value
        elif axis == "regs":
            regs = value
        else:
            dyn = value
        trial = blocks_per_sm(cc, threads, regs, occ.static_smem, dyn, carveout=carveout)
        points.append({
            axis: value, "blocks_per_sm": trial.blocks, "active_warps": trial.active_warps,
            "occupancy": trial.occupancy, "limited_by": trial.binding[0] if trial.blocks else (trial.refused or "none"),
            "current": value == {"threads": occ.threads, "regs": occ.regs, "smem": occ.dyn_smem}[axis],
        })
    return points


# ---- the calculator --------------------------------------------------------------------------

def _kib(n: int) -> str:
    return f"{n:,} B ({n / 1024:g} KiB)"


def resolve_cc(gpu: str | None, cc: str | None, data_dir: str | os.PathLike[str] | None = None) -> tuple[ComputeCapability, str]:
    if gpu and cc:
        table = get_cc(cc, data_dir)
        from_gpu, name = cc_for_gpu(gpu, data_dir)
        if from_gpu.cc != table.cc:
            raise FieldError("cc", f"--cc {table.cc} and --gpu {gpu} (cc {from_gpu.cc}) disagree: give one of them, not both")
        return from_gpu, name
    if cc:
        table = get_cc(cc, data_dir)
        return table, f"compute capability {table.cc} ({table.architecture})"
    return cc_for_gpu(gpu or "h200", data_dir)


def check_cluster(cc: ComputeCapability, cluster: int, non_portable: bool) -> None:
    if cluster <= 1:
        return
    if cc.cluster_portable is None:
        raise FieldError("cluster", f"thread-block clusters need compute capability 9.0 or later (this is {cc.cc})")
    limit = cc.cluster_non_portable if non_portable else cc.cluster_portable
    if cluster > (limit or 0):
        opt_in_limit = cc.cluster_non_portable or 0
        if not non_portable and opt_in_limit > cc.cluster_portable and cluster <= opt_in_limit:
            raise FieldError("cluster", f"{cluster} blocks is over the portable cluster limit of {cc.cluster_portable}; "
                             f"up to {cc.cluster_non_portable} needs the non-portable opt-in (--non-portable)")
        raise FieldError("cluster", f"{cluster} blocks is over the cluster limit of {limit} on compute capability {cc.cc}")


def occupancy(
    cc: ComputeCapability,
    threads: int,
    regs: int,
    static_smem: int = 0,
    dyn_smem: int = 0,
    *,
    cluster: int = 1,
    non_portable: bool = False,
    carveout: int | None = None,
    sweep_axis: str | None = None,
    label: str = "",
    sm_count: int | None = None,
) -> Result:
    """The `calc occupancy` result. Raises FieldError naming the limit for a launch that cannot run."""
    if threads < 1:
        raise FieldError("threads", "must be at least 1")
    if threads > cc.max_threads_per_block:
        raise FieldError("threads", f"{threads} is over the limit of {cc.max_threads_per_block} threads per block (cc {cc.cc})")
    if regs < 1:
        raise FieldError("regs", "must be at least 1 register per thread")
    if regs > cc.max_registers_per_thread:
        raise FieldError("regs", f"{regs} is over the limit of {cc.max_registers_per_thread} registers per thread (cc {cc.cc})")
    if static_smem > cc.shared_memory_per_block_default:
        raise FieldError("smem", f"{static_smem:,} B of static shared memory is over the {cc.shared_memory_per_block_default:,} B "
                         "(48 KiB) a static array may use; put the rest in dynamic shared memory (--dyn-smem)")
    if static_smem + dyn_smem > cc.shared_memory_per_block_optin:
        flag = "dyn_smem" if dyn_smem else "smem"
        raise FieldError(flag, f"{static_smem + dyn_smem:,} B of shared memory per block is over the opt-in limit of "
                         f"{cc.shared_memory_per_block_optin:,} B ({cc.shared_memory_per_block_optin // 1024} KiB, cc {cc.cc})")
    if carveout is not None and not 0 <= carveout <= 100:
        raise FieldError("carveout", f"a percentage from 0 to 100 (got {carveout})")
    check_cluster(cc, cluster, non_portable)

    occ = blocks_per_sm(cc, threads, regs, static_smem, dyn_smem, carveout=carveout)
    if occ.blocks == 0:
        field_name = "regs" if occ.limits["registers"] == 0 else "threads" if occ.limits["warps"] == 0 else "dyn_smem"
        raise FieldError(field_name, f"no block can launch: {occ.refused}")

    result = Result("occupancy")
    opted_in = static_smem + dyn_smem > cc.shared_memory_per_block_default
    result.values.update(
        cc=cc.cc, architecture=cc.architecture, target=label, threads=threads, regs=regs,
        static_smem_bytes=static_smem, dyn_smem_bytes=dyn_smem, warps_per_block=occ.warps_per_block,
        limits={k: v for k, v in occ.limits.items()}, blocks_per_sm=occ.blocks, limited_by=occ.binding,
        active_warps=occ.active_warps, max_warps=cc.max_warps_per_sm, occupancy=occ.occupancy,
        active_threads=occ.active_warps * cc.warp_size,
        registers_per_warp_allocated=occ.regs_per_warp, registers_per_block_allocated=occ.regs_per_block,
        registers_per_sm_used=occ.regs_per_block * occ.blocks,
        smem_per_block_allocated=occ.smem_per_block, smem_config_bytes=occ.smem_config,
        smem_per_sm_used=occ.smem_per_block * occ.blocks,
        reserved_smem_per_block=cc.reserved_shared_memory_per_block, smem_granularity=cc.shared_memory_granularity,
        register_allocation_unit=cc.register_allocation_unit, opt_in_required=opted_in, carveout_percent=carveout,
        cluster=cluster, time_s=None,
    )
    steps = next_steps(occ, carveout)
    result.values["next_steps"] = steps

    pct = f"{occ.occupancy:.1%}"
    result.row("target", label or f"cc {cc.cc}")
    result.row("blocks per SM", f"{occ.blocks}  (limited by {', '.join(occ.binding)})")
    result.row("occupancy", f"{pct}  ({occ.active_warps} of {cc.max_warps_per_sm} warps, {occ.active_warps * cc.warp_size} threads)")
    for name in LIMITERS:
        mark = "  <- binding" if name in occ.binding else ""
        result.row(f"limit: {name}", f"{occ.limits[name]} blocks{mark}")
    result.row("registers allocated", f"{occ.regs_per_warp:,} per warp ({regs} x 32 rounded up to {cc.register_allocation_unit}), "
               f"{occ.regs_per_block:,} per block, {occ.regs_per_block * occ.blocks:,} of {cc.registers_per_sm:,} per SM")
    result.row("shared memory allocated", f"{occ.smem_per_block:,} B per block (static {static_smem:,} + dynamic {dyn_smem:,} + "
               f"reserved {cc.reserved_shared_memory_per_block:,}, rounded to {cc.shared_memory_granularity}); "
               f"{occ.smem_per_block * occ.blocks:,} of a {_kib(occ.smem_config)} carve-out")
    if not steps and occ.active_warps >= cc.max_warps_per_sm:
        result.row("next step", "none: every warp slot is used (100% occupancy)")
    for step in steps:
        occ_text = (
            f" -> {step['blocks']} blocks, {step['occupancy']:.1%}" if step["occupancy"] is not None else f" -> {step['blocks']} blocks"
        )
        result.row(f"next step ({step['change']})", step["text"] + occ_text)

    # explain
    w = cc.warp_size
    result.step(f"warps per block = ceil({threads} / {w}) = {occ.warps_per_block}")
    result.step(f"warp limit = {cc.max_warps_per_sm} warps per SM // {occ.warps_per_block} = {occ.limits['warps']} blocks")
    result.step(f"block limit = {cc.max_blocks_per_sm} resident blocks per SM (cc {cc.cc})")
    per_slice = cc.registers_per_sm // cc.sub_partitions
    result.step(f"registers per warp = roundup({regs} x {w}, {cc.register_allocation_unit}) = {occ.regs_per_warp}")
    result.step(
        f"register limit = {cc.sub_partitions} slices x ({per_slice} // {occ.regs_per_warp}) warps "
        f"= {(per_slice // occ.regs_per_warp) * cc.sub_partitions} warps // {occ.warps_per_block} = {occ.limits['registers']} blocks"
    )
    result.step(
        f"shared memory per block = roundup({static_smem} + {dyn_smem} + {cc.reserved_shared_memory_per_block} reserved, "
        f"{cc.shared_memory_granularity}) = {occ.smem_per_block} B"
    )
    if occ.smem_per_block:
        result.step(f"shared-memory limit = {occ.smem_config} B carve-out // {occ.smem_per_block} = {occ.limits['shared memory']} blocks")
    else:
        result.step("shared-memory limit: none (no shared memory per block)")
    result.step(f"blocks per SM = min({', '.join(str(occ.limits[n]) for n in LIMITERS)}) = {occ.blocks}")
    result.step(f"occupancy = {occ.blocks} x {occ.warps_per_block} warps / {cc.max_warps_per_sm} = {pct}")

    result.assume("The CUDA occupancy calculator's arithmetic (cuda_occupancy.h); checked exactly against "
                  "cuOccupancyMaxActiveBlocksPerMultiprocessor on an H200 (cc 9.0); other capabilities from their tables")
    result.assume("registers per thread as the compiler reports them (nvcc -Xptxas -v, or cuFuncGetAttribute NUM_REGS); "
                  "block barriers and other per-SM resources are assumed not to bind")
    if carveout is None:
        result.assume("shared-memory carve-out: the driver's default (the largest, so shared memory does not limit first)")
    if opted_in:
        result.warn(f"{static_smem + dyn_smem:,} B per block is over 48 KiB: the kernel must opt in with "
                    "cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) and use dynamic shared memory")
    if occ.occupancy < 1 and occ.blocks == 1 and threads < 128:
        result.warn("one small block per SM: little latency hiding; most kernels want several warps per scheduler")
    if cluster > 1:
        result.values["cluster_blocks_per_sm"] = occ.blocks
        bound = None
        if sm_count:
            bound = sm_count * occ.blocks // cluster
            result.values["clusters_upper_bound"] = bound
        result.row("cluster", f"{cluster} blocks per cluster, all resident at once on SMs of one GPC"
                   + (f"; at most {bound} clusters on {sm_count} SMs" if bound is not None else ""))
        result.assume("how many clusters fit on the whole GPU depends on how its SMs are grouped into GPCs, which the "
                      "per-SM arithmetic does not model: ask cuOccupancyMaxActiveClusters (on an H200 it found fewer "
                      "clusters of 4 or 8 than SMs x blocks per SM / cluster size)")
        if non_portable and cluster > (cc.cluster_portable or 0):
            result.warn(
                f"a cluster of {cluster} needs cudaFuncAttributeNonPortableClusterSizeAllowed = 1 and may not launch on other parts"
            )
    if sweep_axis:
        points = sweep(occ, sweep_axis, carveout)
        result.values["sweep"] = {"axis": sweep_axis, "points": points}
        unit = {"threads": "threads", "regs": "regs", "smem": "B dyn smem"}[sweep_axis]
        for point in points:
            mark = " <- now" if point["current"] else ""
            result.row(f"sweep {point[sweep_axis]:>6} {unit}",
                       f"{point['blocks_per_sm']:>3} blocks {point['occupancy']:>6.1%}  {point['limited_by']}{mark}")
    return result


# ---- its form, and how the CLI and the app present it -----------------------------------------

def _whole_bytes(p: dict[str, Any], name: str) -> int:
    value = p.get(name) or 0
    if value != int(value):
        raise FieldError(name, f"{value:g} is not a whole number of bytes")
    return int(value)


def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    cc, label = resolve_cc(p.get("gpu"), p.get("cc"), data_dir)
    sm_count = None
    if p.get("gpu") or not p.get("cc"):
        from studytui.calc.hardware import load_catalog

        sm_count = load_catalog(data_dir).get(p.get("gpu") or "h200").sm_count
    return occupancy(
        cc, p["threads"], p["regs"], _whole_bytes(p, "smem"), _whole_bytes(p, "dyn_smem"), cluster=p.get("cluster") or 1,
        non_portable=bool(p.get("non_portable")), carveout=p.get("carveout"), sweep_axis=p.get("sweep"), label=label,
        sm_count=sm_count,
    )


def _unused(p: dict[str, Any], given: frozenset[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    if (p.get("cluster") or 1) <= 8:
        out["non_portable"] = "the non-portable opt-in matters only for clusters above 8 blocks (--cluster)"
    return out


# A sweep's varied input: (header, unit under it) in the CLI's table; its axis in the app's plot.
_TABLE_AXES = {"threads": ("threads", "per block"), "regs": ("registers", "per thread"), "smem": ("dynamic smem", "bytes per block")}
_PLOT_AXES = {"threads": "threads per block", "regs": "registers per thread", "smem": "dynamic shared memory per block (KiB)"}


def _tables(result: Result) -> tuple[TextTable, ...]:
    """`calc occupancy --sweep AXIS`: one line a value, short columns with the unit under the
    header (two header lines), so the table fits 80 columns and no header is broken."""
    swept = result.values.get("sweep")
    if not isinstance(swept, dict):
        return ()
    axis = swept["axis"]
    header, unit = _TABLE_AXES.get(axis, (axis, ""))
    return (
        TextTable(
            f"Sweep over {header} {unit}, the other inputs held",
            ((f"{header}\n{unit}", True), ("blocks\nper SM", True), ("warps\nactive", True), ("\noccupancy", True),
             ("\nlimited by", False), ("", False)),
            tuple(
                (f"{point[axis]:,}", str(point["blocks_per_sm"]), str(point["active_warps"]), f"{point['occupancy']:.1%}",
                 str(point["limited_by"]), "<- now" if point["current"] else "")
                for point in swept["points"]
            ),
            replaces="sweep ",
        ),
    )


def _sweep_plot(values: Mapping[str, Any], inputs: Mapping[str, str]) -> Sweep:
    """The app's plot: occupancy along the form's sweep axis (threads if none), the other inputs
    held, the configuration now marked (the old spreadsheet calculator's three charts, one at a time)."""
    axis = inputs.get("sweep") or "threads"
    axis = axis if axis in _PLOT_AXES else "threads"
    cc = get_cc(str(values["cc"]))
    occ = blocks_per_sm(cc, int(values["threads"]), int(values["regs"]), int(values["static_smem_bytes"]), int(values["dyn_smem_bytes"]))
    scale = 1024.0 if axis == "smem" else 1.0
    points = tuple((p[axis] / scale, 100.0 * p["occupancy"], bool(p["current"])) for p in sweep(occ, axis, values.get("carveout_percent")))
    return Sweep(
        points, f"occupancy vs {_PLOT_AXES[axis]}, cc {values['cc']} (set 'sweep' for another axis)", _PLOT_AXES[axis],
        "occupancy %", "occupancy", 125, (0, 25, 50, 75, 100),
    )


SPEC = CalcSpec(
    "occupancy", "Occupancy",
    "Blocks per SM from each limit (warps, blocks, registers, shared memory), the binding one, active warps "
    "and occupancy, registers and shared memory as allocated (granularities, per-block reservation), and what "
    "reaches the next occupancy step. --sweep threads|regs|smem prints occupancy across a range.",
    (
        *CC_FIELDS,
        FieldSpec("threads", "threads per block", "int", "256", required=True, help="1 to 1024"),
        FieldSpec("regs", "registers per thread", "int", "32", required=True, help="as nvcc -Xptxas -v reports (at most 255)"),
        FieldSpec("smem", "static shared memory", "size", "0", allow_zero=True, help="bytes per block declared __shared__ (1KiB = 1024)"),
        FieldSpec("dyn_smem", "dynamic shared memory", "size", "0", allow_zero=True, help="bytes per block given at launch"),
        FieldSpec("cluster", "cluster size", "int", "1", help="blocks per thread-block cluster (9.0 and later)"),
        FieldSpec("non_portable", "non-portable cluster", "bool", "false", help="allow clusters above 8 blocks where the part supports 16"),
        FieldSpec("carveout", "carve-out preference %", "int", allow_zero=True,
                  help="preferred shared-memory carve-out, 0-100 (default: the driver's)"),
        FieldSpec("sweep", "sweep", "choice", choices=SWEEPS,
                  help="print occupancy across threads, registers or dynamic shared memory"),
    ),
    _run,
    unused=_unused,
    short_name="occup",
    plot="sweep",
    sweep=_sweep_plot,
    tables=_tables,
)
