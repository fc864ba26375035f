"""Snapshots of the main screen, search, help and the hand-off dialog at 80x24 and 120x40.

Deterministic: the fixed test guide, a fixed clock, a fixed environment, no blinking cursor, and
no stored timestamps on screen. Update with `pytest tests/tui --snapshot-update` after a
deliberate change, and look at the report before committing.
"""

from __future__ import annotations

import pytest

from studytui.tui.screens.handoff import HandoffDialog

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


def seeded(make_app, store):
    store.set_state("roofline", "done")
    store.set_state("cuda-basics", "learning")
    store.set_state("stream-k", "skipped")
    store.set_note("cuda-basics", "Threads map to **data**; keep [bold]this[/bold] literal.")
    store.set_last_viewed("cuda-basics")
    return make_app()


@pytest.mark.parametrize("size", SIZES)
def test_main_screen(snap_compare, make_app, store, size):
    assert snap_compare(seeded(make_app, store), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_search_screen(snap_compare, make_app, store, size):
    assert snap_compare(seeded(make_app, store), press=["slash", *"tiling"], terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_help_screen(snap_compare, make_app, store, size):
    assert snap_compare(seeded(make_app, store), press=["question_mark"], terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_handoff_dialog(snap_compare, make_app, store, size):
    app = seeded(make_app, store)

    async def open_dialog(pilot) -> None:
        # The dialog as `o` shows it over SSH, pushed directly so no "last opened" time appears.
        await pilot.pause()
        app.push_screen(
            HandoffDialog(
                "https://example.org/cuda-basics",
                "CUDA C++ basics",
                "this is an SSH session: the browser would open on the remote machine, if at all",
            )
        )
        await pilot.pause()

    assert snap_compare(app, run_before=open_dialog, terminal_size=size)
