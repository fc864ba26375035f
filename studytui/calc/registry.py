"""Every calculator, in order: the one list a new calculator is added to.

A calculator is one module, `studytui/calc/<name>.py`: its arithmetic and its `SPEC` (a
`studytui.calc.forms.CalcSpec`: title, fields, the run adapter, and how the CLI and the app
present it). `MODULES` names those modules; the last part of a module's name is the
calculator's name. The CLI, the app's palette, hub and F-keys, `studytui check` and practice all
find calculators here, in this order.

Nothing is imported until it is asked for: names come from `MODULES` alone, and a spec loads
its own module only (`studytui calc roofline` imports the roofline and no other calculator).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studytui.calc.forms import CalcSpec

MODULES: tuple[str, ...] = (
    "studytui.calc.roofline",
    "studytui.calc.gemm",
    "studytui.calc.transformer",
    "studytui.calc.collective",
    "studytui.calc.specdec",
    "studytui.calc.kv",
    "studytui.calc.memory",
    "studytui.calc.occupancy",
    "studytui.calc.tile",
    "studytui.calc.l2",
)

_loaded: dict[str, CalcSpec] = {}  # module name -> its SPEC, once imported


def name_of(module: str) -> str:
    """A calculator's name: the last part of its module's name."""
    return module.rpartition(".")[2]


def names() -> tuple[str, ...]:
    """Every calculator's name, in order. Imports nothing."""
    return tuple(name_of(module) for module in MODULES)


def module_for(name: str) -> str:
    """The module that holds calculator `name`. KeyError for an unknown name."""
    for module in MODULES:
        if name_of(module) == name:
            return module
    raise KeyError(name)


def spec(name: str) -> CalcSpec:
    """Calculator `name`'s spec, importing its module (only) the first time. KeyError for an
    unknown name."""
    module = module_for(name)
    if module not in _loaded:
        __import__(module)  # (not importlib.import_module: -X importtime does not see that one)
        found: CalcSpec = sys.modules[module].SPEC
        if found.name != name:
            raise RuntimeError(f"{module}.SPEC is named {found.name!r}; a calculator's name is its module's ({name!r})")
        _loaded[module] = found
    return _loaded[module]


def specs() -> list[CalcSpec]:
    """Every calculator's spec, in order (imports every calculator module)."""
    return [spec(name) for name in names()]


class Calculators(Mapping[str, "CalcSpec"]):
    """Every calculator's spec by name, in order, read from `MODULES` whenever it is used; a spec
    is loaded when it is first looked up (iterating gives the names and loads nothing)."""

    def __getitem__(self, name: str) -> CalcSpec:
        return spec(name)

    def __iter__(self) -> Iterator[str]:
        return iter(names())

    def __len__(self) -> int:
        return len(MODULES)

    def __contains__(self, name: object) -> bool:
        return name in names()

    def __repr__(self) -> str:
        return f"Calculators({', '.join(names())})"


CALCULATORS: Mapping[str, CalcSpec] = Calculators()
