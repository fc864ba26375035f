"""What an export or an import did, for the command to report (`studytui.exports.report`):
the format modules fill these in; nothing under studytui/exports prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Exported:
    """What an export wrote, for the command's report: `Wrote PATH (NAME: what)`."""

    written: Path | None  # the file or folder written (absolute; a symlink's target); None: standard output
    what: str  # "3 entries, 1 note, 4 events": what it holds
    warnings: list[str] = field(default_factory=list)  # one line each, before the report ("studytui: warning: ...")
    notices: str = ""  # lines printed as they are after the report (a damaged database, the import limit)
    status: int = 0  # the exit status: 1 when only part could be exported (a damaged database)
    payload: bytes = b""  # written to standard output (written is None)


@dataclass(frozen=True)
class Paragraph:
    """One paragraph of an import report, filled to the terminal's width. Kept on one line where
    they fit: the strings in `keep`, and with `clauses` each clause ("3 notes updated"), with
    `quoted` each 'quoted name' or `code span`."""

    text: str
    keep: tuple[str, ...] = ()
    clauses: bool = False
    quoted: bool = False


@dataclass
class Imported:
    """What an import did: `report.to_dict()` for --json, else the paragraphs; the warnings
    (one line each) go to standard error first either way."""

    report: Any
    paragraphs: list[Paragraph]
    warnings: list[str] = field(default_factory=list)
