"""Refresh docs/serve.png: `studytui serve` in headless Chromium (the system's, through Playwright).

    python scripts/serve_screenshot.py [--chromium PATH]

Uses a throw-away data directory with a little progress and one note, so the picture is the same
on every machine.
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "import sys; from studytui.cli import main; sys.exit(main())"]


def studytui(data: Path, *argv: str) -> None:
    subprocess.run([*CLI, "--data-dir", str(data), *argv], check=True, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=shutil.which("chromium") and "/usr/lib/chromium/chromium")
    parser.add_argument("--out", default=str(ROOT / "docs" / "serve.png"))
    args = parser.parse_args()
    if not args.chromium:
        sys.exit("no Chromium found: apt-get install chromium, or pass --chromium PATH")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        studytui(data, "mark", "scaling-book-inference", "done")
        studytui(data, "mark", "attention-is-all-you-need", "done")
        studytui(data, "mark", "roofline-paper", "learning")
        studytui(data, "note", "roofline-paper", "--text",
                 "Ridge point of an H200 in BF16: about 989 TFLOP/s / 4.8 TB/s = 206 FLOP/byte.\n\n"
                 "- decode at batch 1 sits far left of it: memory-bound\n- check prefill GEMMs against it\n")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        token = secrets.token_urlsafe(32)  # the server refuses every request without it
        server = subprocess.Popen([*CLI, "--data-dir", str(data), "serve", "--port", str(port), "--token", token],
                                  stdout=subprocess.DEVNULL)
        try:
            time.sleep(2)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1200, "height": 720})
                page.goto(f"http://127.0.0.1:{port}/?token={token}")
                page.wait_for_timeout(5000)
                page.locator(".xterm-helper-textarea").first.focus()  # keys to the app, no click
                for key in ["ArrowDown"] * 4:  # onto the entry with the note
                    page.keyboard.press(key)
                page.wait_for_timeout(1500)
                page.screenshot(path=args.out)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
