"""Moving through the guide: start, resume, n/p/N, arrows, Enter, mouse, section rows."""

from __future__ import annotations

from studytui.guide import load_guide
from studytui.guide.model import Entry, Section
from studytui.store import open_store
from studytui.tui.app import StudyApp
from studytui.tui.compat import notifications
from studytui.tui.screens.main import MainScreen

from .support import TODAY, screen_text


def main_screen(app: StudyApp) -> MainScreen:
    screen = app.screen
    assert isinstance(screen, MainScreen)
    return screen


def current_id(app: StudyApp) -> str | None:
    entry = main_screen(app).current_entry
    return entry.id if entry else None


async def test_fresh_data_dir_starts_at_first_start_here_entry(make_app):
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert current_id(app) == "roofline"
        assert "Roofline: An Insightful Visual" in screen_text(app)


async def test_fresh_data_dir_on_the_real_guide_starts_at_start_here(tmp_path):
    guide = load_guide()
    store = open_store(tmp_path / "fresh")
    app = StudyApp(guide, store, today=lambda: TODAY, environ={"DISPLAY": ":0"}, cursor_blink=False)
    async with app.run_test() as pilot:
        await pilot.pause()
        start = guide.sections[0]
        assert start.ordered and start.id == "start-here"
        assert current_id(app) == start.entries[0].id
    store.close()


async def test_resume_lands_on_last_viewed_entry_with_tree_expanded(make_app, guide, data_dir):
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.press("n", "n", "n", "n", "n")  # -> flashattention (index 5)
        await pilot.pause()
        assert current_id(app) == "flashattention"
        await pilot.press("q")
    # A new process: a new store object on the same data directory.
    store2 = open_store(data_dir)
    app2 = make_app(store=store2)
    async with app2.run_test() as pilot:
        await pilot.pause()
        assert current_id(app2) == "flashattention"
        tree = main_screen(app2).tree
        node = tree.cursor_node
        assert node is not None and isinstance(node.data, Entry) and node.data.id == "flashattention"
        assert node.parent is not None and node.parent.is_expanded  # the subsection
        assert node.parent.parent is not None and node.parent.parent.is_expanded  # the section
    store2.close()


async def test_n_and_p_follow_guide_order(make_app, guide):
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        seen = [current_id(app)]
        for _ in range(len(guide.entries) - 1):
            await pilot.press("n")
            await pilot.pause()
            seen.append(current_id(app))
        assert seen == [e.id for e in guide.entries]
        await pilot.press("n")  # past the end: stays, says so
        await pilot.pause()
        assert current_id(app) == guide.entries[-1].id
        await pilot.press("p", "p")
        await pilot.pause()
        assert current_id(app) == guide.entries[-3].id


async def test_marking_done_moves_nothing_and_N_finds_next_pending(make_app, store):
    store.set_state("cuda-basics", "done")
    store.set_state("inference-arithmetic", "learning")
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        assert current_id(app) == "roofline"  # done does not move on
        await pilot.press("N")
        await pilot.pause()
        # cuda-basics is done and inference-arithmetic is being learned: neither is pending.
        assert current_id(app) == "volkov-gemm"


async def test_N_with_nothing_pending_stays_and_says_so(make_app, store, guide):
    for entry in guide.entries:
        store.set_state(entry.id, "done")
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("N")
        await pilot.pause()
        assert current_id(app) == "roofline"
        assert any("Nothing is pending" in str(n.message) for n in notifications(app))


async def test_arrow_keys_and_enter_open_a_section(make_app):
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("down", "down", "down")  # past the three Start here entries to section 2
        await pilot.pause()
        screen = main_screen(app)
        assert isinstance(screen.position, Section) and screen.position.id == "kernel-optimization"
        assert "How fast kernels are built" in screen_text(app)  # section rows show the intro
        assert "0/4 covered" in screen_text(app)
        await pilot.press("enter")  # expands it
        await pilot.pause()
        await pilot.press("down", "down")
        await pilot.pause()
        assert current_id(app) == "volkov-gemm"


async def test_mouse_click_selects_an_entry(make_app):
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        # Row 1 is the status line, row 2 the Start here section, rows 3.. its entries.
        await pilot.click("#guide", offset=(6, 2))
        await pilot.pause()
        assert current_id(app) == "cuda-basics"


async def test_frontier_shows_verified_date_and_days_since(make_app, guide):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        main_screen(app).show_section(guide.sections[2])
        await pilot.pause()
        text = screen_text(app)
        # 2026-08-23 to the injected today 2026-11-29 is 98 days.
        assert "Section verified on 2026-08-23, 98 days ago" in text
        app.jump_to("new-kernel-lib")  # Frontier entries carry their own date
        await pilot.pause()
        # Issue 28: the words `studytui show` uses (Entry.date_label), not a bare "Verified".
        assert "On the Frontier list verified 2026-08-23, 98 days ago." in screen_text(app)


async def test_status_line_shows_overall_and_section_progress(make_app, store):
    store.set_state("volkov-gemm", "done")
    store.set_state("stream-k", "skipped")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        first_line = screen_text(app).splitlines()[0]
        assert "2/9 covered (22%): 1 done, 1 skipped" in first_line
        assert "Start here: the minimum mental model: 0/3 covered" in first_line
        app.jump_to("stream-k")
        await pilot.pause()
        assert "2. Kernel optimization: 2/4 covered" in screen_text(app).splitlines()[0]


async def test_the_header_keeps_every_count_whole_at_80_columns(make_app):
    """Issue 23: at 80x24 the header cut the section's count (`…mental mod…: …`) and, once the
    learner had practised, `0 due` (`0 d…`). Titles give way; counts never do."""
    from types import SimpleNamespace

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        main = app.main_screen
        app.jump_to("roofline")
        await pilot.pause()
        for width in (78, 60, 118):
            for practice in (None, SimpleNamespace(status_text=lambda: "Practice 12/61, 3 due")):
                app.practice_state = practice
                text = main.status_text(width)
                assert len(text) <= width, (width, text)
                assert text.endswith(": 0/3 covered" if practice is None else "12/61, 3 due"), text
                assert "Overall" in text and "0/9 covered" in text and ": 0/3" in text, text
        app.practice_state = None


async def test_the_header_says_covered_in_every_form_with_the_percent_progress_prints(make_app, store):
    """Review finding: at 80 columns the header went from "1/137 covered (0%), 1 learning" to
    "Overall 2/137 (1%)" after a skip, and "Start here: 2/9" read as 2 done when 1 was done and 1
    skipped; and its percent was floored where `studytui progress` rounded. Every form says
    "covered", the widest names each state, and the percent is studytui.core.text.percent."""
    from types import SimpleNamespace

    from studytui.core.text import percent

    store.set_state("roofline", "done")
    store.set_state("cuda-basics", "skipped")
    store.set_state("volkov-gemm", "learning")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        main = app.main_screen
        app.jump_to("roofline")
        await pilot.pause()
        assert main.status_text(0).startswith("Overall ▰▰▱▱▱▱▱▱ 2/9 covered (22%): 1 done, 1 skipped, 1 learning")
        for width in (78, 118):
            for practice in (None, SimpleNamespace(status_text=lambda: "Practice 12/61, 3 due")):
                app.practice_state = practice
                text = main.status_text(width)
                assert len(text) <= width and text.startswith("Overall") and "2/9 covered (22%)" in text and ": 2/3 covered" in text, text
        app.practice_state = None
        assert ", 1 learning" in main.status_text(78)  # room for it without practice
    assert [percent(n, 137) for n in (0, 1, 4, 136, 137)] == ["0%", "0%", "2%", "99%", "100%"]
