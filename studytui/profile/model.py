"""What a profile holds once read: one `Kernel` per GPU kernel launch, with where each figure
came from, and the file-level facts (`Capture`). Readers fill these; `analyze` adds the roofline.

Units are SI throughout: seconds, bytes, FLOPs. A figure the file does not give is None, never 0,
and its `*_source` says why it is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Precision classes of the work a kernel did, and how each is measured:
#   tensor_<src>: Nsight Compute's tensor-pipe op counters (sm__ops_path_tensor_src_<src>*), one
#       op per multiply and per add, padding to the MMA tile included;
#   fp32 / fp64 / fp16: the SASS thread-instruction counters (CUDA cores), by ncu's roofline formula.
TENSOR_PREFIX = "tensor_"
# The catalog peak each class is compared with (studytui.calc.hardware), or None where the catalog
# has no figure: the CUDA-core rate of half-precision instructions is not a published vendor peak.
CATALOG_KEY = {
    "tensor_fp64": "fp64",  # resolved through calc.dtypes.peak_keys: fp64_tensor where published
    "tensor_tf32": "tf32",
    "tensor_bf16": "bf16",
    "tensor_fp16": "fp16",
    "tensor_fp8": "fp8",
    "tensor_fp6": "fp6",
    "tensor_fp4": "fp4",
    "tensor_int8": "int8",
    "tensor_int4": "int4",
    "fp32": "fp32",
    "fp64": "fp64_cuda_core",  # the non-tensor FP64 rate (the catalog's `fp64`, not fp64_tensor)
    "fp16": None,
}


@dataclass(slots=True)
class Kernel:
    index: int  # order in the file, from 0
    name: str  # as the file gives it (demangled by ncu's default), never shortened
    range: tuple[str, ...] = ()  # NVTX push/pop ranges or record_function annotations, outermost first
    duration_s: float | None = None
    duration_source: str = ""
    dram_bytes: float | None = None
    bytes_source: str = ""  # how dram_bytes was obtained, or why it is unknown
    dram_read_bytes: float | None = None
    dram_write_bytes: float | None = None
    flops_by_class: dict[str, float] = field(default_factory=dict)  # precision class -> FLOPs (int classes: ops)
    flops_source: str = ""  # how the FLOPs were obtained, or why they are unknown
    flops_counted: bool = False  # True: hardware counters; False: a model (shapes) or unknown
    model_bytes: float | None = None  # a trace: the op's inputs and output once, from shapes (a lower bound)
    gemm_flops: float | None = None  # matrix-multiply FLOPs (tensor pipe; or matmul/attention from shapes)
    attention_flops: float | None = None  # a trace: the attention part of gemm_flops
    sol: dict[str, float] = field(default_factory=dict)  # speed-of-light %: sm, memory, dram (0..100)
    sm_clock_hz: float | None = None  # the SM clock the kernel ran at (ncu)
    boost_clock_hz: float | None = None  # ncu: device__attribute_clock_rate, the device's highest SM clock
    # ncu's own per-cycle peaks of the device (`*.sum.peak_sustained`), per precision class: FLOPs
    # (integer classes: ops) per SM-clock cycle over the whole GPU, dense work (`_sparsity_off`
    # where ncu has it) and sparse work; times a clock they bound what a kernel can do.
    peak_per_cycle: dict[str, float] = field(default_factory=dict)
    peak_per_cycle_sparse: dict[str, float] = field(default_factory=dict)
    sparse_classes: set[str] = field(default_factory=set)  # tensor classes with sparse ops counted (_sparsity_on > 0)
    dram_peak_per_cycle: float | None = None  # ncu: dram__bytes.sum.peak_sustained, bytes per DRAM cycle
    dram_clock_hz: float | None = None  # the DRAM clock: the higher of the measured and the device attribute
    process_id: str = ""
    process_name: str = ""
    device: str = ""  # the device's name where the file gives it
    device_index: str = ""
    compute_capability: str = ""
    launch_id: str = ""  # ncu's ID column; a trace's correlation id
    stream: str = ""
    grid: str = ""
    block: str = ""
    waves: float | None = None  # ncu: blocks over what all SMs hold at once (launch__waves_per_multiprocessor)
    op: str = ""  # a trace: the aten op the kernel belongs to (through External id)
    op_shapes: list[Any] = field(default_factory=list)
    op_types: list[str] = field(default_factory=list)
    flops_owner: int | None = None  # a trace: the kernel whose FLOPs include this one's op
    notes: list[str] = field(default_factory=list)
    rules: list[dict[str, str]] = field(default_factory=list)  # ncu's own findings (details page)

    @property
    def flops(self) -> float | None:
        return sum(self.flops_by_class.values()) if self.flops_by_class else None

    @property
    def tensor_flops(self) -> float | None:
        if not self.flops_by_class:
            return None
        return sum(v for k, v in self.flops_by_class.items() if k.startswith(TENSOR_PREFIX))

    @property
    def main_class(self) -> str | None:
        """The precision class that did most of the work."""
        if not self.flops_by_class:
            return None
        return max(self.flops_by_class.items(), key=lambda kv: (kv[1], kv[0]))[0]


@dataclass
class Capture:
    """A profile file as read."""

    path: str
    format: str  # "ncu-raw", "ncu-details", "torch-trace"
    format_label: str  # what a person reads: "Nsight Compute CSV (--page raw)"
    kernels: list[Kernel]
    metric_set: str = ""  # ncu: "counters", "roofline", "speed-of-light only", "durations only"
    bytes_how: str = ""  # how the DRAM bytes were had when they are not counters ("derived: ..."), for the totals
    devices: list[str] = field(default_factory=list)
    device_clock_hz: float | None = None  # ncu: device__attribute_clock_rate (the boost clock)
    processes: list[tuple[str, str]] = field(default_factory=list)  # (pid, name)
    notes: list[str] = field(default_factory=list)  # facts about the file, said once
    warnings: list[str] = field(default_factory=list)
    other_gpu_time_s: float = 0.0  # a trace: memcpy / memset time on the GPU, not kernels
    other_gpu_events: int = 0
    record_shapes: bool | None = None  # a trace: recorded with record_shapes=True
