"""`studytui profile FILE`: your own kernels on the roofline (issue 30).

Reads an Nsight Compute CSV export (`ncu -i REPORT.ncu-rep --csv --page raw`, or `--page
details`) or a PyTorch profiler trace (`prof.export_chrome_trace("trace.json")`, also .json.gz)
and sets each kernel against the chosen GPU's ceilings. The work is done in `studytui.profile`;
this module parses arguments and prints.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

DESCRIPTION = (
    "Put your own kernels beside the roofline. FILE is an Nsight Compute CSV export "
    "(ncu -i REPORT.ncu-rep --csv --page raw > raw.csv; --page details also works) or a PyTorch profiler trace "
    "(torch.profiler with record_shapes=True, prof.export_chrome_trace('trace.json'), .json or .json.gz). "
    "Per kernel: time, DRAM bytes, FLOPs, intensity, achieved FLOP/s and bandwidth against the GPU's ceilings, the "
    "limiter (compute, memory, latency or unknown, with the reason) and the physics floor; per NVTX range or "
    "record_function range: time, GEMM FLOPs, bytes and the share of time by limiter. Figures the file does not hold "
    "are unknown, never guessed. The GPU is the one the file names, or --gpu."
)


def register(subparsers: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    parser = subparsers.add_parser(
        "profile", help="your kernels on the roofline: an Nsight Compute CSV export or a PyTorch profiler trace",
        description=DESCRIPTION,
    )
    parser.add_argument("file", metavar="FILE", help="ncu CSV export (raw or details page) or profiler trace (.json, .json.gz)")
    parser.add_argument("--gpu", metavar="ID",
                        help="the GPU whose ceilings to compare with (see 'studytui gpus'); default: the one the file names")
    parser.add_argument("--profile", metavar="vendor|measured|FILE", default="vendor",
                        help="ceilings: vendor peaks (default), a measured profile of the GPU, or a profile file. "
                             "The physics floor never follows --gpu or --profile: it is the recording GPU's own rates, "
                             "ncu's per-cycle peaks x the device's highest SM clock where the export has them, else the "
                             "vendor peaks of the GPU the file names (FLOP/s +10%%)")
    parser.add_argument("--top", metavar="N", type=_count, default=15, help="kernels to list, longest first (default 15; 0: all)")
    parser.add_argument("--kernel", metavar="N", type=_count, help="everything about kernel number N (as --json and the table number them)")
    parser.add_argument("--json", action="store_true", help="print the whole analysis as JSON (SI units; null where unknown)")
    parser.set_defaults(func=handle)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def handle(args: argparse.Namespace) -> int:
    from studytui.core.errors import UsageError
    from studytui.profile import analyze, load, to_json

    capture = load(args.file)
    report = analyze(capture, gpu=args.gpu, profile=args.profile or "vendor", data_dir=getattr(args, "data_dir", None))
    if args.kernel is not None and args.kernel >= len(report.kernels):
        raise UsageError(f"--kernel {args.kernel}: the file has {len(report.kernels)} kernels, numbered 0 to {len(report.kernels) - 1}")
    if args.json:
        if args.kernel is not None:
            from studytui.cli.output import print_json
            from studytui.profile.report import kernel_json

            print_json(kernel_json(report.kernels[args.kernel]))
        else:
            _write_report_json(report, to_json(report, kernels=False))
        return 0
    if args.kernel is not None:
        _print_kernel(report, args.kernel)
    else:
        _print_report(report, args.top)
    return 0


def _write_report_json(report: Any, head: dict[str, Any]) -> None:
    """The report as one JSON object, its kernels written one at a time: 40,000 kernels never sit
    in memory as one string."""
    from studytui.cli.output import for_stream, json_text
    from studytui.profile.report import kernel_json

    out = sys.stdout
    text = json_text(head)
    out.write(for_stream(text[: text.rindex("}")].rstrip() + ',\n  "kernels": ['))
    for i, r in enumerate(report.kernels):
        out.write(for_stream(("\n    " if i == 0 else ",\n    ") + json_text(kernel_json(r), "    ")))
    out.write("\n  ]\n}\n" if report.kernels else "]\n}\n")


# -- people -----------------------------------------------------------------------------------
def _print_report(report: Any, top: int) -> None:
    from studytui.cli.output import console, one_line, plural, print_wrapped
    from studytui.profile.report import partial, share_text, si_text, time_text

    con = console()
    c = report.capture
    procs = c.processes
    who = ""
    if len(procs) == 1 and procs[0][0]:
        who = f", process {procs[0][0]} ({procs[0][1]})"
    elif len(procs) > 1:
        who = f", {len(procs)} processes"
    # The file's name, not its whole path: the learner named the file, and a long absolute path is
    # one word the width cannot fold (the JSON output keeps the full path).
    print_wrapped(f"{Path(c.path).name}: {c.format_label}, {plural(len(c.kernels), 'kernel')}{who}")
    print_wrapped(f"metrics: {c.metric_set}", first="  ")
    ce = report.ceilings
    if ce is None:
        print_wrapped(f"GPU: {report.gpu_note}; give --gpu ID (see 'studytui gpus') to compare with a GPU's ceilings", first="  ")
    else:
        print_wrapped(f"GPU: {ce.label}, {report.gpu_note}", first="  ")
        used = {r.peak.key: r.peak for r in report.kernels if r.peak}
        figures = [f"{k} {si_text(p.value, 'FLOP/s')}" for k, p in sorted(used.items())]
        kind = ("measured profile where it has the figure: what benchmarks sustained, not bounds; the limiter is decided "
                "at vendor peaks") if ce.measured else "vendor peaks"
        print_wrapped(f"ceilings ({kind}): " + ", ".join(figures + [f"DRAM {si_text(ce.mem_bw, 'B/s')}"]), first="  ")
    tot = report.total
    how = f" ({c.bytes_how})" if c.bytes_how else ""
    print_wrapped(
        f"total: {time_text(tot.duration_s)} of kernel time, GEMM {partial(tot.gemm_flops, tot.gemm_unknown, tot.kernels, 'FLOP')}, "
        f"DRAM {partial(tot.dram_bytes, tot.bytes_unknown, tot.kernels, 'B')}{how}; by limiter: "
        f"{share_text(tot.time_by_bound, tot.duration_s)}",
        first="  ",
    )
    ranges = list(report.ranges)
    if ranges and not (len(ranges) == 1 and ranges[0].name == "(no range)"):
        _range_table(con, ranges)

    kernels = sorted(report.kernels, key=lambda r: -(r.kernel.duration_s or 0.0))
    shown = kernels if top == 0 else kernels[:top]
    title = "Kernels, longest first" + ("" if len(shown) == len(kernels) else f" ({len(shown)} of {len(kernels)}; --top N)")
    if con.width >= WIDE:
        _kernel_table(con, title, shown)
    else:
        _kernel_lines(con, title, shown)
    print_wrapped("? = not in the file (--json says why); ! = faster than the physics floor (the peak rates of the GPU it "
                  "was recorded on, at its highest clock): physically impossible"
                  + ("; ≤ = at most: a trace's FLOPs over the least bytes of the op's shapes"
                     if any(r.intensity is None and r.model_intensity is not None for r in shown) else ""), style="dim")
    print_wrapped("Why, for the longest kernels (studytui profile FILE --kernel N for everything about one):")
    for r in shown[:5]:
        print_wrapped(f"{r.bound}: {one_line(r.bound_reason)}", first=f"  #{r.kernel.index} ", rest="      ")
    for note in report.notes:
        print_wrapped(one_line(note), first="note: ", rest="  ", style="dim")
    for warning in report.warnings:
        print_wrapped(one_line(warning), first="warning: ", rest="  ", style="yellow")


MAX_RANGES = 40
MIN_NAME = 12  # below this a range name folds onto more lines rather than being cut


def _range_table(con: Any, ranges: list[Any]) -> None:
    """The ranges with their kernels, time, GEMM FLOPs and every limiter's share of the time. The
    names get the room the figures leave (the limiter column wraps); a name still too long is cut
    in the middle, never to the text of another."""
    from studytui.cli.output import Column, one_line, print_table
    from studytui.profile.report import distinct_cuts, partial, share_parts, share_text, time_text

    shown = ranges[:MAX_RANGES]
    rows = [(str(r.kernels), time_text(r.duration_s), partial(r.gemm_flops, r.gemm_unknown, r.kernels, "FLOP")) for r in shown]
    shares = [share_text(r.time_by_bound, r.duration_s) for r in shown]
    heads = ("kernels", "time", "GEMM")
    fixed = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(heads)]
    names = ["  " * (r.depth - 1) + one_line(r.name.split(" > ")[-1]) for r in shown]
    room = con.width - sum(fixed) - 3 * 5  # 5 columns: a separator and padding each side, less the outer padding
    limiter_min = max([len(p) for r in shown for p in share_parts(r.time_by_bound, r.duration_s)] + [len("limiter")])
    limiter_full = max([len(t) for t in shares] + [len("limiter (time)")])
    need = max(len(n) for n in names)
    name_w = min(need, max(MIN_NAME, room - limiter_min))
    limiter_w = max(limiter_min, min(limiter_full, room - name_w))
    cut = distinct_cuts(names, name_w) if name_w >= MIN_NAME else {n: n for n in names}
    # What rich.table.Table(box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left") drew, drawn
    # by print_table without rich.table (issue 27). Its cells, headings and title are plain text,
    # never markup (nor emoji codes).
    columns = [Column("range", no_wrap=False, overflow="fold", width=name_w),
               *(Column(h, justify="right", no_wrap=True, min_width=w) for h, w in zip(heads, fixed)),
               Column("limiter (time)", no_wrap=False, width=limiter_w)]
    table = [[cut[name], *row, _packed(share_parts(r.time_by_bound, r.duration_s), limiter_w)]
             for name, row, r in zip(names, rows, shown)]
    print_table(con, columns, table, header_style="table.header", box="simple_head", title="Ranges")
    if len(ranges) > MAX_RANGES:
        con.print(f"... and {len(ranges) - MAX_RANGES} more ranges (--json lists them all)", markup=False, emoji=False)


def _packed(parts: list[str], width: int) -> str:
    """Parts joined by ', ', a line break between two parts (never inside one) where the line
    would pass `width`."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 2 + len(part) + 1 <= width:
            lines[-1] += ", " + part
        else:
            if lines:
                lines[-1] += ","
            lines.append(part)
    return "\n".join(lines) or "no kernel time"


WIDE = 120  # from this width on, one line per kernel; below it, the name on a line of its own
FIGURES = ("time", "intensity", "flops", "bw", "bound")


def _numbers(r: Any) -> list[str]:
    from studytui.profile.report import kernel_cells

    cells = kernel_cells(r)
    return [cells[c] for c in FIGURES]


def _short_names(shown: list[Any]) -> dict[int, str]:
    """Each kernel's short name as one line of text (control characters escaped), uncut."""
    from studytui.cli.output import one_line
    from studytui.profile.names import short_name

    return {r.kernel.index: one_line(short_name(r.kernel.name, 1 << 16)) for r in shown}


def _kernel_table(con: Any, title: str, shown: list[Any]) -> None:
    from studytui.cli.output import Column, one_line, print_table
    from studytui.profile.report import distinct_cuts

    rows = [(str(r.kernel.index), *_numbers(r)) for r in shown]
    fixed = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(("#", "time", "FLOP/B", "TFLOP/s", "GB/s", "bound"))]
    room = con.width - sum(fixed) - 3 * 7 - 3  # three cells between the 8 columns (padding, rule, padding), the edges
    name_w = min(56, max(16, room * 3 // 5))
    range_w = max(8, room - name_w)
    names = _short_names(shown)
    name_cut = distinct_cuts(names.values(), name_w)
    range_cut = distinct_cuts((one_line(r.range_name) for r in shown), range_w)
    # As in _range_table: what Table(box=SIMPLE_HEAD, pad_edge=False, title_justify="left") drew.
    columns = [Column("#", justify="right", no_wrap=True, min_width=fixed[0]),
               Column("kernel", no_wrap=False, overflow="fold", width=name_w),
               Column("range", no_wrap=False, overflow="fold", width=range_w, style="dim"),
               *(Column(label, justify="right", no_wrap=True, min_width=w)
                 for label, w in zip(("time", "FLOP/B", "TFLOP/s", "GB/s"), fixed[1:5])),
               Column("bound", no_wrap=True, min_width=fixed[5])]
    table = [[row[0], name_cut[names[r.kernel.index]], range_cut[one_line(r.range_name)], *row[1:]]
             for r, row in zip(shown, rows)]
    print_table(con, columns, table, header_style="table.header", box="simple_head", title=title)


def _kernel_lines(con: Any, title: str, shown: list[Any]) -> None:
    """Two lines per kernel: number, name and range; then the figures under their headings."""
    from rich.text import Text

    from studytui.cli.output import one_line
    from studytui.profile.report import distinct_cuts

    width = con.width
    digits = max(1, len(str(max((r.kernel.index for r in shown), default=0))))
    indent = " " * (digits + 3)
    heads = ["time", "FLOP/B", "TFLOP/s", "GB/s", "bound"]
    widths = [9, 10, 9, 9, 9]
    room = max(16, width - len(indent))
    names = _short_names(shown)
    name_cut = distinct_cuts(names.values(), room)
    range_cut = distinct_cuts((one_line(r.range_name) for r in shown if r.kernel.range), room)
    con.print(Text(title, style="bold"))
    con.print(Text(f"{'#':>{digits + 1}}  kernel (range)"), soft_wrap=True)
    con.print(Text(indent + "".join(f"{h:>{w}}" if i < 4 else f"  {h}" for i, (h, w) in enumerate(zip(heads, widths)))), soft_wrap=True)
    for r in shown:
        line = Text(f"{r.kernel.index:>{digits + 1}}  {name_cut[names[r.kernel.index]]}")
        if r.kernel.range:
            rng = one_line(r.range_name)
            if len(line.plain) + 2 + len(rng) <= width:  # the whole range beside the name
                line.append("  " + rng, style="dim")
            else:  # on a line of its own, cut (never to another range's text) only if it must be
                con.print(line, soft_wrap=True)
                line = Text(indent + range_cut[rng], style="dim")
        con.print(line, soft_wrap=True)
        figures = _numbers(r)
        con.print(Text(indent + "".join(f"{v:>{w}}" for v, w in zip(figures[:4], widths)) + "  " + figures[4]), soft_wrap=True)


def _print_kernel(report: Any, index: int) -> None:
    from studytui.cli.output import one_line, print_wrapped
    from studytui.profile.report import kernel_rows

    rows = kernel_rows(report, index)
    width = max(len(label) for label, _ in rows) + 2
    for label, value in rows:
        print_wrapped(one_line(value), first=f"{label + ':':<{width}}", rest=" " * width)
