"""Collectives and peer copies: a bandwidth term at the ONE-WAY link rate plus steps x latency.

Every collective is timed under each algorithm NCCL could run it with (ring; tree for all-reduce;
NVLink SHARP where the system has it), and the fastest one at this size is shown, as NCCL's tuner
picks one per size; `algorithm` names one instead. All-to-all is a direct exchange (NCCL send and
receive), and a peer copy is one GPU sending to one other.

Inside one scale-up domain (an NVLink/NVSwitch box, an Infinity Fabric or Gaudi mesh, a torus
axis) the rate is the GPU's one-way link rate, with two refinements the topology forces:
- a fully connected point-to-point mesh (MI300X, Gaudi 3) gives one link per peer, so a group of
  g GPUs reaches (g-1) x the per-peer rate, not the GPU's total;
- a TPU torus axis is a bidirectional ring only where it has a wraparound link (v5e and v6e: an
  axis of 16; v5p: multiples of 4); without one it is a line and every collective takes twice as
  long (the end chips have one link).

Past the domain, NCCL's rings cross domains through the network: with one NIC per GPU and one
ring channel per NIC, the domain's d NICs carry the ring at d x the per-GPU network rate, and
the ring runs at min(link, d x network). Bus bandwidth therefore never exceeds the slowest tier.

Byte conventions follow nccl-tests ("size" column): all_reduce and reduce_scatter count the
input buffer, all_gather the gathered output, all_to_all the buffer each rank sends and receives
(its own share included), broadcast the buffer, peer_copy the tensor (as sendrecv). Bus bandwidth =
algorithm bandwidth x factor, the number nccl-tests prints to compare against the link.
"""

from __future__ import annotations

import math
from typing import Any

from studytui.calc.forms import PROFILE, CalcSpec, DataDir, FieldSpec, ceilings_for
from studytui.calc.result import Result
from studytui.calc.units import FieldError, format_percent, format_rate, format_size, format_time
from studytui.core.records import FrozenRecord


def g(x: float) -> str:
    return f"{x:.4g}"


OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "peer_copy")
ALGORITHMS = ("auto", "ring", "tree", "nvls")
NCCL_TUNING = "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING prints the algorithm NCCL picked for each call"


# The records here are plain classes (studytui.core.records), not dataclasses or typed named tuples:
# on Python 3.11 their generated code costs up to a millisecond each time this module is imported (issue 27).
class Fabric(FrozenRecord):
    """Where a collective runs: the scale-up link, the domain it reaches, the network past it."""

    __slots__ = ("link_bw", "link_label", "link_name", "domain", "net_bw", "net_label", "net_name", "net_source", "axis_source",
                 "axis_max_chips", "nvls", "torus_axis", "catalog_link", "measured_gpus", "measured_note", "peer_bw",
                 "peer_source", "wrap_multiple", "wrap_source")

    link_bw: float  # per GPU, one way (B/s)
    link_label: str  # provenance of link_bw
    link_name: str
    domain: int | None  # GPUs one scale-up domain holds; None: not known
    net_bw: float | None  # scale-out network per GPU, one way (B/s)
    net_label: str
    net_name: str
    net_source: str
    axis_source: str
    axis_max_chips: int | None
    nvls: bool  # NVLink SHARP (in-switch reduction) exists on this system
    torus_axis: bool  # the link figure is a ring along one torus axis (TPU)
    catalog_link: bool  # link_bw was derived from a bidirectional catalog figure
    measured_gpus: int | None  # link_bw was measured on this many GPUs
    measured_note: str  # which measured figure was used, and why
    peer_bw: float | None  # fully connected point-to-point mesh: the link(s) to ONE peer, one way (B/s)
    peer_source: str
    wrap_multiple: int | None  # torus: an axis has its wraparound link when its length is a multiple of this
    wrap_source: str

    def __init__(
        self,
        link_bw: float,
        link_label: str = "",
        link_name: str = "scale-up link",
        domain: int | None = None,
        net_bw: float | None = None,
        net_label: str = "",
        net_name: str = "scale-out network",
        net_source: str = "",
        axis_source: str = "",
        axis_max_chips: int | None = None,
        nvls: bool = False,
        torus_axis: bool = False,
        catalog_link: bool = False,
        measured_gpus: int | None = None,
        measured_note: str = "",
        peer_bw: float | None = None,
        peer_source: str = "",
        wrap_multiple: int | None = None,
        wrap_source: str = "",
    ) -> None:
        object.__setattr__(self, "link_bw", link_bw)
        object.__setattr__(self, "link_label", link_label)
        object.__setattr__(self, "link_name", link_name)
        object.__setattr__(self, "domain", domain)
        object.__setattr__(self, "net_bw", net_bw)
        object.__setattr__(self, "net_label", net_label)
        object.__setattr__(self, "net_name", net_name)
        object.__setattr__(self, "net_source", net_source)
        object.__setattr__(self, "axis_source", axis_source)
        object.__setattr__(self, "axis_max_chips", axis_max_chips)
        object.__setattr__(self, "nvls", nvls)
        object.__setattr__(self, "torus_axis", torus_axis)
        object.__setattr__(self, "catalog_link", catalog_link)
        object.__setattr__(self, "measured_gpus", measured_gpus)
        object.__setattr__(self, "measured_note", measured_note)
        object.__setattr__(self, "peer_bw", peer_bw)
        object.__setattr__(self, "peer_source", peer_source)
        object.__setattr__(self, "wrap_multiple", wrap_multiple)
        object.__setattr__(self, "wrap_source", wrap_source)


class Tier(FrozenRecord):
    """What each GPU moves over one tier (the scale-up link, the network), as a multiple of the
    message, and the one-way rate it has there."""

    __slots__ = ("name", "factor", "rate", "formula")

    name: str
    factor: float  # bytes per GPU over this tier / the message's bytes
    rate: float
    formula: str

    def __init__(
        self,
        name: str,
        factor: float,
        rate: float,
        formula: str,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "factor", factor)
        object.__setattr__(self, "rate", rate)
        object.__setattr__(self, "formula", formula)


class Plan(FrozenRecord):
    """One algorithm's cost: its tiers (the slowest sets the bandwidth term) and its latency steps."""

    __slots__ = ("algorithm", "label", "tiers", "steps", "steps_formula", "fixed_s", "fixed_formula")

    algorithm: str  # ring, tree, nvls, direct, copy
    label: str
    tiers: tuple[Tier, ...]
    steps: int
    steps_formula: str
    fixed_s: float  # a cost per call that is not steps x --latency (NVLS: NCCL's tuner constant)
    fixed_formula: str

    def __init__(
        self,
        algorithm: str,
        label: str,
        tiers: tuple[Tier, ...],
        steps: int,
        steps_formula: str,
        fixed_s: float = 0.0,
        fixed_formula: str = "",
    ) -> None:
        object.__setattr__(self, "algorithm", algorithm)
        object.__setattr__(self, "label", label)
        object.__setattr__(self, "tiers", tiers)
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "steps_formula", steps_formula)
        object.__setattr__(self, "fixed_s", fixed_s)
        object.__setattr__(self, "fixed_formula", fixed_formula)

    def latency_time(self, latency: float) -> float:
        return self.steps * latency + self.fixed_s

    def time(self, nbytes: float, latency: float) -> float:
        return max(t.factor * nbytes / t.rate for t in self.tiers) + self.latency_time(latency)

    def latency_text(self, latency: float) -> str:
        """The latency term as the steps show it."""
        if self.fixed_s and not self.steps:
            return f"latency term = {self.fixed_formula} = {format_time(self.fixed_s)}"
        return (f"latency term = steps x latency = {_steps(self)}{self.steps} x {format_time(latency)} = "
                f"{format_time(self.latency_time(latency))}")

    def latency_row(self, latency: float) -> str:
        if self.fixed_s and not self.steps:
            return f"{format_time(self.fixed_s)} (NCCL's tuner cost for NVLS per call; --latency does not apply)"
        return f"{format_time(self.latency_time(latency))} ({self.steps} steps x {format_time(latency)})"


# NCCL's tuner (src/graph/tuning.cc, hwLatencies, NVLS and NVLSTree with the Simple protocol, the
# only one they run): 25 us per call inside an NVLink domain, 20.9 us per network level of NVLS tree
# (latency = 25 + 2 log2(nodes) x 20.9). A ring or tree step with LL costs 0.6 us on NVLink there,
# so at small sizes NCCL keeps a ring or tree, not NVLS.
NVLS_CALL_S = 25e-6
NVLS_TREE_LEVEL_S = 20.9e-6
NVLS_SOURCE = "NCCL src/graph/tuning.cc hwLatencies (NVLS Simple)"


def _nvls_modelled(fabric: Fabric) -> bool:
    """NVLS is one of the algorithms to compare: the system has it, and the link figure is a link
    rate, not a measured all-reduce (whose bus bandwidth is already what NCCL's choice reached)."""
    return fabric.nvls and fabric.measured_gpus is None and not fabric.measured_note


# What NVLS reaches, measured (a bound is not a forecast): on 8 H100 NCCL's ring gets about 370 GB/s
# of the 450 GB/s line rate and NVLS all-reduce about 480 GB/s bus bandwidth (NCCL's maintainer,
# NVIDIA/nccl-tests issue #212); on 8 B300 users report 695 GB/s by ring and 845 GB/s by NVLS
# (NVIDIA/nccl issue #2140).
NVLS_MEASURED = ("a bound: NVLS all-reduce measures ~480 GB/s busbw on 8 H100 (ring ~370; NVIDIA/nccl-tests#212), "
                 "~430 GB/s on 2 nodes of 8 H100 (NVIDIA/nccl#1221), ~845 GB/s on 8 B300 (NVIDIA/nccl#2140)")


def bus_factor(op: str, n: int) -> tuple[float, str]:
    """nccl-tests' factor from algorithm to bus bandwidth (doc/PERFORMANCE.md)."""
    if op == "all_reduce":
        return 2 * (n - 1) / n, "2(n-1)/n"
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n, "(n-1)/n"
    return 1.0, "1"  # broadcast; peer_copy counts as sendrecv


def _steps(plan: Plan) -> str:
    """The steps' formula before their number, where there is one ("2(n-1) = ")."""
    return "" if plan.steps_formula == str(plan.steps) else f"{plan.steps_formula} = "


def _log2(k: int) -> int:
    return math.ceil(math.log2(k)) if k > 1 else 0


def _wraps(fabric: Fabric, n: int) -> bool | None:
    """Whether a torus axis of n chips closes into a ring; None: the catalog does not say."""
    if n <= 2:
        return False  # two chips share one link, wraparound or not
    if fabric.wrap_multiple is None:
        return None
    return n % fabric.wrap_multiple == 0


def _axis_exists(fabric: Fabric, n: int) -> bool:
    """Whether some slice has a torus axis of n chips. Slices are built of whole blocks whose axes are
    powers of 2 (v5e/v6e: 1x1 to 16x16; v5p: 2x2x1, 2x2x2, 2x4x4, then whole 4x4x4 cubes), so an
    axis is a power of 2 up to the wraparound length, or a multiple of it. Unknown: not refused."""
    m = fabric.wrap_multiple
    if m is None:
        return True
    return (n & (n - 1) == 0 and n <= m) or n % m == 0


def scale_up_rate(fabric: Fabric, group: int) -> tuple[float, str]:
    """One-way rate per GPU for a collective over `group` GPUs inside one scale-up domain, and why."""
    if fabric.torus_axis:
        wraps = _wraps(fabric, group)
        if wraps is False:
            why = ("two chips share one ICI link" if group <= 2
                   else f"a {group}-chip axis has no wraparound link, so it is a line whose end chips have one link")
            return fabric.link_bw / 2, f"one link, one way: {why}"
        if wraps is None:
            return fabric.link_bw, "both links of the axis, one way each, assuming a wraparound link closes the ring"
        return fabric.link_bw, "both links of the axis, one way each: a bidirectional ring closed by its wraparound link"
    if fabric.peer_bw and (group - 1) * fabric.peer_bw < fabric.link_bw:
        return (group - 1) * fabric.peer_bw, (f"{group - 1} peer link{'s' if group > 2 else ''} x {format_rate(fabric.peer_bw)}: "
                                              "one link per peer in a point-to-point mesh")
    return fabric.link_bw, ""


def _flat_plans(op: str, n: int, fabric: Fabric) -> tuple[list[Plan], float, str]:
    """The algorithms for n GPUs inside one scale-up domain (or a torus axis), and the link rate."""
    rate, why = scale_up_rate(fabric, n)
    name = fabric.link_name
    m = "M"
    if fabric.torus_axis:
        wraps = _wraps(fabric, n) is not False
        hops, hops_f = (n // 2, "floor(n/2)") if wraps else (n - 1, "n-1")
        shape = "bidirectional ring along one torus axis" if wraps else "a line along one torus axis, no wraparound"
        if op == "all_reduce":
            return [Plan("ring", shape, (Tier(name, 2 * (n - 1) / n, rate, f"2(n-1)/n x {m}"),), 2 * hops, f"2 x {hops_f}")], rate, why
        if op in ("all_gather", "reduce_scatter"):
            return [Plan("ring", shape, (Tier(name, (n - 1) / n, rate, f"(n-1)/n x {m}"),), hops, hops_f)], rate, why
        if op == "all_to_all":
            # Each chip's piece for the chip k hops away crosses k links, the shorter way round (or
            # the only way, on a line): the middle link of a line carries floor(n^2/4) pieces of M/n
            # each way over one link; a ring spreads them over its two links (the scaling book: a
            # quarter of an all-gather).
            chunks = (n * n // 4) / n
            return [Plan("ring", shape, (Tier(name, chunks, rate, f"floor(n^2/4)/n x {m}"),), hops, hops_f)], rate, why
        if op == "broadcast":
            return [Plan("ring", "pipelined chain along one torus axis", (Tier(name, 1.0, rate, m),), n - 1, "n-1")], rate, why
    if op == "all_reduce":
        ring = Plan("ring", "ring", (Tier(name, 2 * (n - 1) / n, rate, f"2(n-1)/n x {m}"),), 2 * (n - 1), "2(n-1)")
        tree = Plan("tree", "tree: a chain inside the domain", (Tier(name, 2.0, rate, f"2 x {m}"),), 2 * (n - 1), "2(n-1)")
        plans = [ring, tree]
        if _nvls_modelled(fabric):
            # Each GPU sends its buffer to the switch once (which reduces it) and receives the sum once
            # (multicast): at most M each way instead of a ring's 2(n-1)/n x M. A bound, as the
            # ring's line rate is; what NVLS reaches is far below it (NVLS_MEASURED).
            plans.append(Plan("nvls", "NVLS: NVLink SHARP reduces in the switch",
                              (Tier(name, 1.0, rate, "M (the switch reduces: each GPU sends and receives the buffer once)"),), 0, "0",
                              NVLS_CALL_S, "NCCL's NVLS cost per call"))
        return plans, rate, why
    if op in ("all_gather", "reduce_scatter"):
        ring = Plan("ring", "ring", (Tier(name, (n - 1) / n, rate, f"(n-1)/n x {m}"),), n - 1, "n-1")
        plans = [ring]
        if _nvls_modelled(fabric):
            what = "multicasts" if op == "all_gather" else "reduces"
            plans.append(ring._replace(algorithm="nvls", label=f"NVLS: NVLink SHARP {what} in the switch", steps=0, steps_formula="0",
                                 fixed_s=NVLS_CALL_S, fixed_formula="NCCL's NVLS cost per call"))
        return plans, rate, why
    if op == "all_to_all":
        return [Plan("direct", "direct exchange", (Tier(name, (n - 1) / n, rate, f"(n-1)/n x {m}"),), n - 1, "n-1")], rate, why
    if op == "broadcast":
        return [Plan("ring", "pipelined ring", (Tier(name, 1.0, rate, m),), n - 1, "n-1")], rate, why
    raise FieldError("op", f"unknown collective {op!r}; accepted: {', '.join(OPS)}")


def _cross_plans(op: str, n: int, d: int, fabric: Fabric, net_bw: float) -> list[Plan]:
    """The algorithms for n = k x d GPUs over k scale-up domains joined by the network."""
    k = n // d
    link, _why = scale_up_rate(fabric, d)
    up, net = fabric.link_name, fabric.net_name
    # NCCL's rings cross each domain boundary once per channel; with one NIC per GPU and one channel
    # per NIC, the domain's d NICs carry the ring at d x the per-GPU rate: each GPU's NIC moves 1/d
    # of the ring's bytes. The ring's bytes are all counted on the scale-up link too.
    if op == "all_reduce":
        ring = Plan("ring", "ring across domains", (Tier(up, 2 * (n - 1) / n, link, "2(n-1)/n x M"),
                                                   Tier(net, 2 * (n - 1) / n / d, net_bw, "2(n-1)/n x M / d")), 2 * (n - 1), "2(n-1)")
        # Between two domains NCCL's tree is a chain: the reduce crosses one way and the broadcast
        # the other, M / d each way per GPU; past two, the binary tree's middle ranks carry twice that.
        net_tier = Tier(net, 1.0 / d, net_bw, "M / d (two domains: a chain, once each way)") if k == 2 else \
            Tier(net, 2.0 / d, net_bw, "2 x M / d")
        tree_tiers = (Tier(up, 2.0, link, "2 x M"), net_tier)
        nvls_tiers = (Tier(up, 1.0, link, "M (the switch reduces)"), net_tier)
        plans = [ring, Plan("tree", "tree: a chain in each domain, a binary tree across", tree_tiers,
                            2 * ((d - 1) + _log2(k)), "2((d-1) + ceil(log2 k))")]
        if _nvls_modelled(fabric):
            levels = _log2(k)
            plans.append(Plan("nvls", "NVLS tree: NVLink SHARP in each domain, a binary tree across", nvls_tiers, 0, "0",
                              NVLS_CALL_S + 2 * levels * NVLS_TREE_LEVEL_S,
                              f"NCCL's NVLS tree cost per call, 25 us + 2 x ceil(log2 k) x 20.9 us = 25 us + 2 x {levels} x 20.9 us"))
        return plans
    if op in ("all_gather", "reduce_scatter"):
        return [Plan("ring", "ring across domains", (Tier(up, (n - 1) / n, link, "(n-1)/n x M"),
                                                    Tier(net, (n - 1) / n / d, net_bw, "(n-1)/n x M / d")), n - 1, "n-1")]
    if op == "all_to_all":
        # every rank holds a distinct piece for every other rank: most of it has to leave the domain
        return [Plan("direct", "direct exchange", (Tier(up, (d - 1) / n, link, "(d-1)/n x M"),
                                                  Tier(net, (n - d) / n, net_bw, "(n-d)/n x M")), n - 1, "n-1")]
    # broadcast: NCCL's pipelined ring; its d channels leave the root's domain through all d NICs,
    # so each NIC carries M/d (the root scatters over its domain's NICs, not through one)
    return [Plan("ring", "pipelined ring across domains", (Tier(up, 1.0, link, "M"), Tier(net, 1.0 / d, net_bw, "M / d")),
                 n - 1, "n-1")]


def _pick(plans: list[Plan], algorithm: str, op: str, n: int, nbytes: float, latency: float, fabric: Fabric,
          crossing: bool) -> Plan:
    """The plan to report: the fastest (as NCCL's tuner picks by size), or the one asked for."""
    if algorithm in ("", "auto"):
        return min(plans, key=lambda p: p.time(nbytes, latency))  # the first listed (ring) on a tie
    chosen = [p for p in plans if p.algorithm == algorithm]
    if chosen:
        return chosen[0]
    if algorithm == "nvls" and not fabric.nvls:
        raise FieldError("algorithm", "NVLS (NVLink SHARP) needs an NVSwitch system that has it (H100, H200, B200, B300 HGX, "
                                      "GB200 NVL72); this one has none: give another --algorithm or auto")
    if algorithm == "nvls" and not _nvls_modelled(fabric):
        raise FieldError("algorithm", "the link figure is a measured all-reduce, whose bus bandwidth already is what NCCL's own "
                                      "algorithm reached: give auto or ring (or a link rate with --link-bw to model NVLS)")
    if algorithm == "nvls" and crossing:
        raise FieldError("algorithm", f"NVLS {op} across scale-up domains needs the network's own in-switch offload "
                                      "(CollNet/SHARP), which is not modelled: give ring or auto")
    available = ", ".join(sorted({p.algorithm for p in plans}))
    raise FieldError("algorithm", f"{algorithm} does not run {op} here ({n} GPUs); available: {available} (or auto)")


def _notes(result: Result, op: str, fabric: Fabric, n: int, plan: Plan, plans: list[Plan], algorithm: str) -> None:
    conventions = {
        "all_reduce": "bytes = the input buffer (equal to the output), as nccl-tests counts it",
        "all_gather": "bytes = the gathered output (n x each rank's input), as nccl-tests counts it",
        "reduce_scatter": "bytes = the input buffer (n x each rank's output), as nccl-tests counts it",
        "all_to_all": "bytes = the buffer each rank sends (its own 1/n included), as nccl-tests counts it",
        "broadcast": "bytes = the broadcast buffer; pipelined ring with small chunks",
        "peer_copy": "bytes = the tensor one GPU sends to the other (nccl-tests sendrecv: bus bandwidth = algorithm bandwidth)",
    }
    result.assume(conventions[op])
    if op == "all_to_all" and fabric.torus_axis:
        result.assume("all-to-all on a torus axis: each chip's piece for a chip k hops away crosses k links, the shorter way round, "
                      "so the busiest link carries floor(n^2/4)/n x the buffer (on a bidirectional ring about a quarter of an "
                      "all-gather of all n buffers; the scaling book, Part 3)")
    elif op == "all_to_all":
        how = ("over a point-to-point mesh, one link to each peer" if fabric.peer_bw
               else "through the switch, which every GPU reaches at its full link rate" if fabric.domain
               else "assuming every GPU reaches every other at its full link rate")
        result.assume("all-to-all is a direct exchange (NCCL send/receive), not a ring: every rank sends a piece to every other; "
                      "NCCL posts the n-1 send/receive pairs as one group, and the latency term charges each peer message one step "
                      f"(an upper bound at small sizes), {how}")
    elif op == "peer_copy":
        pass
    elif not fabric.torus_axis:
        result.assume(f"algorithm: {plan.label}; every rate is one way (per direction)")
    if fabric.catalog_link:
        result.assume("catalog interconnect figures are bidirectional totals and are halved for the one-way rate")
    if fabric.peer_bw and not fabric.torus_axis:
        result.assume(f"a point-to-point mesh gives each GPU one link to each peer ({format_rate(fabric.peer_bw)} each way"
                      + (f", {fabric.peer_source}" if fabric.peer_source else "")
                      + "): a group of g GPUs reaches (g-1) x that; rings are assumed to spread over all of those links")
    if fabric.torus_axis:
        wraps = _wraps(fabric, n)
        source = f"; source: {fabric.wrap_source}" if fabric.wrap_source else ""
        if wraps is None:
            result.warn(f"whether a {n}-chip axis has a wraparound link is not in the catalog: assumed it has; without one the axis is "
                        "a line and every collective takes twice as long")
        elif wraps:
            result.assume(f"torus: the {n} chips lie on one axis whose wraparound link closes it into a bidirectional ring{source}")
        elif n > 2:
            result.assume(f"torus: a {n}-chip axis has no wraparound link, so it is a line: the end chips send and receive over one "
                          f"link and collectives take twice as long as on a full ring{source}")
        result.assume("torus: the ring runs along one axis, over that axis' links, not over all of the chip's ICI ports"
                      + (f" ({fabric.axis_source})" if fabric.axis_source else ""))
        result.assume("torus: --gpus counts the chips along ONE axis of a slice; a collective over a whole 2D or 3D slice (a 16-chip "
                      "v5e slice is 4x4, with no 16-chip axis and no wraparound) runs over every axis at once and is not modelled here")
    group = min(n, fabric.domain) if fabric.domain else n  # the GPUs one scale-up ring spans
    if fabric.measured_gpus and fabric.measured_gpus != group:
        result.warn(f"the measured link figure comes from a {fabric.measured_gpus}-GPU all-reduce; applied here to {group} GPUs, "
                    "where switch contention, ring length and NCCL's algorithm choice change it: measure at this size")
    elif fabric.measured_note:
        result.assume(fabric.measured_note)
    result.assume(
        "latency is per step (a hop plus synchronisation); at small sizes it dominates. The 1 us default is an "
        "order-of-magnitude assumption, not a measured figure: fit it from nccl-tests at small sizes"
    )
    if plan.algorithm == "nvls":
        across = plan.label.startswith("NVLS tree")
        if op == "all_reduce":
            result.warn(NVLS_MEASURED)
        tree_text = (" plus 20.9 us per network level twice (a binary tree across domains; each GPU sends and receives the "
                     "buffer twice, as in NCCL's tree)")
        result.assume("NVLink SHARP (NVLS): the NVSwitch reduces or multicasts the data, so a call has no ring steps; it costs what "
                      "NCCL's tuner charges it, 25 us per call" + (tree_text if across else "")
                      + f" ({NVLS_SOURCE}), whatever --latency says; " + (
                          "inside each domain the switch reduces (M each way, a bound), across domains the tree's network term. "
                          if across else
                          "for an all-reduce each GPU sends its buffer to the switch once and receives the sum once, so it moves M each "
                          "way instead of a ring's 2(n-1)/n x M: a bound that lifts bus bandwidth above the link rate; for all-gather "
                          "and reduce-scatter "
                          "the bandwidth term is the ring's. ")
                      + "That fixed cost is why NCCL keeps a ring or tree at small sizes; serving engines often use their own one-shot "
                      "all-reduce there")
    if len(plans) > 1 and algorithm in ("", "auto"):
        result.assume("the algorithm is the fastest of those NCCL could run at this size, as NCCL's tuner picks one per call; its "
                      "tuner has its own latencies per algorithm and protocol (LL, LL128, Simple), so its crossover sizes differ from "
                      f"this one-latency model: {NCCL_TUNING}")
    if plan.algorithm == "tree":
        result.assume("tree: NCCL chains the GPUs inside a domain and runs a double binary tree across domains, so the latency grows "
                      "with log2 of the domains; each GPU sends and receives the buffer twice (reduce up, broadcast down)")


def _algorithm_row(result: Result, plan: Plan, plans: list[Plan], algorithm: str, nbytes: float, latency: float) -> None:
    others = ", ".join(f"{p.algorithm} {format_time(p.time(nbytes, latency))}" for p in plans)
    result.values.update(algorithm=plan.algorithm, algorithm_chosen_by="given" if algorithm not in ("", "auto") else "size",
                         algorithm_times_s={p.algorithm: p.time(nbytes, latency) for p in plans})
    if len(plans) > 1:
        if algorithm in ("", "auto"):
            result.row("algorithm", f"{plan.algorithm}, the fastest here of {others}")
        else:
            best = min(plans, key=lambda p: p.time(nbytes, latency))
            result.row("algorithm", f"{plan.algorithm} (--algorithm); the fastest here would be {best.algorithm} ({others})")
        result.step(f"algorithms at this size: {others}; shown: {plan.algorithm}")


def collective(
    op: str,
    gpus: int,
    nbytes: float,
    link_bw: float | None = None,
    latency: float = 1e-6,
    *,
    link_label: str = "",
    fabric: Fabric | None = None,
    algorithm: str = "auto",
) -> Result:
    """Time of one collective; `link_bw` (or fabric.link_bw) is per GPU per direction (B/s)."""
    if op not in OPS:
        raise FieldError("op", f"unknown collective {op!r}; accepted: {', '.join(OPS)}")
    if algorithm not in ALGORITHMS:
        raise FieldError("algorithm", f"unknown algorithm {algorithm!r}; accepted: {', '.join(ALGORITHMS)}")
    if fabric is None:
        if link_bw is None:
            raise FieldError("link_bw", "give --gpu (its scale-up link) or --link-bw (per direction)")
        fabric = Fabric(link_bw, link_label)
    if op == "peer_copy":
        if gpus != 2:
            raise FieldError("gpus", f"a peer copy is one GPU sending to one other: 2 GPUs (got {gpus})")
        result = _peer_copy(nbytes, latency, fabric)
    else:
        if gpus < 2:
            raise FieldError("gpus", f"a collective needs at least 2 GPUs (got {gpus})")
        n, d = gpus, fabric.domain
        if fabric.torus_axis and fabric.axis_max_chips and n > fabric.axis_max_chips:
            raise FieldError("gpus", f"a ring along one torus axis holds at most {fabric.axis_max_chips} chips; collectives over more "
                             "run over several axes, which is not modelled (give at most that many, or --link-bw for your own figure)")
        if fabric.torus_axis and not _axis_exists(fabric, n):
            top = fabric.axis_max_chips or 6 * (fabric.wrap_multiple or 1)
            sizes = [k for k in range(2, top + 1) if _axis_exists(fabric, k)]
            if fabric.axis_max_chips:
                listed = ", ".join(map(str, sizes[:-1])) + f" or {sizes[-1]}"
            else:
                listed = ", ".join(map(str, sizes)) + ", ..."
            raise FieldError("gpus", f"no slice has a torus axis of {n} chips: an axis holds {listed} chips"
                             + (f"; source: {fabric.wrap_source}" if fabric.wrap_source else ""))
        if d is not None and n > d:
            result = _hierarchical(op, n, d, nbytes, latency, fabric, algorithm)
        else:
            result = _flat(op, n, nbytes, latency, fabric, algorithm)
    if fabric.link_label:
        result.values["link_source"] = fabric.link_label  # which figure: vendor, override, or measured over N GPUs
    return result


def _flat(op: str, n: int, nbytes: float, latency: float, fabric: Fabric, algorithm: str) -> Result:
    plans, link, why = _flat_plans(op, n, fabric)
    if fabric.torus_axis and algorithm not in ("", "auto", "ring"):
        raise FieldError("algorithm", f"a TPU axis runs {op} as a ring (XLA's ICI collectives): give ring or auto")
    plan = _pick(plans, algorithm, op, n, nbytes, latency, fabric, crossing=False)
    tier = plan.tiers[0]
    bus, bus_formula = bus_factor(op, n)
    result = Result("collective")
    bandwidth_time = tier.factor * nbytes / link
    latency_time = plan.latency_time(latency)
    time_s = bandwidth_time + latency_time
    algbw = nbytes / time_s
    busbw = algbw * bus
    result.values.update(
        op=op, gpus=n, bytes=nbytes, link_bw_per_direction=link, latency_s=latency, steps=plan.steps,
        bandwidth_time_s=bandwidth_time, latency_time_s=latency_time, time_s=time_s,
        algbw=algbw, busbw=busbw, busbw_fraction_of_link=busbw / link, 
        busbw_bound=link * bus / tier.factor if plan.algorithm == "nvls" else link,
        hierarchical=False, bottleneck=fabric.link_name, scale_up_domain=fabric.domain,
    )
    if link != fabric.link_bw:
        result.values["link_bw_per_direction_catalog"] = fabric.link_bw
        result.step(f"link rate for {n} GPUs = {format_rate(link)} ({why})")
    result.step(
        f"bandwidth term = {tier.formula} / link = {g(tier.factor)} x {g(nbytes)} / {g(link)} = {format_time(bandwidth_time)}   (n = {n})"
    )
    result.step(plan.latency_text(latency))
    result.step(f"time = bandwidth + latency = {format_time(bandwidth_time)} + {format_time(latency_time)} = {format_time(time_s)}")
    result.step(f"algorithm bandwidth = bytes / time = {g(nbytes)} / {g(time_s)} = {format_rate(algbw)}")
    result.step(f"bus bandwidth = algbw x {bus_formula} = {format_rate(algbw)} x {g(bus)} = {format_rate(busbw)}")
    result.row("collective", f"{op} over {n} GPUs ({plan.label})")
    _algorithm_row(result, plan, plans, algorithm, nbytes, latency)
    if fabric.domain:
        result.row("scale-up domain", f"{fabric.domain} GPUs: all {n} inside one")
    result.row("bytes (nccl-tests size)", format_size(nbytes))
    label = why if why else fabric.link_label
    result.row("link (one way)", format_rate(link) + (f" ({label})" if label else ""))
    result.row("bandwidth term", format_time(bandwidth_time))
    result.row("latency term", plan.latency_row(latency))
    result.row("time", format_time(time_s))
    result.row("algorithm bandwidth", format_rate(algbw))
    result.row("bus bandwidth", f"{format_rate(busbw)} ({format_percent(busbw / link)} of the link)")
    result.row("bottleneck", fabric.link_name)
    _notes(result, op, fabric, n, plan, plans, algorithm)
    if fabric.domain is None and not fabric.torus_axis:
        result.assume("scale-up domain size unknown (custom link): every GPU is assumed to reach every other at --link-bw "
                      "(give --domain and --net-bw to model a network past it)")
    return result


def _peer_rate(fabric: Fabric) -> tuple[float, str]:
    if fabric.torus_axis:
        return fabric.link_bw / 2, "one ICI link to a neighbouring chip, one way"
    if fabric.peer_bw:
        return fabric.peer_bw, "the one link to that peer in a point-to-point mesh, one way"
    if fabric.domain and fabric.domain > 2:
        return fabric.link_bw, "all of the GPU's links, through the switch, one way"
    return fabric.link_bw, "the link between the two GPUs, one way"


def _peer_copy(nbytes: float, latency: float, fabric: Fabric) -> Result:
    rate, why = _peer_rate(fabric)
    result = Result("collective")
    bandwidth_time = nbytes / rate
    time_s = bandwidth_time + latency
    algbw = nbytes / time_s
    result.values.update(
        op="peer_copy", gpus=2, bytes=nbytes, link_bw_per_direction=rate, latency_s=latency, steps=1,
        bandwidth_time_s=bandwidth_time, latency_time_s=latency, time_s=time_s, algbw=algbw, busbw=algbw,
        busbw_fraction_of_link=algbw / rate, busbw_bound=rate, hierarchical=False, bottleneck=fabric.link_name,
        scale_up_domain=fabric.domain, algorithm="copy", algorithm_chosen_by="size", algorithm_times_s={"copy": time_s},
    )
    if rate != fabric.link_bw:
        result.values["link_bw_per_direction_catalog"] = fabric.link_bw
    result.step(f"rate = {format_rate(rate)} ({why})")
    result.step(f"bandwidth term = bytes / rate = {g(nbytes)} / {g(rate)} = {format_time(bandwidth_time)}")
    result.step(f"time = bandwidth + latency = {format_time(bandwidth_time)} + {format_time(latency)} = {format_time(time_s)}")
    result.step(f"achieved bandwidth = bytes / time = {format_rate(algbw)} (nccl-tests sendrecv: bus bandwidth = algorithm bandwidth)")
    result.row("collective", "peer_copy: one GPU sends the tensor to one other")
    result.row("bytes (nccl-tests size)", format_size(nbytes))
    result.row("link (one way)", f"{format_rate(rate)} ({why})")
    result.row("bandwidth term", format_time(bandwidth_time))
    result.row("latency term", f"{format_time(latency)} (1 step)")
    result.row("time", format_time(time_s))
    result.row("algorithm bandwidth", format_rate(algbw))
    result.row("bus bandwidth", f"{format_rate(algbw)} ({format_percent(algbw / rate)} of the link)")
    result.row("bottleneck", fabric.link_name)
    plan = Plan("copy", "copy", (Tier(fabric.link_name, 1.0, rate, "M"),), 1, "1")
    _notes(result, "peer_copy", fabric, 2, plan, [plan], "auto")
    result.assume("a copy between GPUs in one scale-up domain (cudaMemcpyPeer or NCCL send/receive); copies between domains run "
                  "over the network")
    if fabric.catalog_link and not fabric.peer_bw and not fabric.torus_axis:
        result.assume("the catalog's link figure is a vendor peak: copy engines and NCCL reach a fraction of it; measure with "
                      "nccl-tests sendrecv_perf or a timed cudaMemcpyPeer")
    return result


def _hierarchical(op: str, n: int, d: int, nbytes: float, latency: float, fabric: Fabric, algorithm: str) -> Result:
    """Past the scale-up domain (`d` GPUs, fabric.domain): inside each at the link rate, across at the network's."""
    if fabric.net_bw is None:
        raise FieldError(
            "gpus",
            f"{n} GPUs exceed the {d}-GPU scale-up domain and no scale-out network is known for it: "
            f"give --net-bw (network per GPU per direction, e.g. 50GB/s for 400 Gb/s) or at most {d} GPUs",
        )
    if n % d:
        raise FieldError("gpus", f"{n} GPUs do not fill whole {d}-GPU scale-up domains: give a multiple of {d}")
    k = n // d
    net_bw = fabric.net_bw
    plans = _cross_plans(op, n, d, fabric, net_bw)
    plan = _pick(plans, algorithm, op, n, nbytes, latency, fabric, crossing=True)
    up, across = plan.tiers
    up_bytes, net_bytes = up.factor * nbytes, across.factor * nbytes
    up_time, net_time = up_bytes / up.rate, net_bytes / across.rate
    # The two tiers run at once (NCCL pipelines chunk by chunk), so the slower one sets the floor;
    # done one after the other they add up.
    bandwidth_time = max(up_time, net_time)
    serial_bandwidth = up_time + net_time
    latency_time = plan.latency_time(latency)
    time_s = bandwidth_time + latency_time
    serial_s = serial_bandwidth + latency_time
    bottleneck = fabric.net_name if net_time >= up_time else fabric.link_name
    bus, bus_formula = bus_factor(op, n)
    algbw = nbytes / time_s
    busbw = algbw * bus
    ring_bound = min(up.rate, d * net_bw)
    result = Result("collective")
    result.values.update(
        op=op, gpus=n, bytes=nbytes, link_bw_per_direction=up.rate, net_bw_per_direction=net_bw,
        latency_s=latency, steps=plan.steps, scale_up_domain=d, domains=k, hierarchical=True,
        scale_up_bytes=up_bytes, network_bytes=net_bytes, scale_up_time_s=up_time, network_time_s=net_time,
        bandwidth_time_s=bandwidth_time, latency_time_s=latency_time, time_s=time_s, time_serial_s=serial_s,
        algbw=algbw, busbw=busbw, bottleneck=bottleneck,
        network_fraction_used=net_bytes / time_s / net_bw,
    )
    if op != "all_to_all":
        # what this plan's tiers allow (the ring: min(link, d x network)); no latency
        result.values["busbw_bound"] = bus * min(up.rate / up.factor, across.rate / across.factor)
    result.step(f"n = {n} GPUs = {k} domains x d = {d} GPUs")
    if op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast") and plan.algorithm == "ring":
        result.step(f"the ring's channels leave each domain through all {d} NICs: it runs at min(link, d x network) = "
                    f"min({format_rate(up.rate)}, {d} x {format_rate(net_bw)}) = {format_rate(ring_bound)}")
    result.step(f"inside a domain: {up.formula} = {g(up_bytes)} bytes per GPU / {g(up.rate)} = {format_time(up_time)}")
    result.step(f"across domains: {across.formula} = {g(net_bytes)} bytes per GPU / {g(net_bw)} = {format_time(net_time)}")
    result.step(f"bandwidth term = max(inside, across) (the tiers run at once) = {format_time(bandwidth_time)}; bottleneck: {bottleneck}")
    result.step(plan.latency_text(latency))
    result.step(
        f"time = bandwidth + latency = {format_time(time_s)}; serial estimate (tiers one after the other) = {format_time(serial_s)}"
    )
    result.step(f"algorithm bandwidth = bytes / time = {g(nbytes)} / {g(time_s)} = {format_rate(algbw)}")
    result.step(f"bus bandwidth = algbw x {bus_formula} = {format_rate(busbw)} (nccl-tests formula)")
    result.row("collective", f"{op} over {n} GPUs ({plan.label})")
    _algorithm_row(result, plan, plans, algorithm, nbytes, latency)
    result.row("scale-up domain", f"{d} GPUs: {k} domains, joined by the network")
    result.row("bytes (nccl-tests size)", format_size(nbytes))
    result.row("link inside a domain (one way)", format_rate(up.rate) + (f" ({fabric.link_label})" if fabric.link_label else ""))
    result.row("network per GPU (one way)", format_rate(net_bw) + (f" ({fabric.net_label})" if fabric.net_label else ""))
    result.row("inside-domain term", format_time(up_time))
    result.row("across-domain term", format_time(net_time))
    result.row("latency term", plan.latency_row(latency))
    result.row("time (tiers overlapped)", format_time(time_s))
    result.row("serial estimate (no overlap)", format_time(serial_s))
    result.row("algorithm bandwidth", format_rate(algbw))
    result.row(
        "bus bandwidth",
        f"{format_rate(busbw)} (nccl-tests formula over {n} GPUs; each GPU's network share is {format_rate(net_bytes / time_s)})",
    )
    result.row("bottleneck", f"{bottleneck} ({format_percent(net_bytes / time_s / net_bw)} of the network rate used)")
    _notes(result, op, fabric, n, plan, plans, algorithm)
    result.assume(
        f"{n} GPUs exceed the {d}-GPU scale-up domain: the collective runs inside each domain at the link rate and "
        "across domains at the network rate per GPU (one NIC per GPU, a non-blocking fabric)"
    )
    if plan.algorithm == "ring":
        result.assume(f"NCCL's rings span all {n} GPUs; each of the {d} ring channels leaves a domain through its own NIC, so the "
                      f"network carries the ring at {d} x the per-GPU rate. Without in-network reduction (CollNet/SHARP, not "
                      "modelled) bus bandwidth stays at or below min(link, that)")
    if fabric.net_source:
        result.assume(f"network per GPU: {fabric.net_name}, source {fabric.net_source}")
    if bottleneck == fabric.net_name:
        result.assume("the network sets the pace: the scale-up link waits on it")
    else:
        result.assume("the scale-up link sets the pace: the network is not the limit here")
    return result


# ---- the calculator ------------------------------------------------------------------------

def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    given = p.get("_given") or frozenset()
    gpus = 2 if p["op"] == "peer_copy" else p["gpus"]
    if p["link_bw"] is not None and "gpu" not in given:
        # A custom link: no system to take a domain or a network from but what was given.
        fabric = Fabric(p["link_bw"], "override (--link-bw, per direction)", "link (--link-bw)", domain=p.get("domain"),
                        net_bw=p.get("net_bw"), net_label="override (--net-bw)" if p.get("net_bw") else "",
                        net_name="network (--net-bw)")
    else:
        if not p["gpu"]:
            raise FieldError("gpu", "give --gpu (its scale-up link) or --link-bw (per direction)")
        ceilings = ceilings_for(p, data_dir, ("link_bw",))
        fabric = ceilings.fabric(gpus=gpus)
        if p.get("domain"):
            fabric = fabric._replace(domain=p["domain"])
    if "net_bw" in given and (fabric.domain is None or gpus <= fabric.domain):
        where = (
            f"{gpus} GPUs fit in one {fabric.domain}-GPU scale-up domain"
            if fabric.domain
            else "the scale-up domain size is unknown (give --domain)"
        )
        raise FieldError("net_bw", f"is not used: {where}; the network is crossed only past the domain")
    return collective(p["op"], gpus, p["bytes"], latency=p["latency"], fabric=fabric, algorithm=p.get("algorithm") or "auto")


def _unused(p: dict[str, Any], given: frozenset[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    if p["link_bw"] is not None and "gpu" not in given:
        out["profile"] = "--link-bw replaces the link a profile would supply; give --gpu with --profile, or drop --profile"
    if p["op"] == "peer_copy":
        if p["gpus"] != 2:
            out["gpus"] = "a peer copy is one GPU sending to one other (2 GPUs)"
        out["domain"] = "a peer copy stays inside one scale-up domain"
    if p["op"] in ("all_to_all", "peer_copy") and p.get("algorithm") not in (None, "auto"):
        out["algorithm"] = f"{p['op']} has one algorithm (a direct exchange or a copy)"
    return out


SPEC = CalcSpec(
    "collective", "Collective",
    "Collective time over N GPUs (or a peer copy between two) at the one-way link rate plus a per-step latency, under the "
    "algorithm NCCL would pick at that size (ring, tree, NVLink SHARP), past the scale-up domain over the network "
    "(bottleneck named), with nccl-tests byte conventions and bus bandwidth.",
    (
        FieldSpec("op", "operation", "choice", "all_reduce", choices=OPS,
                  help="peer_copy: one GPU sends a tensor to another (2 GPUs)"),
        FieldSpec("gpus", "GPUs", "int", "8"),
        FieldSpec("bytes", "bytes (nccl-tests size)", "size", "1GiB"),
        FieldSpec("gpu", "GPU", "gpu", "h200", help="its scale-up link (one way), domain size and scale-out network are used"),
        # The link and the latency are this calculator's main inputs: in view, not in a group.
        FieldSpec("link_bw", "link bandwidth", "rate", help="per GPU per direction, e.g. 450GB/s"),
        FieldSpec("net_bw", "network bandwidth", "rate",
                  help="scale-out network per GPU per direction past the scale-up domain, e.g. 50GB/s", group="more"),
        FieldSpec("domain", "scale-up domain", "int", help="GPUs in one scale-up domain (default: the GPU's, e.g. 8 on HGX)",
                  group="more"),
        FieldSpec("algorithm", "algorithm", "choice", "auto", choices=ALGORITHMS,
                  help="auto: the fastest at this size, as NCCL's tuner picks; or ring, tree (all_reduce), nvls (NVLink SHARP)",
                  group="more"),
        FieldSpec("latency", "latency per step", "time", "1us", allow_zero=True),
        PROFILE,
    ),
    _run,
    unused=_unused,
    headline=("time", "bus bandwidth"),
    short_name="coll",
    title_fields=("op",),
)
