"""Issue 30, the second performance-engineer review: the physics floor is the recording GPU's
whatever --gpu says (Q1) and its clock is capped at the device's maximum (Q6); the help says what
the floor is (Q3); ncu's rule texts are whole (Q4); a full-set details export says where its FLOP
counters are (Q5); a NaN trace duration (Q7) and a zero kernel duration (Q8) get the right reason.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.profile import analyze, load, to_json
from test_profile_ncu import H200, gemm, raw_csv, write

RAW = H200 / "ops-full-raw.csv"
DETAILS = H200 / "ops-full-details.csv"
DEFAULT_DETAILS = H200 / "ops-default-details.csv"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _edited(tmp_path: Path, source: Path, edits: dict[tuple[int, str], str], name: str = "edited.csv") -> Path:
    """The raw export with these (kernel row, metric) cells replaced (the value in the export's unit)."""
    rows = list(csv.reader(source.open(encoding="utf-8", newline="")))
    col = {h: i for i, h in enumerate(rows[0])}
    for (kernel, metric), value in edits.items():
        rows[2 + kernel][col[metric]] = value
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    path = tmp_path / name
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def _unit(source: Path, metric: str) -> str:
    rows = csv.reader(source.open(encoding="utf-8", newline=""))
    header, units = next(rows), next(rows)
    return units[header.index(metric)]


# -- Q1: the floor is the recording GPU's ----------------------------------------------------------------
@pytest.mark.parametrize("gpu", [None, "h200", "a100", "h100-sxm", "b200"])
def test_the_floor_never_follows_gpu(gpu):
    base = to_json(analyze(load(RAW)))
    data = to_json(analyze(load(RAW), gpu=gpu))
    assert [k["physics_floor_s"] for k in data["kernels"]] == [k["physics_floor_s"] for k in base["kernels"]]
    assert all(k["physically_possible"] is True for k in data["kernels"])
    assert not any("physically impossible" in w for w in data["warnings"])


def test_the_cli_with_another_gpu_flags_no_real_h200_kernel(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    code, out, _err = run(capsys, "profile", str(RAW), "--gpu", "a100")
    assert code == 0 and "A100" in out
    assert not re.search(r"\b(compute|memory|latency|unknown)!", out) and "below the physics floor" not in out


@pytest.mark.parametrize("gpu", [None, "b200", "a100"])
def test_a_kernel_edited_to_be_impossible_is_impossible_for_every_gpu(tmp_path, gpu):
    unit = _unit(RAW, "gpu__time_duration.sum")
    fast = {"ms": "0.001", "us": "1", "ns": "1000", "msecond": "0.001", "usecond": "1", "nsecond": "1000"}[unit]
    path = _edited(tmp_path, RAW, {(1, "gpu__time_duration.sum"): fast})  # the 8192^3 bf16 GEMM in 1 us
    kern = to_json(analyze(load(path), gpu=gpu))["kernels"][1]
    assert kern["physically_possible"] is False and "per-cycle" in kern["physics_floor_basis"]


def test_without_per_cycle_peaks_the_floor_is_the_named_gpus_vendor_peak(tmp_path):
    work = 2.0 * 8192**3
    k = gemm(8192, 8192, 8192, 0.95 * work / 989.4e12)  # an H200 within its +10% clock margin
    path = write(tmp_path, raw_csv([k]))
    for gpu in (None, "h200", "a100", "b200"):
        kern = to_json(analyze(load(path), gpu=gpu))["kernels"][0]
        assert kern["physics_floor_s"] == pytest.approx(work / (989.4e12 * 1.1), rel=1e-9), gpu
        assert kern["physically_possible"] is True and "h200-sxm, the GPU it was recorded on" in kern["physics_floor_basis"]


def test_a_file_naming_no_gpu_and_without_peaks_has_no_floor_and_says_so(tmp_path, capsys):
    k = gemm(8192, 8192, 8192, 1e-6)  # impossible on any GPU, but which GPU is unknown
    del k["metrics"]["device__attribute_display_name"]
    path = write(tmp_path, raw_csv([k]))
    data = to_json(analyze(load(path), gpu="b200"))
    kern = data["kernels"][0]
    assert kern["physics_floor_s"] is None and kern["physically_possible"] is None
    assert kern["physics_floor_missing"].startswith("unavailable: ") and "does not name the GPU" in kern["physics_floor_missing"]
    assert any("without a full physics floor" in w and "may go unflagged" in w for w in data["warnings"])
    code, out, _err = run(capsys, "profile", str(path), "--gpu", "b200", "--kernel", "0")
    assert code == 0 and "physics floor:" in out and "unavailable" in out


def test_the_help_says_what_the_floor_is(capsys, monkeypatch):
    # Q3: not "always vendor peaks": ncu's per-cycle peaks x the clock, else vendor FLOP/s +10%.
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit):
        main(["profile", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "always uses vendor peaks" not in text
    assert "per-cycle peaks x the device's highest SM clock" in text and "FLOP/s +10%" in text and "never follows --gpu" in text


# -- Q6: the clock ---------------------------------------------------------------------------------------
def test_a_broken_clock_counter_never_loosens_the_floor(tmp_path, capsys, monkeypatch):
    unit = _unit(RAW, "sm__cycles_elapsed.avg.per_second")
    fifty = {"Ghz": "50", "GHz": "50", "cycle/nsecond": "50", "Mhz": "50000", "MHz": "50000", "hz": "50000000000"}[unit]
    path = _edited(tmp_path, RAW, {(1, "sm__cycles_elapsed.avg.per_second"): fifty})
    base = to_json(analyze(load(RAW)))["kernels"][1]
    data = to_json(analyze(load(path)))
    kern = data["kernels"][1]
    assert kern["physics_floor_s"] == pytest.approx(base["physics_floor_s"], rel=1e-12)
    assert "1.98 GHz" in kern["physics_floor_parts"][0]
    assert kern["fraction_of_peak_at_clock"] == pytest.approx(kern["achieved_flops"] / (540_672 * 1.98e9), rel=1e-6)
    assert any("kernel #1" in w and "broken counter" in w for w in data["warnings"])
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _err = run(capsys, "profile", str(path), "--kernel", "1")
    assert code == 0 and re.search(r"SM clock:\s+50 GHz of 1.98 GHz \(warning: measured SM clock 50 GHz", out)


def test_the_real_kernel_above_the_device_clock_is_capped_and_warned():
    data = to_json(analyze(load(RAW)))
    kern = data["kernels"][10]
    assert kern["sm_clock_hz"] > kern["boost_clock_hz"] == 1.98e9
    assert all("1.98 GHz" in p for p in kern["physics_floor_parts"] if "per cycle x" in p and not p.startswith("DRAM"))
    assert any(w.startswith("kernel #10: its measured SM clock 2.041 GHz is above the device's maximum 1.98 GHz") for w in data["warnings"])
    assert not any("broken counter" in w for w in data["warnings"])


# -- Q4: ncu's rule texts whole --------------------------------------------------------------------------
def test_rule_texts_are_whole(capsys, monkeypatch):
    rows = list(csv.DictReader(DETAILS.open(encoding="utf-8", newline="")))
    longest = max((r["Rule Description"] or "" for r in rows if r["ID"] == "4"), key=len)
    assert len(longest) > 600
    code, out, _err = run(capsys, "profile", str(DETAILS), "--gpu", "h200", "--kernel", "4", "--json")
    assert code == 0 and longest in [r["text"] for r in json.loads(out)["ncu_rules"]]
    monkeypatch.setenv("COLUMNS", "120")
    code, out, _err = run(capsys, "profile", str(DETAILS), "--gpu", "h200", "--kernel", "4")
    assert code == 0 and " ".join(longest.split()) in " ".join(out.split())


# -- Q5: where a details page's FLOP counters are --------------------------------------------------------
def test_a_full_set_details_page_says_the_raw_page_has_the_flops(capsys, monkeypatch):
    kern = to_json(analyze(load(DETAILS)))["kernels"][4]
    assert "default set" not in kern["flops_source"]
    assert "--set full report" in kern["flops_source"] and "ncu -i report.ncu-rep --csv --page raw" in kern["flops_source"]
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _err = run(capsys, "profile", str(DETAILS), "--gpu", "h200", "--kernel", "4")
    assert code == 0 and "Nsight Compute's default set has none" not in out and "--page raw" in out


def test_a_default_set_details_page_says_the_default_set_has_none():
    kern = to_json(analyze(load(DEFAULT_DETAILS)))["kernels"][0]
    assert "default set collects none" in kern["flops_source"] and "--set full" in kern["flops_source"]


# -- Q7, Q8: the right reason ----------------------------------------------------------------------------
def test_a_nan_trace_duration_is_not_a_number(tmp_path, capsys):
    path = tmp_path / "nan.json"
    path.write_text('{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":0,"dur":NaN}]}')
    code, _out, err = run(capsys, "profile", str(path))
    assert code == 2 and err.count("\n") == 1 and "not a number (NaN)" in err and "too large" not in err


def test_a_zero_duration_says_so_not_missing_counters(tmp_path):
    path = _edited(tmp_path, RAW, {(0, "gpu__time_duration.sum"): "0"})
    kern = to_json(analyze(load(path)))["kernels"][0]
    assert kern["dram_bytes"] and kern["flops"]
    assert "duration is zero" in kern["bound_reason"] and "no byte or FLOP counters" not in kern["bound_reason"]
