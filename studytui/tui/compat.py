"""Every private Textual attribute studytui relies on, in one place.

Textual has no public way yet to do these things; each is wrapped here with a short reason and
tested in tests/tui/test_compat.py, so a Textual upgrade that changes one breaks here, in one
place, with a named test. Everything else uses public API only (a test greps for it).
Tested with the Textual version pinned in pyproject.toml.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App
    from textual.binding import Binding
    from textual.dom import DOMNode
    from textual.notifications import Notification
    from textual.widgets import Tree


def write_to_terminal(app: "App[Any]", sequence: str) -> bool:
    """Send a raw control sequence (OSC 52 copy, wrapped for tmux) to the terminal. Textual's
    own copy_to_clipboard cannot wrap it for tmux. False when there is no terminal (headless)."""
    driver = getattr(app, "_driver", None)
    if driver is None:
        return False
    driver.write(sequence)
    return True


def use_no_color_filter(app: "App[Any]") -> None:
    """NO_COLOR: swap Textual's greyscale filter for one that drops colours altogether (the
    greyscale one still emits grey colours and turns the ANSI theme's defaults black)."""
    from textual.filter import Monochrome, NoColor

    app._filters = [NoColor() if isinstance(f, Monochrome) else f for f in app._filters]


def start_in_theme(app: "App[Any]", name: str) -> None:
    """Before the app runs: make `name` (a registered theme) the theme, as setting `App.theme`
    does (its classes, the ANSI-to-truecolor filter, the stylesheet's variables), but without the
    re-parse of every CSS rule and restyle that Textual schedules for a change of theme: nothing
    has been parsed yet, so the stylesheet is parsed once, in this theme. (Setting `App.theme`
    cost a learner with a saved theme a whole second parse before the first frame.) Public API
    except the filter, which Textual refreshes only through a private method."""
    from textual.app import App

    if name == app.theme:
        return  # as setting the same theme: nothing changes
    app.set_reactive(App.theme, name)
    theme = app.current_theme
    app.set_class(False, *[c for c in app.classes if c.startswith("-theme-")], update=False)
    app.set_class(True, f"-theme-{name}", update=False)
    app.set_class(theme.dark, "-dark-mode", update=False)
    app.set_class(not theme.dark, "-light-mode", update=False)
    app._refresh_truecolor_filter(app.ansi_theme)
    app.stylesheet.set_variables(app.get_css_variables())


def line_filters(app: "App[Any]") -> list[Any]:
    return list(app._filters)


def key_bindings(node: "DOMNode") -> "dict[str, list[Binding]]":
    """A node's own bindings by key (mutable: screens add the registry's keys at start)."""
    return node._bindings.key_to_bindings


def keys_bound_here(screen: "DOMNode") -> "set[str]":
    """Every key a binding answers on `screen` now: the focused widget and its ancestors, the
    screen, and the app (for a modal, not the screens under it)."""
    chain = screen._modal_binding_chain  # type: ignore[attr-defined]
    return {key for _namespace, bindings in chain for key in bindings.key_to_bindings}


def key_was_stopped(event: Any) -> bool:
    """Whether a handler called `event.stop()` (Message keeps it private)."""
    return bool(event._stop_propagation)


def lay_out_tree(tree: "Tree[Any]") -> None:
    """Build a Tree's lines now (Tree builds them lazily, so a node just expanded has no line
    to move the cursor to until the next refresh)."""
    tree._tree_lines  # noqa: B018


# --- for tests ---------------------------------------------------------------------------------
def screen_lines(app: "App[Any]") -> list[Any]:
    """The current screen as rendered strips, one per row (what a snapshot would show)."""
    return list(app.screen._compositor.render_strips())


def notifications(app: "App[Any]") -> "list[Notification]":
    """Notifications currently shown or queued."""
    return list(app._notifications)


def set_pilot_idle_slice(seconds: float) -> None:
    """Tests: the slice Textual's Pilot watches the process for before calling it idle (after
    every key and pause). Textual uses 20 ms; two slices per key were most of the app tests'
    waiting. Idle still means a whole slice with (almost) no CPU spent."""
    import textual._wait as wait

    wait.SLEEP_GRANULARITY = seconds
    wait.SLEEP_IDLE = seconds / 20  # the same share of the slice as Textual's own


def skip_headless_frames() -> None:
    """Tests: a headless app (Pilot) renders every frame and throws it away (`App._display` writes
    nothing without a terminal); that rendering was a third of the app tests' CPU. After this call
    a headless top screen only forgets what was dirty. What a test reads is rendered when it reads
    it (`screen_lines`, snapshots, screenshots render the whole screen); real-terminal tests (tmux)
    and the app itself are untouched."""
    from textual.screen import Screen

    original = Screen._compositor_refresh
    if getattr(original, "_studytui_skips_headless", False):
        return

    def refresh(self: Screen[Any]) -> None:
        app = self.app
        if app.is_headless and not app.is_inline and self is app.screen:
            self._compositor._dirty_regions.clear()
            self._dirty_widgets.clear()
            app._update_mouse_over(self)
            return
        original(self)

    refresh._studytui_skips_headless = True  # type: ignore[attr-defined]
    Screen._compositor_refresh = refresh  # type: ignore[method-assign]

    # A mouse event finds its widget by reading the rendered line under the pointer
    # (Compositor.get_widget_and_offset_at calls render_line), which some widgets (Tree) can only
    # do after one render of theirs: render the screen once before the pilot moves the mouse, as a
    # terminal would have shown it.
    from textual.pilot import Pilot

    post_mouse = Pilot._post_mouse_events

    async def post_mouse_events(self: Pilot[Any], *args: Any, **kwargs: Any) -> Any:
        app = self.app
        if app.is_headless:
            list(app.screen._compositor.render_strips())
        return await post_mouse(self, *args, **kwargs)

    Pilot._post_mouse_events = post_mouse_events  # type: ignore[method-assign]
