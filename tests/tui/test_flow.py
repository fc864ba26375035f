"""The study flow as a learner meets it (issue 12): Continue, glossary typing, help keys."""

from __future__ import annotations

from studytui.tui.commands import StudyCommands
from studytui.tui.screens.main import MainScreen

from .support import screen_text


def current_id(app):
    screen = app.screen
    assert isinstance(screen, MainScreen)
    return screen.current_entry.id if screen.current_entry else None


async def palette_titles(app, query: str) -> list[str]:
    provider = StudyCommands(app.screen)
    await provider.startup()
    return [hit.text async for hit in provider.search(query)]


async def test_continue_offers_the_first_pending_entry_after_a_search_jump(make_app, store):
    store.set_state("roofline", "done")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("slash", *"stream k")
        await pilot.pause(0.2)
        await pilot.press("enter")
        await pilot.pause()
        assert current_id(app) == "stream-k"
        titles = await palette_titles(app, "Continue")
        assert "Continue: CUDA C++ basics" in titles  # not the entry after Stream-K
        assert not any(t.startswith("Continue: FlashAttention") for t in titles)


async def test_search_hint_counts_honestly_and_offers_no_jump_without_results(make_app):
    from studytui.tui.screens import search as search_module

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        screen = app.screen
        search_module.RESULT_LIMIT, limit = 1, search_module.RESULT_LIMIT
        try:
            shown = screen.filter("flashattention")
        finally:
            search_module.RESULT_LIMIT = limit
        hint = str(screen.query_one("#search-hint").render())
        total = len(app.search_index.search("flashattention", note_texts={}))
        assert shown == 1 and total > 1 and f"1 of {total} matches" in hint
        assert screen.filter("zzzqqq") == 0
        hint = str(screen.query_one("#search-hint").render())
        assert "Enter jumps" not in hint and "No entry" in hint
        assert screen.filter("stream k") == 1
        assert "1 match," in str(screen.query_one("#search-hint").render())


async def test_glossary_filter_takes_typing_at_once(make_app):
    from studytui.tui.screens.glossary import GlossaryScreen

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g", *"kv")
        await pilot.pause()
        assert isinstance(app.screen, GlossaryScreen)
        terms = app.screen.query_one("#glossary-terms")
        assert app.screen.query_one("#glossary-filter").value == "kv"
        assert terms.option_count == 1 and "Keys and values kept" in screen_text(app)
        # Typing with the list focused still filters.
        terms.focus()
        await pilot.press("backspace", "backspace")
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        assert app.screen.query_one("#glossary-filter").value == "kvx"
        await pilot.press("backspace", "backspace", "backspace", *"arith")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert current_id(app) == "roofline"
