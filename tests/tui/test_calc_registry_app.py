"""A new calculator in the app: added to studytui.calc.registry.MODULES (and nowhere else), it is
in the hub, its screen computes as it is edited, the palette offers it, and its presentation
(headline rows, short labels, short name) is its own.

The toy calculator is tests/data/toy_calculator.py, registered by the `toy` fixture
(tests/conftest.py); a second toy, tests/data/toy_roofline.py (`toy_roofline`), is plotted on the
roofline. tests/test_calc_registry.py checks the command line, `check` and practice with them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from textual.widgets import OptionList

from studytui.calc import registry
from studytui.tui.calc import SCREEN_ID, CalculatorCommand
from studytui.tui.calc.screens import (
    CalculatorHubScreen,
    CalculatorScreen,
    _rows_table,
    _switcher_line,
    headline_first,
    short_label,
    switch_keys,
)

from .support import wait_for_palette, wait_until
from .test_calc_screens import calc_registry


def test_the_palette_offers_a_new_calculator_by_its_title(toy: str) -> None:
    commands = [c for c in calc_registry().commands if isinstance(c, CalculatorCommand)]
    assert [c.name for c in commands] == list(registry.names())
    assert commands[-1].title == "Calculator: Toy area"
    assert commands[-1].help == "Open the Toy area calculator"


def test_a_new_calculators_rows_are_laid_out_by_its_own_spec(toy: str) -> None:
    spec = registry.spec(toy)
    rows = spec.run({"height": "3"}).rows
    head, rest = headline_first(rows, spec)
    assert head == [("area of the toy shape", "6")] and [label for label, _v in rest] == ["shape", "base of the toy"]
    assert short_label("area of the toy shape", spec) == "toy area"
    assert short_label("area of the toy shape", registry.spec("roofline")) == "area of the toy shape"
    narrow = _rows_table(rows, width=24, spec=spec).plain.splitlines()
    assert narrow[0].startswith("toy area")  # the headline row first, under its short label
    assert _switcher_line(toy).plain.endswith("F12 toy")  # after the ten built-in calculators (F2..F11)


async def test_a_new_calculator_is_in_the_hub_and_its_screen_computes(make_app, toy: str) -> None:
    app = make_app(registry=calc_registry())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.open_screen(SCREEN_ID, hub=True)
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorHubScreen))
        hub = app.screen.query_one("#hub-list", OptionList)
        ids = [hub.get_option_at_index(i).id for i in range(hub.option_count)]
        assert ids == list(registry.names()) and ids[-1] == "toy"
        assert "Toy area" in str(hub.get_option_at_index(len(ids) - 1).prompt)
        hub.highlighted = len(ids) - 1
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorScreen))
        screen = app.screen
        assert screen.spec.name == "toy"
        # Its starting example (ui_defaults: height 3) and its default width 2.
        assert await wait_until(pilot, lambda: screen.result is not None)
        assert screen.result.values["area"] == 6
        screen.form.set_text("height", "5")
        assert await wait_until(pilot, lambda: screen.result is not None and screen.result.values["area"] == 10)
        screen.form.set_text("height", "abc")
        assert await wait_until(pilot, lambda: screen.result is None and screen.error is not None)
        assert screen.error[0] == "height"


async def test_the_palette_opens_a_new_calculator(make_app, toy: str) -> None:
    app = make_app(registry=calc_registry())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Calculator: Toy")
        assert await wait_for_palette(pilot, app, "Toy area")
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorScreen))
        assert app.screen.spec.name == "toy"
        assert await wait_until(pilot, lambda: app.screen.result is not None)


# --- the F-keys, F1 help, groups and the roofline plot, from the spec alone ------------------------------
def _key_of(name: str) -> str:
    keys = {calc: key for key, calc in switch_keys()}
    assert name in keys, f"{name} has no F-key (F2 to F12: the eleventh calculator is the last with one)"
    return keys[name]


async def test_f1_help_lists_a_new_calculators_f_key_and_its_switch_opens_it(make_app, toy: str) -> None:
    from studytui.tui.calc.help import CalculatorHelpScreen

    key = _key_of(toy).upper()
    app = make_app(registry=calc_registry())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.open_screen(SCREEN_ID, calc="roofline")
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorScreen))
        assert f"{key} toy" in app.screen.query_one("#calc-switcher").render().plain  # the strip under the title
        await pilot.press("f1")
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorHelpScreen))
        assert f"  {key:<4} toy" in app.screen._table().plain.splitlines()
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorScreen))
        # What the F-key runs (the key itself is bound when the screens' module loads: the test below).
        await app.screen.run_action(f"switch('{toy}')")
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorScreen) and app.screen.spec.name == toy)


def test_a_new_calculators_f_key_is_bound_when_the_screens_load(toy: str, tmp_path: Path) -> None:
    """CalculatorScreen binds F2... from the registry when its module loads, so a calculator in
    MODULES (as a new one is, in the code) gets its key: a fresh process, with the toy registered
    first, presses it in a bare Textual app."""
    script = textwrap.dedent(f"""
        import asyncio, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from studytui.calc import registry
        registry.MODULES = (*registry.MODULES, "toycalcs.toy")
        from textual.app import App
        from studytui.tui.calc.presets import Launch
        from studytui.tui.calc.screens import CalculatorScreen, switch_keys

        key = dict((calc, k) for k, calc in switch_keys())["toy"]
        print([b.action for b in CalculatorScreen.BINDINGS if b.key == key])

        class Bare(App):
            def on_mount(self):
                self.push_screen(CalculatorScreen(Launch("roofline")))

        async def main():
            app = Bare()
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.pause()
                await pilot.press(key)
                for _ in range(50):
                    await pilot.pause(0.05)
                    if getattr(app.screen, "spec", None) is not None and app.screen.spec.name == "toy":
                        break
                print(app.screen.spec.name)

        asyncio.run(main())
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "STUDYTUI_DATA_DIR": str(tmp_path / "data")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["[\"switch('toy')\"]", "toy"]


async def test_a_new_calculators_grouped_field_is_in_its_group(make_app, toy: str) -> None:
    """The toy's `shape` names the group "more" (FieldSpec.group): the form shows it under that
    group's toggle, closed until opened, and what it holds still computes."""
    from studytui.calc.form_values import GROUPS
    from studytui.tui.calc.form import GroupToggle

    app = make_app(registry=calc_registry())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.open_screen(SCREEN_ID, calc=toy)
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorScreen) and app.screen.result is not None)
        screen = app.screen
        toggle = screen.query_one("#group-more", GroupToggle)
        assert toggle.title_text == dict(GROUPS)["more"] and not toggle.expanded
        assert screen.form.group_of_field == {"shape": "more"} and "shape" not in screen.form.rows
        assert {"width", "height"} <= set(screen.form.rows)
        toggle.focus()
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: "shape" in screen.form.rows)
        assert toggle.expanded and screen.query_one("#grid-more").display
        screen.form.set_text("shape", "triangle")
        assert await wait_until(pilot, lambda: screen.result is not None and screen.result.values["area"] == 3)


async def test_a_new_calculator_with_plot_roofline_draws_its_roof_and_point(make_app, toy_roofline: str) -> None:
    from studytui.tui.calc.plot import RooflinePlot

    app = make_app(registry=calc_registry())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.open_screen(SCREEN_ID, calc=toy_roofline)
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorScreen))
        screen = app.screen
        assert screen.panel == "plot"
        plot = screen.query_one("#tab-plot", RooflinePlot)
        assert await wait_until(pilot, lambda: bool(plot.roofs))
        [roof] = plot.roofs
        assert (roof.peak_flops, roof.mem_bw) == (100e12, 2e12)
        # 1e12 FLOPs over 4 GB: 250 FLOP/B, past the ridge (50 FLOP/B), so at the roof.
        assert [(p.label, p.intensity, p.flops_rate) for p in plot.points] == [("toyroof (attainable)", 250.0, 100e12)]
        screen.form.set_text("bytes", "100GB")  # 10 FLOP/B: under the slope
        assert await wait_until(pilot, lambda: [p.intensity for p in plot.points] == [10.0])
        assert plot.points[0].flops_rate == 20e12
