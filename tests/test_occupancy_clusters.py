"""Cluster capacity (`calc occupancy --cluster`), measured on the H200, and the occupancy messages.

The fixture is content/hardware/measured/device/h200-sxm-clusters.yaml: cudaOccupancyMaxActiveClusters
read on a real H200 for cluster sizes 1-16 (portable and non-portable), shapes, and 1-32 blocks per
SM, with its five fields. The calculator must give the recorded answer on every row.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from studytui.calc.occupancy import blocks_per_sm, get_cc, occupancy, parse_cluster
from studytui.calc.units import FieldError
from studytui.cli import main

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "content" / "hardware" / "measured" / "device" / "h200-sxm-clusters.yaml"


@pytest.fixture(scope="module")
def record() -> dict:
    return yaml.safe_load(RECORD.read_text(encoding="utf-8"))


def test_the_record_has_the_five_fields_and_the_whole_range(record) -> None:
    for key in ("hardware", "workload", "precision", "baseline", "correctness"):
        assert record[key], key
    assert record["hardware"]["name"] == "NVIDIA H200" and record["hardware"]["sm_count"] == 132
    sizes = {r["size"] for r in record["rows"]}
    per_sm = {r["blocks_per_sm"] for r in record["rows"]}
    assert sizes == set(range(1, 17)) and per_sm == set(range(1, 33))
    assert record["correctness"]["residency_all_sizes_exact"] is True


def test_the_calculator_is_exact_on_every_recorded_configuration(record) -> None:
    cc = get_cc("9.0")
    wrong = []
    for row in record["rows"]:
        dims = tuple(row["cluster"])
        result = occupancy(cc, row["threads"], row["regs"], 0, row["dyn_smem"], cluster=dims, non_portable=not row["portable"],
                           sm_count=132, accelerator="h200-sxm", show_cluster=True)
        v = result.values
        if (v["blocks_per_sm"], v["max_active_clusters"], v["max_active_clusters_source"]) != (
                row["blocks_per_sm"], row["max_active_clusters"], "measured"):
            wrong.append((row, v["blocks_per_sm"], v["max_active_clusters"]))
    assert wrong == [], f"{len(wrong)} of {len(record['rows'])} differ, e.g. {wrong[:3]}"


def test_the_issue_figures_at_one_block_per_sm(capsys) -> None:
    want = {2: 66, 3: 39, 4: 30, 8: 15, 12: 7, 16: 7}
    for size, clusters in want.items():
        argv = ["calc", "occupancy", "--gpu", "h200", "--threads", "64", "--regs", "10", "--dyn-smem", "227KiB",
                "--cluster", str(size), "--json"] + (["--non-portable"] if size > 8 else [])
        assert main(argv) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["max_active_clusters"] == clusters and data["max_active_clusters_source"] == "measured", size
        assert data["clusters_upper_bound"] == 132 // size
    # clusters of 12 leave 36% of the SMs idle
    assert main(["calc", "occupancy", "--gpu", "h200", "--threads", "64", "--regs", "10", "--dyn-smem", "227KiB",
                 "--cluster", "12", "--non-portable"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "measured on NVIDIA H200 with cudaOccupancyMaxActiveClusters" in out
    assert "idle SMs 36% (7 x 12 = 84 of 132 SMs busy)" in out
    assert "non-portable" in out


def test_a_gpu_without_a_table_gets_the_upper_bound_and_says_so() -> None:
    result = occupancy(get_cc("9.0"), 64, 10, 0, 232448, cluster=(4, 1, 1), sm_count=132, accelerator="h100-sxm")
    v = result.values
    assert v["max_active_clusters"] == 33 and v["max_active_clusters_source"] == "upper bound"
    assert any("arithmetic upper bound" in value for _label, value in result.rows)


def test_shapes_and_distributed_shared_memory() -> None:
    assert parse_cluster("2") == (2, 1, 1) and parse_cluster("4x2") == (4, 2, 1) and parse_cluster("2x2x2") == (2, 2, 2)
    for bad in ("", "0", "2x", "axb", "2x2x2x2"):
        with pytest.raises(FieldError):
            parse_cluster(bad)
    v = occupancy(get_cc("9.0"), 128, 32, 0, 100_000, cluster=(2, 2, 1), sm_count=132, accelerator="h200-sxm").values
    assert v["cluster"] == 4 and v["cluster_dims"] == [2, 2, 1] and v["dsmem_per_cluster_bytes"] == 4 * 100_000
    assert v["max_active_clusters"] == 62  # 2 blocks per SM, clusters of 4: the recorded answer


def test_a_learners_own_record_in_the_data_dir_is_used(tmp_path: Path) -> None:
    own = tmp_path / "hardware" / "measured" / "device"
    own.mkdir(parents=True)
    text = RECORD.read_text(encoding="utf-8").replace("accelerator: h200-sxm", "accelerator: h100-sxm")
    data = yaml.safe_load(text)
    data["rows"] = [dict(r, max_active_clusters=1) for r in data["rows"]]
    (own / "h100-sxm-clusters.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    v = occupancy(get_cc("9.0"), 64, 10, 0, 232448, cluster=(2, 1, 1), sm_count=132, accelerator="h100-sxm",
                  data_dir=str(tmp_path)).values
    assert v["max_active_clusters"] == 1 and v["max_active_clusters_source"] == "measured"


# ---- occupancy messages -----------------------------------------------------------------------

def test_21_warps_round_up_to_24_for_the_four_sub_partitions(capsys) -> None:
    code = main(["calc", "occupancy", "--cc", "9.0", "--threads", "672", "--regs", "96"])
    err = capsys.readouterr().err
    assert code == 2
    assert "needs 73,728 registers per block: 21 warps counted as 24" in err and "4 sub-partitions" in err
    assert blocks_per_sm(get_cc("9.0"), 672, 96).blocks == 0


def test_carveout_derivation_next_step_and_l1_left(capsys) -> None:
    code = main(["calc", "occupancy", "--gpu", "h200", "--threads", "128", "--regs", "32", "--dyn-smem", "60KiB",
                 "--carveout", "50", "--explain"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert ("carve-out = 50% of 233,472 B = 116,736 B, rounded up to the next supported carve-out "
            "(0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KiB; CUDA Programming Guide) = 132 KiB = 135,168 B") in out
    assert "next step (carve-out) a carve-out preference of 72% or more (196 KiB of shared memory, 60 KiB of L1 left) -> 3 blocks" in out
    assert "L1 beside the carve-out 124 KiB" in out


def test_an_empty_cc_is_refused_not_read_as_the_h200(capsys) -> None:
    code = main(["calc", "occupancy", "--cc", "", "--threads", "128", "--regs", "32"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "--cc" in err and "empty" in err
    code = main(["calc", "tile", "--cc", " ", "--tile", "128x128x64"])
    assert code == 2 and "--cc" in capsys.readouterr().err


def test_default_carveout_counts_blocks_in_the_largest_but_l1_is_the_drivers_choice(capsys) -> None:
    # cuda_occupancy.h counts blocks in the largest carve-out when there is no preference, but the
    # driver picks the carve-out per launch: ncu on an H200 read a 32 KiB carve-out for 256 threads
    # with no shared memory (about 224 KiB of L1), not 228 KiB.
    code = main(["calc", "occupancy", "--cc", "9.0", "--threads", "256", "--regs", "16", "--explain", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["blocks_per_sm"] == 8 and data["smem_config_bytes"] == 228 * 1024
    assert data["likely_carveout_bytes"] == 32 * 1024 and data["l1_bytes"] == 224 * 1024
    assert data["smallest_fitting_carveout_bytes"] == 8 * 1024
    assert (data["l1_bytes_min"], data["l1_bytes_max"]) == (28 * 1024, 248 * 1024)
    code = main(["calc", "occupancy", "--cc", "9.0", "--threads", "256", "--regs", "16", "--explain"])
    out = " ".join(capsys.readouterr().out.split())
    assert "the driver's default here is the largest" not in out
    assert "L1 beside the carve-out likely 224 KiB: an H200 ran this launch shape in a 32 KiB carve-out" in out
    assert "28 to 248 KiB" in out
    # unmeasured shapes get the range, not one figure
    code = main(["calc", "occupancy", "--cc", "10.0", "--threads", "128", "--regs", "32", "--dyn-smem", "2000"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0 and "L1 beside the carve-out 28 to 192 KiB: the driver picks the carve-out per launch" in out


def test_cc_and_gpu_disagreeing_names_fields_not_flags() -> None:
    from studytui.calc.occupancy import resolve_cc

    with pytest.raises(FieldError) as info:
        resolve_cc("h200", "10.0")
    assert "--" not in info.value.message and "compute capability 10.0 and GPU h200" in info.value.message


def test_an_idle_fraction_from_the_upper_bound_is_a_lower_bound_and_points_to_the_h200(capsys) -> None:
    # H100 SXM: no table of its own; 132 SMs // 12 = 11 clusters is only a bound, so 0% idle is
    # "at least 0%"; the H200 (the same GH100 with 132 SMs) measured 7 clusters of 12: 36% idle.
    argv = ["calc", "occupancy", "--gpu", "h100-sxm", "--cluster", "12", "--non-portable", "--threads", "1024", "--regs", "64"]
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "idle SMs at least 0% (at most 11 x 12 = 132 of 132 SMs busy" in out
    assert "idle SMs 0%" not in out
    assert "the same GH100 chip with 132 SMs, measured 7 clusters of 12 in this configuration: 36% idle" in out
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["max_active_clusters_source"] == "upper bound" and data["idle_sm_fraction_bound"] == "at least"
    assert data["same_chip_measured"]["accelerator"] == "h200-sxm" and data["same_chip_measured"]["max_active_clusters"] == 7
    # a measured answer is exact, and has no sibling to point to
    v = occupancy(get_cc("9.0"), 1024, 64, cluster=(12, 1, 1), non_portable=True, sm_count=132, accelerator="h200-sxm").values
    assert v["idle_sm_fraction_bound"] == "exact" and "same_chip_measured" not in v
