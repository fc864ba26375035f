"""`/` search, the command palette, glossary, source policy and help."""

from __future__ import annotations

from studytui.tui.commands import StudyCommands
from studytui.tui.screens.glossary import GlossaryScreen
from studytui.tui.screens.help import HelpScreen
from studytui.tui.screens.main import MainScreen
from studytui.tui.screens.policy import PolicyScreen
from studytui.tui.screens.search import SearchScreen

from .support import screen_text, wait_for_palette


def current_id(app):
    screen = app.screen
    assert isinstance(screen, MainScreen)
    return screen.current_entry.id if screen.current_entry else None


async def test_search_filters_as_you_type_and_enter_jumps(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"flash")
        await pilot.pause()
        results = app.screen.query_one("#search-results")
        ids = [results.get_option_at_index(i).id for i in range(results.option_count)]
        assert ids[:2] == ["flashattention", "flashattention-2"]
        assert "roofline" not in ids
        assert "FlashAttention-2" in screen_text(app)
        await pilot.press("down", "enter")
        await pilot.pause()
        assert current_id(app) == "flashattention-2"


async def test_search_ranks_best_first_and_tolerates_hyphens(make_app):
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.press("slash", *"streamk")
        await pilot.pause()
        results = app.screen.query_one("#search-results")
        assert results.get_option_at_index(0).id == "stream-k"
        await pilot.press("enter")
        await pilot.pause()
        assert current_id(app) == "stream-k"


async def test_search_finds_words_in_notes(make_app, store):
    store.set_note("cuda-basics", "remember the occupancy calculator")
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.press("slash", *"occupancy")
        await pilot.pause()
        results = app.screen.query_one("#search-results")
        assert results.option_count == 1
        assert results.get_option_at_index(0).id == "cuda-basics"
        assert "notes" in screen_text(app)


async def test_escape_closes_search_without_moving(make_app):
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.press("slash", *"flash", "escape")
        await pilot.pause()
        assert current_id(app) == "roofline"


async def test_palette_offers_continue_sections_entries_and_glossary(make_app, store):
    store.set_state("roofline", "done")
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        provider = StudyCommands(app.screen)
        hits = [h async for h in provider.discover()]
        titles = [hit.text for hit in hits]
        assert titles[0] == "Continue: CUDA C++ basics"
        # Review finding: the hint says what it offers, as the README does (not "from where you are").
        assert hits[0].help == (
            "The entry you are learning, else the first pending one after what you last marked or opened ('studytui next')")
        assert "Section: 2. Kernel optimization" in titles
        assert "Glossary: KV cache" in titles and "Glossary" in titles and "Source policy" in titles
        found = [hit.text async for hit in provider.search("flashattention")]
        assert "Entry: FlashAttention" in found


async def test_palette_lists_the_study_commands_before_the_system_ones(make_app):
    """Opened with ctrl+p, the palette starts with Continue, the sections, the screens and the
    glossary; the themes and Textual's Keys, Screenshot, Quit come after them (issue 23)."""
    from textual.command import CommandList

    from .support import wait_until

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")

        def prompts() -> list[str]:
            found = app.screen.query(CommandList)
            if not found:
                return []
            hits = found.first()
            return [str(hits.get_option_at_index(i).prompt).splitlines()[0] for i in range(hits.option_count)]

        assert await wait_until(pilot, lambda: "Quit" in prompts() and "Glossary: KV cache" in prompts())
        await pilot.pause(0.3)  # every hit gathered
        titles = prompts()
        assert titles[0].startswith("Continue: ")
        last_study = max(i for i, t in enumerate(titles) if t.startswith(("Section: ", "Glossary", "Source policy", "Search the guide")))
        first_system = min(titles.index(t) for t in ("Keys", "Screenshot", "Quit", "Theme: dark"))
        assert last_study < first_system, titles
        assert "Theme" not in titles  # Textual's picker of its own dozen themes is left out
        assert titles.index("Theme: dark") < titles.index("Keys")  # ours, then Textual's


async def test_palette_continue_jumps_to_next_pending(make_app, store):
    store.set_state("roofline", "done")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Continue")
        assert await wait_for_palette(pilot, app, "Continue")
        await pilot.press("enter")
        await pilot.pause()
        assert current_id(app) == "cuda-basics"


async def test_palette_entry_and_section_jump(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+p", *"Section: Frontier")
        assert await wait_for_palette(pilot, app, "Frontier")
        await pilot.press("enter")
        await pilot.pause()
        assert "Section verified on 2026-08-23, 98 days ago" in screen_text(app)
        await pilot.press("ctrl+p", *"Entry: Stream-K")
        assert await wait_for_palette(pilot, app, "Stream-K")
        await pilot.press("enter")
        await pilot.pause()
        assert current_id(app) == "stream-k"


async def test_glossary_screen_and_jump_to_linked_entry(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, GlossaryScreen)
        assert "FLOPs per byte moved." in screen_text(app)
        await pilot.press("down")
        await pilot.pause()
        assert "Keys and values kept" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert current_id(app) == "inference-arithmetic"


async def test_source_policy_screen(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, PolicyScreen)
        text = screen_text(app)
        assert "primary sources" in text and "hardware, workload, precision, baseline, correctness" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_help_lists_every_key_and_binding_id(make_app):
    app = make_app()
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-table").content)
        rows = {tuple(line.split()[::len(line.split()) - 1]) for line in text.splitlines() if len(line.split()) > 1}
        for key, binding_id in [
            ("n", "next"), ("p", "previous"), ("N", "next-pending"), ("d", "mark-done"), ("l", "mark-learning"),
            ("s", "mark-skipped"), ("u", "mark-pending"), ("o", "open-source"), ("y", "copy-url"),
            ("e", "edit-note"), ("E", "edit-note-external"), ("/", "search"), ("g", "glossary"),
            ("i", "policy"), ("?", "help"), ("q", "quit"), ("t", "theme"),
        ]:
            assert (key, binding_id) in rows, (key, binding_id)
        assert "ctrl+p" in text and "Enter" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_search_says_where_it_matched_in_the_words_the_command_uses(make_app, capsys, monkeypatch):
    """Review finding: `/` said "in title, tags, section" (the id left out) where `studytui search`
    said "matched in title, tags, id" for the same hit. Both print SearchHit.matched now."""
    from studytui.cli import main
    from studytui.guide import load_guide

    guide = load_guide()
    app = make_app(guide=guide)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("slash", *"roofline insightful")
        await pilot.pause()
        results = app.screen.query_one("#search-results")
        first = results.get_option_at_index(0)
        assert first.id == "roofline-paper"
        assert str(first.prompt).splitlines()[1].endswith("· matched in title, tags, id")
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["search", "roofline", "insightful"]) == 0
    out = capsys.readouterr().out
    assert "matched in title, tags, id" in " ".join(out.split())
