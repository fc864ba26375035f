"""Occupancy and tile calculators: the H200 record as a fixture, the tables, worked examples, limits, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studytui.calc.forms import run
from studytui.calc.hardware import load_catalog
from studytui.calc.occupancy import LIMITERS, blocks_per_sm, check_cluster, get_cc, load_tables, occupancy
from studytui.calc.tile import tile_budget
from studytui.calc.units import FieldError
from studytui.cli import main

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "gpu" / "records" / "2026-12-01-occupancy-h200.json"
RESIDENCY_RECORD = ROOT / "benchmarks" / "gpu" / "records" / "2026-12-01-occupancy-residency-h200.json"
HEADER_RECORD = ROOT / "benchmarks" / "gpu" / "records" / "2026-12-01-occupancy-cuda13-header.json"
REQUIRED_CCS = ("7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0")


@pytest.fixture(scope="module")
def record() -> dict:
    return json.loads(RECORD.read_text())


# ---- the real H200, configuration by configuration -------------------------------------------

def _model(cc, kernel: dict, row: list):
    _k, threads, dyn, max_dyn, carveout, _blocks, _err = row
    return blocks_per_sm(cc, threads, kernel["num_regs"], kernel["static_smem"], dyn, max_dyn_smem=max_dyn, carveout=carveout)


def test_record_has_the_five_fields_and_enough_configurations(record: dict) -> None:
    for key in ("hardware", "workload", "precision", "baseline", "correctness_method"):
        assert record[key], key
    assert record["hardware"]["name"] == "NVIDIA H200" and record["hardware"]["compute_capability"] == "9.0"
    assert record["hardware"]["driver_version"] and record["hardware"]["nvcc"]
    assert len(record["rows"]) >= 200
    assert not [r for r in record["rows"] if r[6]], "the API refused a query"


def test_every_h200_configuration_matches_the_occupancy_api_exactly(record: dict) -> None:
    cc = get_cc("9.0")
    kernels = record["kernels"]
    mismatches = [(row, _model(cc, kernels[row[0]], row).blocks) for row in record["rows"]
                  if _model(cc, kernels[row[0]], row).blocks != row[5]]
    assert mismatches == [], f"{len(mismatches)} of {len(record['rows'])} differ, e.g. {mismatches[:3]}"


def test_the_record_reaches_every_limiter_and_the_no_fit_cases(record: dict) -> None:
    cc = get_cc("9.0")
    seen: set[str] = set()
    zero = 0
    for row in record["rows"]:
        occ = _model(cc, record["kernels"][row[0]], row)
        if occ.blocks == 0:
            zero += 1
        elif len(occ.binding) == 1:
            seen.add(occ.binding[0])
    assert seen == set(LIMITERS)
    assert zero > 100
    assert {row[4] for row in record["rows"]} >= {None, 0, 50, 100}  # carve-out preferences


def test_register_counts_were_read_back_and_agree_with_ptxas(record: dict) -> None:
    regs = {k["num_regs"] for k in record["kernels"]}
    assert len(regs) >= 15 and max(regs) == 255 and min(regs) < 16
    for kernel in record["kernels"]:
        assert kernel["ptxas_regs"] == kernel["num_regs"]
        assert kernel["static_smem"] == kernel["declared_static_smem"]


def test_h200_device_attributes_equal_the_9_0_table(record: dict) -> None:
    cc = get_cc("9.0")
    attrs = record["hardware"]["device_attributes"]
    assert attrs["max_threads_per_multiprocessor"] == cc.max_threads_per_sm
    assert attrs["max_blocks_per_multiprocessor"] == cc.max_blocks_per_sm
    assert attrs["max_registers_per_multiprocessor"] == cc.registers_per_sm
    assert attrs["max_registers_per_block"] == cc.max_registers_per_block
    assert attrs["max_shared_memory_per_multiprocessor"] == cc.shared_memory_per_sm
    assert attrs["max_shared_memory_per_block_optin"] == cc.shared_memory_per_block_optin
    assert attrs["max_shared_memory_per_block"] == cc.shared_memory_per_block_default
    assert attrs["reserved_shared_memory_per_block"] == cc.reserved_shared_memory_per_block
    assert attrs["max_threads_per_block"] == cc.max_threads_per_block


def test_cluster_queries_stay_under_the_per_sm_bound_and_need_the_opt_in_above_8(record: dict) -> None:
    sms = record["hardware"]["device_attributes"]["multiprocessor_count"]
    active = [c for c in record["clusters"] if c["query"] == "max_active_clusters"]
    assert active
    for c in active:
        if c["cluster"] > 8 and not c["non_portable"]:
            assert c["error"] == "CUDA_ERROR_INVALID_CLUSTER_SIZE"
            continue
        assert c["error"] is None
        if c["blocks_per_sm"] == 0:
            assert c["result"] == 0  # a block that cannot launch makes no cluster
        else:
            assert 0 < c["result"] <= sms * c["blocks_per_sm"] // c["cluster"]
    potential = {c["non_portable"]: c["result"] for c in record["clusters"] if c["query"] == "max_potential_cluster_size"}
    assert potential == {0: 8, 1: 16}
    cc = get_cc("9.0")
    assert (cc.cluster_portable, cc.cluster_non_portable) == (8, 16)


def test_blocks_really_resident_on_the_h200_equal_the_calculator() -> None:
    record = json.loads(RESIDENCY_RECORD.read_text())
    for key in ("hardware", "workload", "precision", "baseline", "correctness_method"):
        assert record[key], key
    sms = record["hardware"]["device_attributes"]["multiprocessor_count"]
    cc = get_cc("9.0")
    seen_limiters = set()
    for row in record["rows"]:
        occ = blocks_per_sm(cc, row["threads"], row["num_regs"], row["static_smem"], row["dyn_smem"])
        assert row["observed_min"] == row["observed_max"] == row["api_blocks_per_sm"] == occ.blocks, row
        assert row["sms_used"] == sms and row["still_counted"] == 0 and row["ptxas_regs"] == row["num_regs"]
        seen_limiters.update(occ.binding)  # warps binds here only tied with registers
    assert seen_limiters == set(LIMITERS)


# ---- every compute capability against NVIDIA's header-only calculator (cuda_occupancy.h) ------

def test_every_capability_matches_cuda_occupancy_h_exactly() -> None:
    record = json.loads(HEADER_RECORD.read_text())
    assert "cuda_occupancy.h" in record["baseline"] and record["precision"] and record["correctness_method"]
    assert {row[0] for row in record["rows"]} == set(REQUIRED_CCS)
    wrong, binding = [], {}
    for cc, threads, regs, static, dyn, carveout, blocks in record["rows"]:
        occ = blocks_per_sm(get_cc(cc), threads, regs, static, dyn, carveout=carveout)
        if occ.blocks != blocks:
            wrong.append((cc, threads, regs, static, dyn, carveout, blocks, occ.blocks))
        elif occ.blocks and len(occ.binding) == 1:
            binding.setdefault(cc, set()).add(occ.binding[0])
    assert wrong == [], f"{len(wrong)} of {len(record['rows'])} differ, e.g. {wrong[:3]}"
    for cc in REQUIRED_CCS:
        assert binding[cc] == set(LIMITERS), cc


# ---- tables ----------------------------------------------------------------------------------

def test_tables_cover_the_required_capabilities_with_sources() -> None:
    tables = load_tables()
    for key in REQUIRED_CCS:
        cc = tables.capabilities[key]
        assert cc.sources and all(s in tables.sources for s in cc.sources)
        assert cc.max_warps_per_sm * cc.warp_size <= 2048
        assert cc.shared_memory_per_block_optin <= cc.shared_memory_per_sm
        assert cc.carveout_kib[-1] * 1024 == cc.shared_memory_per_sm
        if float(key) >= 8.0:
            assert cc.reserved_shared_memory_per_block == 1024
            assert cc.shared_memory_per_block_optin == cc.shared_memory_per_sm - 1024
        else:
            assert cc.reserved_shared_memory_per_block == 0
    for key in ("9.0", "10.0", "10.3"):
        assert (tables.capabilities[key].cluster_portable, tables.capabilities[key].cluster_non_portable) == (8, 16)
    for key in ("7.0", "7.5", "8.0", "8.6", "8.9"):
        assert tables.capabilities[key].cluster_portable is None
    assert tables.capabilities["10.0"].tensor_memory and not tables.capabilities["9.0"].tensor_memory


def test_every_catalog_accelerator_maps_to_a_cc_or_says_not_modelled() -> None:
    tables = load_tables()
    for acc in load_catalog():
        if acc.vendor == "NVIDIA":
            assert tables.accelerators.get(acc.id) in tables.capabilities, acc.id
        else:
            assert acc.id in tables.not_modelled, acc.id


# ---- worked examples (CUDA C++ Best Practices Guide, "Calculating Occupancy") ----------------

def test_best_practices_guide_example_37_registers_on_7_0() -> None:
    cc = get_cc("7.0")
    small = blocks_per_sm(cc, 128, 37)
    assert (small.blocks, small.occupancy) == (12, 0.75)
    large = blocks_per_sm(cc, 320, 37)
    assert (large.blocks, large.occupancy) == (4, 0.625)  # the guide rounds 62.5% to "63%"
    assert small.binding == large.binding == ["registers"]


# ---- each limiter, rounding -------------------------------------------------------------------

@pytest.mark.parametrize("threads, regs, dyn, limiter, blocks", [
    (96, 16, 0, "warps", 21),
    (32, 16, 0, "blocks", 32),
    (256, 64, 0, "registers", 4),
    (128, 32, 100_000, "shared memory", 2),
])
def test_each_limiter_binds(threads: int, regs: int, dyn: int, limiter: str, blocks: int) -> None:
    occ = blocks_per_sm(get_cc("9.0"), threads, regs, 0, dyn)
    assert occ.blocks == blocks and occ.binding == [limiter]


def test_register_and_shared_memory_rounding() -> None:
    hopper, volta = get_cc("9.0"), get_cc("7.0")
    assert blocks_per_sm(hopper, 32, 37).regs_per_warp == 1280  # 37 x 32 = 1184 -> 1280
    assert blocks_per_sm(hopper, 32, 40).regs_per_warp == 1280
    assert blocks_per_sm(hopper, 100, 32).warps_per_block == 4  # 100 threads are 4 warps
    assert blocks_per_sm(hopper, 32, 1, 1000).smem_per_block == 2048  # 1000 + 1024 reserved -> 2048
    assert blocks_per_sm(volta, 32, 1, 1000).smem_per_block == 1024  # no reservation, 256-byte granularity
    # 255 registers: 8160 per warp -> 8192; 2 warps per slice, 8 per SM
    occ = blocks_per_sm(hopper, 256, 255)
    assert occ.regs_per_warp == 8192 and occ.blocks == 1


def test_carveout_preference_picks_the_next_configured_size() -> None:
    hopper = get_cc("9.0")
    occ = blocks_per_sm(hopper, 128, 32, 0, 9000, carveout=25)  # 25% of 228 KiB = 57 KiB -> 64 KiB
    assert occ.smem_config == 64 * 1024 and occ.blocks == 65536 // 10112


def test_next_step_advice_reaches_more_warps() -> None:
    result = occupancy(get_cc("9.0"), 256, 64)
    steps = {s["change"]: s for s in result.values["next_steps"]}
    assert steps["registers"]["value"] == 48 and steps["registers"]["occupancy"] > result.values["occupancy"]
    assert occupancy(get_cc("9.0"), 256, 32).values["next_steps"] == []  # already 100%


def test_cluster_limits() -> None:
    hopper = get_cc("9.0")
    check_cluster(hopper, 8, False)
    check_cluster(hopper, 16, True)
    with pytest.raises(FieldError, match="non-portable"):
        check_cluster(hopper, 16, False)
    with pytest.raises(FieldError, match="limit of 16"):
        check_cluster(hopper, 32, True)
    with pytest.raises(FieldError, match="9.0 or later"):
        check_cluster(get_cc("8.0"), 2, False)
    with pytest.raises(FieldError, match="limit of 8"):
        check_cluster(get_cc("12.0"), 16, True)
    result = run("occupancy", {"gpu": "h200", "threads": "128", "regs": "32", "cluster": "8"})
    assert result.values["clusters_upper_bound"] == 132 * 16 // 8


@given(
    cc=st.sampled_from(REQUIRED_CCS),
    threads=st.integers(1, 1024),
    regs=st.integers(1, 255),
    dyn=st.integers(0, 120_000),
    extra_regs=st.integers(0, 64),
    extra_smem=st.integers(0, 20_000),
)
def test_properties_bounded_and_monotone(cc: str, threads: int, regs: int, dyn: int, extra_regs: int, extra_smem: int) -> None:
    table = get_cc(cc)
    occ = blocks_per_sm(table, threads, regs, 0, dyn)
    assert 0 <= occ.blocks <= table.max_blocks_per_sm
    assert occ.active_warps <= table.max_warps_per_sm
    assert occ.blocks * occ.regs_per_block <= table.registers_per_sm
    if occ.blocks:
        assert occ.blocks * occ.smem_per_block <= table.shared_memory_per_sm
    more_regs = blocks_per_sm(table, threads, min(255, regs + extra_regs), 0, dyn)
    assert more_regs.blocks <= occ.blocks
    more_smem = blocks_per_sm(table, threads, regs, 0, dyn + extra_smem)
    assert more_smem.blocks <= occ.blocks


# ---- tile ------------------------------------------------------------------------------------

def test_tile_hopper_stages_and_accumulators() -> None:
    result = tile_budget(get_cc("9.0"), 128, 128, 64, "bf16")
    v = result.values
    assert v["stage_bytes_per_cta"] == 16384 + 16384 + 16 and v["epilogue_bytes"] == 32768
    assert v["a_bytes_per_stage"] == v["b_bytes_per_stage"] == 16384 and v["cta_group"] == 1
    assert v["max_stages"] == v["stages"] == (232448 - 32768) // 32784 == 6
    assert v["blocks_per_sm"] == 1 and v["accumulator_registers_per_thread"] == 128 and v["threads"] == 128
    assert v["stages_for_two_blocks"] == 2


def test_tile_blackwell_tensor_memory() -> None:
    # One tcgen05 accumulator of N columns, double-buffered when two fit in the 512 columns.
    v = tile_budget(get_cc("10.0"), 128, 256, 64, "bf16").values
    assert v["tmem_columns"] == 256 and v["tmem_accumulator_buffers"] == 2 and v["tmem_columns_allocated"] == 512
    assert v["accumulator_registers_per_thread"] == 0
    v = tile_budget(get_cc("10.0"), 128, 48, 64, "bf16").values
    assert v["tmem_columns_used"] == 96 and v["tmem_columns_allocated"] == 128  # powers of two from 32
    assert tile_budget(get_cc("9.0"), 128, 128, 64, "bf16").values["tmem_columns"] is None


def test_tile_refuses_accumulators_over_the_register_limit() -> None:
    # The issue: 128x256 on one warpgroup is 256 accumulator registers per thread; a thread addresses 255.
    with pytest.raises(FieldError, match="256 registers per thread; a thread addresses at most 255"):
        tile_budget(get_cc("9.0"), 128, 256, 64, "bf16", threads=128)
    assert tile_budget(get_cc("9.0"), 128, 256, 64, "bf16").values["threads"] == 256  # auto: two warpgroups


# ---- CLI: JSON, sweep, bad input ----------------------------------------------------------------

def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_occupancy_json_and_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "calc", "occupancy", "--cc", "9.0", "--threads", "256", "--regs", "64", "--sweep", "regs", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["blocks_per_sm"] == 4 and data["limited_by"] == ["registers"] and data["occupancy"] == 0.5
    assert data["registers_per_warp_allocated"] == 2048 and data["smem_per_block_allocated"] == 1024
    points = data["sweep"]["points"]
    assert [p["regs"] for p in points][:3] == [8, 16, 24]
    assert any(p["current"] and p["regs"] == 64 for p in points)
    occs = [p["occupancy"] for p in points]
    assert occs == sorted(occs, reverse=True)


def test_cli_occupancy_explain_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "calc", "occupancy", "--gpu", "h100", "--threads", "128", "--regs", "32", "--dyn-smem", "60KiB", "--explain")
    assert code == 0
    assert "limited by shared memory" in out and "roundup(0 + 61440 + 1024 reserved, 128)" in out
    assert "opt in" in out


BAD = [
    (["--gpu", "h200", "--threads", "1025", "--regs", "32"], "--threads", "1024"),
    (["--gpu", "h200", "--threads", "256", "--regs", "256"], "--regs", "255"),
    (["--gpu", "h200", "--threads", "256", "--regs", "32", "--dyn-smem", "228KiB"], "--dyn-smem", "opt-in limit of 232,448"),
    (["--cc", "8.6", "--threads", "256", "--regs", "32", "--dyn-smem", "100KiB"], "--dyn-smem", "101,376"),
    (["--gpu", "h200", "--threads", "256", "--regs", "32", "--smem", "64KiB"], "--smem", "static"),
    (["--gpu", "h200", "--threads", "1024", "--regs", "72"], "--regs", "65,536"),
    (["--gpu", "h200", "--threads", "128", "--regs", "32", "--cluster", "16"], "--cluster", "portable cluster limit of 8"),
    (["--cc", "8.0", "--threads", "128", "--regs", "32", "--cluster", "2"], "--cluster", "9.0"),
    (["--gpu", "mi300x", "--threads", "128", "--regs", "32"], "--gpu", "not modelled"),
    (["--gpu", "tpu-v5e", "--threads", "128", "--regs", "32"], "--gpu", "not modelled"),
    (["--cc", "6.1", "--threads", "128", "--regs", "32"], "--cc", "7.0"),
    (["--cc", "8.0", "--gpu", "h200", "--threads", "128", "--regs", "32"], "--cc", "disagree"),
    (["--gpu", "h200", "--threads", "128", "--regs", "32", "--smem", "1.5"], "--smem", "whole number"),
    (["--gpu", "h200", "--threads", "128", "--regs", "32", "--carveout", "101"], "--carveout", "0 to 100"),
]


@pytest.mark.parametrize("argv, flag, hint", BAD, ids=[" ".join(a) for a, _f, _h in BAD])
def test_occupancy_bad_input_exit_2_naming_the_limit(capsys, argv: list[str], flag: str, hint: str) -> None:
    code, out, err = cli(capsys, "calc", "occupancy", *argv)
    assert code == 2 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and hint in lines[0], err


TILE_BAD = [
    (["--cc", "8.0", "--tile", "128x256x64", "--stages", "9"], "--stages", "at most 2 fit"),
    (["--cc", "8.6", "--tile", "256x256x128"], "--tile", "101,376"),
    (["--cc", "9.0", "--tile", "128x128"], "--tile", "MxNxK"),
    (["--cc", "9.0", "--stages", "zero"], "--stages", "auto"),
    (["--cc", "9.0", "--threads", "2048"], "--threads", "1024"),
]


@pytest.mark.parametrize("argv, flag, hint", TILE_BAD, ids=[" ".join(a) for a, _f, _h in TILE_BAD])
def test_tile_bad_input_exit_2(capsys, argv: list[str], flag: str, hint: str) -> None:
    code, out, err = cli(capsys, "calc", "tile", *argv)
    assert code == 2 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and hint in lines[0], err


def test_cli_tile_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "calc", "tile", "--gpu", "b200", "--tile", "256x128x64", "--dtype", "fp8", "--stages", "4", "--json")
    assert code == 0
    data = json.loads(out)
    # M = 256 is a CTA pair (cta_group::2): each CTA holds 128 rows of A and 64 columns of B.
    assert data["stages"] == 4 and data["cta_group"] == 2
    assert data["stage_bytes_per_cta"] == 128 * 64 + 64 * 64 + 16
    assert data["tmem_columns"] == 128


def test_a_broken_table_in_a_content_override_is_one_line(tmp_path, monkeypatch, capsys) -> None:
    import shutil

    content = tmp_path / "content"
    shutil.copytree(ROOT / "content", content)
    (content / "hardware" / "compute-capabilities" / "nvidia.yaml").write_text("compute_capabilities: [{cc: '9.0'}]\n")
    monkeypatch.setenv("STUDYTUI_CONTENT_DIR", str(content))
    code, out, err = cli(capsys, "calc", "occupancy", "--cc", "9.0", "--threads", "128", "--regs", "32")
    assert code == 2 and "Traceback" not in err and "compute-capability tables" in err and len(err.strip().splitlines()) == 1


# ---- second review: the carve-out range where the smallest carve-out is 0 KiB -------------------

def test_a_0_kib_carveout_is_a_carveout_not_a_missing_one(capsys: pytest.CaptureFixture[str]) -> None:
    # Volta's carve-outs start at 0 KiB (CUDA Programming Guide: 0, 8, 16, 32, 64, 96 KiB of 128 KiB):
    # 256 threads with no shared memory may run in 0 KiB, so the L1 beside it is 32 to 128 KiB.
    assert main(["calc", "occupancy", "--cc", "7.0", "--threads", "256", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["smallest_fitting_carveout_bytes"] == 0
    assert (data["l1_bytes_min"], data["l1_bytes_max"]) == (32 * 1024, 128 * 1024)
    assert main(["calc", "occupancy", "--cc", "7.0", "--threads", "256", "--explain"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "L1 beside the carve-out 32 to 128 KiB" in text and "need the largest carve-out" not in text
    assert "i.e. 0 KiB" in text and "32 KiB (largest) to 128 KiB" in text
    # a 0% preference with no shared memory runs in the 0 KiB carve-out: all 128 KiB are L1
    v = occupancy(get_cc("7.0"), 256, 32, carveout=0).values
    assert v["smem_config_bytes"] == 0 and v["l1_bytes"] == 128 * 1024


def test_the_h200_carveout_measurement_is_quoted_on_9_0_only(capsys: pytest.CaptureFixture[str]) -> None:
    for cc in ("7.0", "8.0", "10.0"):
        assert main(["calc", "occupancy", "--cc", cc, "--threads", "256", "--explain"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        assert "launch__shared_mem_config_size" not in text and f"not measured on cc {cc}" in text, cc
    assert main(["calc", "occupancy", "--cc", "9.0", "--threads", "256", "--explain"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "H200, ncu launch__shared_mem_config_size" in text and "not measured" not in text
