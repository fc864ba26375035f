"""Numbers and units as Nsight Compute writes them in its CSV exports.

ncu scales each column to a unit of its choosing unless `--print-units base` is given: the raw
page's second header row and the details page's "Metric Unit" column name it. Seen in exports of
ncu 2025.3.1 (H200): `ns`, `us`, `ms`, `byte`, `Kbyte`, `Mbyte`, `Gbyte`, `Tbyte`, `byte/s`,
`Mbyte/s`, `Gbyte/s`, `Tbyte/s`, `Ghz`, `%`, `cycle`, `inst`, `inst/cycle`, `sector`, `warp`, and
no unit at all for the tensor-pipe op counters. Older releases spell times `nsecond`, `usecond`,
`msecond` and rates `byte/second`. Byte prefixes are decimal: a GEMM reading 25,165,824 bytes of
operands reports `dram__bytes_read.sum` as 25.189376 Mbyte (checked on an H200 capture).

Numbers carry ',' thousands separators and a '.' decimal point (ncu's default English format:
"17,179,869,184", "31.072000"). A locale that swaps them ("27.595.520", "65,77") is refused: the
same digits would mean another number.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

# What a quantity is, for checking a unit against the metric it belongs to.
TIME, BYTES, RATE, FREQ, PERCENT, COUNT, PER_CYCLE = "time", "bytes", "bytes/s", "frequency", "percent", "count", "count per cycle"
BYTES_PER_CYCLE = "bytes per cycle"  # dram__bytes.sum.peak_sustained: "Kbyte/cycle"

_TIME = {
    "s": 1.0, "sec": 1.0, "second": 1.0, "ms": 1e-3, "msec": 1e-3, "msecond": 1e-3,
    "us": 1e-6, "usec": 1e-6, "usecond": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9, "nsec": 1e-9, "nsecond": 1e-9,
}
_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_BYTE = re.compile(r"^(Ki|Mi|Gi|Ti|[kKMGTP]?)(?:byte|B)$")
_HZ = re.compile(r"^([kKMGT]?)hz$", re.IGNORECASE)
# Counts of things: a prefix may scale them ("Kinst", "Mcycle"); the word itself says what they are.
_COUNT_WORDS = ("inst", "cycle", "sector", "request", "warp", "thread", "block", "pass", "sample", "wavefront")
_COUNT = re.compile(rf"^([kKMGT]?)({'|'.join(_COUNT_WORDS)})s?$")


class UnitError(ValueError):
    """A unit this reader does not know, or one that does not fit the metric."""


@lru_cache(maxsize=512)
def unit_scale(unit: str) -> tuple[str, float]:
    """(kind, factor to SI) for a unit string: ('time', 1e-6) for 'us', ('bytes', 1e6) for
    'Mbyte', ('bytes/s', 1e9) for 'Gbyte/s', ('frequency', 1e9) for 'Ghz', ('percent', 1) for
    '%', ('count', 1) for '' or 'inst'. UnitError for anything else."""
    u = unit.strip()
    if u == "":
        return COUNT, 1.0
    if u == "%":
        return PERCENT, 1.0
    if u in _TIME:
        return TIME, _TIME[u]
    m = _BYTE.match(u)
    if m:
        prefix = m.group(1)
        return BYTES, _BINARY[prefix] if prefix in _BINARY else _DECIMAL[prefix]
    if "/" in u:
        top, bottom = (part.strip() for part in u.split("/", 1))
        if bottom in _TIME:
            m = _BYTE.match(top)
            if m:
                prefix = m.group(1)
                return RATE, (_BINARY[prefix] if prefix in _BINARY else _DECIMAL[prefix]) / _TIME[bottom]
            if top == "cycle":
                return FREQ, 1.0 / _TIME[bottom]
        if bottom == "cycle":
            m = _BYTE.match(top)
            if m:
                prefix = m.group(1)
                return BYTES_PER_CYCLE, _BINARY[prefix] if prefix in _BINARY else _DECIMAL[prefix]
            m = _COUNT.match(top)
            if m or top == "":
                return PER_CYCLE, _DECIMAL[m.group(1)] if m else 1.0
        raise UnitError(f"unknown unit {unit!r}")
    m = _HZ.match(u)
    if m:
        return FREQ, _DECIMAL[m.group(1)]
    m = _COUNT.match(u)
    if m:
        return COUNT, _DECIMAL[m.group(1)]
    raise UnitError(f"unknown unit {unit!r}")


_PLAIN = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_GROUPED = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][-+]?\d+)?$")
# "158 (0: 158)": a value exported per instance; the leading figure is the aggregate.
_INSTANCED = re.compile(r"^(\S+)\s+\(.*\)$")
NOT_A_NUMBER = ("", "n/a", "N/A", "nan", "-")


def parse_number(text: str) -> float | None:
    """A value as ncu prints it: '17,179,869,184' -> 1.7179869184e10, '31.072000' -> 31.072,
    '' / 'n/a' -> None. ValueError for text that is not a number in ncu's format."""
    t = text.strip()
    if t in NOT_A_NUMBER:
        return None
    m = _INSTANCED.match(t)
    if m:
        t = m.group(1)
    if _PLAIN.match(t):
        value = float(t)
    elif _GROUPED.match(t):
        value = float(t.replace(",", ""))
    else:
        raise ValueError(f"{text[:40]!r} is not a number as Nsight Compute writes them ('1,234.5')")
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]!r} is not a finite number")
    return value


def looks_like_other_locale(text: str) -> bool:
    """True for numbers written with '.' thousands and ',' decimals ('27.595.520', '65,77'): ncu
    run under such a locale. Their digits cannot be read the default way."""
    t = text.strip()
    return bool(re.match(r"^[-+]?\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?$", t) or re.match(r"^[-+]?\d+,\d{1,2}$", t)
                or re.match(r"^[-+]?\d{1,3}(?:\.\d{3})+,\d+$", t))


def si_value(text: str, unit: str, kind: str, metric: str) -> float | None:
    """`text` in `unit` converted to SI, checked to be a `kind`. ValueError (with the metric's
    name) when the unit is unknown, of another kind, or the text is not a number."""
    try:
        got, factor = unit_scale(unit)
    except UnitError as exc:
        raise ValueError(f"{metric}: {exc}") from None
    if got != kind:
        raise ValueError(f"{metric}: unit {unit!r} is a {got}, expected a {kind}")
    try:
        value = parse_number(text)
    except ValueError as exc:
        raise ValueError(f"{metric}: {exc}") from None
    return None if value is None else value * factor
