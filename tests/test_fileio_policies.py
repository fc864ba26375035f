"""Issue 25: one editor round trip and one atomic-write policy (studytui.core.fileio), shared by
the command line, the app and every export format.

Editor: $VISUAL, else $EDITOR (the first set to more than blanks); with neither, a one-line
refusal that names both, and no editor guessed. Writing: every file replaced is fsynced before
it is renamed over the old one, and its folder is fsynced after the rename.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from studytui.core.errors import StudyError, UsageError
from studytui.core.fileio import NO_EDITOR, edit_in_editor, editor_command, write_atomically

# -- the editor -----------------------------------------------------------------------------------


class Editor:
    """Stands in for the editor process: records the command and changes the file."""

    def __init__(self, append: bytes = b" edited", status: int = 0) -> None:
        self.calls: list[list[str]] = []
        self.append, self.status = append, status

    def __call__(self, argv: list[str]) -> int:
        self.calls.append(argv)
        with open(argv[-1], "ab") as f:
            f.write(self.append)
        return self.status


@pytest.mark.parametrize(
    "environ,expected",
    [
        ({"VISUAL": "code --wait", "EDITOR": "nano"}, "code --wait"),
        ({"EDITOR": "nano"}, "nano"),
        ({"VISUAL": "", "EDITOR": "nano"}, "nano"),
        ({"VISUAL": "   ", "EDITOR": "nano"}, "nano"),
    ],
)
def test_visual_then_editor(environ: dict[str, str], expected: str) -> None:
    assert editor_command(environ) == expected


@pytest.mark.parametrize("environ", [{}, {"VISUAL": " ", "EDITOR": ""}, {"PATH": "/usr/bin"}])
def test_with_no_editor_set_nothing_is_guessed(environ: dict[str, str]) -> None:
    editor = Editor()
    with pytest.raises(UsageError) as caught:
        edit_in_editor("text", "an-entry", limit=100, environ=environ, run=editor, hint=", or use --text")
    assert str(caught.value) == NO_EDITOR + ", or use --text" and "VISUAL" in NO_EDITOR and "EDITOR" in NO_EDITOR
    assert editor.calls == []  # no vi, no nano: a learner who never chose one is not dropped into it


def test_the_text_comes_back_byte_for_byte_from_a_private_file_named_after_the_note() -> None:
    editor = Editor(append=b"\r\nline two\t\x1b[1m")
    edited = edit_in_editor("first line é", "roofline", limit=1000, environ={"EDITOR": "my-editor --wait"}, run=editor)
    try:
        assert editor.calls[0][:2] == ["my-editor", "--wait"] and editor.calls[0][-1].endswith("-roofline.md")
        assert edited.text == "first line é\r\nline two\t\x1b[1m"  # no newline translation, nothing escaped
        assert edited.path == Path(editor.calls[0][-1]) and stat.S_IMODE(os.stat(edited.path).st_mode) == 0o600
    finally:
        edited.discard()
    assert not edited.path.exists()


def test_an_odd_name_makes_a_plain_file_name() -> None:
    editor = Editor()
    edit_in_editor("", "../x y/\x1b", limit=10, environ={"EDITOR": "e"}, run=editor).discard()
    name = Path(editor.calls[0][-1]).name
    assert "/" not in name and "\x1b" not in name and " " not in name and name.endswith(".md")


@pytest.mark.parametrize("status", [1, 3])
def test_a_failing_editor_changes_nothing_and_leaves_no_file(status: int) -> None:
    editor = Editor(status=status)
    with pytest.raises(StudyError) as caught:
        edit_in_editor("x", "e", limit=10, environ={"VISUAL": "ed"}, run=editor)
    assert f"exited with status {status}" in str(caught.value) and "not changed" in str(caught.value)
    assert not Path(editor.calls[0][-1]).exists()


def test_an_editor_that_cannot_start_is_one_line() -> None:
    def missing(argv: list[str]) -> int:
        raise FileNotFoundError(2, "No such file or directory", argv[0])

    with pytest.raises(StudyError) as caught:
        edit_in_editor("x", "e", limit=10, environ={"VISUAL": "nope"}, run=missing)
    assert str(caught.value).startswith("cannot run editor 'nope'") and "\n" not in str(caught.value)


def test_text_too_large_or_not_utf8_stays_in_the_named_file() -> None:
    with pytest.raises(UsageError) as caught:
        edit_in_editor("", "e", limit=10, environ={"VISUAL": "ed"}, run=Editor(append=b"x" * 11))
    kept = Path(str(caught.value).rsplit("kept in ", 1)[1])
    try:
        assert kept.read_bytes() == b"x" * 11
    finally:
        kept.unlink()
    with pytest.raises(StudyError) as caught:
        edit_in_editor("", "e", limit=10, environ={"VISUAL": "ed"}, run=Editor(append=b"\xff"))
    kept = Path(str(caught.value).rsplit("kept in ", 1)[1])
    try:
        assert kept.read_bytes() == b"\xff" and "not valid UTF-8" in str(caught.value)
    finally:
        kept.unlink()


def test_the_command_line_uses_the_same_policy(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from studytui.cli import main
    from studytui.guide import load_guide
    from studytui.store import open_store

    first = load_guide().entries[0].id
    script = tmp_path / "editor.py"
    script.write_text("import sys\nopen(sys.argv[1], 'a').write(' from EDITOR')\n")
    monkeypatch.setenv("VISUAL", "  ")  # blank: not an editor, so EDITOR is used
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    assert main(["note", first, "--text", "before"]) == 0
    assert main(["note", first, "--edit"]) == 0
    with open_store() as store:
        assert store.get_note(first) == "before from EDITOR"
    capsys.readouterr()


# -- one atomic-write policy ----------------------------------------------------------------------


@pytest.fixture
def record(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every fsync (of a file or a folder, by path) and every rename, in order."""
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        kind = "fsync-folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync-file"
        events.append((kind, os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd") else str(fd)))
        real_fsync(fd)

    def replace(src: str, dst: str, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None) -> None:
        folder = os.readlink(f"/proc/self/fd/{dst_dir_fd}") if dst_dir_fd is not None else str(Path(dst).parent)
        events.append(("rename", os.path.join(folder, os.path.basename(dst))))
        real_replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return events


def check_policy(events: list[tuple[str, str]]) -> set[str]:
    """Each rename follows an fsync of a file, and each folder renamed into is fsynced after its
    last rename. The files renamed."""
    renamed: set[str] = set()
    last_rename: dict[str, int] = {}
    for i, (kind, what) in enumerate(events):
        if kind == "rename":
            assert i > 0 and events[i - 1][0] == "fsync-file", events[max(0, i - 2): i + 1]
            renamed.add(what)
            last_rename[os.path.dirname(what)] = i
    for folder, i in last_rename.items():
        assert ("fsync-folder", folder) in events[i + 1:], f"{folder} not fsynced after its last rename"
    return renamed


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="names descriptors through /proc")


@needs_proc
def test_write_atomically_fsyncs_the_file_then_renames_then_fsyncs_the_folder(tmp_path: Path, record: list[tuple[str, str]]) -> None:
    target = tmp_path / "export.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_atomically(target, b"new")
    assert check_policy(record) == {str(target)}
    assert target.read_bytes() == b"new" and stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json"]


@needs_proc
@pytest.mark.parametrize("fmt", ["json", "md", "anki", "vault"])
def test_every_export_format_follows_the_one_policy(fmt: str, tmp_path: Path, record: list[tuple[str, str]],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from studytui.cli import main
    from studytui.guide import load_guide
    from studytui.store import open_store

    if fmt == "anki":
        pytest.importorskip("genanki")
    guide = load_guide()
    with open_store() as store:
        store.set_note(guide.entries[0].id, "a note")
    record.clear()  # the store's own writes are SQLite's business
    path = tmp_path / ("out" if fmt == "vault" else f"out.{ {'md': 'md', 'anki': 'apkg'}.get(fmt, 'json')}")
    assert main(["export", str(path), "--format", fmt]) == 0, capsys.readouterr().err
    renamed = check_policy(record)
    if fmt == "vault":
        written = {str(p) for p in path.rglob("*.md")}
        assert renamed == written and len(written) > 10  # every file of the vault
    else:
        assert renamed == {str(path)}


@needs_proc
def test_a_measured_profile_follows_the_one_policy(tmp_path: Path, record: list[tuple[str, str]]) -> None:
    """`studytui measure` writes its profile (new, then with a run appended) by the same policy:
    no fixed `.tmp` name left beside it, the file fsynced before the rename, the folder after."""
    from studytui.measure.catalog import default_catalog_paths, load_catalog, match_device
    from studytui.measure.plan import make_plan
    from studytui.measure.profile_file import write_run
    from studytui.measure.runner import run_plan
    from test_measure_fakes import FakeBackend

    h200 = match_device("NVIDIA H200", load_catalog(default_catalog_paths()))
    assert h200 is not None
    out = tmp_path / "profiles" / "h200.yaml"
    for _ in range(2):
        run = run_plan(FakeBackend(), make_plan(quick=True), h200)
        record.clear()
        write_run(out, run, h200.id)
        assert check_policy(record) == {str(out)}
    assert sorted(p.name for p in out.parent.iterdir()) == ["h200.yaml"]


@needs_proc
def test_a_rescue_file_is_fsynced_and_so_is_its_folder(tmp_path: Path, record: list[tuple[str, str]]) -> None:
    """Notes the store refused, written to a private file when the app stops (no rename: the file
    is created under its final, unguessable name), reach the disk: the file, then its folder."""
    import io

    from studytui.study.session import write_rescue_file

    folder = tmp_path / "data"
    path = write_rescue_file({"roofline": "do not lose me"}, folder, "the store refused it", io.StringIO())
    assert path is not None and path.parent == folder
    assert record == [("fsync-file", str(path)), ("fsync-folder", str(folder))]


def test_a_full_temporary_folder_is_named_and_leaves_no_half_written_note(tmp_path: Path, monkeypatch) -> None:
    """Writing the note into the editor's temporary file fails (a full disk): one line naming the
    file, the partial copy removed, the editor never started."""
    import errno
    import tempfile

    from studytui.core.errors import StudyError

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd: int, mode: str) -> None:
            self.handle = real_fdopen(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.handle.close()

        def write(self, data: bytes) -> int:
            self.handle.write(data[:10])
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Full(fd, mode))
    started = []
    with pytest.raises(StudyError, match=r"cannot write the temporary file .*studytui-note-.*No space left on device.*not changed"):
        edit_in_editor("a note " * 100, "gqa", limit=10_000, environ={"EDITOR": "true"}, run=lambda argv: started.append(argv) or 0)
    assert started == [] and list(tmp_path.iterdir()) == []
