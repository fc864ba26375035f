"""Fixtures for the study app tests (data and helpers live in support.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from studytui.guide.model import Guide
from studytui.store import Store, open_store
from studytui.tui.app import StudyApp
from studytui.tui.registry import build_registry

from .support import DESKTOP_ENV, TODAY, build_guide


@pytest.fixture
def guide() -> Guide:
    return build_guide()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def store(data_dir: Path) -> Iterator[Store]:
    s = open_store(data_dir)
    yield s
    s.close()


AppFactory = Callable[..., StudyApp]


@pytest.fixture
def make_app(guide: Guide, store: Store) -> AppFactory:
    def factory(**kw: Any) -> StudyApp:
        kw.setdefault("today", lambda: TODAY)
        kw.setdefault("environ", dict(DESKTOP_ENV))
        kw.setdefault("platform", "linux")
        kw.setdefault("cursor_blink", False)
        # Built-in screens only: these tests (and snapshots) must not change when an optional
        # screen module (the calculators) changes; test_registry covers the real registry.
        kw.setdefault("registry", build_registry(plugin_modules=()))
        return StudyApp(kw.pop("guide", guide), kw.pop("store", store), **kw)

    return factory

