"""Find the vendor figures a measurement is compared with: the hardware catalog entry whose
name matches the GPU the driver reports.

The catalog lives in `content/hardware/` (written for the calculators). This reader is tolerant
of its layout (a list of entries, one entry per file, or an `accelerators:` list) and of the unit
of the peaks (`peak_tflops` in TFLOP/s or `peak_flops` in FLOP/s).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from studytui.core.records import Record

# Names the driver reports that do not share their tokens with the catalog's marketing names.
DEVICE_NAME_ALIASES = {
    "nvidia h200": "h200-sxm",
    "nvidia h100 80gb hbm3": "h100-sxm",
    "nvidia h100 pcie": "h100-pcie",
    "nvidia a100-sxm4-80gb": "a100-sxm-80gb",
    "nvidia a100-pcie-40gb": "a100-pcie-40gb",
    "nvidia b200": "b200-hgx",
}
_VENDOR_WORDS = {"nvidia", "amd", "intel", "google"}


# A plain class, not a dataclass: on Python 3.11 a dataclass's generated methods cost about a
# millisecond each time its module is imported (issue 27).
class VendorFigures(Record):
    __slots__ = ("id", "name", "peak_flops", "mem_bw", "link_bw_per_direction", "sources")

    id: str
    name: str
    peak_flops: dict[str, float]  # dtype -> FLOP/s, dense
    mem_bw: float | None  # B/s
    link_bw_per_direction: float | None  # B/s, one way (catalog figures are bidirectional)
    sources: list[str]

    def __init__(
        self,
        id: str,
        name: str,
        peak_flops: dict[str, float] | None = None,
        mem_bw: float | None = None,
        link_bw_per_direction: float | None = None,
        sources: list[str] | None = None,
    ) -> None:
        self.id = id
        self.name = name
        self.peak_flops = {} if peak_flops is None else peak_flops
        self.mem_bw = mem_bw
        self.link_bw_per_direction = link_bw_per_direction
        self.sources = [] if sources is None else sources


def _tokens(text: str) -> set[str]:
    return {t for t in re.split(r"[^a-z0-9]+", text.lower()) if t}


def _entries_in(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, list):
        return [d for d in data if isinstance(d, dict) and "id" in d]
    if isinstance(data, dict):
        if isinstance(data.get("accelerators"), list):
            return _entries_in(data["accelerators"])
        if "id" in data:
            return [data]
    return []


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):  # {value: ..., source: ...}
        return _number(value.get("value"))
    return None


def figures_from_entry(entry: dict[str, Any]) -> VendorFigures:
    peaks: dict[str, float] = {}
    if isinstance(entry.get("peak_tflops"), dict):
        for dtype, value in entry["peak_tflops"].items():
            number = _number(value)
            if number is not None:
                peaks[str(dtype)] = number * 1e12
    if isinstance(entry.get("peak_flops"), dict):
        for dtype, value in entry["peak_flops"].items():
            number = _number(value)
            if number is not None:
                peaks[str(dtype)] = number
    mem_bw: float | None
    bw_tbs = _number(entry.get("memory_bw_tbs"))
    if bw_tbs is not None:
        mem_bw = bw_tbs * 1e12
    else:
        mem_bw = _number(entry.get("mem_bw"))
    link = None
    interconnect = entry.get("interconnect")
    link_gbs = _number(interconnect.get("bw_gbs")) if isinstance(interconnect, dict) else None
    if link_gbs is not None:
        link = link_gbs * 1e9 / 2
    sources = entry.get("sources") or []
    return VendorFigures(
        id=str(entry["id"]),
        name=str(entry.get("name", entry["id"])),
        peak_flops=peaks,
        mem_bw=mem_bw,
        link_bw_per_direction=link,
        sources=[str(s) for s in sources] if isinstance(sources, list) else [str(sources)],
    )


def load_catalog(paths: list[Path]) -> list[VendorFigures]:
    """Every accelerator entry in the YAML files (or folders of them) given; unreadable files skipped."""
    import yaml

    from studytui.core import fileio
    from studytui.core.yamlio import safe_load

    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.glob("*.yaml") if p.is_file()))
        elif path.is_file():
            files.append(path)
    entries: list[VendorFigures] = []
    for file in files:
        try:
            data = safe_load(fileio.read_text_bounded(file, fileio.YAML_LIMIT, "a hardware file"))
        except (OSError, UnicodeDecodeError, fileio.RefusedFileError, yaml.YAMLError):
            continue
        for entry in _entries_in(data):
            try:
                entries.append(figures_from_entry(entry))
            except (TypeError, ValueError):
                continue
    return entries


def match_device(device_name: str, catalog: list[VendorFigures]) -> VendorFigures | None:
    """The catalog entry for a driver-reported device name, or None if none matches uniquely."""
    by_id = {entry.id: entry for entry in catalog}
    alias = DEVICE_NAME_ALIASES.get(device_name.strip().lower())
    if alias in by_id:
        return by_id[alias]
    wanted = _tokens(device_name) - _VENDOR_WORDS
    if not wanted:
        return None
    matches = [e for e in catalog if wanted <= (_tokens(e.name) | _tokens(e.id))]
    return matches[0] if len(matches) == 1 else None


def default_catalog_paths(content_override: str | None = None, data_override: str | None = None) -> list[Path]:
    from studytui.core.paths import content_dir, data_dir

    paths = [content_dir(content_override) / "hardware"]
    try:
        paths.append(data_dir(data_override) / "hardware")
    except Exception:  # an unusable data dir only means no user-added accelerators
        pass
    return paths
