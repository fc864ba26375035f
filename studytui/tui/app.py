"""The study app: `studytui` with no command.

The app owns the guide, the store and the note draft; screens ask it to act (jump, mark, open a
source, copy, open a screen) so every path - key, mouse, command palette - goes through one place.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.signal import Signal

from studytui.core.errors import StudyError
from studytui.guide.model import Entry, Guide, Section
from studytui.store import EntryProgress, Store
from studytui.study.flow import Summary
from studytui.study.session import Change, NoteDraft, NotesNotSaved, StudySession
from studytui.tui.compat import start_in_theme, use_no_color_filter, write_to_terminal
from studytui.tui.format import visible_controls
from studytui.tui.host import PracticeStatus, StudyHost
from studytui.tui.keyroute import KeyRouting
from studytui.tui.messages import MasteryChanged, PlanChanged
from studytui.tui.registry import Registry, build_registry

if TYPE_CHECKING:
    from studytui.guide.search import SearchIndex
    from studytui.tui.screens.main import MainScreen

# The three themes `t` cycles through: dark, light, and one drawn in the terminal's own palette.
STUDY_THEMES = ("textual-dark", "textual-light", "ansi-dark", "studytui-high-contrast")
THEME_UI_KEY = "theme"
NO_COLOR_THEME = "ansi-dark"  # with NO_COLOR every colour is dropped; this theme's styles suit that
# Textual's "Theme" picker offers its dozen themes, not the four above (the palette has those).
DROPPED_SYSTEM_COMMANDS = frozenset({"Theme"})
# How often to look for changes made by another process (the CLI, a second app). The check is
# one PRAGMA; it also runs when the terminal regains focus and before every write.
EXTERNAL_CHECK_SECONDS = 1.0


class StudyApp(KeyRouting, App[None], StudyHost):
    """Study the guide in order, take notes, jump by keyword, hand off to the source.

    Screens, widgets and plug-ins see it only as a `StudyHost` (studytui.tui.host)."""

    CSS_PATH = Path(__file__).with_name("studytui.tcss")  # absolute: subclasses live elsewhere
    # The dialogs' rules: parsed after the first frame, or before the first screen is pushed.
    DIALOG_CSS_PATH = Path(__file__).with_name("dialogs.tcss")
    TITLE = "studytui"
    # One provider: the study commands first, then the themes and Textual's system commands
    # (Textual runs providers side by side, so with two the system ones came first).
    COMMANDS = {lambda: _study_commands()}
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
        self._exit_watchdog: threading.Timer | None = None  # see save_and_exit
        from studytui.tui.themes import register_study_themes

        register_study_themes(self)  # ANSI with visible tree guides, and high contrast
        self.session = StudySession(guide, store)
        self._start_theme()
        self.registry = registry if registry is not None else build_registry()
        self.user_keymap: dict[str, str] = dict(keymap or {})
        self.today = today
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.platform = sys.platform if platform is None else platform
        self.cursor_blink = cursor_blink
        self._search_index: SearchIndex | None = None
        # Every change to progress or notes, from this app or from elsewhere: the views
        # (tree, detail pane, note panel, status line) subscribe and redraw what it names.
        self.study_changed: Signal[Change] = Signal(self, "study-changed")
        # Called before the session saves, so the text on screen is what gets saved (the
        # note panel registers it while it exists: set_draft_source).
        self.sync_draft: Callable[[], None] = _no_draft_source
        # The practice plug-in's state (studytui.tui.practice.state.PracticeState), loaded after the first frame.
        self._practice_state: PracticeStatus | None = None
        # Run once, right after the main screen's first frame is on the terminal (the launcher
        # uses this to resume garbage collection, paused for a faster start).
        self.after_first_frame: list[Callable[[], None]] = []
        self._dialog_css_added = False

    def _start_theme(self) -> None:
        """The theme of the first frame, chosen before anything is parsed (so the stylesheet is
        parsed once, in it): with NO_COLOR, the terminal's own default colours (meaning carried by
        glyphs, words, bold, underline and reverse; Textual's greyscale filter for truecolor
        themes still emits grey colours, and turns the ANSI theme's default colours black);
        otherwise the theme the learner chose last (an unknown name: the default)."""
        if self.no_color:
            use_no_color_filter(self)
            name: str | None = NO_COLOR_THEME
        else:
            saved = self.store.get_ui(THEME_UI_KEY, None)
            name = saved if isinstance(saved, str) and saved in self.available_themes else None
        if name is not None:
            start_in_theme(self, name)

    # --- lifecycle ----------------------------------------------------------------------------
    def on_mount(self) -> None:
        if self.user_keymap:
            self.set_keymap(self.user_keymap)
        self.theme_changed_signal.subscribe(self, self._remember_theme)  # the theme itself: _start_theme
        self.set_interval(EXTERNAL_CHECK_SECONDS, self.check_external, name="external-changes")
        self._catch_hangup()
        from studytui.tui.screens.main import MainScreen

        # Pushed once startup is over: a screen pushed during on_mount is drawn inside Textual's
        # startup batch, where that frame is thrown away and the first one reaches the terminal
        # only after the deferred work. Pushed here, its first frame is written at once. (As the
        # app's default screen instead, it saved a few milliseconds in a terminal, but in a
        # browser tab through `studytui serve` its footer never showed its keys.)
        # (Textual's own push: the main screen needs none of the dialogs' rules.)
        self.call_later(App.push_screen, self, MainScreen(self.resume_entry()))

    def on_unmount(self) -> None:
        self.flush_note()
        self._release_hangup()

    # Closing the terminal (SIGHUP: the SSH session or tmux window went away) or being asked to
    # stop (SIGTERM) saves the note being typed first, like quitting does.
    SAVE_ON_SIGNALS = tuple(getattr(signal, name) for name in ("SIGHUP", "SIGTERM") if hasattr(signal, name))

    def _catch_hangup(self) -> None:
        self._signals_caught: list[int] = []
        try:
            loop = asyncio.get_running_loop()
            for signum in self.SAVE_ON_SIGNALS:
                loop.add_signal_handler(signum, self.save_and_exit, signum)
                self._signals_caught.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # not the main thread, or a platform without them: quit and the launcher still save

    def _release_hangup(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for signum in getattr(self, "_signals_caught", []):
            loop.remove_signal_handler(signum)
        self._signals_caught = []

    # After a hang-up the terminal is gone: Textual's output thread can die on the closed pty and
    # its shutdown then waits forever on a full queue, leaving an orphan process. Once the notes
    # are saved, a clean exit gets this long before the process ends itself.
    EXIT_GRACE_S = 2.0

    def save_and_exit(self, signum: int) -> None:
        """SIGHUP/SIGTERM: save every note now (to a file if the store refuses), then exit."""
        self.sync_draft()
        self.session.save_what_is_left(Path(self.store.path).parent)
        self._release_hangup()
        code = 128 + signum
        if not self.is_headless and self._exit_watchdog is None:  # a real terminal (not a test pilot)
            self._exit_watchdog = threading.Timer(self.EXIT_GRACE_S, os._exit, args=(code,))
            self._exit_watchdog.daemon = True
            self._exit_watchdog.start()
        self.exit(return_code=code)

    def cancel_exit_watchdog(self) -> None:
        """The app returned from run(): the launcher finishes the exit itself."""
        if self._exit_watchdog is not None:
            self._exit_watchdog.cancel()
            self._exit_watchdog = None

    def first_frame_shown(self) -> None:
        """Called by the main screen once its first frame has been drawn; runs the
        after_first_frame callbacks (once)."""
        self.add_dialog_css(parse_now=True)
        callbacks, self.after_first_frame = self.after_first_frame, []
        for callback in callbacks:
            callback()
        for hook in self.registry.ready_hooks:
            hook(self)

    def add_dialog_css(self, parse_now: bool = False) -> None:
        """Add the dialogs' rules (dialogs.tcss) to the stylesheet, once. The first frame shows
        the main screen only, and parsing rules it does not use cost it milliseconds; added as a
        later source of the same kind as studytui.tcss (the app's own rules, not scoped), they
        style every screen exactly as if they were in that file. A new source is parsed alone
        (the others come from the stylesheet's cache); `parse_now` parses it at once (after the
        first frame, while the app is idle), else with the next screen styled."""
        if self._dialog_css_added:
            return
        self._dialog_css_added = True
        path = str(self.DIALOG_CSS_PATH)
        stylesheet = self.stylesheet
        if not stylesheet.has_source(path):
            stylesheet.add_source(self.DIALOG_CSS_PATH.read_text(encoding="utf-8"), read_from=(path, ""))
        if self.css_monitor is not None:  # textual run --dev: edits to the file apply live too
            self.css_monitor.add_paths([self.DIALOG_CSS_PATH])
        if parse_now:
            stylesheet.parse()

    def push_screen(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]  # Textual's overloads, unchanged
        """Every screen pushed (a dialog, a calculator, the palette) is styled with the dialogs'
        rules, even one pushed before the first frame was drawn (keys typed at start)."""
        self.add_dialog_css()
        return super().push_screen(*args, **kwargs)

    def switch_screen(self, screen: Screen[Any] | str) -> Any:  # type: ignore[override]
        self.add_dialog_css()
        return super().switch_screen(screen)

    def _remember_theme(self, theme: Any) -> None:
        self.store_write(self.store.set_ui, THEME_UI_KEY, theme.name)

    def store_write(self, write: Callable[..., Any], *args: Any) -> bool:
        """Run a store write; a store error (locked, read-only, damaged) becomes a message, not a
        crash. True when it succeeded."""
        try:
            write(*args)
        except StudyError as exc:
            self.say(str(exc), title="Not saved", severity="error", timeout=8)
            return False
        return True

    def say(self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None) -> None:
        """A notification whose text may come from the learner, the content or a path: shown
        as typed (no markup, control characters made visible)."""
        self.notify(visible_controls(message), title=title, severity=severity, timeout=timeout, markup=False)

    # --- the session ----------------------------------------------------------------------------
    @property
    def guide(self) -> Guide:
        return self.session.guide

    @property
    def store(self) -> Store:
        return self.session.store  # type: ignore[return-value]

    @property
    def progress(self) -> dict[str, EntryProgress]:
        return self.session.progress

    @property
    def summary(self) -> Summary:
        return self.session.summary

    @property
    def draft(self) -> NoteDraft:
        return self.session.draft

    @property
    def unsaved_notes(self) -> dict[str, str]:
        return self.session.unsaved_notes

    def run_session(self, call: Callable[..., Change], *args: Any) -> bool:
        """Call the session, publish what changed, and turn a refusal into a message.
        True when it succeeded."""
        self.sync_draft()
        try:
            change = call(*args)
        except NotesNotSaved as exc:
            self.say(str(exc), title="Note not saved", severity="error", timeout=8)
            return False
        except StudyError as exc:
            self.say(str(exc), title="Not saved", severity="error", timeout=8)
            return False
        self.publish(change)
        return True

    def publish(self, change: Change) -> None:
        if not change:
            return
        for conflict in change.conflicts:
            self.notify(conflict.message, title="Merged; a clash kept twice", severity="warning", timeout=12)
        self.study_changed.publish(change)

    def check_external(self) -> None:
        """Look for changes made by another process (timer, focus)."""
        self.run_session(self.session.check_external)

    def on_app_focus(self) -> None:
        self.check_external()

    def resume_entry(self) -> Entry | None:
        """The entry last viewed, or for a fresh data directory the first Start here entry."""
        return self.session.resume_entry()

    # --- notes --------------------------------------------------------------------------------
    def flush_note(self) -> bool:
        """Save the note being edited (and any the store refused before). Safe to call at any
        time; a refused write keeps the text for the next try. False when something was refused."""
        return self.run_session(self.session.flush)

    def switch_note(self, entry_id: str) -> None:
        """Make `entry_id`'s note the draft, saving (or, if refused, setting aside) the current one."""
        if self.draft.entry_id != entry_id:
            self.run_session(self.session.switch_note, entry_id)

    def note_text(self, entry_id: str) -> str:
        """The entry's note as the learner last wrote it (an unsaved version wins)."""
        return self.session.note_text(entry_id)

    def append_note(self, entry_id: str, text: str) -> bool:
        """Add text at the end of a note (a calculation): the note being typed is saved first."""
        return self.run_session(self.session.append_note, entry_id, text)

    def set_draft_source(self, sync: Callable[[], None]) -> None:
        """The note panel's way to give the text on screen before every save."""
        self.sync_draft = sync

    def release_draft_source(self, sync: Callable[[], None]) -> None:
        """A removed note panel has no text on screen to give (a newer panel's source stays)."""
        if self.sync_draft == sync:
            self.sync_draft = _no_draft_source

    def run_editor(self, argv: list[str]) -> int:
        """Run an external editor with the terminal handed over to it."""
        import subprocess

        with self.suspend():
            return subprocess.call(argv)

    def edit_note_externally(self, entry: Entry) -> str | None:
        """Open the note in $VISUAL/$EDITOR; returns the new text, or None when nothing changed.
        If the stored note changes while the editor is open, both versions are kept. The round
        trip and its policy are the command line's (`studytui.core.fileio.edit_in_editor`)."""
        from studytui.core.fileio import edit_in_editor
        from studytui.store.model import NOTE_LIMIT

        self.switch_note(entry.id)
        self.flush_note()
        before = self.draft.text  # what the learner last wrote, saved or not
        base = self.draft.base
        try:
            edited = edit_in_editor(before, entry.id, limit=NOTE_LIMIT, environ=self.environ, run=self.run_editor,
                                    hint=", or press e to write the note here")
        except StudyError as exc:  # no editor set, it failed, or its text could not be taken (kept in a named file)
            self.say(str(exc), severity="error")
            return None
        if edited.text == before:
            edited.discard()
            return None
        # Compare-and-set against what the editor started from: a note changed elsewhere while
        # the editor was open is kept next to the edited text, never overwritten. A refused save
        # keeps the text in the session (and in a private file on exit), as typing does.
        self.run_session(self.session.save_note, entry.id, edited.text, base)
        edited.discard()
        return self.draft.text

    # --- progress -----------------------------------------------------------------------------
    def state_of(self, entry_id: str) -> str:
        return self.session.state_of(entry_id)

    def set_state(self, entry: Entry, state: str) -> None:
        self.run_session(self.session.set_state, entry.id, state)

    def next_pending(self, after: Entry | None) -> Entry | None:
        return self.session.next_entry(after)

    # --- practice (the plug-in studytui.tui.practice keeps its state here) -----------------------
    @property
    def practice_state(self) -> PracticeStatus | None:
        return self._practice_state

    @practice_state.setter
    def practice_state(self, state: PracticeStatus | None) -> None:
        self._practice_state = state

    def set_practice_state(self, state: PracticeStatus | None) -> None:
        self._practice_state = state

    def on_mastery_changed(self, message: MasteryChanged) -> None:
        """Posted by the practice plug-in: the main screen shows mastery in its tree and status line."""
        main = self.main_screen
        if main is not None:
            main.post_message(MasteryChanged(message.mastery))  # the main screen stops it there

    def on_plan_changed(self, message: PlanChanged) -> None:
        """Posted by the plan plug-in (studytui.tui.plan): the main screen's header shows the finish date."""
        main = self.main_screen
        if main is not None:
            main.post_message(PlanChanged(message.label))  # the main screen stops it there

    # --- hand-off -----------------------------------------------------------------------------
    def write_to_terminal(self, sequence: str) -> None:
        """Send a control sequence to the terminal (Textual's own copy_to_clipboard does the same,
        but cannot wrap it for tmux)."""
        write_to_terminal(self, sequence)

    def copy_text(self, text: str) -> None:
        """Put `text` on the clipboard with OSC 52, wrapped for tmux when $TMUX is set."""
        from studytui.core.handoff import in_tmux, osc52_copy_sequence  # here: nothing before the first frame needs it

        self.write_to_terminal(osc52_copy_sequence(text, in_tmux=in_tmux(self.environ)))

    def open_source(self, entry: Entry) -> None:
        """`o`: a local browser when one can be used, otherwise a dialog with the link, copied."""
        if not entry.url:
            self.say(f"No link: {entry.no_url_reason or 'this item has no primary source yet'}", severity="warning")
            return
        if not self.hand_off(entry.url, entry.title):
            return
        # Pending becomes learning; a state stored meanwhile (done from the CLI) is kept.
        self.run_session(self.session.mark_opened, entry.id)

    def hand_off(self, url: str, title: str) -> bool:
        """Give a link to the learner's browser (or, where none can be used, a dialog with it,
        copied). Every link goes through here and the one policy in studytui.core.handoff: https
        only, never a local path or another scheme. True when it was handed off."""
        from studytui.core.handoff import browser_available, check_link

        link = check_link(url)
        if not link.allowed:
            self.say(f"Not opened: {link.url} ({link.reason}).", title="Link refused", severity="warning", timeout=8)
            return False
        url = link.url
        # In a browser tab (studytui serve) the learner's own browser is right there: textual-serve
        # opens the link in a new tab, whatever the server machine has for a display.
        ok, reason = (True, "") if self.is_web else browser_available(self.environ, self.platform)
        if ok:
            self.open_url(url)
            self.say(f"Opened in your browser: {title}")
            return True
        from studytui.tui.screens.handoff import HandoffDialog

        self.copy_text(url)
        self.push_screen(HandoffDialog(url, title, reason))
        return True

    def on_markdown_link_clicked(self, event: Any) -> None:
        """The one handler for links in summaries, notes, the glossary and the policy (the
        Markdown widgets' LinkClicked messages bubble up to here)."""
        event.stop()
        self.hand_off(event.href, event.href)

    # --- navigation and screens -----------------------------------------------------------------
    @property
    def search_index(self) -> SearchIndex:
        """The keyword index over the guide, built on first use (after the first frame)."""
        if self._search_index is None:
            from studytui.guide.search import SearchIndex

            self._search_index = SearchIndex(self.guide.entries)
        return self._search_index

    def notes_by_entry(self) -> dict[str, str]:
        return self.session.notes_by_entry()

    def current_entry(self) -> Entry | None:
        main = self.main_screen
        return main.current_entry if main is not None else None

    def current_section(self) -> Section | None:
        main = self.main_screen
        return main.current_section if main is not None else None

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
    def main_screen(self) -> MainScreen | None:
        """The MainScreen, wherever it is in the screen stack: the bottom (None before the app runs)."""
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
            self.say(f"No such screen: {screen_id}", severity="error")
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
        from studytui.tui.themes import theme_label

        self.notify(f"Theme: {theme_label(following)}", timeout=2)

    async def action_quit(self) -> None:
        self.flush_note()
        main = self.main_screen
        if main is not None:
            main.save_last_viewed()
        self.exit()

    def get_system_commands(self, screen: Screen[Any]) -> Any:
        """The four themes by the README's names, then Textual's commands that make sense here.
        (The palette lists these after the study commands: see studytui.tui.commands.)"""
        from studytui.tui.themes import theme_label

        for name in STUDY_THEMES:
            label = theme_label(name)
            yield SystemCommand(f"Theme: {label}", f"Switch to the {label} theme (remembered)", _set_theme(self, name))
        for command in super().get_system_commands(screen):
            if command.title not in DROPPED_SYSTEM_COMMANDS:
                yield command


def _no_draft_source() -> None:
    """No note panel: no text on screen to give."""


def _study_commands() -> Any:
    # Imported when the palette first opens: textual.command is not needed for the first frame.
    from studytui.tui.commands import StudyCommands

    return StudyCommands


def _set_theme(app: StudyApp, name: str) -> Callable[[], None]:
    def apply() -> None:
        app.theme = name

    return apply
