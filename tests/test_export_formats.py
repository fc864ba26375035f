"""Issue 25: the export formats in one registry (`studytui.exports.FORMATS`), one module each;
`studytui export` and `import` choose through it only."""

from __future__ import annotations

import importlib
import json
import zipfile
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.exports import (
    DEFAULT,
    FORMATS,
    Format,
    export_description,
    format_for,
    format_help,
    import_description,
    import_format_for,
    import_help,
    import_path_help,
)
from studytui.guide import load_guide
from studytui.store import open_store

GUIDE = load_guide()
FIRST, SECOND = GUIDE.entries[0].id, GUIDE.entries[1].id


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def progress(isolated_data_dir: Path) -> Path:
    with open_store(isolated_data_dir) as store:
        store.set_state(FIRST, "done")
        store.set_note(FIRST, "my words on the first entry")
        store.set_state(SECOND, "learning")
    return isolated_data_dir


# -- the registry -------------------------------------------------------------------------------


def test_the_four_formats_each_in_a_module_of_their_own() -> None:
    assert list(FORMATS) == ["json", "md", "anki", "vault"]
    modules = [f.module for f in FORMATS.values()]
    assert len(set(modules)) == len(modules)
    for name, fmt in FORMATS.items():
        assert fmt.name == name
        code = importlib.import_module(f"studytui.exports.{fmt.module}")
        assert callable(code.export)
        assert callable(getattr(code, "load", None)) == fmt.importable == callable(getattr(code, "merge", None))
        assert not (fmt.folder and fmt.stdout)  # a folder never goes to standard output


@pytest.mark.parametrize("fmt", list(FORMATS.values()), ids=list(FORMATS))
def test_each_format_is_found_by_its_suffix(fmt: Format) -> None:
    for suffix in fmt.suffixes:
        assert format_for(f"backup{suffix}") is fmt
        assert format_for(f"BACKUP{suffix.upper()}") is fmt
    assert format_for("anything.md", fmt.name) is fmt  # --format wins over the suffix


def test_a_path_no_suffix_claims_is_the_default_and_a_folder_must_be_asked_for(tmp_path: Path) -> None:
    assert DEFAULT.name == "json" and format_for("backup") is DEFAULT and format_for("-") is DEFAULT
    assert format_for(str(tmp_path)) is DEFAULT  # an existing folder is not enough for the vault
    assert import_format_for(str(tmp_path), True) is FORMATS["vault"]
    assert import_format_for("notes.json", False) is FORMATS["json"]
    assert import_format_for("notes.md", False) is FORMATS["json"]  # read as JSON, as before: refused as not JSON


def test_the_help_is_built_from_the_registry_word_for_word() -> None:
    assert format_help() == "default: md for *.md files, anki for *.apkg, json otherwise (vault must be asked for)"
    assert export_description() == (
        "JSON: a complete, re-importable backup (states, times, notes, event log). Markdown: "
        "a readable study journal of all notes by section. Anki: a deck package (.apkg) of the glossary and "
        "the practice problems you met. Vault: a folder of Markdown notes (Obsidian-style front matter) "
        "that 'studytui import DIR' reads back. PATH '-' writes to standard output (json, md). The file or "
        "folder written is reported as an absolute path, whatever the format."
    )


def test_the_import_help_is_built_from_the_registry_word_for_word() -> None:
    assert import_help() == "merge a JSON export or a notes vault"
    assert import_description() == (
        "Merge a JSON export into your progress: per entry the newer change wins, conflicting notes are both "
        "kept with a marker line, entries no longer in the guide are kept as orphans. PATH a directory: read "
        "the notes back from a vault written by 'export --format vault'."
    )
    assert import_path_help() == "a file written by 'studytui export' ('-' for stdin), or a vault directory"


@pytest.mark.parametrize("argv", [["--help"], ["import", "--help"]])
def test_the_command_shows_the_import_help_from_the_registry(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    out = " ".join(capsys.readouterr().out.split())
    if argv == ["--help"]:
        assert f"import {import_help()}" in out
    else:
        assert import_description() in out and import_path_help() in out


def test_an_importable_format_added_to_the_registry_is_named_in_the_import_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(FORMATS, "cards", Format("cards", "vault", "Cards.", folder=True, importable=True,
                                                  noun="a card folder", import_summary="read cards back."))
    assert import_help() == "merge a JSON export or a notes vault or a card folder"
    assert import_description().endswith("PATH a directory: read cards back.")
    assert import_path_help().endswith(", or a vault directory, or a cards directory")


# -- each format through the command line -------------------------------------------------------


def test_json_round_trips(progress: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "backup.json"
    code, _, err = run(capsys, "export", str(path))
    assert code == 0 and err.startswith(f"Wrote {path} (json: 2 entries, 1 note, ")
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == "studytui-progress"
    monkeypatch.setenv("STUDYTUI_DATA_DIR", str(tmp_path / "elsewhere"))
    code, out, _ = run(capsys, "import", str(path))
    assert code == 0 and out.startswith("Imported backup.json: 2 entries added")
    with open_store(tmp_path / "elsewhere") as store:
        assert store.progress(FIRST).state == "done" and store.get_note(FIRST) == "my words on the first entry"
        assert store.progress(SECOND).state == "learning"


def test_vault_round_trips(progress: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    code, _, err = run(capsys, "export", str(vault), "--format", "vault")
    assert code == 0 and err.startswith(f"Wrote {vault} (vault: ")
    entry_file = next(vault.rglob(f"{FIRST}.md"))
    entry_file.write_text(entry_file.read_text(encoding="utf-8").replace("my words", "my own words"), encoding="utf-8")
    code, out, _ = run(capsys, "import", str(vault))
    assert code == 0 and "1 notes updated" in out
    with open_store(progress) as store:
        assert store.get_note(FIRST) == "my own words on the first entry"


def test_markdown_is_written_and_found_by_suffix(progress: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "journal.markdown"
    code, _, err = run(capsys, "export", str(path))
    assert code == 0 and "(md: 2 entries, 1 note, " in err
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"# Study journal: {GUIDE.title}") and "my words on the first entry" in text
    code, out, _ = run(capsys, "export", "-", "--format", "md")
    lines, again = text.split("\n"), out.split("\n")
    assert code == 0 and again[:2] == lines[:2] and again[3:] == lines[3:]  # the same journal; line 3 says when


def test_anki_is_written_and_found_by_suffix(progress: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("genanki")
    path = tmp_path / "cards.apkg"
    code, _, err = run(capsys, "export", str(path))
    assert code == 0 and err.startswith(f"Wrote {path} (anki: ")
    assert zipfile.is_zipfile(path)


@pytest.mark.parametrize("name,what", [("anki", "a file"), ("vault", "a directory")])
def test_a_format_that_writes_no_stream_refuses_standard_output(name: str, what: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "export", "-", "--format", name)
    assert code == 2 and out == "" and f"--format {name} writes {what}, not standard output" in err


def test_a_format_added_to_the_registry_is_chosen_by_the_command(progress: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The command picks formats through FORMATS only: a new entry is found by its suffix."""
    monkeypatch.setitem(FORMATS, "txt", Format("txt", "journal", "Text: the journal.", suffixes=(".txt",)))
    path = tmp_path / "notes.txt"
    code, _, err = run(capsys, "export", str(path))
    assert code == 0 and "(txt: 2 entries, 1 note, " in err and "my words" in path.read_text(encoding="utf-8")


def test_the_new_modules_load_no_textual() -> None:
    """As tests/test_layers.py does for the older ones: the registry, each format, the study
    layer's workspace and guide changes, the CLI's shared views."""
    import subprocess
    import sys

    modules = ["studytui.exports", "studytui.exports.report", "studytui.exports.backup", "studytui.exports.journal",
               "studytui.study.workspace", "studytui.study.guide_changes", "studytui.study.progress", "studytui.cli.views"]
    script = f"import sys\nfor m in {modules!r}: __import__(m)\nprint(any(n == 'textual' or n.startswith('textual.') for n in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr
