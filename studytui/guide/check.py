"""`studytui check`: the guide's source policy applied to our own content.

The loader already rejects anything structurally wrong and every rule that concerns one entry
(https URLs, admitted kinds, dated Frontier entries, watchlist items without a URL saying why,
performance claims without their five fields, unique ids, no URL twice in a subsection). This
module adds what spans other parts of the project: measured hardware profiles and try-it links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from studytui.guide.loader import parse_content
from studytui.guide.model import ADMITTED_KINDS, Guide


@dataclass
class CheckReport:
    problems: list[str] = field(default_factory=list)
    guide: Guide | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def stats(self) -> dict[str, int]:
        if self.guide is None:
            return {}
        entries = self.guide.entries
        return {
            "sections": len(self.guide.sections),
            "entries": len(entries),
            "primary": sum(1 for e in entries if e.kind in ADMITTED_KINDS),
            "secondary": sum(1 for e in entries if e.kind and e.kind not in ADMITTED_KINDS),
            "watchlist_without_url": sum(1 for e in entries if e.url is None),
            "glossary_terms": len(self.guide.glossary),
        }


def _profile_problems(content_dir: Path) -> list[str]:
    try:
        from studytui.calc.profiles import check_profiles
    except ImportError:
        return []
    return list(check_profiles(content_dir))


def _line_of_entry(files: dict, entry) -> int:
    """The line where an entry's id is written (messages point the reader at the entry)."""
    yf = files.get(entry.source_file)
    if yf is None:
        return 1
    m = re.search(rf"(?m)^\s*-?\s*id:\s*['\"]?{re.escape(entry.id)}['\"]?\s*$", yf.text)
    return yf.text.count("\n", 0, m.start()) + 1 if m else 1


def _try_it_problems(guide: Guide, files: dict) -> list[str]:
    try:
        from studytui.calc.forms import CALCULATORS
    except ImportError:
        return []
    problems = []
    for e in guide.entries:
        if e.try_it is None:
            continue
        spec = CALCULATORS.get(e.try_it.calc)
        if spec is None:
            problems.append(f"{e.source_file}:{_line_of_entry(files, e)}: entry '{e.id}': try_it names unknown calculator '{e.try_it.calc}'")
            continue
        known = {f.name for f in spec.fields}
        for key in e.try_it.args:
            if key not in known:
                problems.append(f"{e.source_file}:{_line_of_entry(files, e)}: entry '{e.id}': try_it field '{key}' is not a field of '{spec.name}'")
    return problems


def _practice_problems(content_dir: Path, guide: Guide | None) -> list[str]:
    try:
        from studytui.practice.check import check_problems
    except ImportError:
        return []
    return check_problems(content_dir, guide)


def check_content(content_dir: str | Path) -> CheckReport:
    path = Path(content_dir)
    parsed = parse_content(path)
    problems = list(parsed.problems)
    if parsed.guide is not None:
        problems += _try_it_problems(parsed.guide, parsed.files)
    problems += _profile_problems(path)
    problems += _practice_problems(path, parsed.guide)
    return CheckReport(problems=problems, guide=parsed.guide)
