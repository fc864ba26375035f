"""Each kernel of a profile against the chosen GPU's roofline: intensity, achieved rates, the
fraction of the ceilings, the limiter (`bound`) with its reason, and the physics floor.

Ceilings come from the one place that picks them, `studytui.calc.ceilings.resolve_ceilings`
(vendor peaks, or `--profile measured`).

The limiter is decided against the vendor roofs and Nsight Compute's speed of light, in order:

1. FLOPs and DRAM bytes known: the side of the vendor ridge point the kernel's intensity falls on
   (compute at or above it, memory below), when the kernel reaches at least LIMITER_THRESHOLD of
   the vendor roof at that intensity;
2. below that, Nsight Compute's speed-of-light percentages when the export has them (SM busy, or
   memory busy, at the clock the kernel ran at: caches and shared memory included), at the same
   threshold;
3. else latency: neither the pipes nor memory is busy (too few warps or waves, dependencies,
   launch overhead).

A measured ceiling (`--profile measured`) is what a benchmark sustained, not a bound: a kernel can
pass it. Its fractions are shown beside the vendor ones, and it never decides the limiter.

LIMITER_THRESHOLD is 60%, the figure Nsight Compute's own rule uses ("Achieved compute throughput
and/or memory bandwidth below 60.0% of peak typically indicate latency issues", ncu 2025.3.1).

The physics floor is the least time the kernel's work can take on the hardware it ran on: its
FLOPs per precision and its DRAM bytes at the recording device's peak rates, whatever GPU --gpu
picks to compare with (--gpu changes the ceilings, never the floor). An Nsight Compute export
holds those rates per cycle (`*.sum.peak_sustained`): times the device's highest SM clock
(`device__attribute_clock_rate`; a measured clock above it is capped there, with a warning, and
without the attribute the kernel's own measured clock) they are the floor. Without them the
vendor peaks of the GPU the file names stand in, FLOP/s raised by VENDOR_CLOCK_MARGIN: a vendor
quotes its FLOP/s at one clock, and Hopper's tensor peaks are at 1.83 GHz while the SM boosts to
1.98 GHz (+8%). A file that names no GPU and lacks a per-cycle peak has no floor for that work
(said so, never judged against another GPU). Never a measured profile: short runs beat a
sustained rate.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

from studytui.core.records import FrozenRecord, Record
from studytui.profile.model import CATALOG_KEY, Capture, Kernel

if TYPE_CHECKING:
    from studytui.calc.hardware import Accelerator

LIMITER_THRESHOLD = 0.6
IMPOSSIBLE_TOLERANCE = 1e-6  # counters printed to about 7 digits; anything more is not rounding
VENDOR_CLOCK_MARGIN = 1.10  # vendor FLOP/s peaks, raised for clocks above the one they are quoted at
BOUNDS = ("compute", "memory", "latency", "unknown")
NO_RANGE = "(no range)"
RANGE_SEPARATOR = " > "


def _ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is unknown, b is not above zero, or the result is not finite."""
    if a is None or b is None or not b > 0:
        return None
    q = a / b
    return q if math.isfinite(q) else None


# The records here are plain classes, not dataclasses: on Python 3.11 a dataclass's generated
# methods cost about a millisecond each time this module is imported (issue 27).
class Peak(FrozenRecord):
    __slots__ = ("value", "label", "limit", "key")

    value: float  # FLOP/s in force (vendor or measured)
    label: str  # where it came from
    limit: float | None  # the vendor peak, for the physics floor
    key: str  # catalog precision key

    def __init__(
        self,
        value: float,
        label: str,
        limit: float | None,
        key: str,
    ) -> None:
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "label", label)
        object.__setattr__(self, "limit", limit)
        object.__setattr__(self, "key", key)

    @property
    def measured(self) -> bool:
        return self.label.startswith("measured")

    @property
    def vendor(self) -> float:
        """The vendor peak: the roof the limiter is decided against."""
        return self.limit or self.value


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
        self.recorded = False  # the GPU the file was recorded on (its own per-cycle peaks then apply)
        self.warnings: list[str] = []
        self._peaks: dict[str, Peak | None] = {}

    @property
    def label(self) -> str:
        acc = self.accelerator
        return f"{acc.name} ({acc.id})" if acc else self.gpu

    @property
    def measured(self) -> bool:
        return self.profile != "vendor"

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


class KernelResult(Record):
    __slots__ = ("kernel", "short_name", "range_name", "flops", "dram_bytes", "intensity", "achieved_flops", "achieved_bw",
                 "peak", "peak_class", "ridge", "fraction_of_peak", "fraction_of_bw", "vendor_ridge", "vendor_fraction_of_peak",
                 "vendor_fraction_of_bw", "peak_at_clock", "fraction_at_clock", "roof_fraction", "side", "bound", "bound_reason",
                 "floor_s", "floor_parts", "floor_basis", "floor_missing", "physically_possible", "impossible_reason",
                 "dram_bytes_estimate", "estimate_source", "model_intensity")

    kernel: Kernel
    short_name: str
    range_name: str
    flops: float | None
    dram_bytes: float | None
    intensity: float | None
    achieved_flops: float | None
    achieved_bw: float | None
    peak: Peak | None
    peak_class: str | None
    ridge: float | None  # at the ceilings in force (vendor or measured)
    fraction_of_peak: float | None  # of the peak in force
    fraction_of_bw: float | None  # of the bandwidth in force
    vendor_ridge: float | None  # the ridge point of the vendor roof, which the limiter is decided against
    vendor_fraction_of_peak: float | None
    vendor_fraction_of_bw: float | None
    peak_at_clock: float | None  # ncu's per-cycle peak x the SM clock the kernel ran at
    fraction_at_clock: float | None
    roof_fraction: float | None  # achieved over attainable at this intensity, on the vendor roof
    side: str | None  # compute or memory side of the vendor ridge
    bound: str
    bound_reason: str
    floor_s: float | None  # the physics floor
    floor_parts: list[str]
    floor_basis: str  # what the floor's rates are: ncu's per-cycle peaks, or vendor peaks
    floor_missing: str  # the work the floor could not count (no rate of the recording GPU), or why there is no floor
    physically_possible: bool | None
    impossible_reason: str
    dram_bytes_estimate: float | None
    estimate_source: str
    model_intensity: float | None

    def __init__(
        self,
        kernel: Kernel,
        short_name: str,
        range_name: str,
        flops: float | None,
        dram_bytes: float | None,
        intensity: float | None = None,
        achieved_flops: float | None = None,
        achieved_bw: float | None = None,
        peak: Peak | None = None,
        peak_class: str | None = None,
        ridge: float | None = None,
        fraction_of_peak: float | None = None,
        fraction_of_bw: float | None = None,
        vendor_ridge: float | None = None,
        vendor_fraction_of_peak: float | None = None,
        vendor_fraction_of_bw: float | None = None,
        peak_at_clock: float | None = None,
        fraction_at_clock: float | None = None,
        roof_fraction: float | None = None,
        side: str | None = None,
        bound: str = "unknown",
        bound_reason: str = "",
        floor_s: float | None = None,
        floor_parts: list[str] | None = None,
        floor_basis: str = "",
        floor_missing: str = "",
        physically_possible: bool | None = None,
        impossible_reason: str = "",
        dram_bytes_estimate: float | None = None,
        estimate_source: str = "",
        model_intensity: float | None = None,
    ) -> None:
        self.kernel = kernel
        self.short_name = short_name
        self.range_name = range_name
        self.flops = flops
        self.dram_bytes = dram_bytes
        self.intensity = intensity
        self.achieved_flops = achieved_flops
        self.achieved_bw = achieved_bw
        self.peak = peak
        self.peak_class = peak_class
        self.ridge = ridge
        self.fraction_of_peak = fraction_of_peak
        self.fraction_of_bw = fraction_of_bw
        self.vendor_ridge = vendor_ridge
        self.vendor_fraction_of_peak = vendor_fraction_of_peak
        self.vendor_fraction_of_bw = vendor_fraction_of_bw
        self.peak_at_clock = peak_at_clock
        self.fraction_at_clock = fraction_at_clock
        self.roof_fraction = roof_fraction
        self.side = side
        self.bound = bound
        self.bound_reason = bound_reason
        self.floor_s = floor_s
        self.floor_parts = [] if floor_parts is None else floor_parts
        self.floor_basis = floor_basis
        self.floor_missing = floor_missing
        self.physically_possible = physically_possible
        self.impossible_reason = impossible_reason
        self.dram_bytes_estimate = dram_bytes_estimate
        self.estimate_source = estimate_source
        self.model_intensity = model_intensity


class RangeResult(Record):
    __slots__ = ("name", "depth", "kernels", "duration_s", "gemm_flops", "gemm_unknown", "flops", "flops_unknown", "dram_bytes",
                 "bytes_unknown", "time_by_bound")

    name: str
    depth: int
    kernels: int
    duration_s: float
    gemm_flops: float
    gemm_unknown: int  # kernels whose matrix-multiply FLOPs are unknown
    flops: float
    flops_unknown: int
    dram_bytes: float
    bytes_unknown: int
    time_by_bound: dict[str, float]

    def __init__(
        self,
        name: str,
        depth: int,
        kernels: int = 0,
        duration_s: float = 0.0,
        gemm_flops: float = 0.0,
        gemm_unknown: int = 0,
        flops: float = 0.0,
        flops_unknown: int = 0,
        dram_bytes: float = 0.0,
        bytes_unknown: int = 0,
        time_by_bound: dict[str, float] | None = None,
    ) -> None:
        self.name = name
        self.depth = depth
        self.kernels = kernels
        self.duration_s = duration_s
        self.gemm_flops = gemm_flops
        self.gemm_unknown = gemm_unknown
        self.flops = flops
        self.flops_unknown = flops_unknown
        self.dram_bytes = dram_bytes
        self.bytes_unknown = bytes_unknown
        self.time_by_bound = dict.fromkeys(BOUNDS, 0.0) if time_by_bound is None else time_by_bound


class Report(Record):
    __slots__ = ("capture", "ceilings", "gpu_note", "kernels", "ranges", "total", "notes", "warnings", "recorded_on")

    capture: Capture
    ceilings: GpuCeilings | None
    gpu_note: str
    kernels: list[KernelResult]
    ranges: list[RangeResult]
    total: RangeResult
    notes: list[str]
    warnings: list[str]
    recorded_on: str | None  # the catalog id of the GPU the file names, when it names one

    def __init__(
        self,
        capture: Capture,
        ceilings: GpuCeilings | None,
        gpu_note: str,
        kernels: list[KernelResult],
        ranges: list[RangeResult],
        total: RangeResult,
        notes: list[str] | None = None,
        warnings: list[str] | None = None,
        recorded_on: str | None = None,
    ) -> None:
        self.capture = capture
        self.ceilings = ceilings
        self.gpu_note = gpu_note
        self.kernels = kernels
        self.ranges = ranges
        self.total = total
        self.notes = [] if notes is None else notes
        self.warnings = [] if warnings is None else warnings
        self.recorded_on = recorded_on


# -- choosing the GPU ---------------------------------------------------------------------------
def _detect(capture: Capture, data_dir: str | os.PathLike[str] | None = None) -> tuple[Accelerator | None, str]:
    """The catalog entry the file's device name names, and a sentence saying how it was found."""
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
        return acc, f"matched from the file's device name {device!r}"
    return None, f"the file's device {device!r} matches no catalog entry"


def detect_gpu(capture: Capture, data_dir: str | os.PathLike[str] | None = None) -> tuple[str | None, str]:
    """The catalog id the file's device name names, and a sentence saying how it was found."""
    acc, how = _detect(capture, data_dir)
    return (acc.id if acc is not None else None), how


NO_GPU = "no GPU chosen"


def ceilings_for(capture: Capture, gpu: str | None, profile: str,
                 data_dir: str | os.PathLike[str] | None) -> tuple[GpuCeilings | None, str]:
    """The ceilings to compare with, and how the GPU was chosen. Without one: None and
    "no GPU chosen: WHY" (the front ends say how to choose one)."""
    from studytui.core.errors import UsageError

    detected, how = detect_gpu(capture, data_dir)
    if gpu:
        ceilings = GpuCeilings(gpu, profile, data_dir)
        note = "chosen with --gpu"
        if detected and ceilings.accelerator is not None and detected != ceilings.accelerator.id:
            note += f"; the file was recorded on {', '.join(capture.devices)} ({detected})"
        ceilings.recorded = detected is not None and ceilings.accelerator is not None and detected == ceilings.accelerator.id
        return ceilings, note
    if detected is None:
        if profile != "vendor":
            raise UsageError(f"--profile {profile} needs --gpu: {how} (see 'studytui gpus')")
        return None, f"{NO_GPU}: {how}"
    ceilings = GpuCeilings(detected, profile, data_dir)
    ceilings.recorded = True
    return ceilings, how


# -- one kernel ---------------------------------------------------------------------------------
def _pct(x: float) -> str:
    return f"{x:.0%}" if x >= 0.1 else f"{x:.1%}" if x >= 0.001 else f"{x * 100:.2g}%"


def _rate(x: float, unit: str) -> str:
    from studytui.calc import units

    return (units.format_flops_rate if unit == "FLOP/s" else units.format_rate)(float(f"{x:.3g}"), 3)


def _why(text: str) -> str:
    """A source's reason without its leading "unknown: " (the limiter says unknown already)."""
    return text.removeprefix("unknown: ")


BROKEN_CLOCK_RATIO = 1.5  # a measured SM clock this far above the device's maximum is a broken counter, not boost


def floor_clock(k: Kernel) -> float | None:
    """The SM clock the floor's per-cycle peaks are multiplied by: the device's highest clock
    (`device__attribute_clock_rate`) where the export gives it, a measured clock above it capped
    there; else the kernel's measured clock."""
    return k.boost_clock_hz or k.sm_clock_hz or None


def clock_used(k: Kernel) -> float | None:
    """The measured SM clock, capped at the device's maximum where the export gives it."""
    if k.sm_clock_hz and k.boost_clock_hz:
        return min(k.sm_clock_hz, k.boost_clock_hz)
    return k.sm_clock_hz


def clock_warning(k: Kernel) -> str:
    """A warning when the kernel's measured SM clock passes the device's maximum, or ""."""
    if not (k.sm_clock_hz and k.boost_clock_hz and k.sm_clock_hz > k.boost_clock_hz * (1 + IMPOSSIBLE_TOLERANCE)):
        return ""
    measured, top = f"{k.sm_clock_hz / 1e9:.4g} GHz", f"{k.boost_clock_hz / 1e9:.4g} GHz"
    if k.sm_clock_hz > BROKEN_CLOCK_RATIO * k.boost_clock_hz:
        return (f"its measured SM clock {measured} is {k.sm_clock_hz / k.boost_clock_hz:.3g}x the device's maximum {top}: "
                f"a broken counter, not a clock; the floor uses {top}")
    return f"its measured SM clock {measured} is above the device's maximum {top} (a timing error): the floor uses {top}"


def recorded_bandwidth(k: Kernel, recorded: Accelerator | None) -> tuple[float, str] | None:
    """The DRAM bandwidth of the GPU the kernel ran on, and where it comes from: ncu's own
    per-cycle peak x the DRAM clock, else the vendor figure of the GPU the file names. Never the
    GPU chosen to compare with: what a kernel moved is a fact of the recorded run."""
    if k.dram_peak_per_cycle and k.dram_clock_hz:
        return (k.dram_peak_per_cycle * k.dram_clock_hz,
                f"ncu's dram__bytes.sum.peak_sustained {k.dram_peak_per_cycle:,.0f} B/cycle x the "
                f"{k.dram_clock_hz / 1e9:.4g} GHz DRAM clock")
    if recorded is not None:
        return recorded.mem_bw, f"the vendor bandwidth of {recorded.id}, the GPU the file names"
    return None


def analyze_kernel(k: Kernel, ceilings: GpuCeilings | None, short: str, recorded: Accelerator | None = None,
                   floor_gpu: GpuCeilings | None = None) -> KernelResult:
    """One kernel against `ceilings` (the GPU chosen to compare with); its physics floor at the
    rates of the GPU it was recorded on (`floor_gpu`: that GPU's vendor ceilings, None when the
    file does not name it), never those of `ceilings`."""
    r = KernelResult(k, short, RANGE_SEPARATOR.join(k.range) if k.range else NO_RANGE, k.flops, k.dram_bytes)
    t = k.duration_s
    if k.flops is not None and k.dram_bytes is not None:
        r.intensity = _ratio(k.flops, k.dram_bytes)
    if k.flops is not None and k.model_bytes:
        r.model_intensity = _ratio(k.flops, k.model_bytes)
    if t is not None and t > 0:
        r.achieved_flops = _ratio(k.flops, t)
        r.achieved_bw = _ratio(k.dram_bytes, t)
    if k.dram_bytes is None and "dram" in k.sol and t:
        bw = recorded_bandwidth(k, recorded)
        if bw is None:
            r.estimate_source = ("no estimate: the file names no GPU and holds no DRAM peak, and the bytes a kernel moved "
                                 "do not depend on the GPU chosen to compare with")
        else:
            r.dram_bytes_estimate = k.sol["dram"] / 100 * bw[0] * t
            r.estimate_source = (f"estimate: DRAM throughput {k.sol['dram']:.1f}% x {_rate(bw[0], 'B/s')} ({bw[1]}) x duration "
                                 "(not a counter)")
    cls = k.main_class if (k.flops or 0) > 0 else None
    if ceilings is not None:
        if cls is not None:
            r.peak_class = cls
            r.peak = ceilings.peak(cls)
        if r.peak is not None:
            r.ridge = _ratio(r.peak.value, ceilings.mem_bw)
            r.vendor_ridge = _ratio(r.peak.vendor, ceilings.limit_mem_bw)
            r.fraction_of_peak = _ratio(r.achieved_flops, r.peak.value)
            r.vendor_fraction_of_peak = _ratio(r.achieved_flops, r.peak.vendor)
            per_cycle = k.peak_per_cycle.get(cls) if cls is not None and ceilings.recorded else None
            clock = clock_used(k)
            if per_cycle and clock:
                r.peak_at_clock = per_cycle * clock
                r.fraction_at_clock = _ratio(r.achieved_flops, r.peak_at_clock)
        r.fraction_of_bw = _ratio(r.achieved_bw, ceilings.mem_bw)
        r.vendor_fraction_of_bw = _ratio(r.achieved_bw, ceilings.limit_mem_bw)
    _floor(r, k, floor_gpu)
    _limiter(r, k, ceilings)
    return r


def _floor(r: KernelResult, k: Kernel, recorded: GpuCeilings | None) -> None:
    """The physics floor: no pipe does more work per second than its peak at the highest clock,
    and no kernel moves more DRAM bytes per second than the DRAM's peak. The file's own per-cycle
    peaks where it has them, else the vendor peaks of the GPU it was recorded on (`recorded`),
    FLOP/s raised by VENDOR_CLOCK_MARGIN. Work with neither has no part in the floor, and
    `floor_missing` says so."""
    t = k.duration_s
    clock = floor_clock(k)
    parts: list[tuple[float, str]] = []
    missing: list[str] = []
    bases: set[str] = set()
    for cls, work in k.flops_by_class.items():
        if work <= 0:
            continue
        sparse = cls in k.sparse_classes
        per_cycle = (k.peak_per_cycle_sparse if sparse else k.peak_per_cycle).get(cls)
        if per_cycle and clock:
            limit = per_cycle * clock
            parts.append((work / limit, f"{cls} {work:.4g} / ({per_cycle:,.0f} per cycle x {clock / 1e9:.4g} GHz)"))
            bases.add("cycle")
            continue
        if recorded is None:
            missing.append(cls)
            continue
        limit_cls = cls
        if not k.flops_counted and cls == "fp32":
            limit_cls = "tensor_tf32"  # an fp32 matmul may run as TF32 on the tensor cores: the faster limit
        peak = recorded.peak(limit_cls) or (recorded.peak(cls) if limit_cls != cls else None)
        vendor = peak.limit if peak is not None else None
        if sparse and cls.startswith("tensor_"):
            vendor = recorded.sparse_limit(cls)
        if vendor:
            limit = vendor * VENDOR_CLOCK_MARGIN
            parts.append((work / limit, f"{cls} {work:.4g} / {limit:.4g} FLOP/s"))
            bases.add("vendor FLOP/s")
        else:
            missing.append(cls)
    bw = k.dram_peak_per_cycle * k.dram_clock_hz if k.dram_peak_per_cycle and k.dram_clock_hz else None
    if k.dram_bytes is not None and bw:
        parts.append((k.dram_bytes / bw, f"DRAM {k.dram_bytes:.4g} B / ({k.dram_peak_per_cycle:,.0f} B per cycle x "
                                         f"{(k.dram_clock_hz or 0) / 1e9:.4g} GHz)"))
        bases.add("cycle")
    elif k.dram_bytes is not None and recorded is not None and recorded.limit_mem_bw:
        parts.append((k.dram_bytes / recorded.limit_mem_bw, f"DRAM {k.dram_bytes:.4g} B / {recorded.limit_mem_bw:.4g} B/s"))
        bases.add("vendor bandwidth")
    elif k.dram_bytes is not None:
        missing.append("DRAM")
    if missing:
        why = ("the file does not name the GPU it was recorded on and has no per-cycle peak for it" if recorded is None
               else f"no peak of {recorded.label}, the GPU it was recorded on")
        r.floor_missing = f"{', '.join(missing)} not counted ({why}; the floor never uses the GPU chosen to compare with)"
    if not parts or t is None:
        if missing:
            r.floor_missing = "unavailable: " + r.floor_missing
        return
    r.floor_s = max(p[0] for p in parts)
    r.floor_parts = [p[1] for p in parts]
    r.floor_basis = _basis(bases, recorded)
    r.physically_possible = t >= r.floor_s * (1 - IMPOSSIBLE_TOLERANCE)
    if not r.physically_possible:
        worst = max(parts)[1].split(" ", 1)[0]
        r.impossible_reason = (
            f"physically impossible: {t * 1e6:.4g} us is below the physics floor {r.floor_s * 1e6:.4g} us ({worst}; "
            f"{r.floor_basis}); the counters or the timer are wrong, or the work was not done"
        )


def _basis(bases: set[str], recorded: GpuCeilings | None = None) -> str:
    """What the floor's rates are, in words."""
    words = []
    if "cycle" in bases:
        words.append("ncu's per-cycle peaks at the highest clocks")
    vendor = [b for b in ("vendor FLOP/s", "vendor bandwidth") if b in bases]
    if vendor:
        flops = (f"FLOP/s +{VENDOR_CLOCK_MARGIN - 1:.0%}: a vendor quotes FLOP/s at one clock, which can be below the "
                 "highest boost clock") if "vendor FLOP/s" in vendor else ""
        of = f" of {recorded.accelerator.id}, the GPU it was recorded on" if recorded is not None and recorded.accelerator else ""
        words.append("vendor peaks" + (f" ({flops})" if flops else "") + of)
    return " and ".join(words)


def _measured_compute(r: KernelResult) -> str:
    """With --profile measured: the fraction of the measured ceiling, and what passing it means."""
    if r.peak is None or not r.peak.measured or r.fraction_of_peak is None:
        return ""
    text = f"; {_pct(r.fraction_of_peak)} of the measured {r.peak.key} ceiling ({_rate(r.peak.value, 'FLOP/s')}"
    if r.fraction_of_peak > 1:
        return text + "; passing it is possible: a measured ceiling is what a benchmark sustained, not a bound)"
    return text + ")"


def _measured_memory(r: KernelResult, ceilings: GpuCeilings | None) -> str:
    if ceilings is None or not ceilings.measured or r.fraction_of_bw is None or ceilings.mem_bw == ceilings.limit_mem_bw:
        return ""
    text = f"; {_pct(r.fraction_of_bw)} of the measured bandwidth ({_rate(ceilings.mem_bw, 'B/s')}"
    if r.fraction_of_bw > 1:
        return text + "; passing it is possible: a measured ceiling is what a benchmark sustained, not a bound)"
    return text + ")"


def _at_clock(r: KernelResult) -> str:
    if r.fraction_at_clock is None or r.kernel.sm_clock_hz is None:
        return ""
    return f" ({_pct(r.fraction_at_clock)} of the peak at the {r.kernel.sm_clock_hz / 1e9:.3g} GHz it ran at)"


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


def _missing_counters(k: Kernel, r: KernelResult | None = None, ceilings: GpuCeilings | None = None) -> str:
    """What the export lacks for a roofline, and how its bytes were had when it has them."""
    if k.dram_bytes is not None and k.flops is not None:  # the counters are there: something else is missing
        if not k.duration_s:
            return (f"the duration is zero ({k.duration_source} = 0), so the kernel has no rate to place on the roofline; "
                    "its byte and FLOP counters are there")
        if ceilings is None:
            return "no GPU chosen (--gpu) to place it on the roofline"
        if r is not None and r.peak is None and r.peak_class:
            return f"no vendor peak for {r.peak_class} of {ceilings.label} in the catalog"
        if not k.flops:
            return "it did no floating-point work the counters see (zero FLOPs), so it has no place on the roofline"
        return "its figures place it nowhere on the roofline"
    if k.dram_bytes is not None and k.flops is None:
        derived = " (its DRAM bytes are derived: Memory Throughput x Duration)" if "Memory Throughput" in k.bytes_source else ""
        return f"the export has no FLOP counters for a roofline{derived}"
    if k.flops is not None and k.dram_bytes is None:
        return "the export has no DRAM byte counters for a roofline"
    return "the export has no byte or FLOP counters for a roofline"


def _limiter(r: KernelResult, k: Kernel, ceilings: GpuCeilings | None = None) -> None:
    sol = k.sol
    sol_text = ""
    if "sm" in sol or "memory" in sol:
        sol_text = f"speed of light: SM {sol.get('sm', float('nan')):.0f}%, memory {sol.get('memory', float('nan')):.0f}%" + (
            f", DRAM {sol['dram']:.0f}%" if "dram" in sol else "")
    if k.duration_s is None:
        r.bound, r.bound_reason = "unknown", "no duration in the file"
        return
    measured = ceilings is not None and ceilings.measured
    vendor_bw = ceilings.limit_mem_bw if ceilings is not None else None
    at = " (vendor peaks)" if measured else ""
    if (r.intensity is not None and r.vendor_ridge is not None and r.peak is not None and r.achieved_flops is not None
            and vendor_bw and min(r.peak.vendor, r.intensity * vendor_bw) > 0):
        r.side = "compute" if r.intensity >= r.vendor_ridge else "memory"
        attainable = min(r.peak.vendor, r.intensity * vendor_bw)
        r.roof_fraction = r.achieved_flops / attainable
        where = f"intensity {r.intensity:.3g} FLOP/B, ridge {r.vendor_ridge:.3g}{at}"
        if r.roof_fraction >= LIMITER_THRESHOLD:
            if r.side == "compute":
                roof = f"{_pct(r.vendor_fraction_of_peak or 0)} of the {r.peak.key} peak{_at_clock(r)}{_measured_compute(r)}"
            else:
                roof = f"{_pct(r.vendor_fraction_of_bw or 0)} of DRAM bandwidth{_measured_memory(r, ceilings)}"
            r.bound, r.bound_reason = r.side, f"{where}: {roof}"
            return
        by_sol = _sol_bound(sol) if sol_text else None
        if by_sol is not None:
            r.bound = by_sol[0]
            r.bound_reason = (
                f"{where}, {_pct(r.roof_fraction)} of the roof at vendor peaks; but ncu's {sol_text} (of the peak at the "
                "clock it ran at): " + by_sol[1]
                + (" (a pipe the FLOP counters do not see, or a lower clock)" if r.bound == "compute" else "")
            )
            return
        r.bound = "latency"
        r.bound_reason = (
            f"{where}: only {_pct(r.roof_fraction)} of the roof at vendor peaks" + (f"; {sol_text}" if sol_text else "")
            + ": neither the pipes nor memory is busy (too few warps or waves, dependencies, launch overhead)"
            + _measured_compute(r)
        )
        return
    if sol_text:
        by_sol = _sol_bound(sol)
        if by_sol is not None:
            r.bound = by_sol[0]
            r.bound_reason = f"from ncu's {sol_text}: {by_sol[1]}; {_missing_counters(k, r, ceilings)}"
        else:
            r.bound = "latency"
            r.bound_reason = (f"from ncu's {sol_text}, all below {LIMITER_THRESHOLD:.0%}: latency or occupancy; "
                              f"{_missing_counters(k, r, ceilings)}")
        return
    # A trace: FLOPs from shapes, no bytes.
    if r.vendor_fraction_of_peak is not None and r.peak is not None:
        fraction = r.vendor_fraction_of_peak
        if fraction >= LIMITER_THRESHOLD:
            r.bound, r.bound_reason = "compute", f"{_pct(fraction)} of the {r.peak.key} peak (FLOPs from shapes){_measured_compute(r)}"
            return
        if r.model_intensity is not None and r.vendor_ridge is not None and k.model_bytes and k.duration_s and vendor_bw:
            least_bw = k.model_bytes / k.duration_s
            share = least_bw / vendor_bw
            where = (f"intensity of the shapes {r.model_intensity:.3g} FLOP/B (inputs and output read once), "
                     f"ridge {r.vendor_ridge:.3g}{at}")
            if r.model_intensity < r.vendor_ridge and share >= LIMITER_THRESHOLD:
                r.bound, r.bound_reason = "memory", f"{where}: moves at least {_pct(share)} of DRAM bandwidth"
                return
            r.bound = "latency"
            r.bound_reason = (f"{where}: {_pct(fraction)} of the peak and at least {_pct(share)} of bandwidth; "
                              "below both roofs: tiles, waves (wave quantization), tails or launch overhead" + _measured_compute(r))
            return
        r.bound, r.bound_reason = ("unknown", f"{_pct(fraction)} of the {r.peak.key} peak{_measured_compute(r)}; "
                                   "no bytes to place it on the roofline")
        return
    if k.flops is not None and r.peak is None and r.peak_class:
        r.bound, r.bound_reason = "unknown", f"no vendor peak for {r.peak_class} in the catalog; {_why(k.bytes_source)}"
        return
    r.bound = "unknown"
    reasons = [_why(s) for s in (k.flops_source if k.flops is None else "", k.bytes_source if k.dram_bytes is None else "") if s]
    if ceilings is None and k.flops and k.dram_bytes is not None:
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
    recorded, _how = _detect(capture, data_dir)
    floor_gpu: GpuCeilings | None = None  # the recording GPU's vendor rates: the floor's, whatever --gpu is
    if recorded is not None:
        same = ceilings is not None and ceilings.accelerator is not None and ceilings.accelerator.id == recorded.id
        floor_gpu = ceilings if same else GpuCeilings(recorded.id, "vendor", data_dir)
    results = [analyze_kernel(k, ceilings, short_name(k.name), recorded, floor_gpu) for k in capture.kernels]
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
    report = Report(capture, ceilings, gpu_note, results, list(ranges.values()), total,
                    recorded_on=recorded.id if recorded is not None else None)
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
    clocks = [(k, w) for k in capture.kernels if (w := clock_warning(k))]
    for k, w in clocks[:20]:
        report.warnings.append(f"kernel #{k.index}: {w}")
    if len(clocks) > 20:
        report.warnings.append(f"... and {len(clocks) - 20} more kernels with a measured SM clock above the device's maximum")
    no_floor = [r for r in results if r.floor_missing]
    if no_floor:
        report.warnings.append(
            f"{len(no_floor):,} kernel(s) without a full physics floor: {no_floor[0].floor_missing}"
            + ("" if recorded is not None else "; the file does not name its GPU, so a faster-than-possible kernel may go unflagged"))
    impossible = [r for r in results if r.physically_possible is False]
    for r in impossible[:20]:
        report.warnings.append(f"kernel #{r.kernel.index} {r.short_name}: {r.impossible_reason}")
    if len(impossible) > 20:
        report.warnings.append(f"... and {len(impossible) - 20} more physically impossible kernels")
    return report


CLOCK_NOTE_SHARE = 0.1  # the clock note appears when kernels holding this share of the time ran slow


def _clock_note(report: Report) -> None:
    """When kernels holding a tenth of the time or more ran below 90% of the device's highest SM
    clock: which share of the time, at what clocks. Weighted by time: a few short kernels at full
    clock must not hide the long GEMMs that ran slow."""
    boost = report.capture.device_clock_hz
    timed = [(k.duration_s or 0.0, k.sm_clock_hz) for k in report.capture.kernels if k.sm_clock_hz and k.duration_s]
    total = sum(t for t, _c in timed)
    if not boost or total <= 0:
        return
    slow = [(t, c) for t, c in timed if c < 0.9 * boost]
    share = sum(t for t, _c in slow) / total
    if share < CLOCK_NOTE_SHARE:
        return
    lo, hi = min(c for _t, c in slow), max(c for _t, c in slow)
    clocks = f"{lo / 1e9:.3g} GHz" if f"{lo / 1e9:.3g}" == f"{hi / 1e9:.3g}" else f"{lo / 1e9:.3g}-{hi / 1e9:.3g} GHz"
    at_clock = ("; compute-bound kernels show their fraction of the peak at the clock they ran at beside it"
                if any(r.fraction_at_clock is not None for r in report.kernels) else "")
    report.notes.append(
        f"kernels holding {share:.0%} of the time ran at an SM clock of {clocks}, {lo / boost:.0%}-{hi / boost:.0%} of the "
        f"device's {boost / 1e9:.3g} GHz (Nsight Compute locks clocks to base unless run with --clock-control none; a GPU "
        "also clocks down for power or heat). A vendor peak is quoted at one clock (Hopper's tensor peaks, for one, at 1.83 GHz, "
        "its FP32 peak at 1.98 GHz), so their fraction of the vendor peak reads lower than the same kernel at full clock"
        + at_clock
    )


def is_finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)
