"""The interface between the benchmark logic and a device backend.

A backend builds `Case`s (one operation on prepared buffers), times them, and describes the
machine. The runner decides what to measure and whether a result counts; a backend only
executes. A fake backend in the tests implements the same methods on the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence


class BackendUnavailable(Exception):
    """The backend cannot run here (no PyTorch, no CUDA device)."""


@dataclass
class Check:
    """The outcome of comparing one run's output with a reference computation."""

    error: float  # the measured discrepancy (relative error, or fraction of wrong elements)
    tolerance: float  # the largest error that still counts as correct
    method: str  # how the reference was computed and compared, in words

    @property
    def passed(self) -> bool:
        # NaN compares false, so a NaN error never passes.
        return self.error <= self.tolerance


class Case(Protocol):
    def run(self) -> None:
        """Enqueue the operation once (may return before the device finishes)."""

    def check(self) -> Check:
        """Re-run on fresh inputs into a poisoned output and compare with a reference."""

    def release(self) -> None:
        """Free the buffers."""


@dataclass
class CollectiveMeasurement:
    op: str  # all_reduce | all_gather | reduce_scatter | all_to_all
    nbytes: int  # as nccl-tests counts it (see runner.BUS_FACTORS)
    world_size: int
    times_s: list[float]
    check: Check
    dtype: str = "fp32"
    extra: dict[str, Any] = field(default_factory=dict)


class Backend(Protocol):
    name: str

    def describe_hardware(self) -> dict[str, Any]:
        """name, sm_count, memory_bytes, driver, clocks (where readable), gpu_count."""

    def describe_software(self) -> dict[str, Any]:
        """Versions of the framework, CUDA, driver, Python."""

    def device_memory_bytes(self) -> int | None: ...

    def supported_precisions(self) -> list[str]: ...

    def gpu_count(self) -> int: ...

    def bandwidth_case(self, kind: str, nbytes: int) -> Case: ...

    def gemm_case(self, precision: str, m: int, n: int, k: int) -> Case: ...

    def time_case(self, case: Case, warmup: int, repetitions: int) -> list[float]:
        """Seconds per repetition, timed on the device after `warmup` untimed runs."""

    def run_collectives(
        self, ops: Sequence[str], sizes: Sequence[int], warmup: int, repetitions: int, world: int | None = None
    ) -> list[CollectiveMeasurement]:
        """Each op at each size over `world` GPUs (default: all of them), one process per GPU."""

    def clocks_now(self) -> dict[str, Any]:
        """Current clocks (read after the heavy work, to show what the chip ran at)."""
