"""The one typed way for screens, widgets and plug-ins to reach the study app: `StudyHost`.

`StudyApp` (studytui.tui.app) implements it; nothing else in studytui/tui imports the App class
(an import-linter contract in pyproject.toml checks that). A screen asks for the host with
`study_host(self.app)`, or, where it also runs inside a bare Textual app (the calculators, the
GPU picker, widgets in tests), with `host_of(self.app)`, which is None there.

What flows the other way (a plug-in telling the views that something changed) is a message, in
studytui.tui.messages: no screen or plug-in reaches into another screen's widgets.

`StudyHost` is an abstract base class without `abc.ABCMeta` (Textual's App has a metaclass of its
own): the app lists it among its bases, after `App`, and defines every method below. A bare app
that hosts a plug-in screen (tests, a standalone calculator) does the same.
"""

from __future__ import annotations

from abc import abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    import datetime as _dt

    from textual.dom import DOMNode
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.signal import Signal
    from textual.timer import Timer
    from textual.worker import Worker

    from studytui.guide.model import Entry, Guide, Section
    from studytui.guide.search import SearchIndex
    from studytui.store import Store
    from studytui.study.session import Change, StudySession
    from studytui.tui.registry import Registry


class PracticeStatus(Protocol):
    """What the app shows of practice outside the practice screen: the status line's words.
    The practice plug-in owns the rest (studytui.tui.practice.state.PracticeState)."""

    def status_text(self) -> str: ...

    def problem_ids(self) -> frozenset[str]:
        """The problems the content has (the plan leaves reviews of other problems out)."""
        ...


class StudyHost:
    """What a screen, widget or plug-in may ask of the app around it."""

    # --- what the app was started with ---------------------------------------------------------
    registry: Registry  # the screens and palette commands (studytui.tui.registry)
    cursor_blink: bool  # off in tests: stable snapshots
    user_keymap: dict[str, str]  # keys.yaml: binding id -> keys
    today: Callable[[], _dt.date]
    # Every change to progress or notes, from this app or from elsewhere (the views subscribe).
    study_changed: Signal[Change]
    # Textual's App.post_message: how a plug-in sends a message (studytui.tui.messages) upward.
    # Declared, not defined, so the App's own method is the one that runs.
    post_message: Callable[[Message], bool]
    # Textual's App timers, workers and running state, declared the same way: a plug-in that keeps
    # state for the whole app (the plan, practice reviews) schedules its work on the app.
    set_timer: Callable[..., Timer]
    run_worker: Callable[..., Worker[Any]]

    @property
    @abstractmethod
    def is_running(self) -> bool:
        """Textual's own (MessagePump.is_running): the app has started and not yet stopped."""

    def node(self) -> DOMNode:
        """The app as the DOM node a Signal belongs to and subscribers are registered with."""
        from textual.dom import DOMNode

        if not isinstance(self, DOMNode):
            raise TypeError(f"{type(self).__name__} is not a Textual app")
        return self

    # --- the session ----------------------------------------------------------------------------
    # The study session: progress, the summary, the note draft, note history. Read from it;
    # change it through run_session, so every view hears of the change.
    session: StudySession

    @property
    @abstractmethod
    def guide(self) -> Guide: ...

    @property
    @abstractmethod
    def store(self) -> Store: ...

    @property
    @abstractmethod
    def search_index(self) -> SearchIndex:
        """The keyword index over the guide, built on first use."""

    @abstractmethod
    def run_session(self, call: Callable[..., Change], *args: Any) -> bool:
        """Call the session, publish what changed, turn a refusal into a message; True when it succeeded."""

    @abstractmethod
    def store_write(self, write: Callable[..., Any], *args: Any) -> bool:
        """Run a store write; a store error becomes a message. True when it succeeded."""

    # --- notes ----------------------------------------------------------------------------------
    @abstractmethod
    def flush_note(self) -> bool:
        """Save the note being edited; False when something was refused."""

    @abstractmethod
    def switch_note(self, entry_id: str) -> None:
        """Make `entry_id`'s note the draft, saving the current one first."""

    @abstractmethod
    def append_note(self, entry_id: str, text: str) -> bool:
        """Append to an entry's note through the session (typing saved first); False if refused."""

    @abstractmethod
    def edit_note_externally(self, entry: Entry) -> str | None:
        """Open the note in $VISUAL/$EDITOR; the new text, or None when nothing changed."""

    @abstractmethod
    def set_draft_source(self, sync: Callable[[], None]) -> None:
        """`sync` puts the text on screen into the draft; the app calls it before every save."""

    @abstractmethod
    def release_draft_source(self, sync: Callable[[], None]) -> None:
        """`sync` no longer has text on screen (its widget is gone); a newer source stays."""

    # --- progress -------------------------------------------------------------------------------
    @abstractmethod
    def state_of(self, entry_id: str) -> str: ...

    @abstractmethod
    def set_state(self, entry: Entry, state: str) -> None: ...

    @abstractmethod
    def next_pending(self, after: Entry | None) -> Entry | None: ...

    @property
    @abstractmethod
    def practice_state(self) -> PracticeStatus | None:
        """The practice plug-in's state, once it has loaded it (None before, or without practice)."""

    @abstractmethod
    def set_practice_state(self, state: PracticeStatus | None) -> None: ...

    # --- messages and hand-off ------------------------------------------------------------------
    @abstractmethod
    def say(self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None) -> None:
        """A notification shown as typed: no markup, control characters made visible."""

    @abstractmethod
    def copy_text(self, text: str) -> None:
        """Put `text` on the clipboard (OSC 52)."""

    @abstractmethod
    def hand_off(self, url: str, title: str) -> bool:
        """Give a link to the learner's browser, or a dialog with it; True when handed off."""

    @abstractmethod
    def open_source(self, entry: Entry) -> None:
        """`o`: open the entry's source (a pending entry becomes learning)."""

    # --- where the learner is, and going elsewhere ----------------------------------------------
    @property
    @abstractmethod
    def main_screen(self) -> Screen[Any] | None:
        """The main screen, wherever it is in the screen stack (None before it is pushed)."""

    @abstractmethod
    def current_entry(self) -> Entry | None:
        """The entry selected on the main screen, if any."""

    @abstractmethod
    def current_section(self) -> Section | None:
        """The section the main screen's selection is in, if any."""

    @abstractmethod
    def jump_to(self, entry_id: str) -> None: ...

    @abstractmethod
    def jump_to_section(self, section: Section) -> None: ...

    @abstractmethod
    def open_screen(self, screen_id: str, **params: Any) -> None:
        """Open a registered screen by id (see studytui.tui.registry)."""

    @abstractmethod
    def open_search(self, query: str = "") -> None: ...

    @abstractmethod
    def first_frame_shown(self) -> None:
        """The main screen's first frame is on the terminal: run what waited for it."""


def host_of(app: object) -> StudyHost | None:
    """The study app when `app` is one, else None (a bare app: no store, no notes)."""
    return app if isinstance(app, StudyHost) else None


def study_host(app: object) -> StudyHost:
    """The study app around a screen that needs one (the main screen, search, the palette)."""
    if isinstance(app, StudyHost):
        return app
    raise TypeError(f"{type(app).__name__} is not a study host (studytui.tui.host.StudyHost)")


def cursor_blink_of(app: object) -> bool:
    host = host_of(app)
    return host.cursor_blink if host is not None else True


def store_of(app: object) -> Store | None:
    host = host_of(app)
    return host.store if host is not None else None


def data_dir_of(app: object) -> Path | None:
    """The data directory the app's store lives in (user GPUs and profiles are found there)."""
    store = store_of(app)
    return Path(store.path).parent if store is not None else None
