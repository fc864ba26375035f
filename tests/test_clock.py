"""core/clock.local_zone: the learner's zone, one choice for the command line and the app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from studytui.core import clock


def _has_zone(key: str) -> bool:
    try:
        from zoneinfo import ZoneInfo

        ZoneInfo(key)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("key", sorted(clock.UTC_NAMES))
def test_a_utc_name_is_utc_itself_as_the_tz_database_has_it(monkeypatch, key) -> None:
    monkeypatch.setenv("TZ", key)
    tz, name = clock.local_zone()
    assert tz is timezone.utc and name == key
    if not _has_zone(key):
        pytest.skip(f"this system's tz database lacks {key}")
    from zoneinfo import ZoneInfo

    real = ZoneInfo(key)
    moment = datetime(1970, 1, 1, tzinfo=timezone.utc)
    for _ in range(200):  # every 73 days from 1970 to 2010, and the offset and name agree
        assert moment.astimezone(real).utcoffset() == timedelta(0) == moment.astimezone(tz).utcoffset()
        assert moment.astimezone(real).dst() in (None, timedelta(0))
        moment += timedelta(days=73)


def test_utc_loads_no_zoneinfo_and_another_zone_is_the_tz_databases() -> None:
    code = (
        "import json, sys\n"
        "from studytui.core.clock import local_zone\n"
        "tz, name = local_zone()\n"
        "print(json.dumps({'name': name, 'zoneinfo': 'zoneinfo' in sys.modules, 'key': getattr(tz, 'key', None)}))\n"
    )
    for zone, loads in (("Etc/UTC", False), ("Europe/Berlin", True)):
        if loads and not _has_zone(zone):
            pytest.skip(f"this system's tz database lacks {zone}")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "TZ": zone})
        got = json.loads(done.stdout)
        assert got["name"] == zone and got["zoneinfo"] is loads
        if loads:
            assert got["key"] == zone
