"""The calculator screens show data as text: a GPU name from the learner's hardware file with
escape sequences (OSC 52, OSC 0, clear screen), bidi controls and marks, or markup in it reaches
the terminal escaped, in the result rows, the title, the status line, the explain and about panels
and the GPU picker (the CLI's side: tests/test_calc_display_safety.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from textual.widgets import Input

from studytui.core.text import BIDI_CONTROLS
from studytui.tui.calc import SCREEN_ID
from studytui.tui.calc.gpu_picker import GpuPickerScreen
from studytui.tui.calc.screens import CalculatorScreen, _rows_table
from studytui.tui.compat import screen_lines

from .support import wait_until
from .test_calc_screens import calc_registry

HOSTILE = ("H200\x1b]52;c;ZWNobyBwd25lZA==\x1b\\ \x1b]0;pwned-title\x1b\\ \x1b[2J \u202eevil\u200f\u061c "
           "[bold red]X[/][link=https://e.x]L[/link]")
SHOWN = ("H200\\x1b]52;c;ZWNobyBwd25lZA==\\x1b\\ \\x1b]0;pwned-title\\x1b\\ \\x1b[2J \\u202eevil\\u200f\\u061c "
         "[bold red]X[/][link=https://e.x]L[/link]")
# What must never be in the text of a segment sent to the terminal (newlines end strips).
RAW = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}]")


def write_gpu(data_dir: Path, name: str) -> None:
    folder = data_dir / "hardware"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "x.yaml").write_text(
        f"- id: st\n  name: {json.dumps(name)}\n  vendor: NVIDIA\n  memory_gb: 141\n  memory_unit: GB\n"
        "  memory_bw_tbs: 4.8\n  peak_tflops:\n    bf16: 989.4\n  sources:\n  - https://example.com\n  notes: "
        f"{json.dumps('note ' + name)}\n",
        encoding="utf-8",
    )


def raw_segments(app) -> list[str]:
    """Text of every segment on screen that holds a control character."""
    return [seg.text for strip in screen_lines(app) for seg in strip if RAW.search(seg.text)]


def flat_screen(app) -> str:
    return "".join("".join(seg.text for seg in strip) for strip in screen_lines(app)).replace(" ", "")


async def test_a_hostile_gpu_name_is_escaped_on_the_calculator_screen_and_the_picker(make_app, data_dir: Path):
    write_gpu(data_dir, HOSTILE)
    app = make_app(registry=calc_registry())
    async with app.run_test(size=(160, 50)) as pilot:
        app.open_screen(SCREEN_ID, calc="roofline")
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorScreen))
        screen = app.screen
        control = screen.form.rows["gpu"].control
        assert isinstance(control, Input)
        control.focus()
        control.value = "st"
        assert await wait_until(pilot, lambda: screen.result is not None and screen.result.values.get("gpu") == "st")
        await pilot.pause()
        assert raw_segments(app) == []
        flat = flat_screen(app)
        assert "\\x1b]52;c;ZWNobyBwd25lZA==" in flat and "\\u202eevil\\u200f\\u061c" in flat
        assert "[boldred]X[/][link=https://e.x]L[/link]" in flat  # text as written, never markup
        # The explain and about panels (formulas, assumptions) go through the same escaping.
        for panel in ("explain", "about"):
            screen.action_show_panel(panel)
            await pilot.pause()
            assert raw_segments(app) == [], panel

        await pilot.press("ctrl+g")
        assert await wait_until(pilot, lambda: isinstance(app.screen, GpuPickerScreen))
        await pilot.press(*"pwned")  # a word of this name only
        assert await wait_until(pilot, lambda: [acc.id for acc in app.screen.shown] == ["st"])
        await pilot.pause()
        assert raw_segments(app) == []
        flat = flat_screen(app)
        assert "\\x1b]0;pwned-title" in flat and "[st]" in flat  # the id in brackets is shown, not read as markup
        assert "note" + "H200\\x1b]52;c;" in flat  # the file's notes, escaped too


def test_every_label_value_and_warning_in_the_results_table_is_escaped():
    from studytui.calc.registry import spec

    content = _rows_table([(f"label {HOSTILE}", f"value {HOSTILE}\nsecond line")], [f"warning {HOSTILE}"], 400,
                          [("gpu", HOSTILE, "x")], spec=spec("roofline"))
    text = content.plain
    assert not RAW.search(text.replace("\n", ""))
    assert f"label {SHOWN}" in text and f"value {SHOWN}" in text and f"warning {SHOWN}" in text
    assert f"gpu {SHOWN} = x" in text  # a "read as" row
    assert "second line" in text.splitlines()[-1]  # a line break in a value stays in its column
