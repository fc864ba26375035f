"""`studytui serve`: the study app in a browser, through Textualize's textual-serve.

The server runs one copy of the app per browser tab, each a child process started with the same
data directory and content as the terminal app would use, so progress and notes are shared and
the store's rules for several writers hold.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Callable

from studytui.errors import StudyError, UsageError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
INSTALL_HINT = "the browser server needs the 'serve' extra: pip install 'studytui[serve]' (or -e \".[serve]\" in a checkout)"


def check_port(port: int) -> int:
    if not 1 <= port <= 65535:
        raise UsageError(f"--port must be between 1 and 65535, not {port}")
    return port


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def app_command(data: Path, content: str | None, python: str | None = None) -> str:
    """The shell command textual-serve runs for each browser tab (it goes through a shell: quote)."""
    parts = [python or sys.executable, "-m", "studytui.takealong.served", "--data-dir", str(data)]
    if content:
        parts += ["--content", str(Path(content).expanduser().resolve())]
    return " ".join(shlex.quote(p) for p in parts)


# textual-serve's page asks Google for a web font it also ships itself; the page must work offline
# and tell no one else that it was opened, so that <link> is taken out (the bundled font is used).
_EXTERNAL_LINK = re.compile(r"<link\b[^>]*\bhref\s*=\s*[\"']https?://(?!127\.0\.0\.1|localhost|\[::1\])[^>]*>", re.S | re.I)


def local_only(html: str) -> str:
    """The page without stylesheets fetched from other hosts."""
    return _EXTERNAL_LINK.sub("", html)


def url_for(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _one_line_formatter():
    import logging

    class OneLine(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            message = record.getMessage() or (record.exc_info[1].__class__.__name__ if record.exc_info else "")
            text = " ".join(str(message).split())  # one line, control characters gone
            return f"studytui: serve: {record.levelname.lower()}: {''.join(c for c in text if c.isprintable())}"

    return OneLine()


def quiet_closed_loop(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    """An unraisable-exception hook that drops one kind of shutdown noise.

    When the server stops while a tab is open, textual-serve's pipe to that tab's app can be
    garbage-collected after aiohttp closed the event loop; its destructor then fails with "Event
    loop is closed", and Python prints that as a traceback after "server stopped". Nothing is
    lost (the app saves its note on the way out); anything else still reaches `previous`."""

    def hook(unraisable: Any) -> object:
        exc = unraisable.exc_value
        if isinstance(exc, RuntimeError) and str(exc) == "Event loop is closed" and "Transport" in repr(unraisable.object):
            return None
        return previous(unraisable)

    return hook


def serve(host: str, port: int, data_dir: str | None, content: str | None) -> int:
    check_port(port)
    try:
        from textual_serve.server import Server
    except ModuleNotFoundError:
        raise UsageError(INSTALL_HINT) from None
    from studytui.guide import load_guide
    from studytui.paths import data_dir as resolve_data_dir
    from studytui.store import open_store

    # Fail here, as one line in the terminal, rather than later inside a browser tab.
    load_guide(content)
    data = resolve_data_dir(data_dir).expanduser().resolve()
    open_store(data).close()
    url = url_for(host, port)
    command = app_command(data, content)

    class StudyServer(Server):
        def initialize_logging(self) -> None:
            # Quiet, one line per problem: our own lines say what matters, and a browser tab
            # closing mid-frame is not worth a traceback.
            import logging

            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(_one_line_formatter())
            logging.basicConfig(level="WARNING", handlers=[handler], force=True)
            # asyncio's notes about child processes outliving the loop at shutdown are not the learner's concern.
            logging.getLogger("asyncio").setLevel(logging.ERROR)

        async def _make_app(self):
            from aiohttp import web

            @web.middleware
            async def no_external_requests(request, handler):
                response = await handler(request)
                if request.path == "/" and isinstance(response, web.Response) and response.text:
                    response.text = local_only(response.text)
                return response

            app = await super()._make_app()
            app.middlewares.append(no_external_requests)
            return app

        async def on_startup(self, app) -> None:
            sys.stdout.write(f"studytui: serving the study app at {url}\n")
            sys.stdout.write(f"studytui: progress and notes in {data}\n")
            if not is_loopback(host):
                sys.stdout.write(
                    f"studytui: warning: {host} is not a loopback address; anyone who can reach it "
                    "can read and change your notes\n"
                )
            sys.stdout.write("studytui: open the address in a browser; Ctrl+C stops the server\n")
            sys.stdout.flush()

    server = StudyServer(command, host=host, port=port, title="studytui", public_url=url)
    sys.unraisablehook = quiet_closed_loop(sys.unraisablehook)
    try:
        server.serve()
    except OSError as exc:
        raise StudyError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    sys.stdout.write("studytui: server stopped\n")
    return 0
