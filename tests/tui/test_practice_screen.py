"""The practice screen: right, wrong, hints, solution, open in calculator; mastery in the tree and
status line; snapshots at 80x24 and 120x40. Uses the real guide (problems link real entries)."""

from __future__ import annotations

import pytest
from textual.widgets import Input, OptionList, Static

from studytui.guide import load_guide
from studytui.practice.answers import format_value
from studytui.practice.grading import expected
from studytui.tui.practice import SCREEN_ID
from studytui.tui.practice.screen import PracticeScreen
from studytui.tui.registry import build_registry


@pytest.fixture
def real_app(make_app):
    def factory():
        registry = build_registry(plugin_modules=("studytui.tui.calc", "studytui.tui.practice"))
        return make_app(guide=load_guide(), registry=registry)

    return factory


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def _right(variant) -> str:
    exp = expected(variant)
    return exp.choice if exp.choice is not None else format_value(exp.value, variant.problem.unit, 10)


async def _open(pilot, **params):
    await pilot.pause()
    pilot.app.open_screen(SCREEN_ID, **params)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, PracticeScreen)
    return screen


async def _type(pilot, text: str) -> None:
    await pilot.press(*text, "enter")
    await pilot.pause()


async def test_wrong_then_hints_then_right(real_app, store):
    app = real_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, section="start-here")
        variant = screen.variant
        assert variant.problem.id == screen.problem_ids[0] and isinstance(app.focused, Input)
        assert variant.question in _text(screen, "#practice-question")
        exp = expected(variant)
        wrong = format_value(exp.value * 4, variant.problem.unit)
        await _type(pilot, wrong)
        feedback = _text(screen, "#practice-feedback")
        assert "Not yet" in feedback and variant.hints[0] in feedback and "too high" in feedback
        assert _text(screen, "#practice-solution") == ""  # no answer given away
        # the missed answer stays, selected: typing the next one replaces it (round-3 review:
        # "146" then "584.4" was graded as "146584.4")
        await _type(pilot, wrong)
        assert variant.hints[1] in _text(screen, "#practice-feedback")
        assert app.screen.query_one(Input).value == wrong
        await _type(pilot, _right(variant))
        feedback = _text(screen, "#practice-feedback")
        assert feedback.startswith("Right") and exp.display(variant.problem.unit) in feedback
        assert variant.notice in _text(screen, "#practice-solution")
        assert [a.correct for a in store.attempts(variant.problem.id)] == [False, False, True]
        # review R1: right after misses on this variant is not mastery, and the screen says so
        assert "Right after a miss: not counted for mastery" in feedback
        assert "mastery 0/" in _text(screen, "#practice-title")
        assert str(screen.query_one(OptionList).get_option_at_index(0).prompt).startswith("~")
        # the next variant, right at the first try: mastery reaches the list, the title, the tree and the status line
        await pilot.press("ctrl+n", "ctrl+b")
        await pilot.pause()
        fresh = screen.variant
        assert fresh.problem.id == variant.problem.id and fresh.seed == variant.seed + 1
        await _type(pilot, _right(fresh))
        assert "after a miss" not in _text(screen, "#practice-feedback")
        assert "mastery 1/" in _text(screen, "#practice-title")
        assert str(screen.query_one(OptionList).get_option_at_index(0).prompt).startswith("✓")
        await pilot.press("escape")
        await pilot.pause()
        assert app.main_screen.tree.mastery["start-here"][0] == 1
        assert "Practice 1/" in _text(app.main_screen, "#status")


async def test_the_answer_field_shows_a_format_never_a_number(real_app, store):
    """Review R5: the field read 'your answer, e.g. 12 ms' on every problem; gf-hbm-stream seed 0
    is 12.08 ms, so typing the example counted. It shows the format now."""
    app = real_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, section="gpu-fundamentals")
        await _show(pilot, screen, "gf-hbm-stream")
        assert screen.variant.seed == 0 and "12.08 ms" in expected(screen.variant).display("ms")
        placeholder = screen.query_one(Input).placeholder
        assert placeholder == "your answer: <number> ms" and not any(ch.isdigit() for ch in placeholder)
        await _type(pilot, placeholder.split(": ", 1)[1])
        assert "is not a number" in _text(screen, "#practice-feedback") and store.attempts() == []


async def test_solution_on_request_counts_as_a_miss(real_app, store):
    app = real_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot, section="kernel-optimization")
        pid = screen.variant.problem.id
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert screen.variant.notice in _text(screen, "#practice-solution")
        assert [(a.correct, a.answer) for a in store.attempts(pid)] == [(False, "(solution shown)")]
        await _type(pilot, _right(screen.variant))  # same variant, now right
        feedback = _text(screen, "#practice-feedback")
        # issue 31: copying the revealed answer back is graded but does not count for mastery
        assert feedback.startswith("Right, but not counted") and "solution was shown" in feedback
        assert [(a.correct, a.answer) for a in store.attempts(pid)] == [(False, "(solution shown)")]
        assert screen.practice.seed(pid) == 1  # the next attempt is a new variant


async def test_bad_input_is_a_message_not_a_crash(real_app, store):
    app = real_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot, section="start-here")
        await _type(pilot, "lots\x1b[31m")
        assert "is not a number" in _text(screen, "#practice-feedback") and "\x1b" not in _text(screen, "#practice-feedback")
        assert store.attempts() == []


async def test_choice_problem_by_number(real_app, store):
    app = real_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, section="start-here")
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert screen.variant.problem.id == screen.problem_ids[1]
        while screen.variant.problem.kind != "choice":
            await pilot.press("ctrl+n")
            await pilot.pause()
        variant = screen.variant
        number = str(variant.choices.index(expected(variant).choice) + 1)
        await _type(pilot, number)
        assert _text(screen, "#practice-feedback").startswith("Right")


async def _show(pilot, screen, problem_id: str) -> None:
    while screen.variant.problem.id != problem_id:
        await pilot.press("ctrl+n")
        await pilot.pause()


async def test_a_three_choice_problem_at_80x24(real_app, store):
    """Issue 31: a choice between compute, memory and communication, answered the way people write it."""
    app = real_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot, section="distributed-inference")
        await _show(pilot, screen, "di-tp-bound")
        variant = screen.variant
        assert sorted(variant.choices) == ["communication", "compute", "memory"]
        meta = _text(screen, "#practice-meta")
        assert "Choices: 1) " in meta and "3) " in meta
        question = _text(screen, "#practice-question")
        assert "Given:" in question and "each way" in question  # the link figure, one way
        wrong = next(c for c in variant.choices if c != expected(variant).choice)
        await _type(pilot, f"{wrong}-bound")
        assert _text(screen, "#practice-feedback").startswith("Not yet")
        app.screen.query_one(Input).value = ""
        await _type(pilot, f"{expected(variant).choice}-bound")
        assert _text(screen, "#practice-feedback").startswith("Right")
        assert [a.correct for a in store.attempts("di-tp-bound")] == [False, True]


async def test_a_read_this_profile_problem_at_80x24(real_app, store):
    """Issue 31: a real Nsight Compute record, the limiter named from it."""
    app = real_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot, section="programming-models")
        await _show(pilot, screen, "pm-profile-limiter")
        variant = screen.variant
        question = _text(screen, "#practice-question")
        assert "Nsight Compute" in question and "DRAM counters" in question and "H200" in question
        assert "HBM bandwidth 4.8 TB/s" in question
        await _type(pilot, str(variant.choices.index(expected(variant).choice) + 1))
        feedback = _text(screen, "#practice-feedback")
        assert feedback.startswith("Right") and expected(variant).choice in feedback
        assert "content/profiles/h200" in _text(screen, "#practice-solution")


async def test_open_in_calculator_prefilled_with_the_variant(real_app):
    from studytui.tui.calc.screens import CalculatorScreen

    app = real_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, section="start-here")
        variant = screen.variant
        await pilot.press("ctrl+o")
        await pilot.pause()
        calc = app.screen
        assert isinstance(calc, CalculatorScreen) and calc.spec.name == variant.problem.calc_name
        assert calc.result is not None
        exp = expected(variant)
        assert calc.result.values[variant.problem.answer_key] == exp.value  # the very same numbers
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and isinstance(app.focused, Input)


async def test_from_an_entry_its_problems_and_the_key(real_app):
    app = real_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.jump_to("roofline-paper")
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PracticeScreen)
        assert screen.problem_ids and all("roofline-paper" in screen.practice.get(p).entries for p in screen.problem_ids)
        assert ("x", "Practice", SCREEN_ID) in app.key_rows()


async def test_palette_lists_practice_by_section_and_due(real_app):
    from studytui.tui.commands import StudyCommands

    app = real_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.pause()
        titles = [hit.text async for hit in StudyCommands(app.screen).discover()]
        assert "Practice: 2. Kernel optimization" in titles and "Review due problems" in titles
        app.open_screen(SCREEN_ID, due=True)
        await pilot.pause()
        assert isinstance(app.screen, PracticeScreen)  # nothing due: all problems, with a notice


async def test_first_paint_does_not_load_problems(real_app, monkeypatch):
    """Problems load after the first frame (a ready hook), never before it."""
    import studytui.tui.practice as plugin

    calls = []
    original = plugin.PracticeState.load

    def spy(app):
        calls.append(app.main_screen is not None and app.main_screen.detail is not None)
        return original(app)

    monkeypatch.setattr(plugin.PracticeState, "load", staticmethod(spy))
    app = real_app()
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.practice_state is None or calls
        await pilot.pause()
        await pilot.pause()
        assert calls == [True]


def _opened(section: str):
    async def run_before(pilot) -> None:
        await pilot.pause()
        pilot.app.open_screen(SCREEN_ID, section=section)
        await pilot.pause()
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_practice_snapshot(snap_compare, real_app, size):
    assert snap_compare(real_app(), run_before=_opened("distributed-inference"), terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_practice_snapshot_after_a_miss(snap_compare, real_app, size):
    async def run_before(pilot) -> None:
        await _opened("distributed-inference")(pilot)
        await pilot.press(*"1 s", "enter")
        await pilot.pause()

    assert snap_compare(real_app(), run_before=run_before, terminal_size=size)


async def test_review_due_problems_lists_what_is_due(real_app, store):
    import datetime as dt

    past = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).isoformat()
    store._clock = lambda: past  # a miss an hour ago: due again after ten minutes
    store.record_attempt("ko-gemm-intensity", 0, "1", False, 0.9)
    app = real_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.pause()
        assert "Practice 0/" in _text(app.main_screen, "#status") and "1 due" in _text(app.main_screen, "#status")
        assert "◆0/" in str(app.main_screen.tree.section_node("kernel-optimization").label)
        screen = await _open(pilot, due=True)
        assert screen.problem_ids == ["ko-gemm-intensity"] and "1 due for review" in _text(screen, "#practice-title")


async def test_previous_and_next_problem_keys_and_ctrl_p_stays_the_palette(real_app):
    """ctrl+p was documented as "previous problem", but the App's command palette takes it first:
    an answer typed next went into the palette. Previous is ctrl+b (or PageUp), next ctrl+n (or PageDown)."""
    from textual.command import CommandPalette

    app = real_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, section="start-here")
        first = screen.variant.problem.id
        for forward, back in (("ctrl+n", "ctrl+b"), ("pagedown", "pageup")):
            await pilot.press(forward)
            await pilot.pause()
            assert screen.variant.problem.id == screen.problem_ids[1]
            await pilot.press(back)
            await pilot.pause()
            assert screen.variant.problem.id == first
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)


async def test_answer_keys_typed_together_land_in_order_and_enter_grades_what_was_typed(real_app, store):
    """Issue 23: `C-u 7 Enter` in one read left the field empty and graded nothing; `abcd Left Left X`
    gave `abcdX`. The answer field handles its editing keys in order with the text, and Enter
    grades the text typed before it."""
    from textual import events

    from studytui.tui.practice.screen import AnswerInput

    app = real_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, section="start-here")
        field = screen.query_one(AnswerInput)
        for key, char in [("a", "a"), ("b", "b"), ("c", "c"), ("d", "d"), ("left", None), ("left", None), ("X", "X")]:
            app.post_message(events.Key(key, char))
        for _ in range(6):
            await pilot.pause()
        assert field.value == "abXcd"
        field.value = "5"
        await pilot.pause()
        for key, char in [("ctrl+u", None), ("7", "7"), ("enter", None)]:
            app.post_message(events.Key(key, char))
        for _ in range(6):
            await pilot.pause()
        attempts = store.attempts()
        assert [a.answer for a in attempts] == ["7"], attempts


async def test_at_80x24_the_question_opens_at_its_start(real_app, store):
    """Review finding: at 80x24 the right pane opened scrolled to the answer field, the title and
    the question's start above the fold. It opens at the top (the field still has the focus, and
    scrolling or typing reaches it), for the first problem and for each next one."""
    app = real_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.jump_to("roofline-paper")
        await pilot.pause()
        await pilot.press("x")
        assert await _until(pilot, lambda: isinstance(app.screen, PracticeScreen))
        await pilot.pause()
        screen = app.screen
        right = screen.query_one("#practice-right")
        assert right.max_scroll_y > 0  # the pane is taller than the screen here, so this matters
        for _ in range(3):
            assert right.scroll_y == 0 and isinstance(app.focused, Input)
            title = screen.variant.problem.title
            assert any(line.strip().startswith(title[:30]) or title[:30] in line for line in _screen_lines(app)), title
            await pilot.press("ctrl+n")
            await pilot.pause()


async def _until(pilot, condition, tries: int = 100) -> bool:
    for _ in range(tries):
        if condition():
            return True
        await pilot.pause(0.02)
    return condition()


def _screen_lines(app) -> list[str]:
    from studytui.tui.compat import screen_lines

    return ["".join(seg.text for seg in line) for line in screen_lines(app)]
