"""Model presets: counts derived from the published configs match the published totals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studytui.calc.models import ModelParams, get_preset, load_presets
from studytui.calc.units import FieldError

PRESETS = [
    "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "qwen3-32b", "qwen3-235b-a22b",
    "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b",
]

# (preset, key, published value, relative tolerance from the published rounding)
PUBLISHED = [
    ("llama-3.1-8b", "total", 8.03e9, 0.001),
    ("llama-3.1-70b", "total", 70.6e9, 0.001),
    ("llama-3.1-405b", "total", 405.9e9, 0.001),
    ("qwen3-32b", "total", 32.8e9, 0.002),
    ("qwen3-235b-a22b", "total", 235e9, 0.002),
    ("qwen3-235b-a22b", "active", 22e9, 0.023),  # "22B" is rounded to the billion: 21.57e9 rounds to 22
    ("mixtral-8x7b", "total", 46.7e9, 0.001),
    ("mixtral-8x7b", "active_with_embedding", 12.9e9, 0.002),  # Mistral counts the input embedding
    ("deepseek-v3", "total", 671e9, 0.001),
    ("deepseek-v3", "active", 36.6e9, 0.001),  # DeepSeek: 36.6B incl. the 0.9B output head (~37B)
    ("gpt-oss-120b", "total", 116.83e9, 0.0005),
    ("gpt-oss-120b", "active", 5.13e9, 0.001),
]


def test_all_presets_present_with_sources() -> None:
    presets = load_presets()
    assert set(PRESETS) <= set(presets)
    for pid in PRESETS:
        preset = presets[pid]
        assert any("huggingface.co" in s and s.endswith("config.json") for s in preset.sources), pid
        assert preset.notes


@pytest.mark.parametrize("pid, key, published, tolerance", PUBLISHED)
def test_counts_match_published(pid: str, key: str, published: float, tolerance: float) -> None:
    counts = get_preset(pid).params.counts()
    assert getattr(counts, key) == pytest.approx(published, rel=tolerance)


@pytest.mark.parametrize("pid", PRESETS)
def test_content_derived_numbers_equal_the_code(pid: str) -> None:
    preset = get_preset(pid)
    assert preset.derived == preset.derive()


def test_deepseek_v3_structure() -> None:
    p = get_preset("deepseek-v3").params
    assert p.kv_elements_per_token_per_layer() == 576
    assert p.kv_bytes_per_token(2) == 61 * 576 * 2
    c = p.counts()
    assert c.dense_layers == 3 and c.moe_layers == 58


def test_gpt_oss_sliding_layers_cap_the_cache() -> None:
    p = get_preset("gpt-oss-120b").params
    per_layer = 2 * 8 * 64 * 2
    assert p.kv_bytes_per_sequence(8192, 2) == 18 * 8192 * per_layer + 18 * 128 * per_layer


def test_aliases_and_unknown() -> None:
    assert get_preset("mixtral").id == "mixtral-8x7b"
    with pytest.raises(FieldError, match="llama-3.1-8b"):
        get_preset("llama-3.1-8")


def test_kipply_52b_weights_are_12_L_d2() -> None:
    # Weights counted as 12·L·d² (attention 4d² + plain MLP 8d²): the kipply example's convention.
    p = ModelParams(layers=64, hidden=8192, intermediate=32768, heads=64, kv_heads=64, head_dim=128, vocab=1, mlp_matrices=2)
    c = p.counts()
    non_embedding = c.total - c.embedding - c.lm_head - 64 * 2 * 8192 - 8192  # minus norms
    assert non_embedding == 12 * 64 * 8192**2


@pytest.mark.parametrize(
    "changes, field",
    [
        (dict(kv_heads=6), "kv_heads"),
        (dict(mlp_matrices=4), "mlp_matrices"),
        (dict(experts=8, active_experts=9, moe_intermediate=10), "active_experts"),
        (dict(experts=8, active_experts=2), "moe_intermediate"),
        (dict(mla_kv_rank=512), "mla_rope_dim"),
        (dict(sliding_layers=40, sliding_window=128), "sliding_layers"),
        (dict(layers=0), "layers"),
    ],
)
def test_invalid_dims_name_the_field(changes: dict, field: str) -> None:
    base = dict(layers=32, hidden=4096, intermediate=14336, heads=32, kv_heads=8, head_dim=128, vocab=32000)
    base.update(changes)
    with pytest.raises(FieldError) as info:
        ModelParams(**base).validate()
    assert info.value.field == field


@settings(max_examples=100, deadline=None)
@given(
    layers=st.integers(1, 128), groups=st.integers(1, 16), kv_heads=st.integers(1, 16),
    head_dim=st.sampled_from([64, 80, 128, 256]), kv_bytes=st.sampled_from([0.5, 1.0, 2.0, 4.0]),
)
def test_kv_bytes_scale_with_kv_heads_not_heads(layers: int, groups: int, kv_heads: int, head_dim: int, kv_bytes: float) -> None:
    heads = kv_heads * groups
    p = ModelParams(layers=layers, hidden=heads * head_dim, intermediate=64, heads=heads, kv_heads=kv_heads, head_dim=head_dim, vocab=10)
    more_query_heads = ModelParams(
        layers=layers, hidden=heads * head_dim, intermediate=64, heads=heads * 2, kv_heads=kv_heads, head_dim=head_dim, vocab=10
    )
    assert p.kv_bytes_per_token(kv_bytes) == 2 * layers * kv_heads * head_dim * kv_bytes
    assert more_query_heads.kv_bytes_per_token(kv_bytes) == p.kv_bytes_per_token(kv_bytes)
    doubled = ModelParams(
        layers=layers, hidden=heads * head_dim, intermediate=64, heads=heads * 2, kv_heads=kv_heads * 2, head_dim=head_dim, vocab=10
    )
    assert doubled.kv_bytes_per_token(kv_bytes) == 2 * p.kv_bytes_per_token(kv_bytes)
