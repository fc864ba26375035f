"""A report as the front ends show it, shared by the command line and the app:

- the `studytui profile --json` object: SI units (seconds, bytes, FLOPs, FLOP/s, B/s), None (null)
  for what the file does not give, and the reason beside every unknown. Keys the issue names:
  "kernels", each with "name" (full), "range", "duration_s", "dram_bytes", "flops", "intensity",
  "bound"; "ranges", each with "name", "duration_s" (the sum of its kernels' GPU time) and
  "gemm_flops";
- everything about one kernel as (label, value) rows (`kernel_rows`: `--kernel N`, the app's
  detail pane);
- what to read about a kernel's limiter: content/profile-advice.yaml maps a kernel's kind (GEMM,
  attention, elementwise...), its limiter and its side of the ridge point to guide entries
  (`load_advice`, `AdviceBook.rule_for`; `studytui check` runs `check_advice`);
- the GEMM calculator's inputs from a trace kernel's shapes (`gemm_try_it`).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from studytui.core.filestate import PerFileState
from studytui.core.records import FrozenRecord
from studytui.profile.analyze import (
    LIMITER_THRESHOLD,
    RANGE_SEPARATOR,
    KernelResult,
    RangeResult,
    Report,
    clock_used,
    clock_warning,
)
from studytui.profile.model import Kernel

if TYPE_CHECKING:
    from studytui.guide.model import Guide

SCHEMA = "studytui-profile/1"


def _num(x: float | None) -> float | None:
    if x is None:
        return None
    return float(x) if math.isfinite(x) else None


def _range(r: RangeResult) -> dict[str, Any]:
    t = r.duration_s
    return {
        "name": r.name,
        "depth": r.depth,
        "kernels": r.kernels,
        "duration_s": t,
        "gemm_flops": r.gemm_flops if r.kernels > r.gemm_unknown else None,
        "gemm_flops_unknown_kernels": r.gemm_unknown,
        "flops": r.flops if r.kernels > r.flops_unknown else None,
        "flops_unknown_kernels": r.flops_unknown,
        "dram_bytes": r.dram_bytes if r.kernels > r.bytes_unknown else None,
        "dram_bytes_unknown_kernels": r.bytes_unknown,
        "time_by_bound_s": dict(r.time_by_bound),
        "share_by_bound": {b: (v / t if t > 0 else None) for b, v in r.time_by_bound.items()},
    }


def kernel_json(r: KernelResult) -> dict[str, Any]:
    k = r.kernel
    return {
        "index": k.index,
        "name": k.name,
        "short_name": r.short_name,
        "range": r.range_name,
        "range_path": list(k.range),
        "duration_s": _num(k.duration_s),
        "duration_source": k.duration_source,
        "dram_bytes": _num(k.dram_bytes),
        "dram_read_bytes": _num(k.dram_read_bytes),
        "dram_write_bytes": _num(k.dram_write_bytes),
        "dram_bytes_source": k.bytes_source,
        "dram_bytes_estimate": _num(r.dram_bytes_estimate),
        "dram_bytes_estimate_source": r.estimate_source or None,
        "flops": _num(k.flops),
        "flops_by_precision": {c: _num(v) for c, v in k.flops_by_class.items()},
        "flops_source": k.flops_source,
        "flops_counted": k.flops_counted,
        "gemm_flops": _num(k.gemm_flops),
        "attention_flops": _num(k.attention_flops),
        "model_bytes": _num(k.model_bytes),
        "intensity": _num(r.intensity),
        "model_intensity": _num(r.model_intensity),
        "achieved_flops": _num(r.achieved_flops),
        "achieved_bw": _num(r.achieved_bw),
        "peak_precision": r.peak.key if r.peak else None,
        "peak_flops": _num(r.peak.value) if r.peak else None,
        "peak_flops_source": r.peak.label if r.peak else None,
        "fraction_of_peak_flops": _num(r.fraction_of_peak),
        "fraction_of_bandwidth": _num(r.fraction_of_bw),
        "ridge_point": _num(r.ridge),
        "vendor_peak_flops": _num(r.peak.vendor) if r.peak else None,
        "fraction_of_vendor_peak_flops": _num(r.vendor_fraction_of_peak),
        "fraction_of_vendor_bandwidth": _num(r.vendor_fraction_of_bw),
        "vendor_ridge_point": _num(r.vendor_ridge),
        "peak_flops_at_clock": _num(r.peak_at_clock),
        "fraction_of_peak_at_clock": _num(r.fraction_at_clock),
        "roof_fraction": _num(r.roof_fraction),
        "bound": r.bound,
        "bound_reason": r.bound_reason,
        "physics_floor_s": _num(r.floor_s),
        "physics_floor_basis": r.floor_basis or None,
        "physics_floor_parts": list(r.floor_parts),
        "physics_floor_missing": r.floor_missing or None,
        "physically_possible": r.physically_possible,
        "physically_impossible_reason": r.impossible_reason or None,
        "speed_of_light_pct": dict(k.sol),
        "sm_clock_hz": _num(k.sm_clock_hz),
        "boost_clock_hz": _num(k.boost_clock_hz),
        "waves": _num(k.waves),
        "process_id": k.process_id or None,
        "process_name": k.process_name or None,
        "device": k.device or None,
        "compute_capability": k.compute_capability or None,
        "launch_id": k.launch_id or None,
        "stream": k.stream or None,
        "grid": k.grid or None,
        "block": k.block or None,
        "op": k.op or None,
        "op_shapes": k.op_shapes,
        "op_types": k.op_types,
        "flops_counted_on_kernel": k.flops_owner,
        "notes": list(k.notes),
        "ncu_rules": list(k.rules),
    }


def to_json(report: Report, kernels: bool = True) -> dict[str, Any]:
    """The whole object; kernels=False leaves "kernels" out (a caller streams them: kernel_json)."""
    c = report.capture
    ce = report.ceilings
    gpu: dict[str, Any] | None = None
    if ce is not None:
        used = sorted({r.peak.key: r.peak for r in report.kernels if r.peak}.values(), key=lambda p: p.key)
        gpu = {
            "id": ce.accelerator.id if ce.accelerator else ce.gpu,
            "name": ce.accelerator.name if ce.accelerator else None,
            "profile": ce.profile,
            "how_chosen": report.gpu_note,
            "mem_bw": ce.mem_bw,
            "mem_bw_source": ce.mem_label,
            "limit_mem_bw": ce.limit_mem_bw,
            "peaks_used": {p.key: {"flops": p.value, "source": p.label, "limit": p.limit} for p in used},
        }
    return {
        "schema": SCHEMA,
        "file": c.path,
        "format": c.format,
        "format_label": c.format_label,
        "metric_set": c.metric_set,
        "dram_bytes_how": c.bytes_how or None,
        "devices": c.devices,
        "processes": [{"pid": pid or None, "name": name or None} for pid, name in c.processes],
        "record_shapes": c.record_shapes,
        "gpu": gpu,
        "gpu_note": report.gpu_note,
        "recorded_on": report.recorded_on,
        "limiter_threshold": LIMITER_THRESHOLD,
        "range_separator": RANGE_SEPARATOR,
        "total": _range(report.total),
        "ranges": [_range(r) for r in report.ranges],
        "other_gpu_time_s": c.other_gpu_time_s,
        "notes": report.notes,
        "warnings": report.warnings,
        **({"kernels": [kernel_json(r) for r in report.kernels]} if kernels else {}),
    }


# -- figures for people, shared by the command line and the app -----------------------------------
def time_text(x: float | None) -> str:
    """A duration to 3 digits ('1.37 ms'), '?' when unknown."""
    from studytui.calc.units import format_time

    # Rounded to 3 digits first: 999.6 us is "1 ms", not "1e+03 us".
    return "?" if x is None or not math.isfinite(x) else format_time(float(f"{x:.3g}"), 3)


def si_text(x: float | None, unit: str) -> str:
    """'1.43 TFLOP', '814 TFLOP/s', '3.67 GB', '4.8 TB/s' (3 digits), '?' when unknown."""
    from studytui.calc import units

    formats = {"FLOP": units.format_flops, "FLOP/s": units.format_flops_rate, "B": units.format_size, "B/s": units.format_rate}
    # Rounded to 3 digits first: 999.6 GB/s is "1 TB/s", not "1e+03 GB/s".
    return "?" if x is None or not math.isfinite(x) else formats[unit](float(f"{x:.3g}"), 3)


def compact(x: float | None, scale: float = 1.0) -> str:
    """3 significant digits, thousands separated: '4,830', '1,000' (999.6 rounds up to it), '0.171';
    never '1e+03'. '?' when unknown."""
    if x is None or not math.isfinite(x / scale):
        return "?"
    v = float(f"{x / scale:.3g}")
    if 1000 <= abs(v) < 1e9:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def intensity_of(r: KernelResult) -> tuple[float | None, bool]:
    """(FLOP/B, from the shapes): the counters' intensity, else a trace's FLOPs over the least
    bytes of the op's shapes, an upper bound (the kernel moved at least those bytes)."""
    if r.intensity is not None:
        return r.intensity, False
    return r.model_intensity, r.model_intensity is not None


AT_MOST = "≤"
AT_MOST_MEANS = ("at most: the shapes' FLOPs over the least bytes they take (inputs and output once); the kernel moved "
                 "at least those bytes, so its intensity is no higher")


def intensity_cell(r: KernelResult) -> str:
    """'809', '≤1,250' (from a trace's shapes: an upper bound), '?'."""
    x, from_shapes = intensity_of(r)
    return (AT_MOST if from_shapes else "") + compact(x)


def bound_cell(r: KernelResult) -> str:
    return r.bound + ("!" if r.physically_possible is False else "")


def kernel_cells(r: KernelResult, shown_time: float | None = None) -> dict[str, str]:
    """One kernel's figures as the tables show them, by column id: index, time, share (of
    `shown_time`), intensity, flops (TFLOP/s), bw (GB/s), bound. Names are the caller's (each
    cuts them to its width: `distinct_cuts`)."""
    share = (r.kernel.duration_s or 0.0) / shown_time if shown_time else None
    return {
        "index": str(r.kernel.index),
        "time": time_text(r.kernel.duration_s),
        "share": "?" if share is None else (f"{share:.0%}" if share >= 0.01 else "<1%"),
        "intensity": intensity_cell(r),
        "flops": compact(r.achieved_flops, 1e12),
        "bw": compact(r.achieved_bw, 1e9),
        "bound": bound_cell(r),
    }


def share_parts(time_by_bound: dict[str, float], total: float) -> list[str]:
    """Every limiter that holds kernel time, largest share first: ['compute 82%', 'memory 14%',
    'latency 4%'] (below half a percent: '<1%')."""
    if total <= 0:
        return []
    parts = sorted(((v / total, b) for b, v in time_by_bound.items() if v > 0), key=lambda sb: (-sb[0], sb[1]))
    return [f"{b} {s:.0%}" if s >= 0.005 else f"{b} <1%" for s, b in parts]


def share_text(time_by_bound: dict[str, float], total: float) -> str:
    """The share of the time by limiter, every class: 'compute 82%, memory 14%, latency 4%'."""
    return ", ".join(share_parts(time_by_bound, total)) or "no kernel time"


def partial(value: float, unknown: int, count: int, unit: str) -> str:
    """A sum over kernels: '?' when none is known, '≥ X' when some are not."""
    if unknown >= count:
        return "?"
    return ("≥" if unknown else "") + si_text(value, unit)


_ESCAPED = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})")  # what core.text.one_line writes


def middle_cut(text: str, width: int, head: int | None = None) -> str:
    """`text` in at most `width` characters, its middle replaced by '…' (`head`: characters kept
    in front). An escaped control character ('\\x1b', '\\u202e') is kept whole or left out, never
    cut into something that reads as other text."""
    if len(text) <= width:
        return text
    keep = max(0, width - 1)
    head = (keep + 1) // 2 if head is None else head
    tail = len(text) - (keep - head)
    for m in _ESCAPED.finditer(text):
        if m.start() < head < m.end():
            head = m.start()
        if m.start() < tail < m.end():
            tail = m.end()
    return text[:head] + "…" + text[tail:]


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def distinct_cuts(names: Iterable[str], width: int) -> dict[str, str]:
    """Each name cut to `width` in the middle, no two distinct names to the same text. Where the
    even cut of a name would read like another's, the cut keeps the part where they differ (the
    name from its first differing character on, after as much of the start as fits), else moves
    along the name until it differs. A name that cannot be told apart in `width` characters keeps
    its whole text (the caller folds it)."""
    unique = sorted(set(names))
    out = {n: n for n in unique if len(n) <= width}
    long = [n for n in unique if len(n) > width]
    keep = max(0, width - 1)
    balanced = (keep + 1) // 2
    even = {n: middle_cut(n, width) for n in long}
    group: dict[str, list[str]] = {}
    for n in unique:
        group.setdefault(even.get(n, n), []).append(n)
    taken = set(out)
    for name in long:
        others = [o for o in group[even[name]] if o != name]
        heads: list[int] = []
        if others:  # the even cut is another's too: show where this name differs from them
            first_difference = max(_common(name, o) for o in others)
            heads.append(keep - (len(name) - first_difference))
        heads += sorted(range(keep + 1), key=lambda h: (abs(h - balanced), -h))
        chosen = name
        for head in heads:
            if not 0 <= head <= keep:
                continue
            cut = middle_cut(name, width, head)
            if cut not in taken and (head != balanced or not others):
                chosen = cut
                break
        out[name] = chosen
        taken.add(chosen)
    return out


# -- one kernel for people: the CLI's `--kernel N` and the app's detail pane ---------------------
def kernel_rows(report: Report, index: int) -> list[tuple[str, str]]:
    """(label, value) for everything about kernel `index`: the rows `studytui profile FILE --kernel
    N` prints and the app's detail pane shows. Values are the file's text as it is (names,
    ranges): each front end escapes control characters its own way."""
    r = report.kernels[index]
    k = r.kernel
    rows: list[tuple[str, str]] = [
        ("kernel", f"#{k.index} {r.short_name}"),
        ("full name", k.name),
        ("range", r.range_name),
    ]
    if k.op:
        rows.append(("aten op", k.op + (f" {k.op_shapes}" if k.op_shapes else "")))
    if k.process_id:
        rows.append(("process", f"{k.process_id} ({k.process_name})"))
    if k.grid or k.block:
        rows.append(("launch", f"grid {k.grid}, block {k.block}" + (f", waves per SM {k.waves:g}" if k.waves is not None else "")))
    rows += [
        ("duration", f"{time_text(k.duration_s)} ({k.duration_source})"),
        ("DRAM bytes", f"{si_text(k.dram_bytes, 'B')} ({k.bytes_source})"),
    ]
    if r.dram_bytes_estimate is not None:
        rows.append(("DRAM bytes, estimated", f"{si_text(r.dram_bytes_estimate, 'B')} ({r.estimate_source})"))
    if k.model_bytes is not None:
        rows.append(("least bytes of the shapes", si_text(k.model_bytes, "B")))
    by_class = ", ".join(f"{c} {si_text(v, 'FLOP')}" for c, v in sorted(k.flops_by_class.items(), key=lambda kv: -kv[1]) if v > 0)
    rows.append(("FLOPs", f"{si_text(k.flops, 'FLOP')}" + (f" = {by_class}" if by_class else "") + f" ({k.flops_source})"))
    x, from_shapes = intensity_of(r)
    rows += [
        ("intensity", "?" if x is None else f"{AT_MOST}{compact(x)} FLOP/B, {AT_MOST_MEANS}" if from_shapes else f"{x:.4g} FLOP/B"),
        ("achieved", f"{si_text(r.achieved_flops, 'FLOP/s')}, {si_text(r.achieved_bw, 'B/s')}"
         + (f" ({report.capture.bytes_how})" if report.capture.bytes_how and r.achieved_bw is not None else "")),
    ]
    if r.peak is not None:
        if r.fraction_of_peak is None:
            rows.append(("of the peak", "?"))
        elif r.peak.measured:
            past = ("; above it, which is possible: a measured ceiling is what a benchmark sustained, not a bound"
                    if r.fraction_of_peak > 1 else "")
            rows.append(("of the peak", f"{r.fraction_of_peak:.1%} of the measured {r.peak.key} ceiling "
                                        f"{si_text(r.peak.value, 'FLOP/s')} ({r.peak.label}){past}"))
            if r.vendor_fraction_of_peak is not None:
                rows.append(("of the vendor peak", f"{r.vendor_fraction_of_peak:.1%} of {r.peak.key} "
                                                   f"{si_text(r.peak.vendor, 'FLOP/s')} (the roof the limiter is decided against)"))
        else:
            rows.append(("of the peak", f"{r.fraction_of_peak:.1%} of {r.peak.key} {si_text(r.peak.value, 'FLOP/s')} ({r.peak.label})"))
    used_clock = clock_used(k)
    if r.fraction_at_clock is not None and r.peak_at_clock is not None and used_clock:
        per_cycle = k.peak_per_cycle.get(r.peak_class or "", 0.0)
        capped = " (its measured clock capped at the device's maximum)" if used_clock != k.sm_clock_hz else ""
        rows.append(("at its clock", f"{r.fraction_at_clock:.1%} of {si_text(r.peak_at_clock, 'FLOP/s')} (ncu's per-cycle peak "
                                     f"{per_cycle:,.0f} x the {used_clock / 1e9:.3g} GHz SM clock it ran at{capped})"))
    ce = report.ceilings
    if r.fraction_of_bw is not None and ce is not None:
        past = ("; above it, which is possible: a measured ceiling is what a benchmark sustained, not a bound"
                if ce.measured and r.fraction_of_bw > 1 else "")
        rows.append(("of bandwidth", f"{r.fraction_of_bw:.1%} of {si_text(ce.mem_bw, 'B/s')} ({ce.mem_label}){past}"))
    if r.ridge is not None:
        measured_ridge = r.peak is not None and r.peak.measured and r.vendor_ridge is not None
        rows.append(("ridge point", f"{r.ridge:.4g} FLOP/B" + (f" (measured; vendor {r.vendor_ridge:.4g})" if measured_ridge else "")))
    if k.sol:
        rows.append(("speed of light", ", ".join(f"{key} {v:.1f}%" for key, v in k.sol.items())))
    if k.sm_clock_hz:
        warning = clock_warning(k)
        rows.append(("SM clock", f"{k.sm_clock_hz / 1e9:.3g} GHz" + (f" of {k.boost_clock_hz / 1e9:.3g} GHz" if k.boost_clock_hz else "")
                     + (f" (warning: {warning.removeprefix('its ')})" if warning else "")))
    reason = r.bound_reason
    rows.append(("bound", f"{r.bound}: {reason.removeprefix(r.bound + ': ')}"))
    if r.floor_s is not None:
        verdict = "possible" if r.physically_possible else "PHYSICALLY IMPOSSIBLE"
        missing = f"; {r.floor_missing}" if r.floor_missing else ""
        rows.append(("physics floor", f"{time_text(r.floor_s)} at {r.floor_basis} ({'; '.join(r.floor_parts)}{missing}): {verdict}"))
    elif r.floor_missing:
        rows.append(("physics floor", r.floor_missing))
    for note in k.notes:
        rows.append(("note", note))
    for rule in k.rules[:6]:
        rows.append((f"ncu {rule['rule']}", rule["text"]))
    return rows


# -- what to read about a kernel's limiter (content/profile-advice.yaml) ---------------------------
ADVICE_FILE = "profile-advice.yaml"
SIDES = ("compute", "memory", "unknown")  # where a kernel's intensity falls against the ridge point
ADVICE_TRY_ITS = ("gemm",)  # calculators a rule may offer, opened with the kernel's own shape


# The records here are plain classes, not dataclasses: on Python 3.11 a dataclass's generated
# methods cost about a millisecond each time this module is imported (issue 27).
class AdviceRule(FrozenRecord):
    """One rule of the advice file: for kernels of these kinds, limiters and sides of the ridge
    (empty: any), what to do, and the guide entries that teach it."""

    __slots__ = ("kinds", "bounds", "sides", "advice", "entries", "try_it", "index")

    kinds: tuple[str, ...]
    bounds: tuple[str, ...]
    sides: tuple[str, ...]
    advice: str
    entries: tuple[str, ...]
    try_it: str | None
    index: int

    def __init__(
        self,
        kinds: tuple[str, ...],
        bounds: tuple[str, ...],
        sides: tuple[str, ...],
        advice: str,
        entries: tuple[str, ...],
        try_it: str | None = None,
        index: int = 0,
    ) -> None:
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "bounds", bounds)
        object.__setattr__(self, "sides", sides)
        object.__setattr__(self, "advice", advice)
        object.__setattr__(self, "entries", entries)
        object.__setattr__(self, "try_it", try_it)
        object.__setattr__(self, "index", index)

    def matches(self, kind: str, bound: str, side: str) -> bool:
        return ((not self.kinds or kind in self.kinds) and (not self.bounds or bound in self.bounds)
                and (not self.sides or side in self.sides))


class AdviceBook(FrozenRecord):
    """The kinds of kernel (each with the name fragments that identify it, in order) and the rules."""

    __slots__ = ("kinds", "rules", "source")

    kinds: tuple[tuple[str, str, tuple[str, ...]], ...]  # (id, label, fragments)
    rules: tuple[AdviceRule, ...]
    source: str

    def __init__(
        self,
        kinds: tuple[tuple[str, str, tuple[str, ...]], ...],
        rules: tuple[AdviceRule, ...],
        source: str = "",
    ) -> None:
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "source", source)

    def kind_of(self, kernel: Kernel) -> str:
        """The first kind one of whose fragments is in the kernel's name or its aten op (case
        ignored); "other" when none is."""
        text = f"{kernel.name}\n{kernel.op}".lower()
        for kind, _label, fragments in self.kinds:
            if any(f in text for f in fragments):
                return kind
        return "other"

    def label(self, kind: str) -> str:
        return next((label for k, label, _f in self.kinds if k == kind), kind)

    def rule_for(self, result: KernelResult) -> AdviceRule | None:
        kind = self.kind_of(result.kernel)
        side = ridge_side(result)
        return next((rule for rule in self.rules if rule.matches(kind, result.bound, side)), None)


def ridge_side(r: KernelResult) -> str:
    """'compute' or 'memory': the side of the ridge point the kernel's intensity falls on (a
    trace: the intensity of its shapes, an upper bound); 'unknown' without one."""
    if r.side:
        return r.side
    intensity = r.intensity if r.intensity is not None else r.model_intensity
    ridge = r.vendor_ridge if r.vendor_ridge is not None else r.ridge
    if intensity is None or ridge is None:
        return "unknown"
    return "compute" if intensity >= ridge else "memory"


def _strings(value: Any) -> tuple[str, ...] | None:
    """A string or a list of strings as a tuple; None for anything else."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def parse_advice(data: Any, where: Callable[[tuple[object, ...]], str]) -> tuple[AdviceBook, list[str]]:
    """The advice file's data as an AdviceBook, and its problems (`where(path)` gives FILE:LINE).
    A rule with a problem is left out; the rest still apply."""
    from studytui.profile.analyze import BOUNDS

    problems: list[str] = []
    if not isinstance(data, dict):
        return AdviceBook((), ()), [f"{where(())}: the advice file must be a mapping with 'kinds' and 'rules'"]
    kinds: list[tuple[str, str, tuple[str, ...]]] = []
    raw_kinds = data.get("kinds")
    if not isinstance(raw_kinds, list):
        problems.append(f"{where(('kinds',))}: 'kinds' must list each kind as {{id, label, match}}")
        raw_kinds = []
    for i, item in enumerate(raw_kinds):
        fragments = _strings(item.get("match")) if isinstance(item, dict) else None
        if not (isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("label"), str) and fragments):
            problems.append(f"{where(('kinds', i))}: a kind needs an 'id', a 'label' and 'match' (name fragments)")
            continue
        if item["id"] in {k for k, _l, _f in kinds} or item["id"] == "other":
            problems.append(f"{where(('kinds', i))}: kind '{item['id']}' is given twice ('other' is every kernel no kind matches)")
            continue
        kinds.append((item["id"], item["label"], tuple(f.lower() for f in fragments)))
    known_kinds = {k for k, _l, _f in kinds} | {"other"}
    rules: list[AdviceRule] = []
    raw_rules = data.get("rules")
    if not isinstance(raw_rules, list) or not raw_rules:
        problems.append(f"{where(('rules',))}: 'rules' must list the rules, first match first")
        raw_rules = []
    allowed = {"kind": known_kinds, "bound": set(BOUNDS), "side": set(SIDES)}
    for i, item in enumerate(raw_rules):
        if not isinstance(item, dict):
            problems.append(f"{where(('rules', i))}: a rule is a mapping with 'when', 'advice' and 'entries'")
            continue
        when = item.get("when", {})
        ok = isinstance(when, dict)
        if not ok:
            problems.append(f"{where(('rules', i, 'when'))}: 'when' must map kind, bound or side to a value or a list")
            when = {}
        picked: dict[str, tuple[str, ...]] = {}
        for key, value in when.items():
            values = _strings(value)
            if key not in allowed or values is None:
                problems.append(f"{where(('rules', i, 'when', key))}: 'when' takes kind, bound and side, each a name or a list of names")
                ok = False
                continue
            unknown = [v for v in values if v not in allowed[key]]
            if unknown:
                problems.append(f"{where(('rules', i, 'when', key))}: unknown {key} {', '.join(map(repr, unknown))} "
                                f"(known: {', '.join(sorted(allowed[key]))})")
                ok = False
            picked[key] = values
        entries = _strings(item.get("entries"))
        if not entries:
            problems.append(f"{where(('rules', i))}: a rule needs 'entries': the guide entries that teach what to do")
            ok = False
        advice = item.get("advice")
        if not isinstance(advice, str) or not advice.strip():
            problems.append(f"{where(('rules', i))}: a rule needs 'advice': one or two sentences of what to do")
            ok = False
        try_it = item.get("try_it")
        if try_it is not None and try_it not in ADVICE_TRY_ITS:
            problems.append(f"{where(('rules', i, 'try_it'))}: try_it may name {', '.join(ADVICE_TRY_ITS)}, not {try_it!r}")
            ok = False
        unknown_keys = sorted(str(k) for k in item if k not in ("when", "advice", "entries", "try_it"))
        if unknown_keys:
            problems.append(f"{where(('rules', i, unknown_keys[0]))}: unknown key(s) {', '.join(unknown_keys)} in a rule")
        if ok:
            rules.append(AdviceRule(picked.get("kind", ()), picked.get("bound", ()), picked.get("side", ()),
                                    " ".join(str(advice).split()), entries or (), try_it, i))
    return AdviceBook(tuple(kinds), tuple(rules)), problems


def _advice_file(content_dir: str | os.PathLike[str] | None) -> Path:
    from studytui.core.paths import content_dir as bundled

    if content_dir is not None:
        path = Path(content_dir) / ADVICE_FILE
        if path.is_file():
            return path
    return bundled() / ADVICE_FILE  # a guide given with --content may have none: the shipped one


def _read_advice(path: Path) -> tuple[AdviceBook, list[str], Any]:
    from studytui.core.yamlio import YamlFile

    yf = YamlFile(path, display=f"{path.parent.name}/{path.name}")  # ContentError: FILE:LINE
    book, problems = parse_advice(yf.data, yf.where)
    return AdviceBook(book.kinds, book.rules, str(path)), problems, yf


_ADVICE: PerFileState[tuple[AdviceBook, list[str]]] = PerFileState()


def load_advice(content_dir: str | os.PathLike[str] | None = None) -> tuple[AdviceBook, list[str]]:
    """The advice book of `content_dir` (else the shipped one), and its problems (the rules
    with none still apply); ContentError when the file cannot be read as YAML."""

    def read(path: Path) -> tuple[AdviceBook, list[str]]:
        book, problems, _yf = _read_advice(path)
        return book, problems

    return _ADVICE.get(_advice_file(content_dir), read)


def check_advice(content_dir: str | os.PathLike[str], guide: Guide | None) -> list[str]:
    """`studytui check`: the advice file of `content_dir` (when it has one) reads, names only
    entries of the guide, and has a rule for every kind, limiter and side of the ridge."""
    from studytui.core.errors import ContentError
    from studytui.profile.analyze import BOUNDS

    path = Path(content_dir) / ADVICE_FILE
    if not path.is_file():
        return []
    try:
        book, problems, yf = _read_advice(path)
    except ContentError as exc:
        return list(exc.problems)
    if guide is not None:
        for rule in book.rules:
            for j, entry_id in enumerate(rule.entries):
                if guide.get(entry_id) is None:
                    problems.append(f"{yf.where(('rules', rule.index, 'entries', j))}: entry '{entry_id}' is not in the guide")
    kinds = [k for k, _l, _f in book.kinds] + ["other"]
    missing = [f"{kind}/{bound}/{side}" for kind in kinds for bound in BOUNDS for side in SIDES
               if not any(rule.matches(kind, bound, side) for rule in book.rules)]
    if missing and book.rules:
        more = f" and {len(missing) - 4} more" if len(missing) > 4 else ""
        problems.append(f"{yf.where(('rules',))}: no rule for {', '.join(missing[:4])}{more} (kind/bound/side): "
                        "end the rules with one whose 'when' is empty")
    return problems


# -- the GEMM calculator with a kernel's own shape -----------------------------------------------
_CALC_DTYPES = {"c10::BFloat16": "bf16", "c10::Half": "fp16", "float": "fp32", "double": "fp64",
                "c10::Float8_e4m3fn": "fp8", "c10::Float8_e5m2": "fp8", "c10::Float8_e4m3fnuz": "fp8", "c10::Float8_e5m2fnuz": "fp8"}


def gemm_shape(k: Kernel) -> tuple[int, int, int, str | None] | None:
    """(M, N, K, the calculator's dtype or None) of a trace kernel's matrix multiply, from the
    shapes of the op its FLOPs were counted for (linear, mm, addmm, _scaled_mm, or a 2-D
    matmul / bmm of batch 1); None for anything else (an ncu export has no shapes)."""
    owner = k.op.rsplit(" (in ", 1)[1].rstrip(")") if " (in " in k.op else k.op
    dims = k.op_shapes
    if not owner or not isinstance(dims, list) or len(dims) < 2 or not all(isinstance(d, list) for d in dims):
        return None
    if not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for d in dims[:3] for x in d):
        return None
    types = k.op_types
    at = 0
    if owner == "aten::linear" and len(dims[0]) >= 1 and len(dims[1]) == 2 and dims[0][-1] == dims[1][1]:
        m, n, kk = math.prod(dims[0][:-1]), dims[1][0], dims[1][1]
    elif owner in ("aten::mm", "aten::_scaled_mm") and len(dims[0]) == 2 and len(dims[1]) == 2 and dims[0][1] == dims[1][0]:
        m, kk, n = dims[0][0], dims[0][1], dims[1][1]
    elif owner == "aten::addmm" and len(dims) >= 3 and len(dims[1]) == 2 and len(dims[2]) == 2 and dims[1][1] == dims[2][0]:
        m, kk, n = dims[1][0], dims[1][1], dims[2][1]
        at = 1
    elif owner in ("aten::matmul", "aten::bmm") and len(dims[0]) == len(dims[1]) and len(dims[0]) in (2, 3) \
            and dims[0][-1] == dims[1][-2] and (len(dims[0]) == 2 or dims[0][0] == dims[1][0] == 1):
        m, kk, n = dims[0][-2], dims[0][-1], dims[1][-1]
    else:
        return None
    dtype = _CALC_DTYPES.get(types[at]) if at < len(types) else None
    if dtype == "fp32" and "tf32" in k.name.lower():
        dtype = "tf32"
    return m, n, kk, dtype


def gemm_try_it(report: Report, index: int) -> tuple[dict[str, str], str] | None:
    """(the GEMM calculator's arguments, a label) for a kernel whose shape is known: its M, N, K
    and precision, the report's GPU, and its measured time; None when the shape is not known."""
    r = report.kernels[index]
    shape = gemm_shape(r.kernel)
    if shape is None:
        return None
    m, n, kk, dtype = shape
    args = {"m": str(m), "n": str(n), "k": str(kk)}
    if dtype:
        args["dtype"] = dtype
    ce = report.ceilings
    if ce is not None and ce.accelerator is not None:
        args["gpu"] = ce.accelerator.id
    if r.kernel.duration_s:
        args["time"] = f"{r.kernel.duration_s * 1e6:.4g}us"
    label = f"Kernel #{r.kernel.index}: M {m:,}, N {n:,}, K {kk:,}" + (f", {dtype}" if dtype else "") + \
        (f", measured {time_text(r.kernel.duration_s)}" if r.kernel.duration_s else "")
    return args, label
