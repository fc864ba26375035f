"""Unit parsing and formatting: SI results, named-field errors, round trips."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studytui.calc import units
from studytui.calc.units import FieldError
from studytui.core.errors import UsageError


@pytest.mark.parametrize(
    "text, expected",
    [
        ("80GB", 80e9),
        ("80GiB", 80 * 2**30),
        ("64MiB", 64 * 2**20),
        ("1e9", 1e9),
        ("512 B", 512.0),
        ("1.5 TB", 1.5e12),
        ("4096", 4096.0),
    ],
)
def test_parse_size(text: str, expected: float) -> None:
    assert units.parse_size(text, "bytes") == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    "text, expected",
    [("4.8TB/s", 4.8e12), ("900GB/s", 900e9), ("450e9", 450e9), ("1 TiB/s", 2.0**40), ("100GBps", 100e9)],
)
def test_parse_rate(text: str, expected: float) -> None:
    assert units.parse_rate(text, "mem_bw") == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    "text, expected",
    [("989TFLOP/s", 989e12), ("989 TFLOPS", 989e12), ("9.89e14", 9.89e14), ("2.25PFLOPS", 2.25e15), ("624 TOPS", 624e12)],
)
def test_parse_flops_rate(text: str, expected: float) -> None:
    assert units.parse_flops_rate(text, "peak_flops") == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("text, expected", [("5us", 5e-6), ("1.5ms", 1.5e-3), ("2s", 2.0), ("1e-3", 1e-3), ("250ns", 250e-9)])
def test_parse_time(text: str, expected: float) -> None:
    assert units.parse_time(text, "time") == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("text, expected", [("128k", 128e3), ("1e12", 1e12), ("4Ki", 4096), ("2TFLOP", 2e12)])
def test_parse_counts_and_flops(text: str, expected: float) -> None:
    assert units.parse_flops(text, "flops") == pytest.approx(expected)


def test_parse_int_accepts_prefix_and_rejects_fractions() -> None:
    assert units.parse_int("128k", "context") == 128000
    with pytest.raises(FieldError, match="batch.*whole number"):
        units.parse_int("1.5", "batch")


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf", "-inf", "abc", "", "10Gb", "5 parsecs"])
def test_bad_sizes_name_the_field(bad: str) -> None:
    with pytest.raises(FieldError) as info:
        units.parse_size(bad, "bytes")
    assert info.value.field == "bytes"
    assert str(info.value).startswith("bytes:")
    assert isinstance(info.value, UsageError)


@pytest.mark.parametrize("parser", [units.parse_rate, units.parse_flops_rate, units.parse_time, units.parse_count])
@pytest.mark.parametrize("bad", ["0", "-3", "NaN", "infinity", "twelve"])
def test_every_parser_rejects_bad_numbers(parser, bad: str) -> None:
    with pytest.raises(FieldError, match="^thing:"):
        parser(bad, "thing")


def test_zero_allowed_only_when_asked() -> None:
    assert units.parse_time("0", "latency", allow_zero=True) == 0.0
    with pytest.raises(FieldError):
        units.parse_time("0", "latency")


positive = st.floats(min_value=1e-3, max_value=1e18, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(positive)
def test_size_round_trip(value: float) -> None:
    text = units.format_size(value, digits=15)
    assert units.parse_size(text.replace(" ", ""), "bytes") == pytest.approx(value, rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(positive)
def test_binary_size_round_trip(value: float) -> None:
    text = units.format_size(value, digits=15, binary=True)
    assert units.parse_size(text, "bytes") == pytest.approx(value, rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(positive)
def test_rate_round_trip(value: float) -> None:
    assert units.parse_rate(units.format_rate(value, digits=15), "bw") == pytest.approx(value, rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(positive)
def test_flops_rate_round_trip(value: float) -> None:
    assert units.parse_flops_rate(units.format_flops_rate(value, digits=15), "peak") == pytest.approx(value, rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-9, max_value=1e5, allow_nan=False))
def test_time_round_trip(value: float) -> None:
    assert units.parse_time(units.format_time(value, digits=15), "time") == pytest.approx(value, rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=12))
def test_garbage_never_escapes_as_anything_but_field_error(text: str) -> None:
    for parser in (units.parse_size, units.parse_rate, units.parse_flops_rate, units.parse_time, units.parse_int):
        try:
            value = parser(text, "f")
        except FieldError:
            continue
        assert math.isfinite(value) and value > 0
