"""Hostile input is normal input: each case through the real command line gives one line on
stderr, the documented exit status, no traceback, and changes nothing on disk."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from studytui.core.paths import content_dir
from studytui.guide import load_guide
from studytui.store import open_store
from tests.support import app_refusal

GUIDE = load_guide()
FIRST = GUIDE.entries[0].id
LONG = "a" * 300  # one path component over the 255-byte limit of common file systems


def _export_with(**entry: object) -> dict:
    return {"format": "studytui-progress", "version": 1, "entries": [{"entry_id": FIRST, **entry}]}


def _nested_json(depth: int) -> str:
    return '{"format": "studytui-progress", "version": 1, "entries": ' + "[" * depth + "]" * depth + "}"


def _snapshot(*roots: Path) -> dict[str, bytes | None]:
    """Every file (and directory) under the roots, with its bytes: "nothing changed" is equality."""
    out: dict[str, bytes | None] = {}
    for root in roots:
        for dirpath, _dirnames, filenames in os.walk(root):
            out[dirpath] = None
            for name in filenames:
                path = Path(dirpath, name)
                out[str(path)] = path.read_bytes()
    return out


class Case:
    def __init__(self, argv: list[str], code: int, setup: Callable[[Path, Path], None] | None = None,
                 needle: str = "", stdin: str | None = None, env: dict[str, str] | None = None):
        self.argv, self.code, self.setup, self.needle, self.stdin, self.env = argv, code, setup, needle, stdin, env


def _write(name: str, text: str | bytes) -> Callable[[Path, Path], None]:
    def setup(data: Path, work: Path) -> None:
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return setup


def _content_with(change: Callable[[str], str]) -> Callable[[Path, Path], None]:
    def setup(data: Path, work: Path) -> None:
        shutil.copytree(content_dir(), work / "content")
        section = work / "content" / "sections" / sorted(os.listdir(work / "content" / "sections"))[0]
        section.write_text(change(section.read_text(encoding="utf-8")), encoding="utf-8")
    return setup


def _first_entry_field(field: str, value: str) -> Callable[[str], str]:
    """Insert `field: value` under the first entry's id line of a section file."""
    def change(text: str) -> str:
        lines = text.splitlines()
        for i, line in enumerate(lines):
            stripped = line.lstrip()
            if stripped.startswith("- id:") and i > 0 and "entries" in "".join(lines[max(0, i - 3):i]):
                indent = " " * (len(line) - len(stripped) + 2)
                lines.insert(i + 1, f"{indent}{field}: {value}")
                return "\n".join(lines) + "\n"
        raise AssertionError("no entry found")
    return change


def _editor(script: str) -> Callable[[Path, Path], None]:
    def setup(data: Path, work: Path) -> None:
        (work / "editor.py").write_text(script, encoding="utf-8")
    return setup


def _profile_with_achieved_fast(data: Path, work: Path) -> None:
    """The shipped H200 profile with one accepted result's `achieved` block replaced by a word."""
    text = (content_dir() / "hardware" / "measured" / "h200-sxm.yaml").read_text(encoding="utf-8")
    changed = re.sub(r"achieved:\n(\s+(median|min|max|unit): [^\n]+\n)+", "achieved: fast\n", text, count=1)
    assert changed != text
    (work / "p.yaml").write_text(changed, encoding="utf-8")


EDITOR_ENV = {"VISUAL": f"{sys.executable} {{work}}/editor.py"}

CASES = {
    "import of 5,000-level nested JSON": Case(
        ["import", "{work}/deep.json"], 2, _write("deep.json", _nested_json(5000)), "nested too deeply"
    ),
    "timestamp overflowing after conversion (9999)": Case(
        ["import", "{work}/t.json"],
        2,
        _write("t.json", json.dumps(_export_with(state="done", state_changed_at="9999-12-31T23:59:59-05:00"))),
        "out of range",
    ),
    "timestamp overflowing after conversion (0001)": Case(
        ["import", "{work}/t.json"],
        2,
        _write("t.json", json.dumps(_export_with(note="x", note_updated_at="0001-01-01T00:00:00+14:00"))),
        "out of range",
    ),
    "timestamp far in the future": Case(
        ["import", "{work}/t.json"],
        2,
        _write("t.json", json.dumps(_export_with(state="done", state_changed_at="2999-01-01T00:00:00Z"))),
        "in the future",
    ),
    '"version": true is not version 1': Case(
        ["import", "{work}/t.json"],
        2,
        _write("t.json", json.dumps({**_export_with(state="done"), "version": True})),
        "unsupported export version",
    ),
    "export path component over 255": Case(["export", "{work}/" + LONG + ".json"], 2, None, "too long"),
    "--data-dir component over 255": Case(["--data-dir", "{work}/" + LONG, "progress"], 2, None, "too long"),
    "--content component over 255": Case(["--content", "{work}/" + LONG, "list"], 2, None, "too long"),
    "--profile component over 255": Case(
        ["calc", "roofline", "--gpu", "h100-sxm", "--flops", "1e12", "--bytes", "1e9", "--profile", "{work}/" + LONG + ".yaml"], 2, None, ""
    ),
    "--model component over 255": Case(["calc", "transformer", "--gpu", "h100-sxm", "--model", "{work}/" + LONG + ".yaml"], 2, None, ""),
    "content year of 5,000 digits": Case(
        ["--content", "{work}/content", "list"],
        1,
        _content_with(lambda t: re.sub(r"year: \d+", "year: " + "9" * 5000, t, count=1)),
        "number too long",
    ),
    "content with a duplicate key": Case(
        ["--content", "{work}/content", "list"], 1, _content_with(_first_entry_field("id", "dup-id-again")), "duplicate key"
    ),
    "user hardware file 'accelerators: 5'": Case(["gpus"], 2, _write("data/hardware/mine.yaml", "accelerators: 5\n"), "mine.yaml"),
    "user hardware file not UTF-8": Case(["gpus"], 2, _write("data/hardware/mine.yaml", b"id: caf\xe9\n"), "mine.yaml"),
    "measured profile with achieved: fast": Case(
        ["calc", "roofline", "--gpu", "h200-sxm", "--flops", "1e12", "--bytes", "1e9", "--profile", "{work}/p.yaml"],
        2,
        _profile_with_achieved_fast,
        "p.yaml",
    ),
    "measured profile not UTF-8": Case(
        ["calc", "roofline", "--gpu", "h200-sxm", "--flops", "1e12", "--bytes", "1e9", "--profile", "{work}/p.yaml"],
        2,
        _write("p.yaml", b"schema: caf\xe9\n"),
        "p.yaml",
    ),
    "a newline in an id": Case(["mark", "no\nsuch\nentry", "done"], 2, None, "unknown entry id"),
    "an escape sequence in an id": Case(["note", "x\x1b]0;owned\x07"], 2, None, "\\x1b"),
    "note ID - with empty stdin": Case(["note", FIRST, "-"], 2, None, "empty", stdin=""),
    "$EDITOR deletes the temp file": Case(
        ["note", FIRST, "--edit"], 2, _editor("import os, sys\nos.unlink(sys.argv[1])\n"), "removed the temporary file", env=EDITOR_ENV
    ),
    "$EDITOR replaces the temp file with a directory": Case(
        ["note", FIRST, "--edit"],
        2,
        _editor("import os, sys\nos.unlink(sys.argv[1])\nos.mkdir(sys.argv[1])\n"),
        "not a file",
        env=EDITOR_ENV,
    ),
}


def _fill(text: str, work: Path) -> str:
    return text.replace("{work}", str(work))


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_gives_one_line_and_changes_nothing(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    work, data = tmp_path / "work", tmp_path / "work" / "data"
    data.mkdir(parents=True)
    store = open_store(data)
    store.set_note(FIRST, "my note, before anything hostile")
    store.close()
    if case.setup:
        case.setup(data, work)
    before = _snapshot(work)
    env = {**os.environ, "STUDYTUI_DATA_DIR": str(data), "NO_COLOR": "1"}
    env.update({k: _fill(v, work) for k, v in (case.env or {}).items()})
    proc = subprocess.run(
        [sys.executable, "-m", "studytui.cli", *(_fill(a, work) for a in case.argv)],
        input=(case.stdin or "").encode(), capture_output=True, env=env, timeout=120, cwd=tmp_path,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert proc.returncode == case.code, err
    assert err.count("\n") == 1 and err.startswith("studytui: error: "), err
    assert case.needle in err, err
    after = _snapshot(work)
    assert after == before, "files changed"
    assert not [p for p in (work).rglob("*.tmp")]


def test_keys_yaml_nested_3000_levels_is_one_line(tmp_path: Path) -> None:
    """keys.yaml is read when the app starts, so this runs at a (pseudo-)terminal."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "keys.yaml").write_text("next: " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    code, err = app_refusal(data)
    assert "Traceback" not in err and code == 2, err
    assert err.count("\n") == 1 and "nested too deeply" in err, err
