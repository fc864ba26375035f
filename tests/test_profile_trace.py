"""PyTorch profiler traces (issue 30): kernels linked to their aten ops through "External id",
FLOPs from the recorded shapes (2*M*N*K; attention's two products, causal halves), record_function
ranges, a trace without shapes, and traces that are broken.

Synthetic traces are built the way torch 2.11 writes them (checked against the captures in
tests/data/profile/ and content/profiles/h200/): complete events ("ph": "X") of category "cpu_op",
"kernel", "user_annotation", "gpu_user_annotation", "cuda_runtime"; times in microseconds.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from studytui.profile import analyze, load, to_json
from studytui.profile.flops import causal_share
from studytui.profile.source import ProfileError

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "profile"
H200 = ROOT / "content" / "profiles" / "h200"
CPU, GPU = (1544, 1544), (0, 7)


class Trace:
    """Events on one CPU thread and one GPU stream, in the layout export_chrome_trace writes."""

    def __init__(self, shapes: bool = True):
        self.events: list[dict] = []
        self.shapes = shapes
        self.ext = 0
        self.t = 1000.0

    def annotation(self, name: str, start: float, end: float, gpu_start: float | None = None, gpu_end: float | None = None) -> None:
        self.events.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": CPU[0], "tid": CPU[1], "ts": start,
                            "dur": end - start, "args": {"External id": 0}})
        if gpu_start is not None and gpu_end is not None:
            self.events.append({"ph": "X", "cat": "gpu_user_annotation", "name": name, "pid": GPU[0], "tid": GPU[1],
                                "ts": gpu_start, "dur": gpu_end - gpu_start, "args": {}})

    def op(self, name: str, dims: list, types: list[str], concrete: list[str] | None = None, start: float | None = None,
           dur: float = 10.0) -> int:
        self.ext += 1
        args: dict = {"External id": self.ext, "Record function id": 0}
        if self.shapes:
            args.update({"Input Dims": dims, "Input type": types, "Concrete Inputs": concrete or [""] * len(dims)})
        start = self.t if start is None else start
        self.events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": CPU[0], "tid": CPU[1], "ts": start, "dur": dur, "args": args})
        self.t = max(self.t, start + dur) + 1
        return self.ext

    def kernel(self, name: str, ext: int | None, gpu_ts: float, dur_us: float, correlation: int | None = None) -> None:
        args: dict = {"queued": 0, "device": 0, "context": 1, "stream": 7, "grid": [132, 1, 1], "block": [384, 1, 1]}
        if ext is not None:
            args["External id"] = ext
        if correlation is not None:
            args["correlation"] = correlation
        self.events.append({"ph": "X", "cat": "kernel", "name": name, "pid": GPU[0], "tid": GPU[1], "ts": gpu_ts, "dur": dur_us,
                            "args": args})

    def document(self) -> dict:
        return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "numSms": 132}],
                "record_shapes": int(self.shapes), "displayTimeUnit": "ms", "traceEvents": self.events, "traceName": "t.json"}

    def write(self, tmp_path: Path, name: str = "trace.json") -> Path:
        path = tmp_path / name
        data = json.dumps(self.document()).encode()
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        return path


BF16 = "c10::BFloat16"


def report(path: Path, **kw) -> dict:
    return to_json(analyze(load(path), **kw))


def test_matmul_family_flops_are_2mnk_of_the_recorded_shapes(tmp_path):
    tr = Trace()
    cases = []
    e = tr.op("aten::mm", [[512, 1024], [1024, 3072]], [BF16, BF16])
    cases.append((e, 2 * 512 * 3072 * 1024))
    e = tr.op("aten::addmm", [[3072], [512, 1024], [1024, 3072], [], []], [BF16] * 3 + ["Scalar", "Scalar"], ["", "", "", "1", "1"])
    cases.append((e, 2 * 512 * 3072 * 1024))
    e = tr.op("aten::bmm", [[8, 64, 32], [8, 32, 16]], [BF16, BF16])
    cases.append((e, 2 * 8 * 64 * 16 * 32))
    e = tr.op("aten::matmul", [[4, 1, 64, 32], [8, 32, 16]], [BF16, BF16])  # broadcast batch 4 x 8
    cases.append((e, 2 * 32 * 64 * 16 * 32))
    e = tr.op("aten::baddbmm", [[8, 64, 16], [8, 64, 32], [8, 32, 16], [], []], [BF16] * 3 + ["Scalar", "Scalar"])
    cases.append((e, 2 * 8 * 64 * 16 * 32))
    e = tr.op("aten::_scaled_mm", [[256, 512], [512, 1024], [], []], ["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float"])
    cases.append((e, 2 * 256 * 1024 * 512))
    for i, (ext, _f) in enumerate(cases):
        tr.kernel(f"gemm_{i}", ext, 5000.0 + 100 * i, 20.0)
    data = report(tr.write(tmp_path))
    got = [k["flops"] for k in data["kernels"]]
    assert got == [f for _e, f in cases]
    assert [k["gemm_flops"] for k in data["kernels"]] == got
    assert data["kernels"][-1]["flops_by_precision"] == {"tensor_fp8": 2 * 256 * 1024 * 512}
    assert data["kernels"][-1]["peak_precision"] == "fp8"
    assert data["total"]["gemm_flops"] == sum(got)
    assert all(k["dram_bytes"] is None and "no DRAM counters" in k["dram_bytes_source"] for k in data["kernels"])


def test_linear_is_counted_once_at_its_outermost_op(tmp_path):
    """aten::linear -> aten::t + aten::addmm: the kernel's External id is addmm's; the FLOPs are
    the linear's (the same 2*rows*N*K), once."""
    tr = Trace()
    lin = tr.op("aten::linear", [[4, 128, 1024], [3072, 1024], [3072]], [BF16] * 3, start=2000.0, dur=50.0)
    tr.op("aten::t", [[3072, 1024]], [BF16], start=2001.0, dur=2.0)
    inner = tr.op("aten::addmm", [[3072], [512, 1024], [1024, 3072], [], []], [BF16] * 3 + ["Scalar", "Scalar"], start=2005.0, dur=40.0)
    assert lin != inner
    tr.kernel("nvjet_sm90_tst_96x128_64x7_2x1_v_bz_bias_TNN", inner, 9000.0, 7.648)
    data = report(tr.write(tmp_path))
    (k,) = data["kernels"]
    assert k["flops"] == 2 * (4 * 128) * 3072 * 1024
    assert k["op"] == "aten::addmm (in aten::linear)"
    assert k["model_bytes"] == 2 * (512 * 1024 + 3072 * 1024 + 512 * 3072)


def test_split_k_gemm_counts_its_flops_on_its_longest_kernel(tmp_path):
    tr = Trace()
    e = tr.op("aten::addmm", [[64, 16], [64, 32], [32, 16], [], []], ["float"] * 3 + ["Scalar", "Scalar"])
    tr.kernel("cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>(...)", e, 100.0, 3.296)
    tr.kernel("cublasLt::splitKreduce_kernel<32, 16, int, float>(...)", e, 104.0, 1.376)
    data = report(tr.write(tmp_path))
    main, reduce_ = data["kernels"]
    assert main["flops"] == 2 * 64 * 16 * 32 and reduce_["flops"] is None
    assert reduce_["flops_counted_on_kernel"] == 0 and "counted on kernel #0" in reduce_["flops_source"]
    assert data["total"]["gemm_flops"] == 2 * 64 * 16 * 32 and data["total"]["gemm_flops_unknown_kernels"] == 0


@pytest.mark.parametrize("op, dims, concrete, expected", [
    # SDPA's own arguments: (q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa); q [B, Hq, L, E]
    ("aten::scaled_dot_product_attention", [[1, 32, 2048, 128], [1, 32, 2048, 128], [1, 32, 2048, 128], [], [], [], [], []],
     ["", "", "", "", "0.", "True", "", "False"], 4 * 1 * 32 * 2048 * 2048 * 128 * 0.5),
    # GQA: 32 query heads over 8 KV heads; one query row over 4096 keys, not causal
    ("aten::scaled_dot_product_attention", [[1, 32, 1, 128], [1, 8, 4096, 128], [1, 8, 4096, 128], [], [], [], [], []],
     ["", "", "", "", "0.", "False", "", "True"], 4 * 1 * 32 * 1 * 4096 * 128),
    # the flash form puts is_causal fourth: (q, k, v, dropout_p, is_causal, return_debug_mask, scale)
    ("aten::_scaled_dot_product_flash_attention", [[2, 16, 256, 64], [2, 4, 256, 64], [2, 4, 256, 64], [], [], [], []],
     ["", "", "", "0.", "True", "False", "0.125"], 4 * 2 * 16 * 256 * 256 * 64 * 0.5),
    ("aten::_scaled_dot_product_efficient_attention", [[2, 16, 256, 64], [2, 16, 256, 64], [2, 16, 256, 64], [], [], [], [], []],
     ["", "", "", "", "False", "0.", "True", ""], 4 * 2 * 16 * 256 * 256 * 64 * 0.5),
    ("aten::_scaled_dot_product_cudnn_attention", [[8, 32, 1, 128], [8, 8, 2049, 128], [8, 8, 2049, 128], [], [], [], [], [], []],
     ["", "", "", "", "False", "0.", "False", "False", ""], 4 * 8 * 32 * 1 * 2049 * 128),
])
def test_attention_flops_from_shapes(tmp_path, op, dims, concrete, expected):
    tr = Trace()
    types = ["c10::Half"] * 3 + ["Scalar"] * (len(dims) - 3)
    e = tr.op(op, dims, types, concrete)
    tr.kernel("flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>>", e, 500.0, 9.5)
    (k,) = report(tr.write(tmp_path))["kernels"]
    assert k["flops"] == pytest.approx(expected)
    assert k["attention_flops"] == k["gemm_flops"] == k["flops"]


def test_causal_share_rectangles_follow_torch_top_left_mask():
    assert causal_share(2048, 2048) == 0.5
    assert causal_share(1, 256) == 1 / 256  # one query row keeps one key
    assert causal_share(4, 2) == (1 + 2 + 2 + 2) / 8
    assert causal_share(3, 5) == (1 + 2 + 3) / 15


def test_ranges_nest_and_kernels_take_the_annotations_of_their_op(tmp_path):
    tr = Trace()
    tr.annotation("ProfilerStep#3", 1000.0, 2000.0)
    tr.annotation("prefill", 1010.0, 1500.0, gpu_start=5000.0, gpu_end=5400.0)
    tr.annotation("proj", 1020.0, 1100.0)
    e1 = tr.op("aten::mm", [[2048, 4096], [4096, 4096]], [BF16, BF16], start=1030.0, dur=20.0)
    e2 = tr.op("aten::mul", [[2048, 4096], []], [BF16, "Scalar"], start=1200.0, dur=5.0)
    tr.annotation("decode", 1600.0, 1900.0)
    e3 = tr.op("aten::mm", [[8, 4096], [4096, 4096]], [BF16, BF16], start=1610.0, dur=20.0)
    tr.kernel("nvjet_a", e1, 5000.0, 90.0)
    tr.kernel("vectorized_elementwise_kernel<MulFunctor>", e2, 5100.0, 10.0)
    tr.kernel("nvjet_b", e3, 6000.0, 30.0)
    tr.kernel("ncclKernel_AllReduce", None, 5200.0, 50.0)  # launched by no recorded op: the GPU annotation places it
    data = report(tr.write(tmp_path))
    by_name = {k["name"]: k for k in data["kernels"]}
    assert by_name["nvjet_a"]["range"] == "ProfilerStep#3 > prefill > proj"
    assert by_name["vectorized_elementwise_kernel<MulFunctor>"]["range"] == "ProfilerStep#3 > prefill"
    assert by_name["nvjet_b"]["range"] == "ProfilerStep#3 > decode"
    assert by_name["ncclKernel_AllReduce"]["range"] == "prefill"
    ranges = {r["name"]: r for r in data["ranges"]}
    prefill = ranges["ProfilerStep#3 > prefill"]
    assert prefill["duration_s"] == pytest.approx((90 + 10) * 1e-6)  # the sum of its kernels' GPU time
    assert prefill["gemm_flops"] == 2 * 2048 * 4096 * 4096
    assert ranges["ProfilerStep#3"]["kernels"] == 3
    assert ranges["ProfilerStep#3 > decode"]["gemm_flops"] == 2 * 8 * 4096 * 4096
    # the elementwise kernel is not a matrix multiply (0), the NCCL kernel is unknown
    assert by_name["vectorized_elementwise_kernel<MulFunctor>"]["gemm_flops"] == 0.0
    assert by_name["ncclKernel_AllReduce"]["gemm_flops"] is None
    assert data["total"]["gemm_flops_unknown_kernels"] == 1


def test_kernels_link_through_the_runtime_correlation_when_they_carry_no_external_id(tmp_path):
    tr = Trace()
    e = tr.op("aten::mm", [[128, 256], [256, 512]], [BF16, BF16])
    tr.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": CPU[0], "tid": CPU[1], "ts": 1005.0,
                      "dur": 2.0, "args": {"External id": e, "correlation": 77}})
    tr.kernel("gemm", None, 5000.0, 5.0, correlation=77)
    (k,) = report(tr.write(tmp_path))["kernels"]
    assert k["flops"] == 2 * 128 * 512 * 256 and k["op"] == "aten::mm"


def test_a_trace_without_shapes_has_kernels_and_ranges_but_no_gemm_flops(tmp_path):
    tr = Trace(shapes=False)
    tr.annotation("layer", 900.0, 3000.0)
    e = tr.op("aten::mm", [], [])
    tr.kernel("nvjet", e, 5000.0, 20.0)
    data = report(tr.write(tmp_path))
    (k,) = data["kernels"]
    assert k["flops"] is None and "record_shapes=True" in k["flops_source"]
    assert k["bound"] == "unknown" and k["range"] == "layer"
    assert data["ranges"][0]["gemm_flops"] is None and data["record_shapes"] is False
    assert any("without record_shapes" in n for n in data["notes"])


def test_an_fp32_matmul_run_as_tf32_uses_the_tf32_ceiling(tmp_path):
    tr = Trace()
    e = tr.op("aten::mm", [[4096, 4096], [4096, 4096]], ["float", "float"])
    tr.kernel("sm90_xmma_gemm_tf32f32_tf32f32_f32_nn", e, 100.0, 400.0)
    (k,) = report(tr.write(tmp_path))["kernels"]
    assert k["flops_by_precision"] == {"tensor_tf32": 2 * 4096**3} and k["peak_precision"] == "tf32"


def test_physics_floor_in_a_trace(tmp_path):
    tr = Trace()
    e = tr.op("aten::mm", [[8192, 8192], [8192, 8192]], [BF16, BF16])
    floor_us = 2 * 8192**3 / 989.4e12 * 1e6
    tr.kernel("too_fast", e, 100.0, 0.5 * floor_us)
    e2 = tr.op("aten::mm", [[8192, 8192], [8192, 8192]], [BF16, BF16])
    tr.kernel("fine", e2, 5000.0, 1.3 * floor_us)
    data = report(tr.write(tmp_path))
    fast, fine = data["kernels"]
    assert fast["physically_possible"] is False and fine["physically_possible"] is True
    assert fine["bound"] == "compute" and fine["fraction_of_peak_flops"] == pytest.approx(1 / 1.3, rel=1e-6)


def test_gzip_and_the_array_form_read_the_same(tmp_path):
    tr = Trace()
    e = tr.op("aten::mm", [[64, 64], [64, 64]], [BF16, BF16])
    tr.kernel("k", e, 100.0, 1.0)
    plain = report(tr.write(tmp_path))
    gz = report(tr.write(tmp_path, "trace.json.gz"))
    arr = tmp_path / "array.json"
    arr.write_text(json.dumps(tr.events))
    unclosed = tmp_path / "unclosed.json"
    unclosed.write_text(json.dumps(tr.events)[:-1] + ",\n")  # the array form may stop without its ']'
    for other in (gz, report(arr), report(unclosed)):
        data = other if isinstance(other, dict) else other
        assert data["kernels"][0]["flops"] == plain["kernels"][0]["flops"]


@pytest.mark.parametrize("text, fragment", [
    ('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}, {"ph": "X", "ca', "truncated"),
    ('{"schemaVersion": 1, "traceEvents": [', "truncated"),
    ('{"a": 1}', "no \"traceEvents\""),
    ('{"traceEvents": 7}', "traceEvents is not a list"),
    ('{"traceEvents": []}', "no events"),
    ('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]}', "no GPU kernels"),
    ('{"traceEvents": [1, 2]}', "not an object"),
    ('{"traceEvents": [{"ph": "X"} {"ph": "X"}]}', "expected ',' or ']'"),
    ('[{"ph": "X"},, 3]', "not valid JSON"),
    ('"just a string"', "not a profiler trace"),
])
def test_json_that_is_not_a_usable_trace_is_refused_in_one_line(tmp_path, text, fragment):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ProfileError) as info:
        load(path)
    assert fragment in str(info.value) and "\n" not in str(info.value)


# -- format samples captured on an H200 -----------------------------------------------------------
def test_sample_attention_variants_flops_equal_the_formulas():
    data = report(DATA / "attention-variants.trace.json.gz")
    by_op = {}
    for k in data["kernels"]:
        by_op.setdefault(k["op"], []).append(k)
    linear = by_op["aten::addmm (in aten::linear)"][0]
    assert linear["flops"] == 2 * 512 * 3072 * 1024 and linear["range"] == "prefill > proj"
    flash = by_op["aten::_flash_attention_forward (in aten::scaled_dot_product_attention)"][0]
    assert flash["flops"] == 4 * 2 * 16 * 256 * 256 * 64 * 0.5  # GQA: the 16 query heads count
    efficient = by_op["aten::_efficient_attention_forward (in aten::scaled_dot_product_attention)"][0]
    assert efficient["flops"] == 4 * 2 * 16 * 256 * 256 * 64 * 0.5
    decode = by_op["aten::_cudnn_attention_forward (in aten::scaled_dot_product_attention)"][0]
    assert decode["flops"] == 4 * 2 * 16 * 1 * 256 * 64 and decode["range"] == "decode"
    split = by_op["aten::addmm"]
    assert sorted(k["flops"] or 0 for k in split) == [0, 2 * 64 * 16 * 32]
    bmm = [k["flops"] for k in by_op["aten::bmm"] + by_op["aten::bmm (in aten::matmul)"]]
    assert bmm == [2 * 8 * 64 * 16 * 32] * 2


def test_sample_without_shapes():
    data = report(DATA / "no-shapes.trace.json.gz")
    assert data["record_shapes"] is False and all(k["flops"] is None for k in data["kernels"])


# -- the shipped Llama decoder-layer trace (content/profiles/h200/records.yaml) -------------------
def _h200_trace() -> Path:
    path = H200 / "llama8b-layer-prefill-decode.trace.json.gz"
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    return path


def _recorded_gemm_flops(path: Path) -> dict[str, float]:
    """2*M*N*K (and attention's two products) of every recorded aten::linear and SDPA call, summed
    per record_function range, straight from the trace's events."""
    events = json.load(gzip.open(path))["traceEvents"]
    ranges = [e for e in events if e.get("cat") == "user_annotation" and e["name"] in ("prefill", "decode")]
    out = dict.fromkeys((r["name"] for r in ranges), 0.0)
    for e in events:
        if e.get("cat") != "cpu_op":
            continue
        a = e["args"]
        where = next((r["name"] for r in ranges if r["ts"] <= e["ts"] <= r["ts"] + r["dur"]), None)
        if where is None:
            continue
        if e["name"] == "aten::linear":
            x, w = a["Input Dims"][0], a["Input Dims"][1]
            out[where] += 2.0 * math.prod(x[:-1]) * w[0] * w[1]
        elif e["name"] == "aten::scaled_dot_product_attention":
            q, k, v = a["Input Dims"][:3]
            share = 0.5 if a["Concrete Inputs"][5] == "True" and q[-2] == k[-2] else 1.0
            out[where] += 2.0 * math.prod(q[:-2]) * q[-2] * k[-2] * (q[-1] + v[-1]) * share
    return out


def test_h200_llama_layer_gemm_flops_equal_the_recorded_shapes():
    path = _h200_trace()
    data = report(path)
    expected = _recorded_gemm_flops(path)
    ranges = {r["name"]: r for r in data["ranges"]}
    for name, flops in expected.items():
        assert ranges[name]["gemm_flops"] == pytest.approx(flops, rel=1e-12), name
        assert ranges[name]["gemm_flops_unknown_kernels"] == 0
    # records.yaml: flops_estimate {prefill: 927712935936.0, decode: 3758227456}
    assert ranges["prefill"]["gemm_flops"] == 927712935936.0
    assert ranges["decode"]["gemm_flops"] == 3758227456.0
    # the range time is its kernels' GPU time (records.yaml: 1819.3 us and 266.7 us with the memsets)
    for name in ("prefill", "decode"):
        kernels = [k for k in data["kernels"] if k["range"] == name]
        assert ranges[name]["duration_s"] == pytest.approx(sum(k["duration_s"] for k in kernels))
    assert ranges["prefill"]["duration_s"] * 1e6 == pytest.approx(1819.3, abs=3.0)
    assert all(k["physically_possible"] is not False for k in data["kernels"])
    big = [k for k in data["kernels"] if k["range"] == "prefill" and (k["flops"] or 0) > 1e11]
    assert big and all(k["bound"] == "compute" for k in big)


def test_faster_than_the_measured_ceiling_is_possible_and_said_so(tmp_path):
    tr = Trace()
    e = tr.op("aten::mm", [[8192, 8192], [8192, 8192]], [BF16, BF16])
    tr.kernel("nvjet", e, 100.0, 2 * 8192**3 / (0.8 * 989.4e12) * 1e6)  # 80% of the vendor peak, above the measured 714 TFLOP/s
    (k,) = report(tr.write(tmp_path), profile="measured")["kernels"]
    assert k["physically_possible"] is True and k["fraction_of_peak_flops"] > 1
    assert k["bound"] == "compute" and "passing it is possible: a measured ceiling is what a benchmark sustained, not a bound" \
        in k["bound_reason"]
