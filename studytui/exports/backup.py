"""The JSON backup: `studytui export FILE` (`--format json`) and `studytui import FILE`.

A complete, re-importable copy of the store (states, times, notes, section notes, the event
log, practice attempts): the store's own `export_json`, written atomically, or to standard
output for PATH '-'. Import reads it back bounded in size (`fileio.json_import_limit`) and
merges it: per entry the newer change wins, conflicting notes are both kept.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from studytui.core.errors import UsageError
from studytui.core.text import plural
from studytui.exports.report import Exported, Imported, Paragraph


def snapshot(store: Any) -> tuple[dict[str, Any], str | None]:
    """(the store's export, what is wrong with it when the database is damaged, else None)."""
    return store.export_json(), store.damaged


def deliver(path: Path | None, text: str, data: dict[str, Any], damaged: str | None, notices: str = "",
            payload: str | None = None) -> Exported:
    """`text` written to `path` (atomically; through a symlink to its target), or kept as the
    payload for standard output (`payload`: what goes there instead, when that differs). The
    report counts what `data` (a store export) holds."""
    if damaged:
        notices = (f"warning: the database is damaged ({damaged}); this export holds only what could still be read\n"
                   + notices)
    status = 1 if damaged else 0
    n_notes = sum(1 for e in data["entries"] if e["note"])
    what = f"{plural(len(data['entries']), 'entry')}, {plural(n_notes, 'note')}, {plural(len(data['events']), 'event')}"
    if path is None:
        return Exported(None, what, notices=notices, status=status, payload=(text if payload is None else payload).encode("utf-8"))
    from studytui.core.fileio import write_atomically

    written = write_atomically(path, text.encode("utf-8"))
    return Exported(written, what, notices=notices, status=status)


def export(path: Path | None, guide: Any, store: Any) -> Exported:
    data, damaged = snapshot(store)
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return deliver(path, text, data, damaged, notices=import_limit_warning(len(text.encode("utf-8"))))


def import_limit_warning(size: int) -> str:
    """A warning line when an export of `size` bytes is larger than `studytui import` reads by
    default (fileio.JSON_IMPORT_LIMIT), naming the variable that raises the limit; else ''."""
    from studytui.core import fileio

    default = fileio.JSON_IMPORT_LIMIT
    if size <= default:
        return ""
    need = -(-size // fileio.MIB)  # MiB, rounded up
    return (
        f"warning: this export is {need} MiB, larger than the {fileio.size_text(default)} 'studytui import' "
        f"reads by default; to import it, run: {fileio.IMPORT_LIMIT_ENV}={need} studytui import FILE\n"
    )


# -- import ---------------------------------------------------------------------------------


def printable_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (kept by Python as surrogates) become U+FFFD,
    so the name can be printed and stored in a conflict marker."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def load(path_arg: str) -> tuple[Any, str, str]:
    """(the parsed export, the name it is reported under, `path_arg`) for `studytui import
    PATH` ('-': standard input). UsageError, one line, for a file that is too large, not a
    regular file, unreadable, or not JSON; nothing has been opened or changed then."""
    from studytui.core import fileio

    # Bounded (fileio.json_import_limit(): 64 MiB unless STUDYTUI_IMPORT_LIMIT_MIB says more): a
    # 200 MB file must not take gigabytes to be refused. Only a regular file (or stdin) is read:
    # a FIFO would block for ever.
    limit, what = fileio.json_import_limit(), "a JSON export"
    raise_it = f" (to read it, raise the limit: {fileio.IMPORT_LIMIT_ENV}=N, in MiB)"
    if path_arg == "-":
        try:
            raw, name = fileio.read_stream_bounded(sys.stdin.buffer, limit, what, "stdin"), "stdin"
        except fileio.TooLargeError as exc:
            raise UsageError(f"{exc}{raise_it}; nothing was changed") from None
    else:
        path = Path(path_arg).expanduser()
        name = printable_name(path.name)
        try:
            raw = fileio.read_bounded(path, limit, what)
        except fileio.TooLargeError as exc:
            raise UsageError(f"{exc}{raise_it}; nothing was changed") from None
        except fileio.RefusedFileError as exc:
            raise UsageError(f"{exc}; nothing was changed") from None
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}; nothing was changed") from None
    try:
        return json.loads(raw.decode("utf-8")), name, path_arg
    except RecursionError:
        raise UsageError(f"{path_arg} is nested too deeply to be a studytui export; nothing was changed") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path_arg} is not a JSON export ({str(exc).splitlines()[0]}); nothing was changed") from None


def merge(loaded: tuple[Any, str, str], guide: Any, store: Any) -> Imported:
    """Merge a loaded export into `store`; ids the guide knows only as aliases move onto the
    current entries."""
    from studytui.study.flow import alias_map
    from studytui.study.workspace import follow_aliases

    data, name, path_arg = loaded
    known = {e.id for e in guide.entries} | set(alias_map(guide))
    try:
        report = store.import_json(data, known, source=name)
    except UsageError as exc:
        raise UsageError(f"{path_arg}: {exc}; nothing was changed") from None
    follow_aliases(guide, store)
    text = (
        f"Imported {name}: {plural(report.entries_added, 'entry')} added, {plural(report.states_updated, 'state')} and "
        f"{plural(report.notes_updated, 'note')} updated, {plural(report.events_added, 'event')} added, "
        f"{plural(report.attempts_added, 'practice attempt')} added."
    )
    # A count stays with what it counts, the file name and the ids whole.
    paragraphs = [Paragraph(text, keep=(name,), clauses=True)]
    if report.notes_conflicted:
        paragraphs.append(Paragraph(
            f"Changed on both sides in the same words, both kept (marked with a '--- studytui: conflicting note' "
            f"line) for: {', '.join(report.notes_conflicted)}", clauses=True, quoted=True))
    if report.orphans:
        paragraphs.append(Paragraph(f"Kept as orphans (not in this guide): {', '.join(report.orphans)}"))
    return Imported(report, paragraphs)
