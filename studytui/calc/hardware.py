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
from pathlib import Path
from typing import Any, Iterator

from studytui.core.errors import UsageError
from studytui.core.filestate import file_stamp
from studytui.core.records import FrozenRecord

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


# A plain class (studytui.core.records), not a frozen dataclass: every command that names a GPU
# imports this module, and on Python 3.11 a dataclass's generated methods cost about a millisecond
# each time it does (issue 27).
class Accelerator(FrozenRecord):
    """One accelerator of the catalog: its vendor peaks in SI units, and the entry they came from."""

    __slots__ = ("id", "name", "vendor", "peak_flops", "mem_bw", "memory_bytes", "link_bw_bidir", "link_bw_per_direction",
                 "sm_count", "aliases", "sources", "notes", "peak_flops_sparse", "memory_gb", "memory_unit", "interconnect_name",
                 "interconnect_domain", "confidence", "compute_unit_count", "compute_unit_kind", "domain_size", "nvls",
                 "axis_bw_per_direction", "axis_max_chips", "axis_wraparound_multiple", "peer_bw_per_direction",
                 "scale_out_bw_per_direction", "scale_out_name", "scale_out_source", "memory_datasheet_bytes", "origin", "raw")

    id: str
    name: str
    vendor: str
    peak_flops: dict[str, float]  # dense FLOP/s (int8: OP/s) per precision key
    mem_bw: float  # bytes/s (decimal TB/s * 1e12)
    memory_bytes: float | None  # vendor "GB" read as GiB (see README)
    link_bw_bidir: float | None  # bytes/s, both directions summed
    link_bw_per_direction: float | None  # bytes/s, one way (= bidir / 2)
    sm_count: int | None
    aliases: tuple[str, ...]
    sources: tuple[str, ...]
    notes: str
    peak_flops_sparse: dict[str, float]
    memory_gb: float | None
    memory_unit: str
    interconnect_name: str | None
    interconnect_domain: str | None
    confidence: str | None
    compute_unit_count: int | None  # SMs (NVIDIA) or CUs (AMD): what GEMM tiles are spread over
    compute_unit_kind: str | None
    domain_size: int | None  # accelerators in one scale-up domain (NVLink/NVSwitch, ...)
    nvls: bool  # NVLink SHARP (in-switch reduction) available
    axis_bw_per_direction: float | None  # torus systems: one-way B/s of a ring along one axis
    axis_max_chips: int | None  # torus systems: the most chips one axis holds
    axis_wraparound_multiple: int | None  # torus systems: an axis has a wraparound link when its length is a multiple of this
    peer_bw_per_direction: float | None  # point-to-point mesh: B/s one way over the link(s) to ONE peer
    scale_out_bw_per_direction: float | None  # network B/s per accelerator, one way
    scale_out_name: str | None
    scale_out_source: str | None
    memory_datasheet_bytes: float | None  # the datasheet capacity when memory_bytes is device-reported
    origin: str  # "content" or the path of a user file
    raw: dict[str, Any]  # the entry as the file gives it (not compared, not in the repr)

    def __init__(
        self,
        id: str,
        name: str,
        vendor: str,
        peak_flops: dict[str, float],
        mem_bw: float,
        memory_bytes: float | None,
        link_bw_bidir: float | None,
        link_bw_per_direction: float | None,
        sm_count: int | None,
        aliases: tuple[str, ...] = (),
        sources: tuple[str, ...] = (),
        notes: str = "",
        peak_flops_sparse: dict[str, float] | None = None,
        memory_gb: float | None = None,
        memory_unit: str = "GB",
        interconnect_name: str | None = None,
        interconnect_domain: str | None = None,
        confidence: str | None = None,
        compute_unit_count: int | None = None,
        compute_unit_kind: str | None = None,
        domain_size: int | None = None,
        nvls: bool = False,
        axis_bw_per_direction: float | None = None,
        axis_max_chips: int | None = None,
        axis_wraparound_multiple: int | None = None,
        peer_bw_per_direction: float | None = None,
        scale_out_bw_per_direction: float | None = None,
        scale_out_name: str | None = None,
        scale_out_source: str | None = None,
        memory_datasheet_bytes: float | None = None,
        origin: str = "content",
        raw: dict[str, Any] | None = None,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "vendor", vendor)
        object.__setattr__(self, "peak_flops", peak_flops)
        object.__setattr__(self, "mem_bw", mem_bw)
        object.__setattr__(self, "memory_bytes", memory_bytes)
        object.__setattr__(self, "link_bw_bidir", link_bw_bidir)
        object.__setattr__(self, "link_bw_per_direction", link_bw_per_direction)
        object.__setattr__(self, "sm_count", sm_count)
        object.__setattr__(self, "aliases", aliases)
        object.__setattr__(self, "sources", sources)
        object.__setattr__(self, "notes", notes)
        object.__setattr__(self, "peak_flops_sparse", {} if peak_flops_sparse is None else peak_flops_sparse)
        object.__setattr__(self, "memory_gb", memory_gb)
        object.__setattr__(self, "memory_unit", memory_unit)
        object.__setattr__(self, "interconnect_name", interconnect_name)
        object.__setattr__(self, "interconnect_domain", interconnect_domain)
        object.__setattr__(self, "confidence", confidence)
        object.__setattr__(self, "compute_unit_count", compute_unit_count)
        object.__setattr__(self, "compute_unit_kind", compute_unit_kind)
        object.__setattr__(self, "domain_size", domain_size)
        object.__setattr__(self, "nvls", nvls)
        object.__setattr__(self, "axis_bw_per_direction", axis_bw_per_direction)
        object.__setattr__(self, "axis_max_chips", axis_max_chips)
        object.__setattr__(self, "axis_wraparound_multiple", axis_wraparound_multiple)
        object.__setattr__(self, "peer_bw_per_direction", peer_bw_per_direction)
        object.__setattr__(self, "scale_out_bw_per_direction", scale_out_bw_per_direction)
        object.__setattr__(self, "scale_out_name", scale_out_name)
        object.__setattr__(self, "scale_out_source", scale_out_source)
        object.__setattr__(self, "memory_datasheet_bytes", memory_datasheet_bytes)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "raw", {} if raw is None else raw)

    # As the dataclass it was: the entry it came from (`raw`, last) is neither compared nor shown.
    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__[:-1])

    def __repr__(self) -> str:
        return "Accelerator(" + ", ".join(f"{name}={value!r}" for name, value in zip(self.__slots__, self._values())) + ")"

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
    """A hardware file, bounded in size and in YAML aliases; every problem one line naming it.
    Kept parsed between runs while the file is unchanged (studytui.calc.parsed): the entries are
    checked by `accelerator_from_dict` on every load all the same."""
    from studytui.calc.parsed import parsed_yaml

    return parsed_yaml(path, "hardware", _parse_yaml)


def _parse_yaml(path: Path) -> Any:
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
    from studytui.calc.parsed import yaml_files

    if candidate.is_dir() and yaml_files(candidate):
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
        from studytui.calc.parsed import Batch, yaml_files

        paths = sorted(yaml_files(builtin), key=lambda p: (p.name != "nvidia.yaml", p.name))
        # The accelerators these files make are kept between runs (studytui.calc.parsed), as plain
        # values: read back, every value is checked for the type its field holds (_from_kept), and
        # a wrong one means the files are parsed and checked again, as when any of them changed.
        batch = Batch(paths, "accelerators", _KEPT_CODE)
        cached = _from_kept(batch.value)
        if cached is None:
            batch.start()
            cached = []
            for path in paths:
                for entry in _entries(_parse_yaml(path), path):
                    cached.append(accelerator_from_dict(entry, "content"))
            batch.keep([_kept(acc) for acc in cached])
        _BUILTIN.clear()
        _BUILTIN[key] = cached
    return cached


# The code that decides what a kept accelerator holds (within the package).
_KEPT_CODE = ("calc/hardware.py", "calc/units.py", "core/records.py")

# What each field of a kept accelerator may hold, in Accelerator.__slots__ order: text, a number
# (a float, as `_num` makes every figure), a count, a flag, a list of texts (a tuple when rebuilt),
# a mapping of text to figure, "?" after a kind for None too; "any": a value of the entry as the
# file gives it (any plain value).
_KEPT_KINDS = (
    "text", "text", "text", "figures", "number", "number?", "number?", "number?", "count?", "texts", "texts", "text",
    "figures", "number?", "text", "any", "any", "any", "count?", "text?", "count?", "flag", "number?", "count?", "count?",
    "number?", "number?", "text?", "text?", "number?", "text", "entry",
)


def _kept(acc: Accelerator) -> list[Any]:
    """An accelerator as plain values, for the cache (the entry it came from last, as it is)."""
    return [list(value) if isinstance(value, tuple) else value for value in (getattr(acc, name) for name in acc.__slots__)]


def _kept_value(value: Any, kind: str) -> Any:
    """`value` as field kind `kind` holds it; ValueError when it is not one."""
    if value is None and kind.endswith("?"):
        return None
    base = kind.rstrip("?")
    if base == "any":
        return value
    if base == "text" and type(value) is str:
        return value
    if base == "number" and type(value) is float:
        return value
    if base == "count" and type(value) is int:
        return value
    if base == "flag" and type(value) is bool:
        return value
    if base == "texts" and type(value) is list and all(type(v) is str for v in value):
        return tuple(value)
    if base == "figures" and type(value) is dict and all(type(v) is float for v in value.values()):
        return value
    if base == "entry" and type(value) is dict:
        return value
    raise ValueError(kind)


def _from_kept(rows: Any) -> list[Accelerator] | None:
    """Accelerators rebuilt from kept rows, each value checked; None when anything is off."""
    if type(rows) is not list:
        return None
    out = []
    for row in rows:
        if type(row) is not list or len(row) != len(_KEPT_KINDS):
            return None
        try:
            out.append(Accelerator(*(_kept_value(v, k) for v, k in zip(row, _KEPT_KINDS))))
        except ValueError:
            return None
    return out


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
