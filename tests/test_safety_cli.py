"""Nothing a learner writes is lost or turned against them, through the command line."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.core.paths import content_dir
from studytui.guide import load_guide
from studytui.store import open_store

GUIDE = load_guide()
FIRST, SECOND = GUIDE.entries[0].id, GUIDE.entries[1].id
HOSTILE = "title \x1b]0;owned\x07 clipboard \x1b]52;c;cm0gLXJmIH4=\x07 clear \x1b[2J csi \x9b31m end"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def at_terminal(argv: list[str], data: Path, stdin: bytes | None = None) -> bytes:
    """Run the CLI with stdout on a pseudo-terminal; returns what reached the terminal."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "studytui.cli", "--data-dir", str(data), *argv],
        stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(master)
    assert proc.returncode == 0, b"".join(chunks)
    return b"".join(chunks)


# -- note - and note --edit -----------------------------------------------------------------


def test_empty_stdin_never_empties_a_note_but_text_empty_clears(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    open_store().set_note(FIRST, "keep me")
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    code, out, err = run(capsys, "note", FIRST, "-")
    assert code == 2 and err.count("\n") == 1 and "empty" in err and '--text ""' in err
    assert open_store().get_note(FIRST) == "keep me"
    code, _, _ = run(capsys, "note", FIRST, "--text", "")
    assert code == 0 and open_store().get_note(FIRST) == ""


def test_edit_keeps_both_when_the_note_changed_while_the_editor_was_open(
    tmp_path: Path, isolated_data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    open_store().set_note(FIRST, "v1")
    editor = tmp_path / "editor.py"
    # While "editing", another studytui saves the note; then the editor saves its own text.
    editor.write_text(
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, '-m', 'studytui.cli', '--data-dir', {str(isolated_data_dir)!r}, "
        f"'note', {FIRST!r}, '--text', 'from the CLI'], check=True)\n"
        "open(sys.argv[1], 'a').write(' + typed in the editor')\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    code, out, err = run(capsys, "note", FIRST, "--edit")
    assert code == 0, err
    note = open_store().get_note(FIRST)
    assert "from the CLI" in note and "v1 + typed in the editor" in note
    assert "--- studytui: conflicting note" in note
    assert "changed while the editor was open" in err and "the changes were merged" in err
    # Every version is in the history.
    texts = [v.text for v in open_store().note_history(FIRST)]
    assert texts[:2] == ["v1", "from the CLI"] and texts[-1] == note


def test_edit_without_a_concurrent_change_just_saves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    open_store().set_note(FIRST, "v1")
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'a').write(' more')\n", encoding="utf-8")
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    code, out, err = run(capsys, "note", FIRST, "--edit")
    assert code == 0 and err == "" and open_store().get_note(FIRST) == "v1 more"


# -- export ---------------------------------------------------------------------------------


def test_export_writes_through_a_symlink_to_its_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    open_store().set_note(FIRST, "backed up")
    backups = tmp_path / "backups"
    backups.mkdir()
    target = backups / "progress.json"
    target.write_text("old backup", encoding="utf-8")
    os.chmod(target, 0o640)
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    code, _, err = run(capsys, "export", str(link))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text(encoding="utf-8"))["entries"][0]["note"] == "backed up"
    assert (os.stat(target).st_mode & 0o777) == 0o640
    # A dangling link: the target is created.
    dangling = tmp_path / "next.json"
    dangling.symlink_to(backups / "new.json")
    assert run(capsys, "export", str(dangling))[0] == 0
    assert dangling.is_symlink() and (backups / "new.json").is_file()
    assert not list(tmp_path.rglob("*.tmp"))


def test_export_refuses_fifos_devices_and_directories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    open_store().set_note(FIRST, "x")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link_to_device = tmp_path / "null.json"
    link_to_device.symlink_to("/dev/null")
    for path, word in ((fifo, "FIFO"), (Path("/dev/null"), "device"), (link_to_device, "device"), (tmp_path, "directory")):
        code, _, err = run(capsys, "export", str(path))
        assert code == 2 and err.count("\n") == 1 and word in err and "nothing was written" in err, err
    assert fifo.exists() and not fifo.is_file() and link_to_device.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null.json", "pipe"]


def test_a_failed_export_leaves_no_temp_file_and_the_old_file_intact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    open_store().set_note(FIRST, "x" * 100_000)
    old = tmp_path / "backup.json"
    old.write_text("previous backup", encoding="utf-8")

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    code, _, err = run(capsys, "export", str(old))
    assert code == 2 and err.count("\n") == 1 and "No space left on device" in err, err
    assert old.read_text(encoding="utf-8") == "previous backup"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backup.json"]


# -- history --------------------------------------------------------------------------------


def test_history_lists_versions_and_restores_one_as_a_new_version(capsys: pytest.CaptureFixture[str]) -> None:
    s = open_store()
    for text in ("first", "second", "third"):
        s.set_note(FIRST, text)
    s.close()
    code, out, err = run(capsys, "history", FIRST, "--json")
    assert code == 0, err
    versions = json.loads(out)["versions"]
    assert [v["text"] for v in versions] == ["first", "second", "third"]
    assert [v["number"] for v in versions] == [1, 2, 3] and all(v["at"] for v in versions)
    assert [v["current"] for v in versions] == [False, False, True]
    code, out, _ = run(capsys, "history", FIRST)
    assert code == 0 and "first" in out and "current" in out and "--restore N" in out
    code, out, _ = run(capsys, "history", FIRST, "--show", "2")
    assert code == 0 and out == "second"
    code, out, _ = run(capsys, "history", FIRST, "--restore", "1")
    assert code == 0 and "restored as version 4" in out
    assert open_store().get_note(FIRST) == "first"
    versions = json.loads(run(capsys, "history", FIRST, "--json")[1])["versions"]
    assert [v["text"] for v in versions] == ["first", "second", "third", "first"]
    assert versions[-1]["restored_from"] == 1 and versions[-1]["current"]
    code, _, err = run(capsys, "history", FIRST, "--restore", "9")
    assert code == 2 and "no version 9" in err and err.count("\n") == 1
    code, _, err = run(capsys, "history", "no-such-entry")
    assert code == 2 and "unknown entry id" in err


def test_history_keeps_a_note_that_came_from_an_import(tmp_path: Path) -> None:
    """A merged note never went through set_note; overwriting it must still leave it in the history."""
    a, b = open_store(tmp_path / "a"), open_store(tmp_path / "b")
    a.set_note("x", "mine")
    b.set_note("x", "theirs")
    exported = b.export_json()
    exported["events"] = []  # a hand-trimmed export: only the entry itself
    a.import_json(exported, known_ids={"x"}, source="laptop.json")
    merged = a.get_note("x")
    assert "mine" in merged and "theirs" in merged
    a.set_note("x", "rewritten")
    texts = [v.text for v in a.note_history("x")]
    assert texts == ["mine", merged, "rewritten"]
    assert a.restore_note("x", 2) and a.get_note("x") == merged


# -- text that must stay text ---------------------------------------------------------------


def test_control_characters_are_visible_at_a_terminal_and_verbatim_elsewhere(
    isolated_data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = open_store()
    s.set_note(FIRST, HOSTILE)
    s.close()
    shown = at_terminal(["note", FIRST], isolated_data_dir)
    assert b"\x1b" not in shown and b"\xc2\x9b" not in shown
    assert b"\\x1b]0;owned\\x07" in shown and b"\\x9b31m" in shown
    journal = at_terminal(["export", "-", "--format", "md"], isolated_data_dir)
    assert b"\x1b" not in journal and b"\\x1b]52;c;" in journal
    history = at_terminal(["history", FIRST, "--show", "1"], isolated_data_dir)
    assert b"\x1b" not in history and b"\\x1b[2J" in history
    # Not a terminal: the bytes as stored, in text and in JSON.
    code, out, _ = run(capsys, "note", FIRST)
    assert code == 0 and out == HOSTILE
    code, out, _ = run(capsys, "export", "-", "--format", "md")
    assert HOSTILE in out
    code, out, _ = run(capsys, "export", "-")
    assert json.loads(out)["entries"][0]["note"] == HOSTILE


def test_a_note_at_a_terminal_ends_on_exactly_one_new_line(isolated_data_dir: Path) -> None:
    s = open_store()
    s.set_note(FIRST, "no final newline")
    s.set_section_note(GUIDE.sections[0].id, "section words")
    s.close()
    # The pty turns "\n" into "\r\n"; one line break, so the prompt is neither glued on nor pushed down.
    assert at_terminal(["note", FIRST], isolated_data_dir) == b"no final newline\r\n"
    assert at_terminal(["note", GUIDE.sections[0].id], isolated_data_dir) == b"section words\r\n"


def test_orphan_ids_with_escapes_cannot_retitle_the_terminal(tmp_path: Path, isolated_data_dir: Path) -> None:
    orphan = "gone\x1b]0;pwned\x07"
    export = tmp_path / "in.json"
    export.write_text(json.dumps({"format": "studytui-progress", "version": 1,
                                  "entries": [{"entry_id": orphan, "state": "done", "note": "n"}]}), encoding="utf-8")
    shown = at_terminal(["import", str(export)], isolated_data_dir)
    assert b"\x1b]0;" not in shown and b"gone\\x1b]0;pwned\\x07" in shown
    shown = at_terminal(["progress"], isolated_data_dir)  # Rich styles the table; the id stays text
    assert b"\x1b]0;" not in shown and b"gone\\x1b]0;pwned\\x07" in shown
    assert orphan in open_store().states()  # stored verbatim


def test_a_conflict_from_a_file_named_in_non_utf8_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    open_store().set_note(FIRST, "mine")
    name = os.fsdecode(b"caf\xe9.json")
    (tmp_path / name).write_text(json.dumps({"format": "studytui-progress", "version": 1,
                                            "entries": [{"entry_id": FIRST, "note": "theirs"}]}), encoding="utf-8")
    code, out, err = run(capsys, "import", str(tmp_path / name))
    assert code == 0, err
    assert "caf\ufffd.json" in out and FIRST in out
    note = open_store().get_note(FIRST)
    assert "mine" in note and "theirs" in note and "caf\ufffd.json" in note


@pytest.mark.parametrize("query", ["zzqq[bold]hello[/bold]", "[/]", "zzqq[zzqq=zzqq]"])
def test_search_messages_show_markup_as_text(query: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "search", query)
    assert code == 0 and err == ""
    assert out.strip() == f"No entries match {query!r}."


# -- content ---------------------------------------------------------------------------------


def _content_copy(tmp_path: Path) -> tuple[Path, Path]:
    dest = tmp_path / "content"
    # Without the practice problems: these tests break the guide's files, and the problem check
    # (two thirds of a check) is tested with test_practice.py.
    shutil.copytree(content_dir(), dest, ignore=shutil.ignore_patterns("problems"))
    section = sorted((dest / "sections").glob("*.yaml"))[0]
    return dest, section


@pytest.mark.parametrize(
    "field, value, problem",
    [
        ("url", '"https://example.com/\\x1b]0;x\\x07"', "control character"),
        ("url", '"https://example.com/a\\nb"', "control character"),
        ("url", '"https://example.com/a\\tb"', "control character"),
        ("title", '"Nice \\x1b[2J title"', "control character"),
    ],
)
def test_check_rejects_control_characters_in_content_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: str, problem: str
) -> None:
    dest, section = _content_copy(tmp_path)
    lines = section.read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if re.match(rf"\s+{field}: ", line))
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    lines[index] = f"{indent}{field}: {value}"
    section.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "--content", str(dest), "check")
    text = out + err
    assert code == 1
    assert re.search(rf"{re.escape(section.name)}:{index + 1}: .*{problem}", text), text
    assert "\x1b" not in text


def test_a_duplicate_key_in_content_is_an_error_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest, section = _content_copy(tmp_path)
    lines = section.read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if re.match(r"\s+url: ", line))
    lines.insert(index + 1, lines[index].replace("https://", "https://second."))
    section.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "--content", str(dest), "check")
    assert code == 1
    assert re.search(rf"{re.escape(section.name)}:{index + 2}: .*duplicate key 'url'", out + err), out + err


# -- properties -----------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from studytui.cli.output import one_line, visible  # noqa: E402

_TERMINAL_COMMANDS = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FF)))
def test_visible_text_holds_no_terminal_command_and_keeps_every_other_character(text: str) -> None:
    shown = visible(text)
    assert not _TERMINAL_COMMANDS.search(shown)
    # Each command character becomes its \\xNN escape; everything else passes through, in order.
    expected = "".join(
        f"\\x{ord(c):02x}" if _TERMINAL_COMMANDS.match(text, i) else c for i, c in enumerate(text)
    )
    assert shown == expected
    assert "\n" not in one_line(text) and not _TERMINAL_COMMANDS.search(one_line(text))


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.text(max_size=30), min_size=1, max_size=8), pick=st.integers(0, 100))
def test_every_saved_version_is_in_the_history_and_any_can_be_restored(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], pick: int
) -> None:
    s = open_store(tmp_path_factory.mktemp("hist"))
    saved: list[str] = []
    for text in texts:
        before = s.get_note("e")
        s.set_note("e", text)
        if text != before:
            saved.append(text)
    versions = s.note_history("e")
    assert [v.text for v in versions] == saved
    if saved:
        n = pick % len(saved) + 1
        s.restore_note("e", n)
        assert s.get_note("e") == saved[n - 1]
        after = s.note_history("e")
        assert [v.text for v in after[: len(saved)]] == saved  # nothing removed or renumbered
        assert after[-1].current
    s.close()
