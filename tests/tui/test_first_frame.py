"""Startup order: the first frame reaches the terminal before deferred work, and garbage
collection, paused for a faster start, always comes back on."""

from __future__ import annotations

import argparse
import gc
import sys

import studytui.tui.launch as tui_launch

from .support import screen_text


async def test_after_first_frame_callbacks_run_once(make_app):
    app = make_app()
    calls: list[str] = []
    app.after_first_frame.append(lambda: calls.append(screen_text(app)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert len(calls) == 1
        assert "Start here" in calls[0]  # the guide was on screen when the callback ran
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        assert len(calls) == 1


def _pretend_terminal(monkeypatch):
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)


def test_launch_turns_garbage_collection_back_on(monkeypatch):
    _pretend_terminal(monkeypatch)
    seen: list[bool] = []

    def fake_launch(args, resume_gc):
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(tui_launch, "_launch", fake_launch)
    assert gc.isenabled()
    assert tui_launch.launch(argparse.Namespace(data_dir=None, content=None)) == 0
    assert seen == [False] and gc.isenabled()


def test_launch_turns_garbage_collection_back_on_after_a_failure(monkeypatch):
    _pretend_terminal(monkeypatch)

    def failing_launch(args, resume_gc):
        raise RuntimeError("boom")

    monkeypatch.setattr(tui_launch, "_launch", failing_launch)
    try:
        tui_launch.launch(argparse.Namespace(data_dir=None, content=None))
    except RuntimeError:
        pass
    assert gc.isenabled()
