"""F1 (or `?` outside a text field) in a calculator: its keys, the other calculators, and how
values are read (units), so nothing about the screen has to be guessed."""

from __future__ import annotations

import textwrap

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from studytui.calc.forms import CalcSpec
from studytui.tui.calc.form import field_hint

KEYS = (
    ("Tab, shift+Tab", "next / previous field"),
    ("Enter, space", "open a choice ▾ or a ▶ group of fields"),
    ("Esc", "back to where you opened the calculators"),
    ("F1", "this help; `?` too, outside a text field"),
    ("F2, F3, …", "another calculator (the list below)"),
    ("ctrl+s", "add inputs and results to the entry's note"),
    ("ctrl+g", "choose the GPU from the catalog"),
    ("ctrl+b", "compare a second GPU on the roofline plot"),
    ("ctrl+l", "next panel: plot, explain, about"),
    ("ctrl+p", "command palette: calculators, entries, screens"),
)
UNITS = (
    "Numbers take units, as on the command line:",
    "  80GB = 80 x 10^9 bytes, 80GiB = 80 x 2^30; 4.8TB/s; 989TFLOP/s; 5us; 2ms; 1e12.",
    "  A suffix alone is decimal: 128k = 128,000, 1M = 1,000,000 (not 1024-based).",
    "  A time without a unit is in seconds: 2 means 2 s.",
    "An empty field means the calculator's default (shown greyed in the field).",
)


class CalculatorHelpScreen(ModalScreen[None]):
    """The calculator's keys, its F-key switcher and the units rules."""

    BINDINGS = [Binding("escape,f1,question_mark,q", "close", "Close", id="calc-help-close")]

    def __init__(self, spec: CalcSpec, switches: list[tuple[str, str]]) -> None:
        super().__init__()
        self.spec = spec
        self.switches = switches

    def _table(self, wrap_width: int = 76) -> Content:
        width = max(len(k) for k, _ in KEYS) + 2
        lines = [Content.styled(f"{self.spec.title}: ", "bold") + Content(self.spec.description), Content("")]
        lines += [Content.styled(k.ljust(width), "bold") + Content(what) for k, what in KEYS]
        lines.append(Content(""))
        lines.append(Content.styled("Other calculators, one key away (or click one under the title):", "bold"))
        lines += [Content(f"  {key:<4} {name}") for key, name in self.switches]
        lines.append(Content(""))
        lines.append(Content.styled("Units", "bold"))
        lines += [Content(line) for line in UNITS]
        lines.append(Content(""))
        # Every field's whole hint: in the form a field shows only what fits (issue 23).
        lines.append(Content.styled("Fields (what each one means; empty: the default)", "bold"))
        for field in self.spec.fields:
            # Wrapped here, under the hint's own start, so a long hint stays readable as a block.
            hint = field_hint(field)
            label = field.label.replace(" ", "\xa0")  # the label never breaks
            text = f"  {label}: {hint}" if hint else f"  {label}"
            wrapped = textwrap.wrap(
                text, max(20, wrap_width), subsequent_indent="      ", break_on_hyphens=False, break_long_words=False
            ) or [text]
            first = wrapped[0]
            lines.append(Content("  ") + Content.styled(field.label, "bold") + Content(first[2 + len(label):]))
            lines += [Content(rest) for rest in wrapped[1:]]
        return Content("\n").join(lines)

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static("Calculator keys", classes="dialog-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(self._table(self._estimated_width()), id="help-table")
            yield Static("Esc or F1 closes", classes="dialog-hint")

    def _estimated_width(self) -> int:
        # #help-box (studytui.tcss): 90% of the terminal, at most 100, less its border, padding
        # and scrollbar. (Measured, the region was too narrow for a moment while the dialog opened.)
        return min(100, int(self.app.size.width * 0.9)) - 6

    _wrapped_at: int | None = None

    def on_resize(self) -> None:
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        width = self._estimated_width()
        if width != self._wrapped_at:
            self._wrapped_at = width
            self.query_one("#help-table", Static).update(self._table(width))

    def action_close(self) -> None:
        """Esc: the one close action every screen has."""
        self.dismiss(None)
