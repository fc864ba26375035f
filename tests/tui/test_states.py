"""d / l / s / u: the state is stored and shown by glyph and word, row and section counts update."""

from __future__ import annotations

import pytest

from studytui.tui.format import STATE_GLYPHS

from .support import screen_text


@pytest.mark.parametrize("key, state", [("d", "done"), ("l", "learning"), ("s", "skipped")])
async def test_marking_stores_and_shows_the_state(make_app, store, key, state):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
        assert store.progress("roofline").state == state
        text = screen_text(app)
        assert f"{STATE_GLYPHS[state]} Roofline" in text  # the row's glyph
        assert f"State: {STATE_GLYPHS[state]} {state}" in text  # glyph and word in the detail
        covered = 1 if state in ("done", "skipped") else 0
        assert f"{covered}/3 Start here" in text  # the section row's count
        assert "Overall" in text and f"{covered}/9 covered" in text


async def test_u_sets_back_to_pending(make_app, store):
    store.set_state("roofline", "done")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "1/3 Start here" in screen_text(app)
        await pilot.press("u")
        await pilot.pause()
        assert store.progress("roofline").state == "pending"
        assert "0/3 Start here" in screen_text(app)
        assert "○ Roofline" in screen_text(app)


async def test_marking_a_section_row_changes_nothing(make_app, store):
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.press("up", "d")
        await pilot.pause()
    assert store.states() == {}


async def test_a_read_only_store_is_shown_in_the_status_line(make_app, store):
    from .support import wait_until

    class ReadOnlyStore:
        read_only = True

        def __init__(self, inner):
            self._inner = inner

        def __getattr__(self, name):
            return getattr(self._inner, name)

    app = make_app(store=ReadOnlyStore(store))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(pilot, lambda: "READ-ONLY" in screen_text(app))
