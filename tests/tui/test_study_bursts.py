"""Study keys that arrive together act, in order, on the entry the previous key left on screen (issue 23).

A terminal (and the browser, through `serve`) delivers several keys in one read. The tree tells
the screen about a cursor move with a message that is handled after the keys already waiting:
`nd` read at once marked the entry the cursor had just left, and ten `n` moved one entry. These
tests queue whole bursts before any key is handled, then check the store, not just the screen.
"""

from __future__ import annotations

from textual import events

from studytui.guide.model import Entry
from studytui.tui.compat import notifications

from .support import wait_until
from .test_calc_screens import calc_app  # noqa: F401  (fixture)

CHARS = {"slash": "/", "space": " ", "minus": "-"}


def post_burst(app, keys: list[str]) -> None:
    """Queue every key before any is handled, as one read from the terminal does."""
    for key in keys:
        char = CHARS.get(key, key if len(key) == 1 else None)
        app.post_message(events.Key(key, char))


def stored_states(store) -> dict[str, str]:
    return {entry_id: p.state for entry_id, p in store.states().items()}


async def settle(pilot, rounds: int = 6) -> None:
    for _ in range(rounds):
        await pilot.pause()


def on_screen(app) -> Entry:
    main = app.main_screen
    entry = main.position
    assert isinstance(entry, Entry)
    # What the detail pane shows is the same entry as the tree's cursor.
    assert main.tree.cursor_node.data is entry
    assert str(main.detail.query_one("#detail-title").content) == entry.title
    return entry


async def start_on(app, pilot, entry_id: str) -> None:
    app.jump_to(entry_id)
    await settle(pilot)
    assert on_screen(app).id == entry_id


async def test_n_then_d_in_one_read_marks_the_entry_n_moved_to(make_app, store):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await start_on(app, pilot, "roofline")
        post_burst(app, ["n", "d"])
        await settle(pilot)
        assert on_screen(app).id == "cuda-basics"
        assert stored_states(store) == {"cuda-basics": "done"}
        # What the row and the detail pane say agrees with the store.
        assert app.main_screen.tree.states["cuda-basics"] == "done"


async def test_ten_n_then_d_moves_ten_and_marks_the_tenth(make_app, store, guide):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await start_on(app, pilot, guide.entries[0].id)
        post_burst(app, ["n"] * 7 + ["d"])
        await settle(pilot)
        target = guide.entries[7]
        assert on_screen(app).id == target.id
        assert stored_states(store) == {target.id: "done"}
        # Past the end: refused with a message, never wrapped onto another entry.
        post_burst(app, ["n"] * 5 + ["l"])
        await settle(pilot)
        last = guide.entries[-1]
        assert on_screen(app).id == last.id
        assert stored_states(store) == {target.id: "done", last.id: "learning"}


async def test_p_then_d_and_ppp(make_app, store, guide):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await start_on(app, pilot, "flashattention")
        post_burst(app, ["p", "d"])
        await settle(pilot)
        assert on_screen(app).id == "stream-k"
        post_burst(app, ["p", "p", "p", "s"])
        await settle(pilot)
        assert on_screen(app).id == "cuda-basics"
        assert stored_states(store) == {"stream-k": "done", "cuda-basics": "skipped"}


async def test_arrow_keys_then_a_mark_in_one_read(make_app, store):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await start_on(app, pilot, "roofline")
        post_burst(app, ["down", "down", "d"])
        await settle(pilot)
        assert on_screen(app).id == "inference-arithmetic"
        assert stored_states(store) == {"inference-arithmetic": "done"}


async def test_search_enter_then_n_d_in_one_read(make_app, store):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await start_on(app, pilot, "roofline")
        post_burst(app, ["slash", *"volkov", "enter", "n", "d"])
        assert await wait_until(pilot, lambda: "stream-k" in stored_states(store), timeout=15)
        await settle(pilot)
        assert on_screen(app).id == "stream-k"
        assert stored_states(store) == {"stream-k": "done"}


async def test_alternating_moves_and_marks(make_app, store, guide):
    """Every second key a mark: each lands on the entry the move before it reached."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await start_on(app, pilot, guide.entries[0].id)
        post_burst(app, ["d", "n", "l", "n", "s", "n", "d", "N"])
        await settle(pilot)
        assert stored_states(store) == {
            guide.entries[0].id: "done",
            guide.entries[1].id: "learning",
            guide.entries[2].id: "skipped",
            guide.entries[3].id: "done",
        }
        # N: the next pending entry after the one on screen.
        assert on_screen(app).id == guide.entries[4].id


async def test_a_key_a_dialog_swallows_is_refused_visibly(make_app, store):
    """`h` opens the note history; a mark typed while it is up is not applied to anything."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await start_on(app, pilot, "roofline")
        post_burst(app, ["question_mark", "d"])
        await settle(pilot)
        assert stored_states(store) == {}
        shown = [str(n.message) for n in notifications(app)]
        assert any("not applied" in message for message in shown), shown


async def test_e_then_text_in_one_read_goes_into_the_note(make_app, store):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await start_on(app, pilot, "roofline")
        # `h`, `d`, `n` are study keys on the guide: typed right after `e`, they are note text.
        post_burst(app, ["e", *"hand notes", "escape"])
        assert await wait_until(pilot, lambda: store.get_note("roofline") == "hand notes", timeout=15)
        await settle(pilot)
        assert {k: v for k, v in stored_states(store).items() if v != "pending"} == {}
        assert on_screen(app).id == "roofline"


async def test_tab_into_a_field_selects_it_so_typing_replaces_it(calc_app):
    from textual.widgets import Input

    from .test_calc_screens import open_calc

    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "roofline")
        chain = screen.focus_chain
        first, second = next(
            (a, b) for a, b in zip(chain, chain[1:]) if isinstance(a, Input) and isinstance(b, Input)
        )
        first.focus()
        await settle(pilot)
        second.value = "4e9"
        await pilot.press("tab")
        await settle(pilot)
        assert app.focused is second
        await pilot.press(*"8e9")
        await settle(pilot)
        assert second.value == "8e9"
        # The same as one read: shift+Tab back, then Tab and the new value at once.
        await pilot.press("shift+tab")
        await settle(pilot)
        assert app.focused is first
        post_burst(app, ["tab", *"6e9"])
        await settle(pilot)
        assert app.focused is second and second.value == "6e9", second.value
        # A click puts the cursor where it lands: nothing is selected, typing inserts.
        await pilot.click(first)
        await settle(pilot)
        assert app.focused is first and first.selection.is_empty


async def test_a_value_as_wide_as_its_field_stays_whole_when_tabbed_into(calc_app):
    """At 80x24 the tile field, reached with Tab, showed `28x128x64` (scrolled by one for the
    cursor after its end, and left so after Tab moved on) while the results said 128 x 128 x 64."""
    from textual.widgets import Input

    from studytui.tui.compat import screen_lines

    from .test_calc_screens import open_calc

    def shown() -> str:
        return "\n".join("".join(segment.text for segment in line) for line in screen_lines(app))

    app = calc_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_calc(app, pilot, "tile")
        field = screen.form.rows["tile"].control
        assert isinstance(field, Input) and len(field.value) >= field.content_size.width, (field.value, field.size)
        for _ in range(12):  # Tab through the form, onto the tile field and past it
            await pilot.press("tab")
            await settle(pilot, 2)
            if app.focused is field:
                assert f" {field.value} " in shown(), shown()
                await pilot.press("tab")
                await settle(pilot)
                break
        else:
            raise AssertionError("Tab never reached the tile field")
        assert f" {field.value} " in shown(), shown()


async def test_keys_a_widget_took_silently_never_hold_up_later_typing():
    """A key some widget takes without a word (the command palette's own field) never settles; a
    field waits for such a key at most SETTLE_WAIT once, and not at all when it is that old."""
    import time

    from studytui.tui.keyroute import SETTLE_WAIT, KeyRouting

    routing = KeyRouting()
    taken = events.Key("a", "a")
    routing._track(taken)
    fresh = events.Key("b", "b")
    routing._track(fresh)
    start = time.monotonic()
    await routing.earlier_keys_settled(fresh)  # `a` is young: waited for, then forgotten
    assert SETTLE_WAIT * 0.8 <= time.monotonic() - start < SETTLE_WAIT * 4
    routing.key_settled(fresh)  # (the field handled it)
    old = events.Key("c", "c")
    routing._track(old)
    for done in routing._keys_unsettled.values():
        done.since -= 2 * SETTLE_WAIT  # taken long ago
    later = events.Key("d", "d")
    routing._track(later)
    start = time.monotonic()
    await routing.earlier_keys_settled(later)
    assert time.monotonic() - start < SETTLE_WAIT / 2
    routing.key_settled(later)
    # A key that settles is waited for only until it does.
    first, second = events.Key("e", "e"), events.Key("f", "f")
    routing._track(first)
    routing._track(second)
    import asyncio

    asyncio.get_running_loop().call_later(0.05, routing.key_settled, first)
    start = time.monotonic()
    await routing.earlier_keys_settled(second)
    assert time.monotonic() - start < SETTLE_WAIT * 0.8
