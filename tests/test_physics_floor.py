"""The "physically impossible" check uses hard limits (vendor peaks), never a measured profile.

Measured on a real H200 (benchmarks/gpu/README.md): a correct bf16 8192^3 GEMM took 1.388 ms,
faster than the shipped profile's sustained 714 TFLOP/s allows (1.54 ms) but slower than the
vendor-peak floor 2*8192^3 / 989.4e12 = 1.111 ms. It must be reported as possible.
"""

from __future__ import annotations

import json

from studytui.cli import main

ARGS = ["calc", "gemm", "--m", "8192", "--n", "8192", "--k", "8192", "--gpu", "h200", "--json"]


def _run(capsys, *extra: str) -> dict:
    assert main(ARGS + list(extra)) == 0
    return json.loads(capsys.readouterr().out)


def test_faster_than_measured_profile_is_still_possible(capsys):
    out = _run(capsys, "--profile", "measured", "--time", "1.388ms")
    assert out["physically_possible"] is True
    assert out["roofline_fraction"] > 1.0  # beats the sustained (measured) roof
    assert any("sustained rate" in w for w in out.get("warnings", []))


def test_below_vendor_floor_is_impossible_with_either_profile(capsys):
    for profile in ("vendor", "measured"):
        out = _run(capsys, "--profile", profile, "--time", "1.0ms")
        assert out["physically_possible"] is False, profile


def test_vendor_profile_unchanged(capsys):
    out = _run(capsys, "--time", "1.388ms")
    assert out["physically_possible"] is True
    assert 0.79 < out["roofline_fraction"] < 0.81  # 1.111 ms / 1.388 ms
