"""The export formats, one module each, and `FORMATS`, the one registry that `studytui export`
and `studytui import` choose from.

| name  | module       | PATH            | import |
|-------|--------------|-----------------|--------|
| json  | `backup.py`  | a file, or '-'  | yes    |
| md    | `journal.py` | a file, or '-'  | no     |
| anki  | `anki.py`    | a file (.apkg)  | no     |
| vault | `vault.py`   | a folder        | yes    |

A format module provides `export(path, guide, store) -> Exported` (path None: standard output,
for formats with `stdout`) and, where it can be read back, `load(path_arg)` (the file read and
checked before any store is opened) and `merge(loaded, guide, store) -> Imported`. The registry
only names modules: each is imported when its format runs, and a module imports its third-party
library (genanki, PyYAML) only then, so the rest of the CLI never pays for it and works without
the optional extras installed. Nothing here prints: the command reports what `Exported` and
`Imported` (report.py) say.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from studytui.core.tuples import Tuple

if TYPE_CHECKING:
    from pathlib import Path

    from studytui.exports.report import Exported, Imported


class Format(Tuple):
    """One export format. (A NamedTuple: `studytui --help` builds the export command's help from
    the registry, and must not pay for importing dataclasses.)"""

    name: str  # the --format value
    module: str  # its module under studytui.exports, imported when the format runs
    summary: str  # for `export --help`: "Anki: a deck package (.apkg) of ..."
    suffixes: tuple[str, ...] = ()  # PATH endings that choose it when --format is not given
    default_help: str = ""  # for `--format` help: "anki for *.apkg"; empty: it must be asked for
    folder: bool = False  # PATH is a folder (made if missing), not a file
    stdout: bool = False  # PATH '-' writes it to standard output
    importable: bool = False  # `studytui import PATH` reads it back
    noun: str = ""  # for `import --help`, importable formats: what PATH holds ("a JSON export")
    import_summary: str = ""  # for `import --help`, importable formats: what importing it does

    def _code(self) -> Any:
        return importlib.import_module(f"{__name__}.{self.module}")

    def export(self, path: Path | None, guide: Any, store: Any) -> Exported:
        """Write the learner's progress in this format to `path` (None: standard output)."""
        result: Exported = self._code().export(path, guide, store)
        return result

    def load(self, path_arg: str) -> Any:
        """Read and check what `studytui import PATH` was given, before any store is opened."""
        if not self.importable:
            raise LookupError(f"{self.name} cannot be imported")
        return self._code().load(path_arg)

    def merge(self, loaded: Any, guide: Any, store: Any) -> Imported:
        """Merge what `load` read into the store."""
        result: Imported = self._code().merge(loaded, guide, store)
        return result


# The order of `--format`'s choices and of the formats in `export --help`.
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("json", "backup", "JSON: a complete, re-importable backup (states, times, notes, event log).",
               suffixes=(".json",), stdout=True, importable=True, noun="a JSON export",
               import_summary="Merge a JSON export into your progress: per entry the newer change wins, conflicting "
               "notes are both kept with a marker line, entries no longer in the guide are kept as orphans."),
        Format("md", "journal", "Markdown: a readable study journal of all notes by section.",
               suffixes=(".md", ".markdown"), default_help="md for *.md files", stdout=True),
        Format("anki", "anki", "Anki: a deck package (.apkg) of the glossary and the practice problems you met.",
               suffixes=(".apkg",), default_help="anki for *.apkg"),
        Format("vault", "vault", "Vault: a folder of Markdown notes (Obsidian-style front matter) that 'studytui import DIR' "
               "reads back.", folder=True, importable=True, noun="a notes vault",
               import_summary="read the notes back from a vault written by 'export --format vault'."),
    )
}
DEFAULT = FORMATS["json"]  # a PATH no suffix claims (and standard output)


def format_for(path: str, name: str | None = None) -> Format:
    """The format `studytui export PATH [--format NAME]` writes: NAME, else the one whose suffix
    PATH ends with, else DEFAULT."""
    if name is not None:
        return FORMATS[name]
    lowered = path.lower()
    return next((f for f in FORMATS.values() if f.suffixes and lowered.endswith(f.suffixes)), DEFAULT)


def import_format_for(path: str, is_folder: bool) -> Format:
    """The format `studytui import PATH` reads: the importable folder format for a folder, else
    the importable file format whose suffix PATH ends with, else DEFAULT."""
    readable = [f for f in FORMATS.values() if f.importable and f.folder == is_folder]
    lowered = path.lower()
    return next((f for f in readable if f.suffixes and lowered.endswith(f.suffixes)), readable[0] if readable else DEFAULT)


def format_help() -> str:
    """`export --format`'s help: which PATH endings choose which format."""
    chosen = [f.default_help for f in FORMATS.values() if f.default_help]
    asked = [f.name for f in FORMATS.values() if not f.default_help and f is not DEFAULT]
    text = f"default: {', '.join([*chosen, f'{DEFAULT.name} otherwise'])}"
    if asked:
        text += f" ({', '.join(asked)} must be asked for)"
    return text


def _importable() -> list[Format]:
    return [f for f in FORMATS.values() if f.importable]


def import_help() -> str:
    """`import`'s line in `studytui --help`: what it reads."""
    return "merge " + " or ".join(f.noun for f in _importable())


def import_description() -> str:
    """`import --help`'s description: what importing each format does (a folder format: PATH a directory)."""
    return " ".join(("PATH a directory: " if f.folder else "") + f.import_summary for f in _importable())


def import_path_help() -> str:
    """`import --help`'s help for PATH: a file any importable file format wrote ('-': standard
    input, read as the first of them), or a folder format's directory."""
    files = [f for f in _importable() if not f.folder]
    kinds = ["a file written by 'studytui export' ('-' for stdin)"] if files else []
    kinds += [f"a {f.name} directory" for f in _importable() if f.folder]
    return ", or ".join(kinds)


def export_description() -> str:
    """`export --help`'s description: every format, then what PATH '-' does."""
    to_stdout = ", ".join(f.name for f in FORMATS.values() if f.stdout)
    return (" ".join(f.summary for f in FORMATS.values()) + f" PATH '-' writes to standard output ({to_stdout}). "
            "The file or folder written is reported as an absolute path, whatever the format.")
