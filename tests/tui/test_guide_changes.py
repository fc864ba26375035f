"""`studytui --readme FILE`: the "What changed in the guide" screen, and the mark on inferred entries."""

from __future__ import annotations

import argparse

import pytest

from studytui.core.errors import UsageError
from studytui.guide.diff import Difference, LearnerImpact
from studytui.tui.launch import _guide_changes
from studytui.tui.screens.guide_changes import GuideChangesScreen
from studytui.tui.widgets.detail_pane import PLACEMENT_NOTE

from .support import screen_text

DIFFS = [
    Difference("entry-added", "entry added: 'A New GEMM Paper' <https://arxiv.org/abs/2999.00001>", 42,
               "content/sections/02-kernel-optimization.yaml:75"),
    Difference("frontier-verified", "Frontier verified on 2026-11-30 (content says 2026-10-17)", 300,
               "content/sections/07-frontier.yaml:7"),
    Difference("entry-retitled", "entry retitled: 'X' -> '[bold]Evil\x1b[31m'", 50, "content/sections/02-kernel-optimization.yaml:90"),
]
IMPACT = [LearnerImpact("deepgemm", "DeepGEMM", "done", True, ["entry-removed"],
                        "would become an orphan: your progress and note stay in the store")]


async def test_screen_lists_differences_and_the_learners_entries(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.push_screen(GuideChangesScreen("README.md", DIFFS, IMPACT))
        await pilot.pause()
        text = screen_text(app)
        assert "What changed in the guide · 3 differences" in text
        assert "DeepGEMM (done, note): would become an orphan" in text
        assert "entry added: 'A New GEMM Paper'" in text
        assert "README.md:42" in text and "02-kernel-optimization.yaml:75" in text
        # README text is shown as text: markup stays literal, escapes are made visible
        assert "[bold]Evil\\x1b[31m" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, GuideChangesScreen)


async def test_screen_with_nothing_changed(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(GuideChangesScreen("README.md", [], []))
        await pilot.pause()
        text = screen_text(app)
        assert "0 differences" in text and "matches the shipped content" in text


def test_launch_computes_changes_or_refuses_bad_input(tmp_path):
    args = argparse.Namespace(content=None, data_dir=str(tmp_path / "d"), app_readme=None)
    assert _guide_changes(args) is None
    bad = tmp_path / "README.md"
    bad.write_bytes(b"")
    args.app_readme = str(bad)
    with pytest.raises(UsageError):
        _guide_changes(args)


async def test_inferred_entry_is_marked_in_the_detail_pane(make_app, guide):
    first = guide.entries[0]
    marked = first._replace(placement="inferred")
    sections = list(guide.sections)
    s0 = sections[0]
    sub0 = s0.subsections[0]
    sub0 = sub0._replace(entries=(marked,) + sub0.entries[1:])
    sections[0] = s0._replace(subsections=(sub0,) + s0.subsections[1:])
    from studytui.guide.model import Guide

    new_guide = Guide(title=guide.title, source_repo=guide.source_repo, license=guide.license,
                      sections=tuple(sections), glossary=guide.glossary, policy=guide.policy,
                      content_dir=guide.content_dir)
    app = make_app(guide=new_guide)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.jump_to(first.id)
        await pilot.pause()
        assert PLACEMENT_NOTE in screen_text(app)


@pytest.mark.parametrize("size", [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")])
def test_guide_changes_snapshot(snap_compare, make_app, size):
    app = make_app()

    async def show(pilot) -> None:
        await pilot.pause()
        app.push_screen(GuideChangesScreen("README.md", DIFFS, IMPACT))
        await pilot.pause()

    assert snap_compare(app, run_before=show, terminal_size=size)
