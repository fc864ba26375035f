"""The issue-30 review's findings, each pinned (a performance engineer's and a security review):

- the physics floor from ncu's own per-cycle peaks at the highest clock (P1);
- the default set's DRAM-bytes estimate independent of --gpu (P2);
- the clock note weighted by time, and the fraction of the peak at a kernel's own clock (P3);
- measured ceilings never flip a limiter, and say what passing them means (P4);
- the details page's derived bytes labelled as derived; 1,000 never 1e+03 (P6);
- every limiter class in the totals, one builder for the command line and the app (P7);
- range names never cut to the same text (P8); no doubled words (P9); the trace's ≤ intensity
  in the command line as in the app (P10);
- absurd numbers in a trace or an export refused in one line, exit 2 (S1, S3).

Expected figures are computed here from the counters in the files, never read back from the code.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.profile import analyze, load, to_json
from studytui.profile import units as profile_units
from studytui.profile.report import compact, distinct_cuts, kernel_rows, middle_cut, share_text, si_text, time_text
from studytui.profile.source import ProfileError
from test_profile_ncu import H200, gemm, raw_csv, write

RAW = H200 / "ops-full-raw.csv"
DETAILS = H200 / "ops-full-details.csv"
DEFAULT_RAW = H200 / "ops-default-raw.csv"
TRACE = H200 / "llama8b-layer-prefill-decode.trace.json.gz"

# An H200's per-cycle peaks as ncu 2025.3.1 exports them (content/profiles/h200/ops-full-raw.csv).
PEAKS = {
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum.peak_sustained": 1_081_344.0,  # the sparse rate
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained": 540_672.0,  # dense, wgmma
    "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained": 360_448.0,  # dense, mma.sync
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_on.sum.peak_sustained": 1_081_344.0,
    "device__attribute_clock_rate": 1_980_000.0,  # kHz
    "sm__cycles_elapsed.avg.per_second": 1.6e9,
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _rows(path: Path) -> tuple[dict[str, int], list[str], list[list[str]]]:
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    return {h: i for i, h in enumerate(rows[0])}, rows[1], rows[2:]


def _num(cell: str) -> float:
    return float(cell.replace(",", ""))


def _with_units(text: str, units: dict[str, str]) -> str:
    """The export with these metrics' units row cells replaced."""
    lines = text.splitlines(keepends=True)
    header = next(csv.reader([lines[0]]))
    units_row = next(csv.reader([lines[1]]))
    for metric, unit in units.items():
        units_row[header.index(metric)] = unit
    lines[1] = ",".join(f'"{u}"' for u in units_row) + "\n"
    return "".join(lines)


# -- P1: the physics floor ----------------------------------------------------------------------------
def test_the_floor_is_ncus_per_cycle_peak_at_the_highest_clock(tmp_path):
    work = 2.0 * 8192**3
    per_cycle_floor = work / (540_672 * 1.98e9)  # 1,070.5 TFLOP/s, where the vendor's 989.4 is at 1.83 GHz
    at_1050 = gemm(8192, 8192, 8192, work / 1.05e15, **PEAKS)  # faster than the vendor peak, slower than the hardware's
    at_1080 = gemm(8192, 8192, 8192, work / 1.08e15, idx="1", **PEAKS)  # past 540,672 x 1.98 GHz
    data = to_json(analyze(load(write(tmp_path, raw_csv([at_1050, at_1080])))))
    possible, impossible = data["kernels"]
    assert possible["physically_possible"] is True
    assert possible["physics_floor_s"] == pytest.approx(per_cycle_floor, rel=1e-9)
    assert "per-cycle" in possible["physics_floor_basis"] and "540,672 per cycle x 1.98 GHz" in possible["physics_floor_parts"][0]
    assert impossible["physically_possible"] is False and "per-cycle" in impossible["physically_impossible_reason"]
    # The fraction of the peak at the clock the kernel ran at (1.6 GHz): 540,672 x 1.6e9.
    assert possible["fraction_of_peak_at_clock"] == pytest.approx(1.05e15 / (540_672 * 1.6e9), rel=1e-9)


def test_a_kernel_clocked_above_the_device_attribute_is_capped_at_it(tmp_path):
    # Review 2, Q6: a measured clock above device__attribute_clock_rate never loosens the floor.
    work = 2.0 * 4096**3
    k = gemm(4096, 4096, 4096, work / 1.09e15, **{**PEAKS, "sm__cycles_elapsed.avg.per_second": 2.04e9})
    data = to_json(analyze(load(write(tmp_path, raw_csv([k])))))
    (kern,) = data["kernels"]
    assert kern["physics_floor_s"] == pytest.approx(work / (540_672 * 1.98e9), rel=1e-9) and kern["physically_possible"] is False
    assert any("2.04 GHz is above the device's maximum 1.98 GHz" in w for w in data["warnings"])


def test_sparse_work_is_held_to_the_sparse_peak(tmp_path):
    work = 2.0 * 8192**3
    k = gemm(8192, 8192, 8192, work / 1.5e15, **PEAKS, **{"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_on.sum": 1e6})
    (kern,) = to_json(analyze(load(write(tmp_path, raw_csv([k])))))["kernels"]
    assert kern["physically_possible"] is True and kern["physics_floor_s"] == pytest.approx(work / (1_081_344 * 1.98e9), rel=1e-9)


def test_the_shipped_export_floor_is_its_own_peaks():
    col, units_row, rows = _rows(RAW)
    data = to_json(analyze(load(RAW)))
    dense = _num(rows[0][col["sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"]])
    boost = _num(rows[0][col["device__attribute_clock_rate"]]) * 1e3
    assert (dense, boost) == (540_672, 1.98e9)
    gemm8k = next(k for k in data["kernels"] if k["range"] == "gemm_bf16_8192x8192x8192")
    row = rows[gemm8k["index"]]
    tensor = _num(row[col["sm__ops_path_tensor_src_bf16_dst_fp32.sum"]])
    dram_bw = _num(row[col["dram__bytes.sum.peak_sustained"]]) * 1e3 * max(
        _num(row[col["dram__cycles_elapsed.avg.per_second"]]) * 1e9, _num(row[col["device__attribute_memory_clock_rate"]]) * 1e3)
    dram = sum(_num(row[col[m]]) * 1e6 for m in ("dram__bytes_read.sum", "dram__bytes_write.sum") if units_row[col[m]] == "Mbyte") \
        + sum(_num(row[col[m]]) * 1e9 for m in ("dram__bytes_read.sum", "dram__bytes_write.sum") if units_row[col[m]] == "Gbyte")
    assert gemm8k["physics_floor_s"] == pytest.approx(max(tensor / (dense * boost), dram / dram_bw), rel=1e-6)
    assert all(k["physically_possible"] is True for k in data["kernels"])
    clock = _num(row[col["sm__cycles_elapsed.avg.per_second"]]) * 1e9
    assert gemm8k["fraction_of_peak_at_clock"] == pytest.approx(gemm8k["achieved_flops"] / (dense * clock), rel=1e-9)


def test_units_know_bytes_per_cycle():
    assert profile_units.unit_scale("Kbyte/cycle") == (profile_units.BYTES_PER_CYCLE, 1e3)
    assert profile_units.unit_scale("byte/cycle") == (profile_units.BYTES_PER_CYCLE, 1.0)


# -- P2: bytes a kernel moved do not depend on --gpu -------------------------------------------------
def test_the_default_set_estimate_is_the_recorded_gpus_whatever_gpu_is_chosen():
    col, _units, rows = _rows(DEFAULT_RAW)
    estimates = []
    for gpu in (None, "h100-sxm", "b200"):
        data = to_json(analyze(load(DEFAULT_RAW), gpu=gpu))
        estimates.append([k["dram_bytes_estimate"] for k in data["kernels"]])
    assert estimates[0] == estimates[1] == estimates[2]
    for kern, row in zip(data["kernels"], rows):
        t = _num(row[col["gpu__time_duration.sum"]]) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[_units[col["gpu__time_duration.sum"]]]
        pct = _num(row[col["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"]])
        assert kern["dram_bytes_estimate"] == pytest.approx(pct / 100 * 4.8e12 * t, rel=1e-6)  # the H200 the file names
        assert "h200-sxm, the GPU the file names" in kern["dram_bytes_estimate_source"]


def test_the_estimate_uses_the_exports_own_dram_peak(tmp_path):
    metrics = {"gpu__time_duration.sum": 100e-6, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 50.0,
               "sm__throughput.avg.pct_of_peak_sustained_elapsed": 5.0,
               "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": 50.0,
               "dram__bytes.sum.peak_sustained": "1.504000", "dram__cycles_elapsed.avg.per_second": 3.2e9,
               "device__attribute_display_name": "NVIDIA H200"}
    path = write(tmp_path, _with_units(raw_csv([{"id": "0", "name": "copy", "metrics": metrics}]),
                                       {"dram__bytes.sum.peak_sustained": "Kbyte/cycle", "dram__cycles_elapsed.avg.per_second": "hz"}))
    for gpu in (None, "b200"):
        (kern,) = to_json(analyze(load(path), gpu=gpu))["kernels"]
        assert kern["dram_bytes_estimate"] == pytest.approx(0.5 * 1504 * 3.2e9 * 100e-6, rel=1e-9)
        assert "dram__bytes.sum.peak_sustained" in kern["dram_bytes_estimate_source"]


def test_no_estimate_without_the_recorded_gpu(tmp_path):
    metrics = {"gpu__time_duration.sum": 100e-6, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 50.0,
               "sm__throughput.avg.pct_of_peak_sustained_elapsed": 5.0}
    path = write(tmp_path, raw_csv([{"id": "0", "name": "copy", "metrics": metrics}]))
    (kern,) = to_json(analyze(load(path), gpu="h200"))["kernels"]
    assert kern["dram_bytes_estimate"] is None and "names no GPU" in kern["dram_bytes_estimate_source"]


# -- P3: clocks ---------------------------------------------------------------------------------------
def test_the_clock_note_is_weighted_by_time():
    col, units_row, rows = _rows(RAW)
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}
    times = [_num(r[col["gpu__time_duration.sum"]]) * scale[units_row[col["gpu__time_duration.sum"]]] for r in rows]
    clocks = [_num(r[col["sm__cycles_elapsed.avg.per_second"]]) * 1e9 for r in rows]
    boost = _num(rows[0][col["device__attribute_clock_rate"]]) * 1e3
    slow = sum(t for t, c in zip(times, clocks) if c < 0.9 * boost) / sum(times)
    assert sorted(clocks)[len(clocks) // 2] > 0.9 * boost  # the median kernel ran fast: the old note said nothing
    assert slow > 0.6
    notes = analyze(load(RAW)).notes
    (note,) = [n for n in notes if "SM clock" in n]
    assert f"kernels holding {slow:.0%} of the time" in note and "1.53-1.74 GHz" in note
    assert "vendor peaks assume the top clock" not in note


def test_a_compute_bound_kernel_shows_its_fraction_at_its_own_clock(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _err = run(capsys, "profile", str(RAW), "--kernel", "1")
    assert code == 0
    assert re.search(r"82% of the bf16 peak \(93% of the peak at the 1\.61 GHz it ran at\)", out)
    assert "at its clock:" in out and "540,672 x the 1.61 GHz SM clock" in out


# -- P4: measured ceilings ------------------------------------------------------------------------------
def test_measured_ceilings_never_flip_the_limiter():
    vendor = to_json(analyze(load(RAW)))
    measured = to_json(analyze(load(RAW), profile="measured"))
    assert [k["bound"] for k in measured["kernels"]] == [k["bound"] for k in vendor["kernels"]]
    prefill = next(k for k in measured["kernels"] if k["range"].startswith("sdpa_causal_prefill"))
    assert prefill["speed_of_light_pct"]["sm"] < 60 and prefill["speed_of_light_pct"]["memory"] < 60
    assert prefill["fraction_of_peak_flops"] > 0.6 > prefill["fraction_of_vendor_peak_flops"]  # 62% of 714, 45% of 989
    assert prefill["bound"] == "latency"
    big = next(k for k in measured["kernels"] if k["range"] == "gemm_bf16_8192x8192x8192")
    assert big["fraction_of_peak_flops"] > 1
    assert "114% of the measured bf16 ceiling" in big["bound_reason"] and "not a bound" in big["bound_reason"]
    assert big["physically_possible"] is True


def test_the_reason_names_the_roof_it_used():
    measured = analyze(load(RAW), profile="measured")
    softmax = next(r for r in measured.kernels if r.range_name == "softmax_bf16_8192x8192")
    # Its work is fp32 (CUDA cores): the roof fraction is at the vendor's 67 TFLOP/s and 4.8 TB/s, and so
    # is the ridge the reason prints (14, not the measured 52.8 / 4.48 = 11.8).
    assert softmax.peak_class == "fp32" and f"ridge {67e12 / 4.8e12:.3g} (vendor peaks)" in softmax.bound_reason
    assert f"{52.8e12 / 4.48e12:.3g}" not in softmax.bound_reason and "of the roof at vendor peaks" in softmax.bound_reason
    assert softmax.roof_fraction == pytest.approx(softmax.achieved_flops / min(67e12, softmax.intensity * 4.8e12), rel=1e-9)


def test_the_measured_rows_explain_passing_the_ceiling(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    code, out, _err = run(capsys, "profile", str(RAW), "--kernel", "1", "--profile", "measured")
    assert code == 0
    assert "114.0% of the measured bf16 ceiling" in out and "a measured ceiling is what a benchmark sustained, not a bound" in out
    assert "of the vendor peak: 82.3% of bf16 989 TFLOP/s (the roof the limiter is decided against)" in out


# -- P6: the details page --------------------------------------------------------------------------------
def test_derived_bytes_are_labelled_as_derived(capsys, monkeypatch):
    data = to_json(analyze(load(DETAILS), gpu="h200"))
    assert "derived" in data["metric_set"] and "speed-of-light only" not in data["metric_set"]
    assert data["dram_bytes_how"] == "derived: Memory Throughput x Duration"
    assert any("DRAM bytes and GB/s are derived" in n for n in data["notes"])
    for k in data["kernels"]:
        assert "no byte or FLOP counters" not in k["bound_reason"] and "no FLOP counters" in k["bound_reason"]
    monkeypatch.setenv("COLUMNS", "120")
    code, out, _err = run(capsys, "profile", str(DETAILS), "--gpu", "h200")
    assert code == 0 and "DRAM 3.67 GB (derived: Memory Throughput x Duration)" in " ".join(out.split())


def test_a_figure_that_rounds_to_1000_is_1000():
    assert compact(999.6e9, 1e9) == "1,000" and compact(999.4, 1.0) == "999" and compact(0.171) == "0.171"
    assert si_text(999.6e9, "B/s") == "1 TB/s" and time_text(999.6e-6) == "1 ms"
    data = analyze(load(DETAILS), gpu="h200")
    first = data.kernels[0]
    assert 999.5e9 <= first.achieved_bw < 1000e9  # kernel #0: 1,000 GB/s, as ncu printed "999.6"
    assert "e+" not in " ".join(value for _label, value in kernel_rows(data, 0) if _label == "achieved")


def test_the_cli_table_prints_1000_not_1e03(capsys, monkeypatch):
    for columns in ("80", "120"):
        monkeypatch.setenv("COLUMNS", columns)
        code, out, _err = run(capsys, "profile", str(DETAILS), "--gpu", "h200")
        assert code == 0 and "1e+03" not in out and "1,000" in out


# -- P7: every limiter class, one builder --------------------------------------------------------------
@pytest.mark.parametrize("path, expected", [
    (RAW, "compute 82%, memory 14%, latency 4%"),
    (TRACE, "compute 53%, unknown 36%, memory 6%, latency 5%"),
])
def test_the_totals_show_every_limiter(capsys, monkeypatch, path, expected):
    monkeypatch.setenv("COLUMNS", "200")
    report = analyze(load(path))
    shares = to_json(report)["total"]["share_by_bound"]
    assert len(expected.split(", ")) == sum(1 for v in shares.values() if v)
    assert share_text(report.total.time_by_bound, report.total.duration_s) == expected
    code, out, _err = run(capsys, "profile", str(path))
    assert code == 0 and f"by limiter: {expected}" in out


def test_the_range_table_shows_every_limiter(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    report = analyze(load(TRACE))
    decode = next(r for r in report.ranges if r.name == "decode")
    expected = share_text(decode.time_by_bound, decode.duration_s)
    assert len(expected.split(", ")) == 3
    code, out, _err = run(capsys, "profile", str(TRACE))
    table = out.split("Ranges", 1)[1].split("Kernels, longest first", 1)[0]
    assert code == 0 and all(part in table for part in expected.split(", "))  # each whole on a line: it wraps between parts


# -- P8: distinct names -----------------------------------------------------------------------------------
def test_distinct_names_never_cut_to_the_same_text():
    names = ["gemm_bf16_8192x8192x8192", "gemm_bf16_16x8192x8192", "gemm_bf16_4096x4096x4096"]
    assert middle_cut(names[0], 19) == middle_cut(names[1], 19)  # the even cut would merge them
    cut = distinct_cuts(names, 19)
    assert len(set(cut.values())) == 3 and all(len(c) <= 19 for c in cut.values())
    assert cut == {"gemm_bf16_8192x8192x8192": "gemm…8192x8192x8192", "gemm_bf16_16x8192x8192": "gemm_b…16x8192x8192",
                   "gemm_bf16_4096x4096x4096": "gemm_bf16…4096x4096"}  # each shows where it differs
    assert distinct_cuts(["abc", "abd"], 1) == {"abc": "abc", "abd": "abd"}  # no width tells them apart: whole
    for width in range(4, 30):
        assert not re.search(r"(?<!\\)u202e", middle_cut("abcdefgh\\u202eijklmnop", width))  # never half an escape


def test_the_cli_never_prints_two_ranges_as_one(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    long = ["attention_block_layer_00_query_projection_final", "attention_block_layer_00_value_projection_final",
            "attention_block_layer_00_key___projection_final"]
    kernels = [gemm(256, 256, 256, (i + 1) * 1e-6, idx=str(i), rng=(name,)) for i, name in enumerate(long)]
    code, out, _err = run(capsys, "profile", str(write(tmp_path, raw_csv(kernels))))
    assert code == 0
    table = out.split("Ranges", 1)[1].split("Kernels, longest first", 1)[0]
    cells = [line.split()[0] for line in table.splitlines()[4:] if line.strip() and not line.strip().startswith("─")]
    assert len(cells) == 3 and len(set(cells)) == 3, cells
    assert {c.split("…")[-1].split("_")[0] for c in cells} == {"query", "value", "key"}  # where they differ, shown


# -- P9: no doubled words ----------------------------------------------------------------------------------
def test_no_unknown_unknown(tmp_path):
    from test_profile_trace import BF16, Trace

    tr = Trace(shapes=False)
    e = tr.op("aten::mm", [[64, 64], [64, 64]], [BF16, BF16])
    tr.kernel("k", e, 100.0, 1.0)
    report = analyze(load(tr.write(tmp_path)))
    bound = dict(kernel_rows(report, 0))["bound"]
    assert bound.startswith("unknown: the trace was recorded without shapes") and "unknown: unknown" not in bound


def test_the_app_says_no_gpu_once():
    from studytui.tui.profile.view import gpu_text

    text = gpu_text(analyze(load(DETAILS)))
    assert text == "no GPU chosen: the file does not name its GPU; g chooses one"


# -- P10: the trace's ≤ intensity, the same in both front ends -------------------------------------------------
def test_the_cli_shows_the_shapes_intensity_as_the_app_does(capsys, monkeypatch):
    from studytui.tui.profile.view import table_cells

    report = analyze(load(TRACE))
    r = report.kernels[69]
    assert r.intensity is None and r.kernel.model_bytes
    expected = "≤" + compact(r.kernel.flops / r.kernel.model_bytes)
    assert expected == "≤1,250" and table_cells(r, 1.0)["intensity"] == expected
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _err = run(capsys, "profile", str(TRACE))
    assert code == 0 and re.search(r"^\s+300 us\s+≤1,250\s", out, re.M)
    code, out, _err = run(capsys, "profile", str(TRACE), "--kernel", "69")
    assert "intensity:" in out and "≤1,250 FLOP/B, at most" in out and "intensity: ?" not in " ".join(out.split())


# -- S1: absurd numbers in a trace ------------------------------------------------------------------------------
def _trace_with(tmp_path: Path, dur: str, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text('{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":0,"dur":' + dur + "}]}")
    return path


@pytest.mark.parametrize("dur, fragment", [
    ("9" * 4000, "too large for any duration"),
    ("9" * 5000, "over 4,300 digits"),
    ("1.7e308", "longer than a day"),
    ("1e999", "too large for any duration"),
    ("1e12", "longer than a day"),
])
def test_a_trace_with_an_absurd_duration_is_one_line(tmp_path, capsys, dur, fragment):
    code, out, err = run(capsys, "profile", str(_trace_with(tmp_path, dur)))
    assert code == 2 and err.count("\n") == 1 and err.startswith("studytui: error: ") and fragment in err, err


def test_the_app_option_refuses_it_before_starting(tmp_path, capsys, monkeypatch):
    from studytui.tui.app import StudyApp

    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setattr(StudyApp, "run", lambda self, *a, **k: (_ for _ in ()).throw(AssertionError("the app started")))
    path = _trace_with(tmp_path, "9" * 4000)
    assert main(["--data-dir", str(tmp_path / "d"), "--profile-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "too large for any duration" in err


def test_negative_durations_are_left_out_and_said_so(tmp_path):
    path = tmp_path / "neg.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 5},
        {"ph": "X", "cat": "kernel", "name": "k2", "ts": 10, "dur": -5}]}))
    report = analyze(load(path))
    assert len(report.kernels) == 1 and any("1 event with a negative duration" in w for w in report.warnings)


def test_deeply_nested_json_is_a_profile_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"traceEvents":[' + "[" * 200_000)
    with pytest.raises(ProfileError, match="nested too deeply"):
        load(path)


# -- S3: values past any counter ----------------------------------------------------------------------------------
@pytest.mark.parametrize("metric, value, unit, fragment", [
    ("dram__bytes_read.sum", "1e300", "Gbyte", "past 1e+30 once in SI units"),
    ("dram__bytes_write.sum", "1e300", "Mbyte", "past 1e+30 once in SI units"),
    ("gpu__time_duration.sum", "-1", "ms", "negative"),
    ("dram__bytes_read.sum", "-5", "Mbyte", "negative"),
    ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "-1,000", "", "negative"),
    ("gpu__time_duration.sum", "100,000", "second", "longer than a day"),
])
def test_an_absurd_counter_is_refused_naming_file_line_and_metric(tmp_path, capsys, metric, value, unit, fragment):
    k = gemm(64, 64, 64, 1e-6)
    k["metrics"][metric] = value
    path = write(tmp_path, _with_units(raw_csv([k]), {metric: unit}))
    for extra in ((), ("--json",)):
        code, out, err = run(capsys, "profile", str(path), *extra)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert f"export.csv:3: {metric} is '{value}'" in err and fragment in err, err
