"""`studytui serve`: the study app in a browser, to take the guide along (`studytui.serve`).

The other ways to take notes along (an Anki deck, a Markdown vault) are formats of `studytui
export` and `import` (commands/study.py), each a module in `studytui/exports/`, chosen through
`studytui.exports.FORMATS`.
"""

from __future__ import annotations

import argparse


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
