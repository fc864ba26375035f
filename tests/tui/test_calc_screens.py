"""Calculators in the study app: every screen, live results, inline errors, try-it links,
save-to-note, the remembered GPU and precision, the GPU picker and the roofline plot.

The numbers themselves are the calc package's (tested in tests/test_calc*); these tests check
that the screens show them, keep them current, and never show a stale number as current.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from textual.geometry import Region
from textual.widgets import Input

from studytui.calc.forms import CALCULATORS
from studytui.calc.registry import MODULES
from studytui.guide import load_guide
from studytui.guide.model import Guide, TryIt
from studytui.tui.calc import SCREEN_ID
from studytui.tui.calc.choice import ChoiceField, ChoiceList
from studytui.tui.calc.form import FieldRow, GroupToggle
from studytui.tui.calc.gpu_picker import GpuPickerScreen
from studytui.tui.calc.plot import RooflinePlot
from studytui.tui.calc.screens import CalculatorHubScreen, CalculatorScreen
from studytui.tui.registry import Registry, build_registry

from .support import wait_for_palette, wait_until

# A field per calculator where "0" is not a valid value (so every bad value below is rejected).
TYPED_FIELD = {
    "roofline": "flops",
    "gemm": "m",
    "transformer": "batch",
    "collective": "gpus",
    "specdec": "gamma",
    "kv": "context",
    "memory": "batch",
    "occupancy": "threads",
    "tile": "threads",
    "l2": "bytes",
}
BAD_VALUES = ("abc", "-1", "0", "nan")
# (name, title) of every calculator in the registry's order, each title read from its module's own
# SPEC (imported here, not through the registry's loader): what the palette and the hub must show.
CALCULATOR_TITLES = tuple((module.rpartition(".")[2], importlib.import_module(module).SPEC.title) for module in MODULES)


def flat(text: str) -> str:
    return " ".join(text.split())


def calc_registry() -> Registry:
    """The app's registry with the calculators in it (whether or not the app lists the module)."""
    registry = build_registry()
    if SCREEN_ID not in registry.screens:
        from studytui.tui.calc import register

        register(registry)
    return registry


def with_try_its(guide: Guide, links: dict[str, TryIt]) -> Guide:
    """The test guide with try-it links added to some entries."""
    sections = []
    for section in guide.sections:
        subs = []
        for sub in section.subsections:
            entries = tuple(e._replace(try_it=links.get(e.id, e.try_it)) for e in sub.entries)
            subs.append(sub._replace(entries=entries))
        sections.append(section._replace(subsections=tuple(subs)))
    return guide.replaced(sections=tuple(sections))


LINKS = {
    "roofline": TryIt("roofline", {"flops": "2e12", "bytes": "8GB"}, "Place a kernel on the roofline"),
    "stream-k": TryIt("gemm", {"m": "1792", "n": "1792", "k": "8192"}, "An awkward GEMM shape"),
}


@pytest.fixture
def calc_app(make_app, guide):
    def factory(**kw: Any):
        kw.setdefault("registry", calc_registry())
        kw.setdefault("guide", with_try_its(guide, LINKS))
        return make_app(**kw)

    return factory


async def open_calc(app, pilot, name: str) -> CalculatorScreen:
    await pilot.pause()
    app.open_screen(SCREEN_ID, calc=name)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, CalculatorScreen)
    assert screen.spec.name == name
    return screen


async def type_into(pilot, screen: CalculatorScreen, field: str, text: str) -> None:
    control = screen.form.rows[field].control
    assert isinstance(control, Input)
    control.focus()
    # Set as one edit (a paste): every-keystroke recompute has its own test, and a key per
    # character would render the screen once per character.
    control.value = text
    await pilot.pause()


def widget_text(widget: Any) -> str:
    """What a widget shows, as plain text."""
    region = Region(0, 0, widget.size.width, widget.size.height)
    return "\n".join(strip.text for strip in widget.render_lines(region))


def results_text(screen: CalculatorScreen) -> str:
    return widget_text(screen.query_one("#calc-results"))


def status_text(screen: CalculatorScreen) -> str:
    return widget_text(screen.query_one("#calc-status"))


# --- wiring -----------------------------------------------------------------------------------
def test_register_binds_c_and_lists_every_calculator_in_the_palette():
    registry = calc_registry()
    spec = registry.screens[SCREEN_ID]
    assert spec.key == "c"
    titles = [c.title for c in registry.commands]
    for _name, title in CALCULATOR_TITLES:
        assert f"Calculator: {title}" in titles
    assert "Calculators: all" in titles
    # The palette lists every calculator once, in the registry's order, titled as its module's SPEC is.
    listed = [c.title for c in registry.commands if c.title.startswith("Calculator: ")]
    assert listed == [f"Calculator: {title}" for _name, title in CALCULATOR_TITLES]


async def test_the_hub_lists_every_calculator_in_order_titled_as_its_module_is(calc_app):
    from textual.widgets import OptionList

    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.open_screen(SCREEN_ID, hub=True)
        await pilot.pause()
        assert isinstance(app.screen, CalculatorHubScreen)
        options = app.screen.query_one("#hub-list", OptionList)
        shown = [options.get_option_at_index(i) for i in range(options.option_count)]
        assert [(o.id, str(getattr(o.prompt, "plain", o.prompt)).splitlines()[0]) for o in shown] == [
            (name, f"{title}  ({name})") for name, title in CALCULATOR_TITLES
        ]


async def test_c_on_an_entry_without_try_it_opens_the_hub(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.jump_to("cuda-basics")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, CalculatorHubScreen)
        await pilot.press("down", "enter")  # the second calculator in the list
        await pilot.pause()
        assert isinstance(app.screen, CalculatorScreen)
        assert app.screen.spec.name == list(CALCULATORS)[1]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, CalculatorHubScreen)


async def test_c_on_a_try_it_entry_opens_that_calculator_prefilled(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.jump_to("stream-k")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CalculatorScreen) and screen.spec.name == "gemm"
        assert screen.form.text_of("m") == "1792" and screen.form.text_of("k") == "8192"
        assert screen.result is not None and screen.error is None
        assert "An awkward GEMM shape" in widget_text(screen.query_one("#calc-title"))
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main_screen


async def test_the_command_palette_opens_a_named_calculator(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Calculator: Speculative")
        assert await wait_for_palette(pilot, app, "Speculative")  # the palette searches in the background
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CalculatorScreen) and app.screen.spec.name == "specdec"


# --- every screen: results, live recompute, inline errors ---------------------------------------
async def test_every_screen_shows_results_and_marks_bad_values_inline(calc_app):
    # One app for all seven screens (an app per screen would triple this test's time).
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        for name, field in TYPED_FIELD.items():
            screen = await open_calc(app, pilot, name)
            assert screen.result is not None, f"{name}: {status_text(screen)}"
            assert "up to date" in status_text(screen), name
            first_value = flat(screen.result.rows[0][1])  # a long value wraps in its column
            assert first_value in flat(results_text(screen)), name
            good = screen.form.text_of(field)
            row: FieldRow = screen.form.rows[field]
            # Every bad value on the first screen; one on the others (that each value is refused
            # by every calculator is checked without a terminal, below: it is the form layer's rule).
            for bad in BAD_VALUES if name == next(iter(TYPED_FIELD)) else BAD_VALUES[:1]:
                await type_into(pilot, screen, field, bad)
                where = f"{name}.{field} = {bad!r}"
                assert screen.result is None, f"{where} was accepted"
                assert screen.error is not None and screen.error[0] == field, where
                assert row.label.has_class("-invalid"), where
                assert row.error is not None and row.error.display, where
                shown = " ".join(widget_text(row.error).split())  # the reason may wrap
                assert row.message and " ".join(row.message.split()) in shown, where
                assert "✗" in status_text(screen), where
                # Results are blanked, not left showing the last good numbers.
                assert first_value not in flat(results_text(screen)), where
                assert screen.query_one("#calc-results").has_class("-stale"), where
            await type_into(pilot, screen, field, good)
            assert screen.result is not None and screen.error is None, name
            assert not row.label.has_class("-invalid") and not row.error.display, name
            assert flat(screen.result.rows[0][1]) in flat(results_text(screen)), name
            await pilot.press("escape")
            await pilot.pause()


@pytest.mark.parametrize("name, field", TYPED_FIELD.items())
@pytest.mark.parametrize("bad", BAD_VALUES)
def test_every_calculator_refuses_each_bad_value_in_its_field(name, field, bad):
    from studytui.calc.form_values import initial_values
    from studytui.calc.units import FieldError

    spec = CALCULATORS[name]
    values = initial_values(spec)
    assert spec.run(values).rows  # the starting values are fine
    values[field] = bad
    with pytest.raises(FieldError) as refused:
        spec.run(values)
    assert refused.value.field == field and str(refused.value)


async def test_typing_recomputes_on_every_keystroke(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "gemm")
        await type_into(pilot, screen, "m", "8192")
        big = screen.result.values["flops"]
        await pilot.press("backspace")  # m = 819
        await pilot.pause()
        assert screen.result.values["flops"] < big
        assert screen.result.values["m"] == 819


async def test_an_error_in_a_collapsed_group_opens_the_group(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "transformer")
        assert "heads" not in screen.form.rows  # built only when its group opens
        screen.form.set_text("model", "")  # custom dims: the calculator asks for them
        await pilot.pause()
        assert screen.result is None
        field = screen.error[0]
        assert field in screen.form.rows
        await pilot.pause()
        assert screen.form.rows[field].label.has_class("-invalid")


async def test_a_group_of_fields_opens_on_enter_and_its_fields_count(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "transformer")
        params = screen.result.values["total_params"]
        toggle = screen.query_one("#group-dims", GroupToggle)
        toggle.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert toggle.expanded and "layers" in screen.form.rows
        await type_into(pilot, screen, "layers", "16")  # half of Llama 3.1 8B's 32 layers
        assert screen.result is not None and screen.result.values["total_params"] < params
        toggle.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert not toggle.expanded and not screen.query_one("#grid-dims").display
        assert screen.form.values()["layers"] == "16"  # closing a group keeps what was typed


# --- try-it links in the real content -----------------------------------------------------------
async def test_a_try_it_link_opens_its_calculator_with_its_inputs(make_app):
    # One link through the real key on the real guide. Every link's inputs are run through its
    # calculator by `studytui check` (tests/test_check.py), with the same starting values
    # (studytui.calc.form_values), so walking all of them here would only repeat that, slowly.
    guide = load_guide()
    linked = [e for e in guide.entries if e.try_it is not None]
    assert len(linked) >= 15
    entry = next(e for e in linked if len(e.try_it.args) >= 3)
    app = make_app(guide=guide, registry=calc_registry())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.jump_to(entry.id)
        await pilot.pause()
        await pilot.press("c")
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorScreen) and app.screen.result is not None)
        screen = app.screen
        assert screen.spec.name == entry.try_it.calc, entry.id
        assert screen.error is None, f"{entry.id}: {screen.error}"
        assert screen.result.rows and "up to date" in status_text(screen), entry.id
        for key, value in entry.try_it.args.items():
            shown = screen.form.text_of(key)
            assert shown == str(value), f"{entry.id}: {key} shows {shown!r}, link says {value!r}"


# --- save to note ---------------------------------------------------------------------------------
async def test_save_to_note_appends_a_markdown_table(calc_app, store):
    store.set_note("roofline", "My own words first.")
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.jump_to("roofline")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CalculatorScreen)
        await pilot.press("ctrl+s")
        await pilot.pause()
        note = store.get_note("roofline")
        assert note.startswith("My own words first.\n")
        assert "| input | value |" in note and "| result | value |" in note
        assert "| FLOPs | 2e12 |" in note and "| bytes moved | 8GB |" in note
        for label, value in screen.result.rows:
            assert f"| {label} | {value.replace('|', chr(92) + '|')} |" in note
        # The app's own copy of the note follows (the preview shows it after going back).
        assert app.note_text("roofline") == note
        assert app.draft.text == note
        # Invalid inputs: nothing is saved.
        await type_into(pilot, screen, "flops", "abc")
        screen.action_save_note()
        await pilot.pause()
        assert store.get_note("roofline") == note


async def test_save_to_note_needs_an_entry(calc_app, store):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.jump_to_section(app.guide.sections[0])
        await pilot.pause()
        app.open_screen(SCREEN_ID, calc="specdec")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert all(not p.note for p in store.states().values())


# --- GPU, precision and memory across restarts ------------------------------------------------------
async def test_gpu_and_precision_are_remembered_across_restarts(calc_app, store):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "roofline")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert isinstance(app.screen, GpuPickerScreen)
        await pilot.press(*"mi300x", "enter")
        await pilot.pause()
        assert app.screen is screen
        assert screen.form.text_of("gpu") == "mi300x"
        dtype = screen.form.rows["dtype"].control
        assert isinstance(dtype, ChoiceField)
        dtype.focus()
        await pilot.press("enter")  # the list of precisions
        await pilot.pause()
        assert isinstance(app.screen, ChoiceList)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        while dtype.value != "fp8":
            await pilot.press("right")
        await pilot.pause()
        await pilot.pause()
        assert screen.result is not None and screen.result.values["gpu"] == "mi300x"
    app2 = calc_app()
    async with app2.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app2, pilot, "gemm")
        assert screen.form.text_of("gpu") == "mi300x"
        assert screen.form.text_of("dtype") == "fp8"
        assert screen.result.values["gpu"] == "mi300x" and screen.result.values["dtype"] == "fp8"


async def test_precision_selector_offers_only_what_the_gpu_has(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "roofline")
        screen.form.set_text("gpu", "tpu-v5e")
        await pilot.pause()
        dtype = screen.form.rows["dtype"].control
        offered = [value for _label, value in dtype.options if value]
        assert offered == ["bf16", "int8"]
        assert screen.form.text_of("dtype") == "bf16"
        assert screen.result is not None


async def test_gpu_picker_searches_and_shows_sources_and_measured_figures(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await open_calc(app, pilot, "roofline")
        await pilot.press("ctrl+g")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, GpuPickerScreen)
        await pilot.press(*"amd")
        await pilot.pause()
        assert picker.shown and all(acc.vendor.lower() == "amd" for acc in picker.shown)
        await pilot.press("backspace", "backspace", "backspace", *"h200")
        await pilot.pause()
        detail = widget_text(picker.query_one("#gpu-detail"))
        assert "vendor peak" in detail and "989.4 TFLOP/s" in detail
        assert "source: https://" in detail
        assert "of vendor" in detail  # the measured H200 profile, beside the vendor figure
        await pilot.press(*"zzz")
        await pilot.pause()
        assert picker.shown == []
        await pilot.press("enter")  # nothing to choose: stays open
        await pilot.pause()
        assert app.screen is picker
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, CalculatorScreen)


# --- the roofline plot ----------------------------------------------------------------------------------
async def test_plot_shows_vendor_and_measured_roofs_points_and_comparison(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "roofline")
        await pilot.pause()
        plot = screen.query_one(RooflinePlot)
        kinds = [roof.kind for roof in plot.roofs]
        assert kinds[0] == "vendor" and "measured" in kinds  # the H200 has a measured profile
        assert plot.roofs[0].peak_flops == screen.result.values["peak_flops"]
        assert [p.intensity for p in plot.points] == [screen.result.values["intensity"]]
        widget_before = plot
        await pilot.press("ctrl+b")
        await pilot.pause()
        await pilot.press(*"mi300x", "enter")
        await pilot.pause()
        assert [roof.kind for roof in plot.roofs][-1] == "compare"
        assert screen.query_one(RooflinePlot) is widget_before  # redrawn in place, not remounted
        await type_into(pilot, screen, "bytes", "abc")
        assert plot.roofs == () and plot.points == ()
        assert "fix the marked field" in plot.message


async def test_transformer_plot_has_prefill_and_decode_points(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "transformer")
        await pilot.pause()
        plot = screen.query_one(RooflinePlot)
        labels = [p.label for p in plot.points]
        assert labels == ["prefill", "decode (shown)"]
        prefill, decode = plot.points
        assert prefill.intensity > decode.intensity  # prefill reuses each weight across the prompt
        assert decode.intensity == screen.result.values["intensity"]


async def test_explain_panel_shows_the_calculators_formulas(calc_app):
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "gemm")
        await pilot.press("ctrl+l")  # plot -> explain
        await pilot.pause()
        assert screen.panel == "explain"
        explain = widget_text(screen.query_one("#calc-text"))
        for line in screen.result.explain:
            assert line[:40] in explain
        await pilot.press("ctrl+l")  # explain -> about: the assumptions
        await pilot.pause()
        about = widget_text(screen.query_one("#calc-text"))
        assert screen.result.assumptions[0][:40] in about


# --- 80 columns (issue 23): hints, inline errors and the picker readable at 80x24 ---------------
def shown_on_screen(app) -> str:
    from .support import screen_text

    return screen_text(app)


async def test_at_80x24_no_hint_is_cut_and_the_focused_fields_whole_hint_is_shown(calc_app):
    from studytui.tui.calc.form import field_hint

    app = calc_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for name in CALCULATORS:
            screen = await open_calc(app, pilot, name)
            await pilot.pause()
            for field_name, row in screen.form.rows.items():
                control = row.control
                if isinstance(control, Input) and control.is_mounted and not control.value:
                    # Was "instead o…", "a time yo…", "per GPU p…": now the hint or its essential part.
                    assert "…" not in control.placeholder, f"{name}.{field_name}: {control.placeholder!r}"
                    assert len(control.placeholder) <= control.content_size.width, f"{name}.{field_name}"
        screen = await open_calc(app, pilot, "roofline")
        lines = shown_on_screen(app).splitlines()
        row = next(line for line in lines if line.lstrip().startswith("intensity (FLOP/B)"))
        assert "optional" in row and "instead o" not in row
        row = next(line for line in lines if line.lstrip().startswith("measured time"))
        assert "optional" in row and "a time yo" not in row
        for field in ("intensity", "time", "flops"):
            screen.form.rows[field].control.focus()
            spec_field = next(f for f in screen.spec.fields if f.name == field)
            whole = f"{spec_field.label}: {field_hint(spec_field)}"
            # Whole, wrapped on the line(s) under the form, in the left pane.
            def left_pane() -> str:
                hint = screen.query_one("#calc-field-hint").region
                lines = shown_on_screen(app).splitlines()[hint.y: hint.bottom]
                return flat(" ".join(line[hint.x: hint.right] for line in lines))

            assert await wait_until(pilot, lambda: whole in left_pane()), (whole, left_pane())
        await pilot.press("f1")  # every field's whole hint in the help too
        assert await wait_until(pilot, lambda: app.screen.query("#help-table"))
        table = app.screen.query_one("#help-table")
        help_text = flat("\n".join(strip.text for strip in table.render_lines(Region(0, 0, *table.region.size))))
        assert "intensity (FLOP/B): instead of one of flops/bytes" in help_text
        assert "measured time: a time you measured; adds achieved rates and the physics-floor check" in help_text


async def test_at_80x24_a_field_error_is_on_full_width_lines_under_the_field(calc_app):
    app = calc_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_calc(app, pilot, "roofline")
        await type_into(pilot, screen, "flops", "abc")
        await pilot.pause()
        row = screen.form.rows["flops"]
        error = row.error
        assert error is not None and error.display
        grid = row.control.parent
        # Under the label and the control (it was an 8-cell column under the control alone).
        assert error.region.x == row.label.region.x and error.region.width == grid.content_region.width
        assert error.region.y == row.control.region.bottom
        lines = [line.rstrip() for line in widget_text(error).splitlines()]
        assert len(lines) <= 3 and all(len(line) > 20 for line in lines[:-1]), lines
        assert flat(row.message) in flat(" ".join(lines))
        following = screen.form.rows["bytes"].label
        assert following.region.y == error.region.bottom  # no empty rows between
        await type_into(pilot, screen, "flops", "2e12")  # fixed: the reason goes, the rows close up
        await pilot.pause()
        assert not error.display and following.region.y == row.control.region.bottom


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_gpu_picker_headings_are_whole(calc_app, size):
    app = calc_app()
    async with app.run_test(size=size) as pilot:
        await open_calc(app, pilot, "roofline")
        await pilot.press("ctrl+g")
        assert await wait_until(pilot, lambda: isinstance(app.screen, GpuPickerScreen))
        await pilot.press(*"h100 sxm")
        assert await wait_until(pilot, lambda: "h100-sxm" in shown_on_screen(app))
        text = shown_on_screen(app)
        assert "vendor peak" in text and "measured" in text  # was "vend… peak" at 80 columns
        assert "vend…" not in text and "meas…" not in text
        detail = widget_text(app.screen.query_one("#gpu-detail"))
        assert "peak bf16" in flat(detail) and "…" not in detail


async def test_tile_input_precision_lists_the_block_scaled_kinds(calc_app):
    # F10's input precision offers nvfp4, mxfp8, mxfp6, mxfp4 where the GPU has their element
    # type's peak (B200), and picking one gives a tcgen05 mx-kind tile; the H200 has no fp4 peak, so the
    # fp4 kinds leave its list (mxfp8 stays, with fp8, and the tile calculator refuses it on 9.0).
    app = calc_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_calc(app, pilot, "tile")
        screen.form.set_text("gpu", "b200")
        screen.form.set_text("tile", "128x128x128")
        await pilot.pause()
        dtype = screen.form.rows["dtype"].control
        assert isinstance(dtype, ChoiceField)
        offered = [value for _label, value in dtype.options if value]
        assert {"nvfp4", "mxfp8", "mxfp6", "mxfp4"} <= set(offered), offered
        dtype.focus()
        await pilot.press("enter")  # the list the learner picks from
        await pilot.pause()
        assert isinstance(app.screen, ChoiceList)
        assert "nvfp4" in [value for _label, value in app.screen.options]
        await pilot.press("escape")
        await pilot.pause()
        while dtype.value != "nvfp4":
            await pilot.press("right")
        await pilot.pause()
        await pilot.pause()
        assert screen.result is not None and screen.result.values["mma_kind"] == "mxf4nvf4"
        screen.form.set_text("gpu", "h200")
        await pilot.pause()
        assert "mxfp4" not in [value for _label, value in dtype.options]
        assert ("nvfp4 (not on this GPU)", "nvfp4") in dtype.options  # kept, marked, never swapped silently
