"""How each typed value was read, in words a learner can check: `128k` -> `128,000`, a bare
`2` in a time field -> `2 s`. No Textual here.

Only values whose reading is not plain from the text are listed (a `4096` in a count field says
itself), so the list stays short.
"""

from __future__ import annotations

import re
from typing import Mapping

from studytui.calc.forms import CalcSpec, parse_field
from studytui.calc.units import FieldError, format_flops, format_flops_rate, format_rate, format_size, format_time
from studytui.core.errors import StudyError

_BARE = re.compile(r"^[0-9]*\.?[0-9]+(e[+-]?[0-9]+)?$", re.IGNORECASE)  # a number, no unit
_SUFFIXED = re.compile(r"^[0-9.]+\s*[kKMGTP]$")  # 128k, 1.5M


def reading(kind: str, value: float) -> str:
    if kind == "int" or (kind == "float" and float(value).is_integer() and abs(value) < 1e15):
        return f"{int(value):,}"
    if kind == "flops":
        return f"{format_flops(value)} ({value:,.0f} FLOPs)"
    if kind == "size":
        return f"{format_size(value)} ({value:,.0f} bytes)"
    if kind == "rate":
        return format_rate(value)
    if kind == "flops_rate":
        return format_flops_rate(value)
    if kind == "time":
        return format_time(value)
    return f"{value:g}"


def readings(spec: CalcSpec, values: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(field label, text as typed, how it was read) where the reading is not plain from the
    text: a count with a suffix (`128k` = 128,000), a time or size typed without a unit."""
    out = []
    for field in spec.fields:
        text = str(values.get(field.name, "") or "").strip()
        if not text or field.kind not in ("int", "float", "flops", "size", "rate", "flops_rate", "time"):
            continue
        try:
            value = parse_field(field, text)
        except (FieldError, StudyError, ValueError, TypeError):
            continue
        if not isinstance(value, (int, float)):
            continue
        bare = bool(_BARE.match(text))
        if field.kind == "time":
            if bare:
                out.append((field.label, text, f"{format_time(value)} (no unit: seconds)"))
        elif field.kind in ("int", "float", "flops"):
            if _SUFFIXED.match(text):
                out.append((field.label, text, reading(field.kind, float(value))))
        elif bare and abs(value) >= 1000:  # a large size or rate without a unit: say its scale
            out.append((field.label, text, reading(field.kind, float(value))))
    return out
