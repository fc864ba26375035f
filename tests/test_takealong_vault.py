"""`studytui export DIR --format vault` and `studytui import DIR`: what the vault holds, the round
trip of notes, re-export never losing the learner's files, and hostile vaults handled like a
hostile JSON import (one line, exit 2, nothing changed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studytui.cli import main
from studytui.exports.vault import export_vault, import_vault, normalized, split_front_matter
from studytui.guide import load_guide
from studytui.store import open_store

GUIDE = load_guide()
A, B, C = GUIDE.entries[0], GUIDE.entries[5], GUIDE.entries[-3]
NASTY = "\x1b[31mred\x1b[0m \x1b]8;;https://evil\x1b\\x\x1b]8;;\x1b\\ [bold]m[/] <script>1</script>\r\nend"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def front(path: Path) -> tuple[dict, str]:
    meta, body = split_front_matter(path.read_bytes().decode("utf-8"))
    return yaml.safe_load(meta), body


def snapshot() -> list:
    with open_store() as store:
        return store.export_json()["entries"]


@pytest.fixture
def vault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert run(capsys, "mark", A.id, "done")[0] == 0
    assert run(capsys, "note", A.id, "--text", "first thoughts\n")[0] == 0
    assert run(capsys, "mark", B.id, "learning")[0] == 0
    assert run(capsys, "note", C.id, "--text", NASTY)[0] == 0
    root = tmp_path / "vault"
    code, _, err = run(capsys, "export", str(root), "--format", "vault")
    assert code == 0, err
    return root


def entry_file(root: Path, entry) -> Path:
    return root / entry.section_id / f"{entry.id}.md"


def test_vault_layout_and_front_matter(vault: Path) -> None:
    meta, body = front(entry_file(vault, A))
    assert body == "first thoughts\n"  # the note, verbatim, is the body
    assert (meta["id"], meta["title"], meta["section"], meta["state"], meta["url"]) == (A.id, A.title, A.section_title, "done", A.url)
    assert set(meta["dates"]) >= {"state_changed", "note_updated", "last_opened"} and meta["dates"]["state_changed"]
    assert "studytui" in meta["tags"] and A.section_id in meta["tags"] and meta["studytui"] == "entry"
    meta_b, body_b = front(entry_file(vault, B))
    assert meta_b["state"] == "learning" and body_b == ""  # progress without a note has a file too
    # Byte for byte: the file is the note, plus the final newline every vault file ends with
    # (marked in the front matter, and taken off again on import).
    meta_c, body_c = front(entry_file(vault, C))
    assert body_c == NASTY + "\n" and meta_c["studytui_newline"] == "added"
    assert "studytui_newline" not in meta  # A's note ends with a newline already
    untouched = GUIDE.entries[1]
    assert not entry_file(vault, untouched).exists()
    # An index per section linking to the entry files, a top index, the glossary.
    index = (vault / A.section_id / "index.md").read_text()
    assert f"[{A.title}](<{A.id}.md>)" in index and "[x]" in index and untouched.title in index
    top = (vault / "index.md").read_text()
    for s in GUIDE.sections:
        assert f"(<{s.id}/index.md>)" in top
    glossary = (vault / "glossary.md").read_text()
    assert all(f"## {t.term}" in glossary for t in GUIDE.glossary)


def test_unchanged_vault_imports_nothing(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot()
    code, out, err = run(capsys, "import", str(vault), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["files_read"] == 3 and report["notes_replaced"] == report["notes_merged"] == 0
    assert snapshot() == before


def test_edit_in_the_vault_comes_back(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = entry_file(vault, A)
    text = path.read_text()
    path.write_text(text.replace("first thoughts\n", "rewritten in Obsidian\n"))
    code, out, _ = run(capsys, "import", str(vault))
    assert code == 0 and "1 notes updated" in out
    with open_store() as store:
        assert store.get_note(A.id) == "rewritten in Obsidian\n"
        assert any(e["data"].get("text") == "first thoughts\n" for e in store.events(A.id))  # old text kept
    # Re-export now rewrites the file (studytui has its words) and a second import is a no-op.
    assert run(capsys, "export", str(vault), "--format", "vault")[0] == 0
    assert "left" not in capsys.readouterr().err
    assert front(path)[1] == "rewritten in Obsidian\n"
    before = snapshot()
    assert run(capsys, "import", str(vault))[0] == 0
    assert snapshot() == before


def test_both_sides_changed_keeps_both(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = entry_file(vault, A)
    path.write_text(path.read_text().replace("first thoughts", "vault version"))
    assert run(capsys, "note", A.id, "--text", "app version\n")[0] == 0
    code, out, _ = run(capsys, "import", str(vault))
    assert code == 0 and "both kept (marked with" in out and A.id in out
    with open_store() as store:
        note = store.get_note(A.id)
    assert "app version" in note and "vault version" in note and "conflicting note" in note
    # The vault copy is stale now: re-export refreshes it (its words are in the note).
    assert run(capsys, "export", str(vault), "--format", "vault")[0] == 0
    assert front(path)[1] == note


def test_newer_app_note_wins_over_old_vault_copy(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "note", A.id, "--text", "changed in the app only\n")[0] == 0
    assert run(capsys, "import", str(vault))[0] == 0
    with open_store() as store:
        assert store.get_note(A.id) == "changed in the app only\n"


def test_reexport_never_touches_the_learners_files(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = vault / "my-ideas.md"
    mine.write_text("---\ntags: [mine]\n---\nmy own page\n")
    plain = vault / A.section_id / "scratch.md"
    plain.write_text("no front matter at all")
    # The learner replaced one of our files by their own (no studytui mark) ...
    theirs = entry_file(vault, B)
    theirs.write_text("---\nid: something\n---\nthe learner's page\n")
    # ... edited another without importing ...
    edited = entry_file(vault, A)
    edited.write_text(edited.read_text() + "more from the vault\n")
    # ... and moved a third elsewhere.
    moved = vault / "reading" / f"{C.id}.md"
    moved.parent.mkdir()
    entry_file(vault, C).rename(moved)
    assert run(capsys, "note", C.id, "--append", "later")[0] == 0
    assert run(capsys, "mark", A.id, "skipped")[0] == 0
    code, _, err = run(capsys, "export", str(vault), "--format", "vault")
    assert code == 0
    assert mine.read_text() == "---\ntags: [mine]\n---\nmy own page\n"
    assert plain.read_text() == "no front matter at all"
    assert theirs.read_text() == "---\nid: something\n---\nthe learner's page\n"
    assert edited.read_text().endswith("more from the vault\n") and "state: done" in edited.read_text()
    assert f"left {B.section_id}/{B.id}.md as it is" in err and "run 'studytui import DIR' first" in err
    assert front(moved)[1].endswith("later\n") and not entry_file(vault, C).exists()  # updated where it was moved
    # After importing, the edited file is refreshed too.
    assert run(capsys, "import", str(vault))[0] == 0
    assert run(capsys, "export", str(vault), "--format", "vault")[0] == 0
    meta, body = front(edited)
    assert meta["state"] == "skipped" and body.endswith("more from the vault\n")


def test_learners_front_matter_additions_survive_reexport(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = entry_file(vault, A)
    meta_text, body = split_front_matter(path.read_text())
    path.write_text("---\n" + meta_text.replace("tags:\n", "rating: 5\ntags:\n- my-tag\n") + "---\n" + body)
    assert run(capsys, "mark", A.id, "learning")[0] == 0
    assert run(capsys, "export", str(vault), "--format", "vault")[0] == 0
    meta, again = front(path)
    assert meta["state"] == "learning" and meta["rating"] == 5 and "my-tag" in meta["tags"] and again == body


def test_new_entry_file_and_unknown_id(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file the learner made from ours (mark kept, no checksum) for a new entry; one for an id
    no longer in the guide is kept as an orphan, like a JSON import."""
    other = GUIDE.entries[10]
    (vault / "new.md").write_text(f"---\nid: {other.id}\nstudytui: entry\n---\nnew note\n")
    (vault / "gone.md").write_text("---\nid: removed-entry\nstudytui: entry\n---\nkept anyway\n")
    code, out, _ = run(capsys, "import", str(vault), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["entries_added"] == 2 and report["orphans"] == ["removed-entry"]
    with open_store() as store:
        assert store.get_note(other.id) == "new note\n" and store.get_note("removed-entry") == "kept anyway\n"
    # Re-export writes the orphan to the vault as well (where it already is).
    assert run(capsys, "export", str(vault), "--format", "vault")[0] == 0
    assert front(vault / "gone.md")[0]["id"] == "removed-entry"


def test_escape_sequences_stay_text(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (vault / "esc.md").write_bytes(b"---\nid: \"\\e[31mevil\"\nstudytui: entry\n---\nbody")
    path = entry_file(vault, A)
    path.write_text(path.read_text().replace("first thoughts\n", NASTY + "\n"))
    code, out, err = run(capsys, "import", str(vault))
    assert code == 0 and "\x1b" not in out + err
    assert "\\x1b[31mevil" in out  # an odd id is kept as an orphan (like a JSON import), shown escaped
    with open_store() as store:
        assert store.get_note(A.id) == NASTY + "\n"  # stored verbatim, as notes are
        assert store.get_note("\x1b[31mevil") == "body"
    # ... and it goes back out to the vault under a safe file name, and imports again unchanged.
    assert run(capsys, "export", str(vault), "--format", "vault")[0] == 0
    assert run(capsys, "import", str(vault))[0] == 0


def test_file_times_in_the_future_count_as_now(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A vault synced from a machine whose clock is wrong: the edits come in, nothing is refused."""
    path = entry_file(vault, A)
    path.write_text(path.read_text().replace("first thoughts", "edited on a fast clock").replace("note_updated: '", "note_updated: '2999"))
    other = GUIDE.entries[10]
    (vault / "new.md").write_text(f"---\nid: {other.id}\nstudytui: entry\n---\nfresh\n")
    future = 32503680000  # the year 3000
    for f in (path, vault / "new.md"):
        os.utime(f, (future, future))
    code, out, err = run(capsys, "import", str(vault))
    assert code == 0, err
    with open_store() as store:
        assert store.get_note(A.id) == "edited on a fast clock\n" and store.get_note(other.id) == "fresh\n"
        assert all(p.note_updated_at < "2100" for p in store.states().values() if p.note_updated_at)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("huge.md", b"---\nid: x\nstudytui: entry\n---\n" + b"y" * (9 * 1024 * 1024), "MiB"),
        ("bytes.md", b"---\nid: x\nstudytui: entry\n---\n\xff\xfe odd \x80 bytes", "not valid UTF-8"),
        ("yaml.md", b"---\nstudytui: entry\nid: [unclosed\n---\nbody", "front matter cannot be read"),
        ("noid.md", b"---\nstudytui: entry\n---\nbody", "'id' must be"),
        ("listid.md", b"---\nid: [1, 2]\nstudytui: entry\n---\nbody", "'id' must be"),
    ],
)
def test_broken_studytui_file_refuses_the_import(
    vault: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, message: str
) -> None:
    path = entry_file(vault, A)
    path.write_text(path.read_text().replace("first thoughts", "an edit that must wait"))
    (vault / name).write_bytes(content)
    before = snapshot()
    code, out, err = run(capsys, "import", str(vault))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "nothing was changed" in err and message in err
    assert "Traceback" not in err and "\x1b" not in err
    assert snapshot() == before
    assert (vault / name).read_bytes() == content  # the file is left as it was


def test_files_without_front_matter_and_symlinks_are_ignored(vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (vault / "plain.md").write_bytes(b"\x1b[2J no front matter \xff")
    outside = tmp_path / "outside.md"
    outside.write_text(f"---\nid: {A.id}\nstudytui: entry\n---\nfrom outside the vault\n")
    (vault / "link.md").symlink_to(outside)
    (vault / "linkdir").symlink_to(tmp_path, target_is_directory=True)
    before = snapshot()
    code, out, err = run(capsys, "import", str(vault), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["ignored_files"] == 1 and report["symlinks_skipped"] == ["link.md"]
    assert "symbolic link" in err and snapshot() == before
    # Export does not write through symlinks either.
    os.remove(entry_file(vault, B))
    entry_file(vault, B).symlink_to(outside)
    assert run(capsys, "export", str(vault), "--format", "vault")[0] == 0
    assert outside.read_text().endswith("from outside the vault\n")


@pytest.mark.parametrize("kind", ["empty", "plain"])
def test_folder_without_studytui_notes_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    if kind == "plain":
        (folder / "a.md").write_text("# my notes\n")
    code, out, err = run(capsys, "import", str(folder))
    assert code == 2 and err.count("\n") == 1 and "holds no notes written by" in err


def test_export_vault_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "file"
    afile.write_text("x")
    code, _, err = run(capsys, "export", str(afile), "--format", "vault")
    assert code == 2 and "not a directory" in err and afile.read_text() == "x"
    code, _, err = run(capsys, "export", str(tmp_path / "no" / "vault"), "--format", "vault")
    assert code == 2 and "does not exist" in err
    code, _, err = run(capsys, "export", "-", "--format", "vault")
    assert code == 2 and err.count("\n") == 1


# Any text SQLite can hold: control characters, CR/LF mixes, lines of dashes, front-matter lookalikes.
NOTE_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300
) | st.sampled_from(["---\nid: other\nstudytui: entry\n---\nfake", "\r\n---\r\n", "a\n---\nb", "\x1b]52;c;Zm9v\x07"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(note=NOTE_TEXT, state=st.sampled_from(["pending", "learning", "done", "skipped"]))
def test_any_note_round_trips_through_a_vault(tmp_path_factory: pytest.TempPathFactory, note: str, state: str) -> None:
    """Export a note to a vault, import the vault into an empty store: the same text comes back."""
    base = tmp_path_factory.mktemp("roundtrip")
    with open_store(base / "a") as store:
        store.set_note(A.id, note)
        store.set_state(A.id, state)
        export_vault(base / "vault", GUIDE, store)
    with open_store(base / "b") as fresh:
        report = import_vault(base / "vault", GUIDE, fresh)
        got = fresh.get_note(A.id)
    if normalized(note):
        assert got == note and report.entries_added == 1
    else:  # a note of blank space only is no note
        assert got == ""


# -- issue 24: merges that do not double, odd files, files changing under us, symlink swaps, modes --


def _with_body(path: Path, body: str) -> None:
    """Rewrite our file's body as an editor would (front matter kept)."""
    meta, _ = split_front_matter(path.read_text(encoding="utf-8"))
    path.write_text(f"---\n{meta}---\n{body}", encoding="utf-8")


def test_eight_vault_and_cli_rounds_stay_bounded(tmp_path: Path) -> None:
    """Issue 24: vault and CLI edits over 8 import/export rounds grew 239 B to 54 KB. Each round
    now merges against the text exported to the vault: every line once, no marker."""
    root = tmp_path / "v"
    with open_store(tmp_path / "s") as store:
        store.set_note(A.id, "start of the note\n")
        export_vault(root, GUIDE, store)
        path = entry_file(root, A)
        for i in range(8):
            _, body = front(path)
            _with_body(path, body + f"vault line {i}\n")
            store.append_note(A.id, f"cli line {i}")  # `studytui note ID --append` meanwhile
            report = import_vault(root, GUIDE, store)
            assert report.notes_conflicted == [] and report.notes_merged == 1
            export_vault(root, GUIDE, store)
        note = store.get_note(A.id)
    assert "conflicting note" not in note
    for i in range(8):
        assert note.count(f"vault line {i}") == 1 and note.count(f"cli line {i}") == 1
    assert len(note) <= len("start of the note\n") + 8 * (len("vault line 0\n") + len("cli line 0\n")) + 8


def test_a_file_with_a_byte_order_mark_is_read(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = entry_file(vault, A)
    text = path.read_text(encoding="utf-8").replace("first thoughts", "edited in Notepad")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    code, out, err = run(capsys, "import", str(vault))
    assert code == 0, err
    with open_store() as store:
        assert store.get_note(A.id) == "edited in Notepad\n"  # no BOM in the note


def test_oversized_front_matter_is_refused_by_name(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = entry_file(vault, A)
    meta, body = split_front_matter(path.read_text(encoding="utf-8"))
    path.write_text(f"---\n{meta}padding: '{'x' * (70 * 1024)}'\n---\n{body}changed\n", encoding="utf-8")
    before = snapshot()
    code, _, err = run(capsys, "import", str(vault))
    assert code == 2 and err.count("\n") == 1 and f"{A.id}.md" in err and "64 KiB" in err
    assert snapshot() == before
    # One of the learner's own files (no mark) with long front matter is left alone, and said so.
    path.write_text(f"---\npadding: '{'x' * (70 * 1024)}'\n---\nmine\n", encoding="utf-8")
    code, _, err = run(capsys, "import", str(vault))
    assert code == 0 and f"{A.id}.md alone" in err and "64 KiB" in err


def _fstat_changing(monkeypatch: pytest.MonkeyPatch, target: Path, torn_reads: int) -> list[int]:
    """os.fstat as seen by the vault reader: for `target`, the stat taken after reading shows a
    newer modification time, `torn_reads` times (a program rewriting the file in place)."""
    from types import SimpleNamespace

    import studytui.exports.vault as vault_module

    real = os.fstat
    ident = (os.stat(target).st_dev, os.stat(target).st_ino)
    calls = [0]

    def fstat(fd: int):
        st = real(fd)
        if (st.st_dev, st.st_ino) != ident:
            return st
        calls[0] += 1
        if calls[0] % 2 == 0 and calls[0] // 2 <= torn_reads:  # the "after" stat of a torn read
            return SimpleNamespace(st_mode=st.st_mode, st_size=st.st_size, st_mtime=st.st_mtime + 1,
                                   st_mtime_ns=st.st_mtime_ns + 10**9, st_ctime_ns=st.st_ctime_ns + 10**9)
        return st

    monkeypatch.setattr(vault_module.os, "fstat", fstat)
    return calls


def test_a_file_changing_while_read_is_read_again(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = entry_file(vault, A)
    _with_body(path, "the finished edit\n")
    calls = _fstat_changing(monkeypatch, path, torn_reads=2)
    with open_store() as store:
        import_vault(vault, GUIDE, store)
        assert store.get_note(A.id) == "the finished edit\n"
    assert calls[0] == 6  # three reads, the third one stable


def test_a_file_that_keeps_changing_while_read_is_refused_by_name(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from studytui.core.errors import UsageError

    path = entry_file(vault, A)
    _with_body(path, "half of an ed")
    _fstat_changing(monkeypatch, path, torn_reads=99)
    before = snapshot()
    with open_store() as store, pytest.raises(UsageError) as info:
        import_vault(vault, GUIDE, store)
    assert f"{A.id}.md changed while it was read" in str(info.value) and "nothing was changed" in str(info.value)
    assert snapshot() == before


def test_every_exported_file_ends_with_a_newline(vault: Path) -> None:
    files = list(vault.rglob("*.md"))
    assert files and all(f.read_bytes().endswith(b"\n") for f in files)


def test_a_folder_swapped_for_a_symlink_during_export_is_refused(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import studytui.exports.vault as vault_module

    outside = tmp_path / "outside"
    outside.mkdir()
    section = vault / A.section_id
    real_open = vault_module._Writer._open_folder

    def swap_then_open(self, rel_dir):
        if rel_dir.as_posix() == A.section_id and not section.is_symlink():
            # After the checks of can_write, before the write: the folder becomes a symlink out.
            section.rename(tmp_path / "moved-away")
            section.symlink_to(outside, target_is_directory=True)
        return real_open(self, rel_dir)

    monkeypatch.setattr(vault_module._Writer, "_open_folder", swap_then_open)
    with open_store() as store:
        store.set_note(A.id, "changed, so export rewrites the file")
        summary = export_vault(vault, GUIDE, store)
    assert list(outside.iterdir()) == []  # nothing written outside the vault
    assert any(f"its folder {A.section_id} is a symbolic link" in w for w in summary.warnings)


def test_a_file_swapped_for_a_symlink_during_export_is_refused(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import studytui.exports.vault as vault_module

    target = tmp_path / "victim.txt"
    target.write_text("do not touch")
    path = entry_file(vault, A)
    real_write = vault_module._Writer._write_file

    def swap_then_write(self, rel, data):
        if rel.name == path.name and not path.is_symlink():
            path.unlink()
            path.symlink_to(target)
        return real_write(self, rel, data)

    monkeypatch.setattr(vault_module._Writer, "_write_file", swap_then_write)
    with open_store() as store:
        store.set_note(A.id, "changed, so export rewrites the file")
        summary = export_vault(vault, GUIDE, store)
    assert target.read_text() == "do not touch" and path.is_symlink()
    assert any(f"{A.id}.md as it is: it is a symbolic link" in w for w in summary.warnings)
    assert not [p for p in path.parent.iterdir() if "studytui-tmp" in p.name]  # no temporary file left


def test_export_keeps_a_files_mode_and_leaves_a_read_only_file(vault: Path) -> None:
    path_a, path_c = entry_file(vault, A), entry_file(vault, C)
    os.chmod(path_a, 0o640)
    os.chmod(path_c, 0o444)
    before_c = path_c.read_bytes()
    with open_store() as store:
        store.set_note(A.id, "a new text for A")
        store.set_note(C.id, "a new text for C")
        summary = export_vault(vault, GUIDE, store)
    assert front(path_a)[1] == "a new text for A\n" and (os.stat(path_a).st_mode & 0o777) == 0o640
    assert path_c.read_bytes() == before_c and (os.stat(path_c).st_mode & 0o777) == 0o444
    assert any(f"{C.id}.md as it is: it is read-only (mode 0444)" in w for w in summary.warnings)


def test_two_copies_too_large_together_change_nothing(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync tool's copy of a vault file: merged with the original, the note passes the limit.
    The import is refused, naming both files, and no other note was changed first (one was)."""
    import studytui.store.model as model

    monkeypatch.setattr(model, "NOTE_LIMIT", 4000)
    _with_body(entry_file(vault, B), "changed in the vault\n")  # would be applied on its own
    original = entry_file(vault, A)
    _with_body(original, "a" * 2500)
    copy = original.with_name(f"{A.id} (sync conflict).md")
    copy.write_text(original.read_text(encoding="utf-8").replace("a" * 2500, "b" * 2500), encoding="utf-8")
    before = snapshot()
    code, out, err = run(capsys, "import", str(vault))
    assert code == 2 and "nothing was changed" in err and "sync conflict" in err and len(err.strip().splitlines()) == 1, err
    assert snapshot() == before
