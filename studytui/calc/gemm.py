"""A GEMM C[M,N] = A[M,K] x B[K,N]: roofline plus tile waves and what Stream-K recovers."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from studytui.calc.dtypes import DTYPES, dtype_bytes
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
from studytui.calc.units import FieldError, format_percent, format_time

if TYPE_CHECKING:
    from studytui.calc.ceilings import Ceilings


def parse_tile(text: str, field: str = "tile") -> tuple[int, int]:
    parts = str(text).lower().replace(" ", "").split("x")
    try:
        tm, tn = (int(p) for p in parts)
    except ValueError:
        raise FieldError(field, f"{text!r} is not a tile shape; expected MxN such as 128x128 or 128x256") from None
    if tm <= 0 or tn <= 0:
        raise FieldError(field, f"{text!r}: tile sides must be greater than zero")
    return tm, tn


def gemm(
    ceilings: Ceilings,
    m: int,
    n: int,
    k: int,
    *,
    a_dtype: str = "bf16",
    b_dtype: str = "bf16",
    c_dtype: str = "bf16",
    tile: tuple[int, int] = (128, 128),
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

    # Tile quantisation: a kernel computes whole output tiles, one per SM at a time.
    tm, tn = tile
    tiles_m, tiles_n = math.ceil(m / tm), math.ceil(n / tn)
    tiles = tiles_m * tiles_n
    padding_efficiency = (m * n) / (tiles * tm * tn)
    result.values.update(tile=f"{tm}x{tn}", tiles=tiles, tile_padding_efficiency=padding_efficiency)
    result.step(f"output tiles = ceil(M/{tm}) x ceil(N/{tn}) = {tiles_m} x {tiles_n} = {tiles}")
    result.step(f"tile padding efficiency = M*N / (tiles x {tm}x{tn}) = {format_percent(padding_efficiency)}")
    result.row("output tiles", f"{tiles} of {tm}x{tn} ({format_percent(padding_efficiency)} useful after padding)")
    sms = sm_count or ceilings.sm_count
    unit = "SMs" if sm_count or ceilings.compute_unit_kind == "SM" else "CUs"
    if sms:
        waves = math.ceil(tiles / sms)
        last = tiles - (waves - 1) * sms
        last_util = last / sms
        wave_eff = tiles / (waves * sms)
        # Compute time if each SM computes whole tiles at peak/SMs: waves x (time of one tile).
        tile_time = 2.0 * tm * tn * k / (peak / sms)
        quantised = waves * tile_time
        stream_k = tiles * tile_time / sms  # K-loop split evenly over SMs: no idle tail
        result.values.update(
            sm_count=sms, waves=waves, last_wave_tiles=last, last_wave_utilization=last_util,
            wave_efficiency=wave_eff, wave_quantized_compute_time_s=quantised,
            wave_quantized_time_s=max(quantised, terms.memory_time_s),
            stream_k_compute_time_s=stream_k, stream_k_recovery_s=quantised - stream_k,
            stream_k_speedup=quantised / stream_k,
        )
        result.step(f"waves = ceil(tiles / SMs) = ceil({tiles} / {sms}) = {waves}")
        result.step(f"last wave utilisation = (tiles - (waves-1) x SMs) / SMs = {last} / {sms} = {format_percent(last_util)}")
        result.step(
            f"tile-quantised compute = waves x 2*{tm}*{tn}*K / (peak/SMs) = {waves} x {format_time(tile_time)} = {format_time(quantised)}"
        )
        result.step(
            f"Stream-K compute = tiles x tile time / SMs = {tiles} x {format_time(tile_time)} / {sms} = {format_time(stream_k)} "
            f"(recovers {format_time(quantised - stream_k)})"
        )
        result.row(
            f"waves over {unit}",
            f"{waves} over {sms} {unit}; last wave {last} tile{'' if last == 1 else 's'} ({format_percent(last_util)} busy)",
        )
        result.row("tile-quantised compute", format_time(quantised))
        result.row(
            "Stream-K compute", f"{format_time(stream_k)} (recovers {format_time(quantised - stream_k)}, x{g(quantised / stream_k)})"
        )
        result.assume(
            f"waves: one output tile per {unit[:-1]} at a time (a persistent kernel with this tile); Stream-K splits the K loop so every "
            f"{unit[:-1]} does equal work"
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
        FieldSpec("a_dtype", "A precision", "dtype", choices=DTYPES, help="default: --dtype", group="more"),
        FieldSpec("b_dtype", "B precision", "dtype", choices=DTYPES, help="default: --dtype", group="more"),
        FieldSpec("c_dtype", "C precision", "dtype", choices=DTYPES, help="default: --dtype", group="more"),
        FieldSpec("tile", "output tile", "choice", "128x128", choices=("64x64", "128x64", "128x128", "128x256", "256x128"),
                  help="MxN tile each SM computes (any MxN accepted)", free=True),
        FieldSpec("sms", "SM count", "int", help="default: the GPU's", group="more"),
        MEASURED_TIME,
    ),
    _run,
    headline=(*TERMS_HEADLINE, *MEASURED_HEADLINE),
    short_labels=TERMS_SHORT_LABELS,
    plot="roofline",
)
