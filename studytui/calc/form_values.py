"""How calculator forms are presented, and the values they start with (the form layer; no
Textual, no terminal). What is particular to one calculator (its starting example, which of its
fields sit in which group) is in its spec, in its own module; this is the shared part.

Starting values, later wins: the calculator's own defaults, a worked example for fields the
calculator leaves empty (`CalcSpec.ui_defaults`, so every screen shows results at once), the
learner's remembered GPU and precision, and an entry's try-it arguments. The app's forms and
`studytui check` (which runs every try-it link through the calculator) both start from here, so
they agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from studytui.calc.forms import CalcSpec, FieldSpec

# The collapsed groups of rarely changed fields, in the order the form shows them: (id, title).
# A field names its group (FieldSpec.group).
GROUPS: tuple[tuple[str, str], ...] = (
    ("dims", "Model dimensions (override the preset)"),
    ("ceilings", "Ceilings: profile and overrides"),
    ("more", "More options"),
)
DEFAULT_GPU = "h200"


def group_of(field: FieldSpec) -> str | None:
    """Which collapsed group a field sits in (None: always visible): the field's own `group`."""
    return field.group


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
    values.update({k: v for k, v in spec.ui_defaults.items() if k in names})
    if "gpu" in names:
        values["gpu"] = remembered_gpu or values.get("gpu") or DEFAULT_GPU
    if "dtype" in names and remembered_dtype:
        values["dtype"] = remembered_dtype
    for key, value in (args or {}).items():
        if key in names and value is not None:
            values[key] = as_text(value)
    return values
