"""`studytui serve`: options, one-line errors, and the app in a real browser.

The browser test starts the server on a free loopback port, opens the page in headless Chromium
(Playwright for Python driving the system's Chromium: nothing is downloaded), waits for the app's
first frame, presses `d`, and checks with `studytui progress --json` that the entry is done. It is
skipped, saying why, when Playwright, textual-serve or Chromium is missing (CI installs Chromium
with the system package manager: see .ci/run).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.guide import load_guide
from studytui.serve.server import app_command, is_loopback, url_for

CLI = [sys.executable, "-c", "import sys; from studytui.cli import main; sys.exit(main())"]
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_chromium() -> str | None:
    # STUDYTUI_CHROMIUM names the browser; set but empty, it means "no browser here".
    chosen = os.environ.get("STUDYTUI_CHROMIUM")
    for candidate in (chosen,) if chosen is not None else CHROMIUM_CANDIDATES:
        if not candidate:
            continue
        path = candidate if os.path.isabs(candidate) else shutil.which(candidate)
        if path and os.access(path, os.X_OK):
            return path
    return None


@pytest.mark.parametrize("port", ["0", "70000", "-1"])
def test_bad_port_is_a_usage_error(capsys: pytest.CaptureFixture[str], port: str) -> None:
    code, _, err = run(capsys, "serve", "--port", port)
    assert code == 2 and err.count("\n") == 1 and "--port" in err


def test_without_the_serve_extra(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "textual_serve", None)
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    code, _, err = run(capsys, "serve")
    assert code == 2 and "pip install" in err and "[serve]" in err and err.count("\n") == 1


def test_port_in_use_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("textual_serve", reason="needs the 'serve' extra (textual-serve)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        code, _, err = run(capsys, "serve", "--port", str(s.getsockname()[1]))
    assert code == 1 and err.startswith("studytui: error: cannot serve on 127.0.0.1:") and err.count("\n") == 1


def test_app_command_passes_data_and_content_through(tmp_path: Path) -> None:
    odd = tmp_path / "my data; $(touch x) 'q'"
    parts = shlex.split(app_command(odd, str(tmp_path / "content dir"), python="/usr/bin/python3"))
    assert parts == ["/usr/bin/python3", "-m", "studytui.serve.served", "--data-dir", str(odd),
                     "--content", str((tmp_path / "content dir").resolve())]


def test_addresses() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    assert url_for("::1", 8000) == "http://[::1]:8000"


def start_server(data: Path, *args: str) -> tuple[subprocess.Popen, str, int]:
    """`studytui serve` in a subprocess on a free port: the process, the address it printed (with
    its token) and the port. A port taken between choosing it and binding it (tests run in
    parallel) means another try on another port."""
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [*CLI, "--data-dir", str(data), "serve", "--port", str(port), *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,  # its own process group, like a job in a terminal
        )
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
        reader.start()
        proc.lines, proc.reader = lines, reader  # type: ignore[attr-defined]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            printed = [m for line in list(lines) if (m := re.search(r"serving the study app at (\S+)", line))]
            if printed:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                        return proc, printed[0][1], port
                except OSError:
                    pass
            if proc.poll() is not None:
                reader.join(5)
                if "cannot serve on" in "".join(lines):
                    break  # the port was taken meanwhile: another one
                pytest.fail(f"the server exited early: {''.join(lines)}")
            time.sleep(0.05)
        else:
            proc.kill()
            pytest.fail("the server did not start listening within 30 s")
    pytest.fail("no free port for the server in 5 tries")


def stop_server(proc: subprocess.Popen) -> str:
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl+C in a terminal sends: to the server and each tab's app
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        proc.reader.join(5)  # type: ignore[attr-defined]
        pytest.fail(f"Ctrl+C did not stop the server within 30 s:\n{''.join(proc.lines)}")  # type: ignore[attr-defined]
    proc.reader.join(10)  # type: ignore[attr-defined]
    out = "".join(proc.lines)  # type: ignore[attr-defined]
    assert proc.returncode == 0, out
    return out


def progress(data: Path) -> dict:
    done = subprocess.run([*CLI, "--data-dir", str(data), "progress", "--json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def settled_states(data: Path, expected: dict[str, str], what: str) -> None:
    """Wait until the store holds exactly `expected` (states other than pending), and it stays so."""
    from studytui.store import open_store

    def states() -> dict[str, str]:
        store = open_store(data)
        try:
            return {k: p.state for k, p in store.states().items() if p.state != "pending"}
        finally:
            store.close()

    deadline = time.monotonic() + 30
    while states() != expected:
        assert time.monotonic() < deadline, f"{what}: {states()} != {expected}"
        time.sleep(0.1)
    time.sleep(0.4)  # and nothing late changes it
    assert states() == expected, what


def test_app_in_a_browser(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    pytest.importorskip("textual_serve", reason="needs the 'serve' extra (textual-serve)")
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("Chromium not found (apt-get install chromium, or set STUDYTUI_CHROMIUM); browser test of 'studytui serve' skipped")
    data = tmp_path / "data"
    first = load_guide().entries[0]
    proc, url, port = start_server(data)
    assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/\?token=[A-Za-z0-9_-]{{43}}", url), url
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1200, "height": 760})
                received: list[str] = []  # what every WebSocket of the page got
                sockets: list[str] = []  # their addresses
                frames: list[list[str]] = []  # what each got

                def on_socket(ws) -> None:
                    sockets.append(ws.url)
                    mine: list[str] = []
                    frames.append(mine)

                    def got(payload) -> None:
                        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
                        received.append(text)
                        mine.append(text)

                    ws.on("framereceived", got)

                page.on("websocket", on_socket)
                elsewhere: list[str] = []  # nothing may be fetched from another host (offline, private)
                page.on(
                    "request",
                    lambda r: (
                        elsewhere.append(r.url) if not r.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")) else None
                    ),
                )
                refused: list[str] = []  # the page's scripts, styles, fonts and WebSocket all load
                page.on("response", lambda r: refused.append(f"{r.status} {r.url}") if r.status >= 400 else None)
                asked: list[str] = []  # what the page asks this server for
                page.on("request", lambda r: asked.append(r.url))

                def first_frame(tab: int) -> None:
                    # The app is up when its first frame (the footer with the Done key) has arrived
                    # on the page's WebSocket number `tab` (1, then 2 after a reload).
                    deadline = time.monotonic() + 60
                    while len(frames) < tab or "Done" not in "".join(frames[tab - 1]):
                        assert time.monotonic() < deadline, f"the app's first frame never reached the browser (tab {tab})"
                        page.wait_for_timeout(100)

                page.goto(url, wait_until="domcontentloaded")
                first_frame(1)
                assert elsewhere == [] and refused == []
                static = f"http://127.0.0.1:{port}/static/"
                assert {static + "js/textual.js", static + "css/xterm.css"} <= set(asked), asked
                # The WebSocket carries the token in its query (as textual.js writes it: `&?width=`);
                # no cookie does: the browser holds none for this host, which every other port shares.
                token = url.split("token=")[1]
                assert len(sockets) == 1 and sockets[0].startswith(f"ws://127.0.0.1:{port}/ws?token={token}&?width="), sockets
                assert page.context.cookies() == []
                assert page.url == url  # the token stays in the address bar: a reload works
                page.locator(".xterm").first.click()
                assert progress(data)["done"] == 0
                page.keyboard.press("d")
                deadline = time.monotonic() + 30
                while (p := progress(data))["done"] != 1:
                    assert time.monotonic() < deadline, f"'d' in the browser did not mark the entry done: {p}"
                    time.sleep(0.3)
                assert p["sections"][0]["done"] == 1
                # Reloading the page (its address keeps the token) gets the app again.
                page.reload(wait_until="domcontentloaded")
                first_frame(2)
                assert refused == [] and len(sockets) == 2 and sockets[1].startswith(sockets[0].split("&?")[0] + "&?")
                assert page.context.cookies() == [] and page.url == url
                page.locator(".xterm").first.click()
                # Issue 23: keys typed with no delay (`nnnnn` used to move two entries, `nd` marked the
                # entry just left) each act on the entry the key before left on screen.
                entries = load_guide().entries
                ids = [e.id for e in entries]
                expected = {first.id: "done"}
                for keys, entry, state in (("nd", 1, "done"), ("n" * 10 + "d", 11, "done"), ("pl", 10, "learning"),
                                           (("/deepgemm", "Enter", "nd"), ids.index("deepgemm") + 1, "done")):
                    for part in (keys,) if isinstance(keys, str) else keys:
                        page.keyboard.press(part) if part == "Enter" else page.keyboard.type(part, delay=0)
                    expected[entries[entry].id] = state
                    settled_states(data, expected, " ".join(keys) if not isinstance(keys, str) else keys)
                noted = entries[ids.index("deepgemm") + 1]
                # A note typed in the browser, the server stopped at once: the tab's app saves it on the way out.
                page.keyboard.press("e")
                page.wait_for_timeout(800)
                page.keyboard.type("typed in the browser")
                deadline = time.monotonic() + 30
                while "typed in the browser" not in "".join(received):  # the app has it on screen
                    assert time.monotonic() < deadline, "the typed note never showed in the app"
                    page.wait_for_timeout(50)
                shot = os.environ.get("STUDYTUI_SERVE_SCREENSHOT")
                if shot:  # scripts and the README's picture: STUDYTUI_SERVE_SCREENSHOT=docs/serve.png
                    page.wait_for_timeout(500)
                    page.screenshot(path=shot)
                out = stop_server(proc)  # Ctrl+C while the tab is still open
            finally:
                browser.close()
    finally:
        if proc.poll() is None:
            out = stop_server(proc)
    assert f"serving the study app at {url}\n" in out and str(data) in out
    assert "server stopped" in out and "Traceback" not in out, out
    # The terminal commands see the same store: the entry the browser marked.
    done = subprocess.run([*CLI, "--data-dir", str(data), "export", "-", "--format", "json"], capture_output=True, text=True, check=True)
    entries = {e["entry_id"]: e for e in json.loads(done.stdout)["entries"]}
    assert entries[first.id]["state"] == "done"
    assert entries[noted.id]["note"] == "typed in the browser"


def test_server_log_lines_are_one_line_without_traceback() -> None:
    import logging

    from studytui.serve.server import _one_line_formatter

    try:
        raise ConnectionResetError("socket closed\n\x1b[31mmid-frame")
    except ConnectionResetError:
        record = logging.LogRecord("textual-serve", logging.ERROR, __file__, 1, "%s", ("socket closed\n\x1b[31mmid-frame",), sys.exc_info())
    line = _one_line_formatter().format(record)
    assert line == "studytui: serve: error: socket closed [31mmid-frame"


def test_no_log_line_shows_the_token() -> None:
    # The server's handler writes records through this formatter, given the token: an error whose
    # text (or a library's line) names a request's URL shows `<token>` in its place.
    import logging

    from studytui.serve.server import _one_line_formatter

    record = logging.LogRecord("aiohttp.server", logging.WARNING, __file__, 1, "bad request %s",
                               (f"GET /ws?token={TOKEN}&?width=80",), None)
    line = _one_line_formatter((TOKEN,)).format(record)
    assert TOKEN not in line and line == "studytui: serve: warning: bad request GET /ws?token=<token>&?width=80"


def test_page_asks_no_other_host() -> None:
    from studytui.serve.server import local_only

    page = """<head><link rel="stylesheet" href="http://127.0.0.1:8000/static/css/xterm.css" />
    <link
      rel="stylesheet"
      href="https://fonts.googleapis.com/css?family=Roboto%20Mono"
    /><script src="http://127.0.0.1:8000/static/js/textual.js"></script></head>"""
    out = local_only(page)
    assert "googleapis" not in out and "xterm.css" in out and "textual.js" in out
    # Under another name the browser used (a LAN address, 127.0.0.2), the page's own stylesheet stays.
    lan = page.replace("127.0.0.1:8000", "192.168.5.7:8000")
    out = local_only(lan, "192.168.5.7:8000")
    assert "googleapis" not in out and "192.168.5.7:8000/static/css/xterm.css" in out
    assert "xterm.css" not in local_only(page.replace("127.0.0.1:8000", "evil.example"), "192.168.5.7:8000")


def test_shutdown_noise_from_a_closed_loop_is_dropped_and_nothing_else() -> None:
    # A tab's pipe collected after the server's loop closed must not print a traceback after
    # "server stopped"; any other unraisable exception still reaches the previous hook.
    import asyncio.base_subprocess
    import types

    from studytui.serve.server import quiet_closed_loop

    seen: list[object] = []
    hook = quiet_closed_loop(seen.append)
    noise = types.SimpleNamespace(exc_value=RuntimeError("Event loop is closed"),
                                  object=asyncio.base_subprocess.BaseSubprocessTransport.__del__)
    hook(noise)
    assert seen == []
    for other in (
        types.SimpleNamespace(exc_value=RuntimeError("Event loop is closed"), object=print),
        types.SimpleNamespace(exc_value=ValueError("something else"), object=asyncio.base_subprocess.BaseSubprocessTransport.__del__),
    ):
        hook(other)
    assert len(seen) == 2


# --- The guards: token, Origin, Host, tab limit, terminal size, stalled tabs ---------------------
#
# Most of these run textual-serve's server in a thread of this process (bound to port 0 on
# loopback, so no port is ever taken from another test) with a stand-in app: a few lines of Python
# that speak textual-serve's protocol to the server (a line, then packets: b"D"/b"M", a 4-byte
# length, the payload), say what size they were given, and leave a file saying they quit. It starts
# in milliseconds, where the study app takes a second or more of CPU.

TOKEN = "test-token-0123456789abcdef"

STAND_IN_APP = r'''
import json, os, select, sys
mode, marker = sys.argv[1], sys.argv[2]
out, inp = sys.stdout.fileno(), sys.stdin.fileno()

def packet(kind, payload):
    data = kind + len(payload).to_bytes(4, "big") + payload
    while data:  # blocking, like Textual's web driver: a full pipe stops the app here
        data = data[os.write(out, data):]

with open(marker + ".pid", "w") as f:
    f.write(str(os.getpid()))
with open(marker + ".env", "w") as f:  # what a tab's app is started with
    json.dump({"argv": sys.argv, "environ": dict(os.environ)}, f)
typed = []  # keys received, saved on quit (as the study app saves the note being typed)
os.write(out, b"__GANGLION__\n")
packet(b"D", f"size {os.environ['COLUMNS']}x{os.environ['ROWS']}".encode())
pending = b""
while True:
    if mode == "flood":
        packet(b"D", b"x" * 65536)
        ready = select.select([inp], [], [], 0)[0]
    else:
        ready = select.select([inp], [], [])[0]
    if not ready:
        continue
    chunk = os.read(inp, 65536)
    if not chunk:
        break
    pending += chunk
    while len(pending) >= 5 and len(pending) >= 5 + int.from_bytes(pending[1:5], "big"):
        size = int.from_bytes(pending[1:5], "big")
        kind, payload, pending = pending[:1], pending[5:5 + size], pending[5 + size:]
        if kind == b"D":
            typed.append(payload)
            packet(b"D", b"got " + payload)
            continue
        meta = json.loads(payload)
        if meta["type"] == "resize":
            packet(b"D", f"resize {meta['width']}x{meta['height']}".encode())
        elif meta["type"] == "quit":
            with open(marker + ".saved", "wb") as f:
                f.write(b"".join(typed))
            with open(marker + ".quit", "w") as f:
                f.write("quit")
            packet(b"M", b'{"type": "exit"}')
            sys.exit(0)
'''


class InThread:
    """A StudyServer in a thread with its own event loop, on a free loopback port."""

    def __init__(self, tmp_path: Path, mode: str = "echo", **attrs) -> None:
        from aiohttp import web

        from studytui.serve.server import study_server_class

        script = tmp_path / "stand_in_app.py"
        script.write_text(STAND_IN_APP)
        self.marker = tmp_path / "app"
        command = " ".join(shlex.quote(p) for p in (sys.executable, str(script), mode, str(self.marker)))
        self.server = study_server_class()(command, host="127.0.0.1", port=0, token=TOKEN)
        for name, value in attrs.items():  # max_tabs, send_timeout, heartbeat, tab_wait
            setattr(self.server, name, value)
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def start() -> None:
            app = await self.server._make_app()
            app.on_startup.clear()  # no lines printed
            self.runner = web.AppRunner(app, shutdown_timeout=10)
            await self.runner.setup()
            await web.TCPSite(self.runner, "127.0.0.1", 0).start()
            self.server.port = self.port = self.runner.addresses[0][1]
            ready.set()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.create_task(start())
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert ready.wait(30), "the in-thread server did not start"
        self.origin = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/ws?token={TOKEN}"  # add "&width=…" etc.

    def on_loop(self, fn):
        """Run fn() on the server's loop (its state is only touched there) and return its result."""
        async def call():
            return fn()
        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(10)

    def tabs(self) -> int:
        return self.on_loop(lambda: self.server.tabs)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def in_thread(tmp_path: Path):
    pytest.importorskip("textual_serve", reason="needs the 'serve' extra (textual-serve)")
    started: list[InThread] = []

    def start(mode: str = "echo", **attrs) -> InThread:
        started.append(InThread(tmp_path, mode, **attrs))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def wait_until(check, what: str, seconds: float = 20.0):
    deadline = time.monotonic() + seconds
    while not (result := check()):
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(0.02)
    return result


async def receive_until(ws, text: str, seconds: float = 20.0) -> str:
    """What the app sent, up to and including `text`."""
    seen = ""
    deadline = time.monotonic() + seconds
    while text not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"{text!r} never came; got {seen[-300:]!r}"
        message = await ws.receive(timeout=left)
        assert message.type.name in ("BINARY", "TEXT"), (message, seen[-300:])
        seen += message.data.decode("utf-8", "replace") if isinstance(message.data, bytes) else message.data
    return seen


async def handshake_status(session, url: str, **kw) -> int:
    import aiohttp

    try:
        ws = await session.ws_connect(url, timeout=aiohttp.ClientWSTimeout(ws_receive=10), **kw)
    except aiohttp.WSServerHandshakeError as exc:
        return exc.status
    await ws.close()
    return 101


async def test_websocket_from_another_site_is_refused(in_thread) -> None:
    import aiohttp

    srv = in_thread()
    ws_url = srv.ws_url
    async with aiohttp.ClientSession() as session:
        for origin in ("http://evil.example", f"http://127.0.0.1:{srv.port + 1 if srv.port < 65535 else 1}",
                       f"https://127.0.0.1:{srv.port}", "null"):
            assert await handshake_status(session, ws_url, origin=origin) == 403, origin
        # A browser always sends Origin with a WebSocket: one without is not a browser's page, refused too.
        assert await handshake_status(session, ws_url) == 403
        # Any request with another site's Origin, and any request but GET/HEAD without ours.
        async with session.get(f"{srv.origin}/?token={TOKEN}", headers={"Origin": "http://evil.example"}) as r:
            assert r.status == 403 and "another web site" in await r.text()
        async with session.post(f"{srv.origin}/?token={TOKEN}") as r:
            assert r.status == 403
    assert srv.tabs() == 0 and not srv.marker.with_suffix(".pid").exists()  # no app was started


async def test_without_the_token_everything_is_403(in_thread) -> None:
    import aiohttp

    srv = in_thread()
    async with aiohttp.ClientSession() as session:
        for path in ("/", "/ws", "/download/x", "/download/x?token=", "/nothing", "/statics/x",
                     "/?token=" + TOKEN[:-1] + "x", "/?token=", "/?token=" + TOKEN + "x", "/?tok=" + TOKEN,
                     "/ws?width=80&token=" + TOKEN[:-1] + "&height=24"):
            async with session.get(srv.origin + path, headers={"Origin": srv.origin}) as r:
                body = await r.text()
                assert r.status == 403 and "printed" in body and "?token=" in body, (path, r.status, body)
                assert TOKEN not in body
        assert await handshake_status(session, f"ws://127.0.0.1:{srv.port}/ws", origin=srv.origin) == 403
        assert await handshake_status(session, f"ws://127.0.0.1:{srv.port}/ws?width=80&height=24", origin=srv.origin) == 403
        # textual-serve's static files are public (the same for everyone): the page loads them without
        # the token. Only GET and HEAD: a POST there still needs it.
        for path in ("/static/js/textual.js", "/static/css/xterm.css", "/static/fonts/RobotoMono-VariableFont_wght.ttf"):
            async with session.get(srv.origin + path) as r:
                assert r.status == 200 and "Set-Cookie" not in r.headers, path
        async with session.post(srv.origin + "/static/js/textual.js", headers={"Origin": srv.origin}) as r:
            assert r.status == 403 and "printed" in await r.text()
        # The icon browsers ask for on their own: an empty answer (no error in the page's console), nothing else.
        async with session.get(srv.origin + "/favicon.ico") as r:
            assert r.status == 204 and await r.read() == b""
    assert srv.tabs() == 0


async def test_no_cookie_is_set_and_none_is_read(in_thread) -> None:
    # Browsers send a cookie for 127.0.0.1 to every port there (and SameSite ignores ports): any
    # other local server the learner's browser visits would get it. So no response sets one, and
    # a cookie, even one holding the right token (an older studytui's), lets nothing in.
    import aiohttp

    srv = in_thread()
    old = f"studytui-token-{srv.port}"
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{srv.origin}/?token={TOKEN}") as r:
            page = await r.text()
            assert r.status == 200 and "Set-Cookie" not in r.headers and not r.cookies, r.headers
            assert r.headers["Referrer-Policy"] == "no-referrer" and r.headers["Cache-Control"] == "no-store"
            assert r.headers["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
            assert r.headers["Cross-Origin-Opener-Policy"] == "same-origin"
        # The token is in the page once: in the WebSocket's address, for the page's own script; the
        # page no longer takes it out of the address bar (a reload needs it there).
        assert page.count(TOKEN) == 1 and "replaceState" not in page
        found = re.search(r'data-session-websocket-url="([^"]+)"', page)
        ws_url = found[1].replace("&amp;", "&")
        assert ws_url == f"ws://127.0.0.1:{srv.port}/ws?token={TOKEN}&"
        # Opened as textual.js opens it (its size appended with "?"): the app gets that size.
        ws = await session.ws_connect(ws_url + "?width=90&height=20", origin=srv.origin)
        assert "Set-Cookie" not in ws._response.headers
        await receive_until(ws, "size 90x20")
        await ws.close()
    wait_until(lambda: srv.tabs() == 0, "the tab's app quit")
    async with aiohttp.ClientSession(cookies={old: TOKEN}) as session:
        for path in ("/", "/download/x", "/nothing"):
            async with session.get(srv.origin + path) as r:
                assert r.status == 403 and "printed" in await r.text(), path  # the cookie alone: no way in
        assert await handshake_status(session, f"ws://127.0.0.1:{srv.port}/ws", origin=srv.origin) == 403
        # With the token, an old cookie is not needed and is expired: the one Set-Cookie ever sent,
        # empty, for a name an older studytui used; other cookies are left alone.
        session.cookie_jar.update_cookies({"unrelated": "x"})
        async with session.get(f"{srv.origin}/?token={TOKEN}") as r:
            assert r.status == 200
            assert r.headers.getall("Set-Cookie") == [f"{old}=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]
    assert srv.tabs() == 0


async def test_other_host_names_get_421(in_thread) -> None:
    import aiohttp

    srv = in_thread()
    async with aiohttp.ClientSession() as session:
        for host in ("rebind.attacker.invalid", f"rebind.attacker.invalid:{srv.port}", "127.0.0.1.attacker.invalid",
                     "evil.example:80", "<script>", ""):
            async with session.get(f"{srv.origin}/?token={TOKEN}", headers={"Host": host}) as r:
                assert r.status == 421 and "host name" in await r.text(), host
        assert await handshake_status(session, srv.ws_url, origin="http://rebind.attacker.invalid",
                                      headers={"Host": "rebind.attacker.invalid"}) == 421
        # This machine's loopback names are this server, on any port (an SSH tunnel may use another one),
        # and the page then points its WebSocket at the name the browser used.
        for host in (f"localhost:{srv.port}", f"[::1]:{srv.port}", f"127.0.0.1:{srv.port}", "LOCALHOST:9000"):
            async with session.get(f"{srv.origin}/?token={TOKEN}", headers={"Host": host}) as r:
                assert r.status == 200, host
                assert f'data-session-websocket-url="ws://{host}/ws?token={TOKEN}&amp;"' in await r.text()


def test_host_and_origin_rules() -> None:
    from studytui.serve.server import Guard

    loop = Guard("127.0.0.1", 8000, TOKEN)
    assert loop.host_ok("127.0.0.1:8000") and loop.host_ok("localhost:8000") and loop.host_ok("[::1]:8000")
    assert loop.host_ok("127.0.0.2:8000") and loop.host_ok("localhost")
    assert not loop.host_ok(None) and not loop.host_ok("rebind.attacker.invalid:8000") and not loop.host_ok("[::1")
    assert loop.origin_ok("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert loop.origin_ok("http://localhost:8000", "127.0.0.1:8000")  # another loopback name, same port
    assert not loop.origin_ok("http://localhost:8001", "127.0.0.1:8000")  # another local server's page
    assert not loop.origin_ok("http://evil.example", "127.0.0.1:8000") and not loop.origin_ok(None, "127.0.0.1:8000")
    lan = Guard("192.168.1.4", 8000, TOKEN)
    assert lan.host_ok("192.168.1.4:8000") and not lan.host_ok("localhost:8000") and not lan.host_ok("evil.example:8000")
    assert lan.origin_ok("http://192.168.1.4:8000", "192.168.1.4:8000")
    assert not lan.origin_ok("http://127.0.0.1:8000", "192.168.1.4:8000")
    anywhere = Guard("0.0.0.0", 8000, TOKEN)  # any name on a wildcard address; the token still guards it
    assert anywhere.host_ok("my-laptop.local:8000") and anywhere.host_ok("10.0.0.7:8000")
    assert not anywhere.host_ok("bad host") and not anywhere.host_ok("a\"b")
    assert anywhere.origin_ok("http://my-laptop.local:8000", "my-laptop.local:8000")
    assert not anywhere.origin_ok("http://evil.example", "my-laptop.local:8000")
    assert loop.token_ok(TOKEN) and not loop.token_ok(TOKEN[:-1]) and not loop.token_ok(None) and not loop.token_ok("é" * 30)


def test_tokens_are_random_and_checked() -> None:
    from studytui.serve.server import check_token

    first, second = check_token(None), check_token(None)
    assert first != second and len(first) >= 43 and re.fullmatch(r"[A-Za-z0-9_-]+", first)
    assert check_token(TOKEN) == TOKEN


@pytest.mark.parametrize("argv, flag", [
    (["--token", ""], "--token"), (["--token", "short"], "--token"), (["--token", "sixteen chars ok?"], "--token"),
    (["--max-tabs", "0"], "--max-tabs"), (["--max-tabs", "65"], "--max-tabs"), (["--max-tabs", "-1"], "--max-tabs"),
    (["--max-tabs", "many"], "--max-tabs"),
])
def test_bad_token_or_tab_limit_is_a_usage_error(capsys: pytest.CaptureFixture[str], argv: list[str], flag: str) -> None:
    try:
        code, out, err = run(capsys, "serve", *argv)
    except SystemExit as exc:  # argparse's own errors (not a number) leave through SystemExit
        code, (out, err) = exc.code, capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and flag in err, err


def test_the_printed_url_works(tmp_path: Path) -> None:
    # The real `studytui serve` and the real app: the printed address loads the page (no cookie),
    # and the page's WebSocket (its address from the page, own Origin) gets the app's first frame.
    aiohttp = pytest.importorskip("aiohttp")
    pytest.importorskip("textual_serve", reason="needs the 'serve' extra (textual-serve)")
    proc, url, port = start_server(tmp_path / "data", "--max-tabs", "1")
    origin = f"http://127.0.0.1:{port}"
    assert url.startswith(origin + "/?token=")

    async def visit() -> None:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:  # unsafe: an IP address
            async with session.get(url) as r:
                page = await r.text()
                assert r.status == 200 and "Set-Cookie" not in r.headers
            assert len(session.cookie_jar) == 0
            async with session.get(origin + "/") as r:  # without the token: refused
                assert r.status == 403
            ws_url = re.search(r'data-session-websocket-url="([^"]+)"', page)[1].replace("&amp;", "&")
            assert ws_url == f"ws://127.0.0.1:{port}/ws?token={url.split('token=')[1]}&"
            ws = await session.ws_connect(ws_url + "?width=100&height=30", origin=origin)
            try:
                await receive_until(ws, "Done", 60)  # the footer of the app's first frame
            finally:
                await ws.close()
            # Tabs closed the moment their app starts drawing (a reload, a quick close): the app
            # quits while the entry pane is still being built, without a traceback (it printed one).
            for _ in range(3):
                deadline = time.monotonic() + 30
                while True:  # --max-tabs 1: wait for the last tab's slot to free
                    try:
                        ws = await session.ws_connect(ws_url + "?width=100&height=30", origin=origin)
                        break
                    except aiohttp.WSServerHandshakeError:
                        assert time.monotonic() < deadline, "the closed tab's slot never freed"
                        await asyncio.sleep(0.2)
                try:
                    await asyncio.wait_for(ws.receive(), 30)
                finally:
                    await ws.close()

    try:
        asyncio.run(visit())
    finally:
        out = stop_server(proc)
    assert f"serving the study app at {url}\n" in out and "server stopped" in out and "Traceback" not in out, out
    assert out.count(url.split("token=")[1]) == 1, out  # the printed address only: no log line shows it


async def test_at_most_max_tabs(in_thread) -> None:
    import aiohttp

    srv = in_thread(max_tabs=2, tab_wait=0.3)
    ws_url = srv.ws_url
    async with aiohttp.ClientSession() as session:
        tabs = [await session.ws_connect(ws_url, origin=srv.origin) for _ in range(2)]
        for ws in tabs:
            await receive_until(ws, "size 80x24")
        try:
            await session.ws_connect(ws_url, origin=srv.origin)
            pytest.fail("a third tab was let in with --max-tabs 2")
        except aiohttp.WSServerHandshakeError as exc:
            assert exc.status == 503
        async with session.get(f"{srv.origin}/ws?token={TOKEN}", headers={"Origin": srv.origin}) as r:
            assert r.status == 503 and "--max-tabs 2" in await r.text()
        # A tab closing frees its slot once its app has quit; one that comes meanwhile (a reload)
        # waits for it rather than being refused.
        srv.on_loop(lambda: setattr(srv.server, "tab_wait", 20.0))
        await tabs[0].close()
        again = await session.ws_connect(ws_url, origin=srv.origin)
        await receive_until(again, "size 80x24")
        assert srv.marker.with_suffix(".quit").exists() and srv.tabs() == 2
        for ws in (again, tabs[1]):
            await ws.close()
    wait_until(lambda: srv.tabs() == 0, "the closed tabs' apps quit")


async def test_terminal_size_is_capped(in_thread) -> None:
    import aiohttp

    srv = in_thread()
    ws_url = srv.ws_url
    async with aiohttp.ClientSession() as session:
        for query in ("width=abc&height=24", "width=80&height=2.5", "width=&height=24", "width=1e9&height=24",
                      "?width=abc&height=24"):
            assert await handshake_status(session, f"{ws_url}&{query}", origin=srv.origin) == 400, query
        ws = await session.ws_connect(f"{ws_url}&width=100000&height=-5", origin=srv.origin)
        await receive_until(ws, "size 500x1")
        await ws.send_str(json.dumps(["resize", {"width": "x", "height": 10}]))  # ignored
        await ws.send_str(json.dumps(["resize", {"width": 10**12, "height": 10**12}]))
        await ws.send_str("not json")  # ignored too
        await ws.send_str(json.dumps(["stdin", "typed"]))
        seen = await receive_until(ws, "got typed")
        assert "resize 500x200" in seen and "resize x" not in seen
        await ws.close()
    wait_until(lambda: srv.tabs() == 0, "the tab's app quit")
    # The tab's app is started without the token: not on its command line, not in its environment.
    assert TOKEN not in srv.marker.with_suffix(".env").read_text()


def raw_websocket(srv: InThread) -> socket.socket:
    """A WebSocket opened by hand, which reads nothing after the handshake and answers no ping."""
    import base64

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", srv.port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /ws?token={TOKEN}&width=80&height=24 HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
                  f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                  f"Sec-WebSocket-Version: 13\r\nOrigin: {srv.origin}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)  # byte by byte: nothing after the handshake is read
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def client_text_frame(text: str) -> bytes:
    """One WebSocket text frame as a browser sends it (masked)."""
    payload, mask = text.encode(), os.urandom(4)
    assert len(payload) < 126
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def wait_for_app_to_quit(srv: InThread) -> None:
    """The tab's app was told to quit (it saves on the way out), exited, and its slot is free."""
    wait_until(lambda: srv.marker.with_suffix(".quit").exists(), "the tab's app got its quit")
    pid = int(srv.marker.with_suffix(".pid").read_text())

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_until(gone, "the tab's app exited")
    wait_until(lambda: srv.tabs() == 0, "the tab's slot was freed")


def test_a_tab_that_stops_reading_is_dropped(in_thread, caplog: pytest.LogCaptureFixture) -> None:
    # A client that opens the WebSocket and never reads again, while its app writes without
    # pause (blocking writes, as Textual's web driver makes): once one of the server's writes has
    # waited send_timeout seconds the tab is cut off, the app still gets its quit (it saves on the
    # way out; it is not left blocked writing) and exits, and its slot is free.
    from studytui.serve.server import SEND_TIMEOUT

    assert SEND_TIMEOUT <= 5
    srv = in_thread("flood", send_timeout=1.0)
    started = time.monotonic()
    sock = raw_websocket(srv)
    try:
        sock.sendall(client_text_frame(json.dumps(["stdin", "typed in a stalled tab"])))
        wait_for_app_to_quit(srv)
        elapsed = time.monotonic() - started
        assert 1.0 <= elapsed < 20, elapsed
        assert "a browser tab stopped reading for 1 s; dropped it" in caplog.text
        # Keys the server took from the tab reached the app, which saved them as it quit.
        assert srv.marker.with_suffix(".saved").read_bytes() == b"typed in a stalled tab"
        # The connection is cut: what is still in flight ends with end-of-file or a reset.
        try:
            while sock.recv(1 << 20):
                pass
        except ConnectionResetError:
            pass
    finally:
        sock.close()


def test_a_tab_that_answers_no_ping_is_dropped(in_thread) -> None:
    # Nothing to write, so no write waits: the WebSocket's heartbeat finds the dead tab instead.
    srv = in_thread("echo", heartbeat=0.4)
    started = time.monotonic()
    sock = raw_websocket(srv)
    try:
        wait_for_app_to_quit(srv)
        assert time.monotonic() - started >= 0.4
    finally:
        sock.close()
