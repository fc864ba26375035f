"""The study app: `studytui` with no command.

The app owns the guide, the store and the note draft; screens ask it to act (jump, mark, open a
source, copy, open a screen) so every path - key, mouse, command palette - goes through one place.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from studytui.errors import StudyError
from studytui.guide.model import Entry, Guide, Section
from studytui.handoff import browser_available, in_tmux, osc52_copy_sequence
from studytui.study import Summary, canonical_states, first_entry, next_entry, progress_summary
from studytui.store import EntryProgress, Store
from studytui.tui.notes import NoteDraft
from studytui.tui.registry import Registry, build_registry

# The three themes `t` cycles through: dark, light, and one drawn in the terminal's own palette.
STUDY_THEMES = ("textual-dark", "textual-light", "ansi-dark", "studytui-high-contrast")
THEME_UI_KEY = "theme"
NO_COLOR_THEME = "ansi-dark"  # with NO_COLOR every colour is dropped; this theme's styles suit that


class StudyApp(App[None]):
    """Study the guide in order, take notes, jump by keyword, hand off to the source."""

    CSS_PATH = Path(__file__).with_name("studytui.tcss")  # absolute: subclasses live elsewhere
    TITLE = "studytui"
    COMMANDS = App.COMMANDS | {lambda: _study_commands()}
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit", tooltip="Quit (the note is saved)"),
        Binding("question_mark", "help", "Help", id="help", tooltip="This list of keys"),
        Binding("f1", "help", "Help", id="help-f1", show=False, tooltip="Help, also while typing"),
        Binding("t", "cycle_theme", "Theme", id="theme", show=False, tooltip="Next theme: dark, light, ANSI, high contrast"),
    ]

    def __init__(
        self,
        guide: Guide,
        store: Store,
        *,
        registry: Registry | None = None,
        keymap: Mapping[str, str] | None = None,
        today: Callable[[], _dt.date] = _dt.date.today,
        environ: Mapping[str, str] | None = None,
        platform: str | None = None,
        cursor_blink: bool = True,
    ) -> None:
        super().__init__()
        from studytui.tui.themes import register_study_themes

        register_study_themes(self)  # ANSI with visible tree guides, and high contrast
        if self.no_color:
            self._use_terminal_colours()
        self.guide = guide
        self.store = store
        self.registry = registry if registry is not None else build_registry()
        self.user_keymap: dict[str, str] = dict(keymap or {})
        self.today = today
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.platform = sys.platform if platform is None else platform
        self.cursor_blink = cursor_blink
        self.draft = NoteDraft()
        # Notes the store refused (locked, read-only...), by entry id: retried on every flush
        # and written to a file at exit if still refused. Never dropped.
        self.unsaved_notes: dict[str, str] = {}
        self._search_index: Any = None
        # Progress keyed by current entry id (old ids folded in), refreshed on every change.
        self.progress: dict[str, EntryProgress] = {}
        self.summary: Summary  # set on mount, recomputed (studytui.study) after every change
        self.practice_state: Any = None  # studytui.tui.practice.PracticeState, loaded after the first frame
        # Run once, right after the main screen's first frame is on the terminal (the launcher
        # uses this to resume garbage collection, paused for a faster start).
        self.after_first_frame: list[Callable[[], None]] = []

    def _use_terminal_colours(self) -> None:
        """NO_COLOR: draw in the terminal's own default colours, meaning carried by glyphs, words,
        bold, underline and reverse. (Textual's greyscale filter for truecolor themes still emits
        grey colours, and turns the ANSI theme's default colours black.)"""
        from textual.filter import Monochrome, NoColor

        self._filters = [NoColor() if isinstance(f, Monochrome) else f for f in self._filters]
        self.theme = NO_COLOR_THEME

    # --- lifecycle ----------------------------------------------------------------------------
    def on_mount(self) -> None:
        if self.user_keymap:
            self.set_keymap(self.user_keymap)
        saved_theme = self.store.get_ui(THEME_UI_KEY, None)
        if self.no_color:
            pass  # the theme stays NO_COLOR_THEME
        elif isinstance(saved_theme, str) and saved_theme in self.available_themes:
            self.theme = saved_theme
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        self.progress, _ = canonical_states(self.guide, self.store.states())
        self.summary = progress_summary(self.guide, self.progress)
        from studytui.tui.screens.main import MainScreen

        # Pushed once startup is over: a screen pushed during on_mount is drawn inside Textual's
        # startup batch, where that frame is thrown away and the first one reaches the terminal
        # only after the deferred work. Pushed here, its first frame is written at once.
        self.call_later(self.push_screen, MainScreen(self.resume_entry()))

    def on_unmount(self) -> None:
        self.flush_note()

    def first_frame_shown(self) -> None:
        """Called by the main screen once its first frame has been drawn; runs the
        after_first_frame callbacks (once)."""
        callbacks, self.after_first_frame = self.after_first_frame, []
        for callback in callbacks:
            callback()
        for hook in self.registry.ready_hooks:
            hook(self)

    def _remember_theme(self, theme: Any) -> None:
        self.store_write(self.store.set_ui, THEME_UI_KEY, theme.name)

    def store_write(self, write: Callable[..., Any], *args: Any) -> bool:
        """Run a store write; a store error (locked, read-only, damaged) becomes a message, not a
        crash. True when it succeeded."""
        try:
            write(*args)
        except StudyError as exc:
            self.notify(str(exc), title="Not saved", severity="error", timeout=8)
            return False
        return True

    def resume_entry(self) -> Entry | None:
        """The entry last viewed, or for a fresh data directory the first Start here entry."""
        last = self.store.last_viewed()
        entry = self.guide.get(last) if last else None
        return entry or first_entry(self.guide)

    # --- notes --------------------------------------------------------------------------------
    def flush_note(self) -> bool:
        """Save the note being edited, if it changed. Safe to call at any time, any number of times.

        When the store refuses the write, the text stays in the draft (still unsaved) and the next
        flush tries again; False is returned.
        """
        try:
            for entry_id, text in list(self.unsaved_notes.items()):
                self.store.set_note(entry_id, text)
                del self.unsaved_notes[entry_id]
                self._note_saved(entry_id, text)
            if self.draft.flush(self.store) and self.draft.entry_id is not None:
                self._note_saved(self.draft.entry_id, self.draft.text)
        except StudyError as exc:
            self.notify(f"{exc}. The note is kept and saved on the next try.", title="Note not saved", severity="error", timeout=8)
            return False
        return True

    def _note_saved(self, entry_id: str, text: str) -> None:
        old = self.progress.get(entry_id) or EntryProgress(entry_id)
        self.progress[entry_id] = _replace(old, note=text)

    def switch_note(self, entry_id: str) -> None:
        """Make `entry_id`'s note the draft, saving (or, if refused, setting aside) the current one."""
        if self.draft.entry_id == entry_id:
            return
        if not self.flush_note() and self.draft.dirty and self.draft.entry_id is not None:
            self.unsaved_notes[self.draft.entry_id] = self.draft.text
        self.draft.start(entry_id, self.note_text(entry_id))

    def note_text(self, entry_id: str) -> str:
        """The entry's note as the learner last wrote it (an unsaved version wins)."""
        if entry_id in self.unsaved_notes:
            return self.unsaved_notes[entry_id]
        found = self.progress.get(entry_id)
        return found.note if found is not None else ""

    def run_editor(self, argv: list[str]) -> int:
        """Run an external editor with the terminal handed over to it."""
        import subprocess

        with self.suspend():
            return subprocess.call(argv)

    def edit_note_externally(self, entry: Entry) -> str | None:
        """Open the note in $VISUAL/$EDITOR; returns the new text, or None when nothing changed."""
        import shlex
        import tempfile

        self.switch_note(entry.id)
        self.flush_note()
        editor = self.environ.get("VISUAL") or self.environ.get("EDITOR") or "vi"
        before = self.draft.text  # what the learner last wrote, saved or not
        with tempfile.TemporaryDirectory(prefix="studytui-") as tmp:
            path = Path(tmp) / f"{entry.id}.md"
            path.write_text(before, encoding="utf-8")
            try:
                code = self.run_editor([*shlex.split(editor), str(path)])
            except Exception as exc:  # SuspendNotSupported, editor missing, ...
                self.notify(f"Could not run the editor '{editor}': {exc}", severity="error")
                return None
            after = path.read_text(encoding="utf-8")
        if code != 0:
            self.notify(f"The editor exited with status {code}; the note was kept as it was.", severity="warning")
            return None
        if after == before:
            return None
        # Through the draft, so a refused write is kept and retried like any other edit.
        self.draft.update(after)
        self.flush_note()
        return after

    # --- progress -----------------------------------------------------------------------------
    def state_of(self, entry_id: str) -> str:
        found = self.progress.get(entry_id)
        return found.state if found is not None else "pending"

    def set_state(self, entry: Entry, state: str) -> None:
        if not self.store_write(self.store.set_state, entry.id, state):
            return
        old = self.progress.get(entry.id) or EntryProgress(entry.id)
        self.progress[entry.id] = _replace(old, state=state)
        self.summary = progress_summary(self.guide, self.progress)

    def next_pending(self, after: Entry | None) -> Entry | None:
        return next_entry(self.guide, self.progress, after.id if after else None)

    # --- hand-off -----------------------------------------------------------------------------
    def write_to_terminal(self, sequence: str) -> None:
        """Send a control sequence to the terminal (Textual's own copy_to_clipboard does the same,
        but cannot wrap it for tmux)."""
        driver = self._driver
        if driver is not None:
            driver.write(sequence)

    def copy_text(self, text: str) -> None:
        """Put `text` on the clipboard with OSC 52, wrapped for tmux when $TMUX is set."""
        self.write_to_terminal(osc52_copy_sequence(text, in_tmux=in_tmux(self.environ)))

    def open_source(self, entry: Entry) -> None:
        """`o`: a local browser when one can be used, otherwise a dialog with the link, copied."""
        if not entry.url:
            self.notify(f"No link: {entry.no_url_reason or 'this item has no primary source yet'}", severity="warning")
            return
        self.hand_off(entry.url, entry.title)
        if not self.store_write(self.store.mark_opened, entry.id):
            return
        old = self.progress.get(entry.id) or EntryProgress(entry.id)
        self.progress[entry.id] = _replace(old, last_opened_at=self.store.progress(entry.id).last_opened_at)
        if self.state_of(entry.id) == "pending":
            self.set_state(entry, "learning")

    def hand_off(self, url: str, title: str) -> None:
        ok, reason = browser_available(self.environ, self.platform)
        if ok:
            self.open_url(url)
            self.notify(f"Opened in your browser: {title}")
            return
        from studytui.tui.screens.handoff import HandoffDialog

        self.copy_text(url)
        self.push_screen(HandoffDialog(url, title, reason))

    # --- navigation and screens -----------------------------------------------------------------
    @property
    def search_index(self) -> Any:
        """The keyword index over the guide, built on first use (after the first frame)."""
        if self._search_index is None:
            from studytui.guide.search import SearchIndex

            self._search_index = SearchIndex(self.guide.entries)
        return self._search_index

    def notes_by_entry(self) -> dict[str, str]:
        return {entry_id: p.note for entry_id, p in self.progress.items() if p.note}

    def jump_to(self, entry_id: str) -> None:
        entry = self.guide.get(entry_id)
        if entry is None:
            return
        from studytui.tui.screens.main import MainScreen

        main = self.main_screen
        if main is not None:
            while not isinstance(self.screen, MainScreen):
                self.pop_screen()
            main.show_entry(entry)

    def jump_to_section(self, section: Section) -> None:
        from studytui.tui.screens.main import MainScreen

        main = self.main_screen
        if main is not None:
            while not isinstance(self.screen, MainScreen):
                self.pop_screen()
            main.show_section(section)

    @property
    def main_screen(self) -> Any:
        """The MainScreen, wherever it is in the screen stack (None before it is pushed)."""
        from studytui.tui.screens.main import MainScreen

        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        return None

    def open_search(self, query: str = "") -> None:
        main = self.main_screen
        if main is not None:
            main.action_search(query)

    def open_screen(self, screen_id: str, **params: Any) -> None:
        """Open a registered screen by id (see studytui.tui.registry)."""
        spec = self.registry.screens.get(screen_id)
        if spec is None:
            self.notify(f"No such screen: {screen_id}", severity="error")
            return
        screen: Screen[Any] = spec.factory(self, **params)
        self.push_screen(screen)

    def action_open_screen(self, screen_id: str) -> None:
        self.open_screen(screen_id)

    def action_help(self) -> None:
        from studytui.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.key_rows()))

    def key_rows(self) -> list[tuple[str, str, str]]:
        """(keys, what it does, binding id) for the help screen, with the user's keymap applied."""
        from studytui.tui.screens.main import MainScreen

        rows: list[tuple[str, str, str]] = []
        for binding in [*MainScreen.BINDINGS, *self.BINDINGS]:
            assert isinstance(binding, Binding)
            rows.append((self.user_keymap.get(binding.id or "", binding.key), binding.tooltip or binding.description, binding.id or ""))
        for spec in self.registry.screens.values():
            if spec.key:
                rows.append((self.user_keymap.get(spec.id, spec.key), spec.title, spec.id))
        return rows

    def action_cycle_theme(self) -> None:
        if self.no_color:
            self.notify("NO_COLOR is set: the terminal's own colours are used.", timeout=3)
            return
        current = self.theme
        following = STUDY_THEMES[(STUDY_THEMES.index(current) + 1) % len(STUDY_THEMES)] if current in STUDY_THEMES else STUDY_THEMES[0]
        self.theme = following
        self.notify(f"Theme: {following}", timeout=2)

    async def action_quit(self) -> None:
        self.flush_note()
        main = self.main_screen
        if main is not None:
            main.save_last_viewed()
        self.exit()

    def get_system_commands(self, screen: Screen[Any]) -> Any:
        yield from super().get_system_commands(screen)
        for name in STUDY_THEMES:
            yield SystemCommand(f"Theme: {name}", f"Switch to the {name} theme (remembered)", _set_theme(self, name))


def _study_commands() -> Any:
    # Imported when the palette first opens: textual.command is not needed for the first frame.
    from studytui.tui.commands import StudyCommands

    return StudyCommands


def _set_theme(app: StudyApp, name: str) -> Callable[[], None]:
    def apply() -> None:
        app.theme = name

    return apply


def _replace(progress: EntryProgress, **changes: Any) -> EntryProgress:
    """A copy of an immutable progress record with some fields changed."""
    if hasattr(progress, "_replace"):  # a NamedTuple
        return progress._replace(**changes)
    from dataclasses import replace

    return replace(progress, **changes)
