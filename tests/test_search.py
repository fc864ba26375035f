"""Keyword jump: the obvious entry ranks first for real queries a learner would type."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studytui.guide import load_guide
from studytui.guide.search import SearchIndex, compact, words
from studytui.guide.synthetic import synthetic_guide


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex(load_guide().entries)


QUERIES = [
    ("roofline", "roofline-paper"),
    ("Roofline model", "roofline-paper"),
    ("stream k", "stream-k"),
    ("Stream-K", "stream-k"),
    ("streamk", "stream-k"),
    ("flashattention 3", "flashattention-3"),
    ("FlashAttention-2", "flashattention-2"),
    ("paged attention", "pagedattention-vllm"),
    ("grouped query attention", "gqa"),
    ("GQA", "gqa"),
    ("speculative decoding", "speculative-decoding-leviathan"),
    ("medusa", "medusa"),
    ("megatron", "megatron-lm"),
    ("nccl", "nccl"),
    ("online softmax", "online-softmax"),
    ("ptx", "ptx-isa"),
    ("nsight compute", "nsight-compute"),
    ("kernelbench", "kernelbench"),
    ("tcgen05 for dummies", "tcgen05-for-dummies"),
    ("decoupled look-back", "decoupled-lookback-scan"),
    ("transformer inference arithmetic", "transformer-inference-arithmetic"),
    ("deepseek v3", "deepseek-v3"),
    ("DeepSeek-V2", "deepseek-v2"),
    ("linear layouts", "linear-layouts"),
    ("nondeterminism", "defeating-nondeterminism"),
    ("kernelguard", "kernelguard"),
    ("attention is all you need", "attention-is-all-you-need"),
    ("sarathi", "sarathi-serve"),
    ("kivi", "kivi"),
    ("smoothquant", "smoothquant"),
]


@pytest.mark.parametrize("query, expected", QUERIES)
def test_obvious_entry_first(index, query, expected):
    hits = index.search(query, limit=5)
    assert hits, query
    assert hits[0].entry.id == expected, [h.entry.id for h in hits]


def test_case_punctuation_hyphens_do_not_matter(index):
    variants = ["stream k", "Stream-K", "streamk", "STREAM_K", "stream--k"]
    firsts = {index.search(v, limit=1)[0].entry.id for v in variants}
    assert firsts == {"stream-k"}


def test_all_words_rank_before_some(index):
    hits = index.search("kv cache quantization", limit=10)
    top = hits[0].entry
    text = " ".join((top.title, " ".join(top.tags), top.summary)).lower()
    assert "kv" in text and "quantiz" in text


def test_authors_and_sections_searchable(index):
    assert "flashattention" in {h.entry.id for h in index.search("Tri Dao", limit=5)}
    assert all(h.entry.section_id == "frontier" for h in index.search("watchlist", limit=3))


def test_notes_are_searched(index):
    hits = index.search("wombat", note_texts={"nccl": "my wombat mnemonic for ring all-reduce"})
    assert hits[0].entry.id == "nccl" and "notes" in hits[0].fields


def test_empty_and_nonsense_queries(index):
    assert index.search("") == []
    assert index.search("   ---  ") == []
    assert index.search("zzzqqqxxx") == []


def test_limit_respected(index):
    assert len(index.search("attention", limit=3)) == 3


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_query_is_answered(query):
    idx = SearchIndex(synthetic_guide(200).entries)
    hits = idx.search(query, limit=10)
    assert len(hits) <= 10
    assert all(h.score > 0 for h in hits)
    scores = [(h.score) for h in hits]
    assert all(isinstance(s, float) for s in scores)


@given(st.text(alphabet="abcdefgh -_.", max_size=20))
def test_normalisation_is_separator_blind(text):
    assert compact(text) == "".join(words(text))


# --- precision (issue 12) -----------------------------------------------------------------------
def test_stream_k_finds_only_stream_k(index):
    for query in ("stream k", "Stream-K", "streamk", "stream-k"):
        hits = index.search(query)
        assert hits and hits[0].entry.id == "stream-k"
        # Every hit really is about Stream-K, not the whole guide.
        for h in hits:
            e = h.entry
            assert "streamk" in compact(" ".join((e.title, *e.tags, e.summary, e.id))), (query, e.id)


def test_a_single_letter_is_a_word_not_a_wildcard(index):
    every = len(index.docs)
    hits = index.search("k")
    assert len(hits) < every // 10
    for h in hits:
        e = h.entry
        assert "k" in words(" ".join((e.title, *e.tags, e.summary, e.id, *e.authors, e.section_title))), e.id


def test_every_word_must_match(index):
    for h in index.search("kv cache quantization"):
        e = h.entry
        text = compact(" ".join((e.title, *e.tags, e.summary, e.id)))
        assert "kvcache" in text and "quantiz" in text, e.id


@pytest.mark.parametrize("typo, expected", [
    ("flashattn", "flashattention"),
    ("stremk", "stream-k"),
    ("strema-k", "stream-k"),
    ("roofilne", "roofline-paper"),
    ("speculativ decoding", "speculative-decoding-leviathan"),
])
def test_typos_still_find_the_entry_first(index, typo, expected):
    hits = index.search(typo, limit=3)
    assert hits and hits[0].entry.id == expected, [h.entry.id for h in hits]


def test_short_words_do_not_match_inside_words(index):
    assert all("tma" in words(" ".join((h.entry.title, *h.entry.tags, h.entry.summary, h.entry.id)))
               or "tma" in compact(h.entry.title) for h in index.search("tma"))
