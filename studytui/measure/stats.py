"""Order statistics of repeated timings: median for the figure, min and max for the spread."""

from __future__ import annotations

import math
from typing import Sequence


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def spread(values: Sequence[float]) -> dict[str, float]:
    """{'median', 'min', 'max'} of the values."""
    return {"median": median(values), "min": float(min(values)), "max": float(max(values))}


def all_positive_finite(values: Sequence[float]) -> bool:
    return bool(values) and all(math.isfinite(v) and v > 0 for v in values)
