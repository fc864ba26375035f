"""A calculator's form, built from its FieldSpecs: one labelled control per field, inline errors.

Controls by field kind: a ChoiceField for closed choices (choice, dtype, model, bool), an Input for
numbers with units and free text, an Input plus a picker button for the GPU. Rarely changed
fields sit in collapsed groups so a form fits a 24-line terminal. The form holds no numbers of its
own: `values()` returns the raw strings for CalcSpec.run, exactly as typed.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping, Sequence

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from studytui.calc.dtypes import DTYPES
from studytui.calc.form_values import GROUPS, group_of
from studytui.calc.forms import CalcSpec, FieldSpec
from studytui.tui.calc.choice import ChoiceField
from studytui.tui.format import visible_controls
from studytui.tui.widgets.inputs import FieldInput

BLANK_PROMPTS = {"model": "custom dims", "dtype": "same as precision", "bool": "(preset)", "choice": "(default)"}
COMPUTE_DTYPE = "dtype"  # the field whose precision picks the GPU's peak
LEADING = ("gpu", COMPUTE_DTYPE)


def _select_options(field: FieldSpec, models: Iterable[str]) -> list[tuple[str, str]]:
    if field.kind == "bool":
        return [("yes", "true"), ("no", "false")]
    if field.kind == "model":
        return [(m, m) for m in models]
    if field.kind == "dtype":
        return [(d, d) for d in field.choices or DTYPES]  # storage fields also offer the block-scaled formats
    return [(c, c) for c in field.choices or ()]


def uses_select(field: FieldSpec) -> bool:
    if field.free:
        return False
    return field.kind in ("bool", "model", "dtype") or (field.kind == "choice" and bool(field.choices))


class GroupToggle(Static, can_focus=True):
    """The title line of a group of rarely changed fields; Enter, space or a click opens it."""

    BINDINGS = [Binding("enter,space", "toggle", "Open/close", show=False)]

    class Toggled(Message):
        def __init__(self, group_id: str, expanded: bool) -> None:
            super().__init__()
            self.group_id = group_id
            self.expanded = expanded

    def __init__(self, group_id: str, title: str, expanded: bool = False) -> None:
        super().__init__(id=f"group-{group_id}", markup=False)
        self.group_id = group_id
        self.title_text = title
        self._expanded = expanded
        self.update(self._label())

    def _label(self) -> str:
        return f"{'▼' if self._expanded else '▶'} {self.title_text}"

    @property
    def expanded(self) -> bool:
        return self._expanded

    @expanded.setter
    def expanded(self, value: bool) -> None:
        if value != self._expanded:
            self._expanded = value
            self.update(self._label())

    def action_toggle(self) -> None:  # type: ignore[override]  # a key action of its own, not DOMNode.toggle
        self.post_message(self.Toggled(self.group_id, not self._expanded))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.focus()
        self.action_toggle()


def one_line_reason(field: FieldSpec, message: str) -> str:
    """The reason as one line under the field: a GPU's list of every known id goes to the
    picker (ctrl+g), only the closest suggestions stay."""
    first = message.splitlines()[0] if message else ""
    if field.kind == "gpu" and " known:" in first:
        first = first.split(" known:")[0].rstrip(" ;,") + "; ctrl+g lists all"
    return first


class FieldErrorLine(Static):
    """The reason a field's value is bad, on full-width lines under the field (label and control
    columns both: `column-span: 2`). Textual's grid sizes an auto row from each column's width on
    its own, so a spanning cell was measured at the label's 21 cells and left empty rows; the
    height here is measured at the grid's whole width."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return super().get_content_height(container, viewport, max(width, container.width - self.styles.gutter.width))


def field_hint(field: FieldSpec) -> str:
    """Everything the form knows about a field, for the hint line under the form, the tooltip
    and F1: its help, its default and (for the GPU) the picker's key."""
    parts = [field.help] if field.help else []
    if field.default is not None and f"default {field.default}" not in field.help:
        parts.append(f"default {field.default}")
    if field.kind == "gpu":
        parts.append("ctrl+g chooses from the catalog")
    return "; ".join(parts)


_EXAMPLE = re.compile(r"\be\.g\. ([^\s,;)]+)")


def short_placeholder(full: str, field: FieldSpec, width: int) -> str:
    """The placeholder in `width` cells: the whole text when it fits, else the part that matters
    most (the default, an example, or "optional": an empty field means the calculator's own
    default), never a help text cut after a few letters. The whole hint is on the line under
    the form while the field has focus, in its tooltip and in F1."""
    if len(full) <= width:
        return full
    candidates = []
    if field.default is not None:
        candidates.append(f"default {field.default}")
    example = _EXAMPLE.search(field.help or "")
    if example:
        candidates.append(f"e.g. {example.group(1)}")
    if field.default is None:
        candidates.append("optional")
    for text in candidates:
        if len(text) <= width:
            return text
    best = candidates[0] if candidates else full
    return best[: max(0, width - 1)] + "…" if width > 0 else ""


class FieldRow:
    """One field's label, control and (when the value is bad) the reason under it.

    Not a widget: the label and the control sit directly in the form's grid, which saves a
    container per field (opening a screen costs time per widget)."""

    def __init__(self, field: FieldSpec, value: str, models: list[str], gpu_names: list[str], cursor_blink: bool = True) -> None:
        self.field = field
        self._models = models
        self._gpu_names = gpu_names
        self.label = Label(field.label, classes="field-label")
        self.placeholder = ""
        self.control = self._control(value, cursor_blink)
        self.error: Static | None = None
        self.message: str | None = None

    def widgets(self) -> list[Widget]:
        return [self.label, self.control]

    @property
    def is_mounted(self) -> bool:
        return self.control.is_mounted

    def _control(self, value: str, cursor_blink: bool) -> Input | ChoiceField:
        field = self.field
        tooltip = field_hint(field) or None
        if uses_select(field):
            options = _select_options(field, self._models)
            if value and value not in [v for _label, v in options]:
                options.append((value, value))  # a preset outside the list still shows as given
            blank = BLANK_PROMPTS.get(field.kind, "(default)") if field.default is None else None
            return ChoiceField(options, value, title=field.label, blank=blank, id=f"f-{field.name}", tooltip=tooltip)
        placeholder = f"default {field.default}" if field.default is not None else (field.help or field.label)
        self.placeholder = placeholder  # in full; cut to the field's width with … (CalcForm.on_resize)
        # The classes Input's constructor would give the field (-valid: a value and no validators;
        # compact), given here: each class it adds restyles the field, not even mounted yet
        # (mounting styles it anyway), for every field every time a calculator opens.
        classes = "-textual-compact -valid" if value else "-textual-compact"
        control = FieldInput(value, placeholder=placeholder, id=f"f-{field.name}", classes=classes, compact=True,
                             tooltip=tooltip, select_on_focus=False, suggester=self._suggester())
        control.cursor_blink = cursor_blink
        return control

    def _suggester(self) -> SuggestFromList | None:
        """Completion for free-text fields with known values: GPU ids and aliases, tiles, profiles."""
        field = self.field
        if field.kind == "gpu":
            # An id or alias from a hardware file with a control character in it is never offered
            # (the suggestion is drawn in the field as typed).
            names = [name for name in self._gpu_names if visible_controls(name) == name]
            return SuggestFromList(names, case_sensitive=False) if names else None
        if field.choices:
            return SuggestFromList(field.choices, case_sensitive=False)
        return None

    def text(self) -> str:
        return self.control.value

    def set_text(self, text: str) -> None:
        control = self.control
        if isinstance(control, ChoiceField):
            if text == "" and control.blank is None:
                return  # a required choice cannot be emptied
            if text not in control.values():
                control.set_options([o for o in control.options if o[1]] + [(text, text)], value=text)
                return
        control.value = text

    def show_error(self, message: str | None) -> None:
        """Show (or clear) the reason under the field. The error line is mounted on first use."""
        if message == self.message:
            return
        self.message = message
        self.label.set_class(bool(message), "-invalid")
        if message:
            if self.error is None:
                # Under the label and the control, the whole width of the form.
                self.error = FieldErrorLine("", classes="field-error", markup=False)
                parent = self.control.parent
                if isinstance(parent, Widget):
                    parent.mount(self.error, after=self.control)
            # A GPU's list of every known id goes to the picker (ctrl+g); the rest wraps.
            # The reason may quote what was typed or a name from the user's files: escaped.
            self.error.update(visible_controls(f"✗ {one_line_reason(self.field, message)}"))
            self.error.tooltip = visible_controls(message)  # the whole reason, on hover
            self.error.display = True
        elif self.error is not None:
            self.error.display = False


class CalcForm(VerticalScroll):
    """Every field of one calculator. Rows in collapsed groups are built when the group opens."""

    DEFAULT_CSS = """
    CalcForm { height: 1fr; padding: 0 1 0 0; scrollbar-size-vertical: 1; }
    CalcForm .field-grid { layout: grid; grid-size: 2; grid-columns: 21 1fr; grid-rows: auto; height: auto; }
    CalcForm .field-label { padding: 0 1 0 0; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    CalcForm .field-label.-invalid { color: $error; text-style: bold; }
    CalcForm .field-error { color: $error; column-span: 2; }
    CalcForm GroupToggle { height: 1; color: $text-muted; text-style: bold; text-wrap: nowrap; text-overflow: ellipsis; }
    CalcForm GroupToggle:focus { background: $block-cursor-background; color: $block-cursor-foreground; }
    CalcForm .group-grid { padding-left: 1; }
    """

    def __init__(self, spec: CalcSpec, values: Mapping[str, str], models: list[str], gpu_names: Sequence[str] = (),
                 *, cursor_blink: bool = True, label_width: int = 21, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cursor_blink = cursor_blink
        # The label column's width, chosen by the screen from the terminal's before the first frame
        # (the grids are built with it: changing it later lays the whole form out again).
        self.label_width = label_width
        self.spec = spec
        self.initial = dict(values)
        self.models = models
        self.gpu_names = list(gpu_names)
        self.rows: dict[str, FieldRow] = {}
        self.pending: dict[str, list[FieldSpec]] = {}  # group id -> fields not built yet
        self.group_of_field: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        grouped: dict[str, list[FieldSpec]] = {}
        # The GPU and its precision first on every screen: they are what the learner varies most.
        first = [f for f in self.spec.fields if f.name in LEADING]
        ordered = first + [f for f in self.spec.fields if f.name not in LEADING]
        main: list[Widget] = []
        for field in ordered:
            group = group_of(field)
            if group is None:
                main += self._row(field).widgets()
            else:
                grouped.setdefault(group, []).append(field)
                self.group_of_field[field.name] = group
        yield self._columns(Grid(*main, classes="field-grid"))
        for group_id, title in GROUPS:
            fields = grouped.get(group_id)
            if not fields:
                continue
            # Open a group from the start when a preset sets one of its fields.
            collapsed = not any(self.initial.get(f.name, f.default or "") != (f.default or "") for f in fields)
            yield GroupToggle(group_id, title, expanded=not collapsed)
            if collapsed:
                self.pending[group_id] = fields
            else:
                yield self._group_grid(group_id, [self._row(field) for field in fields])

    def _row(self, field: FieldSpec) -> FieldRow:
        row = FieldRow(field, self.initial.get(field.name, field.default or ""), self.models, self.gpu_names, self.cursor_blink)
        self.rows[field.name] = row
        return row

    def _group_grid(self, group_id: str, rows: list[FieldRow]) -> Grid:
        return self._columns(Grid(*[w for row in rows for w in row.widgets()], classes="field-grid group-grid", id=f"grid-{group_id}"))

    def _columns(self, grid: Grid) -> Grid:
        grid.styles.grid_columns = f"{self.label_width} 1fr"
        return grid

    def expand_group(self, group_id: str, expanded: bool = True) -> None:
        """Open (building its rows the first time) or close one group of fields."""
        toggle = self.query_one(f"#group-{group_id}", GroupToggle)
        toggle.expanded = expanded
        if group_id in self.pending:
            if expanded:
                rows = [self._row(field) for field in self.pending.pop(group_id)]
                self.mount(self._group_grid(group_id, rows), after=toggle)
                self.call_after_refresh(self.fit_placeholders)
        else:
            self.query_one(f"#grid-{group_id}", Grid).display = expanded

    def set_label_width(self, width: int) -> None:
        """Wider labels where there is room (full labels at 120 columns, cut with … at 80)."""
        if width == self.label_width:
            return
        self.label_width = width
        for grid in self.query(Grid):
            grid.styles.grid_columns = f"{width} 1fr"
        self.call_after_refresh(self.fit_placeholders)

    def on_resize(self) -> None:
        # Now, not after the next refresh: a resize is handled once the layout that caused it has
        # given every field its width, and a frame drawn in between would show cut hints.
        self.fit_placeholders()

    def fit_placeholders(self) -> None:
        """Placeholders that fit their field: the whole hint, or its essential part (the full
        hint is on the form's hint line while the field has focus)."""
        for row in self.rows.values():
            control = row.control
            if isinstance(control, Input) and row.placeholder and control.is_mounted:
                width = control.content_size.width
                if width > 0:
                    control.placeholder = short_placeholder(row.placeholder, row.field, width)

    def on_group_toggle_toggled(self, event: GroupToggle.Toggled) -> None:
        event.stop()
        self.expand_group(event.group_id, event.expanded)

    def values(self) -> dict[str, str]:
        """Raw text of every field that is not empty (empty means: the calculator's default)."""
        out = {}
        for field in self.spec.fields:
            text = self.text_of(field.name)
            if text:
                out[field.name] = text
        return out

    def text_of(self, name: str) -> str:
        row = self.rows.get(name)
        if row is not None and row.control.is_mounted:
            return row.text().strip()
        return str(self.initial.get(name, "") or "").strip()

    def set_text(self, name: str, text: str) -> None:
        row = self.rows.get(name)
        if row is not None and row.control.is_mounted:
            row.set_text(text)
        else:
            self.initial[name] = text

    def show_error(self, name: str | None, message: str | None) -> bool:
        """Mark `name` invalid (clearing every other mark); False when the form has no such field."""
        if name is not None and name not in self.rows and name not in self.group_of_field:
            name = None
        if name is not None and name in self.group_of_field:
            self.expand_group(self.group_of_field[name])  # never hide the field that is wrong
        found = False
        for field_name, row in self.rows.items():
            bad = field_name == name
            found = found or bad
            if row.is_mounted:
                row.show_error(message if bad else None)
            elif bad:
                self.call_after_refresh(row.show_error, message)
        return found

    def limit_dtypes(self, dtypes: list[str]) -> None:
        """Offer only the precisions the chosen GPU has a peak for.

        A precision the GPU lacks is never swapped silently for another: it stays, marked, and
        the calculator's own error says which precisions the GPU has."""
        row = self.rows.get(COMPUTE_DTYPE)
        if row is None:
            return
        control = row.control
        if not isinstance(control, ChoiceField):
            return
        current = row.text()
        options = [(d, d) for d in dtypes]
        if current and current not in dtypes:
            options.append((f"{current} (not on this GPU)", current))
        if [o for o in control.options if o[1]] == options:
            return
        control.set_options(options, value=current)

    def inputs_for_note(self) -> list[tuple[str, str]]:
        """(label, value) for every field that has a value, for the note's table."""
        out = []
        for field in self.spec.fields:
            text = self.text_of(field.name)
            if text:
                out.append((field.label, text))
        return out
