"""A second toy calculator, written the way a new one is, that the app plots on the roofline
(`plot="roofline"`): its result has the ceilings (`peak_flops`, `mem_bw`) and its point
(`intensity`, `attainable_flops`), which is all the roofline plot reads.

tests/conftest.py (the `toy_roofline` fixture) copies it into a package of its own as
`<package>.toyroof`, named "toyroof", and adds it to studytui.calc.registry.MODULES.
"""

from __future__ import annotations

from typing import Any

from studytui.calc.forms import CalcSpec, DataDir, FieldSpec
from studytui.calc.result import Result
from studytui.calc.units import format_flops_rate


def toy_roof(flops: float, bytes_moved: float, peak_flops: float, mem_bw: float) -> Result:
    """Where `flops` of work over `bytes_moved` of traffic sits under a roof of `peak_flops` and `mem_bw`."""
    result = Result("toyroof")
    intensity = flops / bytes_moved
    attainable = min(peak_flops, intensity * mem_bw)
    result.values.update(flops=flops, bytes=bytes_moved, intensity=intensity, peak_flops=peak_flops, mem_bw=mem_bw,
                         attainable_flops=attainable, time_s=flops / attainable)
    result.step(f"intensity = {flops:g} / {bytes_moved:g} = {intensity:g} FLOP/B")
    result.row("toy intensity", f"{intensity:g} FLOP/B")
    result.row("toy attainable", format_flops_rate(attainable))
    return result


def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    return toy_roof(p["flops"], p["bytes"], p["peak_flops"], p["mem_bw"])


SPEC = CalcSpec(
    "toyroof", "Toy roofline",
    "A toy kernel under a toy roof (a calculator that only the tests register).",
    (
        FieldSpec("flops", "FLOPs", "flops", "1e12", help="work, e.g. 1e12 or 2TFLOP"),
        FieldSpec("bytes", "bytes moved", "size", "4GB", help="traffic, e.g. 4GB"),
        FieldSpec("peak_flops", "peak FLOP/s", "flops_rate", "100TFLOP/s", help="the roof, e.g. 100TFLOP/s"),
        FieldSpec("mem_bw", "memory bandwidth", "rate", "2TB/s", help="the slope, e.g. 2TB/s"),
    ),
    _run,
    plot="roofline",
)
