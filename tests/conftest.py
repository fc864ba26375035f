"""Shared fixtures. Every test gets its own data directory: no test touches a real user's data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests: CI (which sets CI=true) runs a fixed, derandomized set of examples so a run can
# never fail by chance; locally hypothesis explores freely and remembers what it found.
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI", "").lower() == "true" else "dev"))


@pytest.fixture(autouse=True)
def isolated_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path_factory.mktemp("studytui-data")
    monkeypatch.setenv("STUDYTUI_DATA_DIR", str(data))
    monkeypatch.delenv("STUDYTUI_CONTENT_DIR", raising=False)
    return data
