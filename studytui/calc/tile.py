"""Tile budget of a GEMM main loop (tile model v2): whether the tile exists as tensor-core
instructions on the architecture, shared memory per pipeline stage and per CTA, stages that fit,
blocks per SM, accumulator registers per thread (per consumer thread with warp specialisation),
and on datacenter Blackwell the tensor-memory columns of the accumulator and its scale factors.

A block (or, with tcgen05 cta_group::2, a pair of blocks) computes an M x N output tile, stepping
through K in chunks of K_tile; each pipeline stage holds one A chunk (M x K_tile) and one B chunk
(N x K_tile) in shared memory, plus the block-scale factors of the mx kinds; the epilogue may stage
the C tile, or a sub-tile of it, through shared memory too.

Validity (studytui.calc.mma): a tile that no instruction issues is refused with the rule, never
budgeted. wgmma on 9.0 (M = 64 per instruction and warpgroup, N up to 256, K by type), tcgen05 on
10.x (1-CTA M 64/128, 2-CTA M 128/256 split over the pair), mma.sync elsewhere; tests check the
rules against every row ptxas judged (tests/data/ptxas-mma-validity.yaml).
"""

from __future__ import annotations

import math
import re
from typing import Any

from studytui.calc.dtypes import DEFAULT_DTYPE, DTYPES, dtype_bytes
from studytui.calc.forms import CC_FIELDS, CalcSpec, DataDir, FieldSpec
from studytui.calc.mma import (
    CUTLASS_UMMA,
    PTX_ISA,
    UNPACKED_K,
    UNPACKED_K_SOURCE,
    MmaPath,
    mma_path,
    tcgen05_shape_rules,
    wgmma_valid_n,
)
from studytui.calc.occupancy import ComputeCapability, blocks_per_sm, resolve_cc
from studytui.calc.result import Result
from studytui.calc.units import FieldError

BARRIER_BYTES_PER_STAGE = 16  # two 8-byte mbarriers (full, empty) per stage on 9.0+
WARPGROUP = 128
SETMAXNREG_MIN, SETMAXNREG_MAX, SETMAXNREG_STEP = 24, 256, 8  # PTX ISA setmaxnreg: 24..256, multiples of 8
CUTLASS_SETMAXNREG = (40, 232)  # CUTLASS sm90 warp-specialized kernels: producer 40, consumers 232 (2 consumer warpgroups)
# A TMA-store epilogue buffers up to two sub-tiles of D in shared memory: CUTLASS's sm90 and sm100
# epilogue builders both take StagesD = min(EpiTiles, 2), EpiTiles being the sub-tiles in the CTA's tile.
EPILOGUE_SUBTILE_BUFFERS = 2
SF_BLOCK_ROWS = 128  # block-scale factors move in blocks of 128 rows x 4 scales (CUTLASS Sm1xxBlockScaledBasicChunk)
SF_BLOCK_K = 4  # ... and 4 scales along K (Blk_SF = 4): a tile's K is a multiple of 4 x the scale vector
SF_BLOCK_K_SOURCE = ("CUTLASS Sm1xxBlockScaledConfig deduce_smem_layoutSFA/SFB: the K extent of the scale layout is "
                     "TileK / SFVecSize / Blk_SF with Blk_SF = 4")
# The tensor-memory columns the sm100 epilogue reads at a time: CUTLASS's EpilogueTileAuto without a
# C source is 4096 elements / 128 rows = 32 columns (sm100_dense_compute_tile_shape_or_override),
# one tcgen05.ld.32x32b.x32 per warp: 32 registers per thread.
TMEM_EPILOGUE_COLUMNS = 32
SM100_EPILOGUE_SOURCE = ("CUTLASS epilogue/collective/builders/sm100_builder.inl, sm100_dense_compute_tile_shape_or_override "
                         "and sm100_dense_dispatch_policy")
_TILE = re.compile(r"^\s*(\d+)\s*[xX*,]\s*(\d+)\s*[xX*,]\s*(\d+)\s*$")
_TILE2 = r"^\s*(\d+)\s*[xX*,]\s*(\d+)\s*$"  # (compiled when used: most runs give neither)
_PAIR = r"^\s*(\d+)\s*[/,:]\s*(\d+)\s*$"


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


def parse_tile2(text: str, field: str) -> tuple[int, int]:
    match = re.match(_TILE2, str(text))
    if not match:
        raise FieldError(field, f"{text!r} is not MxN (e.g. 64x32)")
    m, n = (int(g) for g in match.groups())
    if min(m, n) < 1:
        raise FieldError(field, "both dimensions must be at least 1")
    return m, n


def parse_stages(text: str | None) -> int | None:
    """None for 'auto'."""
    key = str(text or "auto").strip().lower()
    if key == "auto":
        return None
    if not key.isdigit() or int(key) < 1:
        raise FieldError("stages", f"{text!r}: give a whole number of stages (1 or more) or 'auto'")
    return int(key)


def parse_auto_int(text: str | None, field: str, what: str) -> int | None:
    """None for 'auto' (or nothing); else a whole number of at least 1."""
    key = str(text or "auto").strip().lower()
    if key == "auto":
        return None
    if not key.isdigit() or int(key) < 1:
        raise FieldError(field, f"{text!r}: give {what} (a whole number, 1 or more) or 'auto'")
    return int(key)


def parse_setmaxnreg(text: str | None) -> tuple[int, int] | None:
    """'P/C' (producer, consumer registers per thread), e.g. 40/232; None for auto."""
    key = str(text or "auto").strip().lower()
    if key == "auto":
        return None
    match = re.match(_PAIR, key)
    if not match:
        raise FieldError("setmaxnreg", f"{text!r} is not PRODUCER/CONSUMER registers per thread (e.g. 40/232) or 'auto'")
    pair = (int(match.group(1)), int(match.group(2)))
    for value, who in zip(pair, ("producer", "consumer")):
        if not SETMAXNREG_MIN <= value <= SETMAXNREG_MAX or value % SETMAXNREG_STEP:
            raise FieldError("setmaxnreg", f"{who} {value}: setmaxnreg takes {SETMAXNREG_MIN} to {SETMAXNREG_MAX} registers "
                             f"per thread in steps of {SETMAXNREG_STEP} (PTX ISA setmaxnreg)")
    return pair


def _pow2_at_least(x: int) -> int:
    return 1 << max(0, math.ceil(math.log2(x))) if x > 1 else 1


def _floor8(x: float) -> int:
    return int(x) // 8 * 8


# ---- how the tile maps onto instructions and threads ------------------------------------------

def _wgmma_split(m: int, n: int, warpgroups: int, a_type: str) -> tuple[int, int] | None:
    """Warpgroups along M and N (as a CUTLASS atom layout) so that each takes M rows in 64-row
    wgmma slices and a valid wgmma N; None if no split works. Prefers splitting M."""
    valid = wgmma_valid_n(a_type)
    for wm in range(warpgroups, 0, -1):
        if warpgroups % wm:
            continue
        wn = warpgroups // wm
        if m % (64 * wm) == 0 and n % wn == 0 and n // wn in valid:
            return wm, wn
    return None


def _mma_sync_warps_ok(m: int, n: int, warps: int, path: MmaPath) -> bool:
    for wm in range(warps, 0, -1):
        if warps % wm:
            continue
        wn = warps // wm
        if m % (path.m_step * wm) == 0 and n % (path.n_step * wn) == 0:
            return True
    return False


def sm100_epilogue_tile(m_cta: int, n: int, mma_m: int, cta_group: int, d_bits: float, block_scaled: bool,
                        *, d_name: str = "", tma_store: bool = True) -> tuple[int, int]:
    """The epilogue sub-tile CUTLASS's sm100 builder picks with EpilogueTileAuto and no C source
    (sm100_dense_compute_tile_shape_or_override): M = min(CTA M, 32 x the epilogue warps along M);
    N = 4096 elements / M (8192 for a 4-bit D), at least 128 bits of D per row (per warp along N),
    the whole N when that does not divide it; block-scaled kinds with N = 256 take M x 128."""
    warp_m, warp_n = (2, 2) if cta_group == 2 and mma_m == 128 else (4, 1)  # sm100_tmem_warps
    tile_m = min(m_cta, 32 * warp_m)
    if block_scaled and n == 256:
        return tile_m, 128
    n_perf = (8192 if d_bits == 4 else 4096) // tile_m
    n_min = (128 if d_bits == 6 else int(128 // d_bits)) * warp_n
    if n < n_min and tma_store:
        raise FieldError("tile", f"N = {n} is under the {n_min} columns CUTLASS's sm100 TMA epilogue needs for {d_name or 'this'} "
                         "output (128 bits a row per epilogue warp along N; its 'CTA tile too small'); use a wider tile or "
                         "no epilogue via shared memory")
    n_tmp = min(n, max(n_perf, n_min))
    return tile_m, (n_tmp if n % n_tmp == 0 else n)


def _accumulator_regs(m: int, n: int, acc_bytes: int, threads: int) -> int:
    return math.ceil(m * n * acc_bytes / 4 / threads)


def _auto_threads(cc: ComputeCapability, path: MmaPath, m: int, n: int, ws: bool) -> int:
    """The fewest threads whose accumulators fit: warpgroups on 9.0 (plus the producer with
    --warp-specialized), one epilogue warpgroup on 10.x (plus the TMA and MMA warps), warps for
    mma.sync."""
    limit = cc.max_registers_per_thread
    if path.instruction == "tcgen05.mma":
        return WARPGROUP + (64 if ws else 0)
    if path.instruction == "wgmma.mma_async":
        for groups in range(1, cc.max_threads_per_block // WARPGROUP + (0 if ws else 1)):
            consumers = groups
            if _wgmma_split(m, n, consumers, path.kind) is None:
                continue
            budget = CUTLASS_SETMAXNREG[1] if ws else limit
            if _accumulator_regs(m, n, path.acc_bytes, consumers * WARPGROUP) <= budget:
                return WARPGROUP * (consumers + (1 if ws else 0))
        return WARPGROUP * (2 if ws else 1)  # refused below with the rule
    for warps in (4, 8, 16, 32):
        if warps * cc.warp_size > cc.max_threads_per_block:
            break
        if _mma_sync_warps_ok(m, n, warps, path) and _accumulator_regs(m, n, path.acc_bytes, warps * cc.warp_size) <= limit:
            return warps * cc.warp_size
    return 4 * cc.warp_size


def _shape_rules(cc: ComputeCapability, path: MmaPath, m: int, n: int, k: int, cta_group: int) -> list[str]:
    """Every rule the tile breaks as tensor-core instructions on this architecture ([] if none)."""
    rules: list[str] = []
    if path.instruction == "tcgen05.mma":
        shape = tcgen05_shape_rules(path.kind, cta_group, m, n)
        if shape:
            if n > 256:
                shape[-1] += "; a wider tile is two MMAs along N in two CTAs (or a second accumulator), not one tile"
            shape[-1] += " (ptxas cannot check M and N: they sit in the instruction descriptor)"
            rules.extend(shape)
    elif path.instruction == "wgmma.mma_async":
        if m % 64:
            rules.append(f"wgmma M is 64 per instruction and warpgroup, so a tile's M is a multiple of 64 (got {m})")
        if n not in wgmma_valid_n(path.kind):
            what = ("8, 16, 24, 32, then multiples of 16 up to 256" if path.kind in ("s8", "u8", "b1")
                    else "a multiple of 8 from 8 to 256")
            rules.append(f"wgmma N for {path.kind} is {what} (got {n})")
    else:
        if m % path.m_step:
            rules.append(f"{path.instruction} {path.kind} tiles are made of m{path.m_step} instructions, so M is a multiple of "
                         f"{path.m_step} (got {m})")
        if n % path.n_step:
            rules.append(f"N is a multiple of the instruction's {path.n_step} (got {n})")
    if k % path.k:
        rules.append(f"K is a multiple of the {path.k} one {'kind::' if path.instruction == 'tcgen05.mma' else ''}{path.kind} "
                     f"instruction takes (got {k})")
    if path.scale_vector and k % (SF_BLOCK_K * path.scale_vector):
        step = SF_BLOCK_K * path.scale_vector
        rules.append(f"K is a multiple of {step} for kind::{path.kind}: one scale per {path.scale_vector} elements, and scales "
                     f"come in blocks of {SF_BLOCK_K} along K (got {k}; {SF_BLOCK_K_SOURCE})")
    row = k * path.smem_bytes
    if cc.cluster_portable is not None and row % 16:
        rules.append(f"TMA boxes need rows of a multiple of 16 bytes (K = {k} x {path.smem_bytes:g} B = {row:g} B)")
    if cc.cluster_portable is not None and path.unpacked_bits and k % UNPACKED_K:
        rules.append(f"K is a multiple of {UNPACKED_K} for fp{path.unpacked_bits} operands TMA loads unpacked "
                     f"(16U{path.unpacked_bits}_ALIGN16B, a box of {UNPACKED_K} elements along K) (got {k}; {UNPACKED_K_SOURCE})")
    return rules


def _check_shape(cc: ComputeCapability, path: MmaPath, m: int, n: int, k: int, cta_group: int) -> None:
    """FieldError('tile') with every rule broken when no instruction sequence issues this tile."""
    rules = _shape_rules(cc, path, m, n, k, cta_group)
    if rules:
        source = CUTLASS_UMMA if path.instruction == "tcgen05.mma" else "PTX ISA 9.0" + (
            ", checked with ptxas 13.0" if path.instruction == "wgmma.mma_async" else "")
        raise FieldError("tile", f"{m}x{n}x{k} is not a {path.instruction} tile on cc {cc.cc}: " + "; ".join(rules)
                         + f" (instruction shapes: {source})")


# ---- the budget --------------------------------------------------------------------------------

def tile_budget(
    cc: ComputeCapability,
    m: int,
    n: int,
    k: int,
    dtype: str,
    *,
    c_dtype: str = "bf16",
    stages: int | None = None,
    threads: int | None = None,
    regs: int | None = None,
    epilogue: str = "smem",
    epilogue_tile: tuple[int, int] | None = None,
    cta_group: int | None = None,
    warp_specialized: bool = False,
    setmaxnreg: tuple[int, int] | None = None,
    acc_buffers: int | None = None,
    label: str = "",
) -> Result:
    if regs is not None and regs > cc.max_registers_per_thread:
        raise FieldError("regs", f"{regs} is over the limit of {cc.max_registers_per_thread} registers per thread (cc {cc.cc})")
    if epilogue not in ("smem", "none"):
        raise FieldError("epilogue", "accepted: smem, none")
    path = mma_path(cc.cc, dtype)
    tcgen05 = path.instruction == "tcgen05.mma"
    wgmma = path.instruction == "wgmma.mma_async"

    # CTA group (tcgen05 only)
    if cta_group is not None and not tcgen05:
        raise FieldError("cta_group", f"a CTA pair sharing one MMA (cta_group::2) is tcgen05's, on cc 10.x (this is {path.instruction} "
                         f"on cc {cc.cc})")
    group = cta_group or (2 if tcgen05 and m == 256 else 1)
    if group not in (1, 2):
        raise FieldError("cta_group", "1 or 2 (tcgen05 cta_group::1 or ::2)")
    _check_shape(cc, path, m, n, k, group)
    if warp_specialized and not (wgmma or tcgen05):
        raise FieldError("warp_specialized", f"warp specialisation here models Hopper's producer/consumer warpgroups (9.0) and "
                         f"Blackwell's TMA/MMA/epilogue warps (10.x); cc {cc.cc} uses {path.instruction}")
    if setmaxnreg is not None and not (wgmma and warp_specialized):
        raise FieldError("setmaxnreg", _setmaxnreg_refusal(cc, path, warp_specialized))

    # threads and their roles
    auto_threads = threads is None
    if threads is None:
        threads = _auto_threads(cc, path, m, n, warp_specialized)
    if threads < 1 or threads > cc.max_threads_per_block:
        raise FieldError("threads", f"{threads} is outside 1..{cc.max_threads_per_block} threads per block (cc {cc.cc})")
    consumer_threads = threads
    producers = 0
    if wgmma:
        if threads % WARPGROUP:
            raise FieldError("threads", f"{threads} threads is not whole warpgroups: wgmma is issued by warpgroups of 128 threads")
        groups = threads // WARPGROUP
        if warp_specialized:
            if groups < 2:
                raise FieldError("threads", "a warp-specialized kernel has a producer warpgroup and at least one consumer: "
                                 "256 threads or more")
            producers = 1
        consumers = groups - producers
        consumer_threads = consumers * WARPGROUP
        split = _wgmma_split(m, n, consumers, path.kind)
        if split is None:
            hint = ("" if warp_specialized or groups < 2 else
                    f"; with warp specialization (warp specialized) one warpgroup produces and {groups - 1} consume")
            raise FieldError("threads", f"{consumers} {'consumer ' if warp_specialized else ''}warpgroup(s) cannot share a "
                             f"{m}x{n} tile: each takes M in 64-row wgmma slices and a valid wgmma N{hint}")
    elif tcgen05:
        epi = threads - (64 if warp_specialized else 0)
        if epi < WARPGROUP or epi % WARPGROUP:
            raise FieldError("threads", f"{threads} threads: the epilogue needs whole warpgroups (each warp reads its 32-lane "
                             "quarter of tensor memory with tcgen05.ld, so 4 warps read the 128 lanes)"
                             + ("; with warp specialization, 64 more for the TMA and MMA warps" if warp_specialized else ""))
        consumer_threads = epi
        split = None
    else:
        if threads % cc.warp_size:
            raise FieldError("threads", f"{threads} threads is not whole warps (mma.sync is issued by warps of {cc.warp_size})")
        split = None
        if not _mma_sync_warps_ok(m, n, threads // cc.warp_size, path):
            raise FieldError("threads", f"{threads // cc.warp_size} warps cannot share a {m}x{n} tile of "
                             f"m{path.m_step}n{path.n_step} instructions evenly")

    # per-CTA operand bytes (a CTA pair splits A by rows and B by columns)
    m_cta, n_cta = m // group, n // group
    elem = path.smem_bytes
    a_bytes = math.ceil(m_cta * k * elem)
    b_bytes = math.ceil(n_cta * k * elem)
    sfa = sfb = 0
    # Block-scale factors: A's for the CTA's own rows; B's for the whole N, also in a CTA pair (each
    # CTA multiplies its rows by every column of B), padded to 128 columns (CUTLASS
    # deduce_smem_layoutSFB: MMA_N_SFB = ceil_div(MMA_N, 128) * 128; the scale block is 128 rows x 4).
    n_sfb = math.ceil(n / SF_BLOCK_ROWS) * SF_BLOCK_ROWS if path.scale_vector else 0
    if path.scale_vector:
        sfa = m_cta * (k // path.scale_vector)
        sfb = n_sfb * (k // path.scale_vector)
    barrier = BARRIER_BYTES_PER_STAGE if cc.cluster_portable is not None else 0
    stage = a_bytes + b_bytes + sfa + sfb + barrier

    # epilogue
    c_bytes = dtype_bytes(c_dtype)
    # tcgen05: without a sub-tile given, CUTLASS's default sm100 epilogue tile, which both sets how
    # tensor memory is read (registers) and, with an epilogue via shared memory, what is staged there.
    auto_epilogue = None
    if tcgen05 and epilogue_tile is None:
        auto_epilogue = sm100_epilogue_tile(m_cta, n, m, group, c_bytes * 8, path.scale_vector is not None, d_name=c_dtype,
                                            tma_store=epilogue == "smem")
    epi_buffers = 0
    if epilogue_tile is not None:
        if epilogue == "none":
            raise FieldError("epilogue_tile", "is not used: with no epilogue via shared memory (none) no C tile is staged there")
        em, en = epilogue_tile
        if m_cta % em or n % en:
            raise FieldError("epilogue_tile", f"{em}x{en} does not divide the {m_cta}x{n} C tile a CTA writes")
    staged = epilogue_tile or (auto_epilogue if epilogue == "smem" else None)
    if staged is not None:
        epi_tiles = (m_cta // staged[0]) * (n // staged[1])
        epi_buffers = min(epi_tiles, EPILOGUE_SUBTILE_BUFFERS)
        epi = math.ceil(staged[0] * staged[1] * c_bytes) * epi_buffers
    else:
        epi = math.ceil(m_cta * n * c_bytes) if epilogue == "smem" else 0
    budget = cc.shared_memory_per_block_optin
    fit = (budget - epi) // stage if budget > epi else 0
    if fit < 1:
        raise FieldError("tile", f"one stage ({stage:,} B) plus the epilogue buffer ({epi:,} B) is over the "
                         f"{budget:,} B ({budget // 1024} KiB) a block may use on cc {cc.cc}; use a smaller tile"
                         + ("" if staged or epilogue == "none" else " or an epilogue sub-tile"))
    if stages is None:
        chosen = fit
    elif stages > fit:
        raise FieldError("stages", f"{stages} stages need {stages * stage + epi:,} B; at most {fit} fit in the "
                         f"{budget:,} B ({budget // 1024} KiB) per-block limit on cc {cc.cc}")
    else:
        chosen = stages
    total = chosen * stage + epi

    result = Result("tile")
    result.row("target", label or f"cc {cc.cc}")
    instr = f"{path.instruction}" + (f".cta_group::{group}.kind::{path.kind}" if tcgen05 else f" ({path.kind})")
    result.row("instruction", f"{instr}, K = {path.k} per instruction, target {path.target}" + (f"; {path.note}" if path.note else ""))
    shape_note = ""
    if tcgen05 and group == 2:
        shape_note = f"; a CTA pair: each CTA holds A {m_cta}x{k} and B {n_cta}x{k} and {m_cta} rows of the accumulator"
    acc_name = "fp64" if path.acc_bytes == 8 else "s32" if path.kind in ("i8", "s8", "s4", "u8") else "fp32"
    result.row("tile", f"{m} x {n} x {k} ({dtype} inputs, {acc_name} accumulators, "
               f"{c_dtype} output){shape_note}")

    # registers and tensor memory
    values: dict[str, Any] = {}
    regs_launch = regs
    tmem_limit_blocks: int | None = None
    if tcgen05:
        acc_regs_main = 0
        acc_cols = n  # one 32-bit column per output column, for M_cta rows (<= 128 lanes)
        sf_cols = 0
        if path.scale_vector:
            per_row = k // path.scale_vector  # scale bytes per row per k-tile, 4 to a 32-bit column
            # A's rows (the CTA's own, one 128-lane block) and B's columns (the whole N, in 128-lane blocks)
            sf_cols = math.ceil(per_row / 4) * (math.ceil(m_cta / SF_BLOCK_ROWS) + n_sfb // SF_BLOCK_ROWS)
        columns = int(cc.tensor_memory["columns"]) if cc.tensor_memory else 512
        min_alloc = int(cc.tensor_memory.get("min_allocation_columns", 32)) if cc.tensor_memory else 32
        if acc_cols + sf_cols > columns:
            raise FieldError("tile", f"the accumulator needs {acc_cols} tensor-memory columns (+ {sf_cols} for scale factors); "
                             f"an SM has {columns}")
        if acc_buffers is None:
            buffers = 2 if 2 * acc_cols + sf_cols <= columns else 1
        else:
            buffers = acc_buffers
            if buffers * acc_cols + sf_cols > columns:
                raise FieldError("acc_buffers", f"{buffers} accumulator buffers of {acc_cols} columns (+ {sf_cols} for scale "
                                 f"factors) are over the {columns} tensor-memory columns of an SM")
        used = buffers * acc_cols + sf_cols
        alloc = max(min_alloc, _pow2_at_least(used))
        tmem_limit_blocks = columns // alloc
        if epilogue_tile:
            epi_chunk = (min(epilogue_tile[0], m_cta), epilogue_tile[1])
            chunk_why = "the epilogue sub-tile"
        else:
            epi_chunk = auto_epilogue or (m_cta, min(TMEM_EPILOGUE_COLUMNS, n))
            chunk_why = (f"tensor memory read {epi_chunk[1]} columns at a time, in CUTLASS's default sm100 epilogue sub-tile "
                         "without a C source")
        epi_regs = _accumulator_regs(epi_chunk[0], epi_chunk[1], 4, consumer_threads)
        if epi_regs > cc.max_registers_per_thread:
            raise FieldError("epilogue_tile", f"a {epi_chunk[0]}x{epi_chunk[1]} fp32 chunk over {consumer_threads} epilogue threads "
                             f"is {epi_regs} registers per thread; a thread addresses at most {cc.max_registers_per_thread}: "
                             f"read tensor memory in narrower sub-tiles (e.g. {m_cta}x{TMEM_EPILOGUE_COLUMNS})")
        values.update(tmem_columns=acc_cols, tmem_scale_factor_columns=sf_cols, tmem_accumulator_buffers=buffers,
                      tmem_columns_used=used, tmem_columns_allocated=alloc, tmem_columns_per_sm=columns,
                      epilogue_registers_per_thread=epi_regs, epilogue_chunk=list(epi_chunk))
        result.row("tensor memory", f"accumulator {acc_cols} columns x {min(m_cta, 128)} lanes, {buffers} buffer(s)"
                   + (f" + {sf_cols} columns of scale factors" if sf_cols else "")
                   + f" = {used}, allocated {alloc} of {columns} (powers of two from {min_alloc})")
        if buffers < 2:
            result.warn(f"one accumulator buffer ({acc_cols} columns; two need {2 * acc_cols + sf_cols} of {columns}): the epilogue "
                        "of one tile cannot overlap the next tile's main loop")
        result.row("accumulator registers per thread", f"0 in the main loop (tcgen05 accumulates in tensor memory); the epilogue "
                   f"holds {epi_regs} per thread for a {epi_chunk[0]}x{epi_chunk[1]} chunk over {consumer_threads} threads "
                   f"({chunk_why})")
        if warp_specialized:
            result.row("warp roles", f"1 TMA producer warp, 1 MMA warp (one thread issues tcgen05.mma), {consumer_threads // 32} "
                       "epilogue warps")
        if group == 2:
            result.assume("cta_group::2: the two CTAs of a cluster pair (cluster size a multiple of 2) run one MMA; each loads its "
                          "half of A (rows) and of B (columns), and each holds its rows of the accumulator in its own tensor memory"
                          + ("; each needs B's scale factors for all of N (CUTLASS deduce_smem_layoutSFB)" if path.scale_vector
                             else ""))
        result.assume("tensor memory: 128 lanes x 512 columns of 32-bit cells per SM; tcgen05.alloc takes powers of two from 32 "
                      "columns (PTX ISA, Tensor Memory); scale-factor columns are an estimate (4 one-byte scales to a column per "
                      "row, in 128-lane blocks: A's rows and B's columns, all of N, of one k-tile)")
        acc_regs = acc_regs_main
    else:
        acc_regs = _accumulator_regs(m, n, path.acc_bytes, consumer_threads)
        limit = cc.max_registers_per_thread
        who = "consumer thread" if warp_specialized else "thread"
        if acc_regs > limit:
            more = ("more consumer warpgroups or a smaller tile" if warp_specialized
                    else "more warpgroups (threads per block), warp specialization with two consumer warpgroups, or a smaller tile"
                    if wgmma else "more warps (threads per block) or a smaller tile")
            raise FieldError("tile", f"{m}x{n} {acc_name} accumulators over {consumer_threads} "
                             f"{'consumer ' if warp_specialized else ''}threads are {acc_regs} registers per {who}; a thread "
                             f"addresses at most {limit}: {more}")
        split_text = ""
        if split is not None and split != (consumer_threads // WARPGROUP, 1):
            split_text = f"; warpgroups {split[0]} along M x {split[1]} along N"
        result.row("accumulator registers per thread",
                   f"{acc_regs} ({m} x {n} {acc_name} over {consumer_threads} "
                   f"{'consumer ' if warp_specialized else ''}threads{split_text})")
        if warp_specialized:
            ws = _setmaxnreg_check(cc, setmaxnreg, threads, consumer_threads, regs, acc_regs)
            regs_launch = ws["launch_registers"]
            values.update(setmaxnreg=ws)
            result.row("warp roles", f"1 producer warpgroup (TMA loads, no accumulators) + {consumer_threads // WARPGROUP} consumer "
                       f"warpgroup(s) (wgmma)")
            result.row("setmaxnreg", ws["text"])
            for w in ws["warnings"]:
                result.warn(w)
            result.assume("setmaxnreg: the producer lowers its registers (setmaxnreg.dec, to at most the launch count) and "
                          "the consumers raise theirs (setmaxnreg.inc, to at least the launch count) within the block's "
                          "allocation at launch; values 24..256 in steps of 8 (PTX ISA)")
        elif acc_regs > 168:
            result.warn(f"{acc_regs} accumulator registers per thread leaves little room for addresses and operands: expect spills")
        if auto_threads and wgmma and not warp_specialized and consumer_threads > WARPGROUP:
            result.assume(f"threads auto: {consumer_threads // WARPGROUP} warpgroups, the fewest whose accumulators fit in "
                          f"{cc.max_registers_per_thread} registers each")
        values.update(tmem_columns=None)

    occ = blocks_per_sm(cc, threads, regs_launch or 1, 0, total)
    blocks = occ.blocks
    binding = list(occ.binding)
    if tmem_limit_blocks is not None and tmem_limit_blocks < blocks:
        blocks, binding = tmem_limit_blocks, ["tensor memory"]
    elif tmem_limit_blocks is not None and tmem_limit_blocks == blocks:
        binding.append("tensor memory")
    two_blocks = (cc.shared_memory_per_sm // 2 // cc.shared_memory_granularity * cc.shared_memory_granularity
                  - cc.reserved_shared_memory_per_block - epi) // stage
    # Shared memory is not the only limit on a second block: tensor memory, warps and registers do
    # not shrink with fewer stages, so when one of them allows a single block, no stage count helps.
    two_blocked: list[str] = []
    if tmem_limit_blocks is not None and tmem_limit_blocks < 2:
        alloc, columns = values["tmem_columns_allocated"], values["tmem_columns_per_sm"]
        why = (f"tensor memory: each CTA allocates {alloc} of the SM's {columns} columns, so a second CTA cannot allocate "
               "its accumulator")
        single = max(values["tmem_columns_used"] - (values["tmem_accumulator_buffers"] - 1) * values["tmem_columns"], 1)
        if values["tmem_accumulator_buffers"] > 1 and max(min_alloc, _pow2_at_least(single)) * 2 <= columns:
            why += " (one accumulator buffer would halve the allocation)"
        two_blocked.append(why)
    if occ.limits["warps"] < 2:
        two_blocked.append(f"warps: {threads} threads per block leave room for {occ.limits['warps']} block(s) of "
                           f"{cc.max_warps_per_sm} warps")
    if regs_launch and occ.limits["registers"] < 2:
        two_blocked.append(f"registers: {threads} threads x {regs_launch} per thread allow {occ.limits['registers']} block(s)")
    if two_blocked:
        two_blocks = 0

    values.update(
        cc=cc.cc, target=label, tile={"m": m, "n": n, "k": k}, dtype=dtype, c_dtype=c_dtype, threads=threads,
        instruction=path.instruction, mma_kind=path.kind, instruction_k=path.k, compile_target=path.target,
        cta_group=group, tile_per_cta={"m": m_cta, "n": n, "k": k},
        a_bytes_per_stage=a_bytes, b_bytes_per_stage=b_bytes, scale_factor_bytes_per_stage=sfa + sfb,
        operand_bytes_per_element=elem, barrier_bytes_per_stage=barrier, stage_bytes_per_cta=stage,
        epilogue_bytes=epi, epilogue_tile=list(staged) if staged else None, epilogue_buffers=epi_buffers,
        epilogue_tile_source="given" if epilogue_tile else "CUTLASS sm100 default" if staged else None,
        smem_budget_per_block=budget, max_stages=fit, stages=chosen,
        smem_per_block=total, blocks_per_sm=blocks, blocks_limited_by=binding,
        stages_for_two_blocks=max(0, two_blocks), two_blocks_prevented_by=[w.split(":")[0] for w in two_blocked],
        accumulator_registers_per_thread=acc_regs,
        consumer_threads=consumer_threads, warp_specialized=warp_specialized, time_s=None,
    )
    result.values.update(values)

    per_stage = f"A {a_bytes:,} B + B {b_bytes:,} B"
    if sfa or sfb:
        per_stage += f" + scale factors {sfa + sfb:,} B ({path.scale_type}, one per {path.scale_vector} along K)"
    if barrier:
        per_stage += f" + barriers {barrier} B"
    result.row("per stage" + (" per CTA" if group == 2 else ""), per_stage + f" = {stage:,} B")
    if staged:
        result.row("epilogue buffer", f"{epi:,} B ({staged[0]}x{staged[1]} {c_dtype} sub-tile x {epi_buffers} buffer(s)"
                   + ("" if epilogue_tile else ", as CUTLASS's default sm100 epilogue stages D without a C source; give an "
                      "epilogue sub-tile for another") + ")")
    else:
        result.row("epilogue buffer", f"{epi:,} B (the whole {m_cta}x{n} {c_dtype} C tile)" if epi else "none (C written from registers)")
    result.row(
        "stages", f"{chosen}" + (" (auto: the most that fit)" if stages is None else "") + f"; at most {fit} fit in {budget:,} B per block"
    )
    result.row("shared memory per block", f"{total:,} B ({total / 1024:.1f} KiB)")
    regs_note = "" if regs_launch else "; registers not counted (give registers per thread)"
    result.row("blocks per SM", f"{blocks} (limited by {', '.join(binding)}){regs_note}")
    if two_blocked:
        two_text = "none at any stage count: " + "; ".join(two_blocked)
    else:
        two_text = str(max(0, two_blocks)) if two_blocks >= 1 else "none: 2 blocks do not fit in shared memory"
    result.row("stages for 2 blocks per SM", two_text)

    # explain
    g = group
    result.step(f"instruction: {instr}; tile {m}x{n}x{k} = {k // path.k} instruction(s) along K per stage")
    if g == 2:
        result.step(f"CTA pair: per CTA A {m} / 2 = {m_cta} rows, B {n} / 2 = {n_cta} columns, accumulator {m_cta} rows x {n} columns")
    result.step(f"A per stage = {m_cta} x {k} x {elem:g} B = {a_bytes:,} B; B per stage = {n_cta} x {k} x {elem:g} B = {b_bytes:,} B")
    if sfa or sfb:
        b_rows = f"B {n_sfb} columns" + (f" (N = {n} padded to a multiple of {SF_BLOCK_ROWS})" if n_sfb != n else "")
        if g == 2:
            b_rows += " (all of N: each CTA's rows meet every column of B)"
        result.step(f"scale factors = (A {m_cta} rows + {b_rows}) x {k} / {path.scale_vector} x 1 B = {sfa:,} + {sfb:,} = "
                    f"{sfa + sfb:,} B")
    if barrier:
        result.step(f"stage = A + B{' + scales' if sfa else ''} + {barrier} B of mbarriers (full + empty) = {stage:,} B")
    if staged:
        buffers_how = f"StagesD = min({(m_cta // staged[0]) * (n // staged[1])} sub-tiles in {m_cta}x{n}, {EPILOGUE_SUBTILE_BUFFERS})"
        how = (buffers_how if epilogue_tile else
               f"CUTLASS's default sm100 epilogue: EpilogueTileAuto without a C source gives the {staged[0]}x{staged[1]} sub-tile, "
               f"{buffers_how} the buffers; {SM100_EPILOGUE_SOURCE}")
        result.step(f"epilogue = {staged[0]} x {staged[1]} x {c_bytes:g} B x {epi_buffers} buffer(s) = {epi:,} B ({how})")
    else:
        result.step(f"epilogue = {m_cta} x {n} x {c_bytes:g} B = {epi:,} B" if epi else "epilogue: none in shared memory")
    result.step(f"stages that fit = ({budget:,} - {epi:,}) // {stage:,} = {fit}")
    result.step(
        f"shared memory per block = {chosen} x {stage:,} + {epi:,} = {total:,} B (+ {cc.reserved_shared_memory_per_block} B reserved per "
        "block)"
    )
    shown = {key: v for key, v in occ.limits.items() if regs_launch or key != "registers"}
    if tmem_limit_blocks is not None:
        shown["tensor memory"] = tmem_limit_blocks
    result.step("blocks per SM = min(" + ", ".join(f"{key} {v}" for key, v in shown.items()) + f") = {blocks}"
                + ("" if regs_launch else " (registers not counted)"))
    if tcgen05:
        used = values["tmem_columns_used"]
        buffers_used, sf_used = values["tmem_accumulator_buffers"], values["tmem_scale_factor_columns"]
        allocated, per_sm = values["tmem_columns_allocated"], values["tmem_columns_per_sm"]
        if sf_used:
            result.step(f"scale-factor columns = ceil({k} / {path.scale_vector} / 4) x (A {math.ceil(m_cta / SF_BLOCK_ROWS)} + "
                        f"B {n_sfb // SF_BLOCK_ROWS} blocks of {SF_BLOCK_ROWS} lanes) = {sf_used}")
        result.step(f"tensor memory = {buffers_used} x {n} accumulator columns + {sf_used} scale-factor columns = {used}, "
                    f"allocated {allocated} (power of two); {per_sm} // {allocated} = {tmem_limit_blocks} CTA(s) per SM")
    else:
        result.step(f"accumulator registers per {'consumer ' if warp_specialized else ''}thread = {m} x {n} x {path.acc_bytes} B / 4 B / "
                    f"{consumer_threads} threads = {acc_regs}")
    result.assume("only the A/B stages, their barriers, the block-scale factors and the epilogue buffer are counted; a kernel's other "
                  "shared memory (bias, accumulator-pipeline barriers, swizzle padding) comes on top")
    result.assume(f"per-block limit: {budget:,} B with the opt-in above 48 KiB (cc {cc.cc})")
    result.assume(f"validity: {PTX_ISA}; wgmma shapes checked with ptxas 13.0 (tests/data/ptxas-mma-validity.yaml)"
                  + (f"; tcgen05 M and N from {CUTLASS_UMMA}" if tcgen05 else ""))
    return result


def _setmaxnreg_refusal(cc: ComputeCapability, path: MmaPath, warp_specialized: bool) -> str:
    """Why a setmaxnreg split is not checked for this kernel (the model covers Hopper's only)."""
    if path.instruction == "wgmma.mma_async":
        return "a setmaxnreg split is for a warp-specialized kernel: turn on warp specialized"
    major = int(cc.cc.split(".")[0])
    if major >= 10:
        target = {"10.0": "sm_100a", "10.3": "sm_103a", "12.0": "sm_120a"}.get(cc.cc, f"sm_{cc.cc.replace('.', '')}a")
        where = ("tcgen05 accumulates in tensor memory, so no consumer holds the accumulator in registers"
                 if path.instruction == "tcgen05.mma" else f"cc {cc.cc} has no producer/consumer warpgroups in this model")
        return (f"this model checks a setmaxnreg split for Hopper's producer/consumer warpgroups only (cc 9.0, wgmma); "
                f"ptxas 13.0 assembles setmaxnreg for {target} (not plain sm_{cc.cc.replace('.', '')}), but here {where}: "
                "leave the split at auto")
    return f"setmaxnreg needs cc 9.0 or later (an arch-specific target such as sm_90a; ptxas 13.0), not cc {cc.cc}"


def _setmaxnreg_check(cc: ComputeCapability, split: tuple[int, int] | None, threads: int, consumer_threads: int,
                      regs: int | None, acc_regs: int) -> dict[str, Any]:
    """A producer/consumer register split: the values, the block's register pool, the checks."""
    consumers = consumer_threads // WARPGROUP
    launch = regs if regs is not None else min(cc.max_registers_per_thread, _floor8(cc.max_registers_per_block / threads))
    per_warp = math.ceil(launch * cc.warp_size / cc.register_allocation_unit) * cc.register_allocation_unit
    pool = per_warp * (threads // cc.warp_size)
    if pool > cc.max_registers_per_block:
        raise FieldError("regs", f"{threads} threads x {launch} registers (rounded per warp) are {pool:,} registers, over the "
                         f"{cc.max_registers_per_block:,} a block may hold")
    auto = split is None
    if split is None:
        producer = max(SETMAXNREG_MIN, min(CUTLASS_SETMAXNREG[0], _floor8(launch)))
        consumer = CUTLASS_SETMAXNREG[1] if consumers == 2 else min(SETMAXNREG_MAX, _floor8((pool - producer * WARPGROUP) /
                                                                                                   consumer_threads))
        split = (producer, max(SETMAXNREG_MIN, consumer))
    producer, consumer = split
    # setmaxnreg.dec lowers a warp's count from its current value and .inc raises it (PTX ISA
    # setmaxnreg): every warp starts at the launch count, so producer <= launch <= consumer.
    assumed = ("" if regs is not None else
               f" (the launch count assumed here: the most the register file allows for {threads} threads; give the "
               "registers per thread at launch)")
    if consumer < launch:
        raise FieldError("setmaxnreg", f"consumer {consumer} is below the {launch} registers per thread at launch{assumed}: "
                         "the consumers raise their count with setmaxnreg.inc, which only increases it, so their value is at "
                         "least the launch count (PTX ISA setmaxnreg)")
    if producer > launch:
        raise FieldError("setmaxnreg", f"producer {producer} is above the {launch} registers per thread at launch{assumed}: "
                         "the producer releases registers with setmaxnreg.dec, which only decreases the count, so its value is "
                         "at most the launch count (PTX ISA setmaxnreg)")
    need = producer * WARPGROUP + consumer * consumer_threads
    if need > pool:
        raise FieldError("setmaxnreg", f"{producer} x {WARPGROUP} producer + {consumer} x {consumer_threads} consumer registers = "
                         f"{need:,}, over the {pool:,} the block holds ({threads} threads x {launch} at launch"
                         f"{'' if regs is not None else ', the most the register file allows'}); setmaxnreg moves registers "
                         "between warps, it does not add any")
    if acc_regs > consumer:
        raise FieldError("setmaxnreg", f"the consumers' {acc_regs} accumulator registers per thread do not fit in {consumer}")
    warnings = []
    if consumer - acc_regs < 32:
        warnings.append(f"{consumer - acc_regs} registers per consumer thread beside the {acc_regs} accumulators: expect spills")
    how = (" (auto: CUTLASS sm90 warp-specialized 40/232)" if auto and consumers == 2 else " (auto)" if auto else "")
    text = (f"producer {producer}, consumers {consumer} per thread{how}: "
            f"{producer} x {WARPGROUP} + {consumer} x {consumer_threads} = {need:,} of {pool:,} registers ({threads} threads x "
            f"{launch} at launch); {consumer - acc_regs} per consumer thread beside the accumulators")
    return {"producer": producer, "consumer": consumer, "registers_needed": need, "registers_in_block": pool,
            "launch_registers": launch, "text": text, "warnings": warnings}


# ---- the calculator ------------------------------------------------------------------------

def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    cc, label = resolve_cc(p.get("gpu"), p.get("cc"), data_dir)
    m, n, k = parse_tile3(p["tile"])
    cta_group = parse_auto_int(p.get("cta_group"), "cta_group", "1 or 2")
    epi_tile = parse_tile2(p["epilogue_tile"], "epilogue_tile") if p.get("epilogue_tile") else None
    return tile_budget(
        cc, m, n, k, p["dtype"], c_dtype=p["c_dtype"], stages=parse_stages(p.get("stages")),
        threads=parse_auto_int(p.get("threads"), "threads", "threads per block"),
        regs=p.get("regs"), epilogue=p.get("epilogue") or "smem", epilogue_tile=epi_tile, cta_group=cta_group,
        warp_specialized=bool(p.get("warp_specialized")), setmaxnreg=parse_setmaxnreg(p.get("setmaxnreg")),
        acc_buffers=parse_auto_int(p.get("acc_buffers"), "acc_buffers", "accumulator buffers"), label=label,
    )


# The block-scaled formats the tile model knows a kind for (mxint8 has none), beside the plain types;
# each is refused with its rule on an architecture without it.
TILE_DTYPES = DTYPES + ("nvfp4", "mxfp8", "mxfp6", "mxfp4")


def _unused(p: dict[str, Any], given: frozenset[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    if p.get("epilogue") == "none":
        out["c_dtype"] = "with no epilogue via shared memory (none) no C tile is staged, so its precision is not used"
        out["epilogue_tile"] = "with no epilogue via shared memory (none) no C tile is staged"
    if not p.get("warp_specialized"):
        out["setmaxnreg"] = "a setmaxnreg split is for a warp-specialized Hopper kernel (cc 9.0 with warp specialized)"
    return out


SPEC = CalcSpec(
    "tile", "GEMM tile budget",
    "Whether the tile exists as tensor-core instructions (wgmma on 9.0, tcgen05 1-CTA and 2-CTA on 10.x, mma.sync "
    "elsewhere), shared memory per stage and per CTA, stages beside the epilogue buffer, blocks per SM, accumulator "
    "registers per (consumer) thread with warp specialisation and setmaxnreg, tensor-memory columns and block-scale "
    "factors on Blackwell.",
    (
        *CC_FIELDS,
        FieldSpec("tile", "tile MxNxK", "choice", "128x128x64", required=True,
                  choices=("64x64x32", "128x128x32", "128x128x64", "128x256x64", "256x128x64", "256x256x64", "128x176x64"),
                  help="block tile (a CTA pair's with tcgen05 cta_group::2), any MxNxK", free=True),
        FieldSpec("dtype", "input precision", "dtype", DEFAULT_DTYPE, choices=TILE_DTYPES,
                  help="A and B element type; the block-scaled nvfp4, mxfp8, mxfp6, mxfp4 select the mx kinds (10.x, 12.0)"),
        FieldSpec("c_dtype", "output precision", "dtype", "bf16", choices=DTYPES, help="C element type (epilogue buffer)", group="more"),
        # "auto" or a number: the form offers these, the calculator reads any.
        FieldSpec("stages", "pipeline stages", "choice", "auto", choices=("auto", "2", "3", "4", "5", "6", "7", "8"),
                  help="N or auto (the most that fit)", checked_by_calculator=True),
        FieldSpec("threads", "threads per block", "choice", "auto", choices=("auto", "128", "256", "384", "192"),
                  help="N or auto (the fewest whose accumulators fit)", checked_by_calculator=True, free=True),
        FieldSpec("regs", "registers per thread", "int", help="optional: at launch; counts the register limit in blocks per SM"),
        FieldSpec("warp_specialized", "warp specialized", "bool", "false",
                  help="a producer warpgroup (9.0) or TMA+MMA warps (10.x) beside the consumers"),
        FieldSpec("setmaxnreg", "setmaxnreg split", "choice", "auto", choices=("auto", "40/232", "24/240", "56/224"),
                  help="PRODUCER/CONSUMER registers per thread (9.0, warp specialized)", checked_by_calculator=True, free=True,
                  group="more"),
        FieldSpec("cta_group", "CTA group", "choice", "auto", choices=("auto", "1", "2"),
                  help="tcgen05 cta_group (10.x): auto = 2 for M 256, else 1", checked_by_calculator=True, group="more"),
        FieldSpec("acc_buffers", "accumulator buffers", "choice", "auto", choices=("auto", "1", "2"),
                  help="tensor-memory accumulator buffers (10.x): auto = 2 when they fit", checked_by_calculator=True, group="more"),
        FieldSpec("epilogue", "epilogue via shared memory", "choice", "smem", choices=("smem", "none")),
        FieldSpec("epilogue_tile", "epilogue sub-tile MxN", "choice", choices=("64x32", "64x64", "128x32", "128x64"),
                  help="stage a C sub-tile (double-buffered) instead of the whole tile", free=True, group="more"),
    ),
    _run,
    unused=_unused,
)
