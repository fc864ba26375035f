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


# --- calculators ----------------------------------------------------------------------------------
from studytui.tui.calc.choice import ChoiceField  # noqa: E402
from studytui.tui.calc.help import CalculatorHelpScreen  # noqa: E402
from studytui.tui.calc.screens import CalculatorScreen  # noqa: E402

from .test_calc_screens import calc_app, open_calc, results_text, type_into, widget_text  # noqa: E402,F401


async def test_f1_shows_calculator_help_and_question_mark_is_text_in_a_field(calc_app):
    app = calc_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_calc(app, pilot, "roofline")
        field = screen.form.rows["flops"].control
        field.focus()
        await pilot.press("end", "question_mark", "q")
        await pilot.pause()
        assert field.value.endswith("?q") and app.screen is screen  # text, not commands
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, CalculatorHelpScreen)
        assert "128k = 128,000" in app.screen._table().plain and "F2" in app.screen._table().plain
        await pilot.press("escape")
        await pilot.pause()
        # Outside a text field, `?` is help too.
        choice = screen.form.rows["dtype"].control
        assert isinstance(choice, ChoiceField)
        choice.focus()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, CalculatorHelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert "F1 help" in widget_text(screen.query_one("#calc-keys"))


async def test_every_other_calculator_is_one_key_away_even_from_a_try_it(calc_app):
    app = calc_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.jump_to("stream-k")  # has a try-it: the GEMM calculator, prefilled
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CalculatorScreen) and screen.spec.name == "gemm"
        strip = widget_text(screen.query_one("#calc-switcher"))
        # every calculator's key and short name, whole, in 80 columns (issue 25 review: 11 l2 was cut)
        from studytui.calc import registry
        from studytui.tui.calc.screens import switch_keys

        for key, name in switch_keys():
            assert f"{key[1:]} {registry.spec(name).short_name or name}" in strip, (key, name, strip)
        assert len(strip.rstrip()) <= 78 and "11 l2" in strip
        await pilot.press("f6")
        await pilot.pause()
        assert isinstance(app.screen, CalculatorScreen) and app.screen.spec.name == "specdec"
        assert app.screen.entry is not None and app.screen.entry.entry_id == "stream-k"  # still saves to the entry
        await pilot.press("escape")
        await pilot.pause()
        assert current_id(app) == "stream-k"


async def test_headline_results_are_on_screen_first_at_80x24(calc_app):
    app = calc_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_calc(app, pilot, "transformer")
        text = screen_text(app)
        for label in ("bound", "TPOT bound", "tokens/s bound", "memory per GPU"):
            assert label in text, (label, text)
        assert "fits" in text
        lines = results_text(screen).splitlines()
        assert lines[0].startswith("bound")  # headline first, not "model"
        for line in lines:  # long values continue under themselves, never at column 0
            assert not line.startswith(("G ", "sequence)")), line


async def test_an_unknown_gpu_is_one_line_under_the_field(calc_app):
    app = calc_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_calc(app, pilot, "roofline")
        await type_into(pilot, screen, "gpu", "h20x")
        row = screen.form.rows["gpu"]
        assert row.error is not None and row.error.display
        # On full-width lines under the field (issue 23; it was one line cut in the control's
        # ten cells): the closest ids and ctrl+g, never the list of every known id.
        assert row.error.region.width == row.control.parent.content_region.width
        assert row.error.size.height <= 3
        assert "known:" not in str(row.error.render()) and "ctrl+g" in str(row.error.render())


async def test_the_title_follows_the_inputs(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "transformer")
        title = lambda: widget_text(screen.query_one("#calc-title"))  # noqa: E731
        assert "llama-3.1-8b" in title()
        model = screen.form.rows["model"].control
        screen.form.set_text("model", "llama-3.1-70b")
        await pilot.pause()
        assert "llama-3.1-70b" in title() and "llama-3.1-8b" not in title()
        assert model is screen.form.rows["model"].control


async def test_handoff_dialog_gives_an_unbroken_url_and_does_not_claim_a_browser(make_app):
    from studytui.tui.screens.handoff import HandoffDialog

    from .support import SSH_ENV

    app = make_app(environ=dict(SSH_ENV), platform="linux")
    app.write_to_terminal = lambda sequence: None  # type: ignore[method-assign]
    long_url = "https://example.org/" + "a-very-long-path-segment/" * 6 + "paper.pdf"
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.hand_off(long_url, "A paper with a long link")
        await pilot.pause()
        assert isinstance(app.screen, HandoffDialog)
        text = screen_text(app)
        assert "in your browser" not in text.split("No browser was started")[0]
        plain = app.screen.query_one("#handoff-plain")
        assert plain.size.height == 1 and plain.size.width >= len(long_url)  # one line, never wrapped
        assert str(plain.render()) == long_url
        # A guide entry's dialog names the command that prints the URL.
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert "studytui open roofline" in " ".join(screen_text(app).split())


async def test_ansi_theme_draws_tree_guides_and_high_contrast_is_offered(make_app):
    from studytui.tui.app import STUDY_THEMES
    from studytui.tui.widgets.guide_tree import GuideTree

    assert "studytui-high-contrast" in STUDY_THEMES
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.theme = "ansi-dark"
        await pilot.pause()
        tree = app.screen.query_one(GuideTree)
        guides = tree.get_component_rich_style("tree--guides")
        assert guides.color is not None and guides.color.name in ("bright_black", "white", "color(8)", "color(7)"), guides
        app.theme = "studytui-high-contrast"
        await pilot.pause()
        guides = tree.get_component_rich_style("tree--guides")
        assert guides.color is not None and guides.color.triplet is not None and min(guides.color.triplet) >= 0xC0


def test_total_and_active_parameters_only_for_a_mixture_of_experts():
    from studytui.calc.forms import CALCULATORS

    spec = CALCULATORS["transformer"]
    dense = dict(spec.run({"model": "llama-3.1-8b", "gpu": "h200"}, None).rows)
    moe = dict(spec.run({"model": "mixtral-8x7b", "gpu": "h200"}, None).rows)
    assert "parameters" in dense and "parameters (total / active)" not in dense
    assert "parameters (total / active)" in moe


async def test_results_say_how_typed_values_were_read(calc_app):
    app = calc_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_calc(app, pilot, "kv")
        await type_into(pilot, screen, "context", "128k")
        text = " ".join(results_text(screen).split())
        assert "read as context tokens 128k = 128,000" in text
        await pilot.press("escape")
        await pilot.pause()
        screen = await open_calc(app, pilot, "roofline")
        await type_into(pilot, screen, "time", "2")
        text = " ".join(results_text(screen).split())
        assert "2 = 2 s (no unit: seconds)" in text
        await type_into(pilot, screen, "time", "2ms")
        assert "no unit" not in results_text(screen)
