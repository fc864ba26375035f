"""Issue 13: every calculator result is right, refused with a reason (exit 2), or carries a warning."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studytui.calc.forms import CALCULATORS, run
from studytui.cli import main
from studytui.core.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run a command that must exit 2 with one line on stderr and nothing on stdout; return the line."""
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


# ---- bounds that are bounds -----------------------------------------------------------------

def test_prefill_bound_is_causal_by_default_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("calc", "transformer", "--model", "llama-3.1-8b", "--gpu", "h200", "--phase", "prefill", "--prompt", "1M")
    causal = as_json(capsys, *argv)
    full = as_json(capsys, *argv, "--no-causal")
    assert causal["attention"] == "causal" and full["attention"] == "bidirectional"
    assert causal["time_s"] == pytest.approx(279, rel=0.01)  # the "about 280 s"
    assert full["time_s"] == pytest.approx(544, rel=0.01)
    code, out, _ = cli(capsys, *argv)
    assert code == 0 and "causal: half the T^2 scores" in out
    code, out, _ = cli(capsys, *argv, "--causal-half")  # the old flag still works
    assert code == 0 and "causal" in out


def test_no_causal_is_an_error_in_decode(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "calc", "transformer", "--model", "llama-3.1-8b", "--no-causal")
    assert "--causal" in line and "prefill" in line


def test_sum_is_called_the_serial_estimate_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ("calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9", "--explain"),
        ("calc", "transformer", "--model", "llama-3.1-8b", "--tp", "2", "--explain"),
        ("calc", "gemm", "--explain"),
    ):
        code, out, _ = cli(capsys, *argv)
        assert code == 0
        assert "upper bound = compute" not in out and "no-overlap bound" not in out
        assert "serial no-overlap estimate" in out
    data = as_json(capsys, "calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9")
    assert "time_serial_s" in data and "time_upper_s" not in data
    readme = (ROOT / "README.md").read_text()
    assert "no-overlap bound" not in readme and "serial no-overlap estimate" in readme


def test_tp_labels_per_gpu_and_total_and_activations_are_replicated(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("calc", "transformer", "--model", "llama-3.1-70b", "--gpu", "h200", "--tp", "4", "--batch", "8")
    code, out, _ = cli(capsys, *argv)
    assert code == 0
    for label in ("FLOPs per GPU", "bytes moved per GPU", "FLOPs total (TP group)", "bytes total (TP group)"):
        assert label in out
    v = as_json(capsys, *argv)
    assert v["flops_per_gpu"] == pytest.approx(v["flops_total"] / 4)
    kv = (v["kv_read_bytes"] + v["kv_write_bytes"]) / 4  # 8 KV heads over 4 GPUs
    assert v["bytes_per_gpu"] == pytest.approx(v["weight_bytes"] / 4 + v["activation_bytes"] + kv)


@pytest.mark.parametrize("argv, hint", [
    (("--model", "llama-3.1-70b", "--tp", "3"), "does not divide the 64 query heads"),
    (("--model", "llama-3.1-8b", "--tp", "1000"), "does not divide the 32 query heads"),
    (("--layers", "2", "--hidden", "512", "--heads", "12", "--kv-heads", "3", "--vocab", "100", "--intermediate", "64",
      "--head-dim", "64", "--tp", "2"), "does not divide the 3 KV heads"),
    (("--layers", "2", "--hidden", "768", "--heads", "12", "--kv-heads", "4", "--vocab", "100", "--intermediate", "64",
      "--tp", "6"), "cannot be replicated evenly"),
])
def test_impossible_tp_split_is_refused(capsys: pytest.CaptureFixture[str], argv: tuple, hint: str) -> None:
    line = refused(capsys, "calc", "transformer", *argv)
    assert "--tp" in line and hint in line


def test_kv_replication_beyond_the_kv_heads_is_stated() -> None:
    r = run("transformer", {"model": "llama-3.1-70b", "tp": "16", "gpu": "h100", "batch": "8"})
    assert any("replicated on 2 GPUs" in a for a in r.assumptions)
    m = run("memory", {"model": "llama-3.1-70b", "tp": "16", "gpu": "h100"})
    assert any("replicated on 2 GPUs" in a for a in m.assumptions)
    with pytest.raises(UsageError, match="query heads"):
        run("memory", {"model": "llama-3.1-70b", "tp": "3"})


# ---- collectives past the scale-up domain -------------------------------------------------------

def test_collective_past_the_nvlink_domain_runs_at_network_speed(capsys: pytest.CaptureFixture[str]) -> None:
    v = as_json(capsys, "calc", "collective", "--gpus", "64", "--gpu", "h100", "--bytes", "1GiB")
    assert v["hierarchical"] is True and v["scale_up_domain"] == 8 and v["domains"] == 8
    assert v["net_bw_per_direction"] == 50e9  # 400 Gb/s per GPU
    assert "ConnectX-7" in v["bottleneck"] and "NVLink" not in v["bottleneck"]
    flat_nvlink = 2 * 63 / 64 * 2**30 / 450e9
    assert v["time_s"] > flat_nvlink
    # Issue 28: NCCL's ring spans all 64 GPUs; its 8 channels leave each domain through the 8 NICs,
    # so each NIC carries 1/8 of the ring's 2(n-1)/n x M (the old 2(k-1)/k x M/8 was a 2-D hierarchy NCCL does not run)
    ring = as_json(capsys, "calc", "collective", "--gpus", "64", "--gpu", "h100", "--bytes", "1GiB", "--algorithm", "ring")
    assert ring["network_time_s"] == pytest.approx(2 * 63 / 64 * 2**30 / 8 / 50e9)
    assert ring["busbw"] <= 8 * 50e9 and v["time_s"] <= ring["time_s"]  # auto picks the fastest
    assert v["time_serial_s"] > v["time_s"]
    code, out, _ = cli(capsys, "calc", "collective", "--gpus", "64", "--gpu", "h100", "--bytes", "1GiB")
    assert "bottleneck" in out and "ConnectX-7" in out and "of the link" not in out


def test_collective_inside_the_domain_is_unchanged() -> None:
    r = run("collective", {"gpus": "8", "gpu": "h100", "bytes": "1GiB", "latency": "0", "algorithm": "ring"})
    assert r.values["hierarchical"] is False and r.values["time_s"] == pytest.approx(2 * 7 / 8 * 2**30 / 450e9)
    assert "NVLink" in r.values["bottleneck"]


def test_gb200_nvl72_domain_is_72() -> None:
    inside = run("collective", {"gpus": "72", "gpu": "gb200", "bytes": "1GiB"})
    assert inside.values["hierarchical"] is False
    outside = run("collective", {"gpus": "144", "gpu": "gb200", "bytes": "1GiB"})
    assert outside.values["hierarchical"] is True and outside.values["domains"] == 2


def test_collective_past_the_domain_without_a_network_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "calc", "collective", "--gpus", "16", "--gpu", "b300")
    assert "--gpus" in line and "--net-bw" in line and "8-GPU scale-up domain" in line
    v = as_json(capsys, "calc", "collective", "--gpus", "16", "--gpu", "b300", "--net-bw", "100GB/s")
    assert v["net_bw_per_direction"] == 100e9
    line = refused(capsys, "calc", "collective", "--gpus", "12", "--gpu", "h100")
    assert "multiple of 8" in line
    line = refused(capsys, "calc", "collective", "--gpus", "8", "--gpu", "h100", "--net-bw", "50GB/s")
    assert "--net-bw" in line and "not used" in line


def test_custom_link_with_domain_and_network() -> None:
    r = run("collective", {"gpus": "32", "link_bw": "400GB/s", "domain": "8", "net_bw": "20GB/s"})
    assert r.values["hierarchical"] is True and r.values["bottleneck"] == "network (--net-bw)"
    flat = run("collective", {"gpus": "32", "link_bw": "400GB/s"})
    assert flat.values["hierarchical"] is False
    assert any("domain size unknown" in a for a in flat.assumptions)
    assert not any("halved" in a for a in flat.assumptions)


def test_tp_past_the_domain_uses_the_network() -> None:
    r = run("transformer", {"model": "llama-3.1-70b", "tp": "16", "gpu": "h100", "batch": "64", "latency": "0"})
    assert r.values["tp_bottleneck"] and any("spans more than one 8-GPU" in w for w in r.warnings)
    with pytest.raises(UsageError, match="net-bw"):
        run("transformer", {"model": "llama-3.1-70b", "tp": "16", "gpu": "b300"})
    given = run("transformer", {"model": "llama-3.1-70b", "tp": "16", "gpu": "b300", "net_bw": "100GB/s"})
    assert given.values["tp_bottleneck"]
    with pytest.raises(UsageError, match="not used"):
        run("transformer", {"model": "llama-3.1-70b", "tp": "8", "gpu": "h100", "net_bw": "50GB/s"})


# ---- no silent nonsense --------------------------------------------------------------------------

@pytest.mark.parametrize("argv, flag", [
    (("calc", "transformer", "--model", "llama-3.1-8b", "--phase", "prefill", "--context", "32768"), "--context"),
    (("calc", "transformer", "--model", "llama-3.1-8b", "--phase", "decode", "--prompt", "32768"), "--prompt"),
    (("calc", "kv", "--model", "llama-3.1-8b", "--sliding-window", "4096"), "--sliding-window"),
    (("calc", "transformer", "--model", "llama-3.1-8b", "--link-bw", "100GB/s"), "--link-bw"),
    (("calc", "transformer", "--model", "llama-3.1-8b", "--latency", "5us"), "--latency"),
    (("calc", "transformer", "--model", "llama-3.1-8b", "--quant-group", "64"), "--quant-group"),
    (("calc", "memory", "--model", "llama-3.1-8b", "--quant-scale-bytes", "1"), "--quant-scale-bytes"),
    (("calc", "kv", "--model", "llama-3.1-8b", "--moe-intermediate", "2048"), "--moe-intermediate"),
    (("calc", "kv", "--model", "llama-3.1-8b", "--mla-v-dim", "64"), "--mla-v-dim"),
    (("calc", "collective", "--link-bw", "100GB/s", "--profile", "measured"), "--profile"),
])
def test_unused_flags_are_errors(capsys: pytest.CaptureFixture[str], argv: tuple, flag: str) -> None:
    line = refused(capsys, *argv)
    assert f"{flag}: " in line and "not used" in line, line


def test_model_dims_for_missing_features_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # the model validation refuses these already, naming the flag the feature needs
    assert "--mla-kv-rank" in refused(capsys, "calc", "kv", "--model", "llama-3.1-8b", "--mla-rope-dim", "64")
    assert "--experts" in refused(capsys, "calc", "kv", "--model", "llama-3.1-8b", "--active-experts", "2")


def test_used_flags_still_pass(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ("calc", "transformer", "--model", "llama-3.1-8b", "--phase", "prefill", "--prompt", "4096", "--no-causal"),
        ("calc", "transformer", "--model", "llama-3.1-8b", "--tp", "2", "--latency", "2us", "--link-bw", "300GB/s"),
        ("calc", "transformer", "--model", "llama-3.1-8b", "--weight-dtype", "int4", "--quant-group", "64"),
        ("calc", "kv", "--model", "llama-3.1-8b", "--sliding-window", "4096", "--sliding-layers", "16"),
    ):
        code, _out, err = cli(capsys, *argv)
        assert code == 0, (argv, err)


def test_custom_ceilings_never_borrow_the_default_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    base = ("calc", "transformer", "--model", "llama-3.1-70b", "--peak-flops", "312TFLOP/s", "--mem-bw", "1.5TB/s", "--tp", "4")
    line = refused(capsys, *base)
    assert "--link-bw" in line
    v = as_json(capsys, *base, "--link-bw", "300GB/s")
    assert v["gpu"] is None and "fits" not in v and "memory_bytes" not in v
    assert any("memory fit left out" in a and "--hbm" in a for a in v["assumptions"])
    assert v["link_bw_per_direction"] if "link_bw_per_direction" in v else True
    with_hbm = as_json(capsys, *base, "--link-bw", "300GB/s", "--hbm", "80GiB")
    assert with_hbm["memory_bytes"] == 80 * 2**30
    line = refused(capsys, "calc", "roofline", "--peak-flops", "312TFLOP/s", "--intensity", "10")
    assert "--mem-bw" in line
    # naming the GPU explicitly fills the rest from it
    v = as_json(capsys, "calc", "roofline", "--peak-flops", "312TFLOP/s", "--gpu", "a100", "--intensity", "10")
    assert v["mem_bw"] == pytest.approx(2.039e12, rel=0.01)


@pytest.mark.parametrize("argv", [
    ("calc", "roofline", "--flops", "1e308", "--bytes", "1e-300"),
    ("calc", "transformer", "--model", "llama-3.1-8b", "--batch", "1e300"),
    ("calc", "gemm", "--m", "1e200", "--n", "1e200", "--k", "1e200"),
    ("calc", "collective", "--bytes", "1e308", "--link-bw", "1e-300"),
])
@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_non_finite_results_never_print(capsys: pytest.CaptureFixture[str], argv: tuple, json_flag: tuple) -> None:
    line = refused(capsys, *argv, *json_flag)
    assert "nan" not in line.lower().split("not a finite")[0] or "finite" in line or "out of range" in line or "cannot compute" in line


@pytest.mark.parametrize("profile", ["~0", "~no_such_user_xyz/p.yaml", "/", "x" * 5000, "/nonexistent/p.yaml"])
def test_profile_path_oddities_are_one_line(capsys: pytest.CaptureFixture[str], profile: str) -> None:
    line = refused(capsys, "calc", "roofline", "--gpu", "h200", "--intensity", "3", "--profile", profile)
    assert "--profile" in line or "profile" in line


def test_profile_nul_byte_and_binary_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="profile"):
        run("roofline", {"gpu": "h200", "intensity": "3", "profile": "a\x00b"})
    binary = tmp_path / "p.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(UsageError, match="UTF-8"):
        run("roofline", {"gpu": "h200", "intensity": "3", "profile": str(binary)})


@pytest.mark.parametrize("argv, flag", [
    (("calc", "collective", "--bytes", "-4e9"), "--bytes"),
    (("calc", "collective", "--latency", "-1us"), "--latency"),
    (("calc", "roofline", "--gpu", "h200", "--flops", "-1e12", "--bytes", "1GB"), "--flops"),
    (("calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "-.5GB"), "--bytes"),
    (("calc", "specdec", "--alpha", "-0.5"), "--alpha"),
    (("calc", "transformer", "--model", "llama-3.1-8b", "--batch", "-2e3"), "--batch"),
])
def test_negative_numbers_with_units_get_must_be_positive(capsys: pytest.CaptureFixture[str], argv: tuple, flag: str) -> None:
    line = refused(capsys, *argv)
    assert flag in line and ("greater than zero" in line or "zero or more" in line)
    assert "expected one argument" not in line


def test_specdec_alpha_zero_is_valid() -> None:
    r = run("specdec", {"alpha": "0", "gamma": "3", "cost_ratio": "0.1"})
    assert r.values["expected_tokens_per_step"] == 1
    assert r.values["speedup"] == pytest.approx(1 / (3 * 0.1 + 1))
    assert r.warnings  # no gamma helps


def test_specdec_cap_is_not_named_the_best(capsys: pytest.CaptureFixture[str]) -> None:
    v = as_json(capsys, "calc", "specdec", "--alpha", "1", "--cost-ratio", "0.05")
    assert v["best_gamma"] is None and v["best_gamma_capped"] is True and v["speedup_limit"] == pytest.approx(20)
    code, out, _ = cli(capsys, "calc", "specdec", "--alpha", "1", "--cost-ratio", "0.05")
    assert "keeps rising" in out and "best gamma                       64" not in out
    free = run("specdec", {"alpha": "1", "cost_ratio": "0"})
    assert free.values["best_gamma"] is None and "speedup_limit" not in free.values
    normal = run("specdec", {"alpha": "0.8", "cost_ratio": "0.05"})
    assert isinstance(normal.values["best_gamma"], int) and normal.values["best_gamma"] < 64


@pytest.mark.parametrize(
    "record, hint",
    [
        (
            "- id: mine\n  aliases: [h100]\n  name: Mine\n  peak_tflops: {bf16: 1}\n  memory_bw_tbs: 1\n",
            "alias 'h100' of 'mine' is already an alias of 'h100-sxm'",
        ),
        ("- id: mine\n  aliases: [h200-sxm]\n  name: Mine\n  peak_tflops: {bf16: 1}\n  memory_bw_tbs: 1\n", "is already id of 'h200-sxm'"),
        ("- id: h100\n  name: Mine\n  peak_tflops: {bf16: 1}\n  memory_bw_tbs: 1\n", "alias 'h100' of 'h100-sxm' is already id of 'h100'"),
    ],
)
def test_user_hardware_colliding_with_builtin_is_refused(
    isolated_data_dir: Path, capsys: pytest.CaptureFixture[str], record: str, hint: str
) -> None:
    folder = isolated_data_dir / "hardware"
    folder.mkdir()
    (folder / "mine.yaml").write_text(record)
    line = refused(capsys, "gpus")
    assert hint in line


# ---- the catalog -----------------------------------------------------------------------------------

def test_gaudi3_scale_up_is_21_of_24_ports() -> None:
    r = run("collective", {"gpus": "8", "gpu": "gaudi3", "latency": "0"})
    assert r.values["link_bw_per_direction"] == 525e9
    out = run("collective", {"gpus": "16", "gpu": "gaudi3", "latency": "0"})
    assert out.values["net_bw_per_direction"] == 75e9  # 3 x 200 Gb/s


def test_tpu_collective_runs_along_one_axis() -> None:
    r = run("collective", {"gpus": "16", "gpu": "tpu-v5e", "latency": "0"})
    assert r.values["link_bw_per_direction"] == 90e9  # 2 x 45 GB/s, not 200
    assert any("one axis" in a for a in r.assumptions)
    assert not any("halved" in a for a in r.assumptions)
    with pytest.raises(UsageError, match="at most 16 chips"):
        run("collective", {"gpus": "64", "gpu": "tpu-v5e"})


def test_ecc_reported_memory_with_datasheet_beside(capsys: pytest.CaptureFixture[str]) -> None:
    for gpu, mib, gb in (("l40s", 46068, 48), ("l4", 23034, 24)):
        spec = as_json(capsys, "gpus", gpu)
        assert spec["memory_bytes"] == mib * 2**20 and spec["memory_datasheet_bytes"] == gb * 2**30
        code, out, _ = cli(capsys, "gpus", gpu)
        out = " ".join(out.split())
        assert f"{mib:,} MiB" in out and f"datasheet {gb} GB" in out
    r = run("memory", {"model": "llama-3.1-8b", "gpu": "l40s"})
    assert r.values["memory_bytes"] == 46068 * 2**20


def test_amd_gemm_waves_use_compute_units() -> None:
    for gpu, cus in (("mi300x", 304), ("mi355x", 256)):
        r = run("gemm", {"gpu": gpu})
        assert r.values["sm_count"] == cus and not r.warnings
        assert any(label.startswith("waves over CUs") for label, _ in r.rows)


def test_measured_two_gpu_link_is_flagged_on_more_gpus() -> None:
    r = run("collective", {"gpus": "8", "gpu": "h200", "profile": "measured"})
    assert any("2-GPU all-reduce" in w for w in r.warnings)
    two = run("collective", {"gpus": "2", "gpu": "h200", "profile": "measured"})
    assert not two.warnings
    tp = run("transformer", {"model": "llama-3.1-8b", "gpu": "h200", "tp": "4", "profile": "measured"})
    assert any("2-GPU all-reduce" in w for w in tp.warnings)


def test_explain_wording(capsys: pytest.CaptureFixture[str]) -> None:
    nvls = lambda r: any("SHARP" in a for a in r.assumptions)  # noqa: E731
    assert nvls(run("collective", {"gpu": "h100"}))
    assert not nvls(run("collective", {"gpu": "a100"})) and not nvls(run("collective", {"gpu": "mi300x"}))
    assert not nvls(run("collective", {"gpu": "h100", "op": "all_gather", "algorithm": "ring"}))
    halved = lambda r: any("halved" in a for a in r.assumptions)  # noqa: E731
    assert halved(run("collective", {"gpu": "h100"}))
    assert not halved(run("collective", {"link_bw": "100GB/s"}))
    a2a = run("collective", {"gpu": "h100", "op": "all_to_all"})
    assert "ring" not in dict(a2a.rows)["collective"] and any("not a ring" in a for a in a2a.assumptions)
    code, out, _ = cli(capsys, "calc", "roofline", "--gpu", "h100", "--dtype", "int8", "--intensity", "3")
    assert "peak int8 = 1979 TOPS" in out
    code, out, _ = cli(capsys, "gpus", "h100")
    assert "1,979 TOPS" in out
    fp16 = run("transformer", {"model": "llama-3.1-8b", "weight_dtype": "fp16"})
    assert not any("quantisation" in a for a in fp16.assumptions) and any("same storage size" in a for a in fp16.assumptions)
    int4 = run("transformer", {"model": "llama-3.1-8b", "weight_dtype": "int4"})
    assert any(a.startswith("weight-only quantisation") for a in int4.assumptions)
    fp8 = run("transformer", {"model": "llama-3.1-8b", "dtype": "fp8"})
    assert any("fp8 math needs fp8 operands" in w for w in fp8.warnings)


def test_gpus_id_shows_measured_figures_with_the_five_fields(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "gpus", "h200")
    assert code == 0
    for field in ("hardware:", "workload:", "precision:", "baseline:", "correctness:"):
        assert field in out
    data = as_json(capsys, "gpus", "h200")
    evidence = data["measured"]["evidence"]
    assert evidence and all(set(e) >= {"hardware", "workload", "precision", "baseline", "correctness"} for e in evidence)
    assert "NVIDIA H200" in evidence[0]["hardware"] and "reference" in evidence[0]["correctness"]


# ---- properties: finite and positive, or a UsageError ------------------------------------------------

_NUMBERS = st.one_of(
    st.floats(min_value=1e-320, max_value=1e308, allow_nan=False, allow_infinity=False).map(lambda x: f"{x:g}"),
    st.integers(min_value=-10**6, max_value=10**40).map(str),
    st.sampled_from(["0", "-1", "-4e9", "1e-300", "1e300", "nan", "inf", "-inf", "1", "2", "3", "7", "8", "64"]),
)
_UNITS = st.sampled_from(["", "k", "M", "G", "GB", "GiB", "TB/s", "us", "ms", "TFLOP/s", "x"])


def _value_for(field, draw):
    if field.kind in ("dtype",):
        return draw(st.sampled_from(["bf16", "fp8", "int4", "fp32", "fp4", "int8", "nope"]))
    if field.kind == "gpu":
        return draw(st.sampled_from(["h200", "h100", "a100", "mi300x", "tpu-v5e", "gaudi3", "l4", "gb200", "rtx-4090", "zz"]))
    if field.kind == "model":
        return draw(st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "deepseek-v3", "mixtral-8x7b", "gpt-oss-120b"]))
    if field.kind == "bool":
        return draw(st.sampled_from(["true", "false"]))
    if field.kind == "choice":
        if field.name == "profile":
            return draw(st.sampled_from(["vendor", "measured", "~0", "/nonexistent"]))
        return draw(st.sampled_from(list(field.choices or ()) + ["bogus"]))
    return draw(_NUMBERS) + draw(_UNITS)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(CALCULATORS)), st.data())
def test_every_calculator_is_finite_and_positive_or_refuses(name: str, data: st.DataObject) -> None:
    spec = CALCULATORS[name]
    chosen = data.draw(st.lists(st.sampled_from(spec.fields), max_size=4, unique_by=lambda f: f.name))
    values = {"model": "llama-3.1-8b"} if any(f.kind == "model" for f in spec.fields) else {}
    if name == "roofline":
        values = {"flops": "1e12", "bytes": "1GB"}
    for field in chosen:
        values[field.name] = _value_for(field, data.draw)
    strict = data.draw(st.booleans())
    try:
        result = spec.run(values, strict=strict)
    except UsageError as exc:
        assert "\n" not in str(exc)
        return
    for key, value in result.values.items():
        if isinstance(value, float):
            assert math.isfinite(value), (key, value)
    if result.values.get("time_s") is not None:
        assert result.values["time_s"] > 0
    for key in ("flops", "bytes", "busbw", "algbw", "speedup", "kv_bytes_per_token"):
        if isinstance(result.values.get(key), float):
            assert result.values[key] > 0, key
    json.dumps(result.to_json(), allow_nan=False)
