"""`studytui check`: the guide's source policy applied to our own content.

The loader already rejects anything structurally wrong and every rule that concerns one entry
(https URLs, admitted kinds, dated Frontier entries, watchlist items without a URL saying why,
performance claims without their five fields, unique ids, no URL twice in a subsection). This
module adds what spans other parts of the project: measured hardware profiles and try-it links,
the guide entries the profile screen suggests (profile-advice.yaml), the provenance of entries
added after the pinned copy of the guide, and the agreement between entry roles and the policy text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studytui.guide.loader import parse_content
from studytui.guide.model import ADMITTED_KINDS, Entry, Guide, TryIt

if TYPE_CHECKING:
    from studytui.calc.forms import CalcSpec
    from studytui.core.yamlio import YamlFile


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
    from studytui.calc.profiles import check_profiles

    return list(check_profiles(content_dir))


def _line_of_entry(files: dict[str, YamlFile], entry: Entry) -> int:
    """The line where an entry's id is written (messages point the reader at the entry)."""
    yf = files.get(entry.source_file)
    if yf is None:
        return 1
    m = re.search(rf"(?m)^[ \t]*-?[ \t]*id:[ \t]*['\"]?{re.escape(entry.id)}['\"]?[ \t]*$", yf.text)
    return yf.text.count("\n", 0, m.start()) + 1 if m else 1


def _try_it_problems(guide: Guide, files: dict[str, YamlFile]) -> list[str]:
    from studytui.calc.forms import CALCULATORS

    problems = []
    for e in guide.entries:
        if e.try_it is None:
            continue
        spec = CALCULATORS.get(e.try_it.calc)
        if spec is None:
            problems.append(
                f"{e.source_file}:{_line_of_entry(files, e)}: entry '{e.id}': try_it names unknown calculator '{e.try_it.calc}'"
            )
            continue
        known = {f.name for f in spec.fields}
        unknown = [key for key in e.try_it.args if key not in known]
        for key in unknown:
            problems.append(
                f"{e.source_file}:{_line_of_entry(files, e)}: entry '{e.id}': try_it field '{key}' is not a field of '{spec.name}'"
            )
        if not unknown:
            problems += _try_it_run_problems(e, e.try_it, spec, files)
    return problems


def _try_it_run_problems(e: Entry, try_it: TryIt, spec: CalcSpec, files: dict[str, YamlFile]) -> list[str]:
    """Run the calculator with exactly what the app's form starts with for this link: a link
    that opens on an error, or whose arguments are silently unused, is a content problem."""
    from studytui.calc.form_values import initial_values
    from studytui.calc.units import FieldError
    from studytui.core.errors import StudyError

    where = f"{e.source_file}:{_line_of_entry(files, e)}: entry '{e.id}': try_it"
    values = initial_values(spec, try_it.args)
    try:
        result = spec.run(values)
    except FieldError as exc:
        return [f"{where} opens '{spec.name}' on an error: {exc}"]
    except StudyError as exc:
        return [f"{where} opens '{spec.name}' on an error: {exc}"]
    if not result.rows:
        return [f"{where} opens '{spec.name}' with no results"]
    if spec.unused is not None:
        given = frozenset(try_it.args)
        from studytui.calc.forms import parse_values

        unused = spec.unused(parse_values(spec, values), given)
        ignored = sorted(name for name in unused if name in given)
        if ignored:
            return [f"{where} sets {', '.join(ignored)}, which '{spec.name}' ignores with these inputs ({unused[ignored[0]]})"]
    return []

def _practice_problems(content_dir: Path, guide: Guide | None) -> list[str]:
    from studytui.practice.check import check_problems

    return check_problems(content_dir, guide)


def _profile_advice_problems(content_dir: Path, guide: Guide | None) -> list[str]:
    """profile-advice.yaml (the profile screen's reading per limiter) names entries of the guide."""
    from studytui.profile.report import check_advice

    return check_advice(content_dir, guide)


def _file_named(files: dict[str, YamlFile], name: str) -> YamlFile | None:
    for display, yf in files.items():
        if Path(display).name == name:
            return yf
    return None


def _provenance_problems(guide: Guide, files: dict[str, YamlFile]) -> list[str]:
    """An entry dated after the pinned README was not read there: it must say `placement: inferred`.

    The pinned README's date is `source.commit_verified_on` in guide.yaml (its Frontier
    "Verified on" date). An inferred entry must also be dated after it, so the mark cannot drift
    onto entries that were read in that README.
    """
    top = _file_named(files, "guide.yaml")
    if top is None or not isinstance(top.data, dict):
        return []
    raw_source = top.data.get("source")
    source: dict[Any, Any] = raw_source if isinstance(raw_source, dict) else {}
    pinned: Any = source.get("commit_verified_on")  # a date (YAML reads an unquoted one as such) or text
    pinned = pinned.isoformat() if hasattr(pinned, "isoformat") else pinned
    if not isinstance(pinned, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", pinned):
        return [f"{top.where(('source',))}: 'source.commit_verified_on' must give the pinned README's "
                "Frontier 'Verified on' date (YYYY-MM-DD)"]
    problems = []
    inferred = 0
    for e in guide.entries:
        where = f"{e.source_file}:{_line_of_entry(files, e)}: entry '{e.id}'"
        later = e.date is not None and e.date > pinned
        if later and e.placement != "inferred":
            problems.append(f"{where}: dated {e.date}, after the pinned README ({pinned}), so it was not read "
                            "there: add 'placement: inferred'")
        elif e.placement == "inferred" and not later:
            problems.append(f"{where}: 'placement: inferred' needs a 'date' after the pinned README ({pinned})")
        inferred += e.placement == "inferred"
    read = source.get("read")
    if inferred and not (isinstance(read, list) and any("update notes" in str(r) for r in read)):
        problems.append(f"{top.where(('source',))}: {inferred} entries are placed from update notes; "
                        "'source.read' must say so")
    return problems


def _role_problems(guide: Guide, files: dict[str, YamlFile]) -> list[str]:
    """Roles in content and the policy text agree: every role used is described in the text (by
    its label), a core entry is of a core kind, and no other kind is marked core."""
    yf = _file_named(files, "policy.yaml")
    if yf is None or not isinstance(yf.data, dict):
        return []
    roles = yf.data.get("roles")
    if not isinstance(roles, list) or not all(isinstance(r, dict) and isinstance(r.get("id"), str)
                                               and isinstance(r.get("label"), str) for r in roles):
        return [f"{yf.where(('roles',))}: 'roles' must list each role as {{id, label}}"]
    problems = []
    text = guide.policy.text
    for i, role in enumerate(roles):
        if role["label"] not in text:
            problems.append(f"{yf.where(('roles', i))}: role '{role['id']}' is not described in the policy text "
                            f"(its label {role['label']!r} does not appear there)")
    known = {r["id"] for r in roles}
    core_kinds = set(guide.policy.admitted_kinds)
    for e in guide.entries:
        where = f"{e.source_file}:{_line_of_entry(files, e)}: entry '{e.id}'"
        if e.role not in known:
            problems.append(f"{where}: role '{e.role}' is not described in policy.yaml")
        elif e.role == "core" and e.kind not in core_kinds:
            problems.append(f"{where}: kind '{e.kind}' is not a core kind ({', '.join(sorted(core_kinds))}), "
                            "so its role cannot be core (use companion)")
    return problems


def check_content(content_dir: str | Path) -> CheckReport:
    path = Path(content_dir)
    parsed = parse_content(path)
    problems = list(parsed.problems)
    if parsed.guide is not None:
        problems += _try_it_problems(parsed.guide, parsed.files)
        problems += _provenance_problems(parsed.guide, parsed.files)
        problems += _role_problems(parsed.guide, parsed.files)
    problems += _profile_problems(path)
    problems += _practice_problems(path, parsed.guide)
    problems += _profile_advice_problems(path, parsed.guide)
    return CheckReport(problems=problems, guide=parsed.guide)
