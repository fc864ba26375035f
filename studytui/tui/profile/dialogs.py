"""The profile screen's dialogs: which file to open (the palette's "Open profile…", `P`), and
which range to show (`f`)."""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from studytui.core.text import one_line
from studytui.tui.host import cursor_blink_of, host_of, store_of
from studytui.tui.profile import LAST_FILE_KEY, SCREEN_ID, absolute
from studytui.tui.widgets.inputs import OrderedInput

PROFILE_SUFFIXES = (".csv", ".csv.gz", ".json", ".json.gz")
DIALOG_CSS = """
    {name} {{ align: center middle; }}
    {name} > Vertical {{
        width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }}
    {name} OptionList {{ height: auto; max-height: 16; border: none; padding: 0; }}
    {name} .dialog-hint {{ color: $text-muted; }}
    {name} .dialog-hint-wrap {{ color: $text-muted; height: auto; }}
    {name} .dialog-error {{ color: $error; height: auto; }}
"""


def shipped_examples(content_dir: str | os.PathLike[str] | None) -> list[Path]:
    """The profiles that ship with the content (content/profiles/<gpu>/): real records to open."""
    from studytui.core.paths import content_dir as bundled

    roots = [Path(content_dir)] if content_dir else []
    roots.append(bundled())
    for root in roots:
        found = sorted(p for p in (root / "profiles").glob("*/*") if p.is_file() and p.name.endswith(PROFILE_SUFFIXES))
        if found:
            return found
    return []


def refusal(path: str) -> str | None:
    """Why `path` cannot be opened before reading it (empty, missing, a directory), or None."""
    if not path.strip():
        return "Type the path of an Nsight Compute CSV export or a PyTorch profiler trace."
    target = Path(absolute(path.strip()))
    if not target.exists():
        return f"No such file: {one_line(str(target))}"
    if target.is_dir():
        return f"A directory, not a profile: {one_line(str(target))}"
    return None


class OpenProfileDialog(ModalScreen[None]):
    """A path to type (the last one opened to start with), or a shipped example to pick."""

    DEFAULT_CSS = DIALOG_CSS.format(name="OpenProfileDialog")
    BINDINGS = [Binding("escape", "close", "Back", id="profile-open-cancel")]

    def __init__(self) -> None:
        super().__init__()
        self.examples: list[Path] = []

    def compose(self) -> ComposeResult:
        host = host_of(self.app)
        content = host.guide.content_dir if host is not None else None
        self.examples = shipped_examples(content)
        store = store_of(self.app)
        last = store.get_ui(LAST_FILE_KEY, "") if store is not None else ""
        with Vertical():
            yield Static("Open a profile", classes="dialog-title")
            yield Static(
                "An Nsight Compute CSV export (ncu -i report.ncu-rep --csv --page raw > raw.csv; --page details "
                "also works) or a PyTorch profiler trace (.json, .json.gz, recorded with record_shapes=True).",
                classes="dialog-hint-wrap",  # the app's .dialog-hint is one line high: this one wraps
                id="profile-open-hint",
            )
            field = OrderedInput(value=last if isinstance(last, str) else "", placeholder="path/to/raw.csv or trace.json.gz",
                                 id="profile-path")
            field.cursor_blink = cursor_blink_of(self.app)
            yield field
            yield Static("", id="profile-path-error", classes="dialog-error")
            if self.examples:
                yield Static("Or one of the records that ship with studytui (Enter opens it):", classes="dialog-hint")
                yield OptionList(*[Option(Content(f"{p.parent.name}/{p.name}"), id=str(i)) for i, p in enumerate(self.examples)],
                                 id="profile-examples")
            yield Static("Enter: open   Tab: the examples   Esc: back", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#profile-path-error", Static).display = False
        self.query_one("#profile-path", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._open(event.value)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self._open(str(self.examples[int(event.option.id)]))

    def _open(self, path: str) -> None:
        why = refusal(path)
        error = self.query_one("#profile-path-error", Static)
        if why is not None:
            error.update(Content(why))
            error.display = True
            return
        host = host_of(self.app)
        self.dismiss(None)
        if host is not None:
            self.app.call_later(host.open_screen, SCREEN_ID, path=absolute(path.strip()))

    def action_close(self) -> None:
        self.dismiss(None)


class RangePicker(ModalScreen["int | None"]):
    """The ranges (NVTX or record_function, nested by depth) with their kernels and time; Enter
    shows only that range's kernels. Dismisses with the range's index in the report (-1: all)."""

    DEFAULT_CSS = DIALOG_CSS.format(name="RangePicker")
    BINDINGS = [Binding("escape", "close", "Back", id="profile-range-cancel")]

    def __init__(self, options: list[tuple[int, str]], current: int) -> None:
        super().__init__()
        self.options = options  # (range index or -1, label)
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Show the kernels of one range", classes="dialog-title")
            yield OptionList(*[Option(Content(label), id=str(index)) for index, label in self.options], id="profile-ranges")
            yield Static("Enter: show   Esc: back", classes="dialog-hint")

    def on_mount(self) -> None:
        ranges = self.query_one(OptionList)
        ranges.highlighted = next((i for i, (index, _l) in enumerate(self.options) if index == self.current), 0)
        ranges.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(int(event.option.id) if event.option.id is not None else None)

    def action_close(self) -> None:
        self.dismiss(None)
