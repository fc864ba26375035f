"""`studytui calc NAME ...` (calculators) and `studytui gpus [ID]` (the accelerator catalog).

Everything about a calculator comes from its spec (studytui.calc.registry lists them; each lives
in its own module): flags are generated from its form, so the CLI and the TUI accept exactly the
same inputs, and its help, title and any tables under its rows come from there too. Only the
calculators named on the command line are imported; Rich and YAML only when a handler runs.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from studytui.cli.parsing import ChoiceSafeHelp  # option help broken only at spaces and after "|"

# argparse takes '-4e9' or '-1us' for an option (only plain '-4' and '-.5' look numeric to it), so a
# negative value with an exponent or a unit would fail as "expected one argument". Calculator flags
# never start with a digit, so anything that does is a value, and the calculator's "must be
# greater than zero" message is what the user sees.
_NEGATIVE_VALUE = re.compile(r"^-\.?\d")

_KIND_HINTS = {
    "int": "N",
    "float": "X",
    "flops": "X",
    "size": "SIZE",
    "rate": "BW",
    "flops_rate": "FLOP/s",
    "time": "TIME",
    "dtype": "DTYPE",
    "gpu": "GPU",
    "model": "MODEL",
    "choice": "CHOICE",
}
_UNITS_LINE = ("units: sizes 80GB (1e9), 80GiB (2^30), 64MiB; bandwidths 4.8TB/s, 900GB/s (decimal); FLOP rates 989TFLOP/s, "
               "'989 TFLOPS'; times 5us, 1.5ms, 0.2s; counts 4096, 1e12, 128k.")
_BLOCK_BITS = {"nvfp4": "4.5 bits", "mxfp8": "8.25", "mxfp6": "6.25", "mxfp4": "4.25", "mxint8": "8.25"}
_JSON_LINE = ("--json prints one object in SI units (seconds, bytes, FLOP, FLOP/s, B/s); "
              "--explain prints every formula with the numbers substituted.")
# The generic help of `calc` (all calculators): every precision and the measured-profile rule.
_UNITS_HELP = (
    _UNITS_LINE + "\n"
    "precisions: fp64 fp32 tf32 bf16 fp16 fp8 fp6 fp4 int8 int4 (default bf16); block-scaled storage formats, their scales "
    "counted: nvfp4 (4.5 bits), mxfp8 (8.25), mxfp6 (6.25), mxfp4 (4.25), mxint8 (8.25).\n"
    "\n"
    "GPU figures are vendor peaks, not measurements, unless --profile gives measured ceilings ('measured': the "
    "profile 'studytui measure' saved; or a profile FILE); max() times are lower bounds unless MFU/MBU < 1, "
    "and the sum() is the serial no-overlap estimate, not a bound. Flags the chosen inputs do not use are errors.\n"
    "\n" + _JSON_LINE
)


def _calc_epilog(calc_spec: Any) -> str:
    """One calculator's help footer: the units, the precisions its own fields take, and the
    measured-profile sentence only where it has --profile (a footer never names a flag it lacks)."""
    names = {f.name for f in calc_spec.fields}
    taken = [c for f in calc_spec.fields if "dtype" in f.name for c in (f.choices or ())]
    lines = [_UNITS_LINE]
    if taken:
        plain = [c for c in dict.fromkeys(taken) if c not in _BLOCK_BITS]
        scaled = [f"{c} ({_BLOCK_BITS[c]})" for c in dict.fromkeys(taken) if c in _BLOCK_BITS]
        scaled_text = ("; block-scaled, their scales counted: " + ", ".join(scaled)) if scaled else ""
        lines.append("precisions: " + " ".join(plain) + scaled_text + ".")
    lines.append("")
    if "profile" in names:
        lines.append("GPU figures are vendor peaks, not measurements, unless --profile gives measured ceilings ('measured': the "
                     "profile 'studytui measure' saved; or a profile FILE); max() times are lower bounds unless MFU/MBU < 1, and "
                     "the sum() is the serial no-overlap estimate, not a bound. Flags the chosen inputs do not use are errors.")
    else:
        lines.append("Flags the chosen inputs do not use are errors.")
    lines += ["", _JSON_LINE]
    return "\n".join(lines)

# A line of help text that starts a list item ("  roofline     what it does") or carries a label
# ("units: ..."): its continuation lines hang under the text after the name or label.
_HANGING = r"^(\s+\S+\s{2,}|[a-z][\w -]{0,18}: )"  # (compiled where help is printed)


class _HelpFormatter(ChoiceSafeHelp, argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs filled to the terminal's width (argparse's own wrapping is for
    option help only): blank lines separate paragraphs, each line is one item, continuation lines
    hang under its text, and no word is broken."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        from studytui.cli.output import wrap_words

        out: list[str] = []
        for line in text.splitlines():
            if not line.strip():
                out.append("")
                continue
            m = re.match(_HANGING, line)
            lead = indent + (m.group(1) if m else line[: len(line) - len(line.lstrip())])
            body = line[m.end():] if m else line.lstrip()
            out.extend(wrap_words(body, width, lead, " " * len(lead)))
        return "\n".join(out)


def _preset_ids() -> list[str]:
    try:
        from studytui.calc.parsed import yaml_files
        from studytui.core import paths

        for base in (paths.content_dir(None), paths.PACKAGE_DIR / "_content", paths.CHECKOUT_DIR / "content"):
            found = sorted(p.stem for p in yaml_files(base / "models"))
            if found:
                return found
    except Exception:  # --help must never fail on a missing content folder
        pass
    return []


def _field_help(spec: Any) -> str:
    text = spec.label
    if spec.help:
        # A calculator's own --help names the presets at its end: not "see this very help".
        text += ": " + re.sub(r"see 'studytui calc \S+ --help'", "listed under 'model presets' below", spec.help)
    if spec.choices and spec.kind in ("choice", "dtype") and spec.name != "profile":
        text += f" [{'|'.join(spec.choices)}]"
    if spec.default is not None:
        text += f" (default {spec.default})"
    return text.replace("%", "%%")


def calc_help() -> str:
    """`calc`'s line in `studytui --help`: every calculator's name (from the registry; imports none)."""
    from studytui.calc.registry import names

    return "calculators: " + ", ".join(names())


def register(subparsers: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    """`calc` and `gpus`. `named`: the words of the command line, when known; without "calc"
    among them the calculators' own parsers (most of the time spent building the parser) are
    not built, and with a calculator's name among them only that calculator's is."""
    if named is None or "calc" in named:
        _register_calc(subparsers, named)
    else:
        subparsers.add_parser("calc", help=calc_help())
    _register_gpus(subparsers)


# `calc`'s own parser (its -h is _CalcHelp).
_CALC_PARSER: dict[str, Any] = {"add_help": False, "formatter_class": _HelpFormatter, "allow_abbrev": False}


class _CalcHelp(argparse.Action):
    """`calc -h`: the list of every calculator. A `calc` parser built for one named calculator
    holds only that one in full, so the whole list is built when it is asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, default: str = argparse.SUPPRESS,
                 help: str | None = None) -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        _print_calc_help(parser)
        parser.exit()


def _print_calc_help(parser: argparse.ArgumentParser) -> None:
    if not parser.get_default("calc_complete"):
        whole = type(parser)(prog=parser.prog, **_CALC_PARSER)
        _fill_calc(whole, None)
        parser = whole
    parser.print_help()


def _register_calc(subparsers: argparse._SubParsersAction, named: frozenset[str] | None) -> None:
    _fill_calc(subparsers.add_parser("calc", help=calc_help(), **_CALC_PARSER), named)


def _fill_calc(calc: argparse.ArgumentParser, named: frozenset[str] | None) -> None:
    """The `calc` parser: every calculator's subcommand, and the list of them in its help. With
    `named` (the command line's words) naming calculators, only those are built in full (each
    spec loads its own module): the others get a bare subcommand, and the help list is built
    only if it is printed (_CalcHelp)."""
    from studytui.calc.registry import names, spec

    everything = names()
    wanted = [name for name in everything if named is not None and name in named] or list(everything)
    complete = len(wanted) == len(everything)
    if complete:
        lines = [f"  {name:<12} {spec(name).description}" for name in everything]
        calc.description = ("Cost models for a chosen GPU and model, exact and explained.\n\ncalculators:\n"
                            + "\n".join(lines) + "\n\n" + _UNITS_HELP + "\n\nRun 'studytui calc NAME --help' for a calculator's flags.")
    calc.add_argument("-h", "--help", action=_CalcHelp, help="show this help message and exit")
    calc.set_defaults(func=_calc_usage, calc_parser=calc, calc_complete=complete)
    calc_sub = calc.add_subparsers(dest="calculator", metavar="NAME", parser_class=type(calc))
    presets = None
    # Help text (the flags' help, each calculator's description and footer, the model presets,
    # which lists a folder) is only read by --help: a command line without it builds none.
    helps = named is None or not named.isdisjoint(("-h", "--help"))
    for name in everything:
        if name not in wanted:
            calc_sub.add_parser(name, add_help=False)  # not on this command line: never parsed
            continue
        calc_spec = spec(name)
        epilog = None
        if helps:
            epilog = _calc_epilog(calc_spec)
            if any(f.kind == "model" for f in calc_spec.fields):
                presets = ", ".join(_preset_ids()) if presets is None else presets
                if presets:
                    epilog = f"model presets: {presets}\n\n" + epilog
        p = calc_sub.add_parser(
            name, help=calc_spec.title, description=calc_spec.description if helps else None, epilog=epilog,
            formatter_class=_HelpFormatter, allow_abbrev=False,
        )
        p._negative_number_matcher = _NEGATIVE_VALUE  # see _NEGATIVE_VALUE
        # Through the parser's group of options, as ArgumentParser.add_argument adds an option,
        # less its check that the metavar suits nargs (which makes a help formatter, asking the
        # terminal its size, for every flag: a tenth of the command): every flag here has a
        # plain metavar and takes one value, or none.
        add = p._optionals.add_argument
        for f in calc_spec.fields:
            if f.kind == "bool":
                add(f.flag, dest=f.name, action="store_const", const="true", default=None, help=_field_help(f) if helps else None)
                if f.default == "true":
                    add("--no-" + f.flag[2:], dest=f.name, action="store_const", const="false", default=None,
                        help=f"turn off {f.flag} ({f.label})")
            else:
                add(f.flag, dest=f.name, default=None, metavar=_KIND_HINTS.get(f.kind, "VALUE"), help=_field_help(f) if helps else None)
        for old, (_new, _convert) in calc_spec.renamed.items():
            # old flag names keep working, shown nowhere
            add("--" + old.replace("_", "-"), dest="_renamed_" + old, action="store_const", const="true", default=None,
                help=argparse.SUPPRESS)
        add("--json", action="store_true", help="print one JSON object (SI units)")
        add("--explain", action="store_true", help="print every formula with the numbers substituted")
        p.set_defaults(func=_run_calc, calc_name=name)


def _register_gpus(subparsers: argparse._SubParsersAction) -> None:
    gpus = subparsers.add_parser(
        "gpus",
        help="list accelerators (vendor peaks) or show one with its sources",
        description="The accelerator catalog: dense vendor peak figures with sources, not measurements. "
        "Add your own as YAML files in <data dir>/hardware/.",
        allow_abbrev=False,
    )
    gpus.add_argument("id", nargs="?", help="accelerator id or alias (h200, h100, b200, a100, ...)")
    gpus.add_argument("--json", action="store_true", help="print JSON (SI units)")
    gpus.set_defaults(func=_run_gpus)


def _calc_usage(args: argparse.Namespace) -> int:
    _print_calc_help(args.calc_parser)
    return 0


def _run_calc(args: argparse.Namespace) -> int:
    from studytui.calc.registry import spec as spec_of
    from studytui.calc.units import FieldError
    from studytui.core.errors import UsageError

    spec = spec_of(args.calc_name)
    values = {f.name: getattr(args, f.name) for f in spec.fields if getattr(args, f.name) is not None}
    for old in spec.renamed:
        if getattr(args, "_renamed_" + old, None) is not None:
            values[old] = getattr(args, "_renamed_" + old)
    try:
        result = spec.run(values, data_dir=getattr(args, "data_dir", None), strict=True)
    except FieldError as exc:
        flag = "--" + exc.field.replace("_", "-")
        raise UsageError(f"{flag}: {exc.message}") from None
    if args.json:
        from studytui.cli.output import print_json

        print_json(result.to_json())
        return 0
    _print_result(spec.title, result, args.explain, spec.tables(result) if spec.tables else ())
    return 0


def _print_result(title: str, result: Any, explain: bool, tables: tuple[Any, ...] = ()) -> None:
    """The rows, then the calculator's own tables (TextTable), warnings, formulas, assumptions.

    Every row, cell, warning, formula and assumption may quote the catalog or the learner's own
    files (a GPU's name, a model file's id): all of it is printed as text, never markup, with
    control and bidi characters escaped (`visible`)."""
    from studytui.cli.output import console, visible

    out = console()
    moved = tuple(t.replaces for t in tables if t.replaces)
    rows = [[visible(str(label)), visible(str(value))] for label, value in result.rows
            if not (moved and label.startswith(moved))]  # (a moved row is in a table of its own, below)
    _print_rows(out, visible(title), rows)
    for extra in tables:
        _print_table(out, extra)
    # Warnings quote names and files the user chose: printed as text, never markup.
    _print_filled(out, [(str(warning), "warning: ", "  ") for warning in result.warnings], style="bold red")
    if explain:
        out.print("\n[bold]How it was computed[/]", emoji=False)
        _print_filled(out, [(line.strip(), lead, lead + "    ")
                            for line in result.explain for lead in ["  " + line[: len(line) - len(line.lstrip())]]])
    if result.assumptions:
        out.print("\n[bold]Assumptions[/]", emoji=False)
        _print_filled(out, [(line, "  - ", None) for line in result.assumptions])
    if not explain:
        out.print("\n[dim](--explain shows every formula with its numbers)[/]", emoji=False)


def _print_filled(out: Any, items: list[tuple[str, str, str | None]], style: str = "") -> None:
    """Each (text, first, rest) as `studytui.cli.output.print_wrapped` prints it (filled to the
    width under a hanging indent, text never markup, control characters escaped), all in one
    print: the same lines, without Rich's cost per print."""
    from rich.text import Text

    from studytui.cli.output import visible, wrap_words

    lines = [Text(line, style=style) for text, first, rest in items for line in wrap_words(visible(text), out.width, first, rest)]
    if lines:
        out.print(Text("\n").join(lines), soft_wrap=True)


def _print_table(out: Any, text_table: Any) -> None:
    """A calculator's TextTable: bold headers, columns that never wrap; text, never markup, with
    control characters escaped (as the rows above it)."""
    from studytui.cli.output import Column, visible

    columns = [Column(visible(header), justify="right" if right else "left", no_wrap=True) for header, right in text_table.columns]
    out.print()
    _print_titled(out, visible(text_table.title), columns, [[visible(str(cell)) for cell in row] for row in text_table.rows])


def _print_titled(out: Any, title: str, columns: Any, rows: list[list[str]], show_header: bool = True,
                  title_style: str = "") -> None:
    """A title, then the rows in columns (`studytui.cli.output.print_table`): what
    rich.table.Table(title=Text(title), title_justify="left", box=None, pad_edge=False) draws,
    without importing rich.table. The title is filled to the table's width (the widest cell of
    each column and the padding between columns, at most the console's width) and wraps at it."""
    from rich.text import Text

    from studytui.cli.output import print_table

    if title:
        cells = [[c.header for c in columns], *rows] if show_header else rows
        widest = _widest(cells, len(columns))
        out.print(Text(title, style=title_style), width=min(sum(widest) + 2 * (len(columns) - 1), out.width), justify="left")
    print_table(out, columns, rows, show_header=show_header)


def _widest(rows: list[list[str]], count: int) -> list[int]:
    """The widest line of each of the first `count` columns' cells, in terminal cells."""
    from rich.cells import cell_len

    return [max((cell_len(line) for row in rows for line in row[i].split("\n")), default=0) for i in range(count)]


def _print_rows(out: Any, title: str, rows: list[list[str]]) -> None:
    """Label | value rows under a title (`_print_titled`), the labels bold.

    Where the rows are too wide, Rich narrows the widest column (the values) down to the next
    widest (the labels) first: when the values alone can give all the excess, the labels keep
    their width, as a column that never wraps would. Said so, the same widths come without the
    ratio arithmetic for columns that all give way (rich._ratio, which imports fractions and
    decimal: a few milliseconds)."""
    from studytui.cli.output import Column

    labels, values = _widest(rows, 2) if rows else (0, 0)
    excess = labels + 2 + values - out.width
    _print_titled(out, title, (Column(style="bold", no_wrap=0 < excess <= values - labels), Column()), rows, show_header=False)


def _run_gpus(args: argparse.Namespace) -> int:
    from studytui.calc.hardware import VENDOR_PEAK_LABEL, load_catalog
    from studytui.calc.units import FieldError
    from studytui.core.errors import UsageError

    catalog = load_catalog(getattr(args, "data_dir", None))
    if args.id:
        try:
            acc = catalog.get(args.id)
        except FieldError as exc:
            raise UsageError(exc.message) from None
        measured = _measured_summary(acc, getattr(args, "data_dir", None))
        if args.json:
            from studytui.cli.output import print_json

            print_json(dict(acc.to_json(), measured=measured))
            return 0
        _print_gpu(acc)
        _print_measured(acc, measured)
        return 0
    if args.json:
        from studytui.cli.output import print_json

        print_json({"label": VENDOR_PEAK_LABEL, "accelerators": [a.to_json() for a in catalog]})
        return 0
    _print_catalog(catalog)
    return 0


# The catalog's key figures: (header line 1, header line 2, right-aligned).
_CATALOG_COLUMNS = (
    ("", "id", False),
    ("bf16", "TFLOP/s", True),
    ("fp8", "TFLOP/s", True),
    ("", "memory", True),
    ("HBM", "TB/s", True),
    ("link GB/s", "bidir (one way)", True),
)


def _print_catalog(catalog: Any) -> None:
    """`studytui gpus`: one line per accelerator where the terminal has room for its figures, name
    and aliases (about 140 columns); else a two-line record: id and figures, then the name whole."""
    from rich.cells import cell_len
    from rich.text import Text

    from studytui.calc.hardware import VENDOR_PEAK_LABEL
    from studytui.cli.output import console, visible, wrap_words

    out = console()
    rows = []
    for acc in catalog:
        link = "-" if acc.link_bw_bidir is None else f"{acc.link_bw_bidir / 1e9:g} ({acc.link_bw_per_direction / 1e9:g})"
        figures = (
            f"{acc.peak_flops['bf16'] / 1e12:g}" if "bf16" in acc.peak_flops else "-",
            f"{acc.peak_flops['fp8'] / 1e12:g}" if "fp8" in acc.peak_flops else "-",
            f"{acc.memory_gb:g} {acc.memory_unit}" if acc.memory_gb else "-",
            f"{acc.mem_bw / 1e12:g}",
            link,
        )
        # Names and ids may come from the learner's hardware files: control characters escaped.
        rows.append((visible(acc.id), figures, visible(acc.name), visible(", ".join(acc.aliases))))
    widths = [
        max([cell_len(h1), cell_len(h2)] + [cell_len(r[0] if i == 0 else r[1][i - 1]) for r in rows])
        for i, (h1, h2, _right) in enumerate(_CATALOG_COLUMNS)
    ]
    gap = "  "

    def cells(values: list[str]) -> str:
        return gap.join(
            v.rjust(w) if right else v.ljust(w) for v, w, (_a, _b, right) in zip(values, widths, _CATALOG_COLUMNS)
        )

    name_width = max([4] + [cell_len(r[2]) for r in rows])
    alias_width = max([7] + [cell_len(r[3]) for r in rows])
    one_line = sum(widths) + len(gap) * (len(widths) + 1) + name_width + alias_width <= out.width
    lines: list[Any] = [Text(f"Accelerators: dense {VENDOR_PEAK_LABEL}", style="bold")]  # printed at once, below
    head1 = cells([h1 for h1, _h2, _r in _CATALOG_COLUMNS])
    head2 = cells([h2 for _h1, h2, _r in _CATALOG_COLUMNS])
    if one_line:
        head1 += gap + " " * name_width + gap
        head2 += gap + "name".ljust(name_width) + gap + "aliases"
    lines.append(Text(head1.rstrip(), style="bold"))
    lines.append(Text(head2.rstrip(), style="bold"))
    for acc_id, figures, name, aliases in rows:
        line = Text(acc_id.ljust(widths[0]), style="bold") + Text(gap + cells(["", *figures])[widths[0] + len(gap):])
        if one_line:
            line += Text(gap + (name.ljust(name_width) + gap if aliases else name)) + Text(aliases, style="dim")
            lines.append(line)
            continue
        lines.append(line)
        # The name whole on its own line, then the aliases (on the same line where they fit).
        also = f"  (also {aliases})" if aliases else ""
        if cell_len("  " + name + also) <= out.width:
            lines.append(Text("  " + name) + Text(also, style="dim"))
        else:
            lines.append(Text("  " + name))
            for part in wrap_words(aliases, out.width, "    also ", "         ") if aliases else []:
                lines.append(Text(part, style="dim"))
    # One print for every line (each line is its own, unwrapped: soft_wrap), not one per line.
    out.print(Text("\n").join(lines), soft_wrap=True)
    out.print("'studytui gpus ID' shows one accelerator with its sources and notes.", highlight=False, markup=False, emoji=False)


def _urls(text: str) -> list[str]:
    """The http(s) URLs in a text, without the punctuation that ends a sentence or a bracket."""
    return [u.rstrip(".,;:)]}>'\"") for u in re.findall(r"https?://\S+", text)]


def _print_gpu(acc: Any) -> None:
    from studytui.calc.hardware import VENDOR_PEAK_LABEL
    from studytui.calc.units import format_flops_rate, format_rate
    from studytui.cli.output import console, print_url, visible

    out = console()
    rows: list[tuple[str, str]] = []  # (label, value); values may come from the learner's hardware files
    if acc.aliases:
        rows.append(("aliases", ", ".join(acc.aliases)))
    rows.append(("vendor", str(acc.vendor)))
    for key in ("arch", "year", "form_factor", "memory_type"):
        if acc.raw.get(key) is not None:
            rows.append((key.replace("_", " "), str(acc.raw[key])))
    for dtype, value in acc.peak_flops.items():
        sparse = acc.peak_flops_sparse.get(dtype)
        extra = f"  (datasheet with sparsity: {format_flops_rate(sparse)})" if sparse else ""
        rate = f"{value / 1e12:,.4g} TOPS" if dtype.startswith("int") else format_flops_rate(value)
        if sparse and dtype.startswith("int"):
            extra = f"  (datasheet with sparsity: {sparse / 1e12:,.4g} TOPS)"
        matrix = "fp64 matrix cores" if acc.vendor == "AMD" else "fp64 tensor cores"
        pipe = {"fp64": "fp64 vector pipe", "fp64_tensor": matrix}.get(dtype, dtype)
        rows.append((f"peak {pipe} (dense)", rate + extra))
    rows.append(("HBM bandwidth", format_rate(acc.mem_bw)))
    from studytui.calc.hardware import memory_text

    if (memory := memory_text(acc)) is not None:
        rows.append(("memory", memory))
    if acc.link_bw_bidir:
        rows.append(("scale-up link", f"{acc.interconnect_name}: {format_rate(acc.link_bw_bidir)} bidirectional = "
                     f"{format_rate(acc.link_bw_per_direction)} per direction"))
        if acc.interconnect_domain:
            rows.append(("link domain", str(acc.interconnect_domain)))
        if acc.axis_bw_per_direction:
            rows.append(("ring along one torus axis", f"{format_rate(acc.axis_bw_per_direction)} one way (what collectives use)"))
        if acc.axis_wraparound_multiple:
            rows.append(("torus wraparound", f"only on an axis whose length is a multiple of {acc.axis_wraparound_multiple} chips; "
                         "a shorter axis is a line at half the rate"))
        if acc.peer_bw_per_direction:
            rows.append(("link to one peer", f"{format_rate(acc.peer_bw_per_direction)} per direction (point-to-point mesh: "
                         "n GPUs reach (n-1) x this)"))
    else:
        rows.append(("scale-up link", str(acc.interconnect_name or "none")))
    if acc.scale_out_bw_per_direction:
        rows.append(("scale-out network", f"{acc.scale_out_name}: {format_rate(acc.scale_out_bw_per_direction)} per GPU "
                     f"per direction ({acc.scale_out_source})"))
    if acc.sm_count:
        rows.append(("SMs", str(acc.sm_count)))
    for key, label in (
        ("l2_mb", "L2 (MiB)"),
        ("llc_mb", "last-level cache (MiB)"),
        ("boost_clock_mhz", "boost clock (MHz)"),
        ("tdp_w", "power (W)"),
        ("host_interface", "host interface"),
    ):
        if acc.raw.get(key) is not None:
            source = acc.raw.get(key.replace("_mb", "_source")) if key in ("l2_mb", "llc_mb") else None
            rows.append((label, str(acc.raw[key]) + (f" ({source})" if source else "")))
    if acc.confidence:
        rows.append(("confidence", str(acc.confidence)))
    rows.append(("origin", "built-in catalog" if not acc.is_user else str(acc.origin)))

    # Every figure comes with its source, and a URL is never cut or broken: a table cell would cut
    # a long one (…) or fold it, so in a row a URL is replaced by a numbered reference and printed
    # whole on a line of its own under Sources (beside its label where both fit, as `show` does).
    refs: list[tuple[str, str]] = []
    cells = []
    for label, value in rows:
        text = visible(value)  # no markup, control characters escaped
        for url in _urls(text):
            refs.append((label, url))
            text = text.replace(url, f"source [{len(refs)}] below", 1)
        cells.append([visible(label), text])
    # As the calculators' rows are printed (_print_rows), flush with the title.
    _print_rows(out, visible(f"{acc.name} ({acc.id}): {VENDOR_PEAK_LABEL}"), cells)

    # Sources are mostly URLs: each item wraps under its text, and a URL is never broken.
    if acc.sources or refs:
        out.print("\n[bold]Sources[/]", emoji=False)
        _print_filled(out, [(str(source), "  - ", None) for source in acc.sources])
        for n, (label, url) in enumerate(refs, 1):
            print_url(f"[{n}] {label}:", url, con=out, indent="  - ", style="")
    cross = acc.raw.get("cross_checked_with") or []
    if cross:
        out.print("\n[bold]Cross-checked with[/]", emoji=False)
        _print_filled(out, [(str(item), "  - ", None) for item in cross])
    if acc.notes:
        out.print("\n[bold]Notes[/]", emoji=False)
        _print_filled(out, [(str(acc.notes), "  ", None)])
    out.print(f"\n[dim]All figures are dense {VENDOR_PEAK_LABEL}. Measure your own ceilings before trusting a roofline.[/]", emoji=False)


def _measured_summary(acc: Any, data_dir: Any) -> dict | None:
    """Measured figures for this accelerator (issue 7), or None when it has no measured profile."""
    from studytui.calc.profiles import measured_summary

    return measured_summary(acc, data_dir)


def _print_collectives(out: Any, table_by_gpus: dict) -> None:
    """Measured NCCL bus bandwidth by GPU count, collective and message size (GB/s)."""
    from studytui.calc.units import format_size
    from studytui.cli.output import Column, visible

    for gpus, ops in table_by_gpus.items():
        sizes = sorted({int(size) for by_size in ops.values() for size in by_size})
        columns = [Column("collective", no_wrap=True, style="bold")]
        columns += [Column(format_size(size, binary=True), justify="right", no_wrap=True) for size in sizes]
        rows = [[visible(op.replace("_", "-")), *(f"{by_size[str(s)] / 1e9:,.0f}" if str(s) in by_size else "-" for s in sizes)]
                for op, by_size in ops.items()]
        out.print()
        _print_titled(out, visible(f"NCCL bus bandwidth over {gpus} GPUs (GB/s, median over runs)"), columns, rows,
                      title_style="table.title")


def _print_measured(acc: Any, measured: dict | None) -> None:
    from rich.text import Text

    from studytui.cli.output import Column, console, visible

    out = console()
    if measured is None:
        out.print("[dim]No measured profile for this accelerator: 'studytui measure' on one writes it.[/]", emoji=False)
        return
    # The profile is the learner's file: its text is shown as text, control characters escaped.
    columns = [Column("figure", no_wrap=True, style="bold")]
    columns += [Column(col, justify="right", no_wrap=True) for col in ("unit", "vendor", "measured", "runs min-max", "ratio")]
    rows = [(f"{d} dense", "TFLOP/s", 1e12, v, measured["spread"]["peak_flops"].get(d), d) for d, v in measured["peak_flops"].items()]
    if measured.get("mem_bw"):
        rows.append(("HBM bandwidth", "GB/s", 1e9, measured["mem_bw"], measured["spread"]["mem_bw"], "mem_bw"))
    if measured.get("link_bw_per_direction"):
        rows.append(
            (
                "link per direction",
                "GB/s",
                1e9,
                measured["link_bw_per_direction"],
                measured["spread"]["link_bw_per_direction"],
                "link_bw_per_direction",
            )
        )
    cells = []
    for label, unit, scale, value, spread, key in rows:
        vendor = measured["vendor"].get(key)
        ratio = measured["ratios"].get(key)
        cells.append([
            visible(label),
            unit,
            f"{vendor / scale:,.1f}" if vendor else "-",
            f"{value / scale:,.1f}",
            f"{spread['min'] / scale:,.1f}-{spread['max'] / scale:,.1f}" if spread else "-",
            f"{ratio:.2f}" if ratio else "-",
        ])
    out.print()
    _print_titled(out, visible(f"Vendor peak beside measured: {measured['source']}"), columns, cells)
    out.print("[dim]Measured: sustained after warm-up, each result checked against a reference; an estimate, not a limit.[/]", emoji=False)
    _print_collectives(out, measured.get("collectives") or {})
    for i, run in enumerate(measured.get("evidence") or [], 1):
        out.print()
        out.print(Text(visible(f"How it was measured (run {i}, {run['date']})"), style="bold"))
        # One print for the run's lines (each wrapped at the width, as it would be alone).
        out.print(Text("\n").join(Text(visible(f"  {key}: {run[key]}"))
                                  for key in ("hardware", "workload", "precision", "baseline", "correctness", "software")),
                  highlight=False)
