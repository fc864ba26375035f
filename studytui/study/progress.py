"""What `studytui progress` reports beside the study flow's summary (`flow.progress_summary`):
practice mastery per section and what is due for review."""

from __future__ import annotations

from typing import Any


def practice_progress(guide: Any, store: Any) -> dict[str, Any] | None:
    """Per-section mastery and the due count (None when no problems load)."""
    from studytui.core.errors import ContentError
    from studytui.practice.service import Practice

    try:
        practice = Practice(guide, store)
    except ContentError:
        return None
    mastery = practice.mastery()
    return {
        "sections": [mastery[s.id].to_dict() | {"title": s.title} for s in guide.sections if s.id in mastery],
        "problems": len(practice.heads),
        "mastered": sum(m.mastered for m in mastery.values()),
        "due": len(practice.due()),
    }
