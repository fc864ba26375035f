"""One place that decides which ceilings (peak FLOP/s, memory and link bandwidth) a calculator uses.

Order of precedence for each figure: an explicit override (--peak-flops, --mem-bw, --link-bw),
then a measured profile (issue 7, `studytui.calc.profiles`), then the vendor peak of --gpu.
Each figure carries a label saying where it came from, so output never passes a vendor peak
off as a measurement.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from studytui.calc.dtypes import peak_keys
from studytui.calc.hardware import VENDOR_PEAK_LABEL, Accelerator, load_catalog
from studytui.calc.units import FieldError, format_flops_rate, format_rate
from studytui.core.records import Record

if TYPE_CHECKING:
    from studytui.calc.collective import Fabric


# A plain class, not a dataclass: every calculator that names a GPU imports this module, and on
# Python 3.11 a dataclass's generated methods cost about a millisecond each time it does (issue 27).
class Ceilings(Record):
    """The figures a calculator runs against, each with where it came from (`provenance`)."""

    __slots__ = ("dtype", "peak_flops", "mem_bw", "link_bw_per_direction", "memory_bytes", "sm_count", "accelerator",
                 "net_bw_per_direction", "compute_unit_kind", "link_measured_gpus", "link_bw_by_gpus", "provenance", "warnings",
                 "profile", "limit_peak_flops", "limit_mem_bw")

    def __init__(
        self,
        dtype: str,
        peak_flops: float | None,
        mem_bw: float | None,
        link_bw_per_direction: float | None = None,
        memory_bytes: float | None = None,
        sm_count: int | None = None,
        accelerator: Accelerator | None = None,
        net_bw_per_direction: float | None = None,
        compute_unit_kind: str = "SM",
        link_measured_gpus: int | None = None,
        link_bw_by_gpus: dict[int, float] | None = None,
        provenance: dict[str, str] | None = None,
        warnings: list[str] | None = None,
        profile: str = "vendor",
        limit_peak_flops: float | None = None,
        limit_mem_bw: float | None = None,
    ) -> None:
        self.dtype = dtype
        self.peak_flops = peak_flops
        self.mem_bw = mem_bw
        self.link_bw_per_direction = link_bw_per_direction
        self.memory_bytes = memory_bytes
        self.sm_count = sm_count
        self.accelerator = accelerator
        self.net_bw_per_direction = net_bw_per_direction  # scale-out network per GPU, one way
        self.compute_unit_kind = compute_unit_kind
        self.link_measured_gpus = link_measured_gpus  # a measured link figure: how many GPUs it was measured on
        # measured all-reduce bus bandwidth by GPU count
        self.link_bw_by_gpus: dict[int, float] = {} if link_bw_by_gpus is None else link_bw_by_gpus
        self.provenance: dict[str, str] = {} if provenance is None else provenance  # figure -> where it came from
        self.warnings: list[str] = [] if warnings is None else warnings
        self.profile = profile
        # Hard limits for the "physically impossible" check: the vendor peaks (or the user's overrides).
        # A measured profile is what the chip sustains once warm, not a limit: short runs beat it.
        self.limit_peak_flops = limit_peak_flops
        self.limit_mem_bw = limit_mem_bw

    @classmethod
    def custom(
        cls,
        peak_flops: float | None = None,
        mem_bw: float | None = None,
        link_bw_per_direction: float | None = None,
        memory_bytes: float | None = None,
        sm_count: int | None = None,
        dtype: str = "bf16",
    ) -> "Ceilings":
        """Ceilings from plain numbers (tests, scripts)."""
        prov = {
            k: "given"
            for k, v in (("peak_flops", peak_flops), ("mem_bw", mem_bw), ("link_bw", link_bw_per_direction), ("memory", memory_bytes))
            if v is not None
        }
        return cls(dtype, peak_flops, mem_bw, link_bw_per_direction, memory_bytes, sm_count, None, provenance=prov)

    @property
    def gpu_label(self) -> str:
        overridden = all(self.provenance.get(k, "").startswith("override") for k in ("peak_flops", "mem_bw"))
        if overridden:
            return "custom ceilings (--peak-flops, --mem-bw)"
        return f"{self.accelerator.name} ({self.accelerator.id})" if self.accelerator else "custom ceilings"

    def describe(self) -> list[str]:
        """One assumption line per figure used, with its provenance."""
        lines = []
        if self.peak_flops is not None:
            rate = format_flops_rate(self.peak_flops)
            if self.dtype.startswith("int"):
                rate = f"{self.peak_flops / 1e12:.4g} TOPS"  # integer math: operations, not floating point
            lines.append(f"peak {self.dtype} = {rate} ({self.provenance.get('peak_flops', '?')})")
        if self.mem_bw is not None:
            lines.append(f"memory bandwidth = {format_rate(self.mem_bw)} ({self.provenance.get('mem_bw', '?')})")
        if self.memory_bytes is not None and self.provenance.get("memory", "").startswith(("override", "device-reported")):
            lines.append(f"memory capacity = {self.memory_bytes / 2**30:.4g} GiB ({self.provenance['memory']})")
        if self.link_bw_per_direction is not None:
            lines.append(
                f"link bandwidth = {format_rate(self.link_bw_per_direction)} per direction ({self.provenance.get('link_bw', '?')})"
            )
        return lines

    def fabric(self, need_domain: int | None = None, gpus: int | None = None) -> Fabric:
        """The collective Fabric these ceilings describe (link, scale-up domain, network past it).

        With a measured profile and `gpus`, the link figure is the one measured over that many
        GPUs (capped at the scale-up domain); another count's figure stands in with a note.
        """
        from studytui.calc.collective import Fabric

        acc = self.accelerator
        link_bw, link_label, measured_gpus, measured_note = self.link_bw_per_direction, self.provenance.get("link_bw", ""), None, ""
        if link_label.startswith("measured"):
            measured_gpus = self.link_measured_gpus
            if gpus and self.link_bw_by_gpus:
                from studytui.calc.profiles import link_for_gpus, nearest_gpu_count

                domain = acc.domain_size if acc else None
                group = min(gpus, domain) if domain else gpus
                value, measured_note = link_for_gpus(self.link_bw_by_gpus, group)
                if value is not None:
                    link_bw = value
                    measured_gpus = nearest_gpu_count(self.link_bw_by_gpus, group)
                    link_label = f"{link_label.split(', ')[0]}, {measured_gpus}-GPU all-reduce"
        link_from_catalog = self.provenance.get("link_bw", "").startswith(VENDOR_PEAK_LABEL) and not (acc and acc.axis_bw_per_direction)
        if link_bw is None:  # resolve_ceilings(need=("link_bw",)) refuses this first
            raise FieldError("link_bw", "give --gpu with a scale-up link or --link-bw (per direction)")
        return Fabric(
            link_bw=link_bw,
            link_label=link_label,
            link_name=(acc.interconnect_name or "scale-up link") if acc else "link (--link-bw)",
            domain=acc.domain_size if acc else None,
            net_bw=self.net_bw_per_direction,
            net_label=self.provenance.get("net_bw", ""),
            net_name=(acc.scale_out_name or "scale-out network")
            if acc and not self.provenance.get("net_bw", "").startswith("override")
            else "network (--net-bw)",
            net_source=(acc.scale_out_source or "") if acc and self.provenance.get("net_bw", "").startswith("catalog") else "",
            nvls=bool(acc and acc.nvls),
            torus_axis=bool(
                acc and acc.axis_bw_per_direction and not self.provenance.get("link_bw", "").startswith(("override", "measured"))
            ),
            axis_source=str((acc.raw.get("interconnect") or {}).get("axis_source", "")) if acc else "",
            axis_max_chips=acc.axis_max_chips if acc else None,
            peer_bw=acc.peer_bw_per_direction if acc and link_from_catalog else None,
            peer_source=str((acc.raw.get("interconnect") or {}).get("peer_source", "")) if acc else "",
            wrap_multiple=acc.axis_wraparound_multiple if acc else None,
            wrap_source=str((acc.raw.get("interconnect") or {}).get("axis_wraparound_source", "")) if acc else "",
            catalog_link=link_from_catalog,
            measured_gpus=measured_gpus,
            measured_note=measured_note,
        )


def _load_profile(accelerator: Accelerator, profile: str, data_dir: str | os.PathLike[str] | None) -> dict[str, Any]:
    from studytui.calc.profiles import measured_ceilings  # imported late: YAML parsing is not always needed

    return measured_ceilings(accelerator, profile, data_dir)


def resolve_ceilings(
    gpu: str | None,
    dtype: str,
    *,
    peak_flops: float | None = None,
    mem_bw: float | None = None,
    link_bw: float | None = None,
    memory_bytes: float | None = None,
    net_bw: float | None = None,
    profile: str = "vendor",
    data_dir: str | os.PathLike[str] | None = None,
    need: tuple[str, ...] = ("peak_flops", "mem_bw"),
) -> Ceilings:
    """Resolve the ceilings a calculator runs against.

    gpu: catalog id or alias (or None when overrides supply what is needed).
    dtype: precision whose dense peak is used. link_bw: per-direction override.
    memory_bytes: HBM capacity override (bytes).
    need: figures the caller cannot do without: any of peak_flops, mem_bw, link_bw, memory.
    Raises FieldError naming the field when something needed is missing or unknown.
    """
    accelerator = load_catalog(data_dir).get(gpu) if gpu else None
    result = Ceilings(dtype, None, None, accelerator=accelerator, profile=profile or "vendor")
    if accelerator is not None:
        vendor = f"{VENDOR_PEAK_LABEL}: {accelerator.id}"
        for key in peak_keys(dtype):
            if key in accelerator.peak_flops:
                result.peak_flops = accelerator.peak_flops[key]
                label = vendor if key == dtype else f"{vendor}, {key}"
                result.provenance["peak_flops"] = label
                break
        result.mem_bw = accelerator.mem_bw
        result.provenance["mem_bw"] = vendor
        bidir = accelerator.link_bw_bidir
        if accelerator.axis_bw_per_direction is not None:
            result.link_bw_per_direction = accelerator.axis_bw_per_direction
            result.provenance["link_bw"] = (
                f"{vendor}, a ring along one torus axis (two links), not the "
                + (f"{bidir / 1e9:g} GB/s " if bidir is not None else "")
                + "bidirectional total over all ports"
            )
        elif accelerator.link_bw_per_direction is not None and bidir is not None:  # (the one is half the other)
            result.link_bw_per_direction = accelerator.link_bw_per_direction
            result.provenance["link_bw"] = f"{vendor}, half of the {bidir / 1e9:g} GB/s bidirectional figure"
        if accelerator.scale_out_bw_per_direction is not None:
            result.net_bw_per_direction = accelerator.scale_out_bw_per_direction
            result.provenance["net_bw"] = f"catalog: {accelerator.raw['scale_out']['bw_gbps_per_direction']:g} Gb/s per GPU per direction"
        result.memory_bytes = accelerator.memory_bytes
        if accelerator.memory_datasheet_bytes is not None:
            result.provenance["memory"] = (
                f"device-reported {accelerator.raw['memory_reported_mib']:,} MiB, as nvidia-smi shows it with ECC on; "
                f"datasheet {accelerator.memory_gb:g} {accelerator.memory_unit}"
            )
        elif accelerator.memory_bytes is not None:
            result.provenance["memory"] = f"{VENDOR_PEAK_LABEL}: {accelerator.memory_gb:g} {accelerator.memory_unit} read as GiB"
        result.sm_count = accelerator.sm_count
        if result.sm_count is None and accelerator.compute_unit_kind == "CU" and accelerator.compute_unit_count:
            # AMD GEMMs spread their output tiles over compute units the way NVIDIA's spread over SMs.
            result.sm_count, result.compute_unit_kind = accelerator.compute_unit_count, "CU"

    result.limit_peak_flops, result.limit_mem_bw = result.peak_flops, result.mem_bw
    if result.profile != "vendor":
        if accelerator is None:
            raise FieldError("profile", "a measured profile needs --gpu (the accelerator it was measured on)")
        measured = _load_profile(accelerator, result.profile, data_dir)
        source = str(measured.get("source") or result.profile)
        peaks = measured.get("peak_flops") or {}
        value = next((peaks[k] for k in (dtype, *peak_keys(dtype)) if peaks.get(k)), None)
        if value:
            result.peak_flops = float(value)
            result.provenance["peak_flops"] = f"measured: {source}"
        elif peak_flops is None and "peak_flops" in need:
            result.warnings.append(f"the measured profile has no {dtype} peak; using the vendor peak")
        if measured.get("mem_bw"):
            result.mem_bw = float(measured["mem_bw"])
            result.provenance["mem_bw"] = f"measured: {source}"
        elif mem_bw is None and "mem_bw" in need:
            result.warnings.append("the measured profile has no memory bandwidth; using the vendor peak")
        if measured.get("link_bw_per_direction"):
            result.link_bw_per_direction = float(measured["link_bw_per_direction"])
            gpus = measured.get("link_gpus")
            result.link_measured_gpus = int(gpus) if gpus else None
            result.link_bw_by_gpus = {int(n): float(v) for n, v in (measured.get("link_bw_by_gpus") or {}).items()}
            result.provenance["link_bw"] = f"measured: {source}" + (f", {gpus}-GPU all-reduce" if gpus else "")
        elif "link_bw" in need and link_bw is None:
            result.warnings.append("the measured profile has no link bandwidth; using the vendor peak")

    if peak_flops is not None:
        result.peak_flops = result.limit_peak_flops = peak_flops
        result.provenance["peak_flops"] = "override (--peak-flops)"
    if mem_bw is not None:
        result.mem_bw = result.limit_mem_bw = mem_bw
        result.provenance["mem_bw"] = "override (--mem-bw)"
    # A rate that was really achieved is achievable, whatever the datasheet says.
    if result.peak_flops is not None:
        result.limit_peak_flops = max(result.limit_peak_flops or 0.0, result.peak_flops)
    if result.mem_bw is not None:
        result.limit_mem_bw = max(result.limit_mem_bw or 0.0, result.mem_bw)
    if link_bw is not None:
        result.link_bw_per_direction = link_bw
        result.provenance["link_bw"] = "override (--link-bw, per direction)"
    if memory_bytes is not None:
        result.memory_bytes = memory_bytes
        result.provenance["memory"] = "override (--hbm)"
    if net_bw is not None:
        result.net_bw_per_direction = net_bw
        result.provenance["net_bw"] = "override (--net-bw, per GPU per direction)"

    if "peak_flops" in need and result.peak_flops is None:
        if accelerator is None:
            raise FieldError("gpu", "give --gpu (see 'studytui gpus') or --peak-flops")
        available = ", ".join(sorted(accelerator.peak_flops))
        raise FieldError("dtype", f"{accelerator.id} has no vendor peak for {dtype}; available: {available} (or give --peak-flops)")
    if "mem_bw" in need and result.mem_bw is None:
        raise FieldError("gpu", "give --gpu (see 'studytui gpus') or --mem-bw")
    if "link_bw" in need and result.link_bw_per_direction is None:
        if accelerator is None:
            raise FieldError("link_bw", "give --gpu with a scale-up link or --link-bw (per direction)")
        raise FieldError("link_bw", f"{accelerator.id} has no scale-up link in the catalog; give --link-bw (per direction)")
    return result
