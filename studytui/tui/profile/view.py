"""What the profile screen shows, as plain text and numbers (no Textual here: tests read these).

The figures are the report's (studytui.profile.analyze); the rows of one kernel are the ones
`studytui profile FILE --kernel N` prints (studytui.profile.report.kernel_rows), and the guide
entries come from content/profile-advice.yaml (studytui.profile.report.AdviceBook).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from studytui.core.text import one_line
from studytui.profile.analyze import BOUNDS, NO_GPU, NO_RANGE, RANGE_SEPARATOR, KernelResult, Peak, RangeResult, Report
from studytui.profile.report import (
    bound_cell,
    compact,
    distinct_cuts,
    intensity_of,
    kernel_cells,
    partial,
    share_parts,
    share_text,
    si_text,
    time_text,
)

__all__ = ["bound_cell", "compact", "intensity_of", "partial", "share_text", "si_text", "time_text"]  # the shared builders

if TYPE_CHECKING:
    from studytui.profile.report import AdviceBook, AdviceRule

# Beyond this many kernels only the longest are drawn (plotext draws every point on every frame).
MAX_POINTS = 2000
# The table lists the first this many in its order (Textual's table takes about half a millisecond a
# row to fill: 10,000 kernels would freeze the screen for seconds on every sort).
MAX_ROWS = 1000
# (id, what the key line says, the column it sorts): `s` cycles through them.
SORTS = (
    ("time", "time", "time"),
    ("intensity", "FLOP/B", "FLOP/B"),
    ("flops", "TFLOP/s", "TFLOP/s"),
    ("bw", "GB/s", "GB/s"),
    ("bound", "limiter", "bound"),
    ("index", "file order", "#"),
)
SORT_IDS = tuple(s[0] for s in SORTS)


@dataclass(frozen=True)
class RoofLine:
    """One roof: a peak FLOP/s (one precision) and the memory bandwidth under it."""

    label: str  # the precision: "bf16"
    peak: float  # FLOP/s
    bw: float  # B/s
    measured: bool = False

    @property
    def ridge(self) -> float:
        return self.peak / self.bw

    def attainable(self, intensity: float) -> float:
        return min(self.peak, intensity * self.bw)


@dataclass(frozen=True)
class Dot:
    """A kernel at its arithmetic intensity (FLOP/B) and achieved FLOP/s."""

    x: float
    y: float
    bound: str
    share: float  # of the time of the kernels shown


def text(value: str) -> str:
    """File text (a kernel, range or file name) for one line: every control character escaped."""
    return one_line(value)


# -- choosing and ordering the kernels ------------------------------------------------------------
def in_range(r: KernelResult, rng: RangeResult | None) -> bool:
    if rng is None:
        return True
    path = r.kernel.range
    if rng.name == NO_RANGE and rng.depth == 1:
        return not path
    return len(path) >= rng.depth and RANGE_SEPARATOR.join(path[: rng.depth]) == rng.name


def _sort_key(sort: str) -> Callable[[KernelResult], tuple[float, ...]]:
    def last_if_none(x: float | None) -> tuple[float, float]:
        return (1.0, 0.0) if x is None else (0.0, -x)

    if sort == "intensity":
        return lambda r: (*last_if_none(intensity_of(r)[0]), r.kernel.index)
    if sort == "flops":
        return lambda r: (*last_if_none(r.achieved_flops), r.kernel.index)
    if sort == "bw":
        return lambda r: (*last_if_none(r.achieved_bw), r.kernel.index)
    if sort == "bound":
        return lambda r: (BOUNDS.index(r.bound) if r.bound in BOUNDS else len(BOUNDS), -(r.kernel.duration_s or 0.0), r.kernel.index)
    if sort == "index":
        return lambda r: (r.kernel.index,)
    return lambda r: (-(r.kernel.duration_s or 0.0), r.kernel.index)


def shown_kernels(report: Report, rng: RangeResult | None = None, sort: str = "time") -> list[KernelResult]:
    return sorted((r for r in report.kernels if in_range(r, rng)), key=_sort_key(sort))


def total_time(kernels: Iterable[KernelResult]) -> float:
    return sum(r.kernel.duration_s or 0.0 for r in kernels)


# -- the header ---------------------------------------------------------------------------------
def _pack(parts: list[str], width: int) -> list[str]:
    """Parts joined by ' · ' into lines of at most `width` (a part longer than that stays whole)."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return lines


BOUND_SHORT = {"compute": "comp", "memory": "mem", "latency": "lat", "unknown": "unk"}  # 80 columns, when the words do not fit
FORMAT_SHORT = {"ncu-raw": "ncu raw page", "ncu-details": "ncu details page", "torch-trace": "PyTorch trace"}


def ceilings_text(report: Report, narrow: bool = False) -> str:
    """'vendor peaks fp8 1.98P, bf16 989T FLOP/s; DRAM 4.8 TB/s': the peaks the kernels ran at."""
    ce = report.ceilings
    if ce is None:
        return ""
    figures = [f"{key} {si_text(p.value, 'FLOP/s').removesuffix('FLOP/s').replace(' ', '')}"
               for key, p in sorted(peaks_of(report).items(), key=lambda kv: -kv[1].value)]
    measured = ce.profile != "vendor"
    kind = ("measured" if measured else "vendor") if narrow else ("measured ceilings" if measured else "vendor peaks")
    flops = f"{', '.join(figures)} FLOP/s; " if figures else ""
    return f"{kind} {flops}DRAM {si_text(ce.mem_bw, 'B/s')}" + ("" if narrow or not measured else
                                                               " (what benchmarks sustained, not bounds)")


def gpu_text(report: Report, chosen_here: bool = False, narrow: bool = False) -> str:
    ce = report.ceilings
    if ce is None:  # gpu_note: "no GPU chosen: the file does not name its GPU"
        return f"{report.gpu_note}; g chooses one" if report.gpu_note.startswith(NO_GPU) else f"{NO_GPU}: {report.gpu_note}; g chooses one"
    acc = ce.accelerator
    if narrow:
        return f"GPU {acc.id if acc is not None else ce.gpu}"
    name = f"{acc.name} ({acc.id}" if acc is not None else f"{ce.gpu} ("
    how = "chosen here" if chosen_here else ("from the file" if report.gpu_note.startswith("matched") else report.gpu_note)
    return f"{name}, {how})"


def header_lines(report: Report, width: int, rng: RangeResult | None = None, chosen_here: bool = False,
                 narrow: bool = False) -> list[str]:
    """The file, its GPU and ceilings, and the totals; each group packed into lines of `width`
    (narrow: shorter words, so 80 columns take three lines)."""
    c = report.capture
    procs = c.processes
    who = []
    if len(procs) == 1 and procs[0][0] and not narrow:
        who = [f"process {procs[0][0]} ({procs[0][1]})"]
    elif len(procs) > 1:
        who = [f"{len(procs)} processes"]
    n = len(c.kernels)
    kind = FORMAT_SHORT.get(c.format, c.format_label) if narrow else c.format_label
    metrics = c.metric_set
    first = [os.path.basename(c.path) or c.path, kind, f"{n:,} kernel{'s' if n != 1 else ''}", *who]
    if not narrow:  # at 80 columns the totals come first; the detail says where each figure came from
        first.append(metrics)
    ceilings = ceilings_text(report, narrow)
    gpu = [gpu_text(report, chosen_here, narrow) + (f" {ceilings}" if narrow and ceilings else "")]
    if ceilings and not narrow:
        gpu.append(ceilings)
    tot = report.total
    if rng is None:
        totals = [f"{time_text(tot.duration_s)}" + ("" if narrow else " of kernel time"),
                  f"GEMM {partial(tot.gemm_flops, tot.gemm_unknown, tot.kernels, 'FLOP')}",
                  f"DRAM {partial(tot.dram_bytes, tot.bytes_unknown, tot.kernels, 'B')}"
                  + (" (derived)" if c.bytes_how and narrow else ""),  # wide: the metric set says how
                  share_text(tot.time_by_bound, tot.duration_s)]
    else:  # the range's totals, beside the whole file's
        totals = [f"range {rng.name}: {rng.kernels:,} of {tot.kernels:,} kernels",
                  f"{time_text(rng.duration_s)} of {time_text(tot.duration_s)}"]
        if not narrow:
            totals += [f"GEMM {partial(rng.gemm_flops, rng.gemm_unknown, rng.kernels, 'FLOP')}",
                       f"DRAM {partial(rng.dram_bytes, rng.bytes_unknown, rng.kernels, 'B')}"]
        totals.append(share_text(rng.time_by_bound, rng.duration_s))
    if narrow and len(" · ".join(totals)) > width:  # every limiter still, by its first letters
        totals[-1] = ", ".join(BOUND_SHORT.get(p.split(" ", 1)[0], p.split(" ", 1)[0]) + " " + p.split(" ", 1)[1]
                               for p in share_parts(*((rng.time_by_bound, rng.duration_s) if rng is not None
                                                      else (tot.time_by_bound, tot.duration_s))))
    lines = [*_pack(first, width), *_pack(gpu, width), *_pack(totals, width)]
    return [text(line) for line in lines]


# -- the table ----------------------------------------------------------------------------------
def table_cells(r: KernelResult, shown_time: float, name_width: int = 48, names: dict[str, str] | None = None,
                ranges: dict[str, str] | None = None) -> dict[str, str]:
    """The table's cells of one kernel, by column id: the CLI's figures (report.kernel_cells), the
    short name and the range escaped and cut as `table_names` cut them (else to `name_width`)."""
    from studytui.profile.names import short_name

    cells = kernel_cells(r, shown_time)
    name = text(short_name(r.kernel.name, 1 << 16))
    rng = text(r.range_name) if r.kernel.range else ""
    cells["kernel"] = names.get(name, name) if names is not None else text(short_name(r.kernel.name, max(8, name_width)))
    cells["range"] = ranges.get(rng, rng) if ranges is not None else rng
    return cells


def table_names(kernels: list[KernelResult], name_width: int, range_width: int | None) -> tuple[dict[str, str], dict[str, str]]:
    """The short names and ranges of these kernels cut to their columns' widths, no two distinct
    ones to the same text (report.distinct_cuts)."""
    from studytui.profile.names import short_name

    names = distinct_cuts((text(short_name(r.kernel.name, 1 << 16)) for r in kernels), max(8, name_width))
    ranges = distinct_cuts((text(r.range_name) for r in kernels if r.kernel.range), max(4, range_width)) if range_width else {}
    return names, ranges


# -- the plot -----------------------------------------------------------------------------------
def peaks_of(report: Report) -> dict[str, Peak]:
    """The peaks of the precisions the kernels ran at; bf16's when no kernel has FLOPs."""
    peaks = {r.peak.key: r.peak for r in report.kernels if r.peak}
    if not peaks and report.ceilings is not None:
        bf16 = report.ceilings.peak("tensor_bf16")
        peaks = {bf16.key: bf16} if bf16 is not None else {}
    return peaks


def roofs_of(report: Report) -> list[RoofLine]:
    """The roofs of the precisions the kernels ran at (the vendor peak; with measured ceilings,
    the measured one too), highest first. None without a GPU; bf16's alone when no kernel has
    FLOPs (an export of speed-of-light percentages only), for a sense of where they would be."""
    ce = report.ceilings
    if ce is None:
        return []
    peaks = peaks_of(report)
    roofs: list[RoofLine] = []
    vendor_bw = ce.limit_mem_bw or ce.mem_bw
    measured = ce.profile != "vendor"
    for key, p in sorted(peaks.items(), key=lambda kv: -kv[1].value):
        roofs.append(RoofLine(key, p.limit or p.value, vendor_bw))
        if measured:
            roofs.append(RoofLine(key, p.value, ce.mem_bw, measured=True))
    return roofs


@dataclass(frozen=True)
class PlotData:
    roofs: tuple[RoofLine, ...]
    dots: tuple[Dot, ...]
    drawn: tuple[int, ...]  # kernel indexes drawn, in the order of `dots`
    not_drawn: int  # kernels shown in the table that have no point (no FLOPs, bytes or time)
    cut: int  # kernels left off past MAX_POINTS
    cut_share: float  # the share of the time of those drawn, when some are cut
    from_shapes: bool  # some x come from a trace's shapes


def plot_data(report: Report, kernels: list[KernelResult], limit: int = MAX_POINTS) -> PlotData:
    shown = total_time(kernels)
    placed = [(r, intensity_of(r)) for r in kernels]
    with_point = [(r, x, s) for r, (x, s) in placed if x and r.achieved_flops and x > 0 and r.achieved_flops > 0]
    not_drawn = len(kernels) - len(with_point)
    longest = sorted(with_point, key=lambda t: (-(t[0].kernel.duration_s or 0.0), t[0].kernel.index))
    drawn, cut = longest[:limit], max(0, len(longest) - limit)
    dots = tuple(Dot(x, float(r.achieved_flops or 0.0), r.bound, (r.kernel.duration_s or 0.0) / shown if shown > 0 else 0.0)
                 for r, x, _s in drawn)
    drawn_time = sum(r.kernel.duration_s or 0.0 for r, _x, _s in drawn)
    return PlotData(tuple(roofs_of(report)), dots, tuple(r.kernel.index for r, _x, _s in drawn), not_drawn, cut,
                    drawn_time / shown if shown > 0 else 0.0, any(s for _r, _x, s in drawn))


def plot_notes(data: PlotData, report: Report, narrow: bool = False) -> list[str]:
    """What the plot leaves out and how it placed what it shows, each a few words."""
    if not data.dots:
        if not data.not_drawn:
            return ["no kernels"]
        return ["nothing to place: " + ("a trace without shapes has no FLOPs" if report.capture.format == "torch-trace"
                                        else "this export has the speed-of-light percentages only")
                + ("" if narrow else "; the limiter comes from what the file has")]
    notes: list[str] = []
    if data.cut:
        notes.append(f"only the {len(data.dots):,} longest drawn ({data.cut_share:.0%} of the time)")
    if data.not_drawn:
        why = "FLOPs" if report.capture.format == "torch-trace" else "FLOPs or bytes"
        notes.append(f"{data.not_drawn:,} without {why} not drawn")
    if data.from_shapes:
        notes.append("≤: x from the shapes" + ("" if narrow else " (no bytes in a trace)"))
    return notes


# -- one kernel -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Suggestion:
    """A guide entry to read about a kernel's limiter."""

    entry_id: str
    title: str
    where: str  # its section


def headline(r: KernelResult, kind_label: str, shown_time: float) -> str:
    share = (r.kernel.duration_s or 0.0) / shown_time if shown_time > 0 else 0.0
    bound = {"unknown": "limiter unknown", "latency": "latency-bound"}.get(r.bound, f"{r.bound}-bound")
    impossible = "; physically impossible" if r.physically_possible is False else ""
    return f"{kind_label} · {bound} · {time_text(r.kernel.duration_s)} ({share:.0%} of the time){impossible}"


def suggestions(rule: AdviceRule | None, lookup: Callable[[str], tuple[str, str] | None], limit: int = 4) -> list[Suggestion]:
    """The rule's entries that the guide has (`lookup(id)` -> (title, section title) or None)."""
    out: list[Suggestion] = []
    for entry_id in rule.entries if rule is not None else ():
        found = lookup(entry_id)
        if found is not None:
            out.append(Suggestion(entry_id, found[0], found[1]))
        if len(out) == limit:
            break
    return out


def kind_label(book: AdviceBook | None, r: KernelResult) -> str:
    if book is None:
        return "kernel"
    return book.label(book.kind_of(r.kernel))


def row_lines(rows: list[tuple[str, str]], width: int, label_width: int = 15) -> list[tuple[str, str]]:
    """(label part, value part) per screen line: every row's value wrapped beside its label (a
    label longer than `label_width` wraps too), file text escaped. Wrapped here, not by the widget,
    so the detail pane is one block of text that is quick to redraw."""
    import textwrap

    room = max(12, width - label_width - 1)
    out: list[tuple[str, str]] = []
    for label, value in rows:
        values = textwrap.wrap(text(value), room, break_long_words=True, break_on_hyphens=False) or [""]
        labels = textwrap.wrap(label, label_width, break_long_words=True) or [""]
        for i in range(max(len(values), len(labels))):
            out.append(((labels[i] if i < len(labels) else "").ljust(label_width), values[i] if i < len(values) else ""))
    return out

