"""The PyTorch/CUDA backend. Imported only when a measurement runs: it imports torch at the top.

Timing: CUDA events around each repetition, after warm-up runs. Correctness: each case re-runs on
fresh random inputs into an output poisoned with NaN and compares with a float64 reference.
"""

from __future__ import annotations

import os
import platform
import subprocess
from typing import Any, Callable, Sequence

import torch

from studytui import __version__
from studytui.measure.backend import BackendUnavailable, Case, Check, CollectiveMeasurement

# Relative Frobenius error allowed for each precision, against a float64 product of the same
# (already rounded) inputs. Output rounding dominates: bf16 keeps 8 significant bits (unit
# roundoff 2^-9, rms relative error about 1.1e-3), fp16 11 bits (about 2.8e-4); tf32 rounds the
# inputs to 11 bits (about 4e-4); true fp32 accumulation over K <= 16384 stays near 1e-6, so the
# fp32 tolerance also proves TF32 was really off.
GEMM_TOLERANCE = {"fp32": 1e-4, "tf32": 3e-3, "bf16": 8e-3, "fp16": 3e-3, "fp8": 8e-3}
CHECK_ROWS = 64
ROWSUM_WIDTH = 65536  # fp32 elements per row of the row-sum reduction


def _nvidia_smi(fields: str, index: int = 0) -> dict[str, str]:
    """Query nvidia-smi for the given comma-separated fields; {} when it is not there."""
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-i", str(index)],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        return {}
    if not out:
        return {}
    values = [v.strip() for v in out[0].split(",")]
    names = [f.strip() for f in fields.split(",")]
    return {k: v for k, v in zip(names, values) if v and "N/A" not in v and "Not Supported" not in v}


def _as_int(text: str | None) -> int | None:
    try:
        return int(float(text)) if text is not None else None
    except ValueError:
        return None


def _rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    out64 = out.to(torch.float64)
    if bool(torch.isnan(out64).any()):
        return float("nan")
    denom = torch.linalg.vector_norm(ref).item()
    return torch.linalg.vector_norm(out64 - ref).item() / denom if denom else float("inf")


class BandwidthCase:
    def __init__(self, backend: "TorchCudaBackend", kind: str, nbytes: int):
        self.b = backend
        self.kind = kind
        count = nbytes // 4
        self.src = torch.empty(count, dtype=torch.float32, device=backend.device)
        self.src.uniform_(generator=backend.gen)
        if kind == "copy":
            self.dst = torch.empty_like(self.src)
        elif kind == "reduce":
            self.out = torch.empty((), dtype=torch.float32, device=backend.device)
        elif kind == "rowsum":
            self.rows = self.src.view(-1, ROWSUM_WIDTH)
            self.out = torch.empty(self.rows.shape[0], dtype=torch.float32, device=backend.device)
        else:
            raise ValueError(f"unknown bandwidth kind {kind!r}")

    def run(self) -> None:
        if self.kind == "copy":
            self.dst.copy_(self.src)
        elif self.kind == "rowsum":
            torch.sum(self.rows, dim=1, out=self.out)
        else:
            torch.sum(self.src, dim=0, out=self.out)

    def check(self) -> Check:
        self.src.uniform_(generator=self.b.gen)
        if self.kind == "copy":
            self.dst.fill_(float("nan"))
            self.run()
            torch.cuda.synchronize()
            wrong = (self.dst != self.src).sum().item()  # NaN never equals, so unwritten counts
            return Check(wrong / self.src.numel(), 0.0, "every element equal to the source (exact); output poisoned with NaN first")
        self.out.fill_(float("nan"))
        self.run()
        torch.cuda.synchronize()
        if self.kind == "rowsum":
            ref_rows = torch.sum(self.rows, dim=1, dtype=torch.float64)
            return Check(_rel_error(self.out, ref_rows), 1e-5,
                         f"relative error of the {self.out.numel()} row sums against float64 sums of the same uniform [0,1) inputs; "
                         "output poisoned with NaN first")
        ref = torch.sum(self.src, dtype=torch.float64).item()
        got = self.out.item()
        error = abs(got - ref) / ref if got == got else float("nan")
        return Check(error, 1e-4, "relative difference from a float64 sum of the same uniform [0,1) inputs")

    def release(self) -> None:
        for name in ("rows", "src", "dst", "out"):
            if hasattr(self, name):
                delattr(self, name)
        torch.cuda.empty_cache()


class GemmCase:
    def __init__(self, backend: "TorchCudaBackend", precision: str, m: int, n: int, k: int):
        self.b = backend
        self.precision = precision
        self._fp8_out_arg = True
        dev = backend.device
        if precision == "fp8":
            if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
                raise BackendUnavailable("this PyTorch has no fp8 matrix multiply (torch._scaled_mm)")
            self.a = torch.empty(m, k, dtype=torch.float8_e4m3fn, device=dev)
            # _scaled_mm wants B column-major: store B^T row-major and pass its transpose.
            self.bt = torch.empty(n, k, dtype=torch.float8_e4m3fn, device=dev)
            self.scale_a = torch.ones((), dtype=torch.float32, device=dev)
            self.scale_b = torch.ones((), dtype=torch.float32, device=dev)
            self.out = torch.empty(m, n, dtype=torch.bfloat16, device=dev)
        else:
            dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]
            self.a = torch.empty(m, k, dtype=dtype, device=dev)
            self.bmat = torch.empty(k, n, dtype=dtype, device=dev)
            self.out = torch.empty(m, n, dtype=dtype, device=dev)
        self._fill()
        # TF32 off for fp32 (full-precision FMA), on for tf32.
        torch.set_float32_matmul_precision("high" if precision == "tf32" else "highest")

    def _fill(self) -> None:
        gen = self.b.gen
        if self.precision == "fp8":
            for t in (self.a, self.bt):
                t.copy_(torch.randn(t.shape, device=t.device, generator=gen))
        else:
            self.a.normal_(generator=gen)
            self.bmat.normal_(generator=gen)

    def run(self) -> None:
        if self.precision == "fp8":
            if self._fp8_out_arg:
                try:
                    torch._scaled_mm(
                        self.a, self.bt.t(), scale_a=self.scale_a, scale_b=self.scale_b,
                        out_dtype=torch.bfloat16, out=self.out,
                    )
                    return
                except (TypeError, RuntimeError):
                    self._fp8_out_arg = False  # older signatures: no out=
            self.out = torch._scaled_mm(self.a, self.bt.t(), scale_a=self.scale_a, scale_b=self.scale_b, out_dtype=torch.bfloat16)
        else:
            torch.matmul(self.a, self.bmat, out=self.out)

    def check(self) -> Check:
        self._fill()
        self.out.fill_(float("nan"))
        self.run()
        torch.cuda.synchronize()
        if bool(torch.isnan(self.out).any()):
            return Check(float("nan"), GEMM_TOLERANCE[self.precision], "output had unwritten (NaN) elements")
        m = self.a.shape[0]
        rows = torch.randperm(m, device=self.a.device, generator=self.b.gen)[: min(m, CHECK_ROWS)]
        a64 = self.a.to(torch.float32)[rows].to(torch.float64)
        b64 = (self.bt.t() if self.precision == "fp8" else self.bmat).to(torch.float32).to(torch.float64)
        ref = a64 @ b64
        del b64
        error = _rel_error(self.out[rows], ref)
        return Check(
            error,
            GEMM_TOLERANCE[self.precision],
            f"relative Frobenius error of {rows.numel()} random output rows against a float64 product of the "
            "same inputs (fresh random normal data, output poisoned with NaN first)",
        )

    def release(self) -> None:
        for name in ("a", "bt", "bmat", "out", "scale_a", "scale_b"):
            if hasattr(self, name):
                delattr(self, name)
        torch.set_float32_matmul_precision("highest")
        torch.cuda.empty_cache()


class TorchCudaBackend:
    name = "torch-cuda"

    def __init__(self, device_index: int = 0, seed: int = 1234):
        if not torch.cuda.is_available():
            raise BackendUnavailable("PyTorch is installed but sees no CUDA device")
        self.index = device_index
        self.device = torch.device("cuda", device_index)
        torch.cuda.set_device(self.device)
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(seed)
        self.props = torch.cuda.get_device_properties(self.device)
        self._ramped = False

    # -- description -------------------------------------------------------------------------
    def describe_hardware(self) -> dict[str, Any]:
        p = self.props
        smi = _nvidia_smi(
            "driver_version,clocks.max.sm,clocks.max.memory,power.limit,memory.total,pstate", self.index
        )
        hw: dict[str, Any] = {
            "name": p.name,
            "sm_count": p.multi_processor_count,
            "memory_bytes": int(p.total_memory),
            "compute_capability": f"{p.major}.{p.minor}",
            "driver": smi.get("driver_version"),
            "gpu_count": torch.cuda.device_count(),
        }
        l2 = getattr(p, "L2_cache_size", None)
        if l2:
            hw["l2_bytes"] = int(l2)
        clocks = {
            "sm_max_mhz": _as_int(smi.get("clocks.max.sm")),
            "memory_max_mhz": _as_int(smi.get("clocks.max.memory")),
        }
        hw["clocks"] = {k: v for k, v in clocks.items() if v is not None} or "not readable"
        if smi.get("power.limit"):
            hw["power_limit_w"] = float(smi["power.limit"])
        return hw

    def describe_software(self) -> dict[str, Any]:
        smi = _nvidia_smi("driver_version", self.index)
        return {
            "torch": str(torch.__version__),
            "cuda": str(torch.version.cuda),
            "cublas": "bundled with torch",
            "driver": smi.get("driver_version"),
            "python": platform.python_version(),
            "studytui": __version__,
        }

    def clocks_now(self) -> dict[str, Any]:
        smi = _nvidia_smi("clocks.sm,clocks.mem,temperature.gpu,power.draw", self.index)
        out = {
            "sm_mhz": _as_int(smi.get("clocks.sm")),
            "memory_mhz": _as_int(smi.get("clocks.mem")),
            "temperature_c": _as_int(smi.get("temperature.gpu")),
        }
        return {k: v for k, v in out.items() if v is not None}

    def device_memory_bytes(self) -> int | None:
        free, _total = torch.cuda.mem_get_info(self.device)
        return int(free)

    def supported_precisions(self) -> list[str]:
        precisions = ["fp32", "tf32" if self.props.major >= 8 else None, "fp16"]
        if torch.cuda.is_bf16_supported():
            precisions.append("bf16")
        if hasattr(torch, "_scaled_mm") and (self.props.major, self.props.minor) >= (8, 9):
            precisions.append("fp8")
        return [p for p in precisions if p]

    def gpu_count(self) -> int:
        count: int = torch.cuda.device_count()
        return count

    # -- cases -------------------------------------------------------------------------------
    def bandwidth_case(self, kind: str, nbytes: int) -> BandwidthCase:
        return BandwidthCase(self, kind, nbytes)

    def gemm_case(self, precision: str, m: int, n: int, k: int) -> GemmCase:
        return GemmCase(self, precision, m, n, k)

    def time_case(self, case: Case, warmup: int, repetitions: int) -> list[float]:
        if not self._ramped:
            ramp_up()
            self._ramped = True
        return time_with_events(case.run, warmup, repetitions)

    def run_collectives(
        self, ops: Sequence[str], sizes: Sequence[int], warmup: int, repetitions: int, world: int | None = None
    ) -> list[CollectiveMeasurement]:
        from studytui.measure.torch_collectives import run_collectives

        return run_collectives(list(ops), list(sizes), warmup, repetitions, world or torch.cuda.device_count())


def time_with_events(fn: Callable[[], object], warmup: int, repetitions: int, min_warmup_s: float = 0.2) -> list[float]:
    """Seconds per call of `fn`, each bracketed by CUDA events, after warm-up.

    Warm-up is at least `warmup` calls and at least `min_warmup_s` of wall time, so the clocks
    have left their idle state and caches, handles and kernels are loaded before timing.
    """
    import time

    start_wall = time.perf_counter()
    done = 0
    while done < warmup or time.perf_counter() - start_wall < min_warmup_s:
        fn()
        done += 1
        if done >= warmup:
            torch.cuda.synchronize()
        if done > 100_000:
            break
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repetitions)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repetitions)]
    for start, end in zip(starts, ends):
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) / 1e3 for start, end in zip(starts, ends)]


def ramp_up(seconds: float = 1.0) -> None:
    """Run bf16 matrix products for about `seconds` so the GPU leaves its idle clocks first."""
    import time

    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()
    del a
    torch.cuda.empty_cache()


def make_backend() -> TorchCudaBackend:
    return TorchCudaBackend()


# Keep NVLink multicast (NVLS) off unless the caller chose otherwise: it is not needed for the
# ring/tree bandwidth measured here.
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
