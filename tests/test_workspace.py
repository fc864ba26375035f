"""Issue 25: one way to open the guide and the store (`study.workspace.open_workspace`), and
every front end uses it, so progress recorded under a renamed entry's old id follows the entry
whichever front end runs first: the commands, the app (`tui.launch`) and the server."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.core.paths import content_dir
from studytui.guide import load_guide
from studytui.store import open_store
from studytui.study.workspace import open_existing_workspace, open_workspace, read_workspace

GUIDE = load_guide()
TARGET = GUIDE.entries[2]
NEW_ID = f"{TARGET.id}-renamed"


@pytest.fixture
def renamed(tmp_path: Path) -> Path:
    """A copy of the content where TARGET is renamed (its old id kept in `aliases`)."""
    content = tmp_path / "content"
    shutil.copytree(content_dir(), content)
    source = content / "sections" / Path(TARGET.source_file).name
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.strip() == f"- id: {TARGET.id}")
    indent = lines[index][: lines[index].index("-")]
    lines[index] = f"{indent}- id: {NEW_ID}\n{indent}  aliases: [{TARGET.id}]\n"
    source.write_text("".join(lines), encoding="utf-8")
    return content


@pytest.fixture
def data(isolated_data_dir: Path) -> Path:
    """Progress and a note stored under the old id."""
    with open_store(isolated_data_dir) as store:
        store.set_state(TARGET.id, "done")
        store.set_note(TARGET.id, "written before the rename")
    return isolated_data_dir


def stored_ids(data: Path) -> set[str]:
    with open_store(data) as store:
        return set(store.states())


def test_open_workspace_moves_progress_onto_the_new_id(renamed: Path, data: Path) -> None:
    guide, store = open_workspace(renamed, data)
    with store:
        assert guide.get(NEW_ID) is not None and set(store.states()) == {NEW_ID}
        assert store.get_note(NEW_ID) == "written before the rename"


def test_open_existing_workspace_opens_no_store_where_there_is_none(renamed: Path, tmp_path: Path) -> None:
    guide, store = open_existing_workspace(renamed, tmp_path / "none")
    assert store is None and guide.get(NEW_ID) is not None and not (tmp_path / "none").exists()


def test_a_workspace_that_fails_to_follow_aliases_closes_its_store(renamed: Path, data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from studytui.store.store import Store

    closed: list[bool] = []
    real_close = Store.close

    def fail(self: Store, aliases: object) -> None:
        raise RuntimeError("boom")

    def close(self: Store) -> None:
        closed.append(True)
        real_close(self)

    monkeypatch.setattr(Store, "follow_aliases", fail)
    monkeypatch.setattr(Store, "close", close)
    with pytest.raises(RuntimeError):
        open_workspace(renamed, data)
    assert closed


@pytest.mark.parametrize(
    "argv",
    [
        ["next", "--json"], ["progress", "--json"], ["list", "--json"], ["show", NEW_ID], ["search", "rename", "--json"],
        ["note", NEW_ID], ["history", NEW_ID, "--json"], ["practice", "--json"], ["export", "-"],
    ],
    ids=lambda argv: " ".join(argv[:1]),
)
def test_every_command_follows_aliases(renamed: Path, data: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--content", str(renamed), *argv]) == 0, capsys.readouterr().err
    assert stored_ids(data) == {NEW_ID}


def _fingerprint(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.mark.parametrize("argv", [["plan", "--json"], ["plan"]], ids=lambda argv: " ".join(argv))
def test_every_read_only_command_follows_aliases_in_memory(renamed: Path, data: Path, argv: list[str],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A command that only reads (`plan`) sees the progress under the new id, and leaves the file as it was."""
    import json

    before = _fingerprint(data)
    assert main(["--content", str(renamed), *argv]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    if "--json" in argv:
        left = {entry["id"] for entry in json.loads(out)["entries"]}
        assert NEW_ID not in left and TARGET.id not in left  # done, under its old id
        assert len(left) == len(GUIDE.entries) - 1
    assert _fingerprint(data) == before and stored_ids(data) == {TARGET.id}


def test_read_workspace_rekeys_progress_and_events_in_memory(renamed: Path, data: Path) -> None:
    before = _fingerprint(data)
    snapshot = read_workspace(renamed, data, command="plan")
    assert snapshot.guide.get(NEW_ID) is not None
    assert set(snapshot.states) == {NEW_ID} and snapshot.states[NEW_ID].state == "done"
    assert snapshot.states[NEW_ID].note == "written before the rename"
    entry_ids = {event["entry_id"] for event in snapshot.events if event["entry_id"]}
    assert entry_ids == {NEW_ID}
    assert snapshot.attempts == []
    assert _fingerprint(data) == before


def test_read_workspace_creates_nothing_where_there_is_no_store(renamed: Path, tmp_path: Path) -> None:
    snapshot = read_workspace(renamed, tmp_path, command="plan")
    assert snapshot.states == {} and snapshot.events == [] and list(tmp_path.iterdir()) == [renamed]


def test_read_workspace_gives_an_empty_sqlite_file_no_schema(tmp_path: Path) -> None:
    import sqlite3

    data = tmp_path / "data"
    data.mkdir()
    conn = sqlite3.connect(data / "studytui.db")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("DROP TABLE t")  # a SQLite file with a header, and no table
    conn.commit()
    conn.close()
    before = _fingerprint(data)
    snapshot = read_workspace(data_dir=data, command="plan")
    assert snapshot.states == {} and _fingerprint(data) == before


def test_read_workspace_refuses_an_older_store_in_one_line(isolated_data_dir: Path) -> None:
    from studytui.core.errors import StoreError
    from studytui.store.schema import create_v1
    from studytui.store.store import Store

    old = Store(isolated_data_dir / "studytui.db", migrations={1: create_v1})
    old.set_state(TARGET.id, "done")
    old.close()
    before = _fingerprint(isolated_data_dir)
    with pytest.raises(StoreError) as caught:
        read_workspace(data_dir=isolated_data_dir, command="plan")
    message = str(caught.value)
    assert "\n" not in message and message.endswith(
        "is from an older studytui (schema version 1): 'studytui plan' only reads, so it does not upgrade it - "
        "run 'studytui progress' once (it upgrades the file and keeps a backup), then plan again")
    assert _fingerprint(isolated_data_dir) == before


def test_guide_diff_follows_aliases(renamed: Path, data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_guide_diff import model, render  # a README in the guide's format, rendered from the content

    readme = tmp_path / "README.md"
    readme.write_text(render(model(load_guide(renamed))), encoding="utf-8")
    assert main(["--content", str(renamed), "guide", "diff", str(readme), "--json"]) in (0, 1), capsys.readouterr().err
    assert stored_ids(data) == {NEW_ID}


def test_the_app_follows_aliases(renamed: Path, data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tui.launch` opens the workspace before it builds the app (stopped right there)."""
    from studytui.tui import launch

    class Stop(Exception):
        pass

    def stop(*_args: object, **_kw: object) -> None:
        raise Stop

    monkeypatch.setattr("studytui.tui.registry.build_registry", stop)
    with pytest.raises(Stop):
        launch.run_app(argparse.Namespace(content=str(renamed), data_dir=str(data), command=None))
    assert stored_ids(data) == {NEW_ID}


def test_the_server_follows_aliases_before_it_serves(renamed: Path, data: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from studytui.serve import server

    served: list[bool] = []

    class FakeServer:
        def __init__(self, *_args: object, **_kw: object) -> None:
            pass

        def serve(self) -> None:
            served.append(stored_ids(data) == {NEW_ID})  # already moved when the first tab could open

    monkeypatch.setattr(server, "study_server_class", lambda: FakeServer)
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # serve() wraps it; put it back after
    assert server.serve("127.0.0.1", 8000, str(data), str(renamed)) == 0
    assert served == [True]
