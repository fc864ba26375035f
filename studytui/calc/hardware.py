"""The accelerator catalog: vendor peak figures from content/hardware/*.yaml plus user files.

Every figure here is a vendor peak (dense, no sparsity), never a measurement. Units after loading
are SI: FLOP/s, B/s, bytes. Interconnect figures in the content files are the BIDIRECTIONAL total
per accelerator; `link_bw_per_direction` is half of that, which is what ring collectives and
nccl-tests bus bandwidth are compared against.

User accelerators: YAML files in `<data dir>/hardware/` with the same fields as the content files
(at least id, name, peak_tflops, memory_bw_tbs).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from studytui.core.errors import UsageError
from studytui.core.filestate import file_stamp

GIB = 2.0**30
MIB = 2.0**20
VENDOR_PEAK_LABEL = "vendor peak, not a measurement"

# Every key a catalog record may hold. A key outside these sets is a typo or a YAML accident
# (an unquoted "a, b" in a flow mapping splits into bogus keys), so loading refuses it.
RECORD_KEYS = frozenset({
    "id", "aliases", "figures", "name", "vendor", "arch", "year", "form_factor", "memory_gb", "memory_unit",
    "memory_reported_mib", "memory_reported_by", "memory_type", "memory_bw_tbs", "l2_mb", "llc_mb", "l2_source", "llc_source",
    "sm_count",
    "compute_units", "boost_clock_mhz", "peak_tflops", "datasheet_sparse", "interconnect", "scale_out",
    "host_interface", "tdp_w", "sources", "cross_checked_with", "confidence", "notes",
})
INTERCONNECT_KEYS = frozenset({
    "name", "bw_gbs", "bw_gbs_per_direction", "all_ports_bw_gbs", "domain", "domain_size", "nvls",
    "axis_bw_gbs_per_direction", "axis_source", "axis_max_chips", "source",
    "peer_bw_gbs_per_direction", "peer_source", "axis_wraparound_multiple", "axis_wraparound_source",
})
SCALE_OUT_KEYS = frozenset({"name", "bw_gbps_per_direction", "source", "note"})
COMPUTE_UNIT_KEYS = frozenset({"kind", "count", "extra"})


def _check_keys(mapping: Any, allowed: frozenset[str], where: str, what: str) -> None:
    if not isinstance(mapping, dict):
        return
    unknown = sorted(str(k) for k in mapping if str(k) not in allowed)
    if unknown:
        raise UsageError(f"{where}: unknown {what} key(s) {', '.join(repr(k) for k in unknown)}; accepted: {', '.join(sorted(allowed))}")


@dataclass(frozen=True)
class Accelerator:
    id: str
    name: str
    vendor: str
    peak_flops: dict[str, float]  # dense FLOP/s (int8: OP/s) per precision key
    mem_bw: float  # bytes/s (decimal TB/s * 1e12)
    memory_bytes: float | None  # vendor "GB" read as GiB (see README)
    link_bw_bidir: float | None  # bytes/s, both directions summed
    link_bw_per_direction: float | None  # bytes/s, one way (= bidir / 2)
    sm_count: int | None
    aliases: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    notes: str = ""
    peak_flops_sparse: dict[str, float] = field(default_factory=dict)
    memory_gb: float | None = None
    memory_unit: str = "GB"
    interconnect_name: str | None = None
    interconnect_domain: str | None = None
    confidence: str | None = None
    compute_unit_count: int | None = None  # SMs (NVIDIA) or CUs (AMD): what GEMM tiles are spread over
    compute_unit_kind: str | None = None
    domain_size: int | None = None  # accelerators in one scale-up domain (NVLink/NVSwitch, ...)
    nvls: bool = False  # NVLink SHARP (in-switch reduction) available
    axis_bw_per_direction: float | None = None  # torus systems: one-way B/s of a ring along one axis
    axis_max_chips: int | None = None  # torus systems: the most chips one axis holds
    axis_wraparound_multiple: int | None = None  # torus systems: an axis has a wraparound link when its length is a multiple of this
    peer_bw_per_direction: float | None = None  # point-to-point mesh: B/s one way over the link(s) to ONE peer
    scale_out_bw_per_direction: float | None = None  # network B/s per accelerator, one way
    scale_out_name: str | None = None
    scale_out_source: str | None = None
    memory_datasheet_bytes: float | None = None  # the datasheet capacity when memory_bytes is device-reported
    origin: str = "content"  # "content" or the path of a user file
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_user(self) -> bool:
        return self.origin != "content"

    def dtypes(self) -> list[str]:
        """Precisions the vendor publishes a dense peak for (catalog keys)."""
        return sorted(self.peak_flops)

    def to_json(self) -> dict[str, Any]:
        """Every figure in SI units, plus the raw content entry (figures as the vendor prints them)."""
        return {
            "id": self.id,
            "name": self.name,
            "vendor": self.vendor,
            "aliases": list(self.aliases),
            "label": VENDOR_PEAK_LABEL,
            "peak_flops": dict(self.peak_flops),
            "peak_flops_sparse_datasheet": dict(self.peak_flops_sparse),
            "mem_bw": self.mem_bw,
            "memory_bytes": self.memory_bytes,
            "memory_gb_as_printed": self.memory_gb,
            "memory_unit_as_printed": self.memory_unit,
            "link_bw_bidir": self.link_bw_bidir,
            "link_bw_per_direction": self.link_bw_per_direction,
            "interconnect": self.interconnect_name,
            "interconnect_domain": self.interconnect_domain,
            "scale_up_domain_size": self.domain_size,
            "nvlink_sharp": self.nvls,
            "ring_axis_bw_per_direction": self.axis_bw_per_direction,
            "peer_link_bw_per_direction": self.peer_bw_per_direction,
            "scale_out": None if self.scale_out_bw_per_direction is None else {
                "name": self.scale_out_name, "bw_per_direction": self.scale_out_bw_per_direction, "source": self.scale_out_source,
            },
            "memory_datasheet_bytes": self.memory_datasheet_bytes,
            "sm_count": self.sm_count,
            "compute_units": {"kind": self.compute_unit_kind, "count": self.compute_unit_count} if self.compute_unit_count else None,
            "confidence": self.confidence,
            "sources": list(self.sources),
            "notes": self.notes,
            "origin": self.origin,
            "spec": self.raw,
        }


def memory_text(acc: Accelerator) -> str | None:
    """How an accelerator's memory capacity is read, in one sentence (the CLI and the app's GPU
    picker both say this). A vendor "GB" is read as GiB: the two differ by 7%, so both are named."""
    from studytui.calc.units import format_size

    if acc.memory_datasheet_bytes:
        return (f"{acc.raw['memory_reported_mib']:,} MiB as the device reports it with ECC on "
                f"(datasheet {acc.memory_gb:g} {acc.memory_unit}); the calculators use the reported figure")
    if acc.memory_bytes:
        return (f"{acc.memory_gb:g} {acc.memory_unit} as printed, read as {acc.memory_gb:g} GiB "
                f"(~{format_size(acc.memory_bytes)})")
    return None


def _num(value: Any, where: str, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where}: {name} must be a number, got {value!r}")
    if value <= 0 or value != value or value in (float("inf"), float("-inf")):
        raise UsageError(f"{where}: {name} must be a positive finite number, got {value!r}")
    try:
        return float(value)
    except OverflowError:  # an integer of hundreds of digits: no float holds it
        raise UsageError(f"{where}: {name} must be a positive finite number, got one of {len(str(value)):,} digits") from None


def accelerator_from_dict(entry: dict[str, Any], origin: str = "content") -> Accelerator:
    """Build an Accelerator from one content/user YAML mapping (units as the vendor prints them)."""
    where = origin if origin != "content" else f"content/hardware ({entry.get('id', '?')})"
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: each accelerator must be a mapping")
    for key in ("id", "name", "peak_tflops", "memory_bw_tbs"):
        if entry.get(key) in (None, "", {}):
            raise UsageError(f"{where}: missing required field '{key}'")
    _check_keys(entry, RECORD_KEYS, where, "field")
    _check_keys(entry.get("interconnect"), INTERCONNECT_KEYS, where, "interconnect")
    _check_keys(entry.get("scale_out"), SCALE_OUT_KEYS, where, "scale_out")
    _check_keys(entry.get("compute_units"), COMPUTE_UNIT_KEYS, where, "compute_units")
    acc_id = str(entry["id"]).strip().lower()
    peaks_raw = entry.get("peak_tflops")
    if not isinstance(peaks_raw, dict):
        raise UsageError(f"{where}: peak_tflops must map precision -> TFLOP/s")
    peaks: dict[str, float] = {}
    for dtype, tflops in peaks_raw.items():
        value = _num(tflops, where, f"peak_tflops.{dtype}")
        if value is not None:
            peaks[str(dtype)] = value * 1e12
    if not peaks:
        raise UsageError(f"{where}: peak_tflops has no figure")
    sparse = {}
    for dtype, tflops in (entry.get("datasheet_sparse") or {}).items():
        value = _num(tflops, where, f"datasheet_sparse.{dtype}")
        if value is not None:
            sparse[str(dtype)] = value * 1e12
    mem_bw = _num(entry.get("memory_bw_tbs"), where, "memory_bw_tbs")
    if mem_bw is None:  # a required field (checked above); this says so to the type checker
        raise UsageError(f"{where}: missing required field 'memory_bw_tbs'")
    memory_gb = _num(entry.get("memory_gb"), where, "memory_gb")
    unit = str(entry.get("memory_unit") or "GB")
    # Vendors print HBM/GDDR capacity in "GB" that is close to GiB (H200 "141GB" reports
    # 140.4 GiB), so both units are read as 2^30 bytes; see content/hardware/README.md.
    memory_bytes = memory_gb * GIB if memory_gb is not None else None
    memory_datasheet = None
    reported_mib = _num(entry.get("memory_reported_mib"), where, "memory_reported_mib")
    if reported_mib is not None:
        # ECC reserves part of GDDR on some cards: what the device reports is what can be used.
        memory_datasheet, memory_bytes = memory_bytes, reported_mib * MIB
    link = entry.get("interconnect") or {}
    bidir_gbs = _num(link.get("bw_gbs"), where, "interconnect.bw_gbs") if isinstance(link, dict) else None
    one_way_gbs = _num(link.get("bw_gbs_per_direction"), where, "interconnect.bw_gbs_per_direction") if isinstance(link, dict) else None
    if bidir_gbs is None and one_way_gbs is not None:
        bidir_gbs = 2 * one_way_gbs
    link_bidir = bidir_gbs * 1e9 if bidir_gbs is not None else None
    units = entry.get("compute_units") or {}
    unit_count = None
    if isinstance(units, dict) and units.get("count") is not None:
        unit_value = _num(units.get("count"), where, "compute_units.count")
        unit_count = int(unit_value) if unit_value is not None else None
    domain_size = _num(link.get("domain_size"), where, "interconnect.domain_size") if isinstance(link, dict) else None
    axis = _num(link.get("axis_bw_gbs_per_direction"), where, "interconnect.axis_bw_gbs_per_direction") if isinstance(link, dict) else None
    peer = _num(link.get("peer_bw_gbs_per_direction"), where, "interconnect.peer_bw_gbs_per_direction") if isinstance(link, dict) else None
    if peer is not None and not link.get("peer_source"):
        raise UsageError(f"{where}: interconnect.peer_bw_gbs_per_direction needs a peer_source")
    wrap = _num(link.get("axis_wraparound_multiple"), where, "interconnect.axis_wraparound_multiple") if isinstance(link, dict) else None
    if wrap is not None and (wrap != int(wrap) or not link.get("axis_wraparound_source")):
        raise UsageError(f"{where}: interconnect.axis_wraparound_multiple must be a whole number of chips with an axis_wraparound_source")
    scale_out = entry.get("scale_out") or {}
    if not isinstance(scale_out, dict):
        raise UsageError(f"{where}: scale_out must be a mapping (name, bw_gbps_per_direction, source)")
    net_gbps = _num(scale_out.get("bw_gbps_per_direction"), where, "scale_out.bw_gbps_per_direction")
    if net_gbps is not None and not scale_out.get("source"):
        raise UsageError(f"{where}: scale_out needs a source for its bandwidth")
    sm_count = entry.get("sm_count")
    if sm_count is None and isinstance(units, dict) and units.get("kind") == "SM":
        sm_count = units.get("count")
    if sm_count is not None:
        sm_value = _num(sm_count, where, "sm_count")
        sm_count = int(sm_value) if sm_value is not None else None
    aliases = tuple(str(a).strip().lower() for a in (entry.get("aliases") or []))
    return Accelerator(
        id=acc_id,
        name=str(entry["name"]),
        vendor=str(entry.get("vendor") or "unknown"),
        peak_flops=peaks,
        mem_bw=float(mem_bw) * 1e12,
        memory_bytes=memory_bytes,
        link_bw_bidir=link_bidir,
        link_bw_per_direction=link_bidir / 2 if link_bidir is not None else None,
        sm_count=sm_count,
        aliases=aliases,
        sources=tuple(str(s) for s in (entry.get("sources") or [])),
        notes=" ".join(str(entry.get("notes") or "").split()),
        peak_flops_sparse=sparse,
        memory_gb=memory_gb,
        memory_unit=unit,
        interconnect_name=link.get("name") if isinstance(link, dict) else None,
        interconnect_domain=link.get("domain") if isinstance(link, dict) else None,
        confidence=entry.get("confidence"),
        compute_unit_count=unit_count,
        compute_unit_kind=str(units.get("kind")) if isinstance(units, dict) and units.get("kind") else None,
        domain_size=int(domain_size) if domain_size is not None else None,
        nvls=bool(link.get("nvls")) if isinstance(link, dict) else False,
        axis_bw_per_direction=axis * 1e9 if axis is not None else None,
        axis_max_chips=int(link["axis_max_chips"]) if isinstance(link, dict) and isinstance(link.get("axis_max_chips"), int) else None,
        axis_wraparound_multiple=int(wrap) if wrap is not None else None,
        peer_bw_per_direction=peer * 1e9 if peer is not None else None,
        scale_out_bw_per_direction=net_gbps * 1e9 / 8 if net_gbps is not None else None,
        scale_out_name=str(scale_out.get("name")) if scale_out.get("name") else None,
        scale_out_source=str(scale_out.get("source")) if scale_out.get("source") else None,
        memory_datasheet_bytes=memory_datasheet,
        origin=origin,
        raw=dict(entry),
    )


def _norm(name: str) -> str:
    return str(name).strip().lower().replace("_", "-").replace(" ", "-")


class Catalog:
    """Accelerators by id, with aliases. `get` raises UsageError listing close matches."""

    def __init__(self, accelerators: list[Accelerator]):
        self.accelerators: dict[str, Accelerator] = {}
        self._names: dict[str, str] = {}
        for acc in accelerators:
            if acc.id in self.accelerators:
                raise UsageError(
                    f"{acc.origin}: accelerator id '{acc.id}' is already defined ({self.accelerators[acc.id].origin}); pick another id"
                )
            self.accelerators[acc.id] = acc
        for acc in accelerators:
            self._names[_norm(acc.id)] = acc.id
        for acc in accelerators:
            for alias in acc.aliases:
                key = _norm(alias)
                owner = self._names.get(key)
                if owner is not None and owner != acc.id:
                    other = self.accelerators[owner]
                    what = "id" if _norm(other.id) == key else "an alias"
                    raise UsageError(
                        f"{acc.origin}: alias '{alias}' of '{acc.id}' is already {what} of '{owner}' ({other.origin}); pick another alias"
                    )
                self._names[key] = acc.id

    def __iter__(self) -> Iterator[Accelerator]:
        return iter(self.accelerators.values())

    def __len__(self) -> int:
        return len(self.accelerators)

    def ids(self) -> list[str]:
        return list(self.accelerators)

    def names(self) -> list[str]:
        """Ids and aliases, everything `get` accepts."""
        return sorted(self._names)

    def get(self, id_or_alias: str, field: str = "gpu") -> Accelerator:
        key = _norm(id_or_alias)
        if key in self._names:
            return self.accelerators[self._names[key]]
        import difflib

        close = difflib.get_close_matches(key, self.names(), n=4, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        from studytui.calc.units import FieldError

        raise FieldError(field, f"unknown GPU {id_or_alias!r}; {hint}known: {', '.join(self.ids())} (see 'studytui gpus')")


def _load_yaml(path: Path) -> Any:
    """A hardware file, bounded in size and in YAML aliases; every problem one line naming it."""
    from studytui.core.yamlio import load_user_yaml

    return load_user_yaml(path, "a hardware file")


def _entries(data: Any, path: Path) -> list[dict[str, Any]]:
    if data is None:
        return []
    if isinstance(data, dict):
        if "accelerators" not in data:
            return [data.get("accelerator", data)]
        listed = data["accelerators"] or []
        if not isinstance(listed, list):
            raise UsageError(f"{path}: 'accelerators' must be a list of accelerators")
        return listed
    if isinstance(data, list):
        return data
    raise UsageError(f"{path}: expected a list of accelerators or one mapping")


def builtin_hardware_dir() -> Path:
    from studytui.core import paths

    candidate = paths.content_dir(None) / "hardware"
    if candidate.is_dir() and any(candidate.glob("*.yaml")):
        return candidate
    for base in (paths.PACKAGE_DIR / "_content", paths.CHECKOUT_DIR / "content"):
        if (base / "hardware").is_dir():
            return base / "hardware"
    return candidate


def user_hardware_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    from studytui.core import paths

    return paths.data_dir(data_dir) / "hardware"


# A directory's YAML files as (name, mtime in ns, size): the state a parsed catalog belongs to.
Fingerprint = tuple[tuple[str, int, int], ...]

_CACHE: dict[tuple[str, Fingerprint, str, Fingerprint], Catalog] = {}
_BUILTIN: dict[tuple[str, Fingerprint], list[Accelerator]] = {}


def _fingerprint(directory: Path) -> Fingerprint:
    try:
        files = sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml"))
    except OSError:
        return ()
    return tuple((p.name, *(file_stamp(p) or (0, -1))) for p in files)


def _builtin_accelerators(builtin: Path, files: Fingerprint) -> list[Accelerator]:
    """The shipped accelerators, parsed once per file state (each data directory, so each test
    and each `--data-dir`, used to parse them again)."""
    key = (str(builtin), files)
    cached = _BUILTIN.get(key)
    if cached is None:
        cached = []
        for path in sorted(builtin.glob("*.yaml"), key=lambda p: (p.name != "nvidia.yaml", p.name)):
            for entry in _entries(_load_yaml(path), path):
                cached.append(accelerator_from_dict(entry, "content"))
        _BUILTIN.clear()
        _BUILTIN[key] = cached
    return cached


# While a batch job holds the catalog (`held_catalogs`), each data directory's catalog is read once
# and kept: one `studytui check` sees one state of the files, and does not stat them thousands of
# times (once per problem variant).
_HELD: dict[str, Catalog] | None = None


@contextlib.contextmanager
def held_catalogs() -> Iterator[None]:
    """Within the block, `load_catalog` gives the catalog it first read for each data directory."""
    global _HELD
    outer = _HELD
    if outer is None:
        _HELD = {}
    try:
        yield
    finally:
        _HELD = outer


def load_catalog(data_dir: str | os.PathLike[str] | None = None) -> Catalog:
    """Built-in accelerators plus the user's (`<data dir>/hardware/*.yaml`). Cached per file state."""
    if _HELD is not None:
        held = _HELD.get(str(data_dir))
        if held is None:
            held = _HELD[str(data_dir)] = _load_catalog(data_dir)
        return held
    return _load_catalog(data_dir)


def _load_catalog(data_dir: str | os.PathLike[str] | None) -> Catalog:
    builtin = builtin_hardware_dir()
    user = user_hardware_dir(data_dir)
    user_files = _fingerprint(user)
    key = (str(builtin), _fingerprint(builtin), str(user), user_files)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    accelerators = list(_builtin_accelerators(builtin, key[1]))
    if user.is_dir():
        for name, _mtime, _size in user_files:
            path = user / name
            for entry in _entries(_load_yaml(path), path):
                accelerators.append(accelerator_from_dict(entry, str(path)))
    catalog = Catalog(accelerators)
    _CACHE.clear()
    _CACHE[key] = catalog
    return catalog
