"""Each kernel of a profile against the chosen GPU's roofline: intensity, achieved rates, the
fraction of the ceilings, the limiter (`bound`) with its reason, and the physics floor.

Ceilings come from the one place that picks them, `studytui.calc.ceilings.resolve_ceilings`
(vendor peaks, or `--profile measured`). The physics floor always uses the vendor peaks, as the
calculators do: a measured profile is a sustained rate, which short runs can beat.

The limiter, in order:

1. FLOPs and DRAM bytes known: the side of the ridge point the kernel's intensity falls on
   (compute at or above it, memory below), when the kernel reaches at least LIMITER_THRESHOLD of
   the roof at that intensity;
2. below that, Nsight Compute's speed-of-light percentages when the export has them (SM busy, or
   memory busy, at the clock the kernel ran at: caches and shared memory included), at the same
   threshold;
3. else latency: neither the pipes nor memory is busy (too few warps or waves, dependencies,
   launch overhead).

LIMITER_THRESHOLD is 60%, the figure Nsight Compute's own rule uses ("Achieved compute throughput
and/or memory bandwidth below 60.0% of peak typically indicate latency issues", ncu 2025.3.1).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from studytui.profile.model import CATALOG_KEY, Capture, Kernel

LIMITER_THRESHOLD = 0.6
IMPOSSIBLE_TOLERANCE = 1e-6  # counters printed to about 7 digits; anything more is not rounding
BOUNDS = ("compute", "memory", "latency", "unknown")
NO_RANGE = "(no range)"
RANGE_SEPARATOR = " > "


@dataclass(frozen=True)
class Peak:
    value: float  # FLOP/s in force (vendor or measured)
    label: str  # where it came from
    limit: float | None  # the vendor peak, for the physics floor
    key: str  # catalog precision key


class GpuCeilings:
    """The ceilings of one GPU, per precision class, resolved once each."""

    def __init__(self, gpu: str, profile: str = "vendor", data_dir: str | os.PathLike[str] | None = None):
        from studytui.calc.ceilings import resolve_ceilings

        self._resolve = resolve_ceilings
        self.gpu = gpu
        self.profile = profile or "vendor"
        self.data_dir = data_dir
        base = resolve_ceilings(gpu, "bf16", profile=self.profile, data_dir=data_dir, need=("mem_bw",))
        self.accelerator = base.accelerator
        self.mem_bw: float = float(base.mem_bw)  # type: ignore[arg-type]
        self.mem_label = base.provenance.get("mem_bw", "")
        self.limit_mem_bw = base.limit_mem_bw or self.mem_bw
        self.warnings: list[str] = []
        self._peaks: dict[str, Peak | None] = {}

    @property
    def label(self) -> str:
        acc = self.accelerator
        return f"{acc.name} ({acc.id})" if acc else self.gpu

    def peak(self, cls: str) -> Peak | None:
        if cls not in self._peaks:
            self._peaks[cls] = self._find(cls)
        return self._peaks[cls]

    def _find(self, cls: str) -> Peak | None:
        key = CATALOG_KEY.get(cls)
        acc = self.accelerator
        if key is None or acc is None:
            return None
        if key == "fp64_cuda_core":
            value = acc.peak_flops.get("fp64")
            if value is None:
                return None
            from studytui.calc.hardware import VENDOR_PEAK_LABEL

            return Peak(value, f"{VENDOR_PEAK_LABEL}: {acc.id}, fp64 (CUDA cores)", value, "fp64")
        c = self._resolve(self.gpu, key, profile=self.profile, data_dir=self.data_dir, need=())
        if c.peak_flops is None:
            return None
        for w in c.warnings:
            if "peak" in w and w not in self.warnings:
                self.warnings.append(f"{key}: {w}")
        return Peak(float(c.peak_flops), c.provenance.get("peak_flops", ""), c.limit_peak_flops, key)

    def sparse_limit(self, cls: str) -> float | None:
        key = CATALOG_KEY.get(cls)
        acc = self.accelerator
        return acc.peak_flops_sparse.get(key) if acc is not None and key else None


@dataclass(slots=True)
class KernelResult:
    kernel: Kernel
    short_name: str
    range_name: str
    flops: float | None
    dram_bytes: float | None
    intensity: float | None = None
    achieved_flops: float | None = None
    achieved_bw: float | None = None
    peak: Peak | None = None
    peak_class: str | None = None
    ridge: float | None = None
    fraction_of_peak: float | None = None
    fraction_of_bw: float | None = None
    roof_fraction: float | None = None  # achieved over attainable at this intensity
    side: str | None = None  # compute or memory side of the ridge
    bound: str = "unknown"
    bound_reason: str = ""
    floor_s: float | None = None  # vendor-peak physics floor
    floor_parts: list[str] = field(default_factory=list)
    physically_possible: bool | None = None
    impossible_reason: str = ""
    dram_bytes_estimate: float | None = None
    estimate_source: str = ""
    model_intensity: float | None = None


@dataclass
class RangeResult:
    name: str
    depth: int
    kernels: int = 0
    duration_s: float = 0.0
    gemm_flops: float = 0.0
    gemm_unknown: int = 0  # kernels whose matrix-multiply FLOPs are unknown
    flops: float = 0.0
    flops_unknown: int = 0
    dram_bytes: float = 0.0
    bytes_unknown: int = 0
    time_by_bound: dict[str, float] = field(default_factory=lambda: dict.fromkeys(BOUNDS, 0.0))


@dataclass
class Report:
    capture: Capture
    ceilings: GpuCeilings | None
    gpu_note: str
    kernels: list[KernelResult]
    ranges: list[RangeResult]
    total: RangeResult
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# -- choosing the GPU ---------------------------------------------------------------------------
def detect_gpu(capture: Capture, data_dir: str | os.PathLike[str] | None = None) -> tuple[str | None, str]:
    """The catalog id the file's device name names, and a sentence saying how it was found."""
    names = [d for d in capture.devices if d]
    if not names:
        return None, "the file does not name its GPU"
    if len(set(names)) > 1:
        return None, f"the file holds several GPUs ({', '.join(sorted(set(names)))})"
    device = names[0]
    from studytui.calc.hardware import load_catalog
    from studytui.measure.catalog import DEVICE_NAME_ALIASES

    catalog = load_catalog(data_dir)
    lowered = device.strip().lower()
    candidates = [DEVICE_NAME_ALIASES.get(lowered), lowered, lowered.removeprefix("nvidia ").strip()]
    for candidate in candidates:
        if not candidate:
            continue
        try:
            acc = catalog.get(candidate)
        except Exception:  # FieldError: not a catalog name
            continue
        return acc.id, f"matched from the file's device name {device!r}"
    return None, f"the file's device {device!r} matches no catalog entry"


def ceilings_for(capture: Capture, gpu: str | None, profile: str,
                 data_dir: str | os.PathLike[str] | None) -> tuple[GpuCeilings | None, str]:
    from studytui.core.errors import UsageError

    if gpu:
        ceilings = GpuCeilings(gpu, profile, data_dir)
        note = "chosen with --gpu"
        detected, _how = detect_gpu(capture, data_dir)
        if detected and ceilings.accelerator is not None and detected != ceilings.accelerator.id:
            note += f"; the file was recorded on {', '.join(capture.devices)} ({detected})"
        return ceilings, note
    detected, how = detect_gpu(capture, data_dir)
    if detected is None:
        if profile != "vendor":
            raise UsageError(f"--profile {profile} needs --gpu: {how} (see 'studytui gpus')")
        return None, f"no GPU chosen: {how}; give --gpu ID (see 'studytui gpus') to compare with a GPU's ceilings"
    return GpuCeilings(detected, profile, data_dir), how


# -- one kernel ---------------------------------------------------------------------------------
def _pct(x: float) -> str:
    return f"{x:.0%}" if x >= 0.1 else f"{x:.1%}" if x >= 0.001 else f"{x * 100:.2g}%"


def analyze_kernel(k: Kernel, ceilings: GpuCeilings | None, short: str) -> KernelResult:
    r = KernelResult(k, short, RANGE_SEPARATOR.join(k.range) if k.range else NO_RANGE, k.flops, k.dram_bytes)
    t = k.duration_s
    if k.flops is not None and k.dram_bytes is not None and k.dram_bytes > 0:
        r.intensity = k.flops / k.dram_bytes
    if k.flops is not None and k.model_bytes:
        r.model_intensity = k.flops / k.model_bytes
    if t is not None and t > 0:
        if k.flops is not None:
            r.achieved_flops = k.flops / t
        if k.dram_bytes is not None:
            r.achieved_bw = k.dram_bytes / t
    cls = k.main_class if (k.flops or 0) > 0 else None
    if ceilings is not None:
        if cls is not None:
            r.peak_class = cls
            r.peak = ceilings.peak(cls)
        if r.peak is not None:
            r.ridge = r.peak.value / ceilings.mem_bw
            if r.achieved_flops is not None:
                r.fraction_of_peak = r.achieved_flops / r.peak.value
        if r.achieved_bw is not None:
            r.fraction_of_bw = r.achieved_bw / ceilings.mem_bw
        if k.dram_bytes is None and "dram" in k.sol and t:
            r.dram_bytes_estimate = k.sol["dram"] / 100 * ceilings.mem_bw * t
            r.estimate_source = "estimate: DRAM throughput % x the GPU's bandwidth x duration (not a counter)"
        _floor(r, k, ceilings)
    _limiter(r, k)
    return r


def _floor(r: KernelResult, k: Kernel, ceilings: GpuCeilings) -> None:
    """The vendor-peak time floor: no pipe does more work per second than its vendor peak, and
    no kernel moves more DRAM bytes per second than the vendor bandwidth."""
    t = k.duration_s
    parts: list[tuple[float, str]] = []
    for cls, work in k.flops_by_class.items():
        if work <= 0:
            continue
        limit_cls = cls
        if not k.flops_counted and cls == "fp32":
            limit_cls = "tensor_tf32"  # an fp32 matmul may run as TF32 on the tensor cores: the faster limit
        peak = ceilings.peak(limit_cls) or (ceilings.peak(cls) if limit_cls != cls else None)
        limit = peak.limit if peak is not None else None
        if "sparse" in k.flops_source and cls.startswith("tensor_"):
            limit = ceilings.sparse_limit(cls)
        if limit:
            parts.append((work / limit, f"{cls} {work:.4g} / {limit:.4g} FLOP/s"))
    if k.dram_bytes is not None and ceilings.limit_mem_bw:
        parts.append((k.dram_bytes / ceilings.limit_mem_bw, f"DRAM {k.dram_bytes:.4g} B / {ceilings.limit_mem_bw:.4g} B/s"))
    if not parts or t is None:
        return
    r.floor_s = max(p[0] for p in parts)
    r.floor_parts = [p[1] for p in parts]
    r.physically_possible = t >= r.floor_s * (1 - IMPOSSIBLE_TOLERANCE)
    if not r.physically_possible:
        worst = max(parts)[1].split(" ", 1)[0]
        r.impossible_reason = (
            f"physically impossible: {t * 1e6:.4g} us is below the vendor-peak floor {r.floor_s * 1e6:.4g} us ({worst}); "
            "the counters or the timer are wrong, or the work was not done"
        )


def _peak_name(r: KernelResult) -> str:
    """'the bf16 peak', or 'the measured bf16 ceiling' (and, past it, why that is possible)."""
    assert r.peak is not None
    if not r.peak.label.startswith("measured"):
        return f"the {r.peak.key} peak"
    past = r.fraction_of_peak is not None and r.fraction_of_peak > 1 and r.physically_possible is not False
    return f"the measured {r.peak.key} ceiling" + (" (above a sustained measured rate, below the vendor peak: possible)" if past else "")


def _sol_bound(sol: dict[str, float]) -> tuple[str, str] | None:
    """(bound, what is busy) from ncu's speed-of-light percentages, or None below the threshold.

    DRAM busy first (memory); else the SM busy at least as much as memory less ten points
    (compute: a GEMM keeps shared memory and L1 as busy as its tensor pipe); else memory busy
    (memory, on chip: L1, L2 or shared memory); else the SM busy (compute)."""
    t = 100 * LIMITER_THRESHOLD
    sm, mem, dram = sol.get("sm", 0.0), sol.get("memory", 0.0), sol.get("dram", 0.0)
    if dram >= t and dram >= sm:
        return "memory", f"DRAM {dram:.0f}% busy"
    if sm >= t and sm >= mem - 10:
        return "compute", f"SM {sm:.0f}% busy"
    if mem >= t:
        return "memory", f"memory {mem:.0f}% busy" + (f", DRAM {dram:.0f}%: on chip (L1, L2 or shared memory)" if "dram" in sol else "")
    if sm >= t:
        return "compute", f"SM {sm:.0f}% busy"
    return None


def _limiter(r: KernelResult, k: Kernel) -> None:
    sol = k.sol
    sol_text = ""
    if "sm" in sol or "memory" in sol:
        sol_text = f"speed of light: SM {sol.get('sm', float('nan')):.0f}%, memory {sol.get('memory', float('nan')):.0f}%" + (
            f", DRAM {sol['dram']:.0f}%" if "dram" in sol else "")
    if k.duration_s is None:
        r.bound, r.bound_reason = "unknown", "no duration in the file"
        return
    if r.intensity is not None and r.ridge is not None and r.peak is not None and r.achieved_flops is not None:
        r.side = "compute" if r.intensity >= r.ridge else "memory"
        attainable = min(r.peak.value, r.intensity * (r.peak.value / r.ridge))
        r.roof_fraction = r.achieved_flops / attainable
        where = f"intensity {r.intensity:.3g} FLOP/B, ridge {r.ridge:.3g}"
        if r.roof_fraction >= LIMITER_THRESHOLD:
            roof = f"{_pct(r.fraction_of_peak or 0)} of {_peak_name(r)}" if r.side == "compute" else \
                f"{_pct(r.fraction_of_bw or 0)} of DRAM bandwidth"
            r.bound, r.bound_reason = r.side, f"{where}: {roof}"
            return
        by_sol = _sol_bound(sol) if sol_text else None
        if by_sol is not None:
            r.bound = by_sol[0]
            r.bound_reason = (
                f"{where}, {_pct(r.roof_fraction)} of the roof at the vendor peak; but ncu's {sol_text} (of the peak at the "
                "clock it ran at): " + by_sol[1]
                + (" (a pipe the FLOP counters do not see, or a lower clock)" if r.bound == "compute" else "")
            )
            return
        r.bound = "latency"
        r.bound_reason = (
            f"{where}: only {_pct(r.roof_fraction)} of the roof" + (f"; {sol_text}" if sol_text else "")
            + ": neither the pipes nor memory is busy (too few warps or waves, dependencies, launch overhead)"
        )
        return
    if sol_text:
        by_sol = _sol_bound(sol)
        if by_sol is not None:
            r.bound = by_sol[0]
            r.bound_reason = f"from ncu's {sol_text}: {by_sol[1]}; the export has no byte or FLOP counters for a roofline"
        else:
            r.bound = "latency"
            r.bound_reason = (f"from ncu's {sol_text}, all below {LIMITER_THRESHOLD:.0%}: latency or occupancy; "
                              "the export has no byte or FLOP counters for a roofline")
        return
    # A trace: FLOPs from shapes, no bytes.
    if r.fraction_of_peak is not None and r.peak is not None:
        if r.fraction_of_peak >= LIMITER_THRESHOLD:
            r.bound, r.bound_reason = "compute", f"{_pct(r.fraction_of_peak)} of {_peak_name(r)} (FLOPs from shapes)"
            return
        if r.model_intensity is not None and r.ridge is not None and k.model_bytes and k.duration_s:
            least_bw = k.model_bytes / k.duration_s
            share = least_bw / (r.peak.value / r.ridge)
            where = f"intensity of the shapes {r.model_intensity:.3g} FLOP/B (inputs and output read once), ridge {r.ridge:.3g}"
            if r.model_intensity < r.ridge and share >= LIMITER_THRESHOLD:
                r.bound, r.bound_reason = "memory", f"{where}: moves at least {_pct(share)} of DRAM bandwidth"
                return
            r.bound = "latency"
            r.bound_reason = (f"{where}: {_pct(r.fraction_of_peak)} of the peak and at least {_pct(share)} of bandwidth; "
                              "below both roofs: tiles, waves (wave quantization), tails or launch overhead")
            return
        r.bound, r.bound_reason = "unknown", f"{_pct(r.fraction_of_peak)} of {_peak_name(r)}; no bytes to place it on the roofline"
        return
    if k.flops is not None and r.peak is None and r.peak_class:
        r.bound, r.bound_reason = "unknown", f"no vendor peak for {r.peak_class} in the catalog; {k.bytes_source}"
        return
    r.bound = "unknown"
    reasons = [s for s in (k.flops_source if k.flops is None else "", k.bytes_source if k.dram_bytes is None else "") if s]
    if r.ridge is None and k.flops and k.dram_bytes is not None:
        reasons.append("no GPU chosen (--gpu)")
    r.bound_reason = "; ".join(dict.fromkeys(reasons)) or "no GPU chosen (--gpu)"


# -- ranges and the whole profile ---------------------------------------------------------------
def _add(rng: RangeResult, r: KernelResult) -> None:
    k = r.kernel
    rng.kernels += 1
    t = k.duration_s or 0.0
    rng.duration_s += t
    rng.time_by_bound[r.bound] += t
    if k.flops is None and k.flops_owner is None:
        rng.flops_unknown += 1
    elif k.flops is not None:
        rng.flops += k.flops
    if k.gemm_flops is None:
        rng.gemm_unknown += 1
    else:
        rng.gemm_flops += k.gemm_flops
    if k.dram_bytes is None:
        rng.bytes_unknown += 1
    else:
        rng.dram_bytes += k.dram_bytes


def analyze(capture: Capture, gpu: str | None = None, profile: str = "vendor",
            data_dir: str | os.PathLike[str] | None = None) -> Report:
    from studytui.profile.names import short_name

    ceilings, gpu_note = ceilings_for(capture, gpu, profile, data_dir)
    results = [analyze_kernel(k, ceilings, short_name(k.name)) for k in capture.kernels]
    ranges: dict[tuple[str, ...], RangeResult] = {}
    total = RangeResult("total", 0)
    for r in results:
        _add(total, r)
        path = r.kernel.range or (NO_RANGE,)
        for depth in range(1, len(path) + 1):
            key = tuple(path[:depth])
            rng = ranges.get(key)
            if rng is None:
                rng = ranges[key] = RangeResult(RANGE_SEPARATOR.join(key), depth)
            _add(rng, r)
    report = Report(capture, ceilings, gpu_note, results, list(ranges.values()), total)
    report.notes.extend(capture.notes)
    report.warnings.extend(capture.warnings)
    if ceilings is not None:
        report.warnings.extend(ceilings.warnings)
    _clock_note(report)
    if any(k.flops_counted and k.tensor_flops for k in capture.kernels):
        report.notes.append(
            "tensor-pipe counters count the work the tensor cores did, not the model's 2*M*N*K: padding to the MMA tile "
            "(an 8192-wide GEMM on 320-wide tiles computes 26 x 320 = 8,320 columns, +1.6%; a GQA decode attention's "
            "4 query rows per KV head fill a 16-row tile, 4x) and the masked part of causal attention's diagonal tiles"
        )
    if capture.format == "torch-trace" and any(k.flops_by_class for k in capture.kernels):
        report.notes.append(
            "trace FLOPs are the model's, from the recorded shapes (2 per multiply-add; no padding): a lower bound on "
            "what the hardware did; DRAM bytes are unknown in a trace"
        )
    if capture.format == "torch-trace":
        report.notes.append("a kernel's time is its GPU time; kernels on several streams can overlap, so the sum can exceed the wall time")
    if capture.other_gpu_events:
        report.notes.append(f"{capture.other_gpu_events:,} memcpy/memset events ({capture.other_gpu_time_s * 1e6:,.1f} us of GPU time) "
                            "are not kernels and are not in the table")
    impossible = [r for r in results if r.physically_possible is False]
    for r in impossible[:20]:
        report.warnings.append(f"kernel #{r.kernel.index} {r.short_name}: {r.impossible_reason}")
    if len(impossible) > 20:
        report.warnings.append(f"... and {len(impossible) - 20} more physically impossible kernels")
    return report


def _clock_note(report: Report) -> None:
    clocks = sorted(k.sm_clock_hz for k in report.capture.kernels if k.sm_clock_hz)
    boost = report.capture.device_clock_hz
    if not clocks or not boost:
        return
    median = clocks[len(clocks) // 2]
    if median < 0.9 * boost:
        report.notes.append(
            f"the kernels ran at an SM clock of {median / 1e9:.3g} GHz (median), {median / boost:.0%} of the device's "
            f"{boost / 1e9:.3g} GHz (Nsight Compute locks clocks to base unless run with --clock-control none; a GPU also "
            "clocks down for power or heat); vendor peaks assume the top clock, so fractions of the vendor peak read lower "
            "than the same kernel at full clock"
        )


def is_finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)
