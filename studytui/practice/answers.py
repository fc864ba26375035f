"""A learner's answer as a number in SI units, read with the calculators' own unit parsers.

A problem states its unit (`ms`, `GiB`, `FLOP/B`...). An answer with a unit is read in that unit's
family ('31 ms', '0.031s', '3.1e-2 s' are the same time); a bare number is read in the problem's
unit ('31' to a question in ms means 31 ms), except for bytes, where a bare number is refused (GB
and GiB differ by 7%, so the unit is asked for). A unit of the wrong family is refused, not
guessed. A comma is refused: '0,889' may be a decimal comma or a thousands separator.

A percentage is right within the problem's relative tolerance, or when it is the answer rounded to
the decimal places the learner typed, a whole percent at the coarsest ('3%' for 3.03%, '12.1%'
for 12.14%; not '0%' for 0.4%): a relative tolerance alone refuses a two-figure percentage of a
small share (3% is 1% below 3.03%).
"""

from __future__ import annotations

import math
import re

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
# Patterns as text, compiled by `re` on first use (its cache keeps them): a listing that reads no
# answer compiles none of them (issue 27).
_NUMBER = r"^\s*[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$"
# family -> the parser in studytui.calc.units (imported when an answer is read, not for a listing)
_PARSERS = {"time": "parse_time", "size": "parse_size", "rate": "parse_rate", "flops": "parse_flops", "flops_rate": "parse_flops_rate"}


def unit_label(unit: str) -> str:
    return unit or "(a plain number)"


def percent_text(share: float, decimals: int | None = None) -> str:
    """A share as a percentage with as few decimals as it needs: 0.05 -> '5%', 0.001 -> '0.1%'."""
    if decimals is None:
        decimals = next((d for d in range(5) if math.isclose(round(share * 100, d), share * 100, rel_tol=1e-9, abs_tol=1e-12)), 4)
    return f"{share * 100:.{decimals}f}%"


def tolerance_text(tolerance: float, unit: str) -> str:
    """What counts as right, as the answer line and a miss say it (the same words in both)."""
    if unit == "%":
        # No example numbers: one could be the key (the answer line names a format, never a value).
        return (f"within {percent_text(tolerance)} of the answer counts, and so does the answer rounded to the decimal places "
                "you give (a whole percent at the coarsest)")
    return f"within {percent_text(tolerance)} counts"


def answer_format(unit: str) -> str:
    """The shape of an answer, with no number in it (the app's answer field shows it): an example
    value could be the key itself, and typing the example would then count ('12 ms' for 12.08 ms)."""
    if unit == "%":
        return "your answer: <number>%"
    if unit == "x":
        return "your answer: <number> or <number>x"
    return f"your answer: <number> {unit}".rstrip()


def answer_line(unit: str, tolerance: float) -> str:
    """How to answer a number problem, in one line (the CLI and the app say the same). Its
    examples are formats, not numbers: a number shown here could be the key."""
    rule = tolerance_text(tolerance, unit)
    if UNITS.get(unit, ("count", 1.0))[0] == "size":
        return f"Answer in {unit} with the unit written ('<number> {unit}'; any byte unit works); {rule}."
    if unit == "%":
        return f"Answer in percent ('<number>%' or the bare number); {rule}."
    if UNITS.get(unit, ("count", 1.0))[0] == "count":
        what = {"": "a plain number", "x": "a factor ('<number>' or '<number>x')"}.get(unit, f"a number of {unit}")
        if unit in ("FLOP/B", "tokens/s"):
            what = f"a number in {unit}"
        return f"Answer as {what}; {rule}."
    return f"Answer in {unit_label(unit)} (or with any unit of that kind); {rule}."


_PLAIN_PERCENT = r"^\s*\+?(\d[\d_]*)(?:\.(\d*))?\s*%?\s*$"


def typed_decimals(text: str, unit: str) -> int | None:
    """The decimal places a percentage answer was typed with ('3%' -> 0, '12.10' -> 2); None for
    another unit or a form without plain places ('3e0', '.5k')."""
    if unit != "%":
        return None
    m = re.match(_PLAIN_PERCENT, str(text))
    if not m:
        return None
    return len(m.group(2) or "")


def rounds_to(typed: str, value: float, key: float, unit: str) -> bool:
    """Whether a percentage answer is the key rounded to the decimal places typed (half away from
    zero), a whole percent at the coarsest, and that rounding keeps a non-zero figure of the key."""
    places = typed_decimals(typed, unit)
    if places is None or key <= 0:
        return False
    scale = 10**places
    rounded = math.floor(key * 100 * scale + 0.5) / scale  # the key in percent, to those places
    return rounded > 0 and math.isclose(value * 100, rounded, rel_tol=1e-9, abs_tol=1e-12)


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
    if re.match(_NUMBER, raw):
        if family == "size":
            raise UsageError(
                f"{_FIELD}: {raw.strip()} needs a unit: bytes are easy to misread by 1000 vs 1024, so say which "
                f"(for example '{raw.strip()} {unit}'; B, KB, MB, GB, KiB, MiB, GiB all work)"
            )
        value = float(raw.replace("_", "")) * factor
    elif family in _PARSERS:
        from studytui.calc import units as u

        value = getattr(u, _PARSERS[family])(raw, _FIELD)
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
    if re.match(_NUMBER, body):
        return float(body.replace("_", "")) * factor
    from studytui.calc import units as u

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
