"""The roofline model: time = max(FLOPs / peak, bytes / bandwidth), a floor no kernel can beat."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studytui.calc.forms import MEASURED_TIME, CalcSpec, DataDir, FieldSpec, ceilings_for, gpu_fields
from studytui.calc.result import Result
from studytui.calc.units import (
    FieldError,
    format_flops,
    format_flops_rate,
    format_percent,
    format_rate,
    format_size,
    format_time,
)
from studytui.core.records import FrozenRecord

if TYPE_CHECKING:
    from studytui.calc.ceilings import Ceilings

# A measured time may undercut the floor by float rounding only; anything more is impossible.
IMPOSSIBLE_TOLERANCE = 1e-9


def g(x: float) -> str:
    """Compact number for formulas."""
    return f"{x:.4g}"


class RooflineTerms(FrozenRecord):
    """A kernel's work and traffic against two ceilings, and what the roofline makes of them.
    (A plain class, studytui.core.records: this module is imported by most calculators.)"""

    __slots__ = ("flops", "bytes", "peak_flops", "mem_bw")

    flops: float
    bytes: float
    peak_flops: float
    mem_bw: float

    def __init__(
        self,
        flops: float,
        bytes: float,
        peak_flops: float,
        mem_bw: float,
    ) -> None:
        object.__setattr__(self, "flops", flops)
        object.__setattr__(self, "bytes", bytes)
        object.__setattr__(self, "peak_flops", peak_flops)
        object.__setattr__(self, "mem_bw", mem_bw)

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def ridge_point(self) -> float:
        return self.peak_flops / self.mem_bw

    @property
    def compute_time_s(self) -> float:
        return self.flops / self.peak_flops

    @property
    def memory_time_s(self) -> float:
        return self.bytes / self.mem_bw

    @property
    def time_s(self) -> float:
        """Lower bound: compute and memory traffic overlap perfectly."""
        return max(self.compute_time_s, self.memory_time_s)

    @property
    def time_serial_s(self) -> float:
        """Serial no-overlap estimate: the two terms one after the other. Not an upper bound:
        launch latency, tails and stalls can make a real kernel slower still."""
        return self.compute_time_s + self.memory_time_s

    @property
    def bound(self) -> str:
        return "compute" if self.compute_time_s >= self.memory_time_s else "memory"

    @property
    def attainable_flops(self) -> float:
        return min(self.peak_flops, self.intensity * self.mem_bw)


def add_terms(result: Result, t: RooflineTerms, what: str = "", *, per_gpu: bool = False) -> None:
    """Values, rows and formulas shared by every calculator that ends in a roofline.

    per_gpu: the FLOPs and bytes are one GPU's share (tensor parallelism); the rows say so.
    """
    prefix = f"{what} " if what else ""
    each = " per GPU" if per_gpu else ""
    result.values.update(
        flops=t.flops,
        bytes=t.bytes,
        intensity=t.intensity,
        ridge_point=t.ridge_point,
        peak_flops=t.peak_flops,
        mem_bw=t.mem_bw,
        attainable_flops=t.attainable_flops,
        compute_time_s=t.compute_time_s,
        memory_time_s=t.memory_time_s,
        time_s=t.time_s,
        time_serial_s=t.time_serial_s,
        bound=t.bound,
    )
    result.step(f"{prefix}intensity = FLOPs / bytes = {g(t.flops)} / {g(t.bytes)} = {g(t.intensity)} FLOP/B")
    result.step(f"ridge point = peak / bandwidth = {g(t.peak_flops)} / {g(t.mem_bw)} = {g(t.ridge_point)} FLOP/B")
    result.step(f"compute time = FLOPs / peak = {g(t.flops)} / {g(t.peak_flops)} = {format_time(t.compute_time_s)}")
    result.step(f"memory time = bytes / bandwidth = {g(t.bytes)} / {g(t.mem_bw)} = {format_time(t.memory_time_s)}")
    result.step(
        f"time lower bound = max(compute, memory) = max({format_time(t.compute_time_s)}, {format_time(t.memory_time_s)}) = "
        f"{format_time(t.time_s)}"
    )
    result.step(
        f"serial no-overlap estimate = compute + memory = {format_time(t.compute_time_s)} + {format_time(t.memory_time_s)} = "
        f"{format_time(t.time_serial_s)} (not a bound: a real kernel can be slower)"
    )
    result.step(
        f"attainable = min(peak, intensity x bandwidth) = min({g(t.peak_flops)}, {g(t.intensity)} x {g(t.mem_bw)}) = "
        f"{format_flops_rate(t.attainable_flops)}"
    )
    result.row(f"FLOPs{each}", format_flops(t.flops))
    result.row(f"bytes moved{each}", format_size(t.bytes))
    result.row("arithmetic intensity", f"{g(t.intensity)} FLOP/B")
    result.row("ridge point", f"{g(t.ridge_point)} FLOP/B")
    result.row("bound", f"{t.bound} ({'intensity below' if t.bound == 'memory' else 'intensity at or above'} the ridge)")
    result.row("attainable", format_flops_rate(t.attainable_flops))
    result.row(f"compute time{each} (FLOPs/peak)", format_time(t.compute_time_s))
    result.row(f"memory time{each} (bytes/bw)", format_time(t.memory_time_s))
    result.row("time lower bound  max()", format_time(t.time_s))
    result.row("serial estimate  sum()", format_time(t.time_serial_s))


def cache_bytes(ceilings: Ceilings) -> float | None:
    """The largest on-chip cache (L2 or last-level cache) of the accelerator, in bytes."""
    acc = ceilings.accelerator
    if acc is None:
        return None
    raw = [acc.raw.get(k) for k in ("l2_mb", "llc_mb")]
    sizes = [float(x) for x in raw if isinstance(x, (int, float)) and not isinstance(x, bool)]
    return max(sizes) * 2**20 if sizes else None


def check_measured(
    result: Result,
    terms: RooflineTerms,
    measured_s: float,
    *,
    cache: float | None = None,
    limits: tuple[float | None, float | None] = (None, None),
) -> None:
    """Compare a measured time with the floor; flag times below it as physically impossible.

    The fraction of roofline uses the ceilings in force (vendor or measured). Impossibility is
    judged against hard limits only: `limits` = (peak FLOP/s, bandwidth), the vendor peaks, since
    a measured profile is a sustained rate that short runs legitimately beat. The memory floor
    assumes every byte comes from HBM, so data that fit in the on-chip cache can beat it.
    """
    floor_s, flops, nbytes, peak, bw = terms.time_s, terms.flops, terms.bytes, terms.peak_flops, terms.mem_bw
    fraction = floor_s / measured_s
    result.values.update(measured_time_s=measured_s, roofline_fraction=fraction)
    result.step(
        f"fraction of roofline = floor / measured = {format_time(floor_s)} / {format_time(measured_s)} = {format_percent(fraction)}"
    )
    result.row("measured time", format_time(measured_s))
    achieved = flops / measured_s
    result.values.update(achieved_flops=achieved, achieved_flops_fraction=achieved / peak)
    result.step(
        f"achieved FLOP/s = FLOPs / measured = {g(flops)} / {g(measured_s)} = {format_flops_rate(achieved)} "
        f"({format_percent(achieved / peak)} of peak)"
    )
    result.row("achieved FLOP/s", f"{format_flops_rate(achieved)} ({format_percent(achieved / peak)} of peak)")
    achieved_bw = nbytes / measured_s
    result.values.update(achieved_bw=achieved_bw, achieved_bw_fraction=achieved_bw / bw)
    result.step(
        f"achieved bandwidth = bytes / measured = {g(nbytes)} / {g(measured_s)} = {format_rate(achieved_bw)} "
        f"({format_percent(achieved_bw / bw)} of peak)"
    )
    result.row("achieved bandwidth", f"{format_rate(achieved_bw)} ({format_percent(achieved_bw / bw)} of peak)")
    result.row("fraction of roofline", format_percent(fraction))
    limit_peak = limits[0] or peak
    limit_bw = limits[1] or bw
    compute_floor_s, memory_floor_s = flops / limit_peak, nbytes / limit_bw
    hard_floor_s = max(compute_floor_s, memory_floor_s)
    below_compute = measured_s < compute_floor_s * (1 - IMPOSSIBLE_TOLERANCE)
    below_memory = measured_s < memory_floor_s * (1 - IMPOSSIBLE_TOLERANCE)
    if (limit_peak, limit_bw) != (peak, bw):
        result.step(
            f"physics floor (vendor peaks) = max({g(flops)} / {g(limit_peak)}, {g(nbytes)} / {g(limit_bw)}) = {format_time(hard_floor_s)}"
        )
        if measured_s < floor_s and not (below_compute or below_memory):
            result.warn(
                f"faster than the measured-profile floor {format_time(floor_s)} but above the vendor-peak floor "
                f"{format_time(hard_floor_s)}: possible (a measured profile is a sustained rate, not a limit)"
            )
    cache_resident = cache is not None and nbytes <= cache
    possible = not below_compute and (not below_memory or cache_resident)
    result.values["physically_possible"] = possible
    if below_compute:
        result.warn(
            f"physically impossible: measured time {format_time(measured_s)} is below the roofline floor "
            f"{format_time(hard_floor_s)} (compute alone needs {format_time(compute_floor_s)} at the vendor peak); "
            "the kernel skipped work or the measurement is broken (unsynchronised timer, cached result, wrong shape)"
        )
    elif below_memory and not cache_resident:
        result.warn(
            f"physically impossible: measured time {format_time(measured_s)} is below the roofline floor "
            f"{format_time(hard_floor_s)} (moving {format_size(nbytes)} at peak bandwidth takes {format_time(memory_floor_s)}); "
            "the kernel skipped work or the measurement is broken (unsynchronised timer, cached result, wrong shape)"
        )
    elif below_memory and cache is not None:  # (cache_resident)
        result.warn(
            f"below the HBM floor ({format_time(memory_floor_s)}), but the {format_size(nbytes)} fit in the "
            f"{format_size(cache, binary=True)} on-chip cache: a benchmark that reuses its operands without flushing "
            "the cache can do this; flush it between runs to measure HBM"
        )


def roofline(
    ceilings: Ceilings,
    *,
    flops: float | None = None,
    bytes: float | None = None,
    intensity: float | None = None,
    measured_time: float | None = None,
) -> Result:
    """Roofline for a kernel given two of (flops, bytes, intensity), or intensity alone."""
    if ceilings.peak_flops is None or ceilings.mem_bw is None:
        raise FieldError("gpu", "the roofline needs a peak FLOP/s and a memory bandwidth")
    peak, bw = ceilings.peak_flops, ceilings.mem_bw
    result = Result("roofline")
    given = sum(v is not None for v in (flops, bytes, intensity))
    if flops is not None and bytes is not None and intensity is not None:
        if abs(flops / bytes - intensity) > 1e-6 * intensity:
            raise FieldError("intensity", f"conflicts with flops/bytes ({flops / bytes:.6g} FLOP/B); give two of flops, bytes, intensity")
    elif flops is not None and bytes is None and intensity is not None:
        bytes = flops / intensity
        result.step(f"bytes = FLOPs / intensity = {g(flops)} / {g(intensity)} = {g(bytes)}")
    elif bytes is not None and flops is None and intensity is not None:
        flops = intensity * bytes
        result.step(f"FLOPs = intensity x bytes = {g(intensity)} x {g(bytes)} = {g(flops)}")
    elif given < 2 and intensity is None:
        missing = "bytes" if flops is not None else "flops"
        raise FieldError(missing, "give --flops and --bytes, or --intensity")

    result.values.update(gpu=ceilings.accelerator.id if ceilings.accelerator else None, dtype=ceilings.dtype)
    result.row("ceilings", ceilings.gpu_label)
    if flops is not None and bytes is not None:
        terms = RooflineTerms(flops, bytes, peak, bw)
        add_terms(result, terms)
        if measured_time is not None:
            check_measured(result, terms, measured_time, cache=cache_bytes(ceilings),
                           limits=(ceilings.limit_peak_flops, ceilings.limit_mem_bw))
    else:
        if intensity is None:  # (the checks above leave two of the three, or intensity)
            raise FieldError("flops", "give --flops and --bytes, or --intensity")
        ridge = peak / bw
        attainable = min(peak, intensity * bw)
        bound = "compute" if intensity >= ridge else "memory"
        result.values.update(
            intensity=intensity, ridge_point=ridge, peak_flops=peak, mem_bw=bw,
            attainable_flops=attainable, bound=bound, time_s=None,
        )
        result.step(f"ridge point = peak / bandwidth = {g(peak)} / {g(bw)} = {g(ridge)} FLOP/B")
        result.step(
            f"attainable = min(peak, intensity x bandwidth) = min({g(peak)}, {g(intensity)} x {g(bw)}) = {format_flops_rate(attainable)}"
        )
        result.row("arithmetic intensity", f"{g(intensity)} FLOP/B")
        result.row("ridge point", f"{g(ridge)} FLOP/B")
        result.row("bound", bound)
        result.row("attainable", f"{format_flops_rate(attainable)} ({format_percent(attainable / peak)} of peak)")
        result.assume("no time without --flops or --bytes: intensity alone fixes the attainable rate, not the duration")
        if measured_time is not None:
            raise FieldError("time", "a measured time needs --flops or --bytes to compare against")
    result.values["attainable_fraction_of_peak"] = result.values["attainable_flops"] / peak
    if ceilings.link_bw_per_direction:
        link_ridge = peak / ceilings.link_bw_per_direction
        result.values["link_bw_per_direction"] = ceilings.link_bw_per_direction
        result.values["link_ridge_point"] = link_ridge
        result.step(f"FLOPs per link byte = peak / link (one way) = {g(peak)} / {g(ceilings.link_bw_per_direction)} = {g(link_ridge)}")
        result.row("FLOPs per link byte", g(link_ridge))
    for line in ceilings.describe():
        result.assume(line)
    result.assume("roofline time is a lower bound: real kernels add launch latency, tail effects and imperfect overlap")
    if measured_time is not None:
        result.assume("the floor uses the vendor peak at the clock the vendor quotes, and assumes every byte comes from HBM")
    for w in ceilings.warnings:
        result.warn(w)
    return result


# ---- the calculator ------------------------------------------------------------------------

# The rows add_terms and check_measured write, for every calculator that ends in a roofline:
# the headline ones (by the start of their label) and shorter labels for narrow terminals.
TERMS_HEADLINE = ("bound", "time lower bound")
MEASURED_HEADLINE = ("measured time", "achieved", "fraction")
TERMS_SHORT_LABELS = (
    (r"^time lower bound\s+max\(\)$", "time bound max()"),
    (r"^serial estimate\s+sum\(\)$", "serial sum()"),
    (r"^(compute|memory) time per GPU \(.*\)$", r"\1 time/GPU"),
    (r"^(compute|memory) time \(.*\)$", r"\1 time"),
    (r"^arithmetic intensity$", "intensity"),
)


def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    if p["flops"] is None and p["bytes"] is None and p["intensity"] is None:
        raise FieldError("flops", "give --flops and --bytes, or --intensity")
    ceilings = ceilings_for(p, data_dir, ("peak_flops", "mem_bw"))
    return roofline(ceilings, flops=p["flops"], bytes=p["bytes"], intensity=p["intensity"], measured_time=p["time"])


SPEC = CalcSpec(
    "roofline", "Roofline",
    "Intensity, ridge point, attainable FLOP/s, bound, and the time floor max(FLOPs/peak, bytes/bandwidth) "
    "(plus the serial no-overlap estimate). --time adds achieved rates and flags times below the floor as impossible.",
    (
        *gpu_fields(link=True),
        FieldSpec("flops", "FLOPs", "flops", help="work, e.g. 1e12 or 2TFLOP"),
        FieldSpec("bytes", "bytes moved", "size", help="HBM traffic, e.g. 1GB or 64MiB"),
        FieldSpec("intensity", "intensity (FLOP/B)", "float", help="instead of one of flops/bytes"),
        MEASURED_TIME,
    ),
    _run,
    ui_defaults={"flops": "1e12", "bytes": "10GB"},
    headline=(*TERMS_HEADLINE, *MEASURED_HEADLINE),
    short_labels=TERMS_SHORT_LABELS,
    plot="roofline",
    short_name="roof",
)
