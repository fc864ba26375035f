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
