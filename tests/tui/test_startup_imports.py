"""What the study app imports before its first frame (issue 27: first paint within 1.3x of a bare
Textual app): only what the main screen's first frame shows. Practice, the calculators, the
dialogs, Markdown, YAML and the hand-off policy load when first used; the note panel right after
the first frame."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from studytui.calc.registry import MODULES as CALCULATOR_MODULES

# Runs the app headless until the first frame, the guide and the store loaded first (as the
# launcher does), and prints the modules imported from then until that frame.
SCRIPT = r"""
import asyncio, json, sys
from pathlib import Path

from studytui.guide import load_guide
from studytui.store import open_store

guide = load_guide()
store = open_store(Path(sys.argv[1]))
before = set(sys.modules)
from studytui.tui.app import StudyApp
from studytui.tui.registry import build_registry

app = StudyApp(guide, store, registry=build_registry(), cursor_blink=False)
seen = {}
app.after_first_frame.append(lambda: seen.update(modules=sorted(set(sys.modules) - before)))

async def main():
    async with app.run_test(size=(120, 40)) as pilot:
        while "modules" not in seen:
            await pilot.pause()

asyncio.run(main())
store.close()
print(json.dumps(seen["modules"]))
"""

NOT_BEFORE_THE_FIRST_FRAME = (
    "yaml", "studytui.core.yamlio", "markdown_it", "textual.widgets._markdown", "textual.widgets._text_area",
    "studytui.core.handoff", "studytui.practice", "studytui.tui.practice.state", "studytui.tui.practice.screen",
    "studytui.tui.calc.screens", "studytui.tui.calc.form", "studytui.tui.plan.screen", "studytui.tui.profile.screen",
    "studytui.tui.widgets.note_panel", "studytui.tui.screens.search", "studytui.tui.screens.help",
    "studytui.tui.screens.history", "studytui.tui.screens.glossary", "studytui.tui.screens.policy",
    "studytui.tui.screens.handoff", "studytui.guide.search",
    *CALCULATOR_MODULES,
)


def test_the_first_frame_imports_only_what_the_main_screen_shows(tmp_path: Path) -> None:
    env = dict(os.environ, STUDYTUI_CACHE_DIR=str(tmp_path / "cache"), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "data")], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    imported = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "studytui.tui.screens.main" in imported  # the check sees the app's own imports
    early = sorted(name for name in imported if any(name == bad or name.startswith(bad + ".") for bad in NOT_BEFORE_THE_FIRST_FRAME))
    assert early == []
