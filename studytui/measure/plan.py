"""What a measurement run measures: buffer sizes, matrix shapes, repetitions.

Bandwidth buffers are far larger than any current GPU's L2 (50-60 MB on Hopper, 126 MB on
Blackwell), so the copy and the reduction stream from device memory rather than from cache.
Matrix sizes are large enough to fill the chip; the largest gives the achievable peak.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MiB = 1 << 20
GiB = 1 << 30

PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")
COLLECTIVE_OPS = ("all_reduce", "all_gather")
SWEEP_OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
# 1 MiB (latency-bound) to 8 GiB (bandwidth-bound), a factor of 4 apart, then 8 GiB.
SWEEP_BYTES = (1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1 * GiB, 4 * GiB, 8 * GiB)


@dataclass(frozen=True)
class MeasurePlan:
    bandwidth_bytes: tuple[int, ...]
    gemm_sizes: tuple[int, ...]
    precisions: tuple[str, ...] = PRECISIONS
    collective_bytes: tuple[int, ...] = ()
    collective_ops: tuple[str, ...] = COLLECTIVE_OPS
    collective_gpus: tuple[int, ...] = ()  # world sizes to measure; empty: every local GPU
    collectives_only: bool = False
    warmup: int = 5
    repetitions: int = 30
    gemm_repetitions: int = 20
    quick: bool = False
    notes: list[str] = field(default_factory=list)


def make_plan(
    quick: bool = False,
    device_memory_bytes: int | None = None,
    collectives_sweep: bool = False,
    collective_gpus: tuple[int, ...] = (),
    collectives_only: bool = False,
) -> MeasurePlan:
    """The plan for a run; sizes that would not fit the device's memory are dropped (and noted).

    `collectives_sweep` measures all four collectives from 1 MiB to 8 GiB, so both the
    latency-bound and the bandwidth-bound regimes show.
    """
    bandwidth: tuple[int, ...]
    gemm: tuple[int, ...]
    collectives: tuple[int, ...]
    if quick:
        bandwidth = (256 * MiB, 1 * GiB)
        gemm = (4096, 8192)
        collectives = (64 * MiB, 256 * MiB)
        reps, gemm_reps, warmup = 10, 10, 3
    else:
        bandwidth = (256 * MiB, 1 * GiB, 4 * GiB)
        gemm = (4096, 8192, 16384)
        collectives = (64 * MiB, 256 * MiB, 1 * GiB)
        reps, gemm_reps, warmup = 30, 20, 5
    notes: list[str] = []
    if device_memory_bytes:
        # A copy holds source and destination plus a check's temporaries: keep 3x the buffer.
        fitting = tuple(b for b in bandwidth if 3 * b <= device_memory_bytes)
        if fitting != bandwidth:
            notes.append("bandwidth sizes limited by device memory")
        bandwidth = fitting or (min(bandwidth),)
        # fp32 GEMM: A, B, C in fp32 plus float64 copies of B for the reference: about 28 n^2 bytes.
        fitting_gemm = tuple(n for n in gemm if 28 * n * n <= device_memory_bytes)
        if fitting_gemm != gemm:
            notes.append("matrix sizes limited by device memory")
        gemm = fitting_gemm or (min(gemm),)
    ops: tuple[str, ...] = COLLECTIVE_OPS
    if collectives_sweep:
        ops, collectives = SWEEP_OPS, SWEEP_BYTES
        if device_memory_bytes:
            # all_to_all holds an input and an output buffer of the full size, plus the check's.
            fitting_coll = tuple(b for b in collectives if 4 * b <= device_memory_bytes)
            if fitting_coll != collectives:
                notes.append("collective sizes limited by device memory")
            collectives = fitting_coll or (min(collectives),)
    return MeasurePlan(
        bandwidth_bytes=() if collectives_only else bandwidth,
        gemm_sizes=() if collectives_only else gemm,
        collective_bytes=collectives,
        collective_ops=ops,
        collective_gpus=tuple(collective_gpus),
        collectives_only=collectives_only,
        warmup=warmup,
        repetitions=reps,
        gemm_repetitions=gemm_reps,
        quick=quick,
        notes=notes,
    )
