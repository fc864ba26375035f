"""The clock and the learner's time zone, chosen in one place for every front end.

`studytui plan` and the app's Today view put study time on the learner's calendar days. Both ask
here which zone that is, so the command line and the app never disagree about when a day ends.
The plan's logic (studytui.study.plan) reads neither the clock nor the zone: the front end passes
them in, and tests replace them.

Only the standard library; `zoneinfo` is imported when a zone is chosen.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone, tzinfo


def now() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(timezone.utc)


# The tz database's names for UTC itself (its "backward" links to Etc/UTC): no offset and no
# daylight saving ever, so datetime's own UTC is that zone exactly, without loading zoneinfo
# (and the sysconfig data it reads its search path from: 4% of the yardstick, issue 27).
UTC_NAMES = frozenset({
    "UTC", "Etc/UTC", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu",
})


def local_zone() -> tuple[tzinfo, str]:
    """The learner's time zone and its name: TZ when it names a zone, else the system's
    (/etc/localtime), else the current UTC offset of local time (which does not follow daylight
    saving; the name says which offset it is, so it can be seen). A name of UTC itself
    (`UTC_NAMES`) is datetime's UTC, under that name."""
    name = (os.environ.get("TZ") or "").strip().lstrip(":")
    candidates = [name] if name else []
    if not name:
        target = os.path.realpath("/etc/localtime")
        if "/zoneinfo/" in target:
            candidates.append(target.split("/zoneinfo/", 1)[1])
    if candidates and candidates[0] in UTC_NAMES:
        return timezone.utc, candidates[0]
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    for key in candidates:
        try:
            return ZoneInfo(key), key
        except (ZoneInfoNotFoundError, ValueError, OSError):
            continue
    local = datetime.now().astimezone()
    return local.tzinfo or timezone.utc, local.tzname() or "local time"
