"""Issue 28 (collectives) and issue 26 (peer copies): each case the reviews found, with its source.

Sources:
- the scaling book, Part 2 "TPUs" (wraparound links: v5e/v6e only on an axis of 16, v5p on multiples
  of 4 in full cubes) and Part 3 "Sharding" (AllGather V/W; AllToAll a quarter of an AllGather on a
  bidirectional ring; Pop Quiz 2: a 4-chip v5e all-gather of 32 MiB is 560 us without wraparound,
  680 us measured) - https://jax-ml.github.io/scaling-book/
- nccl-tests doc/PERFORMANCE.md: bus bandwidth factors, compared against the slowest link;
- NCCL src/graph/tuning.cc: per size the tuner picks among ring, tree (a chain inside a node, a
  binary tree across nodes: 2((ppn-1) + log2 nNodes) latency steps) and NVLS;
- ROCm docs, MI300 microarchitecture: seven Infinity Fabric links, one to each peer (128 GB/s
  bidirectional per link); Habana's network configuration page: Gaudi 3 has 3 ports to each peer.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studytui.calc.collective import OPS, Fabric, collective
from studytui.calc.forms import run
from studytui.cli import main
from studytui.core.errors import UsageError

MiB, GiB = 2**20, 2**30


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, out, err = cli(capsys, *argv)
    assert code == 2, (argv, out, err)
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def calc(**args: str) -> dict:
    return run("collective", args).values


# ---- TPU: all-to-all on a ring, wraparound links -----------------------------------------------

def test_tpu_all_to_all_is_a_quarter_of_an_all_gather_on_a_bidirectional_ring() -> None:
    # 16 v5e chips (one full axis: a ring), 4 MiB per chip. The book's V is the whole array, n x the
    # per-rank buffer nccl-tests counts: V / (4 W_ici) = 16 x 4 MiB / (4 x 9e10) = 186 us.
    r = run("collective", {"op": "all_to_all", "gpus": "16", "bytes": "4MiB", "gpu": "tpu-v5e"})
    assert r.values["bandwidth_time_s"] == pytest.approx(16 * 4 * MiB / (4 * 90e9))  # old: 43.69 us (a switch)
    assert r.values["bandwidth_time_s"] == pytest.approx(186.4e-6, rel=1e-3)
    text = " ".join(r.assumptions + [v for _, v in r.rows])
    assert "switch" not in text and "torus" in text  # the notes no longer contradict each other
    # Against an all-gather of all 16 buffers on the same ring: floor(n^2/4) / (n (n-1)) = 64/240, about 1/4
    gather = calc(op="all_gather", gpus="16", bytes="64MiB", gpu="tpu-v5e", latency="0")
    assert r.values["bandwidth_time_s"] / gather["bandwidth_time_s"] == pytest.approx(64 / 240)


def test_tpu_v5e_axis_shorter_than_16_has_no_wraparound() -> None:
    # Pop Quiz 2: AllGather over a 4-chip axis, 2048 x 8192 bf16 = 32 MiB: 3 x 8.4e6 / 4.5e10 = 560 us
    # (the book's profile measured 680 us). The old answer, 279.6 us, assumed a full ring.
    r = run("collective", {"op": "all_gather", "gpus": "4", "bytes": "32MiB", "gpu": "tpu-v5e", "latency": "0"})
    assert r.values["time_s"] == pytest.approx(560e-6, rel=2e-3)
    assert r.values["time_s"] < 680e-6  # a lower bound under the measured profile
    assert r.values["link_bw_per_direction"] == 45e9
    assert any("no wraparound" in a for a in r.assumptions)
    # Part (2): 256 x 256 bf16 is latency-bound: the book estimates 3 hops x 1 us, measured about 8 us
    small = calc(op="all_gather", gpus="4", bytes="128KiB", gpu="tpu-v5e")
    assert small["steps"] == 3 and 3e-6 <= small["time_s"] <= 8e-6


def test_two_tpu_chips_share_one_link() -> None:
    r = calc(op="all_reduce", gpus="2", bytes="1GiB", gpu="tpu-v5e", latency="0")
    assert r["time_s"] == pytest.approx(GiB / 45e9)  # 23.9 ms; old 11.93 ms at 90 GB/s
    assert r["time_s"] == pytest.approx(23.86e-3, rel=1e-3)


def test_tpu_wraparound_rules_per_generation() -> None:
    full = calc(op="all_reduce", gpus="16", bytes="1GiB", gpu="tpu-v5e", latency="0")
    assert full["link_bw_per_direction"] == 90e9 and full["steps"] == 16  # 2 x n/2 hops on a bidirectional ring
    assert calc(op="all_reduce", gpus="8", gpu="tpu-v5e")["link_bw_per_direction"] == 45e9
    assert calc(op="all_reduce", gpus="8", gpu="tpu-v6e")["link_bw_per_direction"] == 90e9
    # v5p: wraparound on multiples of 4 (full cubes), none on 2; no slice has an axis of 6
    assert calc(op="all_reduce", gpus="4", gpu="tpu-v5p")["link_bw_per_direction"] == 180e9
    assert calc(op="all_reduce", gpus="2", gpu="tpu-v5p")["link_bw_per_direction"] == 90e9
    for gpu, gpus in (("tpu-v5p", "6"), ("tpu-v5e", "12"), ("tpu-v5e", "3")):
        with pytest.raises(UsageError, match="no slice has a torus axis"):
            calc(op="all_reduce", gpus=gpus, gpu=gpu)
    # TPU7x: slices of whole 4x4x4 cubes as v5p's (Google's xpk), wraparound assumed as on v5p
    r = run("collective", {"op": "all_reduce", "gpus": "8", "gpu": "tpu7x"})
    assert r.values["link_bw_per_direction"] == 200e9 and any("assumed as on v5p" in a for a in r.assumptions)
    with pytest.raises(UsageError, match="no slice has a torus axis"):
        calc(op="all_reduce", gpus="6", gpu="tpu7x")


# ---- past the scale-up domain --------------------------------------------------------------------

def test_hierarchical_broadcast_spreads_over_every_nic() -> None:
    v = calc(op="broadcast", gpus="16", gpu="h100", bytes="1GiB")
    assert v["network_time_s"] == pytest.approx(GiB / 8 / 50e9)  # M/8 per NIC, as the all-gather tier does
    assert v["time_s"] == pytest.approx(2.7e-3, rel=0.01)  # old: 21.47 ms through one NIC
    assert v["busbw"] <= 8 * 50e9


def test_16_gpu_all_reduce_on_h100_is_network_bound() -> None:
    r = run("collective", {"op": "all_reduce", "gpus": "16", "gpu": "h100", "bytes": "1GiB", "algorithm": "ring"})
    v = r.values
    # A 16-GPU ring over 8 NIC-bound channels: at most 8 x 50 = 400 GB/s (old: 480 GB/s on a 450 GB/s link)
    assert v["busbw"] <= 400e9 and v["busbw"] == pytest.approx(400e9, rel=0.01)
    assert v["busbw_bound"] == 400e9 and v["algorithm"] == "ring"
    assert "ConnectX-7" in v["bottleneck"]
    assert any("network sets the pace" in a for a in r.assumptions)
    assert not any("link sets the pace" in a for a in r.assumptions)


def test_custom_domain_past_which_the_network_binds() -> None:
    v = calc(op="all_gather", gpus="32", link_bw="400GB/s", domain="8", net_bw="20GB/s", latency="0")
    assert v["busbw"] == pytest.approx(min(400e9, 8 * 20e9))


# ---- small messages: the algorithm NCCL would pick -----------------------------------------------

def test_small_all_reduce_on_gb200_uses_nvls() -> None:
    r = run("collective", {"op": "all_reduce", "gpus": "64", "gpu": "gb200", "bytes": "8KiB"})
    v = r.values
    # NVLS costs NCCL's tuner figure per call (25 us, src/graph/tuning.cc), not ring steps; on 64
    # GPUs a ring's 126 steps cost more than that, so NVLS wins even at 8 KiB
    assert v["algorithm"] == "nvls" and v["steps"] == 0  # old: 2 steps, 2 us
    assert v["time_s"] == pytest.approx(25e-6, rel=0.01)
    assert v["algorithm_times_s"]["ring"] == pytest.approx(126e-6, rel=0.01)
    assert any(label == "algorithm" and "nvls" in text for label, text in r.rows)
    ring = calc(op="all_reduce", gpus="64", gpu="gb200", bytes="8KiB", algorithm="ring")
    assert ring["algorithm"] == "ring" and ring["steps"] == 126 and ring["algorithm_chosen_by"] == "given"


def test_tree_has_log_steps_across_domains_and_a_chain_inside() -> None:
    # one GPU per domain: 2 log2(n) steps, as NCCL's tree across nodes
    v = calc(op="all_reduce", gpus="16", link_bw="50GB/s", domain="1", net_bw="50GB/s", bytes="8KiB")
    assert v["algorithm"] == "tree" and v["steps"] == 2 * 4
    # A100 has no NVLS, and inside one node NCCL's tree is a chain: the ring stays
    a100 = calc(op="all_reduce", gpus="8", gpu="a100", bytes="8KiB")
    assert a100["algorithm"] == "ring" and a100["steps"] == 14
    # two H100 nodes at 8 KiB: NCCL's NVLS tree costs 25 + 2 x 20.9 us a call, so the tree wins
    # (a chain of 7 in each node, one level across: 2 x (7 + 1) steps)
    h100 = calc(op="all_reduce", gpus="16", gpu="h100", bytes="8KiB")
    assert h100["algorithm"] == "tree" and h100["steps"] == 16
    assert h100["algorithm_times_s"]["nvls"] == pytest.approx(25e-6 + 2 * 20.9e-6, rel=0.01)
    big_result = run("collective", {"op": "all_reduce", "gpus": "16", "gpu": "h100", "bytes": "1GiB"})
    big = big_result.values
    # at 1 GiB the NVLS tree's bound wins (the switch reduces inside each node; between two nodes
    # the tree is a chain, M / d each way per NIC) and the result warns how far below it NVLS runs
    assert big["algorithm"] == "nvls" and big["network_bytes"] == pytest.approx(GiB / 8)
    assert any("nccl-tests#212" in w for w in big_result.warnings)


def test_algorithm_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "calc", "collective", "--gpu", "a100", "--algorithm", "nvls")
    assert "--algorithm" in line and "NVSwitch" in line
    line = refused(capsys, "calc", "collective", "--gpu", "h100", "--op", "all_gather", "--algorithm", "tree")
    assert "--algorithm" in line and "available" in line
    line = refused(capsys, "calc", "collective", "--gpu", "h100", "--gpus", "16", "--op", "all_gather", "--algorithm", "nvls")
    assert "--algorithm" in line and "CollNet" in line
    line = refused(capsys, "calc", "collective", "--gpu", "tpu-v5e", "--gpus", "16", "--algorithm", "tree")
    assert "--algorithm" in line and "ring" in line
    line = refused(capsys, "calc", "collective", "--op", "all_to_all", "--algorithm", "ring")
    assert "--algorithm" in line and "not used" in line
    line = refused(capsys, "calc", "collective", "--algorithm", "bogus")
    assert "--algorithm" in line and "auto" in line


def test_transformer_tp_uses_the_collective_model() -> None:
    # DeepSeek-V3, TP8, batch 1: 61 x 2 all-reduces of 7168 bf16 activations (14 kB). NVLS would cost
    # NCCL's 25 us a call, so a ring's 14 x 1 us wins, and the step is communication-bound (122 x 14 us
    # = 1.7 ms against 1.2 ms of memory), as NCCL's own latencies say (ring LL 15 us at 8 GPUs).
    t = run("transformer", {"model": "deepseek-v3", "gpu": "h200", "tp": "8", "phase": "decode", "batch": "1",
                            "context": "4096", "weight_dtype": "fp8"})
    assert any(label == "bound (with comms)" and text.startswith("communication") for label, text in t.rows)
    t = t.values
    assert t["tp_all_reduce_algorithm"] == "ring" and t["bound"] == "communication"
    assert t["comm_time_s"] == pytest.approx(122 * t["all_reduce_time_s"])
    one = calc(op="all_reduce", gpus="8", gpu="h200", bytes=str(t["all_reduce_bytes"]))
    assert t["all_reduce_time_s"] == pytest.approx(one["time_s"])  # one model, one place
    ring = run("transformer", {"model": "deepseek-v3", "gpu": "a100", "tp": "8", "phase": "decode", "batch": "1",
                               "context": "4096"}).values
    assert ring["tp_all_reduce_algorithm"] == "ring"


# ---- point-to-point meshes -------------------------------------------------------------------------

def test_mi300x_reaches_one_link_per_peer() -> None:
    four = calc(op="all_to_all", gpus="4", gpu="mi300x", bytes="1GiB", latency="0")
    assert four["link_bw_per_direction"] == 3 * 64e9  # 192 GB/s, not 448
    assert four["time_s"] == pytest.approx(4.19e-3, rel=2e-3)  # old 1.80 ms
    two = calc(op="all_reduce", gpus="2", gpu="mi300x", bytes="1GiB", latency="0")
    assert two["time_s"] == pytest.approx(16.8e-3, rel=2e-3)  # issue 26: old 2.4 ms
    assert calc(op="all_reduce", gpus="8", gpu="mi300x")["link_bw_per_direction"] == 448e9
    assert calc(op="all_reduce", gpus="4", gpu="gaudi3")["link_bw_per_direction"] == 3 * 75e9
    override = calc(op="all_reduce", gpus="2", gpu="mi300x", link_bw="100GB/s")
    assert override["link_bw_per_direction"] == 100e9  # a given link is used as given


# ---- peer copies (issue 26) ----------------------------------------------------------------------

def test_peer_copy_is_bytes_over_the_one_way_rate_plus_latency(capsys: pytest.CaptureFixture[str]) -> None:
    h100 = calc(op="peer_copy", gpu="h100", bytes="1GiB")
    assert h100["time_s"] == pytest.approx(GiB / 450e9 + 1e-6) and h100["gpus"] == 2
    assert h100["busbw"] == h100["algbw"]  # nccl-tests sendrecv
    assert calc(op="peer_copy", gpu="mi300x", bytes="1GiB", latency="0")["time_s"] == pytest.approx(GiB / 64e9)
    assert calc(op="peer_copy", gpu="h100-pcie", bytes="1GiB", latency="0")["time_s"] == pytest.approx(GiB / 300e9)
    assert calc(op="peer_copy", gpu="tpu-v5e", bytes="1GiB", latency="0")["time_s"] == pytest.approx(GiB / 45e9)
    code, out, _ = cli(capsys, "calc", "collective", "--op", "peer_copy", "--gpu", "h200", "--bytes", "256MiB", "--json")
    assert code == 0 and json.loads(out)["op"] == "peer_copy"
    line = refused(capsys, "calc", "collective", "--op", "peer_copy", "--gpus", "4")
    assert "--gpus" in line and "2 GPUs" in line
    line = refused(capsys, "calc", "collective", "--op", "peer_copy", "--gpu", "h100", "--net-bw", "50GB/s")
    assert "--net-bw" in line


# ---- property: no collective's bus bandwidth exceeds its slowest tier --------------------------------

LINKED = ["h100", "h200", "b200", "gb200", "a100", "h100-pcie", "mi300x", "mi355x", "gaudi3", "tpu-v5e", "tpu-v6e", "tpu-v5p",
          "trainium2"]


def _tier_bound(v: dict) -> float:
    """The bus bandwidth the slowest tier allows, from the result's own rates."""
    op, n = v["op"], v["gpus"]
    if not v["hierarchical"]:
        if v["algorithm"] == "nvls" and op == "all_reduce":
            # in-switch reduction: each GPU moves M each way, not 2(n-1)/n x M, so bus bandwidth can
            # reach 2(n-1)/n x the link (at NCCL's efficiency, below 1)
            return v["link_bw_per_direction"] * 2 * (n - 1) / n
        return v["link_bw_per_direction"]
    link, net = v["link_bw_per_direction"], v["net_bw_per_direction"]
    # each tier's bytes per GPU over its rate is a floor on the time: busbw <= bus x M / that
    bus = v["busbw"] / v["algbw"]
    floor = max(v["scale_up_bytes"] / link, v["network_bytes"] / net)
    return bus * v["bytes"] / floor


@settings(max_examples=300, deadline=None)
@given(op=st.sampled_from(OPS), gpu=st.sampled_from(LINKED), k=st.integers(1, 16), small=st.integers(2, 16),
       nbytes=st.sampled_from(["8KiB", "1MiB", "64MiB", "1GiB", "16GiB"]), latency=st.sampled_from(["0", "1us", "20us"]),
       algorithm=st.sampled_from(["auto", "auto", "ring", "tree", "nvls"]))
def test_bus_bandwidth_never_exceeds_the_slowest_tier(op: str, gpu: str, k: int, small: int, nbytes: str, latency: str,
                                                       algorithm: str) -> None:
    from studytui.calc.hardware import load_catalog
    from studytui.core.errors import UsageError

    acc = load_catalog().get(gpu)
    domain = acc.axis_max_chips or acc.domain_size or 8
    gpus = small if small <= domain else domain * k
    args = {"op": op, "gpus": str(gpus), "gpu": gpu, "bytes": nbytes, "latency": latency, "algorithm": algorithm}
    if op in ("all_to_all", "peer_copy"):
        args["algorithm"] = "auto"
    try:
        v = run("collective", args).values
    except UsageError:
        return  # refused with a reason (no network known, not a whole number of domains, an algorithm it lacks)
    assert v["busbw"] <= _tier_bound(v) * (1 + 1e-9), v
    assert v["busbw"] <= v.get("busbw_bound", float("inf")) * (1 + 1e-9)
    if v["hierarchical"]:
        assert v["network_bytes"] / v["time_s"] <= v["net_bw_per_direction"] * (1 + 1e-9)
        assert v["scale_up_bytes"] / v["time_s"] <= v["link_bw_per_direction"] * (1 + 1e-9)
    if v["algorithm"] != "copy" and algorithm == "auto" and op not in ("all_to_all",):
        assert v["time_s"] == pytest.approx(min(v["algorithm_times_s"].values()))


@settings(max_examples=300, deadline=None)
@given(op=st.sampled_from(OPS[:5]), d=st.integers(1, 16), k=st.integers(1, 16), link=st.floats(1e9, 1e13), net=st.floats(1e8, 1e12),
       nbytes=st.floats(1.0, 1e12), latency=st.floats(0, 1e-4), nvls=st.booleans())
def test_custom_fabrics_respect_their_tiers(op: str, d: int, k: int, link: float, net: float, nbytes: float, latency: float,
                                            nvls: bool) -> None:
    n = d * k
    if n < 2:
        return
    v = collective(op, n, nbytes, latency=latency, fabric=Fabric(link, domain=d, net_bw=net, nvls=nvls)).values
    assert v["time_s"] >= v["bandwidth_time_s"] > 0
    assert v["busbw"] <= _tier_bound(v) * (1 + 1e-9)
