"""`studytui serve`, and the export/import formats that take notes along (anki, vault).

`export --format anki|vault` and `import DIR` are options of the study commands; their handlers
call `export_other` and `import_vault` here, so the formats live in `studytui/takealong/`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from studytui.errors import UsageError

FORMATS = ("anki", "vault")


def register(sub: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    from studytui.takealong.serve import DEFAULT_HOST, DEFAULT_PORT

    p = sub.add_parser(
        "serve", help="the study app in a browser",
        description="Serve the study app to a web browser (textual-serve; needs the 'serve' extra). Each "
        "browser tab runs its own copy of the app on the same data directory as the terminal app, so "
        "progress and notes are shared. Listens on 127.0.0.1 unless --host says otherwise; Ctrl+C stops it.",
    )
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST}: this machine only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from studytui.takealong.serve import serve

    return serve(args.host, args.port, args.data_dir, args.content)


def export_other(fmt: str, path_arg: str, guide, store) -> int:  # guide: Guide, store: Store
    """`studytui export PATH --format anki|vault`."""
    if path_arg == "-":
        raise UsageError(f"--format {fmt} writes {'a file' if fmt == 'anki' else 'a directory'}, not standard output")
    path = Path(path_arg).expanduser()
    if fmt == "anki":
        from studytui.takealong.anki import write_package

        summary = write_package(path, guide, store)
    else:
        from studytui.takealong.vault import export_vault

        summary = export_vault(path, guide, store)
    for warning in summary.warnings:
        sys.stderr.write(f"studytui: warning: {warning}\n")
    sys.stderr.write(f"Wrote {path} ({fmt}: {summary.line()})\n")
    return 0


def import_vault(args: argparse.Namespace, guide, store) -> int:
    """`studytui import DIR`: notes back from a vault written by `export --format vault`."""
    from studytui.takealong.vault import import_vault as run

    report = run(Path(args.path).expanduser(), guide, store)
    for warning in report.warnings:
        sys.stderr.write(f"studytui: warning: {warning}\n")
    if args.json:
        from studytui.output import print_json

        print_json(report.to_dict())
        return 0
    sys.stdout.write(report.line() + "\n")
    return 0
