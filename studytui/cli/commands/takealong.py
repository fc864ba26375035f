"""`studytui serve`, and the export/import formats that take notes along (anki, vault).

`export --format anki|vault` and `import DIR` are options of the study commands; their handlers
call `export_other` and `import_vault` here, so the formats live in `studytui/exports/`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from studytui.core.errors import UsageError

FORMATS = ("anki", "vault")


def register(sub: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    from studytui.serve.server import DEFAULT_HOST, DEFAULT_MAX_TABS, DEFAULT_PORT, MAX_TABS_LIMIT, MIN_TOKEN_LENGTH

    p = sub.add_parser(
        "serve", help="the study app in a browser",
        description="Serve the study app to a web browser (textual-serve; needs the 'serve' extra). Each "
        "browser tab runs its own copy of the app on the same data directory as the terminal app, so "
        "progress and notes are shared. Listens on 127.0.0.1 unless --host says otherwise; Ctrl+C stops it. "
        "It prints the address to open, with a token (http://127.0.0.1:8000/?token=...): every request needs "
        "that token, pages from other web sites are refused, and so are host names that are not this server's.",
    )
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"address to listen on (default {DEFAULT_HOST}: this machine only; 0.0.0.0 shares it on "
                   "your network without TLS, warned: anyone who sees the address with its token gets in)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    p.add_argument("--token", metavar="T",
                   help=f"the token the address needs (at least {MIN_TOKEN_LENGTH} letters, digits, '-', '_', '.' "
                   "or '~'; default: a new random one each start). It cannot be turned off; given here it shows "
                   "in the process list")
    p.add_argument("--max-tabs", type=int, default=DEFAULT_MAX_TABS, metavar="N",
                   help=f"browser tabs open at once (default {DEFAULT_MAX_TABS}, at most {MAX_TABS_LIMIT}); "
                   "each runs its own copy of the app")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from studytui.serve.server import serve

    return serve(args.host, args.port, args.data_dir, args.content, token=args.token, max_tabs=args.max_tabs)


def export_other(fmt: str, path_arg: str, guide, store) -> int:  # guide: Guide, store: Store
    """`studytui export PATH --format anki|vault`."""
    if path_arg == "-":
        raise UsageError(f"--format {fmt} writes {'a file' if fmt == 'anki' else 'a directory'}, not standard output")
    path = Path(path_arg).expanduser()
    if fmt == "anki":
        from studytui.exports.anki import write_package

        summary = write_package(path, guide, store)
    else:
        from studytui.exports.vault import export_vault

        summary = export_vault(path, guide, store)
    for warning in summary.warnings:
        sys.stderr.write(f"studytui: warning: {warning}\n")
    # The path as resolved, absolute, as for json and md: the same form for every format.
    written = Path(os.path.realpath(path))
    via = f" (through the link {path})" if written != path.absolute() and path.is_symlink() else ""
    sys.stderr.write(f"Wrote {written}{via} ({fmt}: {summary.line()})\n")
    return 0


def import_vault(args: argparse.Namespace, guide, store) -> int:
    """`studytui import DIR`: notes back from a vault written by `export --format vault`."""
    from studytui.cli.output import one_line
    from studytui.exports.vault import import_vault as run

    report = run(Path(args.path).expanduser(), guide, store)
    for warning in report.warnings:
        sys.stderr.write(f"studytui: warning: {one_line(warning)}\n")
    if args.json:
        from studytui.cli.output import print_json

        print_json(report.to_dict())
        return 0
    from studytui.cli.output import clauses, quoted, write_wrapped

    # Filled to the terminal's width at word boundaries, continued under the text; a count stays
    # with what it counts; ids and file names escaped at a terminal.
    text = report.line()
    write_wrapped(text, rest="  ", keep=[*clauses(text), *quoted(text)])
    return 0
