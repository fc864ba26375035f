"""Measured profiles: schema validation, `check_profiles`, and the ceilings the calculators use."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studytui.calc.profiles import (
    FIVE_FIELDS,
    check_profiles,
    load_profile,
    measured_ceilings,
    measured_summary,
    run_ceilings,
    summarize,
    validate_profile,
)
from studytui.cli import main
from studytui.core.errors import UsageError
from studytui.core.paths import content_dir
from studytui.measure.profile_file import dump

SHIPPED = content_dir() / "hardware" / "measured" / "h200-sxm.yaml"


@pytest.fixture(scope="module")
def shipped() -> dict:
    return load_profile(SHIPPED)


def _write_content(tmp_path: Path, profile: dict, name: str = "h200-sxm.yaml") -> Path:
    folder = tmp_path / "content" / "hardware" / "measured"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(dump(profile))
    return path


# -- the shipped H200 profile --------------------------------------------------------------------
def test_shipped_profile_is_valid_with_two_runs(shipped: dict) -> None:
    assert validate_profile(shipped) == []
    assert check_profiles(content_dir()) == []
    assert shipped["accelerator"] == "h200-sxm" and shipped["gpu_name"] == "NVIDIA H200"
    assert len(shipped["runs"]) >= 2
    for run in shipped["runs"]:
        for field in (*FIVE_FIELDS, "software", "date"):
            assert run[field], field
        assert run["hardware"]["sm_count"] == 132
        assert {"torch", "cuda", "driver"} <= set(run["software"])
        for result in run["results"]:
            assert result["status"] == "accepted" and result["correctness"]["passed"] is True
            assert result["correctness"]["error"] <= result["correctness"]["tolerance"]
            # achieved is below the vendor peak: a ratio over 1 would be a broken measurement
            assert 0 < result["baseline"]["ratio"] < 1


def test_shipped_summary_matches_its_runs(shipped: dict) -> None:
    assert shipped["summary"] == summarize(shipped)
    assert set(shipped["summary"]["peak_flops"]) == {"fp32", "tf32", "bf16", "fp16", "fp8"}
    assert shipped["summary"]["link_bw_per_direction"] is not None  # both runs were on 2 GPUs


# -- validation ----------------------------------------------------------------------------------
@pytest.mark.parametrize("field", FIVE_FIELDS)
def test_a_run_missing_one_of_the_five_fields_is_rejected(shipped: dict, tmp_path: Path, field: str) -> None:
    broken = copy.deepcopy(shipped)
    del broken["runs"][0][field]
    assert f"missing field '{field}' in run 1" in validate_profile(broken)
    path = _write_content(tmp_path, broken)
    problems = check_profiles(tmp_path / "content")
    assert any(p.startswith(f"{path}:") and f"missing field '{field}' in run 1" in p for p in problems)
    # the line points at run 1 (the list item), not at the top of the file
    run_line = next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith("- run: 1"))
    assert any(p.startswith(f"{path}:{run_line}:") for p in problems)


@pytest.mark.parametrize("field", ["precision", "baseline", "correctness", "workload"])
def test_a_result_missing_a_field_is_rejected(shipped: dict, field: str) -> None:
    broken = copy.deepcopy(shipped)
    result = next(r for r in broken["runs"][1]["results"] if r["id"] == "bf16-gemm-8192")
    del result[field]
    assert f"missing field '{field}' in run 2 / result bf16-gemm-8192" in validate_profile(broken)


def test_accepted_without_a_passed_check_is_rejected(shipped: dict) -> None:
    broken = copy.deepcopy(shipped)
    broken["runs"][0]["results"][0]["correctness"]["passed"] = False
    assert any("accepted but its correctness check did not pass" in p for p in validate_profile(broken))


def test_inconsistent_times_are_rejected(shipped: dict) -> None:
    broken = copy.deepcopy(shipped)
    broken["runs"][0]["results"][0]["time_s"]["min"] = 1.0
    assert any("min <= median <= max" in p for p in validate_profile(broken))


def test_not_a_profile_at_all() -> None:
    assert validate_profile([1, 2]) == ["a measured profile must be a mapping with 'runs'"]
    problems = validate_profile({"schema": "x"})
    assert any("schema" in p for p in problems) and any("'runs'" in p for p in problems)


def test_check_profiles_reports_bad_yaml_with_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "hardware" / "measured"
    folder.mkdir(parents=True)
    (folder / "x.yaml").write_text("schema: a\nruns: [\n  - b: c\n")
    problems = check_profiles(tmp_path)
    assert len(problems) == 1 and problems[0].endswith("not valid YAML")
    assert problems[0].startswith(f"{folder / 'x.yaml'}:")


def test_check_profiles_wants_the_file_named_after_the_accelerator(shipped: dict, tmp_path: Path) -> None:
    _write_content(tmp_path, shipped, name="h100-sxm.yaml")
    assert any("does not match the file name" in p for p in check_profiles(tmp_path / "content"))


def test_check_profiles_with_no_folder_is_empty(tmp_path: Path) -> None:
    assert check_profiles(tmp_path) == []


def test_check_profiles_reports_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    folder = tmp_path / "hardware" / "measured"
    folder.mkdir(parents=True)
    (folder / "x.yaml").write_bytes(b"schema: \xff\xfe\n")
    assert check_profiles(tmp_path) == [f"{folder / 'x.yaml'}:1: cannot read (not UTF-8 text)"]


def test_check_profiles_checks_a_changed_file_again(shipped: dict, tmp_path: Path) -> None:
    _write_content(tmp_path, shipped)
    assert check_profiles(tmp_path / "content") == []
    path = next((tmp_path / "content" / "hardware" / "measured").glob("*.yaml"))
    path.write_text(path.read_text().replace("schema:", "schema_typo:", 1))
    assert any("schema" in p for p in check_profiles(tmp_path / "content"))


# -- ceilings ------------------------------------------------------------------------------------
def test_measured_ceilings_are_the_median_over_runs(shipped: dict) -> None:
    ceilings = measured_ceilings("h200-sxm", "measured")
    per_run = [run_ceilings(r) for r in shipped["runs"]]
    bf16 = sorted(c["peak_flops"]["bf16"] for c in per_run if "bf16" in c["peak_flops"])
    assert ceilings["peak_flops"]["bf16"] == pytest.approx(sum(bf16) / 2 if len(bf16) == 2 else bf16[len(bf16) // 2])
    assert ceilings["mem_bw"] == pytest.approx(summarize(shipped)["mem_bw"]["median"])
    assert 3.5e12 < ceilings["mem_bw"] < 4.8e12
    assert 300e9 < ceilings["link_bw_per_direction"] < 450e9
    dates = sorted(r["date"][:10] for r in shipped["runs"])
    span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    assert ceilings["source"] == f"h200-sxm.yaml ({span}, {len(shipped['runs'])} runs, medians)"


def test_rejected_results_never_set_a_ceiling(shipped: dict) -> None:
    run = copy.deepcopy(shipped["runs"][0])
    best = max((r for r in run["results"] if r["kind"] == "gemm" and r["precision"] == "bf16"), key=lambda r: r["achieved"]["median"])
    best["status"] = "rejected"
    best["correctness"]["passed"] = False
    others = [r["achieved"]["median"] for r in run["results"] if r["kind"] == "gemm" and r["precision"] == "bf16" and r is not best]
    assert run_ceilings(run)["peak_flops"]["bf16"] == max(others)


def test_accelerator_objects_with_an_id_attribute_work() -> None:
    class Acc:
        id = "h200-sxm"

    assert measured_ceilings(Acc(), "measured") == measured_ceilings({"id": "h200-sxm"}, "measured")


def test_profile_as_a_file_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(SHIPPED.read_text())
    assert measured_ceilings("h200-sxm", str(path))["source"].startswith("mine.yaml (")


def test_a_profile_changed_on_disk_is_read_again(shipped: dict, tmp_path: Path) -> None:
    # Profiles are parsed once per file state (calculators recompute on every keystroke); a new
    # measurement written to the same file must still show at once.
    path = tmp_path / "mine.yaml"
    path.write_text(dump(shipped))
    before = measured_ceilings("h200-sxm", str(path))
    assert measured_ceilings("h200-sxm", str(path)) == before  # the cached answer, unchanged
    before["peak_flops"]["bf16"] = 1.0  # a caller's copy: changing it changes nothing cached
    assert measured_ceilings("h200-sxm", str(path))["peak_flops"]["bf16"] != 1.0
    fewer = copy.deepcopy(shipped)
    del fewer["runs"][-1]
    path.write_text(dump(fewer))
    n = len(fewer["runs"])
    assert f"{n} run{'s' if n != 1 else ''}, medians" in measured_ceilings("h200-sxm", str(path))["source"]
    assert measured_summary("h200-sxm") is not None


def test_missing_and_invalid_profiles_are_one_line_usage_errors(shipped: dict, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no measured profile for 'h100-sxm'"):
        measured_ceilings("h100-sxm", "measured")
    with pytest.raises(UsageError, match="not found"):
        measured_ceilings("h200-sxm", str(tmp_path / "nope.yaml"))
    broken = copy.deepcopy(shipped)
    del broken["runs"][1]["baseline"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(dump(broken))
    with pytest.raises(UsageError) as info:
        measured_ceilings("h200-sxm", str(bad))
    assert "missing field 'baseline' in run 2" in str(info.value) and "\n" not in str(info.value)
    junk = tmp_path / "junk.yaml"
    junk.write_text("a: [\n")
    with pytest.raises(UsageError, match="not valid YAML"):
        measured_ceilings("h200-sxm", str(junk))


def test_a_users_own_profile_in_the_data_dir(shipped: dict, isolated_data_dir: Path) -> None:
    mine = copy.deepcopy(shipped)
    mine["accelerator"] = "h100-sxm"
    folder = isolated_data_dir / "hardware" / "measured"
    folder.mkdir(parents=True)
    (folder / "h100-sxm.yaml").write_text(dump(mine))
    assert measured_ceilings("h100-sxm", "measured")["peak_flops"] == measured_ceilings("h200-sxm", "measured")["peak_flops"]
    assert measured_summary("h100-sxm") is not None


def test_measured_summary_beside_vendor() -> None:
    summary = measured_summary("h200-sxm")
    assert summary is not None
    assert summary["vendor"]["bf16"] == pytest.approx(989.4e12)
    assert summary["vendor"]["mem_bw"] == pytest.approx(4.8e12)
    assert summary["vendor"]["link_bw_per_direction"] == pytest.approx(450e9)
    for key, ratio in summary["ratios"].items():
        measured = summary["peak_flops"].get(key) or summary.get(key)
        assert ratio == pytest.approx(measured / summary["vendor"][key])
        assert 0.3 < ratio < 1
    assert measured_summary("mi300x") is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=1e11, max_value=1e15), min_size=1, max_size=7))
def test_summary_median_within_the_runs(values: list[float]) -> None:
    runs = [{"results": [{"kind": "gemm", "precision": "bf16", "status": "accepted", "achieved": {"median": v}}]} for v in values]
    s = summarize({"runs": runs})["peak_flops"]["bf16"]
    assert s["min"] <= s["median"] <= s["max"] and s["runs"] == len(values)


# -- calculators switch ceilings by profile ------------------------------------------------------
def _calc_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["calc", "roofline", "--gpu", "h200", "--intensity", "100", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_roofline_uses_the_measured_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    vendor = _calc_json(capsys)
    measured = _calc_json(capsys, "--profile", "measured")
    ceilings = measured_ceilings("h200-sxm", "measured")
    assert vendor["mem_bw"] == pytest.approx(4.8e12) and vendor["peak_flops"] == pytest.approx(989.4e12)
    assert measured["mem_bw"] == pytest.approx(ceilings["mem_bw"])
    assert measured["peak_flops"] == pytest.approx(ceilings["peak_flops"]["bf16"])
    # intensity 100 is below both ridge points: attainable = intensity x bandwidth
    assert measured["attainable_flops"] == pytest.approx(100 * ceilings["mem_bw"])
    assert vendor["attainable_flops"] == pytest.approx(100 * 4.8e12)
    path = tmp_path / "p.yaml"
    path.write_text(SHIPPED.read_text())
    assert _calc_json(capsys, "--profile", str(path))["mem_bw"] == pytest.approx(ceilings["mem_bw"])


def test_roofline_measured_without_a_profile_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "roofline", "--gpu", "h100", "--intensity", "100", "--profile", "measured", "--json"]) == 2
    assert "no measured profile for 'h100-sxm'" in capsys.readouterr().err


def test_roofline_profile_in_a_fresh_process() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "studytui.cli",
            "calc",
            "roofline",
            "--gpu",
            "h200",
            "--intensity",
            "100",
            "--profile",
            "measured",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["mem_bw"] < 4.8e12


# -- studytui gpus ID: vendor beside measured ----------------------------------------------------
def test_gpus_id_shows_measured_beside_vendor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "h200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["measured"] == measured_summary("h200-sxm")
    assert doc["peak_flops"]["bf16"] == pytest.approx(989.4e12)  # the vendor figure is still there
    assert main(["gpus", "h200"]) == 0
    text = capsys.readouterr().out
    assert "Vendor peak beside measured" in text and "medians)" in text
    assert "714.4" in text and "0.72" in text


def test_gpus_id_without_a_profile_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "h100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["measured"] is None
    assert main(["gpus", "h100"]) == 0
    assert "No measured profile" in capsys.readouterr().out


# -- the link figure chosen by GPU count (issue 18) ------------------------------------------------
def _with_an_eight_gpu_run(shipped: dict, bus_bw: float) -> dict:
    """The shipped profile plus a run whose all-reduce was measured over 8 GPUs."""
    profile = copy.deepcopy(shipped)
    run = copy.deepcopy(profile["runs"][0])
    template = next(r for r in run["results"] if r["kind"] == "all_reduce")
    eight = copy.deepcopy(template)
    eight["id"] = "all-reduce-8gpu-1GiB"
    eight["workload"]["gpus"] = 8
    eight["achieved"] = dict(eight["achieved"], median=bus_bw, min=bus_bw, max=bus_bw)
    run["results"] = [r for r in run["results"] if r["kind"] != "all_reduce"] + [eight]
    run["hardware"] = dict(run["hardware"], gpu_count=8)
    run["run"] = 3
    profile["runs"].append(run)
    profile["summary"] = summarize(profile)
    return profile


def test_collective_uses_the_figure_measured_over_its_gpu_count(shipped: dict, tmp_path: Path, capsys) -> None:
    from studytui import cli

    path = tmp_path / "h200-sxm.yaml"
    path.write_text(dump(_with_an_eight_gpu_run(shipped, 400e9)))
    assert measured_ceilings("h200-sxm", str(path))["link_bw_by_gpus"] == {
        2: pytest.approx(summarize(shipped)["link_bw_by_gpus"][2]["median"]),
        8: 400e9,
    }
    args = ["calc", "collective", "--op", "all_reduce", "--bytes", "1GiB", "--gpu", "h200", "--profile", str(path), "--json"]

    assert cli.main([*args, "--gpus", "8"]) == 0
    eight = json.loads(capsys.readouterr().out)
    assert "8-GPU all-reduce" in json.dumps(eight)
    assert not [w for w in eight.get("warnings", []) if "measured link figure" in w]
    assert eight["busbw"] == pytest.approx(400e9, rel=0.01)

    # 64 GPUs: the ring inside each 8-GPU domain still uses the 8-GPU figure.
    assert cli.main([*args, "--gpus", "64"]) == 0
    assert not [w for w in json.loads(capsys.readouterr().out).get("warnings", []) if "measured link figure" in w]

    # 4 GPUs: nothing measured at 4, so the nearest count stands in and the result says so.
    assert cli.main([*args, "--gpus", "4"]) == 0
    four = json.loads(capsys.readouterr().out)
    assert [w for w in four.get("warnings", []) if "comes from a 2-GPU all-reduce" in w and "4 GPUs" in w]


def test_collective_with_only_the_two_gpu_figure_warns_at_eight(capsys) -> None:
    from studytui import cli

    assert cli.main(["calc", "collective", "--op", "all_reduce", "--bytes", "1GiB", "--gpu", "h200",
                     "--profile", "measured", "--gpus", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [w for w in out["warnings"] if "comes from a 2-GPU all-reduce" in w and "8 GPUs" in w]


def test_gpus_id_lists_measured_collectives_by_gpu_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "h200"]) == 0
    text = capsys.readouterr().out
    assert "NCCL bus bandwidth over 2 GPUs" in text
    for op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"):
        assert op in text
    table = measured_summary("h200-sxm")["collectives"]["2"]
    # The 2-GPU sweep runs from the latency-bound regime to the bandwidth-bound one.
    assert table["all_reduce"][str(1 << 20)] < 0.1 * table["all_reduce"][str(8 << 30)]
