"""The study flow end to end through the command line (in-process and a few real processes)."""

from __future__ import annotations

import io
import json
import os
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
FIRST, SECOND, THIRD = (e.id for e in GUIDE.entries[:3])
NASTY = [
    "[bold red]not bold[/bold red] [link=https://x]y[/link] [/] :smile: :warning:",
    "\x1b[31mred\x1b[0m and an OSC 8 link \x1b]8;;https://evil\x1b\\text\x1b]8;;\x1b\\",
    "$(rm -rf ~) `whoami` ; | && > /dev/null 'single' \"double\" \\back %s {0} $HOME",
    "unicode: é ñ 中文 😀 \u200b, RTL \u202e txet\nsecond line\r\nthird\n\n",
    "# Markdown heading\n\n- [ ] task\n```py\nprint('x')\n```",
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str):
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


def test_the_study_flow(capsys: pytest.CaptureFixture[str]) -> None:
    first = run_json(capsys, "next", "--json")
    assert first["id"] == FIRST == GUIDE.sections[0].entries[0].id  # fresh start: Start here
    # Showing is not studying: asking again (and again) gives the same entry.
    assert run_json(capsys, "next", "--json")["id"] == FIRST
    assert run_json(capsys, "next", "--json")["id"] == FIRST
    code, out, _ = run(capsys, "next")
    assert code == 0 and GUIDE.entries[0].title[:20] in out
    assert open_store().last_viewed() is None  # the app still reopens where the learner was
    code, out, _ = run(capsys, "mark", SECOND, "done")
    assert code == 0 and SECOND in out and "done" in out
    assert run(capsys, "mark", FIRST, "skipped")[0] == 0
    assert run(capsys, "mark", THIRD, "learning")[0] == 0
    # THIRD is being learned: an entry in progress is continued first (second review, H4).
    nxt = run_json(capsys, "next", "--json")
    assert (nxt["id"], nxt["state"]) == (THIRD, "learning")
    progress = run_json(capsys, "progress", "--json")
    assert (progress["done"], progress["skipped"], progress["learning"]) == (1, 1, 1)
    assert progress["pending"] == len(GUIDE.entries) - 3 and progress["total"] == len(GUIDE.entries)
    start = progress["sections"][0]
    assert (start["id"], start["done"], start["skipped"], start["learning"]) == (GUIDE.sections[0].id, 1, 1, 1)
    assert progress["orphans"] == []
    code, out, _ = run(capsys, "progress")
    assert code == 0 and "skipped" in out and GUIDE.sections[0].title[:10] in out
    code, out, _ = run(capsys, "next")
    assert code == 0 and GUIDE.entries[2].title[:20] in out  # the same entry: showing moved nothing
    assert "You are learning this one" in out and "(or skipped)" in out
    # Done with it: the first pending entry after it.
    assert run(capsys, "mark", THIRD, "done")[0] == 0
    nxt = run_json(capsys, "next", "--json")
    assert (nxt["id"], nxt["state"]) == (GUIDE.entries[3].id, "pending")


def test_next_when_everything_is_covered(capsys: pytest.CaptureFixture[str]) -> None:
    store = open_store()
    for e in GUIDE.entries:
        store.set_state(e.id, "done")
    store.close()
    code, out, _ = run(capsys, "next")
    assert code == 0 and "Nothing pending" in out
    assert run_json(capsys, "next", "--json") is None


def test_unknown_id_and_state_are_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "mark", FIRST + "x", "done")
    assert code == 2 and err.count("\n") == 1 and "unknown entry id" in err and FIRST in err
    code, out, err = run(capsys, "mark", FIRST, "finished")
    assert code == 2 and err.count("\n") == 1 and "unknown state 'finished'" in err
    code, out, err = run(capsys, "note", "no-such-entry", "--text", "x")
    assert code == 2 and "unknown entry id" in err
    code, out, err = run(capsys, "note", "no-such-entry")
    assert code == 2
    assert open_store().states() == {}


@pytest.mark.parametrize("text", NASTY)
def test_notes_print_back_byte_for_byte(capsys: pytest.CaptureFixture[str], text: str) -> None:
    assert run(capsys, "note", FIRST, "--text", text)[0] == 0
    code, out, err = run(capsys, "note", FIRST)
    assert code == 0 and out == text


def test_append_and_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run(capsys, "note", FIRST, "--text", "one")
    run(capsys, "note", FIRST, "--append", "two")
    assert run(capsys, "note", FIRST)[1] == "one\ntwo"
    raw = "from stdin [b]x[/b]\r\nCRLF kept\n".encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    assert run(capsys, "note", FIRST, "-")[0] == 0
    assert run(capsys, "note", FIRST)[1].encode() == raw


def test_stdin_that_is_not_utf8_changes_nothing(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run(capsys, "note", FIRST, "--text", "keep")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfe bad"), encoding="utf-8"))
    code, _, err = run(capsys, "note", FIRST, "-")
    assert code == 2 and "UTF-8" in err
    assert open_store().get_note(FIRST) == "keep"


def test_bad_note_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "note", FIRST, "stray")[0] == 2
    assert run(capsys, "note", FIRST, "-", "--text", "x")[0] == 2
    with pytest.raises(SystemExit) as info:
        main(["note", FIRST, "--text", "a", "--append", "b"])
    assert info.value.code == 2


def _editor(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake_editor.py"
    script.write_text("import sys\npath = sys.argv[1]\n" + body)
    return f"{sys.executable} {script}"


def test_edit_saves_what_the_editor_wrote(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    run(capsys, "note", FIRST, "--text", "before")
    body = "text = open(path, encoding='utf-8').read()\nopen(path, 'w', encoding='utf-8').write(text + ' [i]after[/i]')\n"
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", _editor(tmp_path, body))
    assert run(capsys, "note", FIRST, "--edit")[0] == 0
    assert open_store().get_note(FIRST) == "before [i]after[/i]"


def test_edit_keeps_the_note_when_the_editor_fails(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run(capsys, "note", FIRST, "--text", "original")
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setenv("VISUAL", _editor(tmp_path, "open(path, 'w').write('clobbered')\nsys.exit(3)\n"))
    code, _, err = run(capsys, "note", FIRST, "--edit")
    assert code == 1 and "status 3" in err and "not changed" in err
    monkeypatch.setenv("VISUAL", str(tmp_path / "no-such-editor"))
    code, _, err = run(capsys, "note", FIRST, "--edit")
    assert code == 1 and "cannot run editor" in err
    monkeypatch.delenv("VISUAL")
    code, _, err = run(capsys, "note", FIRST, "--edit")
    assert code == 2 and "EDITOR" in err and err.count("\n") == 1
    assert open_store().get_note(FIRST) == "original"


def test_export_json_md_and_import_elsewhere(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run(capsys, "mark", FIRST, "done")
    run(capsys, "note", FIRST, "--text", NASTY[0])
    store = open_store()
    store.set_state("entry-removed-from-guide", "done")
    store.set_note("entry-removed-from-guide", "orphaned words")
    store.close()
    backup = tmp_path / "backup.json"
    assert run(capsys, "export", str(backup))[0] == 0
    data = json.loads(backup.read_text(encoding="utf-8"))
    assert {e["entry_id"] for e in data["entries"]} == {FIRST, "entry-removed-from-guide"}
    assert any(e["kind"] == "note" for e in data["events"])
    journal = tmp_path / "journal.md"
    assert run(capsys, "export", str(journal))[0] == 0
    md = journal.read_text(encoding="utf-8")
    assert md.startswith("# Study journal") and NASTY[0] in md and "orphaned words" in md
    assert GUIDE.sections[0].title in md
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # temp files renamed away

    monkeypatch.setenv("STUDYTUI_DATA_DIR", str(tmp_path / "other-machine"))
    code, out, _ = run(capsys, "import", str(backup))
    assert code == 0 and "entry-removed-from-guide" in out  # orphans listed
    other = open_store()
    assert other.progress(FIRST).state == "done" and other.get_note(FIRST) == NASTY[0]
    assert other.get_note("entry-removed-from-guide") == "orphaned words"
    progress = run_json(capsys, "progress", "--json")
    assert progress["done"] == 1 and progress["orphans"][0]["id"] == "entry-removed-from-guide"
    code, out, _ = run(capsys, "progress")
    assert "entry-removed-from-guide" in out
    assert run(capsys, "note", "entry-removed-from-guide")[1] == "orphaned words"  # readable still


def test_export_to_stdout_and_import_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run(capsys, "mark", FIRST, "learning")
    run(capsys, "note", FIRST, "--text", "via a pipe")
    code, out, _ = run(capsys, "export", "-")
    assert code == 0 and json.loads(out)["entries"][0]["note"] == "via a pipe"
    monkeypatch.setenv("STUDYTUI_DATA_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(out.encode()), encoding="utf-8"))
    report = run_json(capsys, "import", "-", "--json")
    assert report["entries_added"] == 1 and report["orphans"] == []
    assert open_store().progress(FIRST).state == "learning"


def test_export_to_a_missing_directory_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "export", str(tmp_path / "nope" / "x.json"))
    assert code == 2 and "does not exist" in err


def test_export_replaces_an_existing_file_atomically(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "b.json"
    target.write_text("old")
    run(capsys, "mark", FIRST, "done")
    assert run(capsys, "export", str(target), "--format", "json")[0] == 0
    assert json.loads(target.read_text())["entries"][0]["entry_id"] == FIRST


@pytest.mark.parametrize(
    "content", [b"", b"not json", b"\xff\xfe\x00", b"[1, 2]", b'{"format": "other"}',
                b'{"format": "studytui-progress", "version": 1, "entries": [{"entry_id": "x", "state": "??"}]}'],
)
def test_unreadable_or_invalid_import_is_one_line_exit_2_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes
) -> None:
    run(capsys, "note", FIRST, "--text", "mine")
    before = open_store().export_json()
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    code, _, err = run(capsys, "import", str(bad))
    assert code == 2 and err.count("\n") == 1 and "nothing was changed" in err
    after = open_store().export_json()
    assert after["entries"] == before["entries"] and after["events"] == before["events"]
    code, _, err = run(capsys, "import", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err


def test_import_of_conflicting_notes_reports_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(capsys, "note", FIRST, "--text", "laptop")
    run(capsys, "export", str(tmp_path / "laptop.json"))
    monkeypatch.setenv("STUDYTUI_DATA_DIR", str(tmp_path / "desk"))
    run(capsys, "note", FIRST, "--text", "desk")
    code, out, _ = run(capsys, "import", str(tmp_path / "laptop.json"))
    assert code == 0 and "both kept (marked with" in out and FIRST in out
    note = run(capsys, "note", FIRST)[1]
    assert "desk" in note and "laptop" in note and "laptop.json" in note


def test_progress_follows_a_renamed_entry(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(content_dir(), content)
    target = GUIDE.entries[2]
    source = content / "sections" / Path(target.source_file).name
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.strip() == f"- id: {target.id}")
    indent = lines[index][: lines[index].index("-")]
    lines[index] = f"{indent}- id: {target.id}-renamed\n{indent}  aliases: [{target.id}]\n"
    source.write_text("".join(lines), encoding="utf-8")

    run(capsys, "mark", target.id, "done")
    run(capsys, "note", target.id, "--text", "written before the rename")
    progress = run_json(capsys, "--content", str(content), "progress", "--json")
    assert progress["done"] == 1 and progress["orphans"] == []
    assert run(capsys, "--content", str(content), "note", f"{target.id}-renamed")[1] == "written before the rename"
    assert run(capsys, "--content", str(content), "note", target.id)[1] == "written before the rename"
    assert set(open_store().states()) == {f"{target.id}-renamed"}  # the stored id followed


def test_a_corrupt_database_is_reported_not_replaced(capsys: pytest.CaptureFixture[str], isolated_data_dir: Path) -> None:
    db = isolated_data_dir / "studytui.db"
    db.write_text("I am not a database, but I am somebody's file.\n")
    for argv in (["progress"], ["mark", FIRST, "done"], ["next"], ["note", FIRST, "--text", "x"]):
        code, out, err = run(capsys, *argv)
        assert code == 1 and str(db) in err and err.count("\n") == 1 and "Traceback" not in err
    assert db.read_text() == "I am not a database, but I am somebody's file.\n"


# -- real processes -------------------------------------------------------------------------


def studytui(*argv: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "studytui.cli", *argv], input=stdin, capture_output=True, timeout=60)


def test_real_processes_round_trip_notes_byte_for_byte() -> None:
    text = NASTY[1] + NASTY[0] + NASTY[3]
    assert studytui("note", FIRST, "--text", text).returncode == 0
    shown = studytui("note", FIRST)
    assert shown.returncode == 0 and shown.stdout == text.encode()
    piped = "piped \x1b[1m[bold]\r\n$(x)\n".encode()
    assert studytui("note", SECOND, "-", stdin=piped).returncode == 0
    assert studytui("note", SECOND).stdout == piped


def test_real_processes_flow_and_exit_codes() -> None:
    assert studytui("mark", FIRST, "done").returncode == 0
    result = studytui("progress", "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["done"] == 1
    bad = studytui("mark", FIRST, "nope")
    assert bad.returncode == 2 and bad.stderr.decode().count("\n") == 1 and bad.stdout == b""
    nxt = studytui("next", "--json")
    assert json.loads(nxt.stdout)["id"] == SECOND
    assert os.environ["STUDYTUI_DATA_DIR"] in studytui("where").stdout.decode()


def test_next_follows_marking_and_opening_not_showing(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_json(capsys, "next", "--json")["id"] == FIRST
    run(capsys, "mark", FIRST, "done")
    assert run_json(capsys, "next", "--json")["id"] == SECOND
    assert run_json(capsys, "next", "--json")["id"] == SECOND
    store = open_store()
    store.mark_opened(GUIDE.entries[5].id)  # opening a source later in the guide: the learner is there now
    store.close()
    assert run_json(capsys, "next", "--json")["id"] == GUIDE.entries[6].id


def test_section_notes_through_the_note_command(tmp_path, capsys, monkeypatch) -> None:
    from studytui import cli
    from studytui.store import open_store

    data = ["--data-dir", str(tmp_path)]
    assert cli.main([*data, "note", "start-here", "--text", "why the guide starts here"]) == 0
    assert cli.main([*data, "note", "start-here", "--append", "second line"]) == 0
    capsys.readouterr()
    assert cli.main([*data, "note", "start-here"]) == 0
    assert capsys.readouterr().out.startswith("why the guide starts here\nsecond line")
    with open_store(tmp_path) as store:
        assert store.get_section_note("start-here") == "why the guide starts here\nsecond line"
        assert store.states() == {}  # a section note is not an entry's note
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(""))
    assert cli.main([*data, "note", "start-here", "-"]) == 2
    assert "standard input was empty" in capsys.readouterr().err
    assert cli.main([*data, "export", str(tmp_path / "journal.md")]) == 0
    assert "why the guide starts here" in (tmp_path / "journal.md").read_text()


def test_progress_tells_done_and_skipped_apart_without_colour(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    for entry in GUIDE.sections[0].entries[:2]:
        run(capsys, "mark", entry.id, "done")
    for entry in GUIDE.sections[0].entries[2:4]:
        run(capsys, "mark", entry.id, "skipped")
    code, out, _ = run(capsys, "progress")
    assert code == 0
    legend = next(line for line in out.splitlines() if "skipped" in line and "done" in line and "learning" in line and "pending" in line)
    glyphs = {word: legend[legend.index(word) - 2] for word in ("done", "skipped", "learning")}
    assert len(set(glyphs.values())) == 3, glyphs
    start = next(line for line in out.splitlines() if line.startswith(GUIDE.sections[0].title[:10]))
    assert glyphs["done"] in start and glyphs["skipped"] in start


def test_journal_demotes_a_notes_own_headings() -> None:
    from studytui.exports.journal import demote_headings

    note = "# Big idea\ntext\n## Detail\n```\n# not a heading\n```\nSetext\n------\n#hashtag stays"
    out = demote_headings(note, 4)
    assert out.splitlines() == ["#### Big idea", "text", "##### Detail", "```", "# not a heading", "```", "##### Setext", "#hashtag stays"]
    assert demote_headings("### only\n#### deeper\n####### x", 4).splitlines()[:2] == ["#### only", "##### deeper"]
    assert demote_headings("no headings", 4) == "no headings"


def test_markdown_journal_keeps_notes_below_the_entry_heading(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    run(capsys, "note", FIRST, "--text", "# My summary\n## Why it matters\nbody")
    out = tmp_path / "journal.md"
    assert run(capsys, "export", str(out), "--format", "md")[0] == 0
    text = out.read_text()
    assert "\n#### My summary\n" in text and "\n##### Why it matters\n" in text
    assert "\n# My summary" not in text


def test_show_gives_state_last_opened_and_note(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", FIRST)
    assert code == 0 and "State: ○ pending" in out
    assert "Last opened: never (you have not opened the source yet" in out and "Note: none yet" in out
    run(capsys, "mark", FIRST, "done")
    run(capsys, "note", FIRST, "--text", "remember [b]this[/b]")
    store = open_store()
    store.mark_opened(FIRST)
    store.close()
    code, out, _ = run(capsys, "show", FIRST)
    assert "State: ● done (since" in out and "never" not in out.split("Last opened:")[1].splitlines()[0]
    assert "remember [b]this[/b]" in out  # the note as written, not as markup
    data = run_json(capsys, "show", FIRST, "--json")
    assert data["state"] == "done" and data["note"] == "remember [b]this[/b]" and data["last_opened_at"]


def _list_record(out: str, entry_id: str) -> str:
    """An entry's lines in `studytui list`: its table row, or (in the two-line records of a narrow
    terminal) the state-and-title line above the line that holds the id."""
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if entry_id in line.split())
    return lines[i] if lines[i].split()[0] in "○◐●⊘" else lines[i - 1] + "\n" + lines[i]


@pytest.mark.parametrize("columns", ["80", "120"])
def test_list_shows_state_glyph_and_word_and_marks_notes(capsys: pytest.CaptureFixture[str], monkeypatch, columns) -> None:
    from studytui.cli.commands.guide import STATE_GLYPHS
    from studytui.tui.format import STATE_GLYPHS as APP_GLYPHS

    monkeypatch.setenv("COLUMNS", columns)  # two-line records at 80, a table at 120
    assert STATE_GLYPHS == APP_GLYPHS
    run(capsys, "mark", FIRST, "skipped")
    run(capsys, "note", SECOND, "--text", "n")
    code, out, _ = run(capsys, "list", "--section", GUIDE.sections[0].id)
    assert code == 0
    first = _list_record(out, FIRST)
    second = _list_record(out, SECOND)
    assert "⊘ skipped" in first and "○ pending" in second and "✎" in second and "✎" not in first
    n = len(GUIDE.sections[0].entries)
    assert f"{n} entries; 1 with a note" in out
    rows = run_json(capsys, "list", "--json")
    assert {r["id"]: (r["state"], r["has_note"]) for r in rows}[FIRST] == ("skipped", False)


def test_counts_are_in_the_right_number(capsys: pytest.CaptureFixture[str]) -> None:
    from studytui.cli.output import plural

    assert (plural(1, "entry"), plural(2, "entry"), plural(0, "note")) == ("1 entry", "2 entries", "0 notes")
    code, out, _ = run(capsys, "note", FIRST, "--text", "x")
    assert "(1 character)" in out
