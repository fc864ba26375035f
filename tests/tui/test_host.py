"""Screens, widgets and plug-ins reach the app only through `StudyHost` (studytui.tui.host), and
tell other screens about changes with messages (studytui.tui.messages).

A plug-in screen (practice) runs in a bare Textual app that implements the host, with no
StudyApp and no main screen; the mastery it changes travels as a MasteryChanged message, which
the study app hands to the main screen's tree and status line.
"""

from __future__ import annotations

from typing import Any, Callable

from textual.app import App
from textual.signal import Signal
from textual.widgets import Input, Static

from studytui.core.errors import StudyError
from studytui.guide import load_guide
from studytui.practice.answers import format_value
from studytui.practice.grading import expected
from studytui.study.session import Change, StudySession
from studytui.tui.app import StudyApp
from studytui.tui.host import StudyHost, host_of, study_host
from studytui.tui.messages import MasteryChanged
from studytui.tui.practice import PracticeState
from studytui.tui.practice.screen import PracticeScreen
from studytui.tui.registry import build_registry

from .support import TODAY, wait_until


class BareHost(App[None], StudyHost):
    """A plain Textual app hosting plug-in screens: the study session, the registry, nothing of
    StudyApp (no main screen, no key routing, no hand-off)."""

    def __init__(self, guide: Any, store: Any) -> None:
        super().__init__()
        self.session = StudySession(guide, store)
        self.registry = build_registry(plugin_modules=("studytui.tui.practice",))
        self.cursor_blink = False
        self.user_keymap = {}
        self.today = lambda: TODAY
        self.study_changed: Signal[Change] = Signal(self, "study-changed")
        self._practice: Any = None
        self.sync: Callable[[], None] | None = None
        self.mastery_messages: list[dict[str, tuple[int, int]]] = []
        self.said: list[str] = []

    def on_mastery_changed(self, message: MasteryChanged) -> None:
        self.mastery_messages.append(message.mastery)

    # --- StudyHost ----------------------------------------------------------------------------
    @property
    def guide(self) -> Any:
        return self.session.guide

    @property
    def store(self) -> Any:
        return self.session.store

    @property
    def search_index(self) -> Any:
        from studytui.guide.search import SearchIndex

        return SearchIndex(self.guide.entries)

    def run_session(self, call: Callable[..., Change], *args: Any) -> bool:
        try:
            change = call(*args)
        except StudyError as exc:
            self.say(str(exc))
            return False
        if change:
            self.study_changed.publish(change)
        return True

    def store_write(self, write: Callable[..., Any], *args: Any) -> bool:
        write(*args)
        return True

    def flush_note(self) -> bool:
        return self.run_session(self.session.flush)

    def switch_note(self, entry_id: str) -> None:
        self.run_session(self.session.switch_note, entry_id)

    def append_note(self, entry_id: str, text: str) -> bool:
        return self.run_session(self.session.append_note, entry_id, text)

    def edit_note_externally(self, entry: Any) -> str | None:
        return None  # no terminal to hand over here

    def set_draft_source(self, sync: Callable[[], None]) -> None:
        self.sync = sync

    def release_draft_source(self, sync: Callable[[], None]) -> None:
        if self.sync == sync:
            self.sync = None

    def state_of(self, entry_id: str) -> str:
        return self.session.state_of(entry_id)

    def set_state(self, entry: Any, state: str) -> None:
        self.run_session(self.session.set_state, entry.id, state)

    def next_pending(self, after: Any) -> Any:
        return self.session.next_entry(after)

    @property
    def practice_state(self) -> Any:
        return self._practice

    def set_practice_state(self, state: Any) -> None:
        self._practice = state

    def say(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None) -> None:
        self.said.append(message)
        self.notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def copy_text(self, text: str) -> None:
        pass

    def hand_off(self, url: str, title: str) -> bool:
        return False

    def open_source(self, entry: Any) -> None:
        pass

    @property
    def main_screen(self) -> None:
        return None

    def current_entry(self) -> None:
        return None

    def current_section(self) -> None:
        return None

    def jump_to(self, entry_id: str) -> None:
        pass

    def jump_to_section(self, section: Any) -> None:
        pass

    def open_screen(self, screen_id: str, **params: Any) -> None:
        self.push_screen(self.registry.screens[screen_id].factory(self, **params))

    def open_search(self, query: str = "") -> None:
        pass

    def first_frame_shown(self) -> None:
        for hook in self.registry.ready_hooks:
            hook(self)


def _right(variant: Any) -> str:
    exp = expected(variant)
    return exp.choice if exp.choice is not None else format_value(exp.value, variant.problem.unit, 10)


def test_the_study_app_is_a_study_host_and_a_plain_app_is_not():
    assert issubclass(StudyApp, StudyHost)
    plain = App()
    assert host_of(plain) is None
    try:
        study_host(plain)
    except TypeError as exc:
        assert "not a study host" in str(exc)
    else:
        raise AssertionError("a plain App passed for a study host")


async def test_the_practice_screen_runs_in_a_bare_app_that_implements_the_host(store):
    host = BareHost(load_guide(), store)
    async with host.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        host.first_frame_shown()  # the ready hook: problems load, "Practice: <section>" commands are added
        assert isinstance(host.practice_state, PracticeState)
        assert any(c.title.startswith("Practice: ") for c in host.registry.commands)
        assert await wait_until(pilot, lambda: host.mastery_messages == [{}])  # nothing practised yet: nothing shown
        host.open_screen("practice", section="start-here")
        await pilot.pause()
        screen = host.screen
        assert isinstance(screen, PracticeScreen) and screen.state is host.practice_state
        assert isinstance(host.focused, Input)
        await pilot.press(*_right(screen.variant), "enter")
        assert await wait_until(pilot, lambda: len(host.mastery_messages) == 2)
        assert str(screen.query_one("#practice-feedback", Static).render()).startswith("Right")
        assert host.mastery_messages[-1]["start-here"][0] == 1  # the answer's mastery, as a message
        assert [a.correct for a in store.attempts(screen.variant.problem.id)] == [True]
        await pilot.press("ctrl+o")  # no calculators in this host: a notice, not a crash
        await pilot.pause()
        assert host.screen is screen


async def test_mastery_reaches_the_main_screen_through_the_message(make_app, monkeypatch):
    handled: list[dict[str, tuple[int, int]]] = []
    relay = StudyApp.on_mastery_changed

    def counting(self: StudyApp, message: MasteryChanged) -> None:
        handled.append(message.mastery)
        relay(self, message)

    monkeypatch.setattr(StudyApp, "on_mastery_changed", counting)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        assert main is not None
        app.set_practice_state(PracticeStatusStub("Practice 2/5, 1 due"))
        app.post_message(MasteryChanged({"start-here": (2, 5)}))
        assert await wait_until(pilot, lambda: main.tree.mastery == {"start-here": (2, 5)})
        assert "◆2/5" in str(main.tree.section_node("start-here").label)
        assert "Practice 2/5, 1 due" in str(main.query_one("#status", Static).render())
        for _ in range(3):
            await pilot.pause()
        assert handled == [{"start-here": (2, 5)}]  # handed to the main screen once; it does not come back up


class PracticeStatusStub:
    def __init__(self, text: str) -> None:
        self.text = text

    def status_text(self) -> str:
        return self.text


def test_nothing_in_the_app_package_sets_attributes_on_the_app_or_probes_it():
    """The host is the one way in: no casts to the App class, no getattr on the app, no slots set on it."""
    import pathlib
    import re

    import studytui.tui as tui

    root = pathlib.Path(tui.__file__).parent
    probes = re.compile(r"cast\([\"']?StudyApp|getattr\((self\.)?app\b|getattr\(self\.app|\bapp\.\w+ = |self\.app\.\w+ = ")
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name in ("app.py", "launch.py", "compat.py"):  # compat: private Textual attributes, by design
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if probes.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)

