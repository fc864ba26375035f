"""Snapshots of every calculator screen, the hub, the GPU picker and the roofline plot.

Deterministic: the fixed test guide, a fresh store, no blinking cursor, and the H100 (which has no
measured profile in the content, so a new measurement elsewhere cannot change these pictures).
Update with `pytest tests/tui/test_calc_snapshots.py --snapshot-update` after a deliberate change.
"""

from __future__ import annotations

from typing import Any

import pytest

from studytui.calc.forms import CALCULATORS
from studytui.tui.calc import SCREEN_ID

from .test_calc_screens import calc_registry

SNAPSHOT_GPU = "h100"


def calc_app(make_app):
    return make_app(registry=calc_registry())


def opener(name: str | None, args: dict[str, Any] | None = None, keys: tuple[str, ...] = ()):
    async def run_before(pilot) -> None:
        app = pilot.app
        await pilot.pause()
        if name is None:
            app.open_screen(SCREEN_ID, hub=True)
        else:
            uses_gpu = any(f.name == "gpu" for f in CALCULATORS[name].fields)
            app.open_screen(SCREEN_ID, calc=name, args={**({"gpu": SNAPSHOT_GPU} if uses_gpu else {}), **(args or {})})
        await pilot.pause()
        await pilot.pause()  # the plot is drawn one frame after the numbers
        if keys:
            await pilot.press(*keys)
            await pilot.pause()

    return run_before


SIZES = {"120x40": (120, 40), "80x24": (80, 24)}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("name", list(CALCULATORS))
def test_calculator_screen(snap_compare, make_app, name, size):
    # At 80x24 the headline results (bound, time, tokens/s, fits) must be on screen.
    assert snap_compare(calc_app(make_app), run_before=opener(name), terminal_size=SIZES[size])


def test_roofline_plot_with_a_second_gpu(snap_compare, make_app):
    # The plot alone matters here: a compute-bound and a memory-bound kernel's GPU, overlaid.
    keys = ("ctrl+b", *"mi300x", "enter")
    assert snap_compare(calc_app(make_app), run_before=opener("roofline", {"flops": "2e12", "bytes": "2GB"}, keys), terminal_size=(120, 40))


def test_calculator_with_an_inline_error(snap_compare, make_app):
    # M = 0: the field is marked with the reason, the results are blanked, the plot says why.
    assert snap_compare(calc_app(make_app), run_before=opener("gemm", {"m": "0"}), terminal_size=(120, 40))


def test_calculator_help(snap_compare, make_app):
    assert snap_compare(calc_app(make_app), run_before=opener("transformer", keys=("f1",)), terminal_size=(80, 24))


def test_unknown_gpu_at_80x24(snap_compare, make_app):
    assert snap_compare(calc_app(make_app), run_before=opener("roofline", {"gpu": "h20x"}), terminal_size=(80, 24))


def test_hub(snap_compare, make_app):
    assert snap_compare(calc_app(make_app), run_before=opener(None), terminal_size=(120, 40))


def test_gpu_picker(snap_compare, make_app):
    keys = ("ctrl+g", *"h100")
    assert snap_compare(calc_app(make_app), run_before=opener("roofline", keys=keys), terminal_size=(120, 40))
