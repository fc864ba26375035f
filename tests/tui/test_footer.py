"""The key footer is rebuilt when the keys it shows change, and only then."""

from __future__ import annotations

from studytui.tui.widgets.footer import StudyFooter

from .support import screen_text, wait_until


async def test_the_footer_follows_the_keys_and_keeps_its_widgets_when_they_are_the_same(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        footer = app.screen.query_one(StudyFooter)
        assert await wait_until(pilot, lambda: "Quit" in screen_text(app).splitlines()[-1])
        keys = list(footer.children)
        assert keys

        app.screen.refresh_bindings()  # the same keys signalled again: nothing to rebuild
        await pilot.pause()
        await pilot.pause()
        assert list(footer.children) == keys and all(key.is_attached for key in keys)

        await pilot.press("e")  # the editor has other keys
        assert await wait_until(pilot, lambda: "Done editing" in screen_text(app).splitlines()[-1])
        assert "Quit" not in screen_text(app).splitlines()[-1]

        await pilot.press("escape")  # and back
        assert await wait_until(pilot, lambda: "Quit" in screen_text(app).splitlines()[-1])
        assert "Done editing" not in screen_text(app).splitlines()[-1]


async def test_while_a_note_is_typed_the_footer_offers_only_what_works_there(make_app):
    """`/ Search` stayed in the footer while typing a note, where `/` is text (issue 23): only
    Esc (done), F1 (help) and the palette are left, at 80 and at 120 columns."""
    for size in ((80, 24), (120, 40)):
        app = make_app()
        async with app.run_test(size=size) as pilot:
            assert await wait_until(pilot, lambda: "Search" in screen_text(app).splitlines()[-1])
            await pilot.press("e")
            assert await wait_until(pilot, lambda: "Done editing" in screen_text(app).splitlines()[-1])
            footer = screen_text(app).splitlines()[-1]
            assert "Help" in footer and "palette" in footer
            for gone in ("Search", "Next", "Quit", "Calculators", "Note"):
                assert gone not in footer, footer
            await pilot.press("slash")  # text, not the search screen
            await pilot.pause()
            assert app.screen is app.main_screen and "/" in app.main_screen.detail.note_panel.editor.text
            await pilot.press("f1")
            assert await wait_until(pilot, lambda: "Keys" in screen_text(app))
            await pilot.press("escape")
            await pilot.press("escape")  # done editing: the main keys again
            assert await wait_until(pilot, lambda: "Search" in screen_text(app).splitlines()[-1])
