"""Parse and format quantities with units: sizes, rates, FLOP rates, times and plain counts.

Everything is returned in SI base units as floats: bytes, bytes/s, FLOP/s, seconds, counts.
Decimal prefixes (k, M, G, T, P) mean powers of 1000; binary prefixes (Ki, Mi, Gi, Ti) mean
powers of 1024. Bandwidths are decimal by convention (4.8TB/s = 4.8e12 B/s).
Bad input raises FieldError naming the field, so the CLI and the TUI can say which box is wrong.
"""

from __future__ import annotations

import math
import re

from studytui.core.errors import UsageError


class FieldError(UsageError):
    """A value the user typed for one field is not acceptable."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}
TIME_UNITS = {
    "s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9,
    "min": 60.0, "h": 3600.0,
}

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|infinity|nan)"
_SPLIT = rf"^\s*({_NUMBER})\s*(.*?)\s*$"  # compiled (with re.IGNORECASE) by `re` on first use


def _split(text: str, field: str, accepted: str) -> tuple[float, str]:
    if not isinstance(text, str):
        text = str(text)
    match = re.match(_SPLIT, text.replace("_", "").replace(",", ""), re.IGNORECASE)
    if not match:
        raise FieldError(field, f"{text!r} is not a number; expected {accepted}")
    return float(match.group(1)), match.group(2)


def _check(value: float, field: str, text: str, allow_zero: bool = False) -> float:
    if math.isnan(value) or math.isinf(value):
        raise FieldError(field, f"{text!r} is not a finite number")
    if value < 0 or (value == 0 and not allow_zero):
        need = "zero or more" if allow_zero else "greater than zero"
        raise FieldError(field, f"{text!r} must be {need}")
    return value


def _prefix_factor(prefix: str) -> float | None:
    if prefix in BINARY:
        return BINARY[prefix]
    if prefix in DECIMAL:
        return DECIMAL[prefix]
    # Forgiving about case for the unambiguous prefixes ('gb', 'tib'); never 'm' (milli?).
    if prefix in ("g", "t", "p"):
        return DECIMAL[prefix.upper()]
    title = prefix[:1].upper() + prefix[1:].lower()
    if len(prefix) == 2 and title in BINARY:
        return BINARY[title]
    return None


def parse_count(text: str, field: str = "value", *, allow_zero: bool = False) -> float:
    """A plain number: '1e12', '4096', '128k', '1.5M', '2Gi' (binary prefixes allowed)."""
    accepted = "a number such as 4096, 1e12, 128k or 1.5G"
    value, unit = _split(text, field, accepted)
    factor = 1.0
    if unit:
        prefix = _prefix_factor(unit)
        if prefix is None:
            raise FieldError(field, f"unknown unit {unit!r} in {text!r}; expected {accepted}")
        factor = prefix
    return _check(value * factor, field, text, allow_zero)


def parse_int(text: str, field: str = "value", *, allow_zero: bool = False) -> int:
    """A whole number, with optional k/M/G prefixes ('128k' = 128000, '4Ki' = 4096)."""
    value = parse_count(text, field, allow_zero=allow_zero)
    if value != int(value):
        raise FieldError(field, f"{text!r} must be a whole number")
    return int(value)


def parse_float(text: str, field: str = "value", *, allow_zero: bool = False, maximum: float | None = None) -> float:
    value = parse_count(text, field, allow_zero=allow_zero)
    if maximum is not None and value > maximum:
        raise FieldError(field, f"{text!r} must be at most {maximum:g}")
    return value


def _size_unit(unit: str) -> float | None:
    u = unit.strip()
    for suffix in ("bytes", "byte", "B"):
        if u.endswith(suffix):
            return _prefix_factor(u[: -len(suffix)])
    if u.lower().endswith("bytes"):
        return _prefix_factor(u[:-5])
    if u.endswith("b") and u[:-1] in ("k", "K", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "kB"):
        return None  # 'Gb' is gigabits: refuse rather than guess
    if u == "":
        return 1.0
    return None


def parse_size(text: str, field: str = "size", *, allow_zero: bool = False) -> float:
    """Bytes: '80GB' = 80e9, '80GiB' = 80*2^30, '512' = 512 bytes, '1e9' = 1e9 bytes."""
    accepted = "a size such as 80GB, 80GiB, 64MiB, 4096 or 1e9 (bytes)"
    value, unit = _split(text, field, accepted)
    factor = _size_unit(unit)
    if factor is None:
        raise FieldError(field, f"unknown size unit {unit!r} in {text!r}; expected {accepted}")
    return _check(value * factor, field, text, allow_zero)


def parse_rate(text: str, field: str = "bandwidth") -> float:
    """Bytes per second: '4.8TB/s', '900GB/s', '450e9' (B/s), '1.5 TiB/s'."""
    accepted = "a bandwidth such as 4.8TB/s, 900GB/s, 450GiB/s or 3.35e12 (bytes/s)"
    value, unit = _split(text, field, accepted)
    u = unit.replace(" ", "")
    if u.endswith("/s"):
        u = u[:-2]
    elif u.endswith("Bps"):
        u = u[:-2]
    factor = _size_unit(u) if u else 1.0
    if factor is None:
        raise FieldError(field, f"unknown bandwidth unit {unit!r} in {text!r}; expected {accepted}")
    return _check(value * factor, field, text)


def parse_flops_rate(text: str, field: str = "peak_flops") -> float:
    """FLOP per second: '989TFLOP/s', '989 TFLOPS', '1.979PFLOPS', '9.89e14'. 'TOPS' accepted for int."""
    accepted = "a rate such as 989TFLOP/s, 989 TFLOPS, 2.25PFLOPS or 9.89e14 (FLOP/s)"
    value, unit = _split(text, field, accepted)
    u = unit.replace(" ", "")
    factor: float | None = 1.0
    if u:
        m = re.match(r"^([kKMGTPE]?)(?:FLOP/s|FLOPS|FLOPs|flop/s|flops|OP/s|OPS|ops)$", u)
        factor = DECIMAL[m.group(1)] if m else None
    if factor is None:
        raise FieldError(field, f"unknown FLOP-rate unit {unit!r} in {text!r}; expected {accepted}")
    return _check(value * factor, field, text)


def parse_flops(text: str, field: str = "flops") -> float:
    """A FLOP count: '1e12', '2TFLOP', '1.5 GFLOPs', '128k'."""
    accepted = "a FLOP count such as 1e12, 2TFLOP or 350GFLOP"
    value, unit = _split(text, field, accepted)
    u = unit.replace(" ", "")
    factor: float | None = 1.0
    if u:
        m = re.match(r"^([A-Za-z]{0,2}?)(?:FLOP|FLOPs|flop|flops)?$", u)
        factor = _prefix_factor(m.group(1)) if m else None
    if factor is None:
        raise FieldError(field, f"unknown unit {unit!r} in {text!r}; expected {accepted}")
    return _check(value * factor, field, text)


def parse_time(text: str, field: str = "time", *, allow_zero: bool = False) -> float:
    """Seconds: '5us', '1.5ms', '2s', '0.001' (seconds)."""
    accepted = "a time such as 5us, 1.5ms, 0.2s or 1e-3 (seconds)"
    value, unit = _split(text, field, accepted)
    u = unit.strip()
    factor = TIME_UNITS.get(u, 1.0 if u == "" else None)
    if factor is None:
        raise FieldError(field, f"unknown time unit {unit!r} in {text!r}; expected {accepted}")
    return _check(value * factor, field, text, allow_zero)


# ---- formatting ---------------------------------------------------------------------------

_SI = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
_BIN = [(2.0**50, "Pi"), (2.0**40, "Ti"), (2.0**30, "Gi"), (2.0**20, "Mi"), (2.0**10, "Ki")]


def _scaled(value: float | None, unit: str, digits: int, table: list[tuple[float, str]] = _SI) -> str:
    if value is None:
        return "-"
    magnitude = abs(value)
    for factor, prefix in table:
        if magnitude >= factor:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}".rstrip()


def format_size(value: float, digits: int = 4, binary: bool = False) -> str:
    """'80 GB' (decimal) or '74.51 GiB' (binary=True)."""
    return _scaled(value, "B", digits, _BIN if binary else _SI)


def format_rate(value: float, digits: int = 4) -> str:
    return _scaled(value, "B/s", digits)


def format_flops_rate(value: float, digits: int = 4) -> str:
    return _scaled(value, "FLOP/s", digits)


def format_flops(value: float, digits: int = 4) -> str:
    return _scaled(value, "FLOP", digits)


def format_count(value: float, digits: int = 4) -> str:
    if value is None:
        return "-"
    if float(value).is_integer() and abs(value) < 1e6:
        return f"{int(value):,}"
    return _scaled(value, "", digits)


def format_time(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "-"
    magnitude = abs(value)
    if magnitude >= 1 or magnitude == 0:
        return f"{value:.{digits}g} s"
    if magnitude >= 1e-3:
        return f"{value * 1e3:.{digits}g} ms"
    if magnitude >= 1e-6:
        return f"{value * 1e6:.{digits}g} us"
    return f"{value * 1e9:.{digits}g} ns"


def format_percent(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value * 100:.{digits}g}%"
