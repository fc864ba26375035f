"""Start the study app (`studytui` with no command).

Kept apart from studytui/tui so the CLI imports Textual only when the app is really started.

Benchmark-only switch: STUDYTUI_SYNTHETIC=N replaces the guide with a generated one of N entries
(used by benchmarks/bench_tui.py to time startup on a large guide). Not for normal use.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TextIO

from studytui.core.errors import UsageError

if TYPE_CHECKING:  # for the annotations only: Textual and the app load when the app starts
    from textual.binding import Binding

    from studytui.guide.model import Guide
    from studytui.tui.app import StudyApp
    from studytui.tui.registry import Registry

SYNTHETIC_ENV = "STUDYTUI_SYNTHETIC"


def _guide(args: argparse.Namespace) -> Guide:
    synthetic = os.environ.get(SYNTHETIC_ENV)
    if synthetic:
        from studytui.guide.synthetic import synthetic_guide

        try:
            count = int(synthetic)
        except ValueError:
            raise UsageError(f"{SYNTHETIC_ENV} must be a number of entries, not {synthetic!r}") from None
        return synthetic_guide(n_entries=count)
    from studytui.guide import load_guide

    return load_guide(getattr(args, "content", None))


def launch(args: argparse.Namespace) -> int:
    """Run the app; returns the exit status. Errors before the app starts are one line each."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        sys.stderr.write(
            "studytui: the study app needs an interactive terminal; "
            "use a command instead (see 'studytui --help')\n"
        )
        return 2
    # Startup builds many long-lived objects (Textual's classes, the guide) and little garbage:
    # collecting while it runs costs tens of milliseconds before the first frame for nothing.
    # Collection resumes right after that frame (or when launching fails).
    if not gc.isenabled():
        return _launch(args, resume_gc=None)
    gc.disable()
    try:
        return _launch(args, resume_gc=gc.enable)
    finally:
        gc.enable()


def run_app(args: argparse.Namespace) -> int:
    """The app for one browser tab (studytui.serve.served): no collector pause, no first-frame
    tricks; the same guide, store and checks as `launch`."""
    return _launch(args, resume_gc=None)


def _launch(args: argparse.Namespace, resume_gc: Callable[[], None] | None) -> int:
    from studytui.core.paths import data_dir
    from studytui.study.workspace import open_workspace

    guide = _guide(args)
    changes = _guide_changes(args)  # --readme: a bad file is one line and exit 2, before the app starts
    profile_file = _profile_file(args)  # --profile-file: the same, for a file studytui refuses to read
    data = data_dir(getattr(args, "data_dir", None))
    guide, store = open_workspace(data_dir=data, guide=guide)  # the commands' rule: progress follows renamed entries
    try:
        from studytui.tui.app import StudyApp
        from studytui.tui.registry import build_registry
        from studytui.tui.screens.main import MainScreen

        registry = build_registry()
        keymap, key_warnings = checked_keymap(data, registry)
        app = StudyApp(guide, store, registry=registry, keymap=keymap)
        show_key_warnings(app, key_warnings)
        if resume_gc is not None:
            app.after_first_frame.append(resume_gc)
        if changes is not None:
            from studytui.tui.screens.guide_changes import GuideChangesScreen

            def show_changes() -> None:
                app.push_screen(GuideChangesScreen(*changes))

            app.after_first_frame.append(show_changes)
        if profile_file is not None:
            from studytui.tui.profile import SCREEN_ID as PROFILE_SCREEN

            def show_profile() -> None:
                app.open_screen(PROFILE_SCREEN, path=profile_file)

            app.after_first_frame.append(show_profile)
        try:
            app.run()
        finally:
            app.cancel_exit_watchdog()  # run() returned: no hang to cut short
            # Whatever ended the app (quit, crash, signal), the note being typed is saved.
            save_what_is_left(app, data)
            main = app.main_screen
            if isinstance(main, MainScreen):
                try:
                    main.save_last_viewed()
                except Exception:  # where to resume is a convenience; never fail the exit on it
                    pass
        return int(app.return_code or 0)
    finally:
        store.close()


def _guide_changes(args: argparse.Namespace) -> tuple | None:
    """(README path, differences, learner impacts) for `--readme FILE`, else None."""
    readme = getattr(args, "app_readme", None)
    if not readme:
        return None
    from studytui.study.guide_changes import compute

    changes = compute(getattr(args, "content", None), getattr(args, "data_dir", None), readme)
    return changes.diff.readme, changes.diff.differences, changes.impacts


def _profile_file(args: argparse.Namespace) -> str | None:
    """The absolute path of `--profile-file FILE`, read (and kept: the profile screen finds it
    read), else None. ProfileError (one line, exit 2) for a file studytui will not read."""
    path = getattr(args, "app_profile_file", None)
    if not path:
        return None
    from studytui.profile import load_cached
    from studytui.tui.profile import absolute

    full = absolute(path)
    try:
        size = os.stat(full).st_size
    except OSError:
        size = 0
    if size > 32 * 1024 * 1024:
        from studytui.core.text import one_line

        sys.stderr.write(f"studytui: reading {one_line(path)} ({size / 1e6:,.0f} MB)…\n")
    load_cached(full)
    return full


def save_what_is_left(app: StudyApp, data: Path) -> Path | None:
    """Flush the note draft after the app has stopped. If the store refuses it, write the text to
    a private file (in the data directory, else $XDG_STATE_HOME/studytui) and say where, so no note is lost.
    Returns that file's path, or None when the store took the note."""
    return app.session.save_what_is_left(data)


def checked_keymap(data: Path, registry) -> tuple[dict[str, str], list[str]]:
    """keys.yaml applied as far as it can be: unknown ids and keys stolen from another action
    are left out and reported, never a reason not to start."""
    from studytui.tui.keymap import conflicts, load_keymap

    warnings: list[str] = []
    keymap = load_keymap(data, binding_ids(registry), warnings)
    keymap, clashes = conflicts(keymap, binding_keys(registry))
    return keymap, warnings + clashes


def show_key_warnings(app: StudyApp, warnings: list[str], stream: TextIO | None = None) -> None:
    """keys.yaml warnings on stderr (seen after quitting) and, after the first frame, in the app.
    They quote the file (ids, keys, its path): one line each, control characters (an OSC 52
    clipboard write, a bidi override) shown escaped, and never read as markup."""
    from studytui.core.text import one_line

    stream = sys.stderr if stream is None else stream
    for warning in warnings:
        shown = one_line(warning)
        stream.write(f"studytui: {shown}\n")

        def notify(w: str = shown) -> None:
            app.notify(w, title="keys.yaml", severity="warning", timeout=10, markup=False)

        app.after_first_frame.append(notify)


def _remappable() -> list[Binding]:
    """The app's and the main screen's bindings that have an id (the ones keys.yaml may remap)."""
    from textual.binding import Binding

    from studytui.tui.app import StudyApp
    from studytui.tui.screens.main import MainScreen

    return [b for b in [*MainScreen.BINDINGS, *StudyApp.BINDINGS] if isinstance(b, Binding) and b.id]


def binding_keys(registry) -> dict[str, str]:
    """Every remappable binding id with its default keys (comma separated)."""
    keys = {b.id: b.key for b in _remappable() if b.id}
    keys.update({spec.id: spec.key for spec in registry.screens.values() if spec.key})
    return keys


def binding_ids(registry: Registry) -> list[str]:
    """Every binding id users may remap in keys.yaml."""
    ids = [b.id for b in _remappable() if b.id]
    ids += list(registry.screens)
    return [i for i in ids if i]
