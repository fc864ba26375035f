"""The shipped content is the whole guide, in order, against the reference structure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from studytui.guide import load_guide
from studytui.guide.model import ALL_KINDS

REFERENCE = yaml.safe_load((Path(__file__).parent / "data" / "guide-structure.yaml").read_text())
SECTION_IDS = [
    "start-here", "gpu-fundamentals", "kernel-optimization", "programming-models", "inference-engines",
    "distributed-inference", "current-hardware", "frontier", "source-policy",
]


@pytest.fixture(scope="module")
def guide():
    return load_guide()


def _ref_url(url: str) -> str:
    # The policy link is repo-relative in the guide; we ship it as an absolute https URL.
    if not url.startswith("https://"):
        return f"https://github.com/wafer-ai/gpu-perf-engineering-resources/blob/main/{url}"
    return url


def test_sections_in_guide_order(guide):
    assert [s.id for s in guide.sections] == SECTION_IDS
    assert [s.title for s in guide.sections] == [s["title"] for s in REFERENCE["sections"]]


def test_every_reference_entry_present_in_order(guide):
    for ref_section, section in zip(REFERENCE["sections"], guide.sections):
        ref_subs = [sub for sub in ref_section["subsections"]]
        ours = {sub.title: sub for sub in section.subsections}
        for ref_sub in ref_subs:
            assert ref_sub["title"] in ours, f"{section.title}: missing subsection {ref_sub['title']!r}"
            sub = ours[ref_sub["title"]]
            items = list(ref_sub["entries"])
            if ref_sub.get("companion"):
                items.append(ref_sub["companion"])
            ref_titles = [(i["title"], i["url"]) for i in items]
            our_titles = [(e.title, e.url) for e in sub.entries]
            # Reference items appear in the same relative order (later additions may sit between).
            pos = -1
            for title, url in ref_titles:
                matches = [k for k, (t, u) in enumerate(our_titles) if t == title and (url is None or u == _ref_url(url))]
                assert matches, f"{section.title} / {ref_sub['title']}: missing {title!r} ({url})"
                assert matches[0] > pos, f"{title!r} is out of order in {section.title}"
                pos = matches[0]


def test_start_here_is_ordered_with_companion_last(guide):
    start = guide.sections[0]
    assert start.ordered
    entries = start.entries
    assert len(entries) == 9
    assert [e.role for e in entries[:8]] == ["core"] * 8
    assert entries[-1].role == "companion" and entries[-1].title == "GPU Mode lectures"
    assert guide.entries[0] is entries[0]


LATER = {
    "Stream-K: Work-centric Parallel Decomposition for Dense Matrix-Matrix Multiplication on the GPU": ("kernel-optimization", "Matrix multiplication"),
    "tcgen05 for dummies": ("kernel-optimization", "Direct implementation work"),
    "Defeating Nondeterminism in LLM Inference": ("programming-models", "Profiling, benchmarking, and correctness"),
    "Linear Layouts: Robust Code Generation of Efficient Tensor Computation Using F2": ("programming-models", "Triton"),
    "FlashInfer-Bench": ("frontier", "AI-generated kernels"),
    "KernelGuard": ("frontier", "AI-generated kernels"),
}


@pytest.mark.parametrize("title", sorted(LATER))
def test_later_additions_placed(guide, title):
    section_id, sub_title = LATER[title]
    matches = [e for e in guide.entries if e.title == title]
    assert matches, title
    assert (matches[0].section_id, matches[0].subsection_title) == (section_id, sub_title)
    assert matches[0].date == "2026-10-17"


def test_frontier_dated_and_watchlist(guide):
    frontier = guide.section("frontier")
    assert frontier.verified_on == "2026-10-17"
    assert all(e.date for e in frontier.entries)
    watch = [e for e in frontier.entries if e.subsection_title == "Watchlist"]
    titles = " | ".join(e.title for e in watch)
    for needle in ("Rubin", "MI455X", "TPU 8t", "UALink 2.0"):
        assert needle in titles
    for e in watch:
        assert e.role == "watchlist"
        assert e.url or e.no_url_reason


def test_every_entry_well_formed(guide):
    ids = [e.id for e in guide.entries]
    assert len(ids) == len(set(ids))
    for e in guide.entries:
        assert e.kind in ALL_KINDS or (e.role == "watchlist" and e.url is None), e.id
        assert e.url is None or e.url.startswith("https://"), e.id
        sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", e.summary) if s.strip()]
        assert 1 <= len(sentences) <= 3, f"{e.id}: summary should be 1-3 sentences, has {len(sentences)}"
        assert e.tags, f"{e.id}: needs tags for search"


def test_section_intros_and_policy(guide):
    assert all(len(s.intro) > 80 for s in guide.sections)
    assert set(guide.policy.admitted_kinds) == {"paper", "spec", "docs", "repo", "report"}
    assert "correctness" in guide.policy.text.lower()


REQUIRED_TERMS = [
    "prefill", "decode", "roofline", "arithmetic intensity", "kv cache", "quantization",
    "speculative decoding", "tensor parallelism", "ridge point", "all-reduce", "mixture of experts",
    "grouped-query attention", "ttft", "tpot", "mfu", "continuous batching", "paged attention",
]


def test_glossary(guide):
    assert len(guide.glossary) >= 25
    names = {t.term.lower() for t in guide.glossary} | {a.lower() for t in guide.glossary for a in t.aliases}
    for term in REQUIRED_TERMS:
        assert any(term in n for n in names), f"glossary lacks {term!r}"
    for t in guide.glossary:
        assert all(guide.get(ref) for ref in t.see)


def test_reference_entry_count(guide):
    ref_count = sum(
        len(sub["entries"]) + (1 if sub.get("companion") else 0)
        for s in REFERENCE["sections"] for sub in s["subsections"]
    )
    # every reference item, plus the update's additions (6 entries + 3 watchlist topics)
    assert len(guide.entries) >= ref_count + 9
