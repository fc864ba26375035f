"""Occupancy: how many blocks of a kernel fit on one SM, which resource limits it, what to change.

The arithmetic is the CUDA occupancy calculator's (cuda_occupancy.h, which the runtime ships):
each of four limits gives a number of blocks per SM and the smallest wins.

- warps:     max warps per SM // warps per block (a block is rounded up to whole warps)
- blocks:    the hardware's resident-block limit
- registers: a warp's registers are rounded up to the allocation unit (256) and come from one of
             four register-file slices, so warps per SM = 4 * ((regs per SM / 4) // regs per warp)
- shared:    (static + dynamic + the per-block reservation) rounded up to the granularity, out of
             the shared-memory carve-out (the largest by default, as cuda_occupancy.h counts it
             without a preference)

The carve-out a launch actually runs in is the driver's choice, per launch: measured on an H200 it
is never below the smallest carve-out holding the resident blocks and often above it (32 KiB for
256 threads with no shared memory, where 8 KiB would hold the 8 blocks), so the L1 left beside it
is given as that range, with the measured figure where the launch shape was measured.

Verified exactly against cuOccupancyMaxActiveBlocksPerMultiprocessor on an H200 (the record
benchmarks/gpu/records/2026-12-01-occupancy-h200.json, replayed by tests/test_occupancy.py); the
tables per compute capability live in content/hardware/compute-capabilities/.
"""

from __future__ import annotations

import math
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from studytui.calc.forms import CC_FIELDS, CalcSpec, DataDir, FieldSpec
from studytui.calc.result import Result
from studytui.calc.units import FieldError
from studytui.calc.views import Sweep, TextTable
from studytui.core.records import FrozenRecord

LIMITERS = ("warps", "blocks", "registers", "shared memory")
_INT_FIELDS = (
    "warp_size", "max_threads_per_block", "registers_per_sm", "max_registers_per_block", "max_registers_per_thread",
    "register_allocation_unit", "sub_partitions", "shared_memory_per_block_default", "max_warps_per_sm",
    "max_blocks_per_sm", "shared_memory_per_sm", "shared_memory_per_block_optin", "shared_memory_granularity",
    "reserved_shared_memory_per_block",
)


# The records here are plain classes (studytui.core.records), not dataclasses or typed named tuples:
# on Python 3.11 their generated code costs up to a millisecond each time this module is imported (issue 27).
class ComputeCapability(FrozenRecord):
    """Per-SM limits of one NVIDIA compute capability (see the YAML for units and sources)."""

    __slots__ = ("cc", "architecture", "examples", "warp_size", "max_threads_per_block", "registers_per_sm",
                 "max_registers_per_block", "max_registers_per_thread", "register_allocation_unit", "sub_partitions",
                 "shared_memory_per_block_default", "max_warps_per_sm", "max_blocks_per_sm", "shared_memory_per_sm",
                 "shared_memory_per_block_optin", "shared_memory_granularity", "reserved_shared_memory_per_block",
                 "carveout_kib", "cluster_portable", "cluster_non_portable", "tensor_memory", "sources", "notes",
                 "unified_l1_shared_kib")

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
    notes: str
    unified_l1_shared_kib: int | None  # the unified L1 data cache + shared memory array per SM

    def __init__(
        self,
        cc: str,
        architecture: str,
        examples: str,
        warp_size: int,
        max_threads_per_block: int,
        registers_per_sm: int,
        max_registers_per_block: int,
        max_registers_per_thread: int,
        register_allocation_unit: int,
        sub_partitions: int,
        shared_memory_per_block_default: int,
        max_warps_per_sm: int,
        max_blocks_per_sm: int,
        shared_memory_per_sm: int,
        shared_memory_per_block_optin: int,
        shared_memory_granularity: int,
        reserved_shared_memory_per_block: int,
        carveout_kib: tuple[int, ...],
        cluster_portable: int | None,
        cluster_non_portable: int | None,
        tensor_memory: dict[str, int] | None,
        sources: tuple[str, ...],
        notes: str = "",
        unified_l1_shared_kib: int | None = None,
    ) -> None:
        object.__setattr__(self, "cc", cc)
        object.__setattr__(self, "architecture", architecture)
        object.__setattr__(self, "examples", examples)
        object.__setattr__(self, "warp_size", warp_size)
        object.__setattr__(self, "max_threads_per_block", max_threads_per_block)
        object.__setattr__(self, "registers_per_sm", registers_per_sm)
        object.__setattr__(self, "max_registers_per_block", max_registers_per_block)
        object.__setattr__(self, "max_registers_per_thread", max_registers_per_thread)
        object.__setattr__(self, "register_allocation_unit", register_allocation_unit)
        object.__setattr__(self, "sub_partitions", sub_partitions)
        object.__setattr__(self, "shared_memory_per_block_default", shared_memory_per_block_default)
        object.__setattr__(self, "max_warps_per_sm", max_warps_per_sm)
        object.__setattr__(self, "max_blocks_per_sm", max_blocks_per_sm)
        object.__setattr__(self, "shared_memory_per_sm", shared_memory_per_sm)
        object.__setattr__(self, "shared_memory_per_block_optin", shared_memory_per_block_optin)
        object.__setattr__(self, "shared_memory_granularity", shared_memory_granularity)
        object.__setattr__(self, "reserved_shared_memory_per_block", reserved_shared_memory_per_block)
        object.__setattr__(self, "carveout_kib", carveout_kib)
        object.__setattr__(self, "cluster_portable", cluster_portable)
        object.__setattr__(self, "cluster_non_portable", cluster_non_portable)
        object.__setattr__(self, "tensor_memory", tensor_memory)
        object.__setattr__(self, "sources", sources)
        object.__setattr__(self, "notes", notes)
        object.__setattr__(self, "unified_l1_shared_kib", unified_l1_shared_kib)

    @property
    def carveouts(self) -> str:
        return ", ".join(str(k) for k in self.carveout_kib) + " KiB"

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * self.warp_size

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("cc", "architecture", "examples", *_INT_FIELDS)}
        out.update(
            max_threads_per_sm=self.max_threads_per_sm, carveout_kib=list(self.carveout_kib),
            cluster_portable=self.cluster_portable, cluster_non_portable=self.cluster_non_portable,
            tensor_memory=self.tensor_memory, sources=list(self.sources), notes=self.notes,
            unified_l1_shared_kib=self.unified_l1_shared_kib,
        )
        return out


class Tables(FrozenRecord):
    """The compute-capability tables (content/hardware/compute-capabilities/nvidia.yaml)."""

    __slots__ = ("capabilities", "accelerators", "not_modelled", "sources")

    capabilities: dict[str, ComputeCapability]
    accelerators: dict[str, str]  # catalog id -> cc
    not_modelled: dict[str, str]  # catalog id -> reason
    sources: dict[str, dict[str, str]]

    def __init__(
        self,
        capabilities: dict[str, ComputeCapability],
        accelerators: dict[str, str],
        not_modelled: dict[str, str],
        sources: dict[str, dict[str, str]],
    ) -> None:
        object.__setattr__(self, "capabilities", capabilities)
        object.__setattr__(self, "accelerators", accelerators)
        object.__setattr__(self, "not_modelled", not_modelled)
        object.__setattr__(self, "sources", sources)


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
    from studytui.calc.parsed import tables_yaml

    raw = tables_yaml(path, "the compute-capability tables", "cc", "cannot read the compute-capability tables")
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
            unified_l1_shared_kib=int(merged["unified_l1_shared_kib"]) if merged.get("unified_l1_shared_kib") else None,
        )
    return Tables(
        capabilities=caps,
        accelerators={str(k): str(v) for k, v in (raw.get("accelerators") or {}).items()},
        not_modelled={str(k): str(v) for k, v in (raw.get("not_modelled") or {}).items()},
        sources=raw.get("sources") or {},
    )


def load_tables(data_dir: str | os.PathLike[str] | None = None) -> Tables:
    path = _tables_file(data_dir)
    try:
        return _load(str(path))
    except (OSError, UnicodeDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
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
        raise FieldError("gpu", f"{acc.name}: occupancy not modelled ({reason}); give a compute capability (X.Y) instead")
    return get_cc(str(cc), data_dir), f"{acc.name} (cc {cc})"


# ---- the arithmetic --------------------------------------------------------------------------

def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


class Occupancy(FrozenRecord):
    """Blocks per SM for one launch configuration, with every limit and what was allocated."""

    __slots__ = ("cc", "threads", "regs", "static_smem", "dyn_smem", "warps_per_block", "regs_per_warp", "regs_per_block",
                 "smem_per_block", "smem_config", "limits", "blocks", "binding", "refused")

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
    binding: list[str]  # the limiters that give `blocks` (every one of a tie)
    refused: str  # why not even one block can launch ("" when it can)

    def __init__(
        self,
        cc: ComputeCapability,
        threads: int,
        regs: int,
        static_smem: int,
        dyn_smem: int,
        warps_per_block: int,
        regs_per_warp: int,
        regs_per_block: int,
        smem_per_block: int,
        smem_config: int,
        limits: dict[str, int],
        blocks: int,
        binding: list[str],
        refused: str = "",
    ) -> None:
        object.__setattr__(self, "cc", cc)
        object.__setattr__(self, "threads", threads)
        object.__setattr__(self, "regs", regs)
        object.__setattr__(self, "static_smem", static_smem)
        object.__setattr__(self, "dyn_smem", dyn_smem)
        object.__setattr__(self, "warps_per_block", warps_per_block)
        object.__setattr__(self, "regs_per_warp", regs_per_warp)
        object.__setattr__(self, "regs_per_block", regs_per_block)
        object.__setattr__(self, "smem_per_block", smem_per_block)
        object.__setattr__(self, "smem_config", smem_config)
        object.__setattr__(self, "limits", limits)
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "binding", binding)
        object.__setattr__(self, "refused", refused)

    @property
    def active_warps(self) -> int:
        return self.blocks * self.warps_per_block

    @property
    def occupancy(self) -> float:
        return self.active_warps / self.cc.max_warps_per_sm


# Carve-outs the driver chose on an H200 (cc 9.0), read with Nsight Compute's
# launch__shared_mem_config_size: (threads per block, dynamic shared memory per block in bytes,
# blocks per SM) -> carve-out in KiB. One kernel, 16 registers per thread, no static shared memory,
# the dynamic opt-in at 227 KiB; driver 580.159.04, CUDA 13.0 (nvcc -arch=sm_90), ncu 2025.3,
# 2026-12-02. The driver's rule is not documented; these points bracket it.
H200_MEASURED_CARVEOUT_KIB: dict[tuple[int, int, int], int] = {
    (32, 0, 32): 32, (64, 0, 32): 32, (96, 0, 21): 32, (128, 0, 16): 32, (256, 0, 8): 32, (512, 0, 4): 16,
    (1024, 0, 2): 8, (32, 1024, 32): 64, (256, 3000, 8): 64, (256, 4096, 8): 100, (256, 7000, 8): 132,
    (256, 16384, 8): 164, (256, 30000, 7): 228, (512, 12000, 4): 132, (1024, 20000, 2): 64, (128, 50000, 4): 228,
    (128, 100000, 2): 228,
}
CARVEOUT_MEASUREMENT = ("H200, ncu launch__shared_mem_config_size, driver 580.159.04: 32 KiB for 256 threads with no "
                        "shared memory, where 8 KiB would hold the 8 blocks")


def likely_carveout(occ: Occupancy) -> dict[str, Any]:
    """The carve-out a launch with no preference may run in: at least the smallest supported one
    holding the resident blocks, at most the largest (which the block count assumes), and the
    H200's measured choice where this launch shape was measured."""
    cc = occ.cc
    smallest = _carveout_for(cc, occ.smem_per_block * occ.blocks)
    if smallest is None:  # 0 KiB (Volta, Ampere, ...) is a carve-out, not a missing one
        smallest = cc.shared_memory_per_sm
    measured = None
    if cc.cc == "9.0" and not occ.static_smem:
        kib = H200_MEASURED_CARVEOUT_KIB.get((occ.threads, occ.dyn_smem, occ.blocks))
        measured = kib * 1024 if kib is not None else None
    return {"smallest": smallest, "largest": cc.shared_memory_per_sm, "measured": measured}


def _carveout_for(cc: ComputeCapability, wanted: int) -> int | None:
    """The smallest carve-out (bytes) holding `wanted` bytes; None if none does."""
    for kib in cc.carveout_kib:
        if kib * 1024 >= wanted:
            return kib * 1024
    return None


def carveout_choice(cc: ComputeCapability, carveout: int, smem_per_block: int) -> tuple[int, int, int]:
    """(the preference in bytes, the carve-out it rounds up to (the largest past the largest), the
    carve-out the blocks run in): a preference too small for one block gives way to the smallest
    carve-out that holds one (cuda_occupancy.h)."""
    wanted = carveout * cc.shared_memory_per_sm // 100
    preferred = _carveout_for(cc, wanted)
    if preferred is not None and preferred >= smem_per_block:
        return wanted, preferred, preferred
    holding = _carveout_for(cc, smem_per_block)
    return (wanted, cc.shared_memory_per_sm if preferred is None else preferred,
            cc.shared_memory_per_sm if holding is None else holding)


def smallest_preference_for(cc: ComputeCapability, carve_bytes: int) -> int:
    """The smallest carve-out preference (percent) that rounds up to `carve_bytes`."""
    for pct in range(0, 101):
        if _carveout_for(cc, pct * cc.shared_memory_per_sm // 100) == carve_bytes:
            return pct
    return 100


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
        rounded = _round_up(warps, cc.sub_partitions)
        needed = max(assumed, regs_per_block)
        counted = (f"{warps} warps counted as {rounded} (a block's warps are spread over the {cc.sub_partitions} "
                   f"sub-partitions, so the check rounds them up to a multiple of {cc.sub_partitions})"
                   if rounded != warps else f"{warps} warps")
        refused = refused or (
            f"{threads} threads x {regs} registers needs {needed:,} registers per block: {counted} x {regs_per_warp:,} "
            f"registers per warp ({regs} x {cc.warp_size} rounded up to {cc.register_allocation_unit}); the limit is "
            f"{cc.max_registers_per_block:,}"
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
            smem_config = carveout_choice(cc, carveout, smem_per_block)[2]
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
    if carveout is not None and occ.smem_per_block and occ.smem_config < cc.shared_memory_per_sm:
        for kib in cc.carveout_kib:
            if kib * 1024 <= occ.smem_config:
                continue
            pct = smallest_preference_for(cc, kib * 1024)
            trial = blocks_per_sm(cc, occ.threads, occ.regs, occ.static_smem, occ.dyn_smem, carveout=pct)
            if trial.active_warps > base:
                left = f", {cc.unified_l1_shared_kib - kib} KiB of L1 left" if cc.unified_l1_shared_kib else ""
                out.append({"change": "carve-out", "value": pct, "blocks": trial.blocks, "occupancy": trial.occupancy,
                            "text": f"a carve-out preference of {pct}% or more ({kib} KiB of shared memory{left})"})
                break
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
            raise FieldError("cc", f"compute capability {table.cc} and GPU {gpu} (cc {from_gpu.cc}) disagree: give one of them, not both")
        return from_gpu, name
    if cc:
        table = get_cc(cc, data_dir)
        return table, f"compute capability {table.cc} ({table.architecture})"
    return cc_for_gpu(gpu or "h200", data_dir)


_CLUSTER = re.compile(r"^\s*(\d+)\s*(?:[xX*]\s*(\d+)\s*(?:[xX*]\s*(\d+)\s*)?)?$")
CLUSTER_API = "cudaOccupancyMaxActiveClusters"


def parse_cluster(text: Any) -> tuple[int, int, int]:
    """Cluster dimensions from N, XxY or XxYxZ."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    match = _CLUSTER.match(str(text if text is not None else "1"))
    if not match:
        raise FieldError("cluster", f"{text!r} is not a cluster shape: give N, XxY or XxYxZ blocks (e.g. 2, 4x2, 2x2x2)")
    dims = tuple(int(g) if g else 1 for g in match.groups())
    if min(dims) < 1:
        raise FieldError("cluster", "every cluster dimension must be at least 1")
    if math.prod(dims) > 1024:
        raise FieldError("cluster", f"{text!r}: {math.prod(dims)} blocks is no cluster (the most any part allows is 16)")
    return dims[0], dims[1], dims[2]


class ClusterRecord(FrozenRecord):
    """cudaOccupancyMaxActiveClusters, recorded on one GPU: clusters that fit at once, by
    (cluster size, blocks per SM)."""

    __slots__ = ("path", "accelerator", "gpu_name", "date", "sm_count", "table", "shapes_agree")

    path: Path
    accelerator: str
    gpu_name: str
    date: str
    sm_count: int
    table: dict[tuple[int, int], int]
    shapes_agree: bool  # every recorded shape of a size gave the size's answer

    def __init__(
        self,
        path: Path,
        accelerator: str,
        gpu_name: str,
        date: str,
        sm_count: int,
        table: dict[tuple[int, int], int],
        shapes_agree: bool,
    ) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "accelerator", accelerator)
        object.__setattr__(self, "gpu_name", gpu_name)
        object.__setattr__(self, "date", date)
        object.__setattr__(self, "sm_count", sm_count)
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "shapes_agree", shapes_agree)


def measured_device_file(accelerator: str, kind: str, data_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """`<id>-<kind>.yaml` under hardware/measured/device/: the learner's own (data dir, written by
    `studytui measure`) first, then the content's."""
    from studytui.core import paths
    from studytui.core.errors import UsageError

    bases: list[Path] = []
    try:
        bases.append(paths.data_dir(data_dir))
    except UsageError:
        pass
    try:
        bases.append(paths.content_dir())
    except UsageError:
        pass
    bases += [paths.PACKAGE_DIR / "_content", paths.CHECKOUT_DIR / "content"]
    for base in bases:
        candidate = Path(base) / "hardware" / "measured" / "device" / f"{accelerator}-{kind}.yaml"
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=8)
def _load_cluster_record(path: str) -> ClusterRecord:
    from studytui.calc.parsed import tables_yaml

    raw = tables_yaml(path, "the cluster-capacity record", "cluster", "cannot read the cluster-capacity record")
    table: dict[tuple[int, int], int] = {}
    by_shape: dict[tuple[int, int], set[int]] = {}
    for row in raw["rows"]:
        if row.get("max_active_clusters") is None or int(row["max_active_clusters"]) < 0:
            continue
        key = (int(row["size"]), int(row["blocks_per_sm"]))
        by_shape.setdefault(key, set()).add(int(row["max_active_clusters"]))
        table[key] = int(row["max_active_clusters"])
    hw = raw.get("hardware") or {}
    return ClusterRecord(
        path=Path(path), accelerator=str(raw.get("accelerator") or ""), gpu_name=str(hw.get("name") or ""),
        date=str(raw.get("date") or ""), sm_count=int(hw.get("sm_count") or 0), table=table,
        shapes_agree=all(len(v) == 1 for v in by_shape.values()),
    )


def cluster_record(accelerator: str | None, data_dir: str | os.PathLike[str] | None = None) -> ClusterRecord | None:
    """The measured cluster table of a catalog accelerator, if one was recorded."""
    if not accelerator:
        return None
    path = measured_device_file(accelerator, "clusters", data_dir)
    if path is None:
        return None
    try:
        return _load_cluster_record(str(path))
    except (OSError, UnicodeDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise FieldError("cluster", f"cannot read the cluster-capacity record {path}: {type(exc).__name__} {exc}") from None


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
                             f"up to {cc.cluster_non_portable} needs the non-portable opt-in (non-portable cluster)")
        raise FieldError("cluster", f"{cluster} blocks is over the cluster limit of {limit} on compute capability {cc.cc}")


def _cluster_capacity(result: Result, cc: ComputeCapability, occ: Occupancy, dims: tuple[int, int, int], non_portable: bool,
                      smem_bytes: int, sm_count: int | None, accelerator: str | None,
                      data_dir: str | os.PathLike[str] | None) -> None:
    """max_active_clusters (measured where a table exists, else the arithmetic upper bound), the
    block slots it leaves idle, and the distributed shared memory of one cluster."""
    size = dims[0] * dims[1] * dims[2]
    shape = "x".join(str(d) for d in (dims if dims[2] > 1 else dims[:2])) if dims[1] * dims[2] > 1 else str(size)
    record = cluster_record(accelerator, data_dir)
    measured = record.table.get((size, occ.blocks)) if record else None
    dsmem = size * smem_bytes
    result.values.update(cluster_blocks_per_sm=occ.blocks, dsmem_per_cluster_bytes=dsmem,
                         cluster_portable=size <= (cc.cluster_portable or 0))
    slots = (sm_count or (record.sm_count if record else 0)) * occ.blocks
    if measured is not None and record is not None:
        clusters = measured
        root = _data_root(data_dir)
        mine = root is not None and record.path.is_relative_to(root)
        how = (f"measured on {'your ' if mine else ''}{record.gpu_name or record.accelerator} with {CLUSTER_API} "
               f"({record.date[:10]}, {record.path.name})")
        source = "measured"
        result.values["max_active_clusters_record"] = str(record.path)
    elif sm_count:
        clusters = sm_count * occ.blocks // size
        how = (f"the arithmetic upper bound, {sm_count} SMs x {occ.blocks} blocks per SM // {size} (no measured table for "
               f"this GPU{' and configuration' if record else ''}: run studytui measure --clusters on it)")
        source = "upper bound"
    else:
        why = ("the catalog has no SM count for this GPU and no cluster table was measured on it (studytui measure --clusters)"
               if accelerator else "give a GPU: the SM count and any measured table come with it")
        clusters, how, source = None, f"not known: {why}", "not known"
    result.values.update(max_active_clusters=clusters, max_active_clusters_source=source)
    if sm_count and clusters is not None:
        result.values["clusters_upper_bound"] = sm_count * occ.blocks // size
    idle = None
    if clusters is not None and slots:
        idle = max(0.0, 1 - clusters * size / slots)
        result.values["idle_sm_fraction"] = idle
        # An idle fraction from an upper bound on clusters is a lower bound on the idle SMs.
        result.values["idle_sm_fraction_bound"] = "exact" if source == "measured" else "at least"
    sibling = (_sibling_cluster_measurement(accelerator, sm_count, size, occ.blocks, data_dir)
               if source == "upper bound" else None)
    if sibling is not None:
        result.values["same_chip_measured"] = sibling
    blocks_text = f"{shape} = {size} blocks" if shape != str(size) else f"{size} blocks"
    result.row("cluster", blocks_text + ", all resident at once on SMs of one GPC"
               + ("" if size <= (cc.cluster_portable or 0) else "  (non-portable: over 8)"))
    result.row("max active clusters", f"{clusters}: {how}" if clusters is not None else how)
    if idle is not None and clusters is not None:
        per = "SMs" if occ.blocks == 1 else "block slots"
        if source == "measured":
            idle_text = f"{idle:.0%} ({clusters} x {size} = {clusters * size} of {slots} {per} busy)"
        else:
            idle_text = (f"at least {idle:.0%} (at most {clusters} x {size} = {clusters * size} of {slots} {per} busy: the "
                         "cluster count is an upper bound)")
            if sibling is not None:
                idle_text += (f"; the {sibling['name']}, the same {sibling['chip']} chip with {sibling['sm_count']} SMs, "
                              f"measured {sibling['max_active_clusters']} clusters of {size} in this configuration: "
                              f"{sibling['idle_sm_fraction']:.0%} idle (its GPC layout may differ from this GPU's)")
        result.row("idle SMs" if occ.blocks == 1 else "idle block slots", idle_text)
    result.row("distributed shared memory", f"{dsmem:,} B per cluster ({size} x {smem_bytes:,} B, each block's reachable by the "
               "others through DSMEM)")
    result.step(f"max active clusters = {clusters} ({how})" if clusters is not None else f"max active clusters: {how}")
    if idle is not None:
        result.step(f"idle = 1 - {clusters} x {size} / ({slots // max(occ.blocks, 1)} SMs x {occ.blocks}) = {idle:.1%}"
                    + ("" if source == "measured" else " (at least: the clusters are an upper bound)"))
    if sibling is not None:
        result.step(f"measured on the {sibling['name']} ({sibling['chip']}, {sibling['sm_count']} SMs): {sibling['max_active_clusters']} "
                    f"clusters of {size} at {occ.blocks} block(s) per SM, idle = {sibling['idle_sm_fraction']:.1%} "
                    f"({sibling['record']})")
    result.step(f"distributed shared memory = {size} x {smem_bytes:,} B = {dsmem:,} B")
    if source == "measured" and record is not None:
        result.assume(f"max_active_clusters is {CLUSTER_API}'s answer recorded on the GPU for this cluster size and blocks per SM "
                      f"(any shape of the size{' gave the same answer there' if record.shapes_agree else ''}); the record "
                      "launched exactly that many clusters at 1 block per SM and found them all co-resident")
        if occ.blocks > 8 and record.table.get((size, 8)) == measured:
            result.assume("past 8 blocks per SM the recorded answer stops growing: the API counts at most 8 blocks of a "
                          "cluster launch per SM there")
    else:
        result.assume("how many clusters fit on the whole GPU depends on how its SMs are grouped into GPCs, which the per-SM "
                      f"arithmetic does not model: ask {CLUSTER_API} (on an H200 it gives 66 clusters of 2, 39 of 3, 30 of 4, "
                      "15 of 8, 7 of 12 and 7 of 16 at 1 block per SM, where the bound says 66, 44, 33, 16, 11 and 8)")
    if size > (cc.cluster_portable or 0):
        result.warn(f"a cluster of {size} is non-portable: it needs cudaFuncAttributeNonPortableClusterSizeAllowed = 1 (without it "
                    "the H200 refused every size from 9 to 16) and may not launch on other parts")


def _sibling_cluster_measurement(accelerator: str | None, sm_count: int | None, size: int, blocks: int,
                                 data_dir: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """The measured cluster count of another catalog GPU with the same chip and SM count as
    `accelerator` (e.g. the H200 for the H100 SXM: both GH100 with 132 SMs), for this cluster size
    and blocks per SM; None when there is none."""
    if not accelerator or not sm_count:
        return None
    from studytui.calc.hardware import load_catalog
    from studytui.core.errors import UsageError

    try:
        catalog = load_catalog(data_dir)
        this = catalog.get(accelerator)
    except (FieldError, UsageError):  # an unreadable catalog only loses the comparison
        return None
    arch = str(this.raw.get("arch") or "")
    die = re.search(r"\(([^()]+)\)", arch)  # "Hopper (GH100)" -> GH100
    if not arch:
        return None
    chip = die.group(1) if die else arch
    for other in catalog:
        if other.id == this.id or other.sm_count != sm_count or str(other.raw.get("arch") or "") != arch:
            continue
        record = cluster_record(other.id, data_dir)
        measured = record.table.get((size, blocks)) if record else None
        if record is None or measured is None or record.sm_count != sm_count:
            continue
        return {"accelerator": other.id, "name": other.name, "chip": chip, "sm_count": sm_count,
                "max_active_clusters": measured, "idle_sm_fraction": max(0.0, 1 - measured * size / (sm_count * blocks)),
                "record": record.path.name}
    return None


def _data_root(data_dir: str | os.PathLike[str] | None) -> Path | None:
    from studytui.core import paths
    from studytui.core.errors import UsageError

    try:
        return paths.data_dir(data_dir)
    except UsageError:
        return None


def occupancy(
    cc: ComputeCapability,
    threads: int,
    regs: int,
    static_smem: int = 0,
    dyn_smem: int = 0,
    *,
    cluster: int | tuple[int, int, int] = 1,
    non_portable: bool = False,
    carveout: int | None = None,
    sweep_axis: str | None = None,
    label: str = "",
    sm_count: int | None = None,
    accelerator: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    show_cluster: bool = False,
) -> Result:
    """The `calc occupancy` result. Raises FieldError naming the limit for a launch that cannot run.

    cluster: blocks per cluster, or its (x, y, z) shape; accelerator: the catalog id whose measured
    cluster table (hardware/measured/device/<id>-clusters.yaml) answers max_active_clusters."""
    dims = cluster if isinstance(cluster, tuple) else (int(cluster), 1, 1)
    cluster = dims[0] * dims[1] * dims[2]
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
                         "(48 KiB) a static array may use; put the rest in dynamic shared memory")
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
        cluster=cluster, cluster_dims=list(dims), time_s=None,
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
    unified = cc.unified_l1_shared_kib
    config_kib = occ.smem_config // 1024
    likely = likely_carveout(occ) if carveout is None else None
    if unified and likely is None:
        result.row("L1 beside the carve-out", f"{unified - config_kib} KiB ({unified} KiB of unified L1/shared memory per SM "
                   f"less the {config_kib} KiB carve-out)")
        result.values.update(unified_l1_shared_bytes=unified * 1024, l1_bytes=(unified - config_kib) * 1024)
    elif unified and likely is not None:
        small_kib, large_kib = likely["smallest"] // 1024, likely["largest"] // 1024
        span = (f"{unified - large_kib} KiB" if small_kib == large_kib else f"{unified - large_kib} to {unified - small_kib} KiB")
        if likely["measured"] is not None:
            seen = likely["measured"] // 1024
            text = (f"likely {unified - seen} KiB: an H200 ran this launch shape in a {seen} KiB carve-out (ncu); the driver "
                    f"picks the carve-out per launch, so {span}")
        elif small_kib == large_kib:
            text = f"{span}: these {occ.blocks} block(s) need the largest carve-out ({large_kib} KiB)"
        else:
            text = (f"{span}: the driver picks the carve-out per launch, at least the smallest holding these "
                    f"{occ.blocks} block(s) ({small_kib} KiB) and at most the largest ({large_kib} KiB)")
        result.row("L1 beside the carve-out", text + f" (of {unified} KiB unified L1/shared memory per SM)")
        result.values.update(
            unified_l1_shared_bytes=unified * 1024,
            l1_bytes=(unified * 1024 - likely["measured"]) if likely["measured"] is not None else None,
            l1_bytes_min=unified * 1024 - likely["largest"], l1_bytes_max=unified * 1024 - likely["smallest"],
            likely_carveout_bytes=likely["measured"], smallest_fitting_carveout_bytes=likely["smallest"],
        )
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
    rounded_warps = _round_up(occ.warps_per_block, cc.sub_partitions)
    if rounded_warps != occ.warps_per_block:
        result.step(f"per-block register check: {occ.warps_per_block} warps round up to {rounded_warps} (a block's warps are "
                    f"spread over {cc.sub_partitions} sub-partitions) x {occ.regs_per_warp} = {rounded_warps * occ.regs_per_warp:,} "
                    f"<= {cc.max_registers_per_block:,}")
    result.step(
        f"register limit = {cc.sub_partitions} slices x ({per_slice} // {occ.regs_per_warp}) warps "
        f"= {(per_slice // occ.regs_per_warp) * cc.sub_partitions} warps // {occ.warps_per_block} = {occ.limits['registers']} blocks"
    )
    result.step(
        f"shared memory per block = roundup({static_smem} + {dyn_smem} + {cc.reserved_shared_memory_per_block} reserved, "
        f"{cc.shared_memory_granularity}) = {occ.smem_per_block} B"
    )
    if carveout is None:
        result.step(f"carve-out for the block count: the largest supported, {config_kib} KiB = {occ.smem_config:,} B, as "
                    f"cuda_occupancy.h counts a kernel with no preference (supported: {cc.carveouts}; CUDA Programming Guide)")
        if likely is not None:
            which = (f"and often more ({CARVEOUT_MEASUREMENT})" if cc.cc == "9.0" else
                     f"up to the largest; which one it picks is not measured on cc {cc.cc} (the one measurement is an "
                     "H200's, cc 9.0)")
            result.step(f"carve-out the launch may run in: the driver chooses per launch, at least the smallest holding "
                        f"{occ.blocks} x {occ.smem_per_block:,} B = {occ.blocks * occ.smem_per_block:,} B, i.e. "
                        f"{likely['smallest'] // 1024} KiB, {which}")
    else:
        wanted, rounded, used = carveout_choice(cc, carveout, occ.smem_per_block)
        line = (f"carve-out = {carveout}% of {cc.shared_memory_per_sm:,} B = {wanted:,} B, rounded up to the next supported "
                f"carve-out ({cc.carveouts}; CUDA Programming Guide) = {rounded // 1024} KiB = {rounded:,} B")
        if used != rounded:
            line += (f"; that holds no block of {occ.smem_per_block:,} B, so the driver takes the smallest that does: "
                     f"{(used or 0) // 1024} KiB = {used:,} B")
        result.step(line)
    if unified and likely is None:
        result.step(f"L1 beside it = {unified} KiB unified L1/shared - {config_kib} KiB = {unified - config_kib} KiB")
    elif unified and likely is not None:
        result.step(f"L1 beside it = {unified} KiB unified L1/shared - the carve-out = {unified - config_kib} KiB (largest) to "
                    f"{unified - likely['smallest'] // 1024} KiB (smallest that holds the blocks)")
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
        result.assume("shared-memory carve-out: no preference; blocks are counted in the largest carve-out (so shared memory "
                      "does not limit first), while the driver may run the launch in a smaller one, leaving more L1")
    if opted_in:
        result.warn(f"{static_smem + dyn_smem:,} B per block is over 48 KiB: the kernel must opt in with "
                    "cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) and use dynamic shared memory")
    if occ.occupancy < 1 and occ.blocks == 1 and threads < 128:
        result.warn("one small block per SM: little latency hiding; most kernels want several warps per scheduler")
    if cluster > 1 or show_cluster:
        _cluster_capacity(result, cc, occ, dims, non_portable, static_smem + dyn_smem, sm_count, accelerator, data_dir)
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
    accelerator = None
    if p.get("gpu") or not p.get("cc"):
        from studytui.calc.hardware import load_catalog

        acc = load_catalog(data_dir).get(p.get("gpu") or "h200")
        sm_count, accelerator = acc.sm_count, acc.id
    return occupancy(
        cc, p["threads"], p["regs"], _whole_bytes(p, "smem"), _whole_bytes(p, "dyn_smem"), cluster=parse_cluster(p.get("cluster") or "1"),
        non_portable=bool(p.get("non_portable")), carveout=p.get("carveout"), sweep_axis=p.get("sweep"), label=label,
        sm_count=sm_count, accelerator=accelerator, data_dir=data_dir, show_cluster="cluster" in (p.get("_given") or ()),
    )


def _cluster_size(text: Any) -> int:
    try:
        return math.prod(parse_cluster(text or "1"))
    except FieldError:
        return 1


def _unused(p: dict[str, Any], given: frozenset[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    if _cluster_size(p.get("cluster")) <= 8:
        out["non_portable"] = "the non-portable opt-in matters only for clusters above 8 blocks"
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
        FieldSpec("cluster", "cluster", "choice", "1", choices=("1", "2", "4", "8", "12", "16", "2x2", "4x2", "2x2x2"),
                  help="blocks per thread-block cluster: N, XxY or XxYxZ (9.0 and later)", checked_by_calculator=True, free=True),
        FieldSpec("non_portable", "non-portable cluster", "bool", "false", help="allow clusters above 8 blocks where the part supports 16"),
        FieldSpec("carveout", "carve-out preference %", "int", allow_zero=True,
                  help="preferred shared-memory carve-out, 0-100 (default: the driver's)"),
        FieldSpec("sweep", "sweep", "choice", choices=SWEEPS,
                  help="print occupancy across threads, registers or dynamic shared memory"),
    ),
    _run,
    unused=_unused,
    short_name="occ",
    plot="sweep",
    sweep=_sweep_plot,
    tables=_tables,
)
