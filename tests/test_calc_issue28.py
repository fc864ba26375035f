"""Issue 28 (calculators, third pass): Stream-K by MAC-loop iterations, block-scaled formats,
context limits, what tensor parallelism replicates, expert parallelism, gpt-oss's marginal KV bytes,
the H200's device capacity and the speculative-decoding verification assumption. Each case gives
the old (wrong) figure, the new one, and where the new one comes from."""

from __future__ import annotations

import json
import math

import pytest

from studytui.calc.dtypes import BLOCK_SCALED, dtype_bytes
from studytui.calc.forms import run
from studytui.calc.gemm import stream_k_split
from studytui.calc.models import get_preset, load_presets
from studytui.cli import main


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """One line on stderr, nothing on stdout, exit 2: the line."""
    code, out, err = cli(capsys, *argv)
    assert code == 2, (argv, out, err)
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def as_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


# ---- Stream-K: it divides MAC-loop iterations (Osama et al., PPoPP 2023, arXiv 2301.03598) ----

def _brute_force_split(tiles: int, iters: int, units: int) -> tuple[int, int]:
    """Stream-K's even split, done the long way: each unit's contiguous run of iterations."""
    total = tiles * iters
    share, extra = divmod(total, units)
    owners: dict[int, set[int]] = {}
    start = 0
    for unit in range(units):
        length = share + (unit < extra)
        for it in range(start, start + length):
            owners.setdefault(it // iters, set()).add(unit)
        start += length
    rounds = share + (1 if extra else 0)
    return rounds, sum(len(u) - 1 for u in owners.values())


@pytest.mark.parametrize("tiles, iters, units", [(133, 1, 132), (133, 128, 132), (4096, 128, 132), (7, 5, 3), (2, 3, 8)])
def test_stream_k_split_matches_the_long_way(tiles: int, iters: int, units: int) -> None:
    assert stream_k_split(tiles, iters, units) == _brute_force_split(tiles, iters, units)


def test_stream_k_at_k64_gains_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    # Old: x1.985 ("Stream-K compute 281.9 ns") while the bound is memory. At K = 64 each 128x128
    # tile is one 64-deep iteration: 133 iterations on 132 SMs are 2 rounds either way, and a
    # memory-bound GEMM gains nothing end to end.
    for tile in ("128x128", "128x128x64"):
        v = as_json(capsys, "calc", "gemm", "--gpu", "h100", "--m", "896", "--n", "2432", "--k", "64", "--tile", tile)
        assert v["tile_k"] == 64 and v["iterations_per_tile"] == 1 and v["mac_iterations"] == 133
        assert v["waves"] == 2 and v["stream_k_rounds"] == 2
        assert v["stream_k_speedup"] == 1.0 and v["stream_k_recovery_s"] == 0.0
        assert v["stream_k_fixup_tiles"] == 0 and v["stream_k_fixup_bytes"] == 0
        assert v["bound"] == "memory" and v["stream_k_end_to_end_speedup"] == pytest.approx(1.0)
    code, out, _ = cli(capsys, "calc", "gemm", "--gpu", "h100", "--m", "896", "--n", "2432", "--k", "64", "--tile", "128x128")
    assert code == 0 and "2 rounds (x1)" in out and "memory-bound" in out


def test_stream_k_at_k8192_counts_rounds_and_fixup(capsys: pytest.CaptureFixture[str]) -> None:
    # 133 tiles x 128 iterations = 17,024 over 132 SMs: 129 rounds against 2 waves x 128 = 256.
    v = as_json(capsys, "calc", "gemm", "--gpu", "h100", "--m", "896", "--n", "2432", "--k", "8192", "--tile", "128x128")
    assert v["mac_iterations"] == 17024 and v["stream_k_rounds"] == 129
    assert v["stream_k_speedup"] == pytest.approx(256 / 129)
    _, partials = _brute_force_split(133, 128, 132)
    assert v["stream_k_fixup_tiles"] == partials
    assert v["stream_k_fixup_bytes"] == 2 * partials * 128 * 128 * 4  # fp32 partials written and read back
    # Compute-bound: the end-to-end gain is the compute gain, the fix-up traffic staying under it.
    assert v["bound"] == "compute"
    assert v["stream_k_time_s"] == pytest.approx(max(v["stream_k_compute_time_s"], (v["bytes"] + v["stream_k_fixup_bytes"]) / 3.35e12))


@pytest.mark.parametrize("tile", ["128x128x64x2", "128", "128x0x64", "axb"])
def test_bad_tiles_are_refused_in_one_line(capsys: pytest.CaptureFixture[str], tile: str) -> None:
    line = refused(capsys, "calc", "gemm", "--gpu", "h100", "--m", "64", "--n", "64", "--k", "64", "--tile", tile)
    assert "--tile" in line


# ---- block-scaled formats (OCP MX v1.0; NVIDIA's NVFP4) --------------------------------------

def test_block_scaled_bytes_follow_each_format_definition() -> None:
    # element bits + scale bits / block, from each format's layout
    assert dtype_bytes("nvfp4") == (4 + 8 / 16) / 8  # E2M1, one E4M3 scale per 16 (NVIDIA)
    assert dtype_bytes("mxfp4") == (4 + 8 / 32) / 8  # E2M1, one E8M0 scale per 32 (OCP MX v1.0)
    assert dtype_bytes("mxfp8") == (8 + 8 / 32) / 8
    assert dtype_bytes("mxfp6") == (6 + 8 / 32) / 8
    for fmt in BLOCK_SCALED.values():
        assert fmt.source.startswith(("OCP", "NVIDIA")) and "https://" in fmt.source


@pytest.mark.parametrize("dtype, gb", [("nvfp4", 39.69), ("mxfp4", 37.48), ("mxfp8", 72.76)])
def test_llama_70b_weights_in_block_scaled_formats(capsys: pytest.CaptureFixture[str], dtype: str, gb: float) -> None:
    # Old: nvfp4 36.38 GB ("a 2-byte scale per 128", 4.125 bits); mxfp8 70.55 GB (8.0 bits).
    v = as_json(capsys, "calc", "memory", "--model", "llama-3.1-70b", "--gpu", "h200", "--weight-dtype", dtype)
    total = get_preset("llama-3.1-70b").params.counts().total
    assert v["weight_bytes"] == pytest.approx(total * dtype_bytes(dtype))
    assert round(v["weight_bytes"] / 1e9, 2) == gb
    assert any(dtype in a and "https://" in a for a in v["assumptions"])  # the layout, with its source


def test_block_scaled_formats_fix_their_own_scale(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "calc", "memory", "--model", "llama-3.1-8b", "--weight-dtype", "nvfp4", "--quant-group", "32")
    assert "--quant-group" in line and "per 16" in line
    # A plain 4-bit format still takes a group scale of its own choosing.
    v = as_json(capsys, "calc", "memory", "--model", "llama-3.1-8b", "--weight-dtype", "int4", "--quant-group", "64")
    assert v["weight_bytes"] == pytest.approx(v["total_params"] * (0.5 + 2 / 64))


def test_nvfp4_math_runs_at_the_fp4_peak(capsys: pytest.CaptureFixture[str]) -> None:
    fp4 = as_json(capsys, "calc", "gemm", "--gpu", "b200", "--m", "8192", "--n", "8192", "--k", "8192", "--dtype", "fp4")
    nv = as_json(capsys, "calc", "gemm", "--gpu", "b200", "--m", "8192", "--n", "8192", "--k", "8192", "--dtype", "nvfp4")
    assert nv["compute_time_s"] == fp4["compute_time_s"] and nv["bytes"] == pytest.approx(fp4["bytes"] * 4.5 / 4)


# ---- context limits: each preset's config.json max_position_embeddings ------------------------

# From each model's config.json on Hugging Face (the preset's first source).
LIMITS = {
    "mixtral-8x7b": 32768, "llama-3.1-8b": 131072, "llama-3.1-70b": 131072, "llama-3.1-405b": 131072,
    "qwen3-32b": 40960, "qwen3-235b-a22b": 40960, "gpt-oss-120b": 131072, "deepseek-v3": 163840,
}


def test_every_preset_records_its_context_limit() -> None:
    presets = load_presets()
    assert set(presets) == set(LIMITS)
    for pid, preset in presets.items():
        assert preset.params.max_position_embeddings == LIMITS[pid], pid
        assert preset.sources[0].endswith("config.json")


@pytest.mark.parametrize("model, extra, old", [
    ("mixtral-8x7b", ("--tp", "2"), 1366501), ("llama-3.1-8b", (), 917032), ("qwen3-32b", (), 269827),
    ("gpt-oss-120b", ("--weight-dtype", "fp4"), 2061986),
])
def test_max_context_stops_at_the_model_limit(capsys: pytest.CaptureFixture[str], model: str, extra: tuple[str, ...], old: int) -> None:
    # Old: the memory-only figure (mixtral-8x7b at TP 2 on H200s: 1,366,501 tokens, past its 32,768).
    argv = ("calc", "memory", "--model", model, "--gpu", "h200", *extra)
    v = as_json(capsys, *argv)
    assert v["max_context"] == LIMITS[model] == v["max_position_embeddings"]
    assert v["max_context_by_memory"] > LIMITS[model]
    # The old figures were on 141 GiB per H200; on the device's 143,771 MiB memory holds a little less.
    assert v["max_context_by_memory"] == pytest.approx(old, rel=0.02) and v["max_context_by_memory"] < old
    code, out, _ = cli(capsys, *argv)
    assert code == 0 and f"{LIMITS[model]:,} (the model's limit" in out


@pytest.mark.parametrize("argv", [
    ("calc", "kv", "--model", "mixtral-8x7b", "--context", "100k"),
    ("calc", "memory", "--model", "qwen3-32b", "--gpu", "h200", "--context", "64k"),
    ("calc", "transformer", "--model", "llama-3.1-8b", "--gpu", "h200", "--context", "131072"),
    ("calc", "transformer", "--model", "mixtral-8x7b", "--gpu", "h200", "--phase", "prefill", "--prompt", "40000"),
])
def test_a_context_past_the_limit_warns(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    v = as_json(capsys, *argv)
    assert any("max_position_embeddings" in w for w in v["warnings"]), v["warnings"]


def test_a_context_inside_the_limit_does_not_warn(capsys: pytest.CaptureFixture[str]) -> None:
    v = as_json(capsys, "calc", "transformer", "--model", "llama-3.1-8b", "--gpu", "h200", "--context", "131071")
    assert not any("max_position_embeddings" in w for w in v["warnings"])


# ---- MLA under TP: the down-projections are replicated (vLLM: fused_qkv_a_proj, disable_tp) ----

def test_deepseek_v3_tp8_replicates_the_mla_down_projections(capsys: pytest.CaptureFixture[str]) -> None:
    params = get_preset("deepseek-v3").params
    groups = dict(params.replicated_under_tp())
    mla = next(n for what, n in groups.items() if what.startswith("MLA"))
    router = next(n for what, n in groups.items() if what.startswith("MoE router"))
    # 2112 x 7168 per layer (q_a 1536 + kv_a 512 + 64 rope rows), 61 layers, plus the two latent norms
    assert mla == 61 * (2112 * 7168 + 1536 + 512)
    assert round(mla / 1e9, 3) == 0.924
    assert router == 58 * (7168 * 256 + 256)  # with e_score_correction_bias
    mla_extra = mla * 7 / 8  # fp8: one byte each, held whole instead of 1/8
    assert round(mla_extra / 1e9, 2) == 0.81

    even = params.counts().total / 8
    fit = as_json(capsys, "calc", "memory", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--weight-dtype", "fp8")
    # Old: 83.88 GB per GPU (every weight split evenly). The 84.7 counts the MLA part; the
    # router (0.106B, also a ReplicatedLinear in vLLM) adds 0.09 GB more.
    assert fit["weight_bytes_per_gpu"] == pytest.approx(even + (mla + router) * 7 / 8)
    assert round((fit["weight_bytes_per_gpu"] - router * 7 / 8) / 1e9, 1) == 84.7
    assert fit["replicated_params"] == mla + router

    step = as_json(capsys, "calc", "transformer", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "8",
                   "--weight-dtype", "fp8", "--batch", "1", "--context", "4096")
    # Old: 4.87 GB read per GPU per decode step; the MLA part brings it to 5.68 GB, the router to 5.77.
    assert round((step["bytes_per_gpu"] - router * 7 / 8) / 1e9, 2) == 5.68
    assert step["bytes_per_gpu"] == pytest.approx(4867856576 + (mla + router) * 7 / 8, rel=1e-6)
    assert any("MLA down-projections" in a and "vLLM" in a for a in step["assumptions"])


def test_dense_gqa_under_tp_splits_evenly(capsys: pytest.CaptureFixture[str]) -> None:
    v = as_json(capsys, "calc", "memory", "--model", "llama-3.1-70b", "--gpu", "h200", "--tp", "4")
    assert v["weight_bytes_per_gpu"] == pytest.approx(v["weight_bytes"] / 4)
    assert "replicated_params" not in v


def test_kv_heads_past_tp_replicate_their_projections(capsys: pytest.CaptureFixture[str]) -> None:
    params = get_preset("llama-3.1-70b").params
    v = as_json(capsys, "calc", "memory", "--model", "llama-3.1-70b", "--gpu", "h200", "--tp", "16")
    kv_proj = 80 * 2 * 8192 * 8 * 128
    assert v["weight_bytes_per_gpu"] == pytest.approx((params.counts().total / 16 + kv_proj / 8 - kv_proj / 16) * 2)


# ---- gpt-oss: per-token KV counts all 36 layers; past the window only the 18 full ones grow ----

def test_gpt_oss_marginal_kv_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    v = as_json(capsys, "calc", "kv", "--model", "gpt-oss-120b", "--context", "128k")
    assert v["kv_bytes_per_token"] == 73728  # all 36 layers: 36 x 2 x 8 x 64 x 2 B
    assert v["kv_bytes_per_token_marginal"] == 36864  # the 18 full-attention layers
    assert v["kv_bytes_per_sequence"] == 18 * 128000 * 2048 + 18 * 128 * 2048
    code, out, _ = cli(capsys, "calc", "kv", "--model", "gpt-oss-120b", "--context", "128k")
    assert code == 0 and "(all 36 layers)" in out and "past the window" in out and "36.86 kB" in out


# ---- the H200's capacity: the device total, as nvidia-smi reports it -------------------------

def test_h200_capacity_is_the_device_total(capsys: pytest.CaptureFixture[str]) -> None:
    # Old: 151,397,597,184 B (141 GiB, the datasheet's 141 read as GiB).
    v = as_json(capsys, "calc", "memory", "--model", "llama-3.1-8b", "--gpu", "h200")
    assert v["memory_bytes"] == 143771 * 2**20 == 150_754_820_096
    spec = as_json(capsys, "gpus", "h200")
    assert spec["memory_datasheet_bytes"] == 141 * 2**30


# ---- expert parallelism ----------------------------------------------------------------------

def test_ep_spreads_whole_experts_and_costs_two_all_to_alls_per_moe_layer(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("calc", "transformer", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--ep", "8",
            "--weight-dtype", "fp8", "--batch", "64", "--context", "4096")
    v = as_json(capsys, *argv)
    assert v["experts_per_gpu"] == 32 and v["dp"] == 1 and v["gpus"] == 8
    message = 64 / 8 * 8 * 7168 * 2  # each GPU's tokens x 8 experts x d x bf16
    assert v["all_to_all_bytes"] == message and v["all_to_alls"] == 2 * 58
    # The all-to-all is the collective calculator's own figure, not a second model of it.
    a2a = run("collective", {"op": "all_to_all", "gpus": "8", "bytes": str(message), "gpu": "h200"})
    assert v["all_to_all_time_s"] == pytest.approx(a2a.values["time_s"])
    assert v["ep_comm_time_s"] == pytest.approx(116 * a2a.values["time_s"])
    # TP all-reduces: after attention (61 layers), the 3 dense MLPs and the 58 shared experts.
    assert v["all_reduces"] == 61 + 3 + 58
    assert v["comm_time_s"] == pytest.approx(v["tp_comm_time_s"] + v["ep_comm_time_s"])


def test_ep_with_data_parallel_attention(capsys: pytest.CaptureFixture[str]) -> None:
    params = get_preset("deepseek-v3").params
    counts = params.counts()
    routed = counts.moe_layers * params.experts * counts.expert
    v = as_json(capsys, "calc", "memory", "--model", "deepseek-v3", "--gpu", "h200", "--ep", "8", "--batch", "8",
                "--weight-dtype", "fp8", "--hbm", "400GiB")
    # TP 1: every GPU holds the whole non-expert part and 1/8 of the routed experts, and 1 sequence.
    assert v["dp"] == 8 and v["weight_bytes_per_gpu"] == pytest.approx(counts.total - routed + routed / 8)
    assert v["kv_bytes_per_gpu"] == pytest.approx(v["kv_bytes_per_sequence"])


@pytest.mark.parametrize("argv, hint", [
    (("--model", "deepseek-v3", "--ep", "3"), "does not divide the 256 routed experts"),
    (("--model", "deepseek-v3", "--tp", "8", "--ep", "4"), "not a multiple of TP 8"),
    (("--model", "llama-3.1-8b", "--ep", "2"), "is dense"),
    (("--model", "deepseek-v3", "--tp", "8", "--ep", "16", "--batch", "3"), "does not split evenly"),
])
def test_impossible_ep_is_refused(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], hint: str) -> None:
    for calc in ("transformer", "memory"):
        line = refused(capsys, "calc", calc, *argv)
        assert hint in line


# ---- speculative decoding: verifying gamma + 1 tokens costs one target step, while memory-bound ----

def test_specdec_states_the_one_step_assumption(capsys: pytest.CaptureFixture[str]) -> None:
    v = as_json(capsys, "calc", "specdec", "--alpha", "0.8", "--gamma", "4")
    assert any("costs one target step" in a and "compute-bound" in a for a in v["assumptions"])


def test_specdec_warns_when_verification_is_compute_bound(capsys: pytest.CaptureFixture[str]) -> None:
    # H100 bf16: ridge 989.4 / 3.35 = 295 FLOP/B; a dense target's linear layers (2 FLOPs per
    # 2-byte weight per token) turn compute-bound past 295 tokens. 128 x 5 = 640 are past it.
    v = as_json(capsys, "calc", "specdec", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", "0.05", "--batch", "128", "--gpu", "h100")
    assert v["verify_tokens"] == 640
    assert v["compute_bound_tokens"] == pytest.approx(989.4e12 / 3.35e12)
    assert v["verify_cost_steps"] == pytest.approx(640 / v["compute_bound_tokens"])
    assert any("compute-bound" in w for w in v["warnings"])
    assert v["speedup_compute_bound"] < v["speedup"]
    small = as_json(capsys, "calc", "specdec", "--alpha", "0.8", "--gamma", "4", "--batch", "16", "--gpu", "h100")
    assert small["verify_cost_steps"] == 1.0 and not any("compute-bound" in w for w in small["warnings"])
    assert math.isclose(small["speedup"], v["speedup"] * (4 * 0.05 + 1) / 1, rel_tol=1e-9)


def test_specdec_gpu_without_batch_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "calc", "specdec", "--alpha", "0.8", "--gamma", "4", "--gpu", "h100")
    assert "--gpu" in line and "--batch" in line
