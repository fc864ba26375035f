"""The calculators hub and one screen per calculator: form, live results, plot, explain panel.

Every number shown comes from `CalcSpec.run` (studytui.calc.forms), and everything particular to
a calculator (its title, headline rows, short labels, plot) from its spec (studytui.calc.registry
lists them); this module only lays them out. Results are recomputed synchronously on every change
of any field, so what is on screen always belongs to what is in the form; when the form is not
valid the field is marked, and the results and plot are blanked rather than left showing the last
good numbers.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Input, OptionList, Static
from textual.widgets.option_list import Option

from studytui.calc import registry
from studytui.calc.dtypes import DTYPES
from studytui.calc.form_values import initial_values
from studytui.calc.forms import CalcSpec, choices_for, plot_points
from studytui.calc.result import Result
from studytui.calc.units import FieldError
from studytui.core.errors import StudyError
from studytui.tui.calc import prefs
from studytui.tui.calc.choice import ChoiceField
from studytui.tui.calc.form import COMPUTE_DTYPE, CalcForm, GroupToggle, field_hint, one_line_reason
from studytui.tui.calc.gpu_info import available_dtypes
from studytui.tui.calc.note_table import calculation_markdown
from studytui.tui.calc.presets import EntryContext, Launch
from studytui.tui.format import visible_controls
from studytui.tui.host import cursor_blink_of, data_dir_of, host_of, store_of

if TYPE_CHECKING:
    from studytui.calc.hardware import Accelerator, Catalog
    from studytui.tui.calc.plot import Roof, RooflinePlot
    from studytui.tui.calc.sweep_plot import SweepPlot

DASH = "—"
# Roofs read from the catalog and measured profiles, per (data dir, gpu, dtype, profile, kind):
# reading a profile parses YAML, too slow to repeat on every keystroke or every screen opening.
_ROOF_CACHE: dict[tuple[str, str, str, str, str], "Roof | None"] = {}
# The key line doubles as the screen's buttons: every entry is clickable. (key, label, short
# label for narrow terminals, action)
KEY_ACTIONS = (
    ("esc", "back", "back", "back"),
    ("F1", "help", "help", "calc_help"),
    ("ctrl+s", "save to note", "note", "save_note"),
    ("ctrl+g", "GPU…", "GPU", "pick_gpu"),
    ("ctrl+b", "compare GPU…", "compare", "compare"),
    ("ctrl+l", "next panel", "panel", "next_tab"),
)
# F2, F3, ... switch straight to another calculator (shown in the strip under the title).
FIRST_SWITCH_KEY = 2
MAX_SWITCH_KEY = 12


def switch_keys() -> list[tuple[str, str]]:
    """(key, calculator name) for every calculator that gets a function key."""
    names = registry.names()[: MAX_SWITCH_KEY - FIRST_SWITCH_KEY + 1]
    return [(f"f{FIRST_SWITCH_KEY + i}", name) for i, name in enumerate(names)]


@functools.lru_cache(maxsize=8)
def _key_hint(plotted: bool, narrow: bool = False) -> Content:
    """The key line (Content is immutable: one per kind of screen, built once; parsing its markup
    costs each opening a couple of milliseconds with the strip below)."""
    parts = [
        Content.from_markup(f"[@click=screen.{action}][b]$key[/b] $label[/]", key=key, label=short if narrow else label)
        for key, label, short, action in KEY_ACTIONS
        if plotted or action != "compare"
    ]
    gap = "  " if narrow else "   "
    return Content(" ") + Content(gap).join(parts) + Content(gap + "tab next field")


def _switcher_line(current: str, narrow: bool = False) -> Content:
    """F2 roofline F3 gemm ...: every calculator, the current one highlighted, each clickable.
    Narrow terminals get "F: 2 roofline 3 gemm 4 transf ..." (a spec's short_name) so all of them
    fit in 80 columns (only then are the specs loaded)."""
    return _switcher_content(tuple(switch_keys()), current, narrow)


@functools.lru_cache(maxsize=32)
def _switcher_content(keys: tuple[tuple[str, str], ...], current: str, narrow: bool) -> Content:
    """The strip for these calculators, built once (keyed by the list, so a calculator registered
    later gets a strip of its own)."""
    parts = []
    for key, name in keys:
        label = f"{key[1:]} {registry.spec(name).short_name or name}" if narrow else f"{key.upper()} {name}"
        style = "bold reverse" if name == current else ""
        markup = f"[@click=screen.switch('{name}')][{style}]$label[/][/]" if style else f"[@click=screen.switch('{name}')]$label[/]"
        parts.append(Content.from_markup(markup, label=label))
    return Content(" F: " if narrow else " ") + Content(" ").join(parts)


def headline_first(rows: list[tuple[str, str]], spec: CalcSpec) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(headline rows, the other rows), each in the calculator's own order. The headline rows are
    those whose label starts with one of the spec's `headline` prefixes: shown above every other
    row, they stay on screen at 80x24 whatever the plot takes."""
    head = [r for r in rows if r[0].startswith(spec.headline)]
    rest = [r for r in rows if not r[0].startswith(spec.headline)]
    return head, rest


def fit(text: str, width: int) -> str:
    """`text` cut to `width` cells with an ellipsis (never wrapped)."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _widget_for_panel(panel: str) -> str:
    return "tab-plot" if panel == "plot" else "tab-text"


NARROW_BELOW = 100  # columns: the short forms of the key line and the calculator strip
WIDE_LABELS_FROM = 110  # columns: the form's labels in full (28 cells), else cut at 21


def label_width_for(columns: int) -> int:
    return 28 if columns >= WIDE_LABELS_FROM else 21


def expected_results_width(columns: int) -> int:
    """The width the results get on a screen `columns` wide, as the stylesheet lays it out
    (#calc-left: 42% of the width, at least 34 and at most 60 cells; #calc-right's padding of
    one cell each side; one for the results' scrollbar). Known before the first layout, so the
    first frame's rows are drawn at their real width and not drawn again once it is known
    (tests/tui/test_calc_first_frame.py compares it with the laid-out width)."""
    left = min(max(columns * 42 // 100, 34), 60)
    return max(1, columns - left - 2 - 1)


class CalculatorScreen(Screen[None]):
    """One calculator: edit the inputs on the left, read the results, plot and formulas on the right."""

    DEFAULT_CSS = """
    CalculatorScreen { layout: vertical; }
    #calc-title { height: 1; padding: 0 1; background: $panel; text-style: bold; text-wrap: nowrap; text-overflow: ellipsis; }
    #calc-switcher { height: 1; background: $panel; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    #calc-body { height: 1fr; }
    #calc-left { width: 42%; min-width: 34; max-width: 60; border-right: vkey $panel-lighten-2; padding: 0 0 0 1; }
    #calc-right { width: 1fr; padding: 0 1; }
    #calc-field-hint { height: auto; max-height: 6; padding: 0 1 0 0; color: $text-muted; border-top: solid $panel-lighten-2; }
    #calc-status { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    #calc-status.-invalid { color: $error; text-style: bold; }
    #calc-results-scroll { height: auto; max-height: 50%; scrollbar-size-vertical: 1; }
    #calc-results { text-wrap: nowrap; }
    #calc-results.-stale { color: $text-disabled; }
    #calc-tabline { height: 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    #calc-tabs { height: 1fr; }
    #calc-keys { height: 1; background: $panel; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    .calc-text-scroll { height: 1fr; scrollbar-size-vertical: 1; }
    """

    # No automatic focus: Textual's would focus the form (a scrollable container) and restyle it
    # and its every field, then again when on_mount moves focus to the first field.
    AUTO_FOCUS = ""

    BINDINGS = [
        Binding("escape", "close", "Back", id="calc-back"),
        Binding("ctrl+s", "save_note", "Save to note", id="calc-save-note"),
        Binding("ctrl+g", "pick_gpu", "GPU", id="calc-pick-gpu"),
        Binding("ctrl+b", "compare", "Compare GPU", id="calc-compare"),
        Binding("ctrl+l", "next_tab", "Plot/Explain", id="calc-next-tab"),
        # F1 everywhere; `?` only reaches here when focus is not in a text field (there it is text).
        Binding("f1,question_mark", "calc_help", "Help", id="calc-help"),
        *[Binding(key, f"switch('{name}')", name, show=False, id=f"calc-switch-{name}") for key, name in switch_keys()],
    ]

    def __init__(self, launch: Launch) -> None:
        super().__init__()
        self.spec: CalcSpec = registry.spec(launch.calc)  # KeyError for an unknown calculator
        self.launch = launch
        self.entry: EntryContext | None = launch.entry
        self.result: Result | None = None
        self.error: tuple[str | None, str] | None = None
        self.compare_gpu: str | None = None
        self._last_rows: list[tuple[str, str]] = []
        self._data_dir: Path | None = None
        self._catalog: Catalog | None = None
        self._initial: dict[str, str] = {}
        self.panel = "plot" if self.spec.plot else "explain"
        self._texts: dict[str, str] = {"explain": DASH, "about": self.spec.description}
        self._computed_for: dict[str, str] | None = None
        self._painted = False
        self._narrow: bool | None = None  # the key line and the strip drawn for a narrow terminal
        self._rows_width = 0  # the width the result rows were last drawn at

    # --- building -----------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path | None:
        return self._data_dir

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            from studytui.calc.hardware import load_catalog

            self._catalog = load_catalog(self._data_dir)
        return self._catalog

    def _gpu_names(self) -> list[str]:
        try:
            return self.catalog.names()
        except StudyError:
            return []  # a broken user GPU file: the calculator's own error will name it

    def compose(self) -> ComposeResult:
        self._data_dir = data_dir_of(self.app)
        store = store_of(self.app)
        gpu, dtype = prefs.recall(store) if store is not None else (None, None)
        values = initial_values(self.spec, self.launch.args, gpu, dtype)
        self._initial = dict(values)
        models = choices_for("model") if any(f.kind == "model" for f in self.spec.fields) else []
        columns = self.app.size.width
        self._narrow = narrow = columns < NARROW_BELOW
        yield Static(Text(visible_controls(self._title_text(values))), id="calc-title")
        yield Static(_switcher_line(self.spec.name, narrow=narrow), id="calc-switcher")
        with Horizontal(id="calc-body"):
            with Vertical(id="calc-left"):
                gpu_names = self._gpu_names() if any(f.kind == "gpu" for f in self.spec.fields) else []
                blink = cursor_blink_of(self.app)
                yield CalcForm(self.spec, values, models, gpu_names, cursor_blink=blink, label_width=label_width_for(columns),
                               id="calc-form")
                # The focused field's whole hint (its placeholder shows only what fits).
                yield Static("", id="calc-field-hint")
            with Vertical(id="calc-right"):
                yield Static("", id="calc-status")
                with VerticalScroll(id="calc-results-scroll"):
                    yield Static("", id="calc-results")
                yield Static("", id="calc-tabline")
                with ContentSwitcher(id="calc-tabs", initial=_widget_for_panel(self.panel)):
                    if self.spec.plot == "roofline":
                        from studytui.tui.calc.plot import RooflinePlot

                        yield RooflinePlot(id="tab-plot")
                    elif self.spec.plot == "sweep":
                        from studytui.tui.calc.sweep_plot import SweepPlot

                        yield SweepPlot(f"{self.spec.title}: no valid inputs", id="tab-plot")
                    with VerticalScroll(id="tab-text", classes="calc-text-scroll"):
                        yield Static("", id="calc-text", markup=False)
        yield Static(_key_hint(self.spec.plot == "roofline", narrow=narrow), id="calc-keys")

    @property
    def panels(self) -> list[tuple[str, str]]:
        """(id, title) of the panels under the results, in ctrl+l order."""
        plot = [("plot", "Plot")] if self.spec.plot else []
        return [*plot, ("explain", "Explain"), ("about", "About")]

    def on_mount(self) -> None:
        # Everything the first frame shows is decided here, before the first layout: the results
        # (computed once; the Changed events of the fields' initial values find nothing new), the
        # first field's hint, the focus. Each later change would lay the screen out again.
        self._draw_tabline()
        self._recompute(force=True)
        first = next(iter(self.form.rows.values()), None)
        if first is not None:
            self._show_field_hint(first.control)
            first.control.focus()

    @property
    def form(self) -> CalcForm:
        return self.query_one("#calc-form", CalcForm)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self._show_field_hint(event.widget)

    def _show_field_hint(self, widget: Any) -> None:
        """Under the form: the focused field's label and whole hint, wrapped (issue 23: at 80
        columns a field is ten cells wide and its placeholder shows only the essential part)."""
        hint = self.query_one("#calc-field-hint", Static)
        row = next((r for r in self.form.rows.values() if r.control is widget), None)
        if row is not None:
            text = field_hint(row.field)
            label = Content.styled(row.field.label, "bold")
            shown = label + Content(f": {text}") if text else label
        elif isinstance(widget, GroupToggle):
            shown = Content.styled(widget.title_text, "bold") + Content(": Enter or space opens or closes these fields")
        else:
            return  # anything else (the results, a scrollbar): the last field's hint stays
        if hint.content != shown:  # an update lays the screen out again: not for the same hint
            hint.update(shown)

    def _title_text(self, values: Mapping[str, str]) -> str:
        """The title line: the calculator, then what the inputs are now (the try-it's own words
        only while its inputs are unchanged), then the entry it was opened from."""
        title = f"{self.spec.title}"
        preset = {k: str(v) for k, v in self.launch.args.items()} if self.launch.args else {}
        unchanged = all(str(values.get(k, "")).strip() == self._initial.get(k, "").strip() for k in preset)
        if self.launch.label and unchanged:
            title += f" · {self.launch.label}"
        else:
            summary = [values[k] for k in self.spec.title_fields if values.get(k)]
            if values.get("gpu"):
                summary.append(f"on {values['gpu']}")
            if summary:
                title += " · " + " ".join(summary)
            if self.launch.label:
                title += " (edited try-it)"
        if self.entry is not None:
            title += f" · from: {self.entry.title}"
        return title

    def on_resize(self) -> None:
        # Only what the new width changes (the first resize, right after mounting, changes nothing:
        # compose and on_mount drew for this width).
        narrow = self.size.width < NARROW_BELOW
        if narrow != self._narrow:
            self._narrow = narrow
            self.query_one("#calc-switcher", Static).update(_switcher_line(self.spec.name, narrow=narrow))
            self.query_one("#calc-keys", Static).update(_key_hint(self.spec.plot == "roofline", narrow=narrow))
        self.form.set_label_width(label_width_for(self.size.width))
        if self.result is not None and self._results_width() != self._rows_width:
            self._draw_rows(self.result.rows, self.result.warnings)

    def _results_width(self) -> int:
        width = self.query_one("#calc-results-scroll").size.width - 1  # room for the scrollbar
        if width <= 1:  # not laid out yet
            width = expected_results_width(self.app.size.width)
        return width

    def _draw_rows(self, rows: list[tuple[str, str]], warnings: list[str] | None = None, read: bool = True) -> None:
        from studytui.tui.calc.readback import readings

        values = self._computed_for or {}
        shown = readings(self.spec, values) if read else []
        self._rows_width = width = self._results_width()
        self.query_one("#calc-results", Static).update(_rows_table(rows, warnings, width, shown, spec=self.spec))

    # --- live recompute -----------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        self.recompute(force=False)

    def on_choice_field_changed(self, event: ChoiceField.Changed) -> None:
        self.recompute(force=False)

    def _accelerator(self, text: str) -> Accelerator | None:
        if not text:
            return None
        try:
            return self.catalog.get(text)
        except StudyError:
            return None

    def _limit_dtypes(self) -> None:
        form = self.form
        if COMPUTE_DTYPE not in form.rows:
            return
        acc = self._accelerator(form.text_of("gpu"))
        # the field's own choices (the tile calculator's include the block-scaled kinds), else the plain types
        choices = next((f.choices for f in self.spec.fields if f.name == COMPUTE_DTYPE and f.choices), None)
        dtypes = available_dtypes(None if form.text_of("peak_flops") else acc, choices or DTYPES)
        form.limit_dtypes(dtypes)

    def recompute(self, force: bool = True) -> None:
        """Run the calculator on what the form holds now and show the outcome (never a stale one).

        force=False skips the work when the inputs are what was last computed (a Changed event
        for a value set while building the form, or a keystroke that changed nothing)."""
        if not self.is_mounted:
            return
        self._recompute(force)

    def _recompute(self, force: bool) -> None:
        """recompute() once the form is built (on_mount runs before the screen counts as mounted)."""
        self._limit_dtypes()
        values = self.form.values()
        if not force and values == self._computed_for:
            return
        self._computed_for = values
        try:
            result = self.spec.run(values, self._data_dir)
        except FieldError as exc:
            self._show_invalid(exc.field, exc.message)
            return
        except StudyError as exc:
            self._show_invalid(None, str(exc))
            return
        except Exception as exc:  # a calculator bug must not take the app down with it
            self._show_invalid(None, f"could not compute: {type(exc).__name__}: {exc}")
            return
        self._show_result(result, values)

    def _show_invalid(self, field: str | None, message: str) -> None:
        self.result = None
        self.error = (field, message)
        shown = self.form.show_error(field, message)
        label = field
        if field is not None and field in self.form.rows:
            label = self.form.rows[field].field.label
        where = f"{label}: " if label and shown else ""
        if field is not None and not shown:
            where = f"{field}: "
        status = self.query_one("#calc-status", Static)
        if field is not None and field in self.form.rows:
            message = one_line_reason(self.form.rows[field].field, message)
        status.update(Text(visible_controls(f"✗ {where}{message}  (results cleared until fixed)")))
        status.add_class("-invalid")
        results = self.query_one("#calc-results", Static)
        self._draw_rows([(label_, DASH) for label_, _ in self._last_rows] or [("results", DASH)], read=False)
        results.add_class("-stale")
        self.query_one("#calc-title", Static).update(Text(visible_controls(self._title_text(self.form.values()))))
        self._set_texts(DASH, self.spec.description)
        plot = self._plot()
        if plot is not None:
            plot.blank("no plot: fix the marked field")

    def _show_result(self, result: Result, values: Mapping[str, str]) -> None:
        self.result = result
        self.error = None
        self.form.show_error(None, None)
        self._last_rows = list(result.rows)
        status = self.query_one("#calc-status", Static)
        status.remove_class("-invalid")
        line = _status_line(result)
        if self.compare_gpu:
            line += f"  │  compared with {self.compare_gpu} (ctrl+b removes)"  # escaped below, with the rest
        status.update(Text(visible_controls(line)))
        results = self.query_one("#calc-results", Static)
        results.remove_class("-stale")
        self._draw_rows(result.rows, result.warnings)
        self.query_one("#calc-title", Static).update(Text(visible_controls(self._title_text(values))))
        about = [self.spec.description, "", "Assumptions:", *(f"- {a}" for a in result.assumptions)]
        self._set_texts("\n".join(result.explain) or "(no formulas for this result)", "\n".join(about))
        if self._painted:
            self._update_plot(result, values)
        else:
            # The first frame shows the numbers; the plot follows one frame later.
            self.call_after_refresh(self._first_plot)
        self._remember(values, result)

    def _first_plot(self) -> None:
        self._painted = True
        if self.result is not None and self._computed_for is not None:
            self._update_plot(self.result, self._computed_for)

    def _remember(self, values: Mapping[str, str], result: Result) -> None:
        """Remember the GPU and precision once the learner has chosen them (not a preset's)."""
        store = store_of(self.app)
        if store is None:
            return
        gpu = values.get("gpu") or ""
        dtype = values.get(COMPUTE_DTYPE) if COMPUTE_DTYPE in self.form.rows else None
        acc = self._accelerator(gpu) if gpu != self._initial.get("gpu", "") else None
        chosen_dtype = dtype if dtype and dtype != self._initial.get(COMPUTE_DTYPE) else None
        if acc is None and chosen_dtype is None:
            return
        try:
            prefs.remember(store, gpu=acc.id if acc is not None else None, dtype=chosen_dtype)
        except StudyError:
            pass  # a read-only store must not stop the calculator

    # --- plot ---------------------------------------------------------------------------------
    def _plot(self) -> RooflinePlot | SweepPlot | None:
        if self.spec.plot == "sweep":
            from studytui.tui.calc.sweep_plot import SweepPlot

            return self.query_one("#tab-plot", SweepPlot)
        if self.spec.plot != "roofline":
            return None
        from studytui.tui.calc.plot import RooflinePlot

        return self.query_one("#tab-plot", RooflinePlot)

    def _roof(self, gpu: str, dtype: str, profile: str, kind: str) -> Roof | None:
        """A GPU's roof from the calc package's own ceilings (cached: profiles are YAML files)."""
        key = (str(self._data_dir), gpu, dtype, profile, kind)
        if key not in _ROOF_CACHE:
            from studytui.calc.ceilings import resolve_ceilings
            from studytui.tui.calc.plot import Roof

            roof = None
            try:
                c = resolve_ceilings(gpu, dtype, profile=profile, data_dir=self._data_dir)
                if (
                    c.peak_flops
                    and c.mem_bw
                    and (profile == "vendor" or "measured" in c.provenance.get("mem_bw", "") + c.provenance.get("peak_flops", ""))
                ):
                    name = c.accelerator.id if c.accelerator else gpu
                    roof = Roof(f"{name} {dtype} {profile}", c.peak_flops, c.mem_bw, kind)
            except (StudyError, OSError, ValueError):
                roof = None
            _ROOF_CACHE[key] = roof
        return _ROOF_CACHE[key]

    def _update_plot(self, result: Result, values: Mapping[str, str]) -> None:
        plot = self._plot()
        if plot is None:
            return
        if self.spec.sweep is not None:
            from studytui.tui.calc.sweep_plot import SweepPlot

            if isinstance(plot, SweepPlot):
                plot.show(self.spec.sweep(result.values, values))
            return
        from studytui.tui.calc.plot import Roof, RooflinePlot, WorkPoint

        if not isinstance(plot, RooflinePlot):
            return
        v = result.values
        if not v.get("peak_flops") or not v.get("mem_bw"):
            plot.blank("no roofline for this result")
            return
        gpu = str(v.get("gpu") or values.get("gpu") or "")
        dtype = str(v.get("dtype") or values.get(COMPUTE_DTYPE) or "bf16")
        profile = values.get("profile", "vendor")
        overridden = bool(values.get("peak_flops") or values.get("mem_bw"))
        kind = "measured" if profile == "measured" else "vendor"
        label = f"{gpu or 'custom'} {dtype} " + ("override" if overridden else profile)
        roofs = [Roof(label, float(v["peak_flops"]), float(v["mem_bw"]), kind)]
        if gpu and not overridden:
            other = "vendor" if profile != "vendor" else "measured"
            extra = self._roof(gpu, dtype, other, other)
            if extra is not None:
                roofs.append(extra)
        if self.compare_gpu:
            compare = self._roof(self.compare_gpu, dtype, "vendor", "compare")
            if compare is not None:
                roofs.append(compare)
        points = [WorkPoint(*point) for point in plot_points(self.spec, result, values, self._data_dir)]
        plot.show(roofs, points)

    # --- actions ------------------------------------------------------------------------------
    def action_close(self) -> None:
        self.dismiss(None)

    def action_switch(self, name: str) -> None:
        """Another calculator in place of this one (Esc still goes back to where `c` was pressed);
        the entry it was opened from stays the one "save to note" writes to."""
        if name == self.spec.name or name not in registry.names():
            return
        self.app.switch_screen(CalculatorScreen(Launch(name, entry=self.entry)))

    def action_calc_help(self) -> None:
        from studytui.tui.calc.help import CalculatorHelpScreen

        self.app.push_screen(CalculatorHelpScreen(self.spec, [(key.upper(), name) for key, name in switch_keys()]))

    def action_pick_gpu(self) -> None:
        if "gpu" not in self.form.rows:
            self.notify("This calculator does not use a GPU.", timeout=3)
            return
        from studytui.tui.calc.gpu_picker import GpuPickerScreen

        def chosen(gpu_id: str | None) -> None:
            if gpu_id:
                self.form.set_text("gpu", gpu_id)
                self.form.rows["gpu"].control.focus()

        self.app.push_screen(GpuPickerScreen(self.form.text_of("gpu") or None, self._data_dir), chosen)

    def action_compare(self) -> None:
        if self.spec.plot != "roofline":
            plotted = [name for name in registry.names() if registry.spec(name).plot == "roofline"]
            which = ", ".join(plotted[:-1]) + " and " + plotted[-1] if len(plotted) > 1 else "".join(plotted)
            self.notify(f"Only the {which} screens have a roofline plot.", timeout=3)
            return
        if self.compare_gpu is not None:
            self.compare_gpu = None
            self.notify("Comparison GPU removed.", timeout=2)
            self.recompute()
            return
        from studytui.tui.calc.gpu_picker import GpuPickerScreen

        def chosen(gpu_id: str | None) -> None:
            if gpu_id:
                self.compare_gpu = gpu_id
                self.recompute()

        self.app.push_screen(GpuPickerScreen(None, self._data_dir), chosen)

    def action_next_tab(self) -> None:
        ids = [panel_id for panel_id, _title in self.panels]
        self.action_show_panel(ids[(ids.index(self.panel) + 1) % len(ids)] if self.panel in ids else ids[0])

    def action_show_panel(self, panel: str) -> None:
        if panel not in [p for p, _t in self.panels]:
            return
        self.panel = panel
        self.query_one("#calc-tabs", ContentSwitcher).current = _widget_for_panel(panel)
        if panel != "plot":
            self.query_one("#calc-text", Static).update(Text(self._texts[panel]))
        self._draw_tabline()

    def _set_texts(self, explain: str, about: str) -> None:
        """The explain panel's formulas and the about panel's text (one widget shows either): text,
        control characters escaped (formulas and assumptions quote names from the user's files)."""
        self._texts = {"explain": visible_controls(explain), "about": visible_controls(about)}
        if self.panel != "plot":
            self.query_one("#calc-text", Static).update(Text(self._texts[self.panel]))

    def _draw_tabline(self) -> None:
        parts = []
        for panel_id, title in self.panels:
            text = f"▸ {title} ◂" if panel_id == self.panel else f"  {title}  "
            style = "bold reverse" if panel_id == self.panel else "underline"
            parts.append(Content.from_markup(f"[@click=screen.show_panel('{panel_id}')][{style}]$text[/][/]", text=text))
        line = Content(" ").join(parts) + Content("   ctrl+l: next panel")
        self.query_one("#calc-tabline", Static).update(line)

    def action_save_note(self) -> None:
        if self.entry is None:
            self.notify("No entry to save to: open the calculators from an entry (select one, then c).", severity="warning", timeout=4)
            return
        if self.result is None:
            self.notify("Nothing to save: fix the marked field first.", severity="warning", timeout=4)
            return
        text = calculation_markdown(
            f"{self.spec.title} calculation",
            self.form.inputs_for_note(),
            self.result.rows,
            assumptions=self.result.assumptions,
            warnings=self.result.warnings,
            when=_dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        )
        try:
            append_to_note(self.app, self.entry.entry_id, text)
        except StudyError as exc:
            self.notify(visible_controls(f"Could not save to the note: {exc}"), severity="error", timeout=5, markup=False)
            return
        self.notify(visible_controls(f"Saved to the note of '{self.entry.title}'."), timeout=3, markup=False)


def append_to_note(app: Any, entry_id: str, text: str) -> None:
    """Append through the study session (the note being typed is saved first; every view of
    that note follows). Raises StudyError when the store refuses it or there is no study app."""
    host = host_of(app)
    if host is None:
        raise StudyError("no study session: notes are not available here")
    if not host.append_note(entry_id, text):
        raise StudyError("the store refused it (see the message above)")


def _status_line(result: Result) -> str:
    v = result.values
    parts = ["✓ up to date"]
    if v.get("gpu"):
        parts.append(str(v["gpu"]))
    if v.get("dtype"):
        parts.append(str(v["dtype"]))
    if v.get("bound"):
        parts.append(f"{v['bound']}-bound")
    if result.warnings:
        parts.append(f"{len(result.warnings)} warning{'s' if len(result.warnings) != 1 else ''}")
    return " │ ".join(parts)


def _wrap(text: str, width: int) -> list[str]:
    """Words of `text` in lines of at most `width` cells (a word longer than that is cut with …);
    a line break in `text` starts a new line (it never escapes the column), a tab is a space."""
    lines: list[str] = []
    for paragraph in text.replace("\t", " ").split("\n"):
        line = ""
        for word in paragraph.split(" "):
            if not line:
                line = word
            elif len(line) + 1 + len(word) <= width:
                line += " " + word
            else:
                lines.append(line)
                line = word
        lines.append(line)
    return [fit(x, width) for x in lines]


def short_label(label: str, spec: CalcSpec) -> str:
    """The label for a narrow terminal: the first of the spec's short_labels that matches it."""
    for pattern, replacement in spec.short_labels:
        if re.match(pattern, label):
            return re.sub(pattern, replacement, label)
    return label


def _rows_table(rows: list[tuple[str, str]], warnings: list[str] | None = None, width: int = 80,
               read: list[tuple[str, str, str]] | None = None, *, spec: CalcSpec) -> Content:
    """Label and value columns as plain Content (much cheaper to redraw than a Rich Table).

    The headline rows come first, in bold. Nothing wraps out of its column: a label too long is
    cut with an ellipsis, a long value continues on the next line under itself. Every label,
    value and warning is text (Content is never markup) with control and bidi characters shown
    escaped: a row may quote a GPU's name or a model from the learner's own files."""
    head, rest = headline_first(list(rows), spec)
    # How typed values were read ("128k" -> 128,000; a bare "2" in a time field -> 2 s), right
    # under the headline so a misread unit is seen with the result it changes.
    read_rows = [("read as", f"{label} {text} = {shown}") for label, text, shown in read or []]
    rest = read_rows + rest
    ordered = head + rest
    cap = max(12, (width * 2) // 5)
    if max((len(label) for label, _v in ordered), default=0) > cap:
        ordered = [(short_label(label, spec), value) for label, value in ordered]
    ordered = [(visible_controls(label), visible_controls(value)) for label, value in ordered]
    label_width = min(max((len(label) for label, _v in ordered), default=0), cap)
    value_width = max(8, width - label_width - 2)
    indent = " " * (label_width + 2)
    lines = []
    for warning in warnings or []:  # never cut: a warning is part of the result
        for j, part in enumerate(_wrap(visible_controls(warning), width - 2)):
            lines.append((Content.styled("⚠ ", "bold") if j == 0 else Content("  ")) + Content(part))
    for i, (label, value) in enumerate(ordered):
        bold = i < len(head)
        for j, part in enumerate(_wrap(value, value_width)):
            start = Content.styled(fit(label, label_width).ljust(label_width), "bold") + Content("  ") if j == 0 else Content(indent)
            lines.append(start + (Content.styled(part, "bold") if bold else Content(part)))
        if head and rest and i == len(head) - 1:
            lines.append(Content.styled("─" * min(width, label_width + 2 + 12), "dim"))
    return Content("\n").join(lines)


class CalculatorHubScreen(Screen[None]):
    """Every calculator, with what it computes; Enter opens one."""

    DEFAULT_CSS = """
    CalculatorHubScreen { layout: vertical; }
    #hub-title { height: auto; padding: 0 1; background: $panel; text-style: bold; }
    #hub-list { height: 1fr; border: none; }
    #hub-hint { height: auto; padding: 0 1; color: $text-muted; background: $panel; }
    """

    BINDINGS = [Binding("escape", "close", "Back", id="calc-hub-back")]

    def __init__(self, entry: EntryContext | None = None) -> None:
        super().__init__()
        self.entry = entry

    def compose(self) -> ComposeResult:
        yield Static("Calculators: the arithmetic of the reading, on a GPU you choose", id="hub-title")
        options = []
        for spec in registry.specs():
            body = Text()
            body.append(spec.title, style="bold")
            body.append(f"  ({spec.name})\n")
            body.append(spec.description, style="dim")
            options.append(Option(body, id=spec.name))
        yield OptionList(*options, id="hub-list")
        hint = "Enter: open   Escape: back   Figures are vendor peaks unless a measured profile is chosen."
        if self.entry is not None:
            hint += f"   Save to note writes to: {self.entry.title}"
        yield Static(Text(visible_controls(hint)), id="hub-hint")

    def on_mount(self) -> None:
        self.query_one("#hub-list", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        name = event.option.id
        if name in registry.names():
            self.app.push_screen(CalculatorScreen(Launch(name, entry=self.entry)))

    def action_close(self) -> None:
        self.dismiss(None)


def launch_for(app: Any, calc: str | None = None, hub: bool = False, args: Mapping[str, Any] | None = None, label: str = "") -> Screen[Any]:
    """The screen `c` (or the palette) opens: a named calculator, the entry's try-it, or the hub."""
    host = host_of(app)
    entry = host.current_entry() if host is not None else None
    context = EntryContext(entry.id, entry.title) if entry is not None else None
    if calc:
        if calc not in registry.names():
            app.notify(visible_controls(f"No calculator named {calc!r}."), severity="error", markup=False)
            return CalculatorHubScreen(context)
        return CalculatorScreen(Launch(calc, args or {}, label, context))
    try_it = getattr(entry, "try_it", None) if entry is not None else None
    if not hub and try_it is not None and try_it.calc in registry.names():
        return CalculatorScreen(Launch(try_it.calc, dict(try_it.args), try_it.label, context))
    return CalculatorHubScreen(context)
