"""Run a measurement plan on a backend and turn the timings into results under the guide's rule.

Every result carries its precision, workload, baseline (the vendor peak it is compared with, and
the ratio) and correctness (method, tolerance, measured error). A result whose output fails its
reference check, or whose timings are not positive and finite, is recorded as rejected and never
used as a ceiling. A case that cannot run at all (out of memory, precision unsupported) is listed
under `skipped` with the reason.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any, Callable

from studytui.measure.backend import Backend, Case, Check, CollectiveMeasurement
from studytui.measure.catalog import VendorFigures
from studytui.measure.plan import GiB, MeasurePlan, MiB
from studytui.measure.stats import all_positive_finite, spread

Progress = Callable[[str], None]


def size_label(nbytes: int) -> str:
    if nbytes % GiB == 0:
        return f"{nbytes // GiB}GiB"
    if nbytes % MiB == 0:
        return f"{nbytes // MiB}MiB"
    return f"{nbytes}B"


# Bandwidth cases: a copy (read + write) and two read-only reductions (one sum over everything,
# one sum per 65536-element row), since how fast a reduction streams depends on its shape.
BANDWIDTH_CASES = ("copy", "reduce", "rowsum")
ROWSUM_WIDTH = 65536


def bandwidth_work(kind: str, nbytes: int) -> tuple[str, int, str]:
    """(operation, bytes moved, what was counted) for a bandwidth case on an nbytes fp32 buffer."""
    if kind == "copy":
        return "device-to-device copy", 2 * nbytes, "read + write"
    if kind == "rowsum":
        rows = nbytes // 4 // ROWSUM_WIDTH
        return (
            f"sum of each {ROWSUM_WIDTH}-element fp32 row (read, plus {rows} sums written)",
            nbytes + 4 * rows,
            "read + write of the sums",
        )
    return "sum of all fp32 elements (read only)", nbytes, "read"


def gemm_flops(m: int, n: int, k: int) -> int:
    return 2 * m * n * k


def _baseline(vendor_value: float | None, achieved: float, what: str, vendor: VendorFigures | None) -> dict[str, Any]:
    if vendor is None or vendor_value is None:
        return {
            "vendor_peak": None,
            "ratio": None,
            "what": what,
            "note": "no vendor figure in the catalog for this GPU and precision",
        }
    return {
        "vendor_peak": vendor_value,
        "ratio": round(achieved / vendor_value, 4),
        "what": what,
        "catalog_id": vendor.id,
    }


def _correctness(check: Check) -> dict[str, Any]:
    error = check.error
    return {
        "method": check.method,
        "tolerance": check.tolerance,
        "error": error if math.isfinite(error) else str(error),
        "passed": bool(math.isfinite(error) and check.passed),
    }


def judge(
    result_id: str,
    kind: str,
    precision: str,
    workload: dict[str, Any],
    times: list[float],
    check: Check,
    work: float,
    unit: str,
    vendor_value: float | None,
    baseline_what: str,
    vendor: VendorFigures | None,
    rate_factor: float = 1.0,
) -> dict[str, Any]:
    """One result: timings -> rates -> baseline ratio, gated by the correctness check.

    `work` is FLOP or bytes per repetition; `rate_factor` converts the algorithm rate to the
    reported one (bus bandwidth for collectives).
    """
    correctness = _correctness(check)
    timings_ok = all_positive_finite(times)
    accepted = correctness["passed"] and timings_ok
    result: dict[str, Any] = {
        "id": result_id,
        "kind": kind,
        "precision": precision,
        "workload": dict(workload, repetitions=len(times)),
        "status": "accepted" if accepted else "rejected",
    }
    if timings_ok:
        t = spread(times)
        result["time_s"] = t
        # The fastest repetition gives the highest rate: max rate from min time.
        result["achieved"] = {
            "median": work / t["median"] * rate_factor,
            "min": work / t["max"] * rate_factor,
            "max": work / t["min"] * rate_factor,
            "unit": unit,
        }
        result["baseline"] = _baseline(vendor_value, result["achieved"]["median"], baseline_what, vendor)
    else:
        result["time_s"] = {"median": None, "min": None, "max": None}
        result["achieved"] = {"median": None, "min": None, "max": None, "unit": unit}
        result["baseline"] = _baseline(None, 0.0, baseline_what, None)
    result["correctness"] = correctness
    if not accepted:
        reasons = []
        if not correctness["passed"]:
            reasons.append(f"output check failed (error {correctness['error']} > tolerance {check.tolerance})")
        if not timings_ok:
            reasons.append("timings not positive and finite")
        result["rejected_because"] = "; ".join(reasons)
    return result


def _measure_case(backend: Backend, make_case: Callable[[], Case], warmup: int, reps: int) -> tuple[list[float], Check]:
    case = make_case()
    try:
        times = backend.time_case(case, warmup, reps)
        check = case.check()
    finally:
        case.release()
    return times, check


def _skip(skipped: list[dict[str, str]], result_id: str, exc: BaseException, progress: Progress) -> None:
    reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
    skipped.append({"id": result_id, "reason": reason[:300]})
    progress(f"  {result_id}: skipped ({reason[:120]})")


def run_plan(
    backend: Backend,
    plan: MeasurePlan,
    vendor: VendorFigures | None,
    progress: Progress = lambda line: None,
    now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
) -> dict[str, Any]:
    """Measure everything in the plan; return one run (a dict ready for the profile file)."""
    started = now()
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    peaks = vendor.peak_flops if vendor else {}
    vendor_bw = vendor.mem_bw if vendor else None

    for nbytes in plan.bandwidth_bytes:
        for kind in BANDWIDTH_CASES:
            rid = f"hbm-{kind}-{size_label(nbytes)}"
            progress(f"  {rid}")

            def bandwidth_case(kind: str = kind, nbytes: int = nbytes) -> Case:  # bound to this case (B023)
                return backend.bandwidth_case(kind, nbytes)

            try:
                times, check = _measure_case(backend, bandwidth_case, plan.warmup, plan.repetitions)
            except Exception as exc:  # noqa: BLE001 - any failure of one case is recorded, not fatal
                _skip(skipped, rid, exc, progress)
                continue
            operation, moved, counted = bandwidth_work(kind, nbytes)
            workload = {
                "operation": operation,
                "buffer_bytes": nbytes,
                "bytes_moved": moved,
                "bytes_counted": counted,
                "warmup": plan.warmup,
            }
            result_kind = "copy" if kind == "copy" else "reduce"
            results.append(
                judge(rid, result_kind, "fp32", workload, times, check, moved, "B/s", vendor_bw, "memory bandwidth (vendor peak)", vendor)
            )

    supported = set(backend.supported_precisions())
    for precision in plan.precisions:
        for size in plan.gemm_sizes:
            rid = f"{precision}-gemm-{size}"
            if precision not in supported:
                skipped.append({"id": rid, "reason": f"{precision} matrix multiply not supported by this GPU or backend"})
                continue
            progress(f"  {rid}")

            def gemm_case(precision: str = precision, size: int = size) -> Case:  # bound to this case (B023)
                return backend.gemm_case(precision, size, size, size)

            try:
                times, check = _measure_case(backend, gemm_case, plan.warmup, plan.gemm_repetitions)
            except Exception as exc:  # noqa: BLE001
                _skip(skipped, rid, exc, progress)
                continue
            workload = {
                "operation": "dense matrix multiply C = A B",
                "m": size,
                "n": size,
                "k": size,
                "flops": gemm_flops(size, size, size),
                "flops_counted": "2 M N K",
                "warmup": plan.warmup,
            }
            results.append(
                judge(
                    rid, "gemm", precision, workload, times, check, gemm_flops(size, size, size), "FLOP/s",
                    peaks.get(precision), f"dense {precision} peak (vendor)", vendor,
                )
            )
    clocks_after = backend.clocks_now()

    collectives_note = None
    gpus = backend.gpu_count()
    worlds = [w for w in (plan.collective_gpus or (gpus,)) if 1 < w <= gpus]
    for w in plan.collective_gpus:
        if w > gpus:
            skipped.append({"id": f"collectives-{w}gpu", "reason": f"asked for {w} GPUs; this machine has {gpus}"})
    nccl: dict[str, Any] | None = None
    if gpus > 1 and plan.collective_bytes and worlds:
        link = vendor.link_bw_per_direction if vendor else None
        for world in worlds:
            progress(f"  collectives over {world} GPUs")
            try:
                measurements = backend.run_collectives(
                    plan.collective_ops, plan.collective_bytes, plan.warmup, plan.repetitions, world
                )
            except Exception as exc:  # noqa: BLE001
                _skip(skipped, f"collectives-{world}gpu", exc, progress)
                measurements = []
            for m in measurements:
                nccl = nccl or m.extra.get("nccl")
                results.append(_collective_result(m, plan, link, vendor))
    else:
        collectives_note = (
            "collectives not measured: single GPU" if gpus <= 1
            else f"collectives not measured: this machine has {gpus} GPUs, fewer than asked for" if plan.collective_gpus and not worlds
            else "collectives not in this plan"
        )

    run: dict[str, Any] = {
        "date": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hardware": backend.describe_hardware(),
        "software": backend.describe_software(),
        "workload": {
            "plan": ("collectives only, " if plan.collectives_only else "") + ("quick" if plan.quick else "full"),
            "bandwidth_buffer_bytes": list(plan.bandwidth_bytes),
            "gemm_sizes": [f"{n}x{n}x{n}" for n in plan.gemm_sizes],
            "collective_bytes": list(plan.collective_bytes) if gpus > 1 else [],
            "collective_ops": list(plan.collective_ops) if gpus > 1 else [],
            "collective_gpus": worlds if gpus > 1 else [],
            "warmup": plan.warmup,
            "repetitions": plan.repetitions,
            "gemm_repetitions": plan.gemm_repetitions,
            "timing": (
                "device events around each repetition; before the first case about 1 s of matrix products "
                "so the clocks leave idle, and before each case at least `warmup` untimed runs and 0.2 s; "
                "median, min and max of the repetitions"
            ),
            "inputs": "random (normal for matrices, uniform for bandwidth buffers), never zeros",
        },
        "precision": sorted({r["precision"] for r in results}, key=_precision_order),
        "baseline": {
            "catalog_id": vendor.id if vendor else None,
            "catalog_name": vendor.name if vendor else None,
            "what": "vendor peak figures from studytui's hardware catalog (dense, no sparsity)",
            "sources": vendor.sources if vendor else [],
        },
        "correctness": {
            "method": _correctness_method(results),
            "passed": sum(1 for r in results if r["correctness"]["passed"]),
            "failed": sum(1 for r in results if not r["correctness"]["passed"]),
        },
        "results": results,
    }
    if clocks_after and plan.gemm_sizes:
        run["hardware"] = dict(run["hardware"], clocks_after_gemm=clocks_after)
    if nccl:
        run["software"] = dict(run["software"], **{"nccl": nccl.get("nccl")})
        run["workload"]["collective_algorithm"] = {k: v for k, v in nccl.items() if k != "nccl"}
    if skipped:
        run["skipped"] = skipped
    if collectives_note:
        run["collectives"] = collectives_note
    if plan.notes:
        run["notes"] = list(plan.notes)
    return run


# nccl-tests' conventions: what `bytes` counts, and the factor from algorithm to bus bandwidth.
BUS_FACTORS: dict[str, tuple[str, str, Callable[[int], float]]] = {
    "all_reduce": ("input", "2(n-1)/n", lambda n: 2 * (n - 1) / n),
    "all_gather": ("gathered output", "(n-1)/n", lambda n: (n - 1) / n),
    "reduce_scatter": ("input (all chunks)", "(n-1)/n", lambda n: (n - 1) / n),
    "all_to_all": ("one rank's whole buffer", "(n-1)/n", lambda n: (n - 1) / n),
}


def _collective_result(m: CollectiveMeasurement, plan: MeasurePlan, link: float | None, vendor: VendorFigures | None) -> dict[str, Any]:
    n = m.world_size
    counted, factor_text, factor = BUS_FACTORS[m.op]
    workload = {
        "operation": f"NCCL {m.op} over {n} GPUs",
        "bytes": m.nbytes,
        "bytes_counted": counted,
        "gpus": n,
        "bus_bandwidth": f"algorithm bandwidth x {factor_text}",
        "warmup": plan.warmup,
    }
    rid = f"{m.op.replace('_', '-')}-{n}gpu-{size_label(m.nbytes)}"
    return judge(
        rid, m.op, m.dtype, workload, m.times_s, m.check, m.nbytes, "B/s (bus)", link,
        "link bandwidth per direction (vendor, half the bidirectional figure)", vendor, rate_factor=factor(n),
    )


def _correctness_method(results: list[dict[str, Any]]) -> str:
    """How this run's results were checked, naming only the kinds it measured."""
    kinds = {r["kind"] for r in results}
    checks = []
    if "copy" in kinds:
        checks.append("copies element for element")
    if "reduce" in kinds:
        checks.append("reductions with a float64 sum")
    if "gemm" in kinds:
        checks.append("matrix products on sampled rows with a float64 product of the same inputs")
    if kinds & set(BUS_FACTORS):
        checks.append("collectives exactly, on small-integer inputs whose sums fp32 holds exactly (each result names its check)")
    return (
        "each result re-runs on fresh inputs into an output poisoned with NaN and is compared with a reference: "
        + ("; ".join(checks) or "nothing was measured")
        + "; a result over its tolerance is rejected"
    )


def _precision_order(p: str) -> int:
    order = ["fp32", "tf32", "bf16", "fp16", "fp8"]
    return order.index(p) if p in order else len(order)
