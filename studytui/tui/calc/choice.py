"""A one-line choice box: shows the chosen value; Enter or a click lists the options; left and
right step through them. One widget, where Textual's Select builds five (a calculator form has
up to a dozen choices and opening the screen pays for every widget)."""

from __future__ import annotations

from typing import Sequence

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

Options = Sequence[tuple[str, str]]  # (label, value); value "" means "not set"


class ChoiceList(ModalScreen["str | None"]):
    """The options of one ChoiceField; dismisses with the chosen value, or None."""

    DEFAULT_CSS = """
    ChoiceList { align: center middle; }
    #choice-box { width: auto; min-width: 30; max-width: 80; height: auto; max-height: 80%;
                  border: round $accent; background: $surface; padding: 0 1; }
    #choice-box OptionList { height: auto; max-height: 30; border: none; }
    """
    BINDINGS = [Binding("escape", "close", "Back", id="calc-choice-cancel")]

    def __init__(self, title: str, options: Options, current: str) -> None:
        super().__init__()
        self.title_text = title
        self.options = list(options)
        self.current = current

    def compose(self) -> ComposeResult:
        from textual.containers import Vertical

        with Vertical(id="choice-box"):
            yield Static(Content(self.title_text), classes="dialog-title")
            yield OptionList(*[Option(label, id=str(i)) for i, (label, _v) in enumerate(self.options)])

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        values = [v for _label, v in self.options]
        options.highlighted = values.index(self.current) if self.current in values else 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.options[event.option_index][1])

    def action_close(self) -> None:
        self.dismiss(None)


class ChoiceField(Widget, can_focus=True):
    """A closed set of values for one form field."""

    DEFAULT_CSS = """
    ChoiceField { height: 1; width: 1fr; padding: 0; background: $boost; text-wrap: nowrap; text-overflow: ellipsis; }
    ChoiceField:focus { background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold; }
    ChoiceField.-blank { color: $text-muted; }
    """
    BINDINGS = [
        Binding("enter,space", "open", "Choose", show=False),
        Binding("left", "step(-1)", "Previous", show=False),
        Binding("right", "step(1)", "Next", show=False),
    ]

    class Changed(Message):
        def __init__(self, choice: ChoiceField, value: str) -> None:
            super().__init__()
            self.choice = choice
            self.value = value

        @property
        def control(self) -> ChoiceField:
            return self.choice

    def __init__(self, options: Options, value: str = "", *, title: str = "", blank: str | None = None,
                 id: str | None = None, tooltip: str | None = None) -> None:
        super().__init__(id=id)
        self.title = title
        self.blank = blank  # label for "not set", or None when a value is required
        self._options: list[tuple[str, str]] = self._with_blank(options)
        self._value = value if value in self.values() else (self._options[0][1] if self._options else "")
        if tooltip:
            self.tooltip = tooltip
        self.set_class(self._value == "", "-blank")

    def _with_blank(self, options: Options) -> list[tuple[str, str]]:
        listed = [(str(label), str(v)) for label, v in options if v != ""]
        return ([(self.blank, "")] if self.blank is not None else []) + listed

    def values(self) -> list[str]:
        return [v for _label, v in self._options]

    @property
    def options(self) -> list[tuple[str, str]]:
        """(label, value) pairs, the "not set" entry first when there is one."""
        return list(self._options)

    @property
    def value(self) -> str:
        return self._value

    @value.setter
    def value(self, value: str) -> None:
        if value not in self.values():
            raise ValueError(f"{value!r} is not one of {self.values()}")
        if value != self._value:
            self._value = value
            self.set_class(value == "", "-blank")
            self.refresh()
            self.post_message(self.Changed(self, value))

    def set_options(self, options: Options, value: str | None = None) -> None:
        """Replace the options; keep `value` (default: the current one) when it is still listed."""
        keep = self._value if value is None else value
        self._options = self._with_blank(options)
        values = self.values()
        self.value = keep if keep in values else (values[0] if values else "")
        self.refresh()

    def label(self) -> str:
        return next((label for label, v in self._options if v == self._value), self._value)

    def render(self) -> Content:
        # The marker first, so a narrow column cuts the value, never the sign that it is a choice.
        return Content.styled("▾ ", "dim") + Content(self.label())

    def action_step(self, step: int) -> None:
        values = self.values()
        if values:
            index = values.index(self._value) if self._value in values else 0
            self.value = values[(index + step) % len(values)]

    def action_open(self) -> None:
        def chosen(value: str | None) -> None:
            if value is not None:
                self.value = value
            self.focus()

        self.app.push_screen(ChoiceList(self.title, self._options, self._value), chosen)

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.focus()
        self.action_open()
