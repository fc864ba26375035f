"""Findings of a security review: private data files, one note size limit, FIFOs and devices never
read, CRLF vault files (keys.yaml escapes: tests/tui/test_keys_yaml_escapes.py)."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from studytui.cli import main
from studytui.core import fileio
from studytui.guide import load_guide
from studytui.store import open_store
from studytui.store.model import NOTE_LIMIT
from tests.support import deadline

GUIDE = load_guide()
FIRST, SECOND = (e.id for e in GUIDE.entries[:2])
BIG = "x" * (NOTE_LIMIT + 1)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str, *needles: str) -> None:
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.startswith("studytui: error: "), err
    for needle in needles:
        assert needle in err, err


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@contextmanager
def umask(value: int) -> Iterator[None]:
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def cli(argv: list[str], timeout: float = 60, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "studytui.cli", *argv], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1", **env})


# -- 1. notes readable only by their owner ----------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_a_new_data_dir_is_0700_and_the_database_files_0600_under_umask_022(tmp_path: Path) -> None:
    data = tmp_path / "new" / "data"
    with umask(0o022):
        with open_store(data) as store:
            store.set_note(FIRST, "SECRET")
            assert mode(data) == 0o700
            db = data / "studytui.db"
            for path in (db, db.with_name("studytui.db-wal"), db.with_name("studytui.db-shm")):
                assert path.exists(), path
                assert mode(path) == 0o600, (path, oct(mode(path)))
        # Not a file in the data directory that group or others can read.
        assert not [p for p in data.iterdir() if mode(p) & 0o077]


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_a_directory_the_learner_made_keeps_its_mode(tmp_path: Path) -> None:
    data = tmp_path / "mine"
    with umask(0o022):
        data.mkdir(mode=0o755)
        with open_store(data) as store:
            store.set_note(FIRST, "SECRET")
    assert mode(data) == 0o755  # theirs: `where` warns instead
    assert mode(data / "studytui.db") == 0o600


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_an_existing_readable_database_is_tightened_on_open(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with open_store(data) as store:
        store.set_note(FIRST, "SECRET")
    db = data / "studytui.db"
    os.chmod(db, 0o644)  # as an older studytui left it under umask 022
    with open_store(data) as store:
        assert store.get_note(FIRST) == "SECRET"
        assert mode(db) == 0o600
        store.set_note(FIRST, "SECRET 2")
        assert mode(db.with_name("studytui.db-wal")) == 0o600


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_a_migration_backup_is_0600(tmp_path: Path) -> None:
    from studytui.store import Store, schema

    data = tmp_path / "data"
    data.mkdir()
    with umask(0o022):
        old = Store(data / "studytui.db", migrations={1: schema.create_v1})
        old.set_note(FIRST, "SECRET")
        old.close()
        with open_store(data) as store:
            assert store.backup_path is not None and store.get_note(FIRST) == "SECRET"
            assert mode(store.backup_path) == 0o600


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_where_warns_when_others_can_read_the_notes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = tmp_path / "shared"
    data.mkdir()
    os.chmod(data, 0o755)  # as a checkout's progress/ comes from git
    with open_store(data) as store:
        store.set_note(FIRST, "SECRET")
    # Others can list the folder, but the database is private (0600): no warning, the notes are safe.
    assert json.loads(run(capsys, "--data-dir", str(data), "where", "--json")[1])["permissions_warning"] is None
    assert "warning: other users" not in run(capsys, "--data-dir", str(data), "where")[1]
    # A readable database is named, with the directory others can enter, and how to fix both.
    os.chmod(data / "studytui.db", 0o644)
    code, out, err = run(capsys, "--data-dir", str(data), "where")
    assert code == 0, err
    flat = " ".join(out.split())  # (filled to the terminal's width)
    assert flat.count("warning: other users") == 1 and "other users on this machine can read your notes" in flat, out
    assert "studytui.db is -rw-r--r--" in flat and "drwxr-xr-x" in flat and f"chmod 700 {data}" in flat
    shown = json.loads(run(capsys, "--data-dir", str(data), "where", "--json")[1])["permissions_warning"]
    assert "studytui.db is -rw-r--r--" in shown
    # Private directory and database: nothing to say.
    os.chmod(data, 0o700)
    os.chmod(data / "studytui.db", 0o600)
    assert json.loads(run(capsys, "--data-dir", str(data), "where", "--json")[1])["permissions_warning"] is None


# -- 2. one note size limit on every write ----------------------------------------------------------


def test_cli_note_over_the_limit_is_refused_and_nothing_changes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(capsys, "note", FIRST, "--text", "kept")[0] == 0
    code, _, err = run(capsys, "note", FIRST, "--text", BIG)
    assert code == 2
    one_line(err, "8 MiB", "a note can hold")
    near = "y" * (NOTE_LIMIT - 2)
    assert run(capsys, "note", SECOND, "--text", near)[0] == 0
    code, _, err = run(capsys, "note", SECOND, "--append", "toolong")
    assert code == 2
    one_line(err, "8 MiB")
    # standard input: read at most one byte past the limit
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BIG.encode())))
    code, _, err = run(capsys, "note", FIRST, "-")
    assert code == 2
    one_line(err, "standard input is larger than the 8 MiB a note can hold", "not changed")
    section = GUIDE.sections[0].id
    code, _, err = run(capsys, "note", section, "--text", BIG)
    assert code == 2
    one_line(err, "section note", "8 MiB")
    with open_store() as store:
        assert store.get_note(FIRST) == "kept" and store.get_note(SECOND) == near
        assert store.get_section_note(section) == ""


def test_cli_edit_over_the_limit_keeps_the_edited_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    editor = tmp_path / "bigeditor.py"
    editor.write_text(f"import sys\nopen(sys.argv[1], 'w').write('z' * {NOTE_LIMIT + 10})\n")
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    assert run(capsys, "note", FIRST, "--text", "before")[0] == 0
    code, _, err = run(capsys, "note", FIRST, "--edit")
    assert code == 2
    one_line(err, "8 MiB", "your text is kept in")
    kept = Path(err.rsplit("kept in ", 1)[1].strip())
    try:
        assert kept.read_text() == "z" * (NOTE_LIMIT + 10)
    finally:
        kept.unlink()
    with open_store() as store:
        assert store.get_note(FIRST) == "before"


def test_the_apps_save_path_refuses_and_keeps_the_draft(tmp_path: Path) -> None:
    from studytui.study.session import NotesNotSaved, StudySession

    with open_store(tmp_path / "data") as store:
        store.set_note(FIRST, "stored")
        session = StudySession(GUIDE, store)
        session.switch_note(FIRST)
        session.update_draft(BIG)
        with pytest.raises(NotesNotSaved) as caught:
            session.flush()
        message = str(caught.value)
        assert "8 MiB" in message and "kept" in message and "shorten" in message and "\n" not in message
        assert session.draft.text == BIG and session.has_unsaved  # nothing lost
        # The $EDITOR round trip saves through save_note: the same refusal, the text kept.
        with pytest.raises(NotesNotSaved):
            session.save_note(FIRST, BIG + "more", base="stored")
        assert session.note_text(FIRST) == BIG + "more"
        assert store.get_note(FIRST) == "stored"
        # Quitting with it still refused: it goes to a private file, never dropped.
        err = io.StringIO()
        rescue = session.save_what_is_left(tmp_path / "data", err)
        assert rescue is not None and (BIG + "more") in rescue.read_text()
        assert mode(rescue) == 0o600


def test_json_import_of_a_note_over_the_limit_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    export = tmp_path / "big.json"
    export.write_text(json.dumps({"format": "studytui-progress", "version": 1, "entries": [
        {"entry_id": FIRST, "state": "done", "note": "fine"},
        {"entry_id": SECOND, "state": "done", "note": BIG},
    ]}))
    code, _, err = run(capsys, "import", str(export))
    assert code == 2
    one_line(err, "entries[1].note", "more than the 8 MiB a note can hold", "nothing was changed")
    with open_store() as store:
        assert store.states() == {}


def _vault_file(vault: Path, entry_id: str) -> Path:
    return next(p for p in vault.rglob(f"{entry_id}.md"))


def test_vault_import_of_a_note_over_the_limit_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    assert run(capsys, "note", FIRST, "--text", "small")[0] == 0
    assert run(capsys, "export", str(vault), "--format", "vault")[0] == 0
    path = _vault_file(vault, FIRST)
    path.write_text(path.read_text() + BIG)
    code, _, err = run(capsys, "import", str(vault))
    assert code == 2
    one_line(err, path.name, "8 MiB a note can hold", "nothing was changed")


def test_vault_export_leaves_out_a_note_from_before_the_limit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A note already over the limit (written by an older studytui) is not written to the vault,
    with a warning: it would block the import of every other file there."""
    from studytui.store import model

    with monkeypatch.context() as m:
        m.setattr(model, "NOTE_LIMIT", 4 * NOTE_LIMIT)
        with open_store() as store:
            store.set_note(FIRST, BIG)
            store.set_note(SECOND, "small")
    vault = tmp_path / "vault"
    code, _, err = run(capsys, "export", str(vault), "--format", "vault")
    assert code == 0 and "its note is 8,388,609 bytes, more than the 8 MiB a note can hold" in err, err
    assert not list(vault.rglob(f"{FIRST}.md"))
    _vault_file(vault, SECOND).write_text(_vault_file(vault, SECOND).read_text().replace("small", "edited"))
    code, out, err = run(capsys, "import", str(vault))
    assert code == 0, err
    with open_store() as store:
        assert store.get_note(SECOND) == "edited" and store.get_note(FIRST) == BIG


def test_export_warns_when_import_would_refuse_it_and_the_variable_raises_the_limit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(fileio, "JSON_IMPORT_LIMIT", 1024)
    assert run(capsys, "note", FIRST, "--text", "n" * 3000)[0] == 0
    backup = tmp_path / "backup.json"
    code, _, err = run(capsys, "export", str(backup))
    assert code == 0
    warning = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "larger than the 1 KiB 'studytui import' reads by default" in warning[0], err
    assert "STUDYTUI_IMPORT_LIMIT_MIB=1 studytui import FILE" in warning[0]
    code, _, err = run(capsys, "export", "-")  # to standard output: the same warning on stderr
    assert code == 0 and "STUDYTUI_IMPORT_LIMIT_MIB" in err
    # A small export gives none.
    monkeypatch.setattr(fileio, "JSON_IMPORT_LIMIT", 64 * fileio.MIB)
    assert "warning" not in run(capsys, "export", str(tmp_path / "small.json"))[2]
    monkeypatch.setattr(fileio, "JSON_IMPORT_LIMIT", 1024)
    monkeypatch.setenv("STUDYTUI_DATA_DIR", str(tmp_path / "other"))
    code, _, err = run(capsys, "import", str(backup))
    assert code == 2
    one_line(err, "larger than 1 KiB", "STUDYTUI_IMPORT_LIMIT_MIB=N", "nothing was changed")
    for bad in ("abc", "0", "-3", "1.5", "99999999", "١"):
        monkeypatch.setenv("STUDYTUI_IMPORT_LIMIT_MIB", bad)
        code, _, err = run(capsys, "import", str(backup))
        assert code == 2, bad
        one_line(err, "STUDYTUI_IMPORT_LIMIT_MIB must be a whole number of MiB")
    monkeypatch.setenv("STUDYTUI_IMPORT_LIMIT_MIB", "1")
    code, out, err = run(capsys, "import", str(backup))
    assert code == 0, err
    with open_store() as store:
        assert store.get_note(FIRST) == "n" * 3000


# -- 3. FIFOs and devices are never read ------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_bounded_readers_refuse_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    with deadline(10):
        with pytest.raises(fileio.NotRegularFileError, match=r"f.yaml: not a regular file; not read"):
            fileio.read_bounded(fifo, 1024, "a test file")
        with pytest.raises(fileio.NotRegularFileError):
            fileio.read_text_bounded(tmp_path, 1024, "a test file")  # a directory
        # keys.yaml as a FIFO: one line naming it, never a hang
        from studytui.core.errors import UsageError
        from studytui.tui.keymap import load_keymap

        os.mkfifo(tmp_path / "keys.yaml")
        with pytest.raises(UsageError, match="keys.yaml: not a regular file"):
            load_keymap(tmp_path, ["next"])
        # a measured profile in the content folder: reported by check, never read
        from studytui.calc.profiles import check_profiles

        measured = tmp_path / "content" / "hardware" / "measured"
        measured.mkdir(parents=True)
        os.mkfifo(measured / "h100.yaml")
        assert check_profiles(tmp_path / "content") == [f"{measured / 'h100.yaml'}:1: not a regular file; not read"]
        # guide diff README
        from studytui.guide.readme import read_readme_text

        os.mkfifo(tmp_path / "README.md")
        with pytest.raises(UsageError, match="not a regular file"):
            read_readme_text(tmp_path / "README.md")
    real = tmp_path / "real.txt"
    real.write_text("ok")
    assert fileio.read_bounded(real, 10, "a test file") == b"ok"  # a regular file reads as before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_gpus_and_import_of_a_fifo_exit_with_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "hardware").mkdir(parents=True)
    os.mkfifo(data / "hardware" / "f.yaml")
    start = time.monotonic()
    proc = cli(["--data-dir", str(data), "gpus"], timeout=60)
    assert proc.returncode == 2 and time.monotonic() - start < 30, proc.stderr
    one_line(proc.stderr, "f.yaml: not a regular file; not read")
    os.unlink(data / "hardware" / "f.yaml")
    fifo = tmp_path / "export.json"
    os.mkfifo(fifo)
    proc = cli(["--data-dir", str(data), "import", str(fifo)], timeout=60)
    assert proc.returncode == 2, proc.stderr
    one_line(proc.stderr, "export.json: not a regular file; not read", "nothing was changed")
    proc = cli(["--data-dir", str(data), "import", "/dev/zero"], timeout=60)
    assert proc.returncode == 2
    one_line(proc.stderr, "/dev/zero: not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_place_of_the_database_is_refused_without_blocking(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    os.mkfifo(data / "studytui.db")
    for argv in (["list"], ["note", FIRST, "--text", "x"]):
        start = time.monotonic()
        proc = cli(["--data-dir", str(data), *argv], timeout=60)
        assert proc.returncode != 0 and time.monotonic() - start < 30, proc.stderr
        one_line(proc.stderr, "studytui.db is not a regular file")
    assert stat.S_ISFIFO(os.stat(data / "studytui.db").st_mode)  # left untouched


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_a_vault_is_skipped_without_blocking(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from studytui.exports import vault

    vault_dir = tmp_path / "vault"
    assert run(capsys, "note", FIRST, "--text", "hello")[0] == 0
    assert run(capsys, "export", str(vault_dir), "--format", "vault")[0] == 0
    os.mkfifo(vault_dir / "pipe.md")
    with deadline(10):
        # Even when swapped in after the folder was listed, the open does not block.
        raw, st = vault._read_ours(vault_dir / "pipe.md")
        assert raw is None and stat.S_ISFIFO(st.st_mode)
        code, _, err = run(capsys, "import", str(vault_dir))
    assert code == 0, err


# -- 5. a vault file saved with CRLF and a BOM -----------------------------------------------------


def test_a_vault_note_saved_with_crlf_and_a_bom_comes_back_without_a_stray_cr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    assert run(capsys, "note", FIRST, "--text", "crlf\nline2")[0] == 0  # no final newline: export adds one
    assert run(capsys, "export", str(vault), "--format", "vault")[0] == 0
    path = _vault_file(vault, FIRST)
    text = path.read_text(encoding="utf-8").replace("crlf\nline2", "crlf edit\nline2")
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))  # as a Windows editor saves it
    code, _, err = run(capsys, "import", str(vault))
    assert code == 0, err
    with open_store() as store:
        assert store.get_note(FIRST) == "crlf edit\nline2"
    # A note that itself holds CRLF, exported and read back untouched, stays byte for byte.
    assert run(capsys, "note", SECOND, "--text", "a\r\nb\r")[0] == 0
    assert run(capsys, "export", str(vault), "--format", "vault")[0] == 0
    with open_store(tmp_path / "fresh") as fresh:
        from studytui.exports.vault import import_vault

        import_vault(vault, GUIDE, fresh)
        assert fresh.get_note(SECOND) == "a\r\nb\r"
