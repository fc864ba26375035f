"""`calc l2`: L2 persistence from the H200's recorded device attributes; "not known" elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from studytui.calc.forms import run
from studytui.calc.units import FieldError
from studytui.cli import main

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "content" / "hardware" / "measured" / "device" / "h200-sxm-device.yaml"
KEYS = ("persisting_l2_max_bytes", "access_policy_max_window_bytes", "set_aside_bytes", "hit_ratio", "dram_bytes_saved")


def test_the_h200_figures_are_the_recorded_device_attributes_with_their_five_fields() -> None:
    record = yaml.safe_load(RECORD.read_text(encoding="utf-8"))
    for key in ("hardware", "workload", "precision", "baseline", "correctness"):
        assert record[key], key
    attrs = record["attributes"]
    v = run("l2", {"gpu": "h200", "bytes": "24MiB"}).values
    assert v["l2_bytes"] == attrs["l2CacheSize"]["value"] == 62_914_560
    assert v["persisting_l2_max_bytes"] == attrs["persistingL2CacheMaxSize"]["value"] == 39_321_600
    assert v["access_policy_max_window_bytes"] == attrs["accessPolicyMaxWindowSize"]["value"] == 134_217_728
    # the three read paths agreed on the device
    assert record["cross_checks"]["cudaGetDeviceProperties"]["persistingL2CacheMaxSize"] == 39_321_600
    assert record["cross_checks"]["cuDeviceGetAttribute"]["MAX_ACCESS_POLICY_WINDOW_SIZE"] == 134_217_728


def test_set_aside_window_hit_ratio_and_savings() -> None:
    v = run("l2", {"gpu": "h200", "bytes": "24MiB", "reuse": "8"}).values
    assert v["set_aside_bytes"] == 39_321_600 and v["hit_ratio"] == 1.0
    assert v["dram_bytes_saved"] == 7 * 24 * 2**20
    # A 64 MiB tensor: the whole set-aside persists, the hit ratio is set-aside / window.
    v = run("l2", {"gpu": "h200", "bytes": "64MiB"}).values
    assert v["hit_ratio"] == pytest.approx(39_321_600 / (64 * 2**20))
    assert v["dram_bytes_saved"] == pytest.approx(39_321_600, abs=1)
    # A request above the limit is capped; one below is kept.
    assert run("l2", {"gpu": "h200", "bytes": "8MiB", "set_aside": "50MiB"}).values["set_aside_bytes"] == 39_321_600
    assert run("l2", {"gpu": "h200", "bytes": "8MiB", "set_aside": "4MiB"}).values["set_aside_bytes"] == 4 * 2**20
    # A tensor larger than one window: only the window can be marked.
    big = run("l2", {"gpu": "h200", "bytes": "200MiB"})
    assert big.values["window_bytes"] == 134_217_728 and any("access-policy window" in w for w in big.warnings)


def test_a_hit_ratio_above_the_set_aside_warns_of_thrashing() -> None:
    result = run("l2", {"gpu": "h200", "bytes": "64MiB", "hit_ratio": "1"})
    assert result.values["hit_ratio"] == 1.0 and any("thrashing" in w for w in result.warnings)
    assert result.values["dram_bytes_saved"] == 39_321_600  # no more than the set-aside stays


def test_other_gpus_say_not_known(capsys) -> None:
    v = run("l2", {"gpu": "h100", "bytes": "24MiB"}).values
    assert v["persisting_l2_max_bytes"] is None and v["access_policy_max_window_bytes"] is None and v["dram_bytes_saved"] is None
    assert "not known" in v["figures_source"]
    assert main(["calc", "l2", "--gpu", "h100", "--bytes", "24MiB"]) == 0
    assert "not known" in capsys.readouterr().out
    v = run("l2", {"cc": "9.0", "bytes": "24MiB", "set_aside": "10MiB"}).values
    assert v["set_aside_bytes"] == 10 * 2**20 and v["hit_ratio"] == pytest.approx(10 / 24)


@pytest.mark.parametrize("argv, flag, hint", [
    (["--cc", "7.5", "--bytes", "1MiB"], "--cc", "8.0 or later"),
    (["--gpu", "mi300x", "--bytes", "1MiB"], "--gpu", "cudaAccessPolicyWindow"),
    (["--gpu", "h200", "--cc", "9.0", "--bytes", "1MiB"], "--cc", "not both"),
    (["--gpu", "h200", "--bytes", "1MiB", "--hit-ratio", "1.5"], "--hit-ratio", "1"),
    (["--gpu", "h200", "--bytes", "0"], "--bytes", "greater than zero"),
    (["--gpu", "h200"], "--bytes", "required"),
])
def test_bad_input_exit_2(capsys, argv, flag, hint) -> None:
    code = main(["calc", "l2", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and flag in err and hint in err, err


def test_json_keys(capsys) -> None:
    assert main(["calc", "l2", "--gpu", "h200", "--bytes", "24MiB", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in KEYS:
        assert key in data, key


def test_a_learners_own_record_is_read(tmp_path: Path) -> None:
    own = tmp_path / "hardware" / "measured" / "device"
    own.mkdir(parents=True)
    (own / "h100-sxm-clusters.yaml").write_text(yaml.safe_dump({
        "accelerator": "h100-sxm", "date": "2027-01-01", "hardware": {"name": "NVIDIA H100 80GB HBM3"}, "rows": [],
        "device_attributes": {"l2CacheSize": {"value": 52_428_800}, "persistingL2CacheMaxSize": {"value": 32_768_000},
                              "accessPolicyMaxWindowSize": {"value": 134_217_728}},
    }), encoding="utf-8")
    v = run("l2", {"gpu": "h100", "bytes": "24MiB"}, data_dir=str(tmp_path)).values
    assert v["persisting_l2_max_bytes"] == 32_768_000 and "NVIDIA H100 80GB HBM3" in v["figures_source"]


def test_one_read_is_singular_and_messages_name_fields_not_flags(capsys) -> None:
    result = run("l2", {"gpu": "h200", "bytes": "24MiB", "reuse": "1"})
    saved = dict(result.rows)["DRAM bytes saved"]
    assert "over 1 read:" in saved and "reads" not in saved
    assert "over 8 reads:" in dict(run("l2", {"gpu": "h200", "bytes": "24MiB", "reuse": "8"}).rows)["DRAM bytes saved"]
    # the app shows these too: they name the fields, not the command-line flags
    rows = " ".join(v for _k, v in run("l2", {"cc": "9.0", "bytes": "24MiB"}).rows)
    assert "give a GPU" in rows and "give a set-aside request or a hit ratio" in rows and "--" not in rows
    with pytest.raises(FieldError, match="give a GPU or a compute capability, not both"):
        run("l2", {"gpu": "h200", "cc": "9.0", "bytes": "24MiB"})
