"""Your own kernels on the roofline, in the study app (issue 30): `studytui --profile-file FILE`,
`P` on the main screen, or "Open profile…" in the palette opens an Nsight Compute CSV export or a
PyTorch profiler trace; the screen shows the roofline with the kernels as points, a table sorted
by time, and for the selected kernel its numbers, its limiter and the guide entries that teach
what to do about it.

The figures are `studytui profile`'s (studytui.profile: load_cached, analyze, and the rows of
`--kernel N` in studytui.profile.report); what to read comes from content/profile-advice.yaml.
Registering imports nothing heavy: the screen, studytui.profile and textual-plotext load when a
profile is first opened. The plug-in reaches the app only through its host (studytui.tui.host).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.screen import Screen

    from studytui.tui.host import StudyHost
    from studytui.tui.registry import Registry

SCREEN_ID = "profile"
KEY = "P"  # free on the main screen (p is previous); remap with `profile: KEY` in keys.yaml
LAST_FILE_KEY = "profile.last_file"  # the store's UI settings: the path the dialog starts with


def absolute(path: str | os.PathLike[str]) -> str:
    """The path as the profile cache keys it: `~` expanded, made absolute (links kept)."""
    return os.path.abspath(os.path.expanduser(os.fspath(path)))


def open_profile(host: StudyHost, path: str | None = None, gpu: str | None = None) -> Screen[Any]:
    """Screen factory: the profile at `path`, or (no path: the palette, `P`) the dialog that asks
    for one."""
    if path:
        from studytui.tui.profile.screen import ProfileScreen

        return ProfileScreen(absolute(path), gpu=gpu)
    from studytui.tui.profile.dialogs import OpenProfileDialog

    return OpenProfileDialog()


def register(registry: Registry) -> None:
    from studytui.tui.registry import ScreenSpec

    registry.add_screen(ScreenSpec(
        id=SCREEN_ID, title="Open profile…", key=KEY,
        description="An Nsight Compute CSV export or a PyTorch profiler trace: your kernels on the roofline",
        factory=open_profile,
    ))
