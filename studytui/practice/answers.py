"""A learner's answer as a number in SI units, read with the calculators' own unit parsers.

A problem states its unit (`ms`, `GiB`, `FLOP/B`...). An answer with a unit is read in that unit's
family ('31 ms', '0.031s', '3.1e-2 s' are the same time); a bare number is read in the problem's
unit ('31' to a question in ms means 31 ms), except for bytes, where a bare number is refused (GB
and GiB differ by 7%, so the unit is asked for). A unit of the wrong family is refused, not
guessed. A comma is refused: '0,889' may be a decimal comma or a thousands separator.
"""

from __future__ import annotations

import math
import re

from studytui.calc import units as u
from studytui.core.errors import UsageError

# unit -> (family, SI factor). Families decide which parser reads an answer that carries a unit.
UNITS: dict[str, tuple[str, float]] = {
    "s": ("time", 1.0), "ms": ("time", 1e-3), "us": ("time", 1e-6), "ns": ("time", 1e-9),
    "B": ("size", 1.0), "KB": ("size", 1e3), "MB": ("size", 1e6), "GB": ("size", 1e9), "TB": ("size", 1e12),
    "KiB": ("size", 2.0**10), "MiB": ("size", 2.0**20), "GiB": ("size", 2.0**30), "TiB": ("size", 2.0**40),
    "GB/s": ("rate", 1e9), "TB/s": ("rate", 1e12),
    "FLOP": ("flops", 1.0), "GFLOP": ("flops", 1e9), "TFLOP": ("flops", 1e12), "PFLOP": ("flops", 1e15),
    "TFLOP/s": ("flops_rate", 1e12), "PFLOP/s": ("flops_rate", 1e15),
    # Plain counts: the word after the number is optional and must be this one.
    "": ("count", 1.0), "FLOP/B": ("count", 1.0), "x": ("count", 1.0), "tokens": ("count", 1.0),
    "tokens/s": ("count", 1.0), "waves": ("count", 1.0), "tiles": ("count", 1.0), "sequences": ("count", 1.0),
    "GPUs": ("count", 1.0), "steps": ("count", 1.0), "%": ("percent", 0.01),
}

_FIELD = "answer"
MAX_ANSWER = 60  # characters: a longer "number" is a paste accident, and is not echoed back
_NUMBER = re.compile(r"^\s*[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$")
_PARSERS = {
    "time": u.parse_time, "size": u.parse_size, "rate": u.parse_rate, "flops": u.parse_flops,
    "flops_rate": u.parse_flops_rate,
}


def unit_label(unit: str) -> str:
    return unit or "(a plain number)"


def answer_line(unit: str, tolerance: float) -> str:
    """How to answer a number problem, in one line (the CLI and the app say the same)."""
    if UNITS.get(unit, ("count", 1.0))[0] == "size":
        return f"Answer in {unit} with the unit written ('12.5 {unit}'; any byte unit works); within {tolerance:.0%} counts."
    if unit == "%":
        return f"Answer in percent ('62%' or '62'); within {tolerance:.0%} counts."
    if UNITS.get(unit, ("count", 1.0))[0] == "count":
        what = {"": "a plain number", "x": "a factor ('1.8' or '1.8x')"}.get(unit, f"a number of {unit}")
        if unit in ("FLOP/B", "tokens/s"):
            what = f"a number in {unit}"
        return f"Answer as {what}; within {tolerance:.0%} counts."
    return f"Answer in {unit_label(unit)} (or with any unit of that kind); within {tolerance:.0%} counts."


def parse_answer(text: str, unit: str) -> float:
    """The answer in SI units (seconds, bytes, ...). UsageError with one line for bad input."""
    if unit not in UNITS:
        raise UsageError(f"unknown unit {unit!r}")
    family, factor = UNITS[unit]
    raw = str(text).strip()
    if not raw:
        raise UsageError(f"{_FIELD}: empty; expected a number in {unit_label(unit)}")
    if len(raw) > MAX_ANSWER:
        raise UsageError(f"{_FIELD}: {len(raw)} characters is too long for a number; expected a number in {unit_label(unit)}")
    if "," in raw:
        plain = raw.replace(",", "")
        raise UsageError(
            f"{_FIELD}: {raw!r} has a comma, which reads as a decimal comma in some countries and a thousands separator in others; "
            f"write it with a decimal point ({raw.replace(',', '.', 1) if raw.count(',') == 1 else plain}) or without separators ({plain})"
        )
    if _NUMBER.match(raw):
        if family == "size":
            raise UsageError(
                f"{_FIELD}: {raw.strip()} needs a unit: bytes are easy to misread by 1000 vs 1024, so say which "
                f"(for example '{raw.strip()} {unit}'; B, KB, MB, GB, KiB, MiB, GiB all work)"
            )
        value = float(raw.replace("_", "")) * factor
    elif family in _PARSERS:
        value = _PARSERS[family](raw, _FIELD)
    else:
        value = _count(raw, unit, factor)
    if not math.isfinite(value):
        raise UsageError(f"{_FIELD}: {raw!r} is not a finite number")
    if value < 0:
        raise UsageError(f"{_FIELD}: {raw!r} is negative; every answer here is zero or more")
    return value


def _count(raw: str, unit: str, factor: float) -> float:
    body = raw
    if unit and body.lower().endswith(unit.lower()):
        body = body[: -len(unit)].strip()
    elif unit == "x" and body.lower().startswith("x"):
        body = body[1:].strip()
    elif unit == "FLOP/B" and re.search(r"(?i)flops?\s*/\s*(b|byte)$", body):
        body = re.sub(r"(?i)flops?\s*/\s*(b|byte)$", "", body).strip()
    if _NUMBER.match(body):
        return float(body.replace("_", "")) * factor
    try:
        return u.parse_count(body, _FIELD, allow_zero=True) * factor  # '1.5k', '2M'
    except u.FieldError:
        expected = f"a number, optionally followed by '{unit}'" if unit else "a plain number"
        raise UsageError(f"{_FIELD}: {raw!r} is not {expected}") from None


def format_value(value: float, unit: str, digits: int = 4) -> str:
    """A value (SI) shown in the problem's unit: '29.24 ms', '70.55 GiB', '295.3 FLOP/B'."""
    _, factor = UNITS.get(unit, ("count", 1.0))
    scaled = value / factor
    magnitude = abs(scaled)
    if magnitude == 0 or 1e-4 <= magnitude < 1e12:
        # Significant digits without an exponent; never rounds away integer digits (12994, not 1.299e+04).
        decimals = max(0, digits - 1 - math.floor(math.log10(magnitude))) if magnitude else 0
        text = f"{scaled:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
    else:
        text = f"{scaled:.{digits - 1}e}"
    if unit == "%":
        return text + "%"
    return f"{text} {unit}".rstrip()
