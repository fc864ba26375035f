"""`studytui serve`: options, one-line errors, and the app in a real browser.

The browser test starts the server on a free loopback port, opens the page in headless Chromium
(Playwright for Python driving the system's Chromium: nothing is downloaded), waits for the app's
first frame, presses `d`, and checks with `studytui progress --json` that the entry is done. It is
skipped, saying why, when Playwright, textual-serve or Chromium is missing (CI installs Chromium
with the system package manager: see .ci/run).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.guide import load_guide
from studytui.takealong.serve import app_command, is_loopback, url_for

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
    assert parts == ["/usr/bin/python3", "-m", "studytui.takealong.served", "--data-dir", str(odd),
                     "--content", str((tmp_path / "content dir").resolve())]


def test_addresses() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    assert url_for("::1", 8000) == "http://[::1]:8000"


def start_server(data: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [*CLI, "--data-dir", str(data), "serve", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,  # its own process group, like a job in a terminal
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the server exited early: {proc.stdout.read()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    pytest.fail("the server did not start listening within 30 s")


def stop_server(proc: subprocess.Popen) -> str:
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl+C in a terminal sends: to the server and each tab's app
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"Ctrl+C did not stop the server within 30 s:\n{out}")
    assert proc.returncode == 0, out
    return out


def progress(data: Path) -> dict:
    done = subprocess.run([*CLI, "--data-dir", str(data), "progress", "--json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_app_in_a_browser(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    pytest.importorskip("textual_serve", reason="needs the 'serve' extra (textual-serve)")
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("Chromium not found (apt-get install chromium, or set STUDYTUI_CHROMIUM); browser test of 'studytui serve' skipped")
    data, port = tmp_path / "data", free_port()
    first = load_guide().entries[0]
    proc = start_server(data, port)
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1200, "height": 760})
                received: list[str] = []

                def on_socket(ws) -> None:
                    ws.on("framereceived", lambda payload: received.append(
                        payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload))

                page.on("websocket", on_socket)
                elsewhere: list[str] = []  # nothing may be fetched from another host (offline, private)
                page.on("request", lambda r: elsewhere.append(r.url) if not r.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")) else None)
                page.goto(url_for("127.0.0.1", port), wait_until="domcontentloaded")
                # The app is up when its first frame (the footer with the Done key) has arrived.
                deadline = time.monotonic() + 60
                while "Done" not in "".join(received):
                    assert time.monotonic() < deadline, "the app's first frame never reached the browser"
                    page.wait_for_timeout(100)
                assert elsewhere == []
                page.locator(".xterm").first.click()
                assert progress(data)["done"] == 0
                page.keyboard.press("d")
                deadline = time.monotonic() + 30
                while (p := progress(data))["done"] != 1:
                    assert time.monotonic() < deadline, f"'d' in the browser did not mark the entry done: {p}"
                    time.sleep(0.3)
                assert p["sections"][0]["done"] == 1
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
    assert f"serving the study app at http://127.0.0.1:{port}" in out and str(data) in out
    assert "server stopped" in out and "Traceback" not in out, out
    # The terminal commands see the same store: the entry the browser marked.
    done = subprocess.run([*CLI, "--data-dir", str(data), "export", "-", "--format", "json"], capture_output=True, text=True, check=True)
    entries = {e["entry_id"]: e for e in json.loads(done.stdout)["entries"]}
    assert entries[first.id]["state"] == "done"
    assert entries[first.id]["note"] == "typed in the browser"


def test_server_log_lines_are_one_line_without_traceback() -> None:
    import logging

    from studytui.takealong.serve import _one_line_formatter

    try:
        raise ConnectionResetError("socket closed\n\x1b[31mmid-frame")
    except ConnectionResetError:
        record = logging.LogRecord("textual-serve", logging.ERROR, __file__, 1, "%s", ("socket closed\n\x1b[31mmid-frame",), sys.exc_info())
    line = _one_line_formatter().format(record)
    assert line == "studytui: serve: error: socket closed [31mmid-frame"


def test_page_asks_no_other_host() -> None:
    from studytui.takealong.serve import local_only

    page = """<head><link rel="stylesheet" href="http://127.0.0.1:8000/static/css/xterm.css" />
    <link
      rel="stylesheet"
      href="https://fonts.googleapis.com/css?family=Roboto%20Mono"
    /><script src="http://127.0.0.1:8000/static/js/textual.js"></script></head>"""
    out = local_only(page)
    assert "googleapis" not in out and "xterm.css" in out and "textual.js" in out


def test_shutdown_noise_from_a_closed_loop_is_dropped_and_nothing_else() -> None:
    # A tab's pipe collected after the server's loop closed must not print a traceback after
    # "server stopped"; any other unraisable exception still reaches the previous hook.
    import asyncio.base_subprocess
    import types

    from studytui.takealong.serve import quiet_closed_loop

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
