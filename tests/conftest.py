"""Shared fixtures. Every test gets its own data directory: no test touches a real user's data."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path_factory.mktemp("studytui-data")
    monkeypatch.setenv("STUDYTUI_DATA_DIR", str(data))
    monkeypatch.delenv("STUDYTUI_CONTENT_DIR", raising=False)
    return data
