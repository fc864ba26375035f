"""The accelerator catalog: vendor peak figures from content/hardware/*.yaml plus user files.

Every figure here is a vendor peak (dense, no sparsity), never a measurement. Units after loading
are SI: FLOP/s, B/s, bytes. Interconnect figures in the content files are the BIDIRECTIONAL total
per accelerator; `link_bw_per_direction` is half of that, which is what ring collectives and
nccl-tests bus bandwidth are compared against.

User accelerators: YAML files in `<data dir>/hardware/` with the same fields as the content files
(at least id, name, peak_tflops, memory_bw_tbs).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studytui.errors import UsageError

GIB = 2.0**30
VENDOR_PEAK_LABEL = "vendor peak, not a measurement"


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
            "sm_count": self.sm_count,
            "confidence": self.confidence,
            "sources": list(self.sources),
            "notes": self.notes,
            "origin": self.origin,
            "spec": self.raw,
        }


def _num(value: Any, where: str, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where}: {name} must be a number, got {value!r}")
    if value <= 0 or value != value or value in (float("inf"), float("-inf")):
        raise UsageError(f"{where}: {name} must be a positive finite number, got {value!r}")
    return float(value)


def accelerator_from_dict(entry: dict[str, Any], origin: str = "content") -> Accelerator:
    """Build an Accelerator from one content/user YAML mapping (units as the vendor prints them)."""
    where = origin if origin != "content" else f"content/hardware ({entry.get('id', '?')})"
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: each accelerator must be a mapping")
    for key in ("id", "name", "peak_tflops", "memory_bw_tbs"):
        if entry.get(key) in (None, "", {}):
            raise UsageError(f"{where}: missing required field '{key}'")
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
    memory_gb = _num(entry.get("memory_gb"), where, "memory_gb")
    unit = str(entry.get("memory_unit") or "GB")
    # Vendors print HBM/GDDR capacity in "GB" that is close to GiB (H200 "141GB" reports
    # 140.4 GiB), so both units are read as 2^30 bytes; see content/hardware/README.md.
    memory_bytes = memory_gb * GIB if memory_gb is not None else None
    link = entry.get("interconnect") or {}
    bidir_gbs = _num(link.get("bw_gbs"), where, "interconnect.bw_gbs") if isinstance(link, dict) else None
    one_way_gbs = _num(link.get("bw_gbs_per_direction"), where, "interconnect.bw_gbs_per_direction") if isinstance(link, dict) else None
    if bidir_gbs is None and one_way_gbs is not None:
        bidir_gbs = 2 * one_way_gbs
    link_bidir = bidir_gbs * 1e9 if bidir_gbs is not None else None
    units = entry.get("compute_units") or {}
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
                raise UsageError(f"{acc.origin}: accelerator id '{acc.id}' is already defined ({self.accelerators[acc.id].origin}); pick another id")
            self.accelerators[acc.id] = acc
        for acc in accelerators:
            self._names[_norm(acc.id)] = acc.id
        for acc in accelerators:
            for alias in acc.aliases:
                self._names.setdefault(_norm(alias), acc.id)

    def __iter__(self):
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
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.load(handle, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{path}{line}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: cannot read (not UTF-8 text)") from None


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
    from studytui import paths

    candidate = paths.content_dir(None) / "hardware"
    if candidate.is_dir() and any(candidate.glob("*.yaml")):
        return candidate
    for base in (paths.PACKAGE_DIR / "_content", paths.CHECKOUT_DIR / "content"):
        if (base / "hardware").is_dir():
            return base / "hardware"
    return candidate


def user_hardware_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    from studytui import paths

    return paths.data_dir(data_dir) / "hardware"


_CACHE: dict[tuple, Catalog] = {}


def _fingerprint(directory: Path) -> tuple:
    try:
        files = sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml"))
    except OSError:
        return ()
    return tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files)


def load_catalog(data_dir: str | os.PathLike[str] | None = None) -> Catalog:
    """Built-in accelerators plus the user's (`<data dir>/hardware/*.yaml`). Cached per file state."""
    builtin = builtin_hardware_dir()
    user = user_hardware_dir(data_dir)
    key = (str(builtin), str(user), _fingerprint(user))
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    accelerators: list[Accelerator] = []
    for path in sorted(builtin.glob("*.yaml"), key=lambda p: (p.name != "nvidia.yaml", p.name)):
        for entry in _entries(_load_yaml(path), path):
            accelerators.append(accelerator_from_dict(entry, "content"))
    if user.is_dir():
        for name, _mtime, _size in key[2]:
            path = user / name
            for entry in _entries(_load_yaml(path), path):
                accelerators.append(accelerator_from_dict(entry, str(path)))
    catalog = Catalog(accelerators)
    _CACHE.clear()
    _CACHE[key] = catalog
    return catalog
