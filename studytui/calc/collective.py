"""Collectives: bandwidth term at the ONE-WAY link rate plus a per-step latency term.

Inside one scale-up domain (an NVLink/NVSwitch box, an Infinity Fabric mesh, a torus axis) a ring
runs at the link rate. Past the domain the collective is modelled hierarchically: the part inside
each domain at the link rate, the part across domains at the scale-out network rate per GPU, and
the slower of the two names the bottleneck.

Byte conventions follow nccl-tests ("size" column): all_reduce and reduce_scatter count the
input buffer, all_gather the gathered output, all_to_all the buffer each rank sends and receives
(its own share included), broadcast the buffer. Bus bandwidth = algorithm bandwidth x factor, the
number nccl-tests prints to compare against the link.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from studytui.calc.forms import PROFILE, CalcSpec, DataDir, FieldSpec, ceilings_for
from studytui.calc.result import Result
from studytui.calc.units import FieldError, format_percent, format_rate, format_size, format_time


def g(x: float) -> str:
    return f"{x:.4g}"


OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")


@dataclass(frozen=True)
class Fabric:
    """Where a collective runs: the scale-up link, the domain it reaches, the network past it."""

    link_bw: float  # per GPU, one way (B/s)
    link_label: str = ""  # provenance of link_bw
    link_name: str = "scale-up link"
    domain: int | None = None  # GPUs one scale-up domain holds; None: not known
    net_bw: float | None = None  # scale-out network per GPU, one way (B/s)
    net_label: str = ""
    net_name: str = "scale-out network"
    net_source: str = ""
    axis_source: str = ""
    axis_max_chips: int | None = None
    nvls: bool = False  # NVLink SHARP (in-switch reduction) exists on this system
    torus_axis: bool = False  # the link figure is a ring along one torus axis (TPU)
    catalog_link: bool = False  # link_bw was derived from a bidirectional catalog figure
    measured_gpus: int | None = None  # link_bw was measured on this many GPUs
    measured_note: str = ""  # which measured figure was used, and why


def _op_model(op: str, n: int) -> tuple[float, int, str, float, str]:
    """(bandwidth factor f so that time = f x bytes / link, steps, formula, busbw factor, busbw formula)."""
    if op == "all_reduce":
        return 2 * (n - 1) / n, 2 * (n - 1), "2(n-1)/n", 2 * (n - 1) / n, "2(n-1)/n"
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) / n, n - 1, "(n-1)/n", (n - 1) / n, "(n-1)/n"
    if op == "all_to_all":
        # Each rank sends (n-1)/n of its buffer, to all peers at once through a switch.
        return (n - 1) / n, n - 1, "(n-1)/n", (n - 1) / n, "(n-1)/n"
    if op == "broadcast":
        # Pipelined ring: every byte crosses each link once; n-1 hops of latency.
        return 1.0, n - 1, "1", 1.0, "1"
    raise FieldError("op", f"unknown collective {op!r}; accepted: {', '.join(OPS)}")


def ring_all_reduce_time(nbytes: float, n: int, link_bw: float, latency: float) -> tuple[float, float]:
    """(total time, bandwidth-only time) of a ring all-reduce of `nbytes` over n GPUs."""
    bandwidth = 2 * (n - 1) / n * nbytes / link_bw
    return bandwidth + 2 * (n - 1) * latency, bandwidth


def _tiers(op: str, n: int, d: int, nbytes: float) -> tuple[float, float, int, str, str]:
    """Bytes each GPU moves inside its domain and across domains for n = d x k GPUs.

    Returns (bytes on the scale-up link, bytes on the network, steps, formula up, formula net).
    """
    k = n // d
    if op == "all_reduce":
        # reduce-scatter in the domain, all-reduce of the 1/d shard across domains, all-gather in the domain
        return (2 * (d - 1) / d * nbytes, 2 * (k - 1) / k * nbytes / d, 2 * (d - 1) + 2 * (k - 1),
                "2(d-1)/d x M", "2(k-1)/k x M/d")
    if op in ("all_gather", "reduce_scatter"):
        return ((d - 1) / d * nbytes, (k - 1) / k * nbytes / d, (d - 1) + (k - 1), "(d-1)/d x M", "(k-1)/k x M/d")
    if op == "all_to_all":
        # every rank holds a distinct piece for every other rank: most of it has to leave the domain
        return ((d - 1) / n * nbytes, (n - d) / n * nbytes, n - 1, "(d-1)/n x M", "(n-d)/n x M")
    # broadcast: every byte reaches every domain once over the network, then every GPU in it
    return (nbytes, nbytes, (d - 1) + (k - 1), "M", "M")


def _notes(result: Result, op: str, fabric: Fabric, n: int, inside: bool) -> None:
    conventions = {
        "all_reduce": "bytes = the input buffer (equal to the output), as nccl-tests counts it",
        "all_gather": "bytes = the gathered output (n x each rank's input), as nccl-tests counts it",
        "reduce_scatter": "bytes = the input buffer (n x each rank's output), as nccl-tests counts it",
        "all_to_all": "bytes = the buffer each rank sends (its own 1/n included), as nccl-tests counts it",
        "broadcast": "bytes = the broadcast buffer; pipelined ring with small chunks",
    }
    result.assume(conventions[op])
    if op == "all_to_all":
        result.assume("all-to-all is a direct exchange, not a ring: every rank sends to every other rank at once, "
                      "limited by its one-way link; assumes a full-bandwidth switch")
    else:
        result.assume("ring algorithm at the one-way (per-direction) link rate")
    if fabric.catalog_link:
        result.assume("catalog interconnect figures are bidirectional totals and are halved for the one-way rate")
    if fabric.torus_axis:
        result.assume("torus: the ring runs along one axis, over that axis' two links (one each way round), "
                      f"not over all of the chip's ICI ports; {n} chips are assumed to lie on one axis with wraparound"
                      + (f" ({fabric.axis_source})" if fabric.axis_source else ""))
    group = min(n, fabric.domain) if fabric.domain else n  # the GPUs one scale-up ring spans
    if fabric.measured_gpus and fabric.measured_gpus != group:
        result.warn(f"the measured link figure comes from a {fabric.measured_gpus}-GPU all-reduce; applied here to {group} GPUs, "
                    "where switch contention, ring length and NCCL's algorithm choice change it: measure at this size")
    elif fabric.measured_note:
        result.assume(fabric.measured_note)
    result.assume(
        "latency is per ring step (a hop plus synchronisation); at small sizes it dominates. The 1 us default is an "
        "order-of-magnitude assumption, not a measured figure: fit it from nccl-tests at small sizes"
    )
    if op == "all_reduce" and fabric.nvls and inside:
        result.assume("NVLink SHARP (NVLS) on this NVSwitch system reduces in the switch and can beat the ring bound "
                      "(bus bandwidth above the link rate)")


def collective(
    op: str,
    gpus: int,
    nbytes: float,
    link_bw: float | None = None,
    latency: float = 1e-6,
    *,
    link_label: str = "",
    fabric: Fabric | None = None,
) -> Result:
    """Time of one collective; `link_bw` (or fabric.link_bw) is per GPU per direction (B/s)."""
    if op not in OPS:
        raise FieldError("op", f"unknown collective {op!r}; accepted: {', '.join(OPS)}")
    if gpus < 2:
        raise FieldError("gpus", f"a collective needs at least 2 GPUs (got {gpus})")
    if fabric is None:
        if link_bw is None:
            raise FieldError("link_bw", "give --gpu (its scale-up link) or --link-bw (per direction)")
        fabric = Fabric(link_bw, link_label)
    n, d = gpus, fabric.domain
    if fabric.torus_axis and fabric.axis_max_chips and n > fabric.axis_max_chips:
        raise FieldError("gpus", f"a ring along one torus axis holds at most {fabric.axis_max_chips} chips; collectives over more "
                         "run over several axes, which is not modelled (give at most that many, or --link-bw for your own figure)")
    result = _hierarchical(op, n, d, nbytes, latency, fabric) if d is not None and n > d else _flat(op, n, nbytes, latency, fabric)
    if fabric.link_label:
        result.values["link_source"] = fabric.link_label  # which figure: vendor, override, or measured over N GPUs
    return result


def _flat(op: str, n: int, nbytes: float, latency: float, fabric: Fabric) -> Result:
    link = fabric.link_bw
    factor, steps, formula, bus_factor, bus_formula = _op_model(op, n)
    result = Result("collective")
    bandwidth_time = factor * nbytes / link
    latency_time = steps * latency
    time_s = bandwidth_time + latency_time
    algbw = nbytes / time_s
    busbw = algbw * bus_factor
    result.values.update(
        op=op, gpus=n, bytes=nbytes, link_bw_per_direction=link, latency_s=latency, steps=steps,
        bandwidth_time_s=bandwidth_time, latency_time_s=latency_time, time_s=time_s,
        algbw=algbw, busbw=busbw, busbw_fraction_of_link=busbw / link,
        hierarchical=False, bottleneck=fabric.link_name, scale_up_domain=fabric.domain,
    )
    result.step(
        f"bandwidth term = {formula} x bytes / link = {g(factor)} x {g(nbytes)} / {g(link)} = {format_time(bandwidth_time)}   (n = {n})"
    )
    result.step(f"latency term = steps x latency = {steps} x {format_time(latency)} = {format_time(latency_time)}")
    result.step(f"time = bandwidth + latency = {format_time(bandwidth_time)} + {format_time(latency_time)} = {format_time(time_s)}")
    result.step(f"algorithm bandwidth = bytes / time = {g(nbytes)} / {g(time_s)} = {format_rate(algbw)}")
    result.step(f"bus bandwidth = algbw x {bus_formula} = {format_rate(algbw)} x {g(bus_factor)} = {format_rate(busbw)}")
    shape = "direct exchange" if op == "all_to_all" else "ring"
    result.row("collective", f"{op} over {n} GPUs ({shape})")
    if fabric.domain:
        result.row("scale-up domain", f"{fabric.domain} GPUs: all {n} inside one")
    result.row("bytes (nccl-tests size)", format_size(nbytes))
    result.row("link (one way)", format_rate(link) + (f" ({fabric.link_label})" if fabric.link_label else ""))
    result.row("bandwidth term", format_time(bandwidth_time))
    result.row("latency term", f"{format_time(latency_time)} ({steps} steps x {format_time(latency)})")
    result.row("time", format_time(time_s))
    result.row("algorithm bandwidth", format_rate(algbw))
    result.row("bus bandwidth", f"{format_rate(busbw)} ({format_percent(busbw / link)} of the link)")
    result.row("bottleneck", fabric.link_name)
    _notes(result, op, fabric, n, inside=True)
    if fabric.domain is None and not fabric.torus_axis:
        result.assume("scale-up domain size unknown (custom link): every GPU is assumed to reach every other at --link-bw "
                      "(give --domain and --net-bw to model a network past it)")
    return result


def _hierarchical(op: str, n: int, d: int, nbytes: float, latency: float, fabric: Fabric) -> Result:
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
    up_bytes, net_bytes, steps, up_formula, net_formula = _tiers(op, n, d, nbytes)
    up_time = up_bytes / fabric.link_bw
    net_time = net_bytes / fabric.net_bw
    # The two tiers pipeline chunk by chunk (NCCL does), so the slower tier sets the floor;
    # done one after the other they add up.
    bandwidth_time = max(up_time, net_time)
    serial_bandwidth = up_time + net_time
    latency_time = steps * latency
    time_s = bandwidth_time + latency_time
    serial_s = serial_bandwidth + latency_time
    bottleneck = fabric.net_name if net_time >= up_time else fabric.link_name
    _f, _s, _fm, bus_factor, bus_formula = _op_model(op, n)
    algbw = nbytes / time_s
    busbw = algbw * bus_factor
    result = Result("collective")
    result.values.update(
        op=op, gpus=n, bytes=nbytes, link_bw_per_direction=fabric.link_bw, net_bw_per_direction=fabric.net_bw,
        latency_s=latency, steps=steps, scale_up_domain=d, domains=k, hierarchical=True,
        scale_up_bytes=up_bytes, network_bytes=net_bytes, scale_up_time_s=up_time, network_time_s=net_time,
        bandwidth_time_s=bandwidth_time, latency_time_s=latency_time, time_s=time_s, time_serial_s=serial_s,
        algbw=algbw, busbw=busbw, bottleneck=bottleneck,
        network_fraction_used=net_bytes / time_s / fabric.net_bw,
    )
    result.step(f"n = {n} GPUs = {k} domains x d = {d} GPUs (hierarchical)")
    result.step(f"inside a domain: {up_formula} = {g(up_bytes)} bytes per GPU / {g(fabric.link_bw)} = {format_time(up_time)}")
    result.step(f"across domains: {net_formula} = {g(net_bytes)} bytes per GPU / {g(fabric.net_bw)} = {format_time(net_time)}")
    result.step(f"bandwidth term = max(inside, across) (the tiers pipeline) = {format_time(bandwidth_time)}; bottleneck: {bottleneck}")
    result.step(f"latency term = steps x latency = {steps} x {format_time(latency)} = {format_time(latency_time)}")
    result.step(
        f"time = bandwidth + latency = {format_time(time_s)}; serial estimate (tiers one after the other) = {format_time(serial_s)}"
    )
    result.step(f"algorithm bandwidth = bytes / time = {g(nbytes)} / {g(time_s)} = {format_rate(algbw)}")
    result.step(
        f"bus bandwidth = algbw x {bus_formula} = {format_rate(busbw)} (nccl-tests formula; the hierarchy moves less over the network "
        "than a flat ring)"
    )
    shape = "direct exchange" if op == "all_to_all" else "hierarchical"
    result.row("collective", f"{op} over {n} GPUs ({shape})")
    result.row("scale-up domain", f"{d} GPUs: {k} domains, joined by the network")
    result.row("bytes (nccl-tests size)", format_size(nbytes))
    result.row("link inside a domain (one way)", format_rate(fabric.link_bw) + (f" ({fabric.link_label})" if fabric.link_label else ""))
    result.row("network per GPU (one way)", format_rate(fabric.net_bw) + (f" ({fabric.net_label})" if fabric.net_label else ""))
    result.row("inside-domain term", format_time(up_time))
    result.row("across-domain term", format_time(net_time))
    result.row("latency term", f"{format_time(latency_time)} ({steps} steps x {format_time(latency)})")
    result.row("time (tiers overlapped)", format_time(time_s))
    result.row("serial estimate (no overlap)", format_time(serial_s))
    result.row("algorithm bandwidth", format_rate(algbw))
    result.row(
        "bus bandwidth",
        f"{format_rate(busbw)} (nccl-tests formula over {n} GPUs; each GPU's network share is {format_rate(net_bytes / time_s)})",
    )
    result.row("bottleneck", f"{bottleneck} ({format_percent(net_bytes / time_s / fabric.net_bw)} of the network rate used)")
    _notes(result, op, fabric, n, inside=False)
    result.assume(
        f"{n} GPUs exceed the {d}-GPU scale-up domain: the collective runs inside each domain at the link rate and "
        "across domains at the network rate per GPU (one NIC per GPU, a non-blocking fabric)"
    )
    if fabric.net_source:
        result.assume(f"network per GPU: {fabric.net_name}, source {fabric.net_source}")
    if op == "all_reduce" and fabric.nvls:
        result.assume("NVLink SHARP helps only inside a domain; across domains the network sets the pace")
    return result


# ---- the calculator ------------------------------------------------------------------------

def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    given = p.get("_given") or frozenset()
    if p["link_bw"] is not None and "gpu" not in given:
        # A custom link: no system to take a domain or a network from but what was given.
        fabric = Fabric(p["link_bw"], "override (--link-bw, per direction)", "link (--link-bw)", domain=p.get("domain"),
                        net_bw=p.get("net_bw"), net_label="override (--net-bw)" if p.get("net_bw") else "",
                        net_name="network (--net-bw)")
    else:
        if not p["gpu"]:
            raise FieldError("gpu", "give --gpu (its scale-up link) or --link-bw (per direction)")
        ceilings = ceilings_for(p, data_dir, ("link_bw",))
        fabric = ceilings.fabric(gpus=p["gpus"])
        if p.get("domain"):
            fabric = replace(fabric, domain=p["domain"])
    if "net_bw" in given and (fabric.domain is None or p["gpus"] <= fabric.domain):
        where = (
            f"{p['gpus']} GPUs fit in one {fabric.domain}-GPU scale-up domain"
            if fabric.domain
            else "the scale-up domain size is unknown (give --domain)"
        )
        raise FieldError("net_bw", f"is not used: {where}; the network is crossed only past the domain")
    return collective(p["op"], p["gpus"], p["bytes"], latency=p["latency"], fabric=fabric)


def _unused(p: dict[str, Any], given: frozenset[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    if p["link_bw"] is not None and "gpu" not in given:
        out["profile"] = "--link-bw replaces the link a profile would supply; give --gpu with --profile, or drop --profile"
    return out


SPEC = CalcSpec(
    "collective", "Collective",
    "Collective time over N GPUs at the one-way link rate plus a per-step latency, hierarchical past the "
    "scale-up domain (link inside, network across, bottleneck named), with nccl-tests byte conventions and bus bandwidth.",
    (
        FieldSpec("op", "operation", "choice", "all_reduce", choices=OPS),
        FieldSpec("gpus", "GPUs", "int", "8"),
        FieldSpec("bytes", "bytes (nccl-tests size)", "size", "1GiB"),
        FieldSpec("gpu", "GPU", "gpu", "h200", help="its scale-up link (one way), domain size and scale-out network are used"),
        # The link and the latency are this calculator's main inputs: in view, not in a group.
        FieldSpec("link_bw", "link bandwidth", "rate", help="per GPU per direction, e.g. 450GB/s"),
        FieldSpec("net_bw", "network bandwidth", "rate",
                  help="scale-out network per GPU per direction past the scale-up domain, e.g. 50GB/s", group="more"),
        FieldSpec("domain", "scale-up domain", "int", help="GPUs in one scale-up domain (default: the GPU's, e.g. 8 on HGX)",
                  group="more"),
        FieldSpec("latency", "latency per step", "time", "1us", allow_zero=True),
        PROFILE,
    ),
    _run,
    unused=_unused,
    headline=("time", "bus bandwidth"),
    short_name="collect",
    title_fields=("op",),
)
