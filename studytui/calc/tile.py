"""Tile budget of a GEMM main loop: shared memory per pipeline stage, stages that fit, blocks per SM,
accumulator registers per thread and, on datacenter Blackwell, tensor-memory columns.

A block computes an M x N output tile, stepping through K in chunks of K_tile; each pipeline stage
holds one A chunk (M x K_tile) and one B chunk (K_tile x N) in shared memory, and the epilogue may
stage the C tile (M x N) through shared memory too. Accumulators are fp32.
"""

from __future__ import annotations

import math
import re
from typing import Any

from studytui.calc.dtypes import DEFAULT_DTYPE, DTYPES, dtype_bytes
from studytui.calc.forms import CC_FIELDS, CalcSpec, DataDir, FieldSpec
from studytui.calc.occupancy import ComputeCapability, blocks_per_sm, resolve_cc
from studytui.calc.result import Result
from studytui.calc.units import FieldError

ACC_BYTES = 4  # fp32 accumulators
BARRIER_BYTES_PER_STAGE = 16  # two 8-byte mbarriers (full, empty) per stage on 9.0+
_TILE = re.compile(r"^\s*(\d+)\s*[xX*,]\s*(\d+)\s*[xX*,]\s*(\d+)\s*$")


def parse_tile3(text: str) -> tuple[int, int, int]:
    match = _TILE.match(str(text))
    if not match:
        raise FieldError("tile", f"{text!r} is not MxNxK (e.g. 128x128x64)")
    m, n, k = (int(g) for g in match.groups())
    if min(m, n, k) < 1:
        raise FieldError("tile", "every tile dimension must be at least 1")
    if max(m, n, k) > 4096:
        raise FieldError("tile", f"{text!r}: a dimension over 4096 cannot be one block's tile")
    return m, n, k


def parse_stages(text: str | None) -> int | None:
    """None for 'auto'."""
    key = str(text or "auto").strip().lower()
    if key == "auto":
        return None
    if not key.isdigit() or int(key) < 1:
        raise FieldError("stages", f"{text!r}: give a whole number of stages (1 or more) or 'auto'")
    return int(key)


def _pow2_at_least(x: int) -> int:
    return 1 << max(0, math.ceil(math.log2(x))) if x > 1 else 1


def tile_budget(
    cc: ComputeCapability,
    m: int,
    n: int,
    k: int,
    dtype: str,
    *,
    c_dtype: str = "bf16",
    stages: int | None = None,
    threads: int = 128,
    regs: int | None = None,
    epilogue: str = "smem",
    label: str = "",
) -> Result:
    if threads < 1 or threads > cc.max_threads_per_block:
        raise FieldError("threads", f"{threads} is outside 1..{cc.max_threads_per_block} threads per block (cc {cc.cc})")
    if regs is not None and regs > cc.max_registers_per_thread:
        raise FieldError("regs", f"{regs} is over the limit of {cc.max_registers_per_thread} registers per thread (cc {cc.cc})")
    if epilogue not in ("smem", "none"):
        raise FieldError("epilogue", "accepted: smem, none")
    in_bytes = dtype_bytes(dtype)
    a_bytes = math.ceil(m * k * in_bytes)
    b_bytes = math.ceil(k * n * in_bytes)
    barrier = BARRIER_BYTES_PER_STAGE if cc.cluster_portable is not None else 0
    stage = a_bytes + b_bytes + barrier
    epi = math.ceil(m * n * dtype_bytes(c_dtype)) if epilogue == "smem" else 0
    budget = cc.shared_memory_per_block_optin
    fit = (budget - epi) // stage if budget > epi else 0
    if fit < 1:
        raise FieldError("tile", f"one stage ({stage:,} B) plus the epilogue buffer ({epi:,} B) is over the "
                         f"{budget:,} B ({budget // 1024} KiB) a block may use on cc {cc.cc}; use a smaller tile")
    if stages is None:
        chosen = fit
    elif stages > fit:
        raise FieldError("stages", f"{stages} stages need {stages * stage + epi:,} B; at most {fit} fit in the "
                         f"{budget:,} B ({budget // 1024} KiB) per-block limit on cc {cc.cc}")
    else:
        chosen = stages
    total = chosen * stage + epi
    occ = blocks_per_sm(cc, threads, regs or 1, 0, total)
    acc_values = m * n
    acc_regs = math.ceil(acc_values * ACC_BYTES / 4 / threads)
    two_blocks = (cc.shared_memory_per_sm // 2 // cc.shared_memory_granularity * cc.shared_memory_granularity
                  - cc.reserved_shared_memory_per_block - epi) // stage

    result = Result("tile")
    result.values.update(
        cc=cc.cc, target=label, tile={"m": m, "n": n, "k": k}, dtype=dtype, c_dtype=c_dtype, threads=threads,
        a_stage_bytes=a_bytes, b_stage_bytes=b_bytes, barrier_bytes_per_stage=barrier, stage_bytes=stage,
        epilogue_bytes=epi, smem_budget_per_block=budget, max_stages=fit, stages=chosen,
        smem_per_block=total, blocks_per_sm=occ.blocks, blocks_limited_by=occ.binding,
        stages_for_two_blocks=max(0, two_blocks), accumulator_registers_per_thread=acc_regs, time_s=None,
    )
    result.row("target", label or f"cc {cc.cc}")
    result.row("tile", f"{m} x {n} x {k} ({dtype} inputs, fp32 accumulators, {c_dtype} output)")
    result.row("per stage", f"A {a_bytes:,} B + B {b_bytes:,} B" + (f" + barriers {barrier} B" if barrier else "") + f" = {stage:,} B")
    result.row("epilogue buffer", f"{epi:,} B" if epi else "none (C written from registers)")
    result.row(
        "stages", f"{chosen}" + (" (auto: the most that fit)" if stages is None else "") + f"; at most {fit} fit in {budget:,} B per block"
    )
    result.row("shared memory per block", f"{total:,} B ({total / 1024:.1f} KiB)")
    result.row(
        "blocks per SM", f"{occ.blocks} (limited by {', '.join(occ.binding)})" + ("" if regs else "; registers not counted (give --regs)")
    )
    result.row("stages for 2 blocks per SM", str(max(0, two_blocks)) if two_blocks >= 1 else "none: 2 blocks do not fit")
    tmem = cc.tensor_memory
    if tmem:
        lanes, columns = int(tmem["lanes"]), int(tmem["columns"])
        cols = n * math.ceil(m / lanes)
        alloc = max(int(tmem.get("min_allocation_columns", 32)), _pow2_at_least(cols))
        result.values.update(tmem_columns=cols, tmem_columns_allocated=alloc, tmem_columns_per_sm=columns,
                             tmem_accumulator_buffers=columns // alloc if alloc <= columns else 0)
        fits = alloc <= columns
        result.row("tensor memory (accumulator)", f"{cols} columns x {lanes} lanes, allocated {alloc} of {columns}"
                   + (f"; {columns // alloc} accumulator buffer(s) fit" if fits else "; does not fit"))
        result.row("accumulator registers per thread", f"0 in the main loop (tcgen05 accumulates in tensor memory); "
                   f"{acc_regs} if the epilogue loads the whole tile at once")
        if not fits:
            result.warn(f"the {m}x{n} fp32 accumulator needs {cols} tensor-memory columns; an SM has {columns}")
        result.assume(
            "tcgen05 accumulators: one 32-bit column per output column for each 128 rows; allocations are powers of two from 32 columns"
        )
    else:
        result.values["tmem_columns"] = None
        result.row("accumulator registers per thread", f"{acc_regs} ({m} x {n} fp32 over {threads} threads)")
        if acc_regs > cc.max_registers_per_thread:
            result.warn(f"{acc_regs} accumulator registers per thread is over the {cc.max_registers_per_thread}-register limit: "
                        "more threads (another consumer warpgroup) or a smaller tile")
        elif acc_regs > 168:
            result.warn(f"{acc_regs} accumulator registers per thread leaves little room for addresses and operands: expect spills")
    result.step(f"A per stage = {m} x {k} x {in_bytes:g} B = {a_bytes:,} B; B per stage = {k} x {n} x {in_bytes:g} B = {b_bytes:,} B")
    if barrier:
        result.step(f"stage = A + B + {barrier} B of mbarriers (full + empty) = {stage:,} B")
    result.step(f"epilogue = {m} x {n} x {dtype_bytes(c_dtype):g} B = {epi:,} B" if epi else "epilogue: none in shared memory")
    result.step(f"stages that fit = ({budget:,} - {epi:,}) // {stage:,} = {fit}")
    result.step(
        f"shared memory per block = {chosen} x {stage:,} + {epi:,} = {total:,} B (+ {cc.reserved_shared_memory_per_block} B reserved per "
        "block)"
    )
    shown = {k: v for k, v in occ.limits.items() if regs or k != "registers"}
    result.step("blocks per SM = min(" + ", ".join(f"{k} {v}" for k, v in shown.items()) + f") = {occ.blocks}"
                + ("" if regs else " (registers not counted)"))
    result.step(f"accumulator registers per thread = {m} x {n} x 4 B / 4 B / {threads} threads = {acc_regs}")
    result.assume("only the A/B stages, their barriers and the epilogue buffer are counted; a kernel's other shared "
                  "memory (scales, bias, swizzle padding) comes on top")
    result.assume(f"per-block limit: {budget:,} B with the opt-in above 48 KiB (cc {cc.cc})")
    return result


# ---- the calculator ------------------------------------------------------------------------

def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    cc, label = resolve_cc(p.get("gpu"), p.get("cc"), data_dir)
    m, n, k = parse_tile3(p["tile"])
    return tile_budget(
        cc, m, n, k, p["dtype"], c_dtype=p["c_dtype"], stages=parse_stages(p.get("stages")), threads=p["threads"],
        regs=p.get("regs"), epilogue=p.get("epilogue") or "smem", label=label,
    )


def _unused(p: dict[str, Any], given: frozenset[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    if p.get("epilogue") == "none":
        out["c_dtype"] = "--epilogue none stages no C tile in shared memory, so its precision is not used"
    return out


SPEC = CalcSpec(
    "tile", "GEMM tile budget",
    "Shared memory per pipeline stage for the A and B tiles, how many stages fit beside the epilogue buffer, "
    "blocks per SM at that footprint, accumulator registers per thread (tensor-memory columns on Blackwell).",
    (
        *CC_FIELDS,
        FieldSpec("tile", "tile MxNxK", "choice", "128x128x64", required=True,
                  choices=("64x64x32", "128x128x32", "128x128x64", "128x256x64", "256x128x64"), help="block tile, any MxNxK", free=True),
        FieldSpec("dtype", "input precision", "dtype", DEFAULT_DTYPE, choices=DTYPES, help="A and B element type"),
        FieldSpec("c_dtype", "output precision", "dtype", "bf16", choices=DTYPES, help="C element type (epilogue buffer)", group="more"),
        # "auto" or a number: the form offers these, the calculator reads any.
        FieldSpec("stages", "pipeline stages", "choice", "auto", choices=("auto", "2", "3", "4", "5", "6", "7", "8"),
                  help="N or auto (the most that fit)", checked_by_calculator=True),
        FieldSpec("threads", "threads per block", "int", "128"),
        FieldSpec("regs", "registers per thread", "int", help="optional: counts the register limit in blocks per SM"),
        FieldSpec("epilogue", "epilogue via shared memory", "choice", "smem", choices=("smem", "none")),
    ),
    _run,
    unused=_unused,
)
