"""A calculator screen's first frame (issue 27): whole when it is first drawn, results included,
with nothing drawn twice on the way (benchmarks/bench_calc_tui.py times it)."""

from __future__ import annotations

import asyncio

import pytest

from studytui.tui.calc import SCREEN_ID
from studytui.tui.calc.form import CalcForm
from studytui.tui.calc.screens import CalculatorScreen, expected_results_width, label_width_for

from .test_calc_screens import calc_registry


@pytest.mark.parametrize("size", [(60, 24), (80, 24), (100, 30), (119, 40), (120, 40), (143, 40), (200, 50)])
async def test_the_results_width_known_before_layout_is_the_laid_out_one(make_app, size):
    """The rows of the first frame are drawn at the width the stylesheet will give the results
    (a CSS change that moves it fails here, instead of costing every opening a second draw)."""
    app = make_app(registry=calc_registry())
    async with app.run_test(size=size) as pilot:
        app.open_screen(SCREEN_ID, calc="roofline")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CalculatorScreen)
        assert screen.query_one("#calc-results-scroll").size.width - 1 == expected_results_width(size[0])
        assert screen.form.label_width == label_width_for(size[0])


@pytest.mark.parametrize("calc", ["transformer", "occupancy", "roofline"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_calculator_screen_is_whole_when_first_drawn(make_app, monkeypatch, calc, size):
    """By the time the screen is mounted (before its first layout) the result is computed and
    drawn and the first field's hint is shown (focus goes to that field); then nothing is redrawn: the rows
    once, no focus on the form itself (Textual's automatic focus restyled the whole form twice)."""
    draws: list[int] = []
    original = CalculatorScreen._draw_rows

    def counted(self, *args, **kwargs):
        draws.append(self._results_width())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CalculatorScreen, "_draw_rows", counted)
    form_focused: list[bool] = []
    monkeypatch.setattr(CalcForm, "on_focus", lambda self: form_focused.append(True), raising=False)
    app = make_app(registry=calc_registry())
    async with app.run_test(size=size) as pilot:
        app.open_screen(SCREEN_ID, calc=calc)
        screen = app.screen
        assert isinstance(screen, CalculatorScreen)
        while not screen.is_mounted:
            await asyncio.sleep(0)
        assert screen.result is not None, screen.error
        assert draws == [expected_results_width(size[0])]
        first = next(iter(screen.form.rows.values()))
        assert first.field.label in str(screen.query_one("#calc-field-hint").render())
        await pilot.pause()
        await pilot.pause()
        assert len(draws) == 1, draws
        assert form_focused == []
        assert screen.focused is first.control


async def test_a_field_is_built_without_restyling_it_before_it_is_mounted(make_app, monkeypatch):
    """Building a text field restyles nothing (Input's constructor added its classes one by
    one, each a restyle of the unmounted field), and it ends up with the classes and the compact
    state a plain compact Input has."""
    from textual.css.stylesheet import Stylesheet
    from textual.widgets import Input

    from studytui.calc.registry import spec
    from studytui.tui.calc.form import FieldRow

    app = make_app(registry=calc_registry())
    async with app.run_test(size=(120, 40)):
        field = next(f for f in spec("transformer").fields if f.name == "batch")
        updates: list[object] = []
        original = Stylesheet.update_nodes

        def counted(self, nodes, animate=False):
            updates.append(nodes)
            return original(self, nodes, animate)

        monkeypatch.setattr(Stylesheet, "update_nodes", counted)
        for value in ("8", ""):
            row = FieldRow(field, value, [], [])
            assert updates == [], value
            plain = Input(value, compact=True)
            assert set(row.control.classes) == set(plain.classes) and row.control.compact is True, value
            updates.clear()
