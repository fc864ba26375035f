"""Helpers, not tests: a deterministic fake GPU backend for the measurement logic (runs on the CPU)."""

from __future__ import annotations

from typing import Any, Sequence

from studytui.measure.backend import Check, CollectiveMeasurement

FAKE_MEM_BW = 4.0e12  # B/s the fake "achieves"
# Bus bandwidth the fake "achieves" for large collectives, by GPU count (exact from 16 MiB up).
FAKE_BUS_BW = {2: 360e9, 4: 340e9, 8: 320e9}
FAKE_FLOPS = {"fp32": 50e12, "tf32": 400e12, "bf16": 800e12, "fp16": 780e12, "fp8": 1500e12}


class FakeCase:
    def __init__(self, seconds: float, error: float, tolerance: float, log: list[str], label: str):
        self.seconds, self.error, self.tolerance = seconds, error, tolerance
        self.log, self.label = log, label
        self.runs = 0

    def run(self) -> None:
        self.runs += 1

    def check(self) -> Check:
        self.log.append(f"check {self.label}")
        return Check(self.error, self.tolerance, f"fake reference for {self.label}")

    def release(self) -> None:
        self.log.append(f"release {self.label}")


class FakeBackend:
    """Timings follow a fixed pattern around a base time: base * (1, 1.1, 0.9, 1.2, 0.95, ...)."""

    name = "fake"
    pattern = (1.0, 1.1, 0.9, 1.2, 0.95)

    def __init__(self, gpus: int = 1, wrong: Sequence[str] = (), fail: Sequence[str] = (), precisions: Sequence[str] | None = None,
                 name: str = "NVIDIA H200", memory_bytes: int = 141 * 2**30):
        self.gpus = gpus
        self.wrong = set(wrong)  # labels whose output is wrong (big error)
        self.fail = set(fail)  # labels that raise when built
        self.precisions = list(precisions) if precisions is not None else list(FAKE_FLOPS)
        self.name_reported = name
        self.memory = memory_bytes
        self.log: list[str] = []
        self.timed: list[tuple[str, int, int]] = []
        self.worlds_run: list[int] = []

    def describe_hardware(self) -> dict[str, Any]:
        return {"name": self.name_reported, "sm_count": 132, "memory_bytes": self.memory, "driver": "580.00",
                "clocks": {"sm_max_mhz": 1980}, "gpu_count": self.gpus}

    def describe_software(self) -> dict[str, Any]:
        return {"torch": "fake", "cuda": "fake", "driver": "580.00", "python": "3"}

    def device_memory_bytes(self) -> int:
        return self.memory

    def supported_precisions(self) -> list[str]:
        return list(self.precisions)

    def gpu_count(self) -> int:
        return self.gpus

    def clocks_now(self) -> dict[str, Any]:
        return {"sm_mhz": 1980}

    def _case(self, label: str, seconds: float, tolerance: float) -> FakeCase:
        if label in self.fail:
            raise RuntimeError(f"CUDA out of memory building {label}")
        error = 0.5 if label in self.wrong else tolerance / 10
        self.log.append(f"build {label}")
        return FakeCase(seconds, error, tolerance, self.log, label)

    def bandwidth_case(self, kind: str, nbytes: int) -> FakeCase:
        moved = 2 * nbytes if kind == "copy" else nbytes
        return self._case(f"{kind}-{nbytes}", moved / FAKE_MEM_BW, 0.0 if kind == "copy" else 1e-4)

    def gemm_case(self, precision: str, m: int, n: int, k: int) -> FakeCase:
        return self._case(f"{precision}-{m}", 2 * m * n * k / FAKE_FLOPS[precision], 8e-3)

    def time_case(self, case: FakeCase, warmup: int, repetitions: int) -> list[float]:
        self.timed.append((case.label, warmup, repetitions))
        for _ in range(warmup + repetitions):
            case.run()
        return [case.seconds * self.pattern[i % len(self.pattern)] for i in range(repetitions)]

    def run_collectives(self, ops: Sequence[str], sizes: Sequence[int], warmup: int, repetitions: int,
                        world: int | None = None) -> list[CollectiveMeasurement]:
        n = world or self.gpus
        self.worlds_run.append(n)
        out = []
        for op in ops:
            for size in sizes:
                # bus bandwidth FAKE_BUS_BW[n] for large messages, plus 20 us of latency per call
                factor = 2 * (n - 1) / n if op == "all_reduce" else (n - 1) / n
                t = size * factor / FAKE_BUS_BW.get(n, 360e9) + 20e-6 * (size < 16 * 2**20)
                error = 1.0 if f"{op}-{size}" in self.wrong else 0.0
                out.append(CollectiveMeasurement(op, size, n, [t] * repetitions, Check(error, 0.0, "fake exact"),
                                                 extra={"nccl": {"nccl": "2.99.9", "algorithm": "fake", "protocol": "fake",
                                                                 "nvls": "off"}}))
        return out
