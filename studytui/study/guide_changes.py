"""What a newer copy of the guide's README changes, and what that means for the learner's own
progress: `studytui guide diff README` and the app's "What changed in the guide" screen
(`studytui --readme FILE`) both come here.

The comparison itself is the guide's (`studytui.guide.diff.compare`); which of the learner's
entries it touches needs their stored progress, so it sits in the study layer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from studytui.guide.diff import GuideDiff, LearnerImpact
    from studytui.guide.model import Guide


@dataclass(frozen=True)
class GuideChanges:
    """The guide, its differences from the README, the learner's entries they touch, and
    whether there is a store at all (no store: nothing of the learner's can be affected)."""

    guide: Guide
    diff: GuideDiff
    impacts: list[LearnerImpact]
    have_store: bool


def compute(content: str | os.PathLike[str] | None, data_dir: str | os.PathLike[str] | None,
            readme_path: str) -> GuideChanges:
    """The changes a README makes, against the guide in `content` and the progress in
    `data_dir` (read only when a store exists). UsageError for a file that is not the guide's README."""
    from studytui.core.errors import UsageError
    from studytui.guide import load_guide
    from studytui.guide.diff import NotTheGuide, compare
    from studytui.guide.readme import load_readme
    from studytui.study.workspace import open_existing_workspace

    readme = load_readme(readme_path)
    guide = load_guide(content)
    try:
        diff = compare(guide, readme)
    except NotTheGuide as exc:
        raise UsageError(str(exc)) from None
    _guide, store = open_existing_workspace(data_dir=data_dir, guide=guide)
    if store is None:
        return GuideChanges(guide, diff, [], False)
    with store:
        return GuideChanges(guide, diff, learner_impact(guide, diff, store.states()), True)


def learner_impact(guide: Guide, diff: GuideDiff, states: Mapping[str, Any]) -> list[LearnerImpact]:
    """Which of the learner's entries with progress or notes the differences touch, and what
    happens to them: removed ones become orphans (kept, never lost); the rest keep their id, and
    an id renamed later follows through `aliases`."""
    from studytui.guide.diff import LearnerImpact
    from studytui.study.flow import canonical_states

    current, _orphans = canonical_states(guide, states)
    by_entry: dict[str, list[str]] = {}
    for d in diff.differences:
        if d.entry_id:
            by_entry.setdefault(d.entry_id, []).append(d.kind)
    out = []
    for entry_id, kinds in by_entry.items():
        p = current.get(entry_id)
        if p is None or (p.state == "pending" and not p.note):
            continue
        entry = guide.get(entry_id)
        removed = any(k in ("entry-removed", "watchlist-removed") for k in kinds)
        outcome = ("would become an orphan: your progress and note stay in the store, listed apart, never deleted"
                   if removed else "keeps its progress and note (same id; a later rename follows through aliases)")
        out.append(LearnerImpact(entry_id, entry.title if entry else entry_id, p.state, bool(p.note), kinds, outcome))
    return out
