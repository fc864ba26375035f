"""Ring collectives: bandwidth term at the ONE-WAY link rate plus a per-step latency term.

Byte conventions follow nccl-tests ("size" column): all_reduce and reduce_scatter count the
input buffer, all_gather the gathered output, all_to_all the buffer each rank sends and receives
(its own share included), broadcast the buffer. Bus bandwidth = algorithm bandwidth x factor, the
number nccl-tests prints to compare against the link.
"""

from __future__ import annotations

from studytui.calc.result import Result
from studytui.calc.units import FieldError, format_percent, format_rate, format_size, format_time


def g(x: float) -> str:
    return f"{x:.4g}"


OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")


def _op_model(op: str, n: int) -> tuple[float, int, str, float, str]:
    """(bandwidth factor f so that time = f x bytes / link, ring steps, formula, busbw factor, busbw formula)."""
    if op == "all_reduce":
        return 2 * (n - 1) / n, 2 * (n - 1), "2(n-1)/n", 2 * (n - 1) / n, "2(n-1)/n"
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) / n, n - 1, "(n-1)/n", (n - 1) / n, "(n-1)/n"
    if op == "all_to_all":
        # Each rank sends (n-1)/n of its buffer, to all peers at once over a switch.
        return (n - 1) / n, n - 1, "(n-1)/n", (n - 1) / n, "(n-1)/n"
    if op == "broadcast":
        # Pipelined ring: every byte crosses each link once; n-1 hops of latency.
        return 1.0, n - 1, "1", 1.0, "1"
    raise FieldError("op", f"unknown collective {op!r}; accepted: {', '.join(OPS)}")


def ring_all_reduce_time(nbytes: float, n: int, link_bw: float, latency: float) -> tuple[float, float]:
    """(total time, bandwidth-only time) of a ring all-reduce of `nbytes` over n GPUs."""
    bandwidth = 2 * (n - 1) / n * nbytes / link_bw
    return bandwidth + 2 * (n - 1) * latency, bandwidth


def collective(op: str, gpus: int, nbytes: float, link_bw: float, latency: float = 1e-6, *, link_label: str = "") -> Result:
    """Time of one ring collective; `link_bw` is per GPU per direction (B/s)."""
    if op not in OPS:
        raise FieldError("op", f"unknown collective {op!r}; accepted: {', '.join(OPS)}")
    if gpus < 2:
        raise FieldError("gpus", f"a collective needs at least 2 GPUs (got {gpus})")
    factor, steps, formula, bus_factor, bus_formula = _op_model(op, gpus)
    result = Result("collective")
    bandwidth_time = factor * nbytes / link_bw
    latency_time = steps * latency
    time_s = bandwidth_time + latency_time
    algbw = nbytes / time_s
    busbw = algbw * bus_factor
    result.values.update(
        op=op, gpus=gpus, bytes=nbytes, link_bw_per_direction=link_bw, latency_s=latency, steps=steps,
        bandwidth_time_s=bandwidth_time, latency_time_s=latency_time, time_s=time_s,
        algbw=algbw, busbw=busbw, busbw_fraction_of_link=busbw / link_bw,
    )
    n = gpus
    result.step(f"bandwidth term = {formula} x bytes / link = {g(factor)} x {g(nbytes)} / {g(link_bw)} = {format_time(bandwidth_time)}   (n = {n})")
    result.step(f"latency term = steps x latency = {steps} x {format_time(latency)} = {format_time(latency_time)}")
    result.step(f"time = bandwidth + latency = {format_time(bandwidth_time)} + {format_time(latency_time)} = {format_time(time_s)}")
    result.step(f"algorithm bandwidth = bytes / time = {g(nbytes)} / {g(time_s)} = {format_rate(algbw)}")
    result.step(f"bus bandwidth = algbw x {bus_formula} = {format_rate(algbw)} x {g(bus_factor)} = {format_rate(busbw)}")
    result.row("collective", f"{op} over {n} GPUs (ring)")
    result.row("bytes (nccl-tests size)", format_size(nbytes))
    result.row("link (one way)", format_rate(link_bw) + (f" ({link_label})" if link_label else ""))
    result.row("bandwidth term", format_time(bandwidth_time))
    result.row("latency term", f"{format_time(latency_time)} ({steps} steps x {format_time(latency)})")
    result.row("time", format_time(time_s))
    result.row("algorithm bandwidth", format_rate(algbw))
    result.row("bus bandwidth", f"{format_rate(busbw)} ({format_percent(busbw / link_bw)} of the link)")
    conventions = {
        "all_reduce": "bytes = the input buffer (equal to the output), as nccl-tests counts it",
        "all_gather": "bytes = the gathered output (n x each rank's input), as nccl-tests counts it",
        "reduce_scatter": "bytes = the input buffer (n x each rank's output), as nccl-tests counts it",
        "all_to_all": "bytes = the buffer each rank sends (its own 1/n included), as nccl-tests counts it; assumes a full-bandwidth switch",
        "broadcast": "bytes = the broadcast buffer; pipelined ring with small chunks",
    }
    result.assume(conventions[op])
    result.assume("ring algorithm at the one-way (per-direction) link rate; catalog interconnect figures are bidirectional and are halved")
    result.assume(
        "latency is per ring step (a hop plus synchronisation); at small sizes it dominates. The 1 us default is an "
        "order-of-magnitude assumption, not a measured figure: fit it from nccl-tests at small sizes"
    )
    if op == "all_reduce":
        result.assume("NVLink SHARP (NVLS) on NVSwitch systems reduces in the switch and can beat the ring bound (bus bandwidth above the link rate)")
    return result
