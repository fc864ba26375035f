"""Fixtures for the study app tests (data and helpers live in support.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from studytui.guide.model import Guide
from studytui.store import Store, open_store
from studytui.tui import compat
from studytui.tui.app import StudyApp
from studytui.tui.registry import build_registry

from .support import DESKTOP_ENV, TODAY, build_guide

# Pilot calls the app idle after a 10 ms slice with no work instead of Textual's 20 ms: each key
# and pause waits at least one slice, and that waiting was a third of the app tests' time. Tests
# that need a state wait for it (support.wait_until), not for idleness.
compat.set_pilot_idle_slice(0.01)
# Headless frames nobody reads are not rendered; what a test reads is rendered when read.
compat.skip_headless_frames()


@pytest.fixture
def guide() -> Guide:
    return build_guide()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def store(data_dir: Path) -> Iterator[Store]:
    s = open_store(data_dir)
    yield s
    s.close()


AppFactory = Callable[..., StudyApp]


@pytest.fixture
def make_app(guide: Guide, store: Store) -> AppFactory:
    def factory(**kw: Any) -> StudyApp:
        settled = kw.pop("settled", True)
        kw.setdefault("today", lambda: TODAY)
        kw.setdefault("environ", dict(DESKTOP_ENV))
        kw.setdefault("platform", "linux")
        kw.setdefault("cursor_blink", False)
        # Built-in screens only: these tests (and snapshots) must not change when an optional
        # screen module (the calculators) changes; test_registry covers the real registry.
        kw.setdefault("registry", build_registry(plugin_modules=()))
        app = StudyApp(kw.pop("guide", guide), kw.pop("store", store), **kw)
        if settled:
            _start_settled(app)
        return app

    return factory


def _start_settled(app: StudyApp) -> None:
    """`app.run_test()` hands over the pilot once the main screen is whole, as a learner sees it:
    the detail pane's body and note panel are mounted just after the first frame, and a test
    that acted before then raced that (`make_app(settled=False)` tests that moment itself)."""
    from contextlib import asynccontextmanager

    from .support import wait_until

    run_test = app.run_test

    @asynccontextmanager
    async def settled_run_test(*args: Any, **kwargs: Any):
        async with run_test(*args, **kwargs) as pilot:
            main = lambda: app.main_screen  # noqa: E731
            assert await wait_until(pilot, lambda: main() is not None and main().detail.ready, timeout=30), "never settled"
            yield pilot

    app.run_test = settled_run_test  # type: ignore[method-assign]



@pytest.fixture
def tmux() -> Iterator[Callable[..., str]]:
    """`tmux(*args)` on a tmux server of this test's own (-L), kept up by an idle session.

    Tests that share the default server race each other: when one kills its last session the
    server shuts down, and another's new-session during that shutdown fails ("server exited
    unexpectedly"). A private server that outlives the test's own sessions cannot.
    """
    import os
    import shutil
    import subprocess

    if shutil.which("tmux") is None:
        pytest.skip("needs tmux")
    socket = f"studytui-test-{os.getpid()}-{id(object())}"

    # The environment as Python sees it, passed explicitly. Left implicit, children get the C-level
    # one, where something in the test process had put COLUMNS=80 and LINES=24 (readline does that
    # when it is loaded), and the app in a "100x30" window drew itself at 80x24.
    env = dict(os.environ)

    def run(*args: str) -> str:
        return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=True, env=env).stdout

    run("new-session", "-d", "-s", "keepalive", "sleep 3600")
    socket_path = run("display-message", "-p", "#{socket_path}").strip()
    try:
        yield run
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        if socket_path:
            Path(socket_path).unlink(missing_ok=True)  # a killed server leaves its socket file
