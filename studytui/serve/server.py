"""`studytui serve`: the study app in a browser, through Textualize's textual-serve.

The server runs one copy of the app per browser tab, each a child process started with the same
data directory and content as the terminal app would use, so progress and notes are shared and
the store's rules for several writers hold.

What guards it (all in `StudyServer`, wrapped around textual-serve's aiohttp application):

- a token, random per start unless `--token` gives one, in the query of every request but those
  for textual-serve's own static files (its scripts, styles, fonts: public, the same for everyone):
  the page (`/?token=…`, the printed URL; it stays in the address bar, so a reload works), the
  page's WebSocket (its address, written into the page, carries it), and anything else. No cookie
  carries it: browsers send a cookie for 127.0.0.1 to every port there, so any other local server
  the learner's browser visits would get it. Cookies a request brings are never read (an older
  studytui's `studytui-token-PORT` cookie is expired instead), no response lets the address go
  on in a Referer (`PAGE_HEADERS`), and no log line shows the token. textual-serve's downloads
  (`/download/KEY`, which its script opens without the token) are refused: the app delivers none;
- the Host header must name this server (a loopback name or address when bound to loopback, the
  bound address otherwise; any name on a wildcard address), so DNS rebinding gets 421;
- a WebSocket, and any request other than GET or HEAD, must come with this server's own Origin,
  and a request with another site's Origin is refused (cross-site WebSocket hijacking);
- at most `--max-tabs` tabs at once, a terminal size within MAX_WIDTH x MAX_HEIGHT, and a tab
  that stops reading is dropped after SEND_TIMEOUT seconds (its app is told to quit, so it saves).
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Callable

from studytui.core.errors import StudyError, UsageError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_TABS = 4
MAX_TABS_LIMIT = 64
MIN_TOKEN_LENGTH = 16
MAX_WIDTH, MAX_HEIGHT = 500, 200  # columns and rows a tab may ask for (larger requests are clamped)
SEND_TIMEOUT = 5.0  # seconds one write to a tab may wait before the tab counts as stalled
HEARTBEAT = 10.0  # seconds between WebSocket pings; no pong within half of it drops the tab
TAB_WAIT = 2.0  # seconds a new tab waits for a slot (a reloading tab's old app is still quitting)
INSTALL_HINT = "the browser server needs the 'serve' extra: pip install 'studytui[serve]' (or -e \".[serve]\" in a checkout)"
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~-]+\Z")  # unreserved in a URL: the printed address is literal
_HOST_HEADER = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::([0-9]{1,5}))?\Z")
_INTEGER = re.compile(r"[+-]?[0-9]{1,9}\Z")



def _log():
    import logging

    return logging.getLogger("studytui.serve")

NEED_TOKEN = ("studytui: this address needs its token: open the URL that 'studytui serve' printed in "
              "its terminal (it ends in ?token=...)\n")
FOREIGN_ORIGIN = "studytui: refused: this request comes from another web site (its Origin is not this server)\n"
MISDIRECTED = "studytui: refused: this server does not answer to the host name in the request\n"


def check_port(port: int) -> int:
    if not 1 <= port <= 65535:
        raise UsageError(f"--port must be between 1 and 65535, not {port}")
    return port


def check_token(token: str | None) -> str:
    """The token given with --token, checked; a fresh random one when none was given."""
    if token is None:
        import secrets

        return secrets.token_urlsafe(32)
    if len(token) < MIN_TOKEN_LENGTH or not _TOKEN_CHARS.match(token):
        raise UsageError(f"--token must be at least {MIN_TOKEN_LENGTH} characters of letters, digits, "
                         "'-', '_', '.' or '~' (leave it out for a random one)")
    return token


def check_max_tabs(tabs: int) -> int:
    if not 1 <= tabs <= MAX_TABS_LIMIT:
        raise UsageError(f"--max-tabs must be between 1 and {MAX_TABS_LIMIT}, not {tabs}")
    return tabs


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def app_command(data: Path, content: str | None, python: str | None = None) -> str:
    """The shell command textual-serve runs for each browser tab (it goes through a shell: quote)."""
    parts = [python or sys.executable, "-m", "studytui.serve.served", "--data-dir", str(data)]
    if content:
        parts += ["--content", str(Path(content).expanduser().resolve())]
    return " ".join(shlex.quote(p) for p in parts)


# textual-serve's page asks Google for a web font it also ships itself; the page must work offline
# and tell no one else that it was opened, so that <link> is taken out (the bundled font is used).
_LINK = re.compile(r"<link\b[^>]*\bhref\s*=\s*[\"'](https?://[^\"'/]*)[^>]*>", re.S | re.I)

# The cookie an older studytui set (`studytui-token-PORT`, host-wide: every port on that host got
# it). Never read; a response to a request that brings one expires it.
_OLD_COOKIE = re.compile(r"studytui-token-[0-9]{1,5}\Z")
# The page's own headers: no Referer leaves it (the token is in its address), no other page frames it
# or keeps a handle on it (a link the app opens in a new tab gets no window.opener), nothing cached.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def local_only(html: str, authority: str = "127.0.0.1") -> str:
    """The page without stylesheets fetched from hosts other than this server (`authority`: the
    Host the browser used, already checked; the page's own stylesheets are written for it)."""
    own = {f"http://{authority}".lower(), f"https://{authority}".lower()}
    loopback = re.compile(r"https?://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$", re.I)

    def keep_ours(match: re.Match[str]) -> str:
        origin = match.group(1).lower()
        return match.group(0) if origin in own or loopback.match(origin) else ""

    return _LINK.sub(keep_ours, html)


def websocket_url(authority: str, token: str) -> str:
    """The address the page opens its WebSocket at: the name the browser used for the page (its Host
    header, checked) and the token in the query.

    textual.js appends `"?width=" + cols + "&height=" + rows` to this address as it is; the trailing
    `&` makes that `…?token=T&?width=80&height=24`, whose parameters are token, `?width` and height
    (`ws_size` reads `?width` as width)."""
    from urllib.parse import quote

    return f"ws://{authority}/ws?token={quote(token, safe='')}&"


def ws_size(query: Any) -> tuple[object, object]:
    """The width and height a WebSocket request asks for, from its query (see `websocket_url`)."""
    return query.get("width", query.get("?width", "80")), query.get("height", "24")


def url_for(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def clamp_size(width: object, height: object) -> tuple[int, int] | None:
    """A terminal size a tab asked for, within 1..MAX_WIDTH x 1..MAX_HEIGHT; None if not numbers."""
    size = []
    for value, most in ((width, MAX_WIDTH), (height, MAX_HEIGHT)):
        if isinstance(value, str) and _INTEGER.match(value.strip()):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        size.append(max(1, min(most, value)))
    return size[0], size[1]


class Guard:
    """Which requests the server answers: Host, Origin and token rules, without aiohttp."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host = host.lower().strip("[]")
        self.port = port
        self.token = token.encode()
        self.wildcard = self.host in WILDCARD_HOSTS
        self.loopback = is_loopback(self.host)

    @staticmethod
    def _split(authority: str) -> tuple[str, int | None] | None:
        found = _HOST_HEADER.match(authority.lower())
        if found is None:
            return None
        return found[1].strip("[]"), int(found[2]) if found[2] else None

    def host_ok(self, header: str | None) -> bool:
        """Whether the Host header names this server. A rebinding attack sends its own domain name
        here, so the name is what counts; the port is not checked (an SSH tunnel may use another)."""
        parts = None if header is None else self._split(header)
        if parts is None:
            return False
        name = parts[0]
        if self.wildcard:  # the token still guards it; this machine's names are too many to list
            return True
        if name == self.host:
            return True
        return self.loopback and is_loopback(name)

    def origin_ok(self, origin: str | None, host_header: str) -> bool:
        """Whether a request's Origin is this server as the browser reached it (Host was checked):
        the same origin, or, on loopback, another loopback name for the same port."""
        if origin is None or not origin.lower().startswith("http://"):
            return False
        theirs, ours = self._split(origin[len("http://"):]), self._split(host_header)
        if theirs is None or ours is None:
            return False
        if theirs == ours or (theirs[0] == ours[0] and {theirs[1], ours[1]} <= {None, 80}):
            return True
        same_port = (theirs[1] or 80) == (ours[1] or 80)
        return self.loopback and same_port and is_loopback(theirs[0]) and is_loopback(ours[0])

    def token_ok(self, candidate: str | None) -> bool:
        import hmac

        return candidate is not None and hmac.compare_digest(candidate.encode("utf-8", "replace"), self.token)


def _one_line_formatter(secrets: tuple[str, ...] = ()):
    """One line per record; each of `secrets` (the token) shown as `<token>` wherever it occurs (an
    error's text or a library's line naming a request's URL must not put it in the terminal)."""
    import logging

    class OneLine(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            message = record.getMessage() or (record.exc_info[1].__class__.__name__ if record.exc_info else "")
            message = str(message)
            for secret in secrets:
                message = message.replace(secret, "<token>")
            text = " ".join(message.split())  # one line, control characters gone
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


class _Link:
    """The writing side of one tab's WebSocket, as its app's output reaches it.

    Every write is bounded: one that waits SEND_TIMEOUT seconds (the browser stopped reading; the
    socket's buffers are full) drops the tab, cutting the connection. From then on, and once the
    socket is closed, output is discarded rather than waited for, so textual-serve keeps reading
    the app's output and the app, never blocked writing it, can take the quit message and save."""

    def __init__(self, websocket: Any, request: Any, timeout: float) -> None:
        self.websocket, self.request, self.timeout = websocket, request, timeout
        self.gone = False
        self.dropped = False

    async def _send(self, send: Callable[[Any], Any], data: Any) -> None:
        import asyncio

        if self.gone:
            return
        try:
            await asyncio.wait_for(send(data), self.timeout)
        except asyncio.TimeoutError:
            self.drop()
        except (ConnectionError, RuntimeError):  # closed by the browser, or closing
            self.gone = True

    async def send_bytes(self, data: bytes) -> None:
        await self._send(self.websocket.send_bytes, data)

    async def send_str(self, data: str) -> None:
        await self._send(self.websocket.send_str, data)

    async def close(self) -> None:
        """The app ended (textual-serve's cue to close the socket)."""
        import asyncio

        if self.gone:
            return
        self.gone = True
        try:
            await asyncio.wait_for(self.websocket.close(), self.timeout)
        except (asyncio.TimeoutError, ConnectionError, RuntimeError):
            self.abort()

    def drop(self) -> None:
        if not self.dropped:
            _log().warning("a browser tab stopped reading for %g s; dropped it (its app saves and quits)", self.timeout)
        self.gone = self.dropped = True
        self.abort()

    def abort(self) -> None:
        transport = self.request.transport
        if transport is not None:
            transport.abort()

    def finish(self) -> None:
        """The tab is over: a connection still holding unsent output (a stalled browser) is cut."""
        transport = self.request.transport
        if transport is not None and transport.get_write_buffer_size():
            transport.abort()


def study_server_class() -> type:
    """textual-serve's Server with studytui's guards (imported here: textual-serve is an extra)."""
    import asyncio
    import json
    import logging

    import aiohttp_jinja2
    from aiohttp import WSMsgType, web, web_urldispatcher
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    log = _log()

    def plain(status: int, text: str) -> Any:
        return web.Response(status=status, text=text, content_type="text/plain")

    class StudyServer(Server):
        send_timeout = SEND_TIMEOUT
        heartbeat = HEARTBEAT
        tab_wait = TAB_WAIT

        def __init__(self, command: str, *, host: str, port: int, token: str, max_tabs: int = DEFAULT_MAX_TABS,
                     data: Path | None = None) -> None:
            super().__init__(command, host=host, port=port, title="studytui", public_url=url_for(host, port))
            self.token = token
            self.max_tabs = max_tabs
            self.data = data
            self.tabs = 0
            self._tab_freed: asyncio.Event | None = None

        @property
        def guard(self) -> Guard:
            # Built from the current port: a test may bind port 0 and set the port it got.
            return Guard(self.host, self.port, self.token)

        @property
        def url(self) -> str:
            return f"{url_for(self.host, self.port)}/?token={self.token}"

        def initialize_logging(self) -> None:
            # Quiet, one line per problem: our own lines say what matters, and a browser tab
            # closing mid-frame is not worth a traceback.
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(_one_line_formatter((self.token,)))
            logging.basicConfig(level="WARNING", handlers=[handler], force=True)
            # asyncio's notes about child processes outliving the loop at shutdown are not the learner's concern.
            logging.getLogger("asyncio").setLevel(logging.ERROR)

        async def _make_app(self):
            @web.middleware
            async def guard(request, handler):
                rules = self.guard
                host = request.headers.get("Host")
                if not rules.host_ok(host):
                    return plain(421, MISDIRECTED)
                origin = request.headers.get("Origin")
                upgrade = request.headers.get("Upgrade", "").lower() == "websocket" or request.path == "/ws"
                if (origin is not None or upgrade or request.method not in ("GET", "HEAD")) and not rules.origin_ok(origin, host):
                    return plain(403, FOREIGN_ORIGIN)
                # Only the token in the query counts: cookies are never read (see the module's notes).
                # textual-serve's static files (GET or HEAD of a file under /static/: its scripts,
                # styles and fonts) are public and the same for everyone; the page asks for them
                # without the token.
                public = isinstance(request.match_info.route.resource, web_urldispatcher.StaticResource) and \
                    request.method in ("GET", "HEAD")
                if request.path == "/favicon.ico" and request.method in ("GET", "HEAD"):
                    return web.Response(status=204)  # browsers ask on their own; an error in the console otherwise
                if not public and not rules.token_ok(request.query.get("token")):
                    return plain(403, NEED_TOKEN)
                return await handler(request)

            async def headers(request, response) -> None:
                if isinstance(response, web.WebSocketResponse):
                    return
                response.headers.update(PAGE_HEADERS)
                # A cookie an older studytui left (it holds a token, and goes to every port on this
                # host): expired. No cookie is ever set with a value.
                for name in request.cookies:
                    if _OLD_COOKIE.match(name):
                        response.headers.add("Set-Cookie", f"{name}=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT")

            app = await super()._make_app()
            app.middlewares.append(guard)  # outermost: nothing is answered before it
            app.on_response_prepare.append(headers)
            return app

        async def handle_index(self, request):
            # textual-serve's page (its template), with its addresses written for the name the
            # browser used (Host is checked) and the token in the WebSocket's, rather than from
            # public_url; and without the stylesheet it would fetch from another host.
            authority = request.headers["Host"]
            router = request.app.router
            static = f"http://{authority}{router['static'].url_for(filename='/')}".rstrip("/") + "/"
            font_size = request.query.get("fontsize", "16").strip()
            context = {
                "font_size": max(6, min(64, int(font_size))) if _INTEGER.match(font_size) else 16,
                "app_websocket_url": websocket_url(authority, self.token),
                "config": {"static": {"url": static}},
                "application": {"name": self.title},
            }
            response = aiohttp_jinja2.render_template("app_index.html", request, context)
            response.text = local_only(response.text or "", authority)
            return response

        async def _take_tab(self) -> bool:
            if self._tab_freed is None:
                self._tab_freed = asyncio.Event()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.tab_wait
            while self.tabs >= self.max_tabs:
                left = deadline - loop.time()
                if left <= 0:
                    return False
                self._tab_freed.clear()
                try:
                    await asyncio.wait_for(self._tab_freed.wait(), left)
                except asyncio.TimeoutError:
                    return False
            self.tabs += 1
            return True

        def _free_tab(self) -> None:
            self.tabs -= 1
            if self._tab_freed is not None:
                self._tab_freed.set()

        async def handle_websocket(self, request):
            size = clamp_size(*ws_size(request.query))
            if size is None:
                return plain(400, "studytui: width and height must be whole numbers\n")
            if not await self._take_tab():
                log.warning("refused a browser tab: %d are open already (--max-tabs %d)", self.tabs, self.max_tabs)
                return plain(503, f"studytui: {self.max_tabs} tabs are open already (--max-tabs {self.max_tabs}); "
                                  "close one, then reload this page\n")
            try:
                return await self._run_tab(request, *size)
            finally:
                self._free_tab()

        async def _run_tab(self, request, width: int, height: int):
            websocket = web.WebSocketResponse(heartbeat=self.heartbeat)
            await websocket.prepare(request)
            link = _Link(websocket, request, self.send_timeout)
            app = AppService(self.command, write_bytes=link.send_bytes, write_str=link.send_str, close=link.close,
                             download_manager=self.download_manager, debug=self.debug)
            try:
                await app.start(width, height)
                await self._relay(websocket, app, link)
            except asyncio.CancelledError:  # the server is stopping: the tab closes, its app quits below
                await link.close()
            except Exception as error:
                log.warning("a browser tab ended: %s", error)
            finally:
                # textual-serve's stop: a quit message, then it reads the app's output until the app
                # has exited (the link discards that output once the tab is gone).
                await app.stop()
                link.finish()
            return websocket

        async def _relay(self, websocket, app, link: _Link) -> None:
            """What the page sends, to the app: keys, its size (clamped), focus; pings answered."""
            async for message in websocket:
                if message.type != WSMsgType.TEXT:
                    continue
                try:
                    envelope = json.loads(message.data)
                except ValueError:
                    continue
                if not isinstance(envelope, list) or not envelope:
                    continue
                kind, body = envelope[0], envelope[1] if len(envelope) > 1 else None
                if kind == "stdin" and isinstance(body, str):
                    await app.send_bytes(body.encode("utf-8", "replace"))
                elif kind == "resize" and isinstance(body, dict):
                    size = clamp_size(body.get("width"), body.get("height"))
                    if size is not None:
                        await app.set_terminal_size(*size)
                elif kind == "ping":
                    await link.send_str(json.dumps(["pong", body]))
                elif kind == "blur":
                    await app.blur()
                elif kind == "focus":
                    await app.focus()

        async def on_startup(self, app) -> None:
            sys.stdout.write(f"studytui: serving the study app at {self.url}\n")
            if self.data is not None:
                sys.stdout.write(f"studytui: progress and notes in {self.data}\n")
            if not is_loopback(self.host):
                anyname = "; any host name is accepted" if self.guard.wildcard else ""
                sys.stdout.write(
                    f"studytui: warning: {self.host} is not a loopback address: anyone on the network who has the "
                    "address above (its token) can read and change your notes, and without TLS the token and "
                    f"the notes cross the network unencrypted{anyname}\n"
                )
            sys.stdout.write("studytui: open that address (with its token) in a browser; Ctrl+C stops the server\n")
            sys.stdout.flush()

    return StudyServer


def serve(host: str, port: int, data_dir: str | None, content: str | None, token: str | None = None,
          max_tabs: int = DEFAULT_MAX_TABS) -> int:
    check_port(port)
    token = check_token(token)
    check_max_tabs(max_tabs)
    try:
        server_class = study_server_class()
    except ModuleNotFoundError:
        raise UsageError(INSTALL_HINT) from None
    from studytui.core.paths import data_dir as resolve_data_dir
    from studytui.study.workspace import open_workspace

    # Fail here, as one line in the terminal, rather than later inside a browser tab (which opens
    # the same workspace again, through studytui.tui.launch).
    _guide, store = open_workspace(content, data_dir)
    store.close()
    data = resolve_data_dir(data_dir).expanduser().resolve()
    server = server_class(app_command(data, content), host=host, port=port, token=token, max_tabs=max_tabs, data=data)
    sys.unraisablehook = quiet_closed_loop(sys.unraisablehook)
    try:
        server.serve()
    except OSError as exc:
        raise StudyError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    sys.stdout.write("studytui: server stopped\n")
    return 0
