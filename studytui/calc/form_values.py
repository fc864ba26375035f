"""The values a calculator form starts with (the form layer; no Textual, no terminal).

Order, later wins: the calculator's own defaults, a worked example for fields the calculator
leaves empty (so every screen shows results at once), the learner's remembered GPU and
precision, and an entry's try-it arguments. The app's forms and `studytui check` (which runs
every try-it link through the calculator) both start from here, so they agree.
"""

from __future__ import annotations

from typing import Any, Mapping

from studytui.calc.forms import CalcSpec

# A starting example where the calculator has no default (it would otherwise open on an error).
UI_DEFAULTS: dict[str, dict[str, str]] = {
    "roofline": {"flops": "1e12", "bytes": "10GB"},
    "transformer": {"model": "llama-3.1-8b"},
    "kv": {"model": "llama-3.1-8b"},
    "memory": {"model": "llama-3.1-70b"},
    # A free draft (the calculator's default c = 0) makes every gamma look good; start realistic.
    "specdec": {"cost_ratio": "0.05"},
}
DEFAULT_GPU = "h200"


def as_text(value: Any) -> str:
    """A YAML value as the text a person would type in the box."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value).strip()


def initial_values(
    spec: CalcSpec,
    args: Mapping[str, Any] | None = None,
    remembered_gpu: str | None = None,
    remembered_dtype: str | None = None,
) -> dict[str, str]:
    names = {f.name for f in spec.fields}
    values = {f.name: f.default for f in spec.fields if f.default is not None}
    values.update({k: v for k, v in UI_DEFAULTS.get(spec.name, {}).items() if k in names})
    if "gpu" in names:
        values["gpu"] = remembered_gpu or values.get("gpu") or DEFAULT_GPU
    if "dtype" in names and remembered_dtype:
        values["dtype"] = remembered_dtype
    for key, value in (args or {}).items():
        if key in names and value is not None:
            values[key] = as_text(value)
    return values
