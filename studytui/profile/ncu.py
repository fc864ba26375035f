"""Nsight Compute CSV exports: `ncu --csv --page raw` and `ncu --csv --page details`, streamed.

Both pages start with the same identity columns ("ID", "Process ID", "Process Name", "Host Name",
the NVTX columns when ncu ran with --nvtx, "Kernel Name", "Context", "Stream", "Block Size",
"Grid Size", "Device", "CC"), checked against ncu 2025.3.1 exports from an H200:

- **raw**: one column per metric, a second header row with each column's unit, one row per kernel;
- **details**: one row per (kernel, section, metric) with "Section Name", "Metric Name",
  "Metric Unit", "Metric Value", and rule rows ("Rule Name", "Rule Type", "Rule Description").

A live run (`ncu --csv ... app`) writes the same layout after its own "==PROF==" lines and the
application's output; those lines before the header are skipped.

What a kernel's figures come from, best first (see docs/profiles.md):

- duration: gpu__time_duration.sum (details: "Duration" of the speed-of-light section);
- DRAM bytes: dram__bytes_read.sum + dram__bytes_write.sum; else dram__bytes.sum; else
  dram__bytes.sum.per_second x duration (the roofline sections); details: the Memory Workload
  Analysis "Memory Throughput" (DRAM bytes/s) x duration;
- FLOPs: the tensor-pipe op counters sm__ops_path_tensor_src_<precision>[_dst_<precision>] (their
  .sum, or .sum.per_cycle_elapsed x sm__cycles_elapsed.avg), plus the CUDA-core instructions by
  Nsight Compute's own roofline formula (its SpeedOfLight_*RooflineChart sections):
  FP32 = FADD + FMUL + 2 FFMA, FP64 = DADD + DMUL + 2 DFMA, FP16 = 2 HADD + 2 HMUL + 4 HFMA (each
  half instruction works on a pair), from the .sum counters or .sum.per_cycle_elapsed x
  smsp__cycles_elapsed.avg.
"""

from __future__ import annotations

import csv
import math
import re
from typing import Iterator, TextIO

from studytui.profile import units
from studytui.profile.model import Capture, Kernel
from studytui.profile.source import Opened, ProfileError

HEADER_START = ("ID", "Process ID")
MAX_PREAMBLE_LINES = 100_000  # "==PROF==" lines and application output before the header
MAX_PREAMBLE_CHARS = 16 * 1024 * 1024
MAX_KERNELS = 2_000_000
MAX_LINE_CHARS = 16 * 1024 * 1024  # a raw-page row of the full set is ~30 KB
SOL_SECTION = "GPU Speed Of Light Throughput"
MWA_SECTION = "Memory Workload Analysis"
CLI_SECTION = "Command line profiler metrics"

_TENSOR = re.compile(
    r"^(?P<unit>sm|smsp)__ops_path_tensor_src_(?P<family>[a-z0-9]+(?:_dst_[a-z0-9]+)?)(?P<sparsity>_sparsity_(?:on|off))?"
    r"\.sum(?P<rate>\.per_cycle_elapsed)?$"
)
_SASS = re.compile(
    r"^(?P<unit>sm|smsp)__sass_thread_inst_executed_op_(?P<op>[fhd](?:add|mul|fma))_pred_on\.sum(?P<rate>\.per_cycle_elapsed)?$"
)
# ncu's per-cycle peaks of the device: tensor-pipe ops per cycle by precision, per instruction kind
# (op_hgmma, op_hmma...) and sparsity where it splits them; the CUDA cores' FMA instructions per cycle.
_PEAK_TENSOR = re.compile(
    r"^sm__ops_path_tensor_(?:op_[a-z0-9]+_)?src_(?P<family>[a-z0-9]+(?:_dst_[a-z0-9]+)?)(?P<sparsity>_sparsity_(?:on|off))?"
    r"\.sum\.peak_sustained$"
)
_PEAK_SASS = re.compile(r"^sm__sass_thread_inst_executed_op_(?P<op>[fhd]fma)_pred_on\.sum\.peak_sustained$")
# An instruction-level sparse counter (sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_on.sum):
# above zero, the kernel did sparse tensor work of that precision.
_OP_SPARSE = re.compile(r"^sm__ops_path_tensor_op_[a-z0-9]+_src_(?P<precision>[a-z0-9]+)(?:_dst_[a-z0-9]+)?_sparsity_on\.sum$")
# FLOPs of one FMA instruction per thread: FFMA and DFMA 2, HFMA2 4 (a pair of halves).
FMA_FLOPS = {"ffma": ("fp32", 2.0), "dfma": ("fp64", 2.0), "hfma": ("fp16", 4.0)}
# Values no export holds: a kernel timed at over a day, or any figure past 1e30 in SI units
# (bytes, FLOPs, cycles). Refused, naming the metric: they would overflow what is computed from them.
MAX_SECONDS = 86_400.0
MAX_SI = 1e30
# FLOPs per instruction, by Nsight Compute's roofline sections (SpeedOfLight_RooflineChart and
# SpeedOfLight_HierarchicalHalfRooflineChart of ncu 2025.3.1): the derived__..._x2 / _x4 metrics.
SASS_WEIGHTS = {
    "fp32": (("fadd", 1), ("fmul", 1), ("ffma", 2)),
    "fp64": (("dadd", 1), ("dmul", 1), ("dfma", 2)),
    "fp16": (("hadd", 2), ("hmul", 2), ("hfma", 4)),
}
SOL_RAW = {
    "sm": ("sm__throughput.avg.pct_of_peak_sustained_elapsed",),
    "memory": ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",),
    "dram": ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
}
SOL_DETAILS = {"sm": "Compute (SM) Throughput", "memory": "Memory Throughput", "dram": "DRAM Throughput"}
WANTED_RAW = {
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__bytes.sum", "dram__bytes.sum.per_second",
    "sm__cycles_elapsed.avg", "smsp__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second",
    "device__attribute_display_name", "device__attribute_clock_rate", "launch__waves_per_multiprocessor",
    "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second", "device__attribute_memory_clock_rate",
    *(name for names in SOL_RAW.values() for name in names),
}


def _wanted(name: str) -> bool:
    return (name in WANTED_RAW or bool(_TENSOR.match(name) and "_op_" not in name) or bool(_SASS.match(name))
            or bool(_PEAK_TENSOR.match(name) or _PEAK_SASS.match(name) or _OP_SPARSE.match(name)))


# -- the NVTX columns --------------------------------------------------------------------------
_NVTX_ENTRY = re.compile(r'"(.*?)"(?=\s|$)')


def nvtx_path(cell: str, start_stop: bool = False) -> tuple[str, ...]:
    """The range names in one NVTX cell, outermost first.

    ncu 2025.3.1 writes a push/pop cell as the thread id and one quoted entry per open range,
    `679  "<default domain>:gemm:none:none:none:none:none:none"`: domain, range, payload type and
    value, color type and color, message type and message. The range name sits between the domain
    and the six fields after it, so a name holding colons survives. A start/stop cell has no thread
    id and puts the range's id first in each entry: `"0:<default domain>:step:none:..."`. ncu does
    not escape a quote inside a name; what is left of one at a name's ends is dropped. A cell in
    any other shape is kept whole as one range name rather than guessed at.
    """
    text = cell.strip()
    if not text:
        return ()
    entries = _NVTX_ENTRY.findall(text)
    if not entries:
        return (text,)
    names = []
    for entry in entries:
        if start_stop:
            entry = re.sub(r"^\d+:", "", entry)
        parts = entry.rsplit(":", 6)
        head = parts[0] if len(parts) == 7 else entry
        if ":" in head and len(parts) == 7:
            domain, name = head.split(":", 1)
            names.append(name if domain in ("<default domain>", "") else f"{domain}::{name}")
        else:
            names.append(head)
    return tuple(n.strip('"').strip() for n in names if n.strip('"').strip())


# -- reading ---------------------------------------------------------------------------------
def _header(text: TextIO, name: str) -> tuple[list[str], int]:
    """The header row and its line number; the lines before it (ncu's own "==PROF==" lines, what the
    application printed) are skipped."""
    seen_chars = 0
    problems: list[str] = []
    for number in range(1, MAX_PREAMBLE_LINES + 1):
        line = _line(text, name)
        if not line:
            break
        seen_chars += len(line)
        stripped = line.strip()
        if stripped.startswith('"ID","Process ID"') or stripped.startswith("ID,Process ID"):
            row = next(csv.reader([stripped], strict=True))
            return row, number
        if stripped.startswith("==ERROR==") and not problems:
            problems.append(stripped[:160])
        if seen_chars > MAX_PREAMBLE_CHARS:
            break
    hint = f"; ncu said: {problems[0]}" if problems else ""
    raise ProfileError(
        f"{name}: not an Nsight Compute CSV export (no header row starting \"ID\",\"Process ID\"; "
        f"export one with: ncu -i REPORT.ncu-rep --csv --page raw > raw.csv){hint}"
    )


class _Columns:
    """Where the identity columns are in a header."""

    def __init__(self, header: list[str], name: str):
        index = {h: i for i, h in enumerate(header)}
        if "Kernel Name" not in index:
            raise ProfileError(f"{name}: not an Nsight Compute CSV export (no \"Kernel Name\" column)")
        self.width = len(header)
        self.get = index.get
        self.kernel = index["Kernel Name"]
        self.id = index.get("ID")
        self.pid = index.get("Process ID")
        self.pname = index.get("Process Name")
        self.device = index.get("Device")
        self.cc = index.get("CC")
        self.stream = index.get("Stream")
        self.grid = index.get("Grid Size")
        self.block = index.get("Block Size")
        self.push_pop = next((i for i, h in enumerate(header) if "Push/Pop_Range" in h), None)
        self.start_stop = next((i for i, h in enumerate(header) if "Start/Stop_Range" in h), None)

    def kernel_from(self, row: list[str], index: int) -> Kernel:
        def cell(i: int | None) -> str:
            return row[i] if i is not None and i < len(row) else ""

        path = nvtx_path(cell(self.push_pop))
        if not path:
            path = nvtx_path(cell(self.start_stop), start_stop=True)
        return Kernel(
            index=index, name=cell(self.kernel), range=path, process_id=cell(self.pid), process_name=cell(self.pname),
            device_index=cell(self.device), compute_capability=cell(self.cc), launch_id=cell(self.id),
            stream=cell(self.stream), grid=cell(self.grid), block=cell(self.block),
        )


class _Lines:
    """The lines of a text stream, remembering whether the last one ended with a line break: ncu
    ends every line with one, so a file whose last line has none was cut short."""

    def __init__(self, text: TextIO, name: str):
        self._text = text
        self._name = name
        self.ended = True
        self.number = 0

    def __iter__(self) -> Iterator[str]:
        while True:
            line = _line(self._text, self._name)
            if not line:
                return
            self.number += 1
            self.ended = line.endswith(("\n", "\r"))
            yield line


def _line(text: TextIO, name: str) -> str:
    """One line, at most MAX_LINE_CHARS long (a file of zeros has no line break at all)."""
    line = text.readline(MAX_LINE_CHARS)
    if "\x00" in line:
        raise ProfileError(f"{name}: binary data (a NUL byte); not an Nsight Compute export")
    if len(line) >= MAX_LINE_CHARS and not line.endswith(("\n", "\r")):
        raise ProfileError(f"{name}: a line longer than {MAX_LINE_CHARS >> 20} MiB: not an Nsight Compute export")
    return line


def _rows(text: TextIO, name: str, first_line: int, width: int, minimum: int | None = None) -> Iterator[tuple[int, list[str]]]:
    """The data rows after the header with their line numbers. A row of another width is a
    truncated or spliced file (`minimum`: the details page leaves trailing empty fields out)."""
    lines = _Lines(text, name)
    # Not strict: ncu writes a quote inside an NVTX range name without doubling it, and the
    # field count still comes out right; a row of the wrong width is refused below.
    reader = csv.reader(lines, strict=False)
    pending: tuple[int, list[str]] | None = None
    while True:
        try:
            row = next(reader)
        except StopIteration:
            if pending is not None:
                if not lines.ended:
                    raise ProfileError(f"{name}:{pending[0]}: truncated (the last line is cut short: no line break at its end)") from None
                yield pending
            return
        except csv.Error as exc:
            message = str(exc)
            if "NUL" in message:
                raise ProfileError(f"{name}: binary data (a NUL byte) at line {first_line + reader.line_num}; not read") from None
            if "unexpected end of data" in message or "EOF" in message:
                where = first_line + reader.line_num
                raise ProfileError(f"{name}: truncated (the file ends inside a quoted field, line {where})") from None
            raise ProfileError(f"{name}:{first_line + reader.line_num}: not valid CSV ({message})") from None
        line = first_line + reader.line_num
        if not row or (len(row) == 1 and (not row[0].strip() or row[0].startswith("=="))):
            continue  # a blank line, or one of ncu's "==PROF==" / "==WARNING==" lines
        if len(row) != width and not (minimum is not None and minimum <= len(row) < width):
            what = "truncated" if len(row) < width else "not one export (more fields than the header)"
            raise ProfileError(f"{name}:{line}: {len(row)} fields where the header has {width}: {what}")
        if len(row) < width:
            row = row + [""] * (width - len(row))
        if pending is not None:
            yield pending
        pending = (line, row)


def read_ncu(opened: Opened) -> Capture:
    text = opened.text()
    header, header_line = _header(text, opened.name)
    columns = _Columns(header, opened.name)
    if "Metric Name" in header and "Metric Value" in header:
        kernels, notes = _read_details(text, header, header_line, columns, opened.name)
        fmt, label = "ncu-details", "Nsight Compute CSV (--page details)"
    else:
        kernels, notes = _read_raw(text, header, header_line, columns, opened.name)
        fmt, label = "ncu-raw", "Nsight Compute CSV (--page raw)"
    if not kernels:
        raise ProfileError(f"{opened.name}: an Nsight Compute export with no kernels in it")
    capture = Capture(path=str(opened.path), format=fmt, format_label=label, kernels=kernels)
    capture.notes.extend(notes)
    _summarise(capture)
    return capture


def _read_raw(text: TextIO, header: list[str], header_line: int, columns: _Columns, name: str) -> tuple[list[Kernel], list[str]]:
    reader = _rows(text, name, header_line, columns.width)
    try:
        line, units_row = next(reader)
    except StopIteration:
        raise ProfileError(f"{name}: truncated (a raw-page header with no units row and no kernels)") from None
    identity = [i for i in (columns.id, columns.pid, columns.kernel) if i is not None]
    if any(units_row[i].strip() for i in identity):
        raise ProfileError(
            f"{name}:{line}: no units row under the header (ncu's raw page writes one: \"\",\"\",...,\"byte\",\"us\"); "
            "not an Nsight Compute raw export"
        )
    wanted = [(i, h, units_row[i]) for i, h in enumerate(header) if _wanted(h)]
    kernels: list[Kernel] = []
    for line, row in reader:
        kernel = columns.kernel_from(row, len(kernels))
        metrics = {h: (unit, row[i]) for i, h, unit in wanted}
        _fill(kernel, metrics, {}, name, line)
        kernels.append(kernel)
        if len(kernels) > MAX_KERNELS:
            raise ProfileError(f"{name}: more than {MAX_KERNELS:,} kernels; export fewer (ncu -k / -c / --nvtx-include)")
    return kernels, []


def _read_details(text: TextIO, header: list[str], header_line: int, columns: _Columns, name: str) -> tuple[list[Kernel], list[str]]:
    index = {h: i for i, h in enumerate(header)}
    sec, met, unit_i, val = index.get("Section Name"), index["Metric Name"], index.get("Metric Unit"), index["Metric Value"]
    rule_name, rule_type, rule_text = index.get("Rule Name"), index.get("Rule Type"), index.get("Rule Description")
    kernels: list[Kernel] = []
    current: Kernel | None = None
    key: tuple[str, str] | None = None
    raw: dict[str, tuple[str, str]] = {}
    display: dict[tuple[str, str], tuple[str, str]] = {}
    first_line = header_line

    def finish() -> None:
        if current is not None:
            _fill(current, raw, display, name, first_line)
            kernels.append(current)

    for line, row in _rows(text, name, header_line, columns.width, minimum=val + 1):
        this = (row[columns.pid] if columns.pid is not None else "", row[columns.id] if columns.id is not None else "")
        if this != key:
            finish()
            key, raw, display, first_line = this, {}, {}, line
            current = columns.kernel_from(row, len(kernels))
            if len(kernels) > MAX_KERNELS:
                raise ProfileError(f"{name}: more than {MAX_KERNELS:,} kernels; export fewer (ncu -k / -c / --nvtx-include)")
        assert current is not None
        metric = row[met]
        if metric:
            section = row[sec] if sec is not None else ""
            entry = (row[unit_i] if unit_i is not None else "", row[val])
            if section == CLI_SECTION or "__" in metric:
                raw[metric] = entry
            display.setdefault((section, metric), entry)
        elif rule_name is not None and row[rule_name] and len(current.rules) < 20:
            current.rules.append({
                "rule": row[rule_name], "type": row[rule_type] if rule_type is not None else "",
                "text": row[rule_text] if rule_text is not None else "",  # whole: the terminal wraps it, --json keeps it
            })
    finish()
    return kernels, []


def _value(metrics: dict[str, tuple[str, str]], metric: str, kind: str, name: str, line: int) -> float | None:
    entry = metrics.get(metric)
    if entry is None:
        return None
    unit, text = entry
    what = metric.replace("\x00", ": ")  # a details-page figure: "section: metric"
    try:
        value = units.si_value(text, unit, kind, what)
    except ValueError as exc:
        if units.looks_like_other_locale(text):
            raise ProfileError(
                f"{name}:{line}: {what} is {text!r}: numbers written with '.' thousands and ',' decimals; "
                "export again under an English locale (LC_ALL=C ncu ...)"
            ) from None
        raise ProfileError(f"{name}:{line}: {exc}") from None
    if value is None:
        return None
    shown = f"{text.strip()[:40]!r}" + (f" {unit.strip()}" if unit.strip() else "")
    if value < 0:
        raise ProfileError(f"{name}:{line}: {what} is {shown}: negative, and no counter, rate or duration is below zero")
    if not math.isfinite(value) or value > MAX_SI:
        raise ProfileError(f"{name}:{line}: {what} is {shown}: past {MAX_SI:.0e} once in SI units, not a figure a GPU produces")
    if kind == units.TIME and value > MAX_SECONDS:
        raise ProfileError(f"{name}:{line}: {what} is {shown}: longer than a day, not a kernel's duration")
    return value


def _count(metrics: dict[str, tuple[str, str]], metric: str, name: str, line: int) -> float | None:
    return _value(metrics, metric, units.COUNT, name, line)


def _per_cycle(metrics: dict[str, tuple[str, str]], metric: str, name: str, line: int) -> float | None:
    """A .per_cycle_elapsed rate: 'inst/cycle', or no unit at all (the tensor-pipe counters)."""
    entry = metrics.get(metric)
    if entry is None:
        return None
    kind = units.COUNT if entry[0].strip() == "" else units.PER_CYCLE
    return _value(metrics, metric, kind, name, line)


# Sections of a details page that only Nsight Compute's full set collects (not the default set, nor
# --set detailed); a full-set report also collects the roofline's FLOP counters, on its raw page.
FULL_SET_SECTIONS = ("Instruction Statistics", "Warp State Statistics", "Scheduler Statistics")
DEFAULT_SET_SECTIONS = {"GPU Speed Of Light Throughput", "Launch Statistics", "Occupancy", "GPU and Memory Workload Distribution"}
RAW_PAGE = "ncu -i report.ncu-rep --csv --page raw"


def _no_flops(display: dict[tuple[str, str], tuple[str, str]]) -> str:
    """Why an export without FLOP counters has none, and where they are when the report has them."""
    if not display:
        return "unknown: no FLOP counters in this export (Nsight Compute's default set has none)"
    sections = {s for s, _m in display}
    full = [s for s in FULL_SET_SECTIONS if s in sections]
    if full:
        return ("unknown: the details page prints no FLOP counters, but this is a --set full report (it has the "
                f"{full[0]} section) and the raw page of the same report has them: {RAW_PAGE}")
    if sections - DEFAULT_SET_SECTIONS:
        return ("unknown: the details page prints no FLOP counters; the raw page of the same report has them if it was "
                f"profiled with the roofline sections (--set full, or --section SpeedOfLight_RooflineChart): {RAW_PAGE}")
    return ("unknown: the details page prints no FLOP counters, and Nsight Compute's default set collects none: "
            "profile with --set full and export the raw page")


def _fill(kernel: Kernel, raw: dict[str, tuple[str, str]], display: dict[tuple[str, str], tuple[str, str]], name: str, line: int) -> None:
    """A kernel's figures from its metrics: `raw` by metric name, `display` (details page) by
    (section, display name)."""
    disp = {f"{s}\x00{m}": v for (s, m), v in display.items()}

    def shown_as(section: str, metric: str, kind: str) -> float | None:
        return _value(disp, f"{section}\x00{metric}", kind, name, line)

    # Duration.
    duration = _value(raw, "gpu__time_duration.sum", units.TIME, name, line)
    kernel.duration_source = "gpu__time_duration.sum"
    if duration is None and display:
        duration = shown_as(SOL_SECTION, "Duration", units.TIME)
        kernel.duration_source = f"{SOL_SECTION}: Duration (as printed, 4 significant digits)"
    if duration is None:
        kernel.duration_source = "no duration in this export (gpu__time_duration.sum)"
    kernel.duration_s = duration

    # Speed of light.
    for key, metrics in SOL_RAW.items():
        for metric in metrics:
            value = _value(raw, metric, units.PERCENT, name, line)
            if value is not None:
                kernel.sol[key] = value
                break
        if key not in kernel.sol and display:
            value = shown_as(SOL_SECTION, SOL_DETAILS[key], units.PERCENT)
            if value is not None:
                kernel.sol[key] = value

    # Clocks, device, launch.
    cycles_sm = _count(raw, "sm__cycles_elapsed.avg", name, line)
    cycles_smsp = _count(raw, "smsp__cycles_elapsed.avg", name, line)
    clock = _value(raw, "sm__cycles_elapsed.avg.per_second", units.FREQ, name, line)
    if clock is None:
        clock = _value(raw, "smsp__cycles_elapsed.avg.per_second", units.FREQ, name, line)
    if clock is None and display:
        clock = shown_as(SOL_SECTION, "SM Frequency", units.FREQ)
    kernel.sm_clock_hz = clock
    device = raw.get("device__attribute_display_name")
    if device:
        kernel.device = device[1].strip()
    khz = _count(raw, "device__attribute_clock_rate", name, line)  # kHz, as CUDA's attribute gives it
    kernel.boost_clock_hz = khz * 1e3 if khz else None
    dram_clocks = [c for c in (_value(raw, "dram__cycles_elapsed.avg.per_second", units.FREQ, name, line),
                               1e3 * (_count(raw, "device__attribute_memory_clock_rate", name, line) or 0.0)) if c]
    kernel.dram_clock_hz = max(dram_clocks) if dram_clocks else None
    kernel.dram_peak_per_cycle = _value(raw, "dram__bytes.sum.peak_sustained", units.BYTES_PER_CYCLE, name, line) or None
    _peaks(kernel, raw, name, line)
    waves = _count(raw, "launch__waves_per_multiprocessor", name, line)
    if waves is None and display:
        waves = shown_as("Launch Statistics", "Waves Per SM", units.COUNT)
    kernel.waves = waves

    # DRAM bytes.
    read = _value(raw, "dram__bytes_read.sum", units.BYTES, name, line)
    write = _value(raw, "dram__bytes_write.sum", units.BYTES, name, line)
    total = _value(raw, "dram__bytes.sum", units.BYTES, name, line)
    per_second = _value(raw, "dram__bytes.sum.per_second", units.RATE, name, line)
    if read is not None and write is not None:
        kernel.dram_bytes, kernel.bytes_source = read + write, "dram__bytes_read.sum + dram__bytes_write.sum"
        kernel.dram_read_bytes, kernel.dram_write_bytes = read, write
    elif total is not None:
        kernel.dram_bytes, kernel.bytes_source = total, "dram__bytes.sum"
    elif per_second is not None and duration is not None:
        kernel.dram_bytes = per_second * duration
        kernel.bytes_source = "dram__bytes.sum.per_second x gpu__time_duration.sum (the roofline section's rate)"
    elif display and duration is not None and shown_as(MWA_SECTION, "Memory Throughput", units.RATE) is not None:
        mwa = shown_as(MWA_SECTION, "Memory Throughput", units.RATE)
        assert mwa is not None
        kernel.dram_bytes = mwa * duration
        kernel.bytes_source = f"{MWA_SECTION} 'Memory Throughput' (DRAM bytes/s) x Duration, as printed (about 4 digits)"
    else:
        kernel.bytes_source = "unknown: no DRAM byte counters in this export (Nsight Compute's default set has none)"

    # FLOPs.
    tensor, tensor_note, sparse = _tensor_flops(raw, cycles_sm, cycles_smsp, name, line)
    kernel.sparse_classes |= sparse
    sass, sass_note = _sass_flops(raw, cycles_sm, cycles_smsp, name, line)
    if tensor is None:
        if sass:
            kernel.flops_source = (
                "unknown: the export has CUDA-core FP counters but no tensor-pipe counters (sm__ops_path_tensor_src_*), "
                "so tensor-core work would be missed"
            )
        else:
            kernel.flops_source = _no_flops(display)
        return
    kernel.flops_by_class.update(tensor)
    kernel.gemm_flops = sum(tensor.values())  # matrix-multiply work: everything the tensor pipe did
    kernel.flops_counted = True
    parts = [tensor_note]
    if sass is None:
        parts.append("no CUDA-core FP counters in this export: FLOPs are the tensor pipe's alone")
    else:
        kernel.flops_by_class.update(sass)
        parts.append(sass_note)
    kernel.flops_source = "; ".join(p for p in parts if p)


def _peaks(kernel: Kernel, raw: dict[str, tuple[str, str]], name: str, line: int) -> None:
    """The device's per-cycle peaks, per precision class: dense work at the best `_sparsity_off`
    rate where ncu splits by sparsity (the plain `src_bf16_dst_fp32` peak is the sparse rate), else
    the plain counter's; sparse work at the best of all. CUDA cores: FMA instructions per cycle x
    the FLOPs of one (2, or 4 for a pair of halves)."""
    dense: dict[str, float] = {}
    plain: dict[str, float] = {}
    sparse: dict[str, float] = {}
    for metric in raw:
        m = _PEAK_TENSOR.match(metric)
        if m:
            value = _per_cycle(raw, metric, name, line)
            if not value:
                continue
            cls = "tensor_" + m.group("family").split("_", 1)[0]
            sparsity = m.group("sparsity") or ""
            target = dense if sparsity == "_sparsity_off" else plain if sparsity == "" else sparse
            target[cls] = max(target.get(cls, 0.0), value)
            continue
        m = _PEAK_SASS.match(metric)
        if m:
            value = _per_cycle(raw, metric, name, line)
            if value:
                cls, flops = FMA_FLOPS[m.group("op")]
                dense[cls] = plain[cls] = value * flops
            continue
        m = _OP_SPARSE.match(metric)
        if m and (_count(raw, metric, name, line) or 0.0) > 0:
            kernel.sparse_classes.add("tensor_" + m.group("precision"))
    for cls in set(dense) | set(plain):
        kernel.peak_per_cycle[cls] = dense.get(cls) or plain[cls]
    for cls in set(dense) | set(plain) | set(sparse):
        kernel.peak_per_cycle_sparse[cls] = max(dense.get(cls, 0.0), plain.get(cls, 0.0), sparse.get(cls, 0.0))


def _tensor_flops(raw: dict[str, tuple[str, str]], cycles_sm: float | None, cycles_smsp: float | None, name: str,
                  line: int) -> tuple[dict[str, float] | None, str, set[str]]:
    """Tensor-pipe ops by precision class (one op per multiply and per add, so an op is a FLOP),
    or None when the export has no tensor-pipe counter; and the classes with sparse ops."""
    found: dict[str, dict[str, dict[str, float]]] = {"sm": {}, "smsp": {}}
    rates: dict[str, dict[str, dict[str, float]]] = {"sm": {}, "smsp": {}}
    for metric in raw:
        m = _TENSOR.match(metric)
        if not m or "_op_" in metric:
            continue
        value = _per_cycle(raw, metric, name, line) if m.group("rate") else _count(raw, metric, name, line)
        if value is None:
            continue
        target = rates if m.group("rate") else found
        counts = target[m.group("unit")].setdefault(m.group("family"), {})
        counts[m.group("sparsity") or ""] = value
    for unit_name, cycles in (("sm", cycles_sm), ("smsp", cycles_smsp)):
        if cycles is None:
            continue
        for fam, per_cycle in rates[unit_name].items():
            if fam not in found[unit_name]:
                found[unit_name][fam] = {k: v * cycles for k, v in per_cycle.items()}
    chosen = "sm" if found["sm"] else "smsp" if found["smsp"] else None
    if chosen is None:
        return None, "", set()
    by_class: dict[str, float] = {}
    sparse: set[str] = set()
    families = found[chosen]
    for family, variants in families.items():
        precision = family.split("_", 1)[0]
        if "_dst_" in family and precision in families:
            continue  # the plain src_<precision> counter already holds every destination type
        if "" in variants:
            value = variants[""]
        else:
            value = variants.get("_sparsity_off", 0.0) + variants.get("_sparsity_on", 0.0)
        key = f"tensor_{precision}"
        if variants.get("_sparsity_on", 0.0) > 0:
            sparse.add(key)
        by_class[key] = by_class.get(key, 0.0) + value
    note = f"tensor pipe: {chosen}__ops_path_tensor_src_* (an op per multiply and per add; MMA-tile padding included)"
    if sparse:
        note += "; sparse tensor ops counted as ncu reports them"
    return by_class, note, sparse


def _sass_flops(raw: dict[str, tuple[str, str]], cycles_sm: float | None, cycles_smsp: float | None, name: str,
                line: int) -> tuple[dict[str, float] | None, str]:
    counts: dict[str, float] = {}
    via_rate = False
    for op in ("fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "dadd", "dmul", "dfma"):
        for unit_name in ("sm", "smsp"):
            value = _count(raw, f"{unit_name}__sass_thread_inst_executed_op_{op}_pred_on.sum", name, line)
            if value is not None:
                counts[op] = value
                break
        else:
            for unit_name, cycles in (("smsp", cycles_smsp), ("sm", cycles_sm)):
                per_cycle = _per_cycle(raw, f"{unit_name}__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed", name, line)
                if per_cycle is not None and cycles is not None:
                    counts[op] = per_cycle * cycles
                    via_rate = True
                    break
    by_class: dict[str, float] = {}
    for precision, weights in SASS_WEIGHTS.items():
        if all(op in counts for op, _ in weights):
            by_class[precision] = sum(counts[op] * w for op, w in weights)
    if not by_class:
        return None, ""
    how = " (per-cycle rates x smsp__cycles_elapsed.avg)" if via_rate else ""
    return by_class, "CUDA cores: FP32 = FADD + FMUL + 2 FFMA, FP64 = DADD + DMUL + 2 DFMA, FP16 = 2 HADD + 2 HMUL + 4 HFMA" + how


def _summarise(capture: Capture) -> None:
    kernels = capture.kernels
    has_bytes = any(k.dram_bytes is not None for k in kernels)
    has_flops = any(k.flops_counted for k in kernels)
    has_sol = any(k.sol for k in kernels)
    rate_based = any("per_second" in k.bytes_source for k in kernels)
    derived = any(k.bytes_source.startswith(MWA_SECTION) for k in kernels)
    if has_bytes and has_flops:
        capture.metric_set = "roofline sections (rates x duration)" if rate_based else "byte and FLOP counters"
    elif has_bytes and derived:
        capture.metric_set = "speed of light; DRAM bytes derived (Memory Throughput x Duration); no FLOP counters"
    elif has_bytes:
        capture.metric_set = "DRAM byte counters; no FLOP counters"
    elif has_sol:
        capture.metric_set = "speed-of-light only (no byte or FLOP counters)"
    else:
        capture.metric_set = "no byte, FLOP or speed-of-light metrics"
    if derived:
        capture.bytes_how = "derived: Memory Throughput x Duration"
        capture.notes.append(
            f"DRAM bytes and GB/s are derived, not counted: the details page's {MWA_SECTION} 'Memory Throughput' (DRAM "
            "bytes per second, printed to about 4 digits) x the kernel's Duration; the raw page (--page raw) has the counters"
        )
    processes: dict[tuple[str, str], None] = {}
    devices: dict[str, None] = {}
    for k in kernels:
        processes[(k.process_id, k.process_name)] = None
        if k.device:
            devices[k.device] = None
        if capture.device_clock_hz is None and k.boost_clock_hz:
            capture.device_clock_hz = k.boost_clock_hz
    capture.processes = list(processes)
    capture.devices = list(devices)
    if capture.format == "ncu-details" and not has_flops:
        why = next((k.flops_source for k in kernels if k.flops_source.startswith("unknown: the details page")), "")
        where = why.removeprefix("unknown: the details page prints no FLOP counters").lstrip(";, ")
        where = where.removeprefix("but ").removeprefix("and ")
        capture.notes.append(
            "the details page prints no FLOP counts (only speed-of-light percentages): FLOPs are unknown"
            + (f"; {where}" if where else "")
        )
