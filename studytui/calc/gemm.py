"""A GEMM C[M,N] = A[M,K] x B[K,N]: roofline plus tile waves and what Stream-K recovers."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from studytui.calc.dtypes import STORAGE_DTYPES, block_format, dtype_bytes
from studytui.calc.forms import MEASURED_TIME, CalcSpec, DataDir, FieldSpec, ceilings_for, gpu_fields
from studytui.calc.result import Result
from studytui.calc.roofline import (
    MEASURED_HEADLINE,
    TERMS_HEADLINE,
    TERMS_SHORT_LABELS,
    RooflineTerms,
    add_terms,
    cache_bytes,
    check_measured,
    g,
)
from studytui.calc.units import FieldError, format_percent, format_size, format_time

if TYPE_CHECKING:
    from studytui.calc.ceilings import Ceilings

ACCUMULATOR_BYTES = 4  # fp32 partial sums, what a Stream-K fix-up exchanges


def parse_tile(text: str, field: str = "tile") -> tuple[int, int, int | None]:
    """MxN or MxNxK: the output tile, and the depth of one MAC-loop iteration (None: not given)."""
    parts = str(text).lower().replace(" ", "").split("x")
    try:
        if len(parts) not in (2, 3):
            raise ValueError
        sides = [int(p) for p in parts]
    except ValueError:
        raise FieldError(
            field, f"{text!r} is not a tile shape; expected MxN or MxNxK such as 128x128, 128x256 or 128x128x64"
        ) from None
    if any(side <= 0 for side in sides):
        raise FieldError(field, f"{text!r}: tile sides must be greater than zero")
    return sides[0], sides[1], sides[2] if len(sides) == 3 else None


def default_tile_k(a_dtype: str) -> int:
    """128 bytes of A per row of the tile, one 128-byte swizzled row (64 for 16-bit types, 128 for
    8-bit), as CUTLASS's Hopper GEMM examples use (128x128x64 bf16, 128x128x128 fp8)."""
    fmt = block_format(a_dtype)
    element = dtype_bytes(fmt.base if fmt else a_dtype)
    return max(8, int(128 / element))


def stream_k_split(tiles: int, iters_per_tile: int, units: int) -> tuple[int, int]:
    """Stream-K's even share of the MAC-loop iterations over `units` (one per SM): each unit takes a
    contiguous run of total // units iterations (the first total % units take one more).
    Returns (rounds: the most iterations any unit runs, partials: tile pieces that end in a
    fix-up, i.e. the sum over tiles of the units that touch it, minus one per tile)."""
    total = tiles * iters_per_tile
    share, extra = divmod(total, units)
    rounds = share + (1 if extra else 0)
    touched, start = 0, 0
    for unit in range(units):
        length = share + (1 if unit < extra else 0)
        if length == 0:
            break
        end = start + length
        touched += (end - 1) // iters_per_tile - start // iters_per_tile + 1
        start = end
    return rounds, touched - tiles


def gemm(
    ceilings: Ceilings,
    m: int,
    n: int,
    k: int,
    *,
    a_dtype: str = "bf16",
    b_dtype: str = "bf16",
    c_dtype: str = "bf16",
    tile: tuple[int, int, int | None] = (128, 128, None),
    sm_count: int | None = None,
    measured_time: float | None = None,
) -> Result:
    """FLOPs = 2MNK; minimum bytes = each operand read once and C written once."""
    if ceilings.peak_flops is None or ceilings.mem_bw is None:
        raise FieldError("gpu", "a GEMM needs a peak FLOP/s and a memory bandwidth")
    peak, bw = ceilings.peak_flops, ceilings.mem_bw
    result = Result("gemm")
    a_b, b_b, c_b = dtype_bytes(a_dtype), dtype_bytes(b_dtype), dtype_bytes(c_dtype)
    flops = 2.0 * m * n * k
    nbytes = a_b * m * k + b_b * k * n + c_b * m * n
    result.values.update(
        gpu=ceilings.accelerator.id if ceilings.accelerator else None, dtype=ceilings.dtype,
        m=m, n=n, k=k, a_dtype=a_dtype, b_dtype=b_dtype, c_dtype=c_dtype,
    )
    result.row("ceilings", ceilings.gpu_label)
    result.row("shape", f"[{m}x{k}] x [{k}x{n}] -> [{m}x{n}] ({a_dtype} x {b_dtype} -> {c_dtype}, math in {ceilings.dtype})")
    result.step(f"FLOPs = 2 x M x N x K = 2 x {m} x {n} x {k} = {g(flops)}")
    result.step(
        f"bytes = a*M*K + b*K*N + c*M*N = {g(a_b)}x{m}x{k} + {g(b_b)}x{k}x{n} + {g(c_b)}x{m}x{n} = {g(nbytes)}"
    )
    terms = RooflineTerms(flops, nbytes, peak, bw)
    add_terms(result, terms)

    # Tile quantisation: a kernel computes whole output tiles, one per SM at a time, each in
    # ceil(K / tile_k) MAC-loop iterations.
    tm, tn, tk_given = tile
    tk = tk_given or default_tile_k(a_dtype)
    tiles_m, tiles_n = math.ceil(m / tm), math.ceil(n / tn)
    tiles = tiles_m * tiles_n
    iters_per_tile = math.ceil(k / tk)
    iterations = tiles * iters_per_tile
    padding_efficiency = (m * n) / (tiles * tm * tn)
    result.values.update(
        tile=f"{tm}x{tn}x{tk}", tiles=tiles, tile_k=tk, iterations_per_tile=iters_per_tile, mac_iterations=iterations,
        tile_padding_efficiency=padding_efficiency,
    )
    result.step(f"output tiles = ceil(M/{tm}) x ceil(N/{tn}) = {tiles_m} x {tiles_n} = {tiles}")
    result.step(f"tile padding efficiency = M*N / (tiles x {tm}x{tn}) = {format_percent(padding_efficiency)}")
    result.step(
        f"MAC-loop iterations = tiles x ceil(K / tile_k) = {tiles} x ceil({k} / {tk}) = {tiles} x {iters_per_tile} = {iterations}"
        + ("" if tk_given else f" (tile_k {tk}: 128 bytes of A per row, the default; give --tile {tm}x{tn}xK)")
    )
    result.row("output tiles", f"{tiles} of {tm}x{tn} ({format_percent(padding_efficiency)} useful after padding)")
    result.row("MAC-loop iterations", f"{iterations:,} ({tiles} tiles x {iters_per_tile} of depth {tk})")
    sms = sm_count or ceilings.sm_count
    unit = "SMs" if sm_count or ceilings.compute_unit_kind == "SM" else "CUs"
    if sms:
        waves = math.ceil(tiles / sms)
        last = tiles - (waves - 1) * sms
        last_util = last / sms
        wave_eff = tiles / (waves * sms)
        # One iteration of one tile on one SM at peak/SMs; the data-parallel schedule runs
        # `waves` rounds of whole tiles, Stream-K `rounds` iterations on its busiest SM.
        iter_time = 2.0 * tm * tn * tk / (peak / sms)
        quantised = waves * iters_per_tile * iter_time
        rounds, partials = stream_k_split(tiles, iters_per_tile, sms)
        stream_k = rounds * iter_time
        fixup_bytes = 2.0 * partials * tm * tn * ACCUMULATOR_BYTES  # each partial tile written once, read once
        dp_time = max(quantised, terms.memory_time_s)
        sk_time = max(stream_k, (nbytes + fixup_bytes) / bw)
        result.values.update(
            sm_count=sms, waves=waves, last_wave_tiles=last, last_wave_utilization=last_util,
            wave_efficiency=wave_eff, wave_quantized_compute_time_s=quantised,
            wave_quantized_time_s=dp_time,
            stream_k_rounds=rounds, stream_k_compute_time_s=stream_k, stream_k_recovery_s=quantised - stream_k,
            stream_k_speedup=quantised / stream_k, stream_k_fixup_tiles=partials, stream_k_fixup_bytes=fixup_bytes,
            stream_k_time_s=sk_time, stream_k_end_to_end_speedup=dp_time / sk_time,
        )
        result.step(f"waves = ceil(tiles / SMs) = ceil({tiles} / {sms}) = {waves}")
        result.step(f"last wave utilisation = (tiles - (waves-1) x SMs) / SMs = {last} / {sms} = {format_percent(last_util)}")
        result.step(
            f"one iteration = 2*{tm}*{tn}*{tk} / (peak/SMs) = {format_time(iter_time)}; tile-quantised compute = waves x iterations per "
            f"tile x iteration = {waves} x {iters_per_tile} x {format_time(iter_time)} = {format_time(quantised)}"
        )
        result.step(
            f"Stream-K rounds = ceil(iterations / SMs) = ceil({iterations} / {sms}) = {rounds}; compute = {rounds} x "
            f"{format_time(iter_time)} = {format_time(stream_k)} (x{g(quantised / stream_k)})"
        )
        result.step(
            f"Stream-K fix-up: {partials} partial tile{'' if partials == 1 else 's'} (SMs sharing a tile) x {tm}x{tn} fp32 accumulators "
            f"written and read back = {g(fixup_bytes)} bytes"
        )
        result.step(
            f"end to end (roofline) = max(compute, bytes / bw): data-parallel max({format_time(quantised)}, "
            f"{format_time(terms.memory_time_s)}) = {format_time(dp_time)}; Stream-K max({format_time(stream_k)}, "
            f"{format_time((nbytes + fixup_bytes) / bw)}) = {format_time(sk_time)}: x{g(dp_time / sk_time)}"
        )
        result.row(
            f"waves over {unit}",
            f"{waves} over {sms} {unit}; last wave {last} tile{'' if last == 1 else 's'} ({format_percent(last_util)} busy)",
        )
        result.row("tile-quantised compute", format_time(quantised))
        result.row(
            "Stream-K compute",
            f"{format_time(stream_k)}: {iterations:,} iterations over {sms} {unit}, {rounds} round{'' if rounds == 1 else 's'} "
            f"(x{g(quantised / stream_k)})",
        )
        result.row(
            "Stream-K fix-up",
            "none: no tile is shared between SMs" if partials == 0
            else f"{partials} partial tile{'' if partials == 1 else 's'}, {format_size(fixup_bytes)} written and read back",
        )
        note = ""
        if terms.bound == "memory":
            note = "; memory-bound: splitting the K loop moves no fewer bytes"
        result.row("end to end with Stream-K", f"{format_time(dp_time)} -> {format_time(sk_time)} (x{g(dp_time / sk_time)}{note})")
        result.assume(
            f"waves: one output tile per {unit[:-1]} at a time (a persistent kernel with this tile); Stream-K (Osama et al., PPoPP 2023) "
            f"gives each {unit[:-1]} an even share of the {iterations:,} MAC-loop iterations ({tiles} tiles x ceil(K/{tk})), so whole "
            "iterations, not FLOPs, are what it balances"
        )
        result.assume(
            "Stream-K fix-up: a tile whose iterations span SMs is finished by one of them, which reads the others' fp32 partial "
            "accumulators from a global workspace; counted as bytes (the wait for them is not modelled, and L2 often serves them)"
        )
        if unit == "CUs":
            result.assume(f"AMD: {sms} compute units from the catalog take the place of SMs")
    else:
        result.warn("SM count unknown for these ceilings: waves and Stream-K not computed (give --sms)")
    if measured_time is not None:
        check_measured(result, terms, measured_time, cache=cache_bytes(ceilings),
                       limits=(ceilings.limit_peak_flops, ceilings.limit_mem_bw))
    result.assume("minimum bytes: A and B read once, C written once (perfect on-chip reuse)")
    result.assume(f"time uses the dense {ceilings.dtype} peak; FLOPs count 2 per multiply-add")
    for line in ceilings.describe():
        result.assume(line)
    for w in ceilings.warnings:
        result.warn(w)
    return result


# ---- the calculator ------------------------------------------------------------------------

def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    dtype = p["dtype"]
    ceilings = ceilings_for(p, data_dir, ("peak_flops", "mem_bw"))
    return gemm(
        ceilings, p["m"], p["n"], p["k"], a_dtype=p["a_dtype"] or dtype, b_dtype=p["b_dtype"] or dtype,
        c_dtype=p["c_dtype"] or dtype, tile=parse_tile(p["tile"]), sm_count=p["sms"], measured_time=p["time"],
    )


SPEC = CalcSpec(
    "gemm", "GEMM",
    "C[M,N] = A[M,K] x B[K,N]: 2MNK FLOPs, minimum bytes, intensity, bound, time; output tiles, waves over "
    "the SMs, last-wave utilisation and what a Stream-K split recovers.",
    (
        FieldSpec("m", "M", "int", "4096", required=True, help="rows of A and C"),
        FieldSpec("n", "N", "int", "4096", required=True, help="columns of B and C"),
        FieldSpec("k", "K", "int", "4096", required=True, help="the reduction dimension"),
        *gpu_fields(dtype_help="math precision (its dense peak sets the compute time)"),
        FieldSpec("a_dtype", "A precision", "dtype", choices=STORAGE_DTYPES, help="default: --dtype", group="more"),
        FieldSpec("b_dtype", "B precision", "dtype", choices=STORAGE_DTYPES, help="default: --dtype", group="more"),
        FieldSpec("c_dtype", "C precision", "dtype", choices=STORAGE_DTYPES, help="default: --dtype", group="more"),
        FieldSpec("tile", "output tile", "choice", "128x128", choices=("64x64", "128x64", "128x128", "128x256", "256x128"),
                  help="MxN tile each SM computes, or MxNxK with the depth of one MAC-loop iteration (default K: 128 bytes of A, "
                  "64 for 16-bit types); any shape accepted", free=True),
        FieldSpec("sms", "SM count", "int", help="default: the GPU's", group="more"),
        MEASURED_TIME,
    ),
    _run,
    headline=(*TERMS_HEADLINE, *MEASURED_HEADLINE),
    short_labels=TERMS_SHORT_LABELS,
    plot="roofline",
)
