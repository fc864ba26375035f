"""A toy calculator, written the way a new calculator is: one module, its arithmetic and its SPEC.

tests/test_calc_registry.py and tests/tui/test_calc_registry_app.py copy it into a package of
their own (so it is `<package>.toy`, named "toy"), add it to studytui.calc.registry.MODULES and
find it everywhere: `studytui calc --help`, `studytui calc toy`, the app's hub, screen and palette.
"""

from __future__ import annotations

from typing import Any

from studytui.calc.forms import CalcSpec, DataDir, FieldSpec
from studytui.calc.result import Result
from studytui.calc.units import FieldError, format_size


def toy_area(width: float, height: float, shape: str = "rectangle") -> Result:
    """The area of a rectangle, or of the triangle on the same base and height."""
    if shape not in ("rectangle", "triangle"):
        raise FieldError("shape", f"unknown shape {shape!r}; accepted: rectangle, triangle")
    result = Result("toy")
    area = width * height / (2 if shape == "triangle" else 1)
    result.values.update(width=width, height=height, shape=shape, area=area, time_s=None)
    result.step(f"area = width x height{' / 2' if shape == 'triangle' else ''} = {width:g} x {height:g} = {area:g}")
    result.row("shape", shape)
    result.row("base of the toy", format_size(width))
    result.row("area of the toy shape", f"{area:g}")
    result.assume("a flat toy: no thickness")
    return result


def _run(p: dict[str, Any], data_dir: DataDir) -> Result:
    return toy_area(p["width"], p["height"], p["shape"])


SPEC = CalcSpec(
    "toy", "Toy area",
    "The area of a toy rectangle or triangle (a calculator that only the tests register).",
    (
        FieldSpec("width", "width", "size", "2", help="the base, e.g. 2 or 4KB"),
        FieldSpec("height", "height", "float", required=True, help="the height"),
        FieldSpec("shape", "shape", "choice", "rectangle", choices=("rectangle", "triangle"), group="more"),
    ),
    _run,
    ui_defaults={"height": "3"},
    headline=("area",),
    short_labels=((r"^area of the toy shape$", "toy area"),),
    short_name="toy",
)
