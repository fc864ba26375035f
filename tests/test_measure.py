"""`studytui measure`: the benchmark logic on the CPU through a fake backend.

The real measurement (PyTorch + CUDA) runs on a GPU machine, not here; see benchmarks/gpu/.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from studytui.calc.profiles import FIVE_FIELDS, run_ceilings, validate_profile
from studytui.cli import main
from studytui.measure import plan as plan_mod
from studytui.measure.catalog import default_catalog_paths, load_catalog, match_device
from studytui.measure.plan import GiB, MiB, make_plan
from studytui.measure.profile_file import write_run
from studytui.measure.runner import run_plan
from studytui.measure.stats import median, spread
from test_measure_fakes import FAKE_FLOPS, FAKE_MEM_BW, FakeBackend

L2_BYTES_LARGEST = 126 * 10**6  # the largest L2 of a current GPU (Blackwell); buffers must exceed it


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(default_catalog_paths())


@pytest.fixture(scope="module")
def h200(catalog):
    return match_device("NVIDIA H200", catalog)


# -- statistics ----------------------------------------------------------------------------------
def test_median_of_odd_and_even_counts() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert spread([2.0, 5.0, 1.0]) == {"median": 2.0, "min": 1.0, "max": 5.0}
    with pytest.raises(ValueError):
        median([])


@given(st.lists(st.floats(min_value=1e-9, max_value=1e3), min_size=1, max_size=60))
def test_median_lies_between_min_and_max_and_splits_the_values(values: list[float]) -> None:
    m = median(values)
    assert min(values) <= m <= max(values)
    assert sum(v < m for v in values) <= len(values) // 2
    assert sum(v > m for v in values) <= len(values) // 2


# -- plan ----------------------------------------------------------------------------------------
def test_full_plan_sizes() -> None:
    plan = make_plan()
    assert plan.bandwidth_bytes == (256 * MiB, 1 * GiB, 4 * GiB)
    assert all(b > 2 * L2_BYTES_LARGEST for b in plan.bandwidth_bytes)
    assert plan.gemm_sizes == (4096, 8192, 16384)
    assert plan.precisions == ("fp32", "tf32", "bf16", "fp16", "fp8")
    assert plan.collective_bytes == (64 * MiB, 256 * MiB, 1 * GiB)
    assert plan.repetitions >= 20 and plan.warmup >= 3


def test_quick_plan_is_a_smaller_subset() -> None:
    quick, full = make_plan(quick=True), make_plan()
    assert set(quick.bandwidth_bytes) < set(full.bandwidth_bytes)
    assert set(quick.gemm_sizes) < set(full.gemm_sizes)
    assert quick.repetitions < full.repetitions
    assert all(b > 2 * L2_BYTES_LARGEST for b in quick.bandwidth_bytes)


def test_plan_drops_sizes_that_do_not_fit_and_says_so() -> None:
    plan = make_plan(device_memory_bytes=4 * GiB)
    assert max(plan.bandwidth_bytes) * 3 <= 4 * GiB
    assert 16384 not in plan.gemm_sizes
    assert plan.notes
    assert plan_mod.make_plan(device_memory_bytes=200 * GiB).notes == []


# -- runner --------------------------------------------------------------------------------------
def test_every_case_measured_checked_and_released(h200) -> None:
    backend = FakeBackend()
    plan = make_plan(quick=True)
    run = run_plan(backend, plan, h200)
    ids = [r["id"] for r in run["results"]]
    expected_bw = [f"hbm-{k}-{s}" for s in ("256MiB", "1GiB") for k in ("copy", "reduce", "rowsum")]
    expected_gemm = [f"{p}-gemm-{n}" for p in plan.precisions for n in plan.gemm_sizes]
    assert ids == expected_bw + expected_gemm
    assert all(r["status"] == "accepted" for r in run["results"])
    # warm-up and repetitions as planned, each case checked once and released
    for label, warmup, reps in backend.timed:
        assert warmup == plan.warmup
        assert reps == (plan.gemm_repetitions if "-" in label and label.split("-")[0] in FAKE_FLOPS else plan.repetitions)
    assert backend.log.count("check bf16-4096") == 1 and backend.log.count("release bf16-4096") == 1


def test_median_and_rates_computed_from_the_timings(h200) -> None:
    plan = make_plan(quick=True)
    run = run_plan(FakeBackend(), plan, h200)
    result = next(r for r in run["results"] if r["id"] == "bf16-gemm-8192")
    base = 2 * 8192**3 / FAKE_FLOPS["bf16"]
    pattern = [FakeBackend.pattern[i % 5] for i in range(plan.gemm_repetitions)]
    assert result["time_s"]["median"] == pytest.approx(base * median(pattern))
    assert result["time_s"]["min"] == pytest.approx(base * 0.9)
    assert result["time_s"]["max"] == pytest.approx(base * 1.2)
    assert result["achieved"]["median"] == pytest.approx(2 * 8192**3 / result["time_s"]["median"])
    assert result["achieved"]["max"] == pytest.approx(2 * 8192**3 / result["time_s"]["min"])
    assert result["baseline"]["vendor_peak"] == pytest.approx(989.4e12)
    assert result["baseline"]["ratio"] == pytest.approx(result["achieved"]["median"] / 989.4e12, rel=1e-3)
    copy = next(r for r in run["results"] if r["id"] == "hbm-copy-1GiB")
    assert copy["workload"]["bytes_moved"] == 2 * GiB  # read + write
    assert copy["achieved"]["median"] == pytest.approx(
        FAKE_MEM_BW * 1 / median([FakeBackend.pattern[i % 5] for i in range(plan.repetitions)])
    )
    assert copy["baseline"]["vendor_peak"] == pytest.approx(4.8e12)


def test_wrong_results_are_rejected_and_never_used(h200) -> None:
    backend = FakeBackend(wrong=["bf16-8192", "copy-1073741824"])
    run = run_plan(backend, make_plan(quick=True), h200)
    by_id = {r["id"]: r for r in run["results"]}
    bad = by_id["bf16-gemm-8192"]
    assert bad["status"] == "rejected"
    assert bad["correctness"]["passed"] is False
    assert "output check failed" in bad["rejected_because"]
    assert by_id["hbm-copy-1GiB"]["status"] == "rejected"
    assert by_id["bf16-gemm-4096"]["status"] == "accepted"
    # The ceiling comes only from accepted results: rig the rejected one to look fastest.
    bad["achieved"]["median"] = 1e18
    ceilings = run_ceilings(run)
    assert ceilings["peak_flops"]["bf16"] == by_id["bf16-gemm-4096"]["achieved"]["median"]
    assert run["correctness"]["failed"] == 2


def test_all_wrong_precision_gives_no_ceiling(h200) -> None:
    run = run_plan(FakeBackend(wrong=["fp8-4096", "fp8-8192"]), make_plan(quick=True), h200)
    assert "fp8" not in run_ceilings(run)["peak_flops"]


def test_nan_error_and_bad_timings_are_rejected(h200) -> None:
    class NanBackend(FakeBackend):
        def gemm_case(self, precision, m, n, k):
            case = super().gemm_case(precision, m, n, k)
            case.error = float("nan")
            return case

        def time_case(self, case, warmup, repetitions):
            times = super().time_case(case, warmup, repetitions)
            return [0.0] * len(times) if case.label.startswith("copy") else times

    run = run_plan(NanBackend(), make_plan(quick=True), h200)
    for r in run["results"]:
        if r["kind"] == "gemm":
            assert r["status"] == "rejected" and r["correctness"]["error"] == "nan"
        if r["kind"] == "copy":
            assert r["status"] == "rejected" and "timings" in r["rejected_because"]
            assert r["time_s"]["median"] is None


def test_a_case_that_fails_is_skipped_with_its_reason(h200) -> None:
    run = run_plan(FakeBackend(fail=["fp32-8192"], precisions=["fp32", "bf16"]), make_plan(quick=True), h200)
    skipped = {s["id"]: s["reason"] for s in run["skipped"]}
    assert "out of memory" in skipped["fp32-gemm-8192"]
    assert "not supported" in skipped["fp8-gemm-4096"]
    ids = [r["id"] for r in run["results"]]
    assert "fp32-gemm-4096" in ids and "fp32-gemm-8192" not in ids and "fp8-gemm-4096" not in ids


def test_collectives_measured_with_several_gpus(h200) -> None:
    run = run_plan(FakeBackend(gpus=2, wrong=[f"all_gather-{64 * MiB}"]), make_plan(quick=True), h200)
    coll = [r for r in run["results"] if r["kind"] in ("all_reduce", "all_gather")]
    assert {r["id"] for r in coll} == {"all-reduce-2gpu-64MiB", "all-reduce-2gpu-256MiB", "all-gather-2gpu-64MiB", "all-gather-2gpu-256MiB"}
    reduce_256 = next(r for r in coll if r["id"] == "all-reduce-2gpu-256MiB")
    assert reduce_256["achieved"]["median"] == pytest.approx(360e9)  # bus bandwidth, 2(n-1)/n applied
    assert reduce_256["baseline"]["vendor_peak"] == pytest.approx(450e9)  # one direction of 900 GB/s
    assert next(r for r in coll if r["id"] == "all-gather-2gpu-64MiB")["status"] == "rejected"
    assert run_ceilings(run)["link_bw_per_direction"] == pytest.approx(360e9)
    assert "collectives" not in run


def test_single_gpu_says_collectives_not_measured(h200) -> None:
    run = run_plan(FakeBackend(gpus=1), make_plan(quick=True), h200)
    assert run["collectives"] == "collectives not measured: single GPU"


def test_unknown_gpu_has_no_vendor_baseline() -> None:
    run = run_plan(FakeBackend(name="Mystery Accelerator 9000"), make_plan(quick=True), None)
    assert all(r["baseline"]["vendor_peak"] is None and r["baseline"]["ratio"] is None for r in run["results"])
    assert run["baseline"]["catalog_id"] is None


# -- catalog matching ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "reported, expected",
    [("NVIDIA H200", "h200-sxm"), ("NVIDIA H100 80GB HBM3", "h100-sxm"), ("NVIDIA GeForce RTX 4090", "rtx-4090"),
     ("NVIDIA L4", "l4"), ("NVIDIA L40S", "l40s"), ("Mystery Accelerator 9000", None)],
)
def test_gpu_name_matched_to_catalog(catalog, reported: str, expected: str | None) -> None:
    found = match_device(reported, catalog)
    assert (found.id if found else None) == expected


# -- profile file --------------------------------------------------------------------------------
def test_profile_written_with_the_five_fields_and_runs_appended(tmp_path: Path, h200) -> None:
    out = tmp_path / "p.yaml"
    write_run(out, run_plan(FakeBackend(), make_plan(quick=True), h200), h200.id)
    profile = write_run(out, run_plan(FakeBackend(gpus=2), make_plan(quick=True), h200), h200.id)
    data = yaml.safe_load(out.read_text())
    assert data == profile
    assert validate_profile(data) == []
    assert data["accelerator"] == "h200-sxm" and data["gpu_name"] == "NVIDIA H200"
    assert [r["run"] for r in data["runs"]] == [1, 2]
    for run in data["runs"]:
        for field in (*FIVE_FIELDS, "software", "date"):
            assert run[field], field
        for result in run["results"]:
            for field in ("precision", "workload", "baseline", "correctness"):
                assert result[field], field
    assert data["summary"]["runs"] == 2
    assert data["summary"]["link_bw_per_direction"]["runs"] == 1  # only the 2-GPU run measured it


def test_profile_of_another_gpu_or_invalid_file_is_not_overwritten(tmp_path: Path, h200) -> None:
    from studytui.core.errors import UsageError

    out = tmp_path / "p.yaml"
    write_run(out, run_plan(FakeBackend(), make_plan(quick=True), h200), h200.id)
    before = out.read_text()
    with pytest.raises(UsageError, match="not 'Other GPU'"):
        write_run(out, run_plan(FakeBackend(name="Other GPU"), make_plan(quick=True), None), None)
    assert out.read_text() == before
    junk = tmp_path / "junk.yaml"
    junk.write_text("just: text\n")
    with pytest.raises(UsageError, match="not a valid measured profile"):
        write_run(junk, run_plan(FakeBackend(), make_plan(quick=True), h200), h200.id)
    assert junk.read_text() == "just: text\n"


# -- command line --------------------------------------------------------------------------------
def test_measure_without_torch_exits_2_with_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError, installed or not
    assert main(["measure"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "studytui: error: studytui measure needs PyTorch with CUDA: pip install -e '.[measure]'"


def test_measure_without_torch_in_a_fresh_process(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\n")
    env = {"PYTHONPATH": str(tmp_path), "STUDYTUI_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-m", "studytui.cli", "measure", "--quick"], capture_output=True, text=True,
                          env=env, cwd=Path(__file__).resolve().parents[1], timeout=60)
    assert proc.returncode == 2
    assert "needs PyTorch with CUDA" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "data").exists()


@pytest.fixture
def fake_backend(monkeypatch: pytest.MonkeyPatch) -> FakeBackend:
    backend = FakeBackend(gpus=1)
    monkeypatch.setattr("studytui.cli.commands.measure._backend", lambda: backend)
    return backend


def test_measure_writes_to_the_data_dir_by_default(fake_backend, isolated_data_dir: Path, capsys) -> None:
    assert main(["measure", "--quick"]) == 0
    path = isolated_data_dir / "hardware" / "measured" / "h200-sxm.yaml"
    assert validate_profile(yaml.safe_load(path.read_text())) == []
    out = capsys.readouterr()
    assert "bf16-gemm-8192" in out.out and "collectives not measured: single GPU" in out.out


def test_measure_out_file_and_json(fake_backend, tmp_path: Path, capsys) -> None:
    out = tmp_path / "mine.yaml"
    assert main(["measure", "--quick", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["profile"] == str(out) and doc["run"]["run"] == 1
    assert doc["summary"]["peak_flops"]["bf16"]["median"] == pytest.approx(FAKE_FLOPS["bf16"] / median([1.0, 1.1, 0.9, 1.2, 0.95] * 2))
    assert out.is_file()


def test_measure_out_directory_is_a_usage_error(fake_backend, tmp_path: Path, capsys) -> None:
    assert main(["measure", "--out", str(tmp_path)]) == 2
    assert "--out must be a file" in capsys.readouterr().err


# -- collective sweeps (issue 18) ----------------------------------------------------------------
def test_collective_sweep_plan_spans_latency_and_bandwidth_regimes() -> None:
    plan = make_plan(collectives_sweep=True, collectives_only=True)
    assert plan.collective_ops == ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
    assert plan.collective_bytes[0] == 1 * MiB and plan.collective_bytes[-1] == 8 * GiB
    assert plan.bandwidth_bytes == () and plan.gemm_sizes == ()
    # On a small device the sizes that cannot fit (4x the buffer) are dropped and noted.
    small = make_plan(collectives_sweep=True, device_memory_bytes=16 * GiB)
    assert max(small.collective_bytes) == 4 * GiB and "collective sizes limited by device memory" in small.notes


def test_sweep_over_several_gpu_counts_records_each_with_bus_factors(h200) -> None:
    backend = FakeBackend(gpus=8)
    plan = make_plan(collectives_sweep=True, collectives_only=True, collective_gpus=(8, 4, 16))
    run = run_plan(backend, plan, h200)
    assert backend.worlds_run == [8, 4]
    assert {"id": "collectives-16gpu", "reason": "asked for 16 GPUs; this machine has 8"} in run["skipped"]
    by_id = {r["id"]: r for r in run["results"]}
    assert {r["kind"] for r in run["results"]} == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}
    # Large messages reach the fake's bus bandwidth for that GPU count under every op's own factor.
    for op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"):
        assert by_id[f"{op}-8gpu-8GiB"]["achieved"]["median"] == pytest.approx(320e9)
        assert by_id[f"{op}-4gpu-8GiB"]["achieved"]["median"] == pytest.approx(340e9)
    # Small messages are latency-bound: far below the bandwidth figure.
    assert by_id["all-reduce-8gpu-1MiB"]["achieved"]["median"] < 0.3 * 320e9
    assert by_id["reduce-scatter-8gpu-1GiB"]["workload"]["bytes_counted"] == "input (all chunks)"
    assert run["software"]["nccl"] == "2.99.9"
    assert run["workload"]["collective_algorithm"]["nvls"] == "off"
    assert run["workload"]["collective_gpus"] == [8, 4]
    ceilings = run_ceilings(run)
    assert ceilings["link_bw_by_gpus"] == {8: pytest.approx(320e9), 4: pytest.approx(340e9)}
    assert ceilings["link_bw_per_direction"] == pytest.approx(340e9)  # the smallest group measured


def test_measured_link_figure_chosen_by_gpu_count_with_a_fallback_note() -> None:
    from studytui.calc.profiles import link_for_gpus

    figures = {2: 328e9, 8: 400e9}
    assert link_for_gpus(figures, 8) == (400e9, "measured all-reduce bus bandwidth over 8 GPUs")
    value, note = link_for_gpus(figures, 4)
    assert value == 328e9 and "no measurement over 4 GPUs" in note and "2-GPU" in note
    value, note = link_for_gpus(figures, 64)
    assert value == 400e9 and "8-GPU" in note
    assert link_for_gpus({}, 8) == (None, "no collective measured in this profile")


def test_measure_collectives_refused_on_one_gpu(monkeypatch, capsys) -> None:
    from studytui import cli
    from studytui.cli.commands import measure as measure_cmd

    monkeypatch.setattr(measure_cmd, "_backend", lambda: FakeBackend(gpus=1))
    assert cli.main(["measure", "--collectives-only", "--out", "/nonexistent/x.yaml"]) == 2
    assert "at least two GPUs" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["1", "x", "8,,4", "0"])
def test_measure_gpu_counts_must_be_two_or_more(value, capsys) -> None:
    from studytui import cli

    with pytest.raises(SystemExit) as exited:
        cli.main(["measure", "--gpus", value])
    assert exited.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1
