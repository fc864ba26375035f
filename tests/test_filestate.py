"""Values kept per file state: computed once while a file is unchanged, again when it changes."""

from __future__ import annotations

from pathlib import Path

from studytui.core.filestate import PerFileState, file_stamp


def test_a_value_is_computed_again_only_when_its_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text("a: 1\n")
    calls: list[str] = []

    def compute(p: Path) -> str:
        calls.append(p.read_text())
        return p.read_text()

    kept: PerFileState[str] = PerFileState()
    assert kept.get(path, compute) == "a: 1\n" and kept.get(path, compute) == "a: 1\n"
    assert len(calls) == 1
    path.write_text("a: 22\n")  # another size: told apart even within one clock tick
    assert kept.get(path, compute) == "a: 22\n" and len(calls) == 2


def test_a_file_that_cannot_be_read_is_never_kept(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    assert file_stamp(missing) is None
    kept: PerFileState[int] = PerFileState()
    calls: list[Path] = []
    assert kept.get(missing, lambda p: calls.append(p) or len(calls)) == 1
    assert kept.get(missing, lambda p: calls.append(p) or len(calls)) == 2
