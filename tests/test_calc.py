"""Calculators: published worked examples, hypothesis properties, forms, and the CLI's bad-input paths."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from studytui.calc.ceilings import Ceilings, resolve_ceilings
from studytui.calc.collective import collective
from studytui.calc.forms import CALCULATORS, run
from studytui.calc.models import ModelParams
from studytui.calc.roofline import roofline
from studytui.calc.specdec import best_gamma, specdec
from studytui.calc.transformer import expected_experts, kv_cache, transformer
from studytui.calc.units import FieldError
from studytui.cli import main
from studytui.core.errors import UsageError


def _numbers(node):
    """PyYAML reads '3.35e12' as a string (YAML 1.1 wants '3.35e+12'); convert such strings."""
    if isinstance(node, dict):
        return {k: _numbers(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_numbers(v) for v in node]
    if isinstance(node, str):
        try:
            return float(node)
        except ValueError:
            return node
    return node


EXAMPLES = {e["id"]: e for e in _numbers(yaml.safe_load((Path(__file__).parent / "data" / "worked_examples.yaml").read_text()))}


def close(actual: float, published: float, tolerance: float) -> bool:
    # A published figure rounded to 3 significant digits is only good to half a unit in the last place.
    return actual == pytest.approx(published, rel=max(tolerance, 1e-12))


# ---- worked examples --------------------------------------------------------------------------

def test_roofline_h100_ridge() -> None:
    e = EXAMPLES["roofline-h100-ridge"]
    r = roofline(Ceilings.custom(peak_flops=e["inputs"]["peak_flops"], mem_bw=e["inputs"]["mem_bw"]), intensity=1.0)
    assert close(r.values["ridge_point"], e["published"]["ridge_point"], e["tolerance"])


def test_roofline_h100_compute_time() -> None:
    e = EXAMPLES["roofline-h100-compute-time"]
    r = roofline(Ceilings.custom(peak_flops=e["inputs"]["peak_flops"], mem_bw=1e30), flops=e["inputs"]["flops"], bytes=1.0)
    assert close(r.values["compute_time_s"], e["published"]["time_s"], e["tolerance"])
    assert r.values["time_s"] == r.values["compute_time_s"] and r.values["bound"] == "compute"


def test_a100_ratios() -> None:
    e = EXAMPLES["a100-ratios"]
    i = e["inputs"]
    c = Ceilings.custom(peak_flops=i["peak_flops"], mem_bw=i["mem_bw"], link_bw_per_direction=i["link_bw_per_direction"])
    r = roofline(c, intensity=10.0)
    assert close(r.values["ridge_point"], e["published"]["ridge_point"], e["tolerance"])
    assert close(r.values["link_ridge_point"], e["published"]["link_ridge_point"], e["tolerance"])


def test_kv_per_token_52b() -> None:
    e = EXAMPLES["kv-per-token-52b-mha-fp16"]
    i = e["inputs"]
    p = ModelParams(
        layers=i["layers"],
        hidden=i["hidden"],
        intermediate=4 * i["hidden"],
        heads=i["heads"],
        kv_heads=i["kv_heads"],
        head_dim=i["head_dim"],
        vocab=50000,
    )
    assert kv_cache(p, kv_dtype=i["kv_dtype"]).values["kv_bytes_per_token"] == e["published"]["kv_bytes_per_token"]


def test_weight_read_time_52b_one_and_four_gpus() -> None:
    e = EXAMPLES["weight-read-time-52b"]
    i = e["inputs"]
    # vocab 1: the example counts the 12·L·d² block weights only.
    p = ModelParams(
        layers=i["layers"], hidden=i["hidden"], intermediate=i["intermediate"], heads=64, kv_heads=64, head_dim=128, vocab=1, mlp_matrices=2
    )
    one = transformer(
        p,
        Ceilings.custom(peak_flops=312e12, mem_bw=i["mem_bw"]),
        phase="decode",
        batch=1,
        context=1,
        weight_dtype=i["dtype"],
        kv_dtype=i["dtype"],
        act_dtype=i["dtype"],
    )
    assert close(one.values["memory_time_s"], e["published"]["time_s_1_gpu"], e["tolerance"])
    four = transformer(
        p,
        Ceilings.custom(peak_flops=312e12, mem_bw=i["mem_bw"], link_bw_per_direction=300e9),
        phase="decode",
        batch=1,
        context=1,
        tp=4,
        weight_dtype=i["dtype"],
        kv_dtype=i["dtype"],
        act_dtype=i["dtype"],
    )
    assert close(four.values["memory_time_s"], e["published"]["time_s_4_gpus"], e["tolerance"])


@pytest.mark.parametrize("case", EXAMPLES["llama2-13b-decode-8x-v5e"]["published"])
def test_llama2_13b_decode_on_8_v5e(case: dict) -> None:
    e = EXAMPLES["llama2-13b-decode-8x-v5e"]
    i = e["inputs"]
    p = ModelParams(
        layers=i["layers"],
        hidden=i["hidden"],
        intermediate=i["intermediate"],
        heads=i["heads"],
        kv_heads=i["kv_heads"],
        head_dim=i["head_dim"],
        vocab=i["vocab"],
    )
    r = transformer(
        p, Ceilings.custom(peak_flops=i["peak_flops"], mem_bw=i["mem_bw"]), phase="decode", batch=case["batch"], context=i["context"]
    )
    assert r.values["bound"] == "memory"
    # The book's accounting: all 26e9 parameter bytes + batch x KV(8192), over the bandwidth.
    book = (26e9 + case["batch"] * p.kv_bytes_per_sequence(i["context"], 2)) / i["mem_bw"]
    assert close(book, case["step_time_s"], e["tolerance"])
    # The calculator reads only `batch` rows of the 0.33 GB input-embedding table (a lookup), so
    # it sits up to 0.33e9 / 6.56e12 = 50 us below the book: 0.8% at batch 1, 0.25% at batch 8.
    assert r.values["time_s"] <= case["step_time_s"]
    assert close(r.values["time_s"], case["step_time_s"], 0.01)
    assert r.values["weight_bytes"] == pytest.approx(2 * (p.counts().total - p.counts().embedding + case["batch"] * i["hidden"]))


@pytest.mark.parametrize("case", EXAMPLES["specdec-leviathan-table1"]["published"])
def test_leviathan_table1(case: dict) -> None:
    tol = EXAMPLES["specdec-leviathan-table1"]["tolerance"]
    r = specdec(case["alpha"], case["gamma"], 0.0, 0.0)
    assert close(r.values["speedup"], case["speedup"], tol)
    assert close(r.values["ops_factor"], case["ops_factor"], tol)


def test_mla_kv_elements() -> None:
    e = EXAMPLES["mla-kv-elements"]
    p = ModelParams(layers=1, hidden=5120, intermediate=1, heads=128, kv_heads=128, head_dim=128, vocab=1,
                    mla_kv_rank=e["inputs"]["kv_lora_rank"], mla_rope_dim=e["inputs"]["qk_rope_head_dim"])
    r = kv_cache(p)
    assert r.values["kv_elements_per_token_per_layer"] == e["published"]["kv_elements_per_layer_per_token"]
    assert r.values["equivalent_gqa_groups"] == e["published"]["equivalent_gqa_groups_at_head_dim_128"]


def test_all_gather_8x_h100() -> None:
    e = EXAMPLES["all-gather-8x-h100-small"]
    i = e["inputs"]
    r = collective(i["op"], i["gpus"], i["output_bytes"], i["link_bw_per_direction"], latency=0.0)
    assert close(r.values["time_s"], e["published"]["time_s"], e["tolerance"])


def test_worked_examples_through_the_forms() -> None:
    """The same numbers typed as a person would, with units."""
    r = run("roofline", {"peak_flops": "1PFLOP/s", "mem_bw": "3.35TB/s", "intensity": "100"})
    assert r.values["ridge_point"] == pytest.approx(298.5, rel=1e-3)
    r = run("collective", {"op": "all_gather", "gpus": "8", "bytes": "32MiB", "gpu": "h100", "latency": "0"})
    assert r.values["time_s"] == pytest.approx(65.2e-6, rel=1e-3)  # H100's 900 GB/s bidirectional, halved


# ---- calculator details -------------------------------------------------------------------

def test_physically_impossible_time_flagged() -> None:
    r = run("roofline", {"gpu": "h200", "flops": "1e12", "bytes": "1e9", "time": "0.5ms"})
    assert r.values["physically_possible"] is False
    assert any(w.startswith("physically impossible") for w in r.warnings)
    ok = run("roofline", {"gpu": "h200", "flops": "1e12", "bytes": "1e9", "time": "2ms"})
    assert ok.values["physically_possible"] is True and not ok.warnings
    assert ok.values["roofline_fraction"] == pytest.approx(989.4e12 ** -1 * 1e12 / 2e-3)


def test_below_hbm_floor_is_possible_when_data_fit_in_cache() -> None:
    # 8 MB moved: fits in the H200's 50 MB L2, so an unflushed benchmark may beat the HBM floor.
    r = run("roofline", {"gpu": "h200", "flops": "1e6", "bytes": "8MB", "time": "1us"})
    assert r.values["physically_possible"] is True
    assert r.warnings and "cache" in r.warnings[0]
    big = run("roofline", {"gpu": "h200", "flops": "1e6", "bytes": "800MB", "time": "100us"})
    assert big.values["physically_possible"] is False


def test_gemm_waves_and_stream_k() -> None:
    r = run("gemm", {"gpu": "h100", "m": "8192", "n": "8192", "k": "8192", "tile": "128x128"})
    v = r.values
    assert v["flops"] == 2 * 8192**3
    assert v["bytes"] == 2 * 3 * 8192**2
    assert v["tiles"] == 4096 and v["waves"] == 32 and v["last_wave_tiles"] == 4096 - 31 * 132
    # Issue 28: Stream-K balances whole MAC-loop iterations (K / 64 of them per tile), not FLOPs:
    # ceil(4096 x 128 / 132) = 3,972 iterations on the busiest SM, a hair over the ideal 3,971.9.
    assert v["mac_iterations"] == 4096 * 128 and v["stream_k_rounds"] == 3972
    assert v["stream_k_compute_time_s"] == pytest.approx(v["compute_time_s"] * 3972 * 132 / (4096 * 128))
    assert v["wave_quantized_compute_time_s"] == pytest.approx(v["compute_time_s"] * 32 * 132 / 4096)


def test_gemm_mixed_precision_bytes() -> None:
    r = run("gemm", {"gpu": "h100", "m": "16", "n": "8192", "k": "8192", "dtype": "bf16", "b_dtype": "int4"})
    assert r.values["bytes"] == 2 * 16 * 8192 + 0.5 * 8192 * 8192 + 2 * 16 * 8192


def test_decode_moe_expected_experts() -> None:
    assert expected_experts(8, 2, 1) == pytest.approx(2.0)
    assert expected_experts(256, 8, 10**6) == pytest.approx(256.0)
    r = run("transformer", {"model": "mixtral-8x7b", "batch": "1", "context": "1024"})
    assert r.values["expected_experts_per_layer"] == pytest.approx(2.0)


def test_prefill_causal_by_default_halves_attention() -> None:
    full = run("transformer", {"model": "llama-3.1-8b", "phase": "prefill", "prompt": "8192", "causal": "false"})
    half = run("transformer", {"model": "llama-3.1-8b", "phase": "prefill", "prompt": "8192"})
    assert half.values["attention_flops"] == pytest.approx(full.values["attention_flops"] / 2)
    assert half.values["attention"] == "causal" and full.values["attention"] == "bidirectional"
    old_name = run("transformer", {"model": "llama-3.1-8b", "phase": "prefill", "prompt": "8192", "causal_half": "true"})
    assert old_name.values["attention_flops"] == half.values["attention_flops"]
    assert full.values["attention_flops"] == 4 * 32 * 32 * 128 * 8192**2
    assert "ttft_s" in full.values


def test_quantised_weights_include_group_scales() -> None:
    r = run("transformer", {"model": "llama-3.1-70b", "weight_dtype": "int4", "context": "1024"})
    assert r.values["weight_bytes_per_param"] == pytest.approx(0.5 + 2 / 128)


def test_tp_adds_all_reduce_on_one_way_link() -> None:
    r = run("transformer", {"model": "llama-3.1-70b", "batch": "8", "context": "4096", "tp": "8", "gpu": "h100", "latency": "0"})
    message = 8 * 8192 * 2
    assert r.values["all_reduce_bytes"] == message
    assert r.values["all_reduce_time_s"] == pytest.approx(2 * 7 / 8 * message / 450e9)
    assert r.values["comm_time_s"] == pytest.approx(2 * 80 * r.values["all_reduce_time_s"])


def test_memory_fit_and_max_batch() -> None:
    alone = run("memory", {"model": "llama-3.1-70b", "gpu": "h200", "context": "8192"})
    assert alone.values["fits"] is False  # 141 GB of bf16 weights > 0.9 x 143,771 MiB
    r = run("memory", {"model": "llama-3.1-70b", "gpu": "h200", "context": "8192", "tp": "2"})
    assert r.values["fits"] is True
    usable = 143771 * 2**20 * 0.9  # issue 28: the device's total, as nvidia-smi reports it
    # 8 KV heads split over 2 GPUs: each holds half of every sequence's cache
    assert r.values["max_batch"] == math.floor((usable - r.values["weight_bytes"] / 2) / (8192 * 327680 / 2))
    big = run("memory", {"model": "llama-3.1-405b", "gpu": "h100"})
    assert big.values["fits"] is False and big.warnings


def test_specdec_best_gamma() -> None:
    gamma, s = best_gamma(0.8, 0.05)
    assert all(specdec(0.8, g, 0.05).values["speedup"] <= s + 1e-12 for g in range(1, 30))
    r = specdec(0.5, 3, 0.6)
    assert r.warnings  # alpha <= c: no speedup possible


def test_profile_hook_merges_measured_over_vendor(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def measured_ceilings(accelerator, profile, data_dir):
        calls.append((accelerator.id, profile))
        return {"peak_flops": {"bf16": 700e12}, "mem_bw": None, "link_bw_per_direction": None, "source": "test.yaml"}

    fake = types.ModuleType("studytui.calc.profiles")
    fake.measured_ceilings = measured_ceilings
    monkeypatch.setitem(sys.modules, "studytui.calc.profiles", fake)
    c = resolve_ceilings("h200", "bf16", profile="measured")
    assert calls == [("h200-sxm", "measured")]
    assert c.peak_flops == 700e12 and c.provenance["peak_flops"] == "measured: test.yaml"
    assert c.mem_bw == 4.8e12 and any("memory bandwidth" in w for w in c.warnings)
    r = run("roofline", {"gpu": "h200", "flops": "1e12", "bytes": "1e9", "profile": "measured"})
    assert r.values["peak_flops"] == 700e12 and r.warnings


# ---- properties ---------------------------------------------------------------------------

rates = st.floats(min_value=1e9, max_value=1e16)
amounts = st.floats(min_value=1.0, max_value=1e15)


@settings(max_examples=200, deadline=None)
@given(flops=amounts, nbytes=amounts, peak=rates, bw=rates)
def test_bound_never_below_either_term(flops: float, nbytes: float, peak: float, bw: float) -> None:
    v = roofline(Ceilings.custom(peak_flops=peak, mem_bw=bw), flops=flops, bytes=nbytes).values
    assert v["time_s"] >= v["compute_time_s"] and v["time_s"] >= v["memory_time_s"]
    assert v["time_serial_s"] >= v["time_s"]
    assert v["attainable_flops"] <= peak * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(flops=amounts, nbytes=amounts, extra=amounts, peak=rates, bw=rates)
def test_more_bytes_never_shorten_time(flops: float, nbytes: float, extra: float, peak: float, bw: float) -> None:
    c = Ceilings.custom(peak_flops=peak, mem_bw=bw)
    assert roofline(c, flops=flops, bytes=nbytes + extra).values["time_s"] >= roofline(c, flops=flops, bytes=nbytes).values["time_s"]


small_models = st.builds(
    lambda layers, kv, groups, hd, inter, moe: ModelParams(
        layers=layers, hidden=kv * groups * hd, intermediate=inter, heads=kv * groups, kv_heads=kv, head_dim=hd, vocab=32000,
        **(dict(experts=8, active_experts=2, moe_intermediate=inter) if moe else {}),
    ),
    st.integers(1, 40), st.integers(1, 8), st.integers(1, 8), st.sampled_from([64, 128]), st.integers(256, 16384), st.booleans(),
)


@settings(max_examples=100, deadline=None)
@given(model=small_models, batch=st.integers(1, 256), context=st.integers(1, 100_000), more=st.integers(1, 100_000))
def test_decode_time_grows_with_context_and_batch(model: ModelParams, batch: int, context: int, more: int) -> None:
    c = Ceilings.custom(peak_flops=989.4e12, mem_bw=4.8e12)
    base = transformer(model, c, phase="decode", batch=batch, context=context).values
    longer = transformer(model, c, phase="decode", batch=batch, context=context + more).values
    bigger = transformer(model, c, phase="decode", batch=batch + more, context=context).values
    assert longer["time_s"] >= base["time_s"] and longer["bytes"] > base["bytes"]
    assert bigger["time_s"] >= base["time_s"] and bigger["flops"] > base["flops"]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(2, 1024), nbytes=st.floats(1.0, 1e12), link=rates, latency=st.floats(0, 1e-4))
def test_ring_all_reduce_never_beats_bandwidth_bound(n: int, nbytes: float, link: float, latency: float) -> None:
    r = collective("all_reduce", n, nbytes, link, latency)
    assert r.values["time_s"] >= 2 * (n - 1) / n * nbytes / link
    assert r.values["busbw"] <= link * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(alpha=st.floats(0.01, 0.99), gamma=st.integers(1, 20))
def test_specdec_expected_tokens_between_1_and_gamma_plus_1(alpha: float, gamma: int) -> None:
    v = specdec(alpha, gamma).values
    assert 1 <= v["expected_tokens_per_step"] <= gamma + 1


# ---- forms ----------------------------------------------------------------------------------

def test_every_calculator_runs_with_its_defaults() -> None:
    for name, spec in CALCULATORS.items():
        values = {"model": "llama-3.1-8b"} if any(f.kind == "model" for f in spec.fields) else {}
        if name == "roofline":
            values = {"flops": "1e12", "bytes": "1GB"}
        if name == "l2":
            values = {"bytes": "24MiB"}
        r = spec.run(values)
        assert "time_s" in r.values and r.rows and r.explain, name
        json.dumps(r.to_json(), allow_nan=False)


def test_field_kinds_are_known() -> None:
    from studytui.calc.forms import KINDS

    for spec in CALCULATORS.values():
        for f in spec.fields:
            assert f.kind in KINDS, (spec.name, f.name)
            assert f.flag.startswith("--")


def test_unknown_field_is_refused() -> None:
    with pytest.raises(FieldError, match="not a field"):
        run("roofline", {"gpuu": "h200"})


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(CALCULATORS)), st.data())
def test_forms_raise_only_usage_errors(name: str, data: st.DataObject) -> None:
    spec = CALCULATORS[name]
    field = data.draw(st.sampled_from(spec.fields))
    text = data.draw(st.one_of(st.text(max_size=8), st.sampled_from(["0", "-1", "nan", "inf", "1e400", "1.5", "abc", "3"])))
    values = {"model": "llama-3.1-8b"} if any(f.kind == "model" for f in spec.fields) else {}
    if name == "roofline":
        values = {"flops": "1e12", "bytes": "1GB"}
    values[field.name] = text
    try:
        spec.run(values)
    except UsageError:
        pass


# ---- CLI --------------------------------------------------------------------------------------

def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


BAD_INPUTS = [
    (["calc", "transformer", "--model", "llama-3.1-8b", "--batch", "0"], "--batch", "greater than zero"),
    (["calc", "roofline", "--gpu", "h200", "--flops", "-1", "--bytes", "1e9"], "--flops", "greater than zero"),
    (["calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "nan"], "--bytes", "finite"),
    (["calc", "roofline", "--peak-flops", "inf", "--mem-bw", "1TB/s", "--intensity", "3"], "--peak-flops", "finite"),
    (["calc", "gemm", "--m", "abc"], "--m", "not a number"),
    (["calc", "transformer", "--model", "llama-3.1-8b", "--batch", "1.5"], "--batch", "whole number"),
    (["calc", "roofline", "--gpu", "h9000", "--intensity", "1"], "--gpu", "h200-sxm"),
    (["calc", "transformer", "--model", "llama-9"], "--model", "llama-3.1-8b"),
    (["calc", "gemm", "--dtype", "fp7"], "--dtype", "bf16"),
    (["calc", "collective", "--op", "all_sum", "--link-bw", "1GB/s"], "--op", "all_reduce"),
    (
        [
            "calc",
            "transformer",
            "--layers",
            "2",
            "--hidden",
            "512",
            "--heads",
            "8",
            "--kv-heads",
            "3",
            "--vocab",
            "100",
            "--intermediate",
            "64",
        ],
        "--kv-heads",
        "divisible",
    ),
    (["calc", "gemm", "--gpu", "a100", "--dtype", "fp8"], "--dtype", "bf16"),
    (["calc", "roofline", "--gpu", "h200", "--bytes", "12 parsecs", "--flops", "1"], "--bytes", "80GB"),
    (["calc", "specdec", "--alpha", "1.5"], "--alpha", "at most 1"),
    (["calc", "collective", "--gpu", "l40s"], "--link-bw", "no scale-up link"),
    (["calc", "transformer", "--model", "llama-3.1-8b", "--tp", "2", "--gpu", "rtx-4090"], "--link-bw", "link"),
    (["gpus", "nonexistent-gpu"], "unknown GPU", "h200-sxm"),
]


@pytest.mark.parametrize("argv, flag, hint", BAD_INPUTS, ids=[" ".join(a[:2]) + " " + f for a, f, _ in BAD_INPUTS])
def test_bad_input_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], flag: str, hint: str) -> None:
    code, out, err = cli(capsys, *argv)
    assert code == 2
    assert "Traceback" not in err and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert flag in lines[0] and hint in lines[0], lines[0]


def test_argparse_unknown_flag_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["calc", "roofline", "--flopz", "1"])
    assert info.value.code == 2


def test_cli_json_is_one_object_in_si_units(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "calc", "roofline", "--gpu", "h200", "--flops", "1TFLOP", "--bytes", "1GB", "--json")
    assert code == 0
    data = json.loads(out)
    for key in (
        "time_s",
        "flops",
        "bytes",
        "intensity",
        "ridge_point",
        "attainable_flops",
        "peak_flops",
        "mem_bw",
        "bound",
        "compute_time_s",
        "memory_time_s",
    ):
        assert key in data
    assert data["flops"] == 1e12 and data["bytes"] == 1e9 and data["mem_bw"] == 4.8e12


@pytest.mark.parametrize(
    "argv, keys",
    [
        (
            ["calc", "transformer", "--model", "deepseek-v3", "--tp", "8", "--context", "32k", "--batch", "32"],
            ["kv_bytes_per_token", "total_params", "active_params", "tokens_per_s", "comm_time_s"],
        ),
        (["calc", "specdec", "--alpha", "0.8", "--gamma", "2"], ["speedup", "expected_tokens_per_step", "ops_factor", "best_gamma"]),
        (["calc", "collective", "--op", "reduce_scatter", "--gpus", "8", "--bytes", "1GiB", "--gpu", "b200"], ["time_s", "busbw", "algbw"]),
        (
            ["calc", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--gpu", "h200", "--dtype", "fp8", "--c-dtype", "bf16"],
            ["waves", "stream_k_recovery_s"],
        ),
        (["calc", "kv", "--model", "gpt-oss-120b", "--context", "128k"], ["kv_bytes_per_token", "kv_bytes"]),
        (
            ["calc", "memory", "--model", "qwen3-235b-a22b", "--gpu", "h200", "--tp", "8", "--weight-dtype", "fp8"],
            ["fits", "max_batch", "max_context"],
        ),
    ],
)
def test_cli_json_keys(capsys: pytest.CaptureFixture[str], argv: list[str], keys: list[str]) -> None:
    code, out, _ = cli(capsys, *argv, "--json")
    assert code == 0
    data = json.loads(out)
    for key in keys:
        assert key in data, key


def test_cli_table_and_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9", "--time", "0.1ms", "--explain")
    assert code == 0
    assert "ridge point = peak / bandwidth = 9.894e+14 / 4.8e+12 = 206.1 FLOP/B" in out
    assert "physically impossible" in out
    assert "vendor peak, not a measurement" in out


def test_cli_help_lists_everything(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["calc", "--help"])
    out = capsys.readouterr().out
    for name in CALCULATORS:
        assert name in out
    with pytest.raises(SystemExit):
        main(["calc", "transformer", "--help"])
    out = capsys.readouterr().out
    for flag in ("--kv-heads", "--mla-kv-rank", "--no-causal", "--tied-embeddings", "--profile", "deepseek-v3"):
        assert flag in out


def test_gpus_list_and_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "gpus", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data["accelerators"]) == 22 and data["label"] == "vendor peak, not a measurement"
    code, out, _ = cli(capsys, "gpus", "h200", "--json")
    one = json.loads(out)
    assert one["id"] == "h200-sxm" and one["label"] == "vendor peak, not a measurement" and one["sources"]
    code, out, _ = cli(capsys, "gpus", "h100")
    assert code == 0 and "vendor peak, not a measurement" in out and "Sources" in out and "per direction" in out
    code, out, _ = cli(capsys, "gpus")
    assert code == 0 and "mi300x" in out


def test_real_process_bad_input_has_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "studytui.cli", "calc", "roofline", "--gpu", "h200", "--flops", "NaN", "--bytes", "1"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--flops" in proc.stderr and "Traceback" not in proc.stderr


def test_hbm_override_replaces_capacity() -> None:
    r = run("memory", {"model": "llama-3.1-8b", "hbm": "24GiB", "context": "8192"})
    assert r.values["memory_bytes"] == 24 * 2**30
    per_seq = 8192 * 131072
    assert r.values["max_batch"] == math.floor((24 * 2**30 * 0.9 - r.values["weight_bytes"]) / per_seq)


def test_explain_is_what_the_cli_prints(capsys: pytest.CaptureFixture[str]) -> None:
    values = {"model": "qwen3-32b", "batch": "4", "context": "2048"}
    result = run("transformer", values)
    code, out, _ = cli(capsys, "calc", "transformer", "--model", "qwen3-32b", "--batch", "4", "--context", "2048", "--json")
    assert json.loads(out)["explain"] == result.explain
