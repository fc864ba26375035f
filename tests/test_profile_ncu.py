"""Nsight Compute CSV exports (issue 30): the raw page with its units row, the details page, every
unit scaling, the metric sets (full counters, roofline rates, the default speed-of-light set), NVTX
ranges and several processes; the roofline, limiter and physics floor on top.

The synthetic exports below are written the way ncu 2025.3.1 writes them (checked against real
H200 captures: tests/data/profile/ and content/profiles/h200/). Every expected figure is computed
here from the counters written, never read back from the code under test.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
from pathlib import Path

import pytest

from studytui.profile import analyze, load, to_json
from studytui.profile.source import ProfileError

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "profile"
H200 = ROOT / "content" / "profiles" / "h200"
PUSH_POP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
START_STOP = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
IDENT = ["ID", "Process ID", "Process Name", "Host Name", PUSH_POP, START_STOP, "Kernel Name", "Context", "Stream",
         "Block Size", "Grid Size", "Device", "CC"]
# Unit -> SI factor, written out here independently of studytui.profile.units.
FACTOR = {
    "": 1.0, "%": 1.0, "inst": 1.0, "cycle": 1.0, "inst/cycle": 1.0, "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9,
    "Tbyte": 1e12, "ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "second": 1.0,
    "byte/s": 1.0, "byte/second": 1.0, "Mbyte/s": 1e6, "Gbyte/s": 1e9, "Gbyte/second": 1e9, "Tbyte/s": 1e12, "hz": 1.0,
    "Mhz": 1e6, "Ghz": 1e9,
}
SCALINGS = {  # metric kind -> unit, as ncu picks them (auto), as --print-units base writes them, and older spellings
    "auto": {"time": "us", "bytes": "Mbyte", "rate": "Gbyte/s", "freq": "Ghz"},
    "base": {"time": "ns", "bytes": "byte", "rate": "byte/s", "freq": "hz"},
    "older": {"time": "usecond", "bytes": "Kbyte", "rate": "Gbyte/second", "freq": "Mhz"},
    "large": {"time": "msecond", "bytes": "Gbyte", "rate": "Tbyte/s", "freq": "Ghz"},
}
KIND = {
    "gpu__time_duration.sum": "time", "dram__bytes_read.sum": "bytes", "dram__bytes_write.sum": "bytes", "dram__bytes.sum": "bytes",
    "dram__bytes.sum.per_second": "rate", "sm__cycles_elapsed.avg.per_second": "freq",
}


def number(value: float) -> str:
    """A value as ncu prints it: integers with ',' thousands separators, others with 6 decimals."""
    if float(value).is_integer() and abs(value) < 1e18:
        return f"{int(value):,}"
    return f"{value:.6f}"


def nvtx(pid: str, path: tuple[str, ...]) -> str:
    return "" if not path else f"{pid}  " + "  ".join(f'"<default domain>:{n}:none:none:none:none:none:none"' for n in path) + " "


def unit_of(metric: str, scaling: str) -> str:
    kind = KIND.get(metric)
    if kind:
        return SCALINGS[scaling][kind]
    if metric.endswith("pct_of_peak_sustained_elapsed"):
        return "%"
    if metric.endswith(".per_cycle_elapsed"):
        return "" if "ops_path_tensor" in metric else "inst/cycle"
    if "sass_thread_inst" in metric:
        return "inst"
    if "cycles_elapsed" in metric:
        return "cycle"
    return ""


def raw_csv(kernels: list[dict], scaling: str = "auto", preamble: str = "") -> str:
    """An `ncu --csv --page raw` export: header, units row, one row per kernel. Each kernel: name,
    id, pid, range (tuple), metrics {name: SI value}."""
    metrics: list[str] = []
    for k in kernels:
        for m in k["metrics"]:
            if m not in metrics:
                metrics.append(m)
    out = io.StringIO()
    out.write(preamble)
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(IDENT + metrics)
    w.writerow([""] * len(IDENT) + [unit_of(m, scaling) for m in metrics])
    for k in kernels:
        pid = k.get("pid", "4242")
        row = [k["id"], pid, "python3.12", "127.0.0.1", nvtx(pid, k.get("range", ())), k.get("start_stop", ""), k["name"], "1", "7",
               "(384, 1, 1)", "(132, 1, 1)", "0", "9.0"]
        for m in metrics:
            v = k["metrics"].get(m)
            row.append("" if v is None else (v if isinstance(v, str) else number(v / FACTOR[unit_of(m, scaling)])))
        w.writerow(row)
    return out.getvalue()


DETAILS_HEADER = IDENT + ["Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name", "Rule Type", "Rule Description",
                          "Estimated Speedup Type", "Estimated Speedup"]


def details_csv(kernels: list[dict]) -> str:
    """An `ncu --csv --page details` export: metric rows end after "Metric Value" (18 fields with
    the trailing empty one, as ncu writes them), rule rows have all 22."""
    out = io.StringIO()
    out.write(",".join(f'"{h}"' for h in DETAILS_HEADER) + "\n")
    for k in kernels:
        pid = k.get("pid", "4242")
        ident = [k["id"], pid, "python3.12", "127.0.0.1", nvtx(pid, k.get("range", ())), "", k["name"], "1", "7", "(384, 1, 1)",
                 "(132, 1, 1)", "0", "9.0"]
        for section, metric, unit, value in k["rows"]:
            out.write(",".join(f'"{c}"' for c in ident + [section, metric, unit, value]) + ",\n")
        out.write(",".join(f'"{c}"' for c in ident + ["SpeedOfLight", "", "", "", "SOLBottleneck", "OPT",
                                                        "Compute is more heavily utilized than Memory.", "", ""]) + "\n")
    return out.getvalue()


def write(tmp_path: Path, text: str, name: str = "export.csv") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def gemm(m: int, n: int, k: int, seconds: float, idx: str = "0", rng: tuple[str, ...] = ("gemm",), **extra: float) -> dict:
    flops = 2.0 * m * n * k
    metrics = {
        "gpu__time_duration.sum": seconds,
        "dram__bytes_read.sum": 2.0 * (m * k + k * n),
        "dram__bytes_write.sum": 2.0 * m * n,
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum": flops,
        "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": 0.0,
        "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": 0.0,
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 0.0,
        "sm__throughput.avg.pct_of_peak_sustained_elapsed": 90.0,
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": 60.0,
        "device__attribute_display_name": "NVIDIA H200",
    }
    metrics.update(extra)
    return {"id": idx, "name": f"nvjet_sm90_tst_256x128_{m}x{n}x{k}", "range": rng, "metrics": metrics}


def elementwise(elements: int, seconds: float, idx: str = "1", rng: tuple[str, ...] = ("add",), sm: float = 6.0, mem: float = 90.0) -> dict:
    return {"id": idx, "name": "void at::vectorized_elementwise_kernel<4, at::CUDAFunctor_add<float>>(int, T2, T3)", "range": rng,
            "metrics": {
                "gpu__time_duration.sum": seconds,
                "dram__bytes_read.sum": 8.0 * elements, "dram__bytes_write.sum": 4.0 * elements,
                "sm__ops_path_tensor_src_bf16_dst_fp32.sum": 0.0,
                "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": float(elements),
                "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": 0.0,
                "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 0.0,
                "sm__throughput.avg.pct_of_peak_sustained_elapsed": sm,
                "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": mem,
                "device__attribute_display_name": "NVIDIA H200",
            }}


def report(path: Path, **kw) -> dict:
    return to_json(analyze(load(path), **kw))


def close(a: float, b: float, rel: float) -> bool:
    return abs(a - b) <= rel * abs(b)


# -- the raw page -------------------------------------------------------------------------------
def test_raw_page_units_row_thousands_separators_and_si(tmp_path):
    k = gemm(4096, 4096, 4096, 175.552e-6)
    path = write(tmp_path, raw_csv([k]))
    text = path.read_text()
    assert '"17,179,869,184"' not in text  # 2*4096^3 = 137,438,953,472
    assert '"137,438,953,472"' in text and '"175.552000"' in text and '"Mbyte"' in text
    kern = report(path)["kernels"][0]
    assert kern["duration_s"] == pytest.approx(175.552e-6, rel=1e-9)
    assert kern["dram_bytes"] == pytest.approx(2.0 * (2 * 4096 * 4096) + 2.0 * 4096 * 4096, rel=1e-9)
    assert kern["flops"] == pytest.approx(2.0 * 4096**3, rel=1e-12)
    assert kern["intensity"] == pytest.approx(kern["flops"] / kern["dram_bytes"], rel=1e-12)
    assert kern["range"] == "gemm" and kern["name"].startswith("nvjet_sm90")


@pytest.mark.parametrize("scaling", sorted(SCALINGS))
def test_every_unit_scaling_gives_the_same_figures(tmp_path, scaling):
    kernels = [gemm(8192, 8192, 8192, 1.371456e-3), elementwise(1 << 26, 182.368e-6),
               {**gemm(16, 8192, 8192, 34.656e-6, idx="2"), "metrics": {**gemm(16, 8192, 8192, 34.656e-6)["metrics"],
                                                                         "sm__cycles_elapsed.avg.per_second": 1.74e9}}]
    base = report(write(tmp_path, raw_csv(kernels, "base"), "base.csv"), gpu="h200")
    other = report(write(tmp_path, raw_csv(kernels, scaling), f"{scaling}.csv"), gpu="h200")
    for a, b in zip(base["kernels"], other["kernels"]):
        for key in ("duration_s", "dram_bytes", "flops", "intensity", "achieved_flops", "achieved_bw", "sm_clock_hz"):
            if a[key] is None:
                assert b[key] is None, key
            else:
                assert close(b[key], a[key], 1e-5), (scaling, key, a[key], b[key])  # 6 printed decimals
        assert a["bound"] == b["bound"]


def test_sass_counters_follow_ncu_roofline_formula(tmp_path):
    metrics = {
        "gpu__time_duration.sum": 10e-6, "dram__bytes_read.sum": 1e6, "dram__bytes_write.sum": 1e6,
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum": 0.0,
        "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": 10.0, "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": 20.0,
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 30.0,
        "sm__sass_thread_inst_executed_op_hadd_pred_on.sum": 1.0, "sm__sass_thread_inst_executed_op_hmul_pred_on.sum": 2.0,
        "sm__sass_thread_inst_executed_op_hfma_pred_on.sum": 3.0,
        "sm__sass_thread_inst_executed_op_dadd_pred_on.sum": 100.0, "sm__sass_thread_inst_executed_op_dmul_pred_on.sum": 200.0,
        "sm__sass_thread_inst_executed_op_dfma_pred_on.sum": 300.0,
    }
    kern = report(write(tmp_path, raw_csv([{"id": "0", "name": "k", "metrics": metrics}])))["kernels"][0]
    by = kern["flops_by_precision"]
    assert by["fp32"] == 10 + 20 + 2 * 30  # FADD + FMUL + 2 FFMA
    assert by["fp16"] == 2 * 1 + 2 * 2 + 4 * 3  # HADD2/HMUL2/HFMA2 each work on a pair (ncu's derived _x2/_x4)
    assert by["fp64"] == 100 + 200 + 2 * 300
    assert kern["flops"] == 90 + 18 + 900


def test_tensor_counters_are_not_counted_twice(tmp_path):
    metrics = {
        "gpu__time_duration.sum": 10e-6, "dram__bytes_read.sum": 1e6, "dram__bytes_write.sum": 0.0,
        "sm__ops_path_tensor_src_fp16.sum": 1000.0, "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 999.0,  # a subset of the plain one
        "sm__ops_path_tensor_src_fp8_sparsity_off.sum": 500.0, "sm__ops_path_tensor_src_fp8_sparsity_on.sum": 0.0,  # no plain fp8
        "sm__ops_path_tensor_op_hgmma_src_fp16.sum": 1000.0,  # by instruction: the same work again
        "smsp__ops_path_tensor_src_fp16.sum": 1000.0,  # the same work counted per sub-partition
    }
    kern = report(write(tmp_path, raw_csv([{"id": "0", "name": "k", "metrics": metrics}])))["kernels"][0]
    assert kern["flops_by_precision"] == {"tensor_fp16": 1000.0, "tensor_fp8": 500.0}
    assert "no CUDA-core FP counters" in kern["flops_source"]


def test_roofline_sections_rates_times_duration(tmp_path):
    """--set roofline: DRAM bytes = dram__bytes.sum.per_second x duration; SASS per-cycle rates x cycles."""
    t, cycles = 31.84e-6, 41111.030303
    metrics = {
        "gpu__time_duration.sum": t, "dram__bytes.sum.per_second": 832.289447e9,
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum": 17179869184.0,
        "sm__cycles_elapsed.avg": cycles, "smsp__cycles_elapsed.avg": cycles,
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed": 129.543489,
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed": 153.562191,
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed": 1.968746,
    }
    data = report(write(tmp_path, raw_csv([{"id": "0", "name": "k", "metrics": metrics}])))
    kern = data["kernels"][0]
    assert kern["dram_bytes"] == pytest.approx(832.289447e9 * t, rel=1e-9)
    assert kern["flops_by_precision"]["fp32"] == pytest.approx((129.543489 + 153.562191 + 2 * 1.968746) * cycles, rel=1e-9)
    assert "per_second" in kern["dram_bytes_source"]
    assert data["metric_set"].startswith("roofline sections")


def test_default_set_has_no_bytes_or_flops_and_says_so(tmp_path):
    metrics = {
        "gpu__time_duration.sum": 182.368e-6,
        "sm__throughput.avg.pct_of_peak_sustained_elapsed": 5.6,
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": 89.6,
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 89.6,
        "device__attribute_display_name": "NVIDIA H200",
    }
    data = report(write(tmp_path, raw_csv([{"id": "0", "name": "add", "metrics": metrics}])))
    kern = data["kernels"][0]
    assert kern["dram_bytes"] is None and kern["flops"] is None and kern["intensity"] is None
    assert "default set" in kern["dram_bytes_source"] and "default set" in kern["flops_source"]
    assert kern["bound"] == "memory" and "speed of light" in kern["bound_reason"] and "no byte or FLOP counters" in kern["bound_reason"]
    # An estimate, labelled as one, from DRAM busy % x the catalog bandwidth x duration.
    assert kern["dram_bytes_estimate"] == pytest.approx(0.896 * 4.8e12 * 182.368e-6, rel=1e-9)
    assert "estimate" in kern["dram_bytes_estimate_source"]
    assert data["metric_set"].startswith("speed-of-light only")
    assert data["total"]["gemm_flops"] is None and data["total"]["dram_bytes"] is None


def test_details_page_agrees_with_raw(tmp_path):
    k0, k1 = gemm(4096, 4096, 4096, 175.552e-6), elementwise(1 << 26, 182.368e-6)
    raw = report(write(tmp_path, raw_csv([k0, k1]), "raw.csv"), gpu="h200")
    rows = []
    for k in (k0, k1):
        m = k["metrics"]
        t = m["gpu__time_duration.sum"]
        bw = (m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / t
        rows.append({**k, "rows": [
            ("GPU Speed Of Light Throughput", "Duration", "us", f"{t * 1e6:,.2f}"),
            ("GPU Speed Of Light Throughput", "Compute (SM) Throughput", "%",
             f"{m['sm__throughput.avg.pct_of_peak_sustained_elapsed']:.2f}"),
            ("GPU Speed Of Light Throughput", "Memory Throughput", "%",
             f"{m['gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed']:.2f}"),
            ("Memory Workload Analysis", "Memory Throughput", "Gbyte/s", f"{bw / 1e9:,.2f}"),
        ]})
    details = report(write(tmp_path, details_csv(rows), "details.csv"), gpu="h200")
    assert details["format"] == "ncu-details"
    for a, b in zip(raw["kernels"], details["kernels"]):
        assert close(b["duration_s"], a["duration_s"], 0.005)
        assert close(b["dram_bytes"], a["dram_bytes"], 0.01)
        assert b["flops"] is None  # the details page prints no FLOP counts
        assert b["ncu_rules"][0]["rule"] == "SOLBottleneck"
    assert any("details page prints no FLOP counts" in n for n in details["notes"])


def test_nvtx_ranges_nested_and_several_processes(tmp_path):
    kernels = [
        gemm(1024, 512, 2048, 9.5e-6, idx="0", rng=("layer", "attn:qkv")),
        {**elementwise(1 << 20, 3e-6, idx="1", rng=("layer", "mlp")), "pid": "7"},
        {**elementwise(1 << 20, 4e-6, idx="2", rng=()), "pid": "7",
         "start_stop": ' "0:<default domain>:step 3:none:none:none:none:none:none" '},
        gemm(1024, 512, 2048, 9.7e-6, idx="3", rng=()),
    ]
    data = report(write(tmp_path, raw_csv(kernels)), gpu="h200")
    assert [k["range"] for k in data["kernels"]] == ["layer > attn:qkv", "layer > mlp", "step 3", "(no range)"]
    assert {p["pid"] for p in data["processes"]} == {"4242", "7"}
    ranges = {r["name"]: r for r in data["ranges"]}
    assert ranges["layer"]["kernels"] == 2 and ranges["layer"]["depth"] == 1
    assert ranges["layer"]["duration_s"] == pytest.approx(9.5e-6 + 3e-6)
    assert ranges["layer > attn:qkv"]["gemm_flops"] == 2.0 * 1024 * 512 * 2048
    assert data["total"]["duration_s"] == pytest.approx(9.5e-6 + 3e-6 + 4e-6 + 9.7e-6)
    assert data["total"]["gemm_flops"] == 2 * 2.0 * 1024 * 512 * 2048
    shares = data["total"]["share_by_bound"]
    assert sum(v for v in shares.values() if v) == pytest.approx(1.0)


# -- the limiter and the physics floor ----------------------------------------------------------
def test_limiter_compute_memory_latency(tmp_path):
    big = gemm(8192, 8192, 8192, 2 * 8192**3 / (0.8 * 989.4e12))  # 80% of the bf16 peak
    stream = elementwise(1 << 26, 12.0 * (1 << 26) / (0.9 * 4.8e12))  # 90% of HBM
    tiny = elementwise(1 << 10, 3e-6, idx="2", sm=2.0, mem=3.0)
    data = report(write(tmp_path, raw_csv([big, stream, tiny])), gpu="h200")
    a, b, c = data["kernels"]
    assert a["bound"] == "compute" and "80% of the bf16 peak" in a["bound_reason"]
    assert a["fraction_of_peak_flops"] == pytest.approx(0.8, rel=1e-6)
    assert b["bound"] == "memory" and "90% of DRAM bandwidth" in b["bound_reason"]
    assert c["bound"] == "latency" and "neither the pipes nor memory" in c["bound_reason"]
    assert a["ridge_point"] == pytest.approx(989.4e12 / 4.8e12)


def test_a_gemm_under_its_roof_but_busy_sm_is_compute_from_speed_of_light(tmp_path):
    k = gemm(4096, 4096, 4096, 2 * 4096**3 / (0.5 * 989.4e12))  # 50% of the vendor peak...
    kern = report(write(tmp_path, raw_csv([k])), gpu="h200")["kernels"][0]  # ...with the SM 90% busy
    assert kern["bound"] == "compute" and "SM 90% busy" in kern["bound_reason"]


def test_physics_floor_flags_the_impossible_with_vendor_peaks_only(tmp_path):
    # An export without ncu's per-cycle peaks: the vendor peak, raised 10% (a vendor quotes FLOP/s
    # at one clock, Hopper's tensor peaks at 1.83 GHz, below its 1.98 GHz boost).
    floor = 2 * 8192**3 / 989.4e12
    fast = gemm(8192, 8192, 8192, 0.9 * floor)
    ok = gemm(8192, 8192, 8192, 0.95 * floor, idx="1")  # above the vendor peak, within the clock margin
    path = write(tmp_path, raw_csv([fast, ok]))
    for profile in ("vendor", "measured"):
        data = report(path, gpu="h200", profile=profile)
        a, b = data["kernels"]
        assert a["physically_possible"] is False and "physically impossible" in a["physically_impossible_reason"]
        assert a["physics_floor_s"] == pytest.approx(floor / 1.1, rel=1e-9)
        assert "vendor peaks (FLOP/s +10%" in a["physics_floor_basis"]
        assert b["physically_possible"] is True
        assert any("physically impossible" in w for w in data["warnings"])
    measured = report(path, gpu="h200", profile="measured")
    assert "measured" in measured["kernels"][1]["peak_flops_source"]
    assert measured["kernels"][1]["peak_flops"] < 989.4e12


def test_a_bandwidth_above_the_vendor_figure_is_impossible(tmp_path):
    k = elementwise(1 << 26, 12.0 * (1 << 26) / (1.1 * 4.8e12))
    kern = report(write(tmp_path, raw_csv([k])), gpu="h200")["kernels"][0]
    assert kern["physically_possible"] is False and "DRAM" in kern["physically_impossible_reason"]


def test_no_gpu_named_means_no_ceilings_not_a_guess(tmp_path):
    k = gemm(1024, 1024, 1024, 10e-6)
    del k["metrics"]["device__attribute_display_name"]
    data = report(write(tmp_path, raw_csv([k])))
    assert data["gpu"] is None and data["gpu_note"] == "no GPU chosen: the file does not name its GPU"
    kern = data["kernels"][0]
    assert kern["fraction_of_peak_flops"] is None and kern["physically_possible"] is None
    assert kern["bound"] == "compute" and "speed of light" in kern["bound_reason"]  # SOL needs no ceilings


def test_live_run_preamble_is_skipped(tmp_path):
    preamble = "hello, from the app\n==PROF== Connected to process 12 (/usr/bin/python3)\n==PROF== Disconnected from process 12\n"
    data = report(write(tmp_path, raw_csv([gemm(64, 64, 64, 1e-6)], preamble=preamble)))
    assert len(data["kernels"]) == 1


def test_gzip_and_utf16_exports_read_the_same(tmp_path):
    text = raw_csv([gemm(512, 512, 512, 3e-6)])
    plain = report(write(tmp_path, text))
    gz = tmp_path / "export.csv.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    utf16 = tmp_path / "powershell.csv"
    utf16.write_bytes(text.encode("utf-16"))  # what PowerShell's `>` writes
    for other in (gz, utf16):
        assert report(other)["kernels"][0]["flops"] == plain["kernels"][0]["flops"]


@pytest.mark.parametrize("value, fragment", [
    ("27.595.520", "English locale"),  # '.' thousands, ',' decimals
    ("65,77", "English locale"),
    ("12 MB", "not a number"),
])
def test_numbers_not_in_ncu_default_format_are_refused(tmp_path, value, fragment):
    k = gemm(64, 64, 64, 1e-6)
    k["metrics"]["dram__bytes_read.sum"] = value
    with pytest.raises(ProfileError, match=fragment):
        load(write(tmp_path, raw_csv([k])))


def test_an_unknown_unit_is_refused_naming_the_metric(tmp_path):
    text = raw_csv([gemm(64, 64, 64, 1e-6)]).replace('"Mbyte"', '"Mfurlong"', 1)
    with pytest.raises(ProfileError, match="dram__bytes_read.sum: unknown unit 'Mfurlong'"):
        load(write(tmp_path, text))


def test_a_unit_of_the_wrong_kind_is_refused(tmp_path):
    text = raw_csv([gemm(64, 64, 64, 1e-6)]).replace('"us"', '"Mbyte"', 1)
    with pytest.raises(ProfileError, match="gpu__time_duration.sum: unit 'Mbyte' is a bytes, expected a time"):
        load(write(tmp_path, text))


# -- format samples captured on an H200 (tests/data/profile/README.md) ---------------------------
def _rows(path: Path) -> tuple[list[str], list[str], list[list[str]]]:
    with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
        lines = [line for line in fh if not line.startswith("==") and line.strip()]
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    return rows[0], rows[1], rows[2:]


def _si(cell: str, unit: str) -> float:
    return float(cell.replace(",", "")) * FACTOR[unit]


def test_sample_two_processes_nested_ranges_recomputed_from_counters():
    path = DATA / "nested-nvtx-2proc-raw.csv.gz"
    header, units_row, rows = _rows(path)
    data = report(path)
    assert len(data["kernels"]) == len(rows) == 34 and len(data["processes"]) == 2
    col = {h: i for i, h in enumerate(header)}
    for kern, row in zip(data["kernels"], rows):
        t = _si(row[col["gpu__time_duration.sum"]], units_row[col["gpu__time_duration.sum"]])
        b = sum(_si(row[col[m]], units_row[col[m]]) for m in ("dram__bytes_read.sum", "dram__bytes_write.sum"))
        tensor = sum(_si(row[col[m]], "") for m in ("sm__ops_path_tensor_src_fp8.sum", "sm__ops_path_tensor_src_bf16_dst_fp32.sum"))
        assert close(kern["duration_s"], t, 0.005) and close(kern["dram_bytes"], b, 0.01)
        assert abs(sum(v for c, v in kern["flops_by_precision"].items() if c.startswith("tensor_")) - tensor) <= 0.02 * max(tensor, 1)
    gemms = [k for k in data["kernels"] if k["range"].startswith("outer")]
    assert [k["range"] for k in gemms] == ["outer:with:colons > inner q"] * 2  # ncu left the quotes undoubled
    assert all(k["flops_by_precision"]["tensor_bf16"] == 2 * 1024 * 512 * 2048 for k in gemms)  # a 64-wide tile pads nothing here
    fp8 = [k for k in data["kernels"] if k["range"] == "fp8"]
    assert all(k["flops_by_precision"]["tensor_fp8"] == pytest.approx(2 * 256 * 1024 * 512 * 1.125) for k in fp8)  # 48-row tiles: 288/256
    assert {k["range"] for k in data["kernels"]} >= {"startstop"}


def test_sample_base_units_and_details_agree_with_auto_units():
    auto = report(DATA / "nested-nvtx-2proc-raw.csv.gz", gpu="h200")
    base = report(DATA / "nested-nvtx-2proc-raw-base-units.csv.gz", gpu="h200")
    details = report(DATA / "nested-nvtx-2proc-details.csv.gz", gpu="h200")
    for a, b, d in zip(auto["kernels"], base["kernels"], details["kernels"]):
        assert close(b["duration_s"], a["duration_s"], 1e-6) and close(b["dram_bytes"] or 0, a["dram_bytes"] or 0, 1e-5)
        assert close(d["duration_s"], a["duration_s"], 0.005)
        assert abs((d["dram_bytes"] or 0) - (a["dram_bytes"] or 0)) <= 0.01 * max(a["dram_bytes"] or 0, 1.0)
        assert b["bound"] == a["bound"] and d["range"] == a["range"]


def test_sample_roofline_set_bytes_are_rate_times_duration():
    path = DATA / "roofline-set-raw.csv.gz"
    header, units_row, rows = _rows(path)
    col = {h: i for i, h in enumerate(header)}
    data = report(path)
    for kern, row in zip(data["kernels"], rows):
        t = _si(row[col["gpu__time_duration.sum"]], units_row[col["gpu__time_duration.sum"]])
        rate = _si(row[col["dram__bytes.sum.per_second"]], units_row[col["dram__bytes.sum.per_second"]])
        assert close(kern["dram_bytes"], rate * t, 1e-9)
    gemm_kernel = next(k for k in data["kernels"] if k["range"] == "gemm")
    assert gemm_kernel["flops_by_precision"]["tensor_bf16"] == 2 * 2048 * 1024 * 4096


def test_sample_live_run_with_program_output_before_the_header():
    data = report(DATA / "live-run-raw.csv.gz")
    assert len(data["kernels"]) == 17 and data["metric_set"].startswith("no byte")
    assert all(k["bound"] == "unknown" for k in data["kernels"])


# -- the shipped H200 records (content/profiles/h200, records.yaml) -------------------------------
def _h200(name: str) -> Path:
    path = H200 / name
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    return path


def _plain_rows(path: Path) -> tuple[dict[str, int], list[str], list[list[str]]]:
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    return {h: i for i, h in enumerate(rows[0])}, rows[1], rows[2:]


def test_h200_full_raw_every_figure_recomputed_from_its_counters():
    path = _h200("ops-full-raw.csv")
    col, units_row, rows = _plain_rows(path)
    data = report(path)
    assert data["gpu"]["id"] == "h200-sxm" and len(data["kernels"]) == 11

    def si(row: list[str], metric: str) -> float:
        return _si(row[col[metric]], units_row[col[metric]])

    tensor_metrics = [h for h in col if h.startswith("sm__ops_path_tensor_src_") and h.endswith(".sum") and "_op_" not in h]
    for kern, row in zip(data["kernels"], rows):
        assert close(kern["duration_s"], si(row, "gpu__time_duration.sum"), 0.005)
        assert close(kern["dram_bytes"], si(row, "dram__bytes_read.sum") + si(row, "dram__bytes_write.sum"), 0.01)
        tensor = sum(si(row, m) for m in tensor_metrics)
        got = sum(v for c, v in kern["flops_by_precision"].items() if c.startswith("tensor_"))
        assert abs(got - tensor) <= 0.02 * max(tensor, 1.0)
        assert kern["physically_possible"] is True
    by_range = {k["range"]: k for k in data["kernels"]}
    # The tensor pipe's count against the model's 2*M*N*K: padding to the MMA tile.
    g8k = by_range["gemm_bf16_8192x8192x8192"]
    assert g8k["flops_by_precision"]["tensor_bf16"] / (2 * 8192**3) == pytest.approx(8320 / 8192, rel=1e-6)  # 320-wide tiles: 26 x 320
    g4k = by_range["gemm_bf16_4096x4096x4096"]
    assert g4k["flops_by_precision"]["tensor_bf16"] == pytest.approx(2 * 4096**3, rel=0.02)
    fp8 = by_range["gemm_fp8_e4m3_4096x4096x4096"]
    assert fp8["flops_by_precision"]["tensor_fp8"] == pytest.approx(2 * 4096**3, rel=0.02) and fp8["peak_precision"] == "fp8"
    assert g8k["bound"] == "compute" and by_range["add_fp32_67108864"]["bound"] == "memory"
    # Causal prefill, 64x128 tiles (the kernel's name: 64x128x128): query block i computes
    # ceil((i + 1) / 2) of the 16 key blocks, 272 of 512, not the model's half square.
    prefill = by_range["sdpa_causal_prefill_b1_h32_s2048_d128"]
    full_square = 4 * 32 * 2048 * 2048 * 128
    assert prefill["flops_by_precision"]["tensor_bf16"] == full_square * sum((i + 2) // 2 for i in range(32)) / 512
    # Decode with GQA: 4 query rows per KV head (32 / 8) padded to a 16-row MMA tile: 4x the model.
    decode = [k for k in data["kernels"] if k["range"].startswith("sdpa_decode")]
    assert decode[0]["flops_by_precision"]["tensor_bf16"] == 4 * (4 * 32 * 1 * 4096 * 128)
    # torch.add computes a + alpha*b: one FFMA per element, 2 FLOPs by ncu's formula (the counters
    # hold only FFMA: 189.143207 per cycle x 354,804.5 cycles = 2^26 instructions).
    add = by_range["add_fp32_67108864"]
    row = rows[add["index"]]
    per_cycle = float(row[col["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed"]])
    ffma = per_cycle * float(row[col["smsp__cycles_elapsed.avg"]])
    assert ffma == pytest.approx(2**26, rel=1e-6)
    assert add["flops_by_precision"]["fp32"] == pytest.approx(2 * ffma, rel=1e-9)


def test_h200_details_agree_with_raw():
    raw = report(_h200("ops-full-raw.csv"))
    details = report(_h200("ops-full-details.csv"), gpu="h200")
    for a, d in zip(raw["kernels"], details["kernels"]):
        assert d["name"] == a["name"] and d["range"] == a["range"]
        assert close(d["duration_s"], a["duration_s"], 0.005)
        assert close(d["dram_bytes"], a["dram_bytes"], 0.01)


def test_h200_default_set_is_speed_of_light_only():
    data = report(_h200("ops-default-raw.csv"))
    details = report(_h200("ops-default-details.csv"))
    for d in (data, details):
        assert all(k["flops"] is None for k in d["kernels"])
        assert all(math.isfinite(k["duration_s"]) for k in d["kernels"])
        assert all("speed of light" in k["bound_reason"] for k in d["kernels"])
    assert all(k["dram_bytes"] is None for k in data["kernels"])
