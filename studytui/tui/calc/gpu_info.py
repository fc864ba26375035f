"""What the GPU picker shows about an accelerator: vendor peaks with sources, measured figures.

No Textual here. Figures come from the catalog (studytui.calc.hardware) and, where a measured
profile exists, from studytui.calc.profiles; this module only selects and formats them.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from studytui.calc.dtypes import DTYPES, peak_keys
from studytui.calc.hardware import VENDOR_PEAK_LABEL, Accelerator, memory_text
from studytui.calc.units import format_flops_rate, format_percent, format_rate
from studytui.core.errors import StudyError


def available_dtypes(acc: Accelerator | None, candidates: Sequence[str] = DTYPES) -> list[str]:
    """Precisions the calculators can run on this GPU (those it has a dense vendor peak for), out
    of `candidates` (a field's own choices: the tile calculator's include the block-scaled kinds)."""
    if acc is None:
        return list(candidates)
    # Block-scaled kinds (mxfp8, mxfp6, mxfp4, nvfp4) are tcgen05 kinds: Blackwell only (wgmma has
    # no scale-factor operands), though an fp8 peak would price mxfp8 on Hopper too.
    blackwell = "blackwell" in str(acc.raw.get("arch") or "").lower()
    return [d for d in candidates if any(key in acc.peak_flops for key in peak_keys(d))
            and (blackwell or not d.startswith(("mx", "nv")))]


def measured_for(acc: Accelerator, data_dir: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """The measured profile summary for `acc`, or None when there is none (or it cannot be read)."""
    from studytui.calc.profiles import measured_summary

    try:
        return measured_summary(acc, data_dir)
    except (StudyError, OSError, ValueError, KeyError, TypeError):
        return None


def search_text(acc: Accelerator) -> str:
    return " ".join([acc.id, acc.name, acc.vendor, *acc.aliases]).lower()


def matches(acc: Accelerator, query: str) -> bool:
    """Every word of the query appears in the id, name, vendor or an alias."""
    text = search_text(acc)
    return all(word in text for word in query.lower().split())


def _measured_peak(measured: dict[str, Any] | None, dtype: str) -> tuple[float | None, float | None]:
    if not measured:
        return None, None
    peaks = measured.get("peak_flops") or {}
    ratios = measured.get("ratios") or {}
    for key in (dtype, *peak_keys(dtype)):
        if peaks.get(key):
            return float(peaks[key]), ratios.get(key)
    return None, None


def _ratio_text(value: float | None, ratio: float | None, fmt, short: bool = False) -> str:
    if value is None:
        return "-"
    return fmt(value) + (f" ({format_percent(ratio)}{'' if short else ' of vendor'})" if ratio else "")


def figure_rows(acc: Accelerator, measured: dict[str, Any] | None, short: bool = False) -> list[tuple[str, str, str]]:
    """(figure, vendor peak, measured) rows for the picker's table. `short`: a measured figure's
    share of the vendor peak as "(72.2%)", for a narrow table whose heading says what it is."""
    rows: list[tuple[str, str, str]] = []

    def measured_text(value: float | None, ratio: float | None, fmt: Any) -> str:
        return _ratio_text(value, ratio, fmt, short)

    for dtype in available_dtypes(acc):
        key = next(k for k in peak_keys(dtype) if k in acc.peak_flops)
        value, ratio = _measured_peak(measured, dtype)
        name = dtype if key == dtype else f"{dtype} ({key})"
        rows.append((f"peak {name}", format_flops_rate(acc.peak_flops[key]), measured_text(value, ratio, format_flops_rate)))
    ratios = (measured or {}).get("ratios") or {}
    rows.append(
        ("memory bandwidth", format_rate(acc.mem_bw), measured_text((measured or {}).get("mem_bw"), ratios.get("mem_bw"), format_rate))
    )
    if acc.link_bw_per_direction is not None:
        rows.append((
            "link, per direction",
            f"{format_rate(acc.link_bw_per_direction)} ({acc.interconnect_name or 'scale-up'})",
            measured_text((measured or {}).get("link_bw_per_direction"), ratios.get("link_bw_per_direction"), format_rate),
        ))
    if (memory := memory_text(acc)) is not None:
        rows.append(("memory", memory, ""))
    if acc.sm_count:
        rows.append(("SMs", str(acc.sm_count), ""))
    return rows


def provenance_lines(acc: Accelerator, measured: dict[str, Any] | None) -> list[str]:
    """Where the figures come from: the vendor sources, and the measured profile if any."""
    lines = [f"Vendor figures are dense peaks ({VENDOR_PEAK_LABEL})."]
    lines += [f"source: {src}" for src in acc.sources] or ["source: none recorded"]
    if acc.confidence:
        lines.append(f"confidence: {acc.confidence}")
    if acc.is_user:
        lines.append(f"your own accelerator file: {acc.origin}")
    if measured:
        lines.append(f"measured: {measured.get('source', 'profile')}")
    else:
        lines.append("measured: no profile for this GPU (run 'studytui measure' on one)")
    if acc.notes:
        lines.append(f"notes: {acc.notes}")
    return lines
