"""keys.yaml values are drawn in the footer and on the help screen: only key names are accepted.
Escape sequences (an OSC 52 clipboard write, an OSC 0 title, CSI 2J) are refused with an escaped
warning, the app starts, and no raw ESC reaches what is rendered."""

from __future__ import annotations

import io
from pathlib import Path

from studytui.tui.keymap import parse_keymap, valid_key
from studytui.tui.launch import checked_keymap, show_key_warnings
from studytui.tui.registry import build_registry

from .support import screen_text, wait_until

# As a learner (or a file someone handed them) would write them, YAML escapes and all.
HOSTILE_KEYS_YAML = (
    'next: "\\e]52;c;SGVsbG8=\\e\\\\"\n'  # OSC 52: write "Hello" to the clipboard
    'previous: "\\e]0;pwned\\a"\n'  # OSC 0: retitle the terminal
    'search: "j,\\e[2J"\n'  # CSI 2J: clear the screen, hidden behind a good key
    "help: [question_mark]\n"  # still applied
)


def test_only_key_names_are_accepted() -> None:
    for good in ("j", "G", "/", "?", "é", "ctrl+x", "shift+tab", "f1", "f24", "slash", "question_mark", "ctrl+shift+up"):
        assert valid_key(good), good
    for bad in ("\x1b", "\x1b[2J", "a b", "\u202e", "\u200b", "\t", "ctrl+\x1b", "ctrl++", "x" * 41, "ctrl+/", "\x7f", "é+x"):
        assert not valid_key(bad), ascii(bad)
    warnings: list[str] = []
    keymap = parse_keymap({"next": "j,\x1b]0;t\x07", "previous": ["k", "\u202ek"], "help": "f1"},
                          ["next", "previous", "help"], "keys.yaml", warnings)
    assert keymap == {"help": "f1"}
    assert len(warnings) == 2 and all("not a key name" in w and "\x1b" not in w and "\u202e" not in w for w in warnings)


async def test_escape_sequences_in_keys_yaml_are_refused_and_never_drawn(make_app, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "keys.yaml").write_text(HOSTILE_KEYS_YAML, encoding="utf-8")
    registry = build_registry(plugin_modules=())
    keymap, warnings = checked_keymap(data, registry)
    assert keymap == {"help": "question_mark"}, keymap
    assert len(warnings) == 3, warnings
    app = make_app(keymap=keymap, registry=registry)
    stderr = io.StringIO()
    show_key_warnings(app, warnings, stderr)
    logged = stderr.getvalue()
    assert logged.count("\n") == 3 and "\x1b" not in logged and "\x07" not in logged, ascii(logged)
    assert "\\x1b]52;c;SGVsbG8=\\x1b\\\\" in logged and "\\x1b]0;pwned\\x07" in logged and "\\x1b[2J" in logged
    async with app.run_test(size=(120, 40)) as pilot:
        main_text = screen_text(app)
        assert main_text.strip(), "the app did not paint"
        await pilot.press("question_mark")
        assert await wait_until(pilot, lambda: app.screen.query("#help-table"))
        help_text = screen_text(app) + str(app.screen.query_one("#help-table").content)
        svg = app.export_screenshot()
    for text in (main_text, help_text, svg):
        assert "\x1b" not in text and "\x07" not in text, ascii(text[:200])
        assert "SGVsbG8" not in text and "pwned" not in text
