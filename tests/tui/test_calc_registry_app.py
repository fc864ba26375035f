"""A new calculator in the app: added to studytui.calc.registry.MODULES (and nowhere else), it is
in the hub, its screen computes as it is edited, the palette offers it, and its presentation
(headline rows, short labels, short name) is its own.

The toy calculator is tests/data/toy_calculator.py; tests/test_calc_registry.py checks the
command line with it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Iterator

import pytest
from textual.widgets import OptionList

from studytui.calc import registry
from studytui.tui.calc import SCREEN_ID, CalculatorCommand
from studytui.tui.calc.screens import CalculatorHubScreen, CalculatorScreen, _rows_table, _switcher_line, headline_first, short_label

from .support import wait_for_palette, wait_until
from .test_calc_screens import calc_registry

TOY = Path(__file__).parent.parent / "data" / "toy_calculator.py"


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The toy calculator's module, `toycalcs.toy`, added to the registry (for this test only)."""
    package = tmp_path / "toycalcs"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(TOY, package / "toy.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "MODULES", (*registry.MODULES, "toycalcs.toy"))
    monkeypatch.setattr(registry, "_loaded", dict(registry._loaded))  # the toy's spec is forgotten afterwards
    yield "toy"
    for name in ("toycalcs.toy", "toycalcs"):
        sys.modules.pop(name, None)


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
    assert _switcher_line(toy).plain.endswith("F11 toy")


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
