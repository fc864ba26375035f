"""The GPU picker: search the catalog, see vendor peaks with sources and measured figures, choose.

Dismisses with the chosen accelerator id, or None when the learner backs out.
"""

from __future__ import annotations

import os

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from studytui.calc.hardware import Accelerator, load_catalog
from studytui.tui.calc.gpu_info import figure_rows, matches, measured_for, provenance_lines
from studytui.tui.format import visible_controls
from studytui.tui.host import cursor_blink_of
from studytui.tui.widgets.inputs import OrderedInput


def gpu_details(acc: Accelerator, data_dir: str | os.PathLike[str] | None = None, narrow: bool = False) -> Table:
    """A table of the accelerator's figures, vendor beside measured, then where they come from.

    `narrow` (an 80-column terminal, about 45 cells for the table): the figure names wrap, the
    headings keep their width (they were cut to "vend… peak"), and a measured figure's share of
    the vendor peak is "(72.2%)", the heading saying of what."""
    measured = measured_for(acc, data_dir)
    # Names, sources and notes may come from the learner's hardware files: text, never markup,
    # with control characters escaped.
    title = Text(visible_controls(f"{acc.name} ({acc.id}) - {acc.vendor}"))
    table = Table(title=title, title_justify="left", expand=True, show_edge=False)
    rows = figure_rows(acc, measured, short=narrow)
    if narrow:
        longest_word = max((len(word) for figure, _v, _m in rows for word in figure.split()), default=6)
        table.add_column("figure", min_width=max(6, longest_word))
        table.add_column("vendor peak", min_width=len("vendor peak"))
        table.add_column("measured (% of vendor)" if measured else "measured", min_width=len("measured"))
    else:
        table.add_column("figure", no_wrap=True)
        table.add_column("vendor peak")
        table.add_column("measured")
    for figure, vendor, meas in rows:
        table.add_row(*(Text(visible_controls(cell)) for cell in (figure, vendor, meas)))
    notes = Table.grid(expand=True)
    notes.add_column(overflow="fold")  # a long source URL folds whole, never cut with …
    for line in provenance_lines(acc, measured):
        notes.add_row(Text(visible_controls(line), style="dim"))
    outer = Table.grid(expand=True)
    outer.add_column()
    outer.add_row(table)
    outer.add_row(notes)
    return outer


class GpuPickerScreen(ModalScreen["str | None"]):
    """Type to filter; arrows to browse; Enter chooses; Escape keeps the old GPU."""

    DEFAULT_CSS = """
    GpuPickerScreen { align: center middle; }
    #gpu-picker-box {
        width: 95%; max-width: 140; height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    #gpu-search { margin-bottom: 1; }
    #gpu-list { width: 38%; min-width: 24; height: 1fr; }
    #gpu-picker-box.-narrow #gpu-list { width: 24; }
    #gpu-detail-scroll { width: 1fr; height: 1fr; padding: 0 1; }
    #gpu-hint { color: $text-muted; height: 1; }
    """

    BINDINGS = [
        Binding("escape", "close", "Back", id="calc-gpu-cancel"),
        Binding("down", "move(1)", "Down", show=False, id="calc-gpu-down"),
        Binding("up", "move(-1)", "Up", show=False, id="calc-gpu-up"),
    ]

    def __init__(self, current: str | None = None, data_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.catalog = load_catalog(data_dir)
        self.current = current
        self.shown: list[Accelerator] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="gpu-picker-box"):
            yield Static("Choose a GPU", classes="dialog-title")
            search = OrderedInput(placeholder="Search by name, id, vendor or alias (e.g. h200, amd, tpu)", id="gpu-search")
            search.cursor_blink = cursor_blink_of(self.app)
            yield search
            with Horizontal():
                yield OptionList(id="gpu-list")
                with VerticalScroll(id="gpu-detail-scroll"):
                    yield Static(id="gpu-detail")
            yield Static("Enter: choose   Escape: back   Up/Down: browse", id="gpu-hint")

    # Below this many columns the table of figures gets its narrow form (see gpu_details).
    NARROW_BELOW = 100

    @property
    def narrow(self) -> bool:
        return self.app.size.width < self.NARROW_BELOW

    def on_mount(self) -> None:
        self.query_one("#gpu-picker-box").set_class(self.narrow, "-narrow")
        self._filter("")
        self.query_one("#gpu-search", Input).focus()

    def on_resize(self) -> None:
        box = self.query_one("#gpu-picker-box")
        if box.has_class("-narrow") != self.narrow:
            box.set_class(self.narrow, "-narrow")
            index = self.option_list.highlighted
            if index is not None and index < len(self.shown):
                self._show(self.shown[index])

    @property
    def option_list(self) -> OptionList:
        return self.query_one("#gpu-list", OptionList)

    def _filter(self, query: str) -> None:
        self.shown = [acc for acc in self.catalog if matches(acc, query)]
        options = self.option_list
        options.clear_options()
        options.add_options([Option(Text(visible_controls(f"{acc.name}  [{acc.id}]")), id=acc.id) for acc in self.shown])
        if not self.shown:
            self.query_one("#gpu-detail", Static).update(Text(visible_controls(f"No GPU matches {query!r}.")))
            return
        index = 0
        if self.current is not None and not query:
            try:
                current = self.catalog.get(self.current)
                index = next(i for i, acc in enumerate(self.shown) if acc.id == current.id)
            except (StopIteration, Exception):
                index = 0
        options.highlighted = index
        self._show(self.shown[index])

    def _show(self, acc: Accelerator) -> None:
        self.query_one("#gpu-detail", Static).update(gpu_details(acc, self.data_dir, narrow=self.narrow))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._filter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._choose(self.option_list.highlighted)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option_index < len(self.shown):
            self._show(self.shown[event.option_index])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._choose(event.option_index)

    def _choose(self, index: int | None) -> None:
        if index is None or not (0 <= index < len(self.shown)):
            self.notify("No GPU matches; change the search or press Escape.", severity="warning", timeout=3)
            return
        self.dismiss(self.shown[index].id)

    def action_move(self, step: int) -> None:
        options = self.option_list
        if not self.shown:
            return
        current = options.highlighted if options.highlighted is not None else 0
        options.highlighted = max(0, min(len(self.shown) - 1, current + step))

    def action_close(self) -> None:
        self.dismiss(None)
