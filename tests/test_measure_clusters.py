"""`studytui measure --clusters` with a fake GPU: the H200's recorded answers played back.

The fake answers cudaOccupancyMaxActiveClusters from content/hardware/measured/device/
h200-sxm-clusters.yaml and blocks per SM from the occupancy calculator, so the pipeline
(configurations, queries, checks, the record, the calculators reading it) is tested on the CPU;
benchmarks/gpu/README.md says how the real path was checked on an H200.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from studytui.calc.forms import run
from studytui.calc.occupancy import blocks_per_sm, get_cc
from studytui.cli import main

ROOT = Path(__file__).resolve().parents[1]
H200 = yaml.safe_load((ROOT / "content" / "hardware" / "measured" / "device" / "h200-sxm-clusters.yaml").read_text(encoding="utf-8"))
TABLE = {(r["size"], r["blocks_per_sm"]): r["max_active_clusters"] for r in H200["rows"]}


class FakeClusterBackend:
    def __init__(self, *, cc: str = "9.0", lie: bool = False) -> None:
        self.cc, self.lie = cc, lie
        self.queries = 0

    def describe(self) -> dict[str, Any]:
        return {"name": "NVIDIA H200", "compute_capability": self.cc, "sm_count": 132, "memory_bytes": 150109880320,
                "driver_api": 13000,
                "attributes": {"l2CacheSize": 62914560, "persistingL2CacheMaxSize": 39321600, "accessPolicyMaxWindowSize": 134217728,
                               "multiProcessorCount": 132, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472}}

    def kernel(self) -> dict[str, int]:
        return {"num_regs": 10, "static_smem": 0}

    def blocks_per_sm(self, threads: int, dyn_smem: int) -> int:
        return blocks_per_sm(get_cc("9.0"), threads, 10, 0, dyn_smem).blocks

    def max_active_clusters(self, threads: int, dyn_smem: int, dims: tuple[int, int, int], nonportable: bool) -> int | str:
        self.queries += 1
        size = dims[0] * dims[1] * dims[2]
        if size > 8 and not nonportable:
            return "a kernel launch error has occurred due to cluster misconfiguration"
        return TABLE[(size, self.blocks_per_sm(threads, dyn_smem))]

    def max_potential_cluster_size(self, nonportable: bool) -> int:
        return 16 if nonportable else 8

    def residency(self, dyn_smem: int, size: int, clusters: int, timeout_ns: int) -> dict[str, Any]:
        fit = TABLE[(size, 1)] + (1 if self.lie else 0)
        blocks = clusters * size
        late = 0 if clusters <= fit else blocks - fit * size
        return {"blocks": blocks, "arrived": blocks, "blocks_timed_out": late if clusters > fit else 0, "status": "no error"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeClusterBackend:
    backend = FakeClusterBackend()
    monkeypatch.setattr("studytui.cli.commands.measure._cluster_backend", lambda: backend)
    return backend


def test_the_record_equals_the_h200_table_and_the_calculators_read_it(fake, tmp_path: Path, capsys) -> None:
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "measure", "--clusters"]) == 0
    out = capsys.readouterr().out
    path = data / "hardware" / "measured" / "device" / "h200-sxm-clusters.yaml"
    assert path.is_file() and "record written" in out
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key in ("hardware", "workload", "precision", "baseline", "correctness"):
        assert record[key], key
    assert record["correctness"]["passed"] and record["correctness"]["residency_all_sizes_exact"]
    assert record["nonportable_without_attribute"]["sizes"] == list(range(9, 17))
    got = {(r["size"], r["blocks_per_sm"]): r["max_active_clusters"] for r in record["rows"]}
    assert got == TABLE  # every (size, blocks per SM) the H200 answered, the same answers
    assert "66 clusters of 2" in out and "7 clusters of 12" in out
    # the calculators use the learner's record (the same figures here)
    v = run("occupancy", {"gpu": "h200", "threads": "64", "regs": "10", "dyn_smem": "227KiB", "cluster": "12", "non_portable": "true"},
            data_dir=str(data)).values
    assert v["max_active_clusters"] == 7 and v["max_active_clusters_record"] == str(path)
    assert run("l2", {"gpu": "h200", "bytes": "24MiB"}, data_dir=str(data)).values["persisting_l2_max_bytes"] == 39321600


def test_json_and_out_file(fake, tmp_path: Path, capsys) -> None:
    out = tmp_path / "mine.yaml"
    assert main(["measure", "--clusters", "--out", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["record"] == str(out) and data["correctness"]["passed"] and data["rows"] > 700
    assert data["device_attributes"]["persistingL2CacheMaxSize"]["value"] == 39321600


def test_a_wrong_answer_fails_the_residency_check(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setattr("studytui.cli.commands.measure._cluster_backend", lambda: FakeClusterBackend(lie=True))
    code = main(["measure", "--clusters", "--out", str(tmp_path / "r.yaml")])
    assert code == 1 and "FAILED" in capsys.readouterr().out
    record = yaml.safe_load((tmp_path / "r.yaml").read_text(encoding="utf-8"))
    assert record["correctness"]["passed"] is False


def test_no_gpu_exits_2_with_one_line(monkeypatch, capsys) -> None:
    from studytui.measure.backend import BackendUnavailable

    def missing():
        raise BackendUnavailable("no CUDA driver (libcuda) here")

    monkeypatch.setattr("studytui.measure.cuda_driver.make_cluster_backend", missing)
    code = main(["measure", "--clusters"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "needs an NVIDIA GPU" in err


def test_a_gpu_before_hopper_is_refused(monkeypatch, capsys) -> None:
    monkeypatch.setattr("studytui.cli.commands.measure._cluster_backend", lambda: FakeClusterBackend(cc="8.0"))
    code = main(["measure", "--clusters", "--out", "/nonexistent/x.yaml"])
    assert code == 2 and "9.0 or later" in capsys.readouterr().err


def test_clusters_with_benchmark_flags_is_refused(fake, capsys) -> None:
    assert main(["measure", "--clusters", "--quick"]) == 2
    assert "--clusters records cluster capacity only" in capsys.readouterr().err


def test_the_real_path_recorded_on_an_h200_equals_the_content_table() -> None:
    """benchmarks/gpu/check_measure_clusters.py ran the ctypes backend on an H200 (driver 580.159.04):
    every configuration gave the answer capture_clusters.cu recorded, and the residency check passed."""
    real = json.loads((ROOT / "benchmarks" / "gpu" / "records" / "2026-12-02-measure-clusters-h200.json").read_text(encoding="utf-8"))
    assert real["hardware"]["name"] == "NVIDIA H200" and real["correctness"]["passed"] is True
    key = lambda r: (tuple(r["cluster"]), r["threads"], r["dyn_smem"])  # noqa: E731
    assert {key(r): (r["blocks_per_sm"], r["max_active_clusters"]) for r in real["rows"]} == {
        key(r): (r["blocks_per_sm"], r["max_active_clusters"]) for r in H200["rows"]}
    assert real["device_attributes"]["persistingL2CacheMaxSize"]["value"] == 39321600
