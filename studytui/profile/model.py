"""What a profile holds once read: one `Kernel` per GPU kernel launch, with where each figure
came from, and the file-level facts (`Capture`). Readers fill these; `analyze` adds the roofline.

Units are SI throughout: seconds, bytes, FLOPs. A figure the file does not give is None, never 0,
and its `*_source` says why it is missing.
"""

from __future__ import annotations

from typing import Any

from studytui.core.records import Record

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


# The records here are plain classes, not dataclasses: on Python 3.11 a dataclass's generated
# methods cost about a millisecond each time this module is imported (issue 27).
class Kernel(Record):
    __slots__ = ("index", "name", "range", "duration_s", "duration_source", "dram_bytes", "bytes_source", "dram_read_bytes",
                 "dram_write_bytes", "flops_by_class", "flops_source", "flops_counted", "model_bytes", "gemm_flops",
                 "attention_flops", "sol", "sm_clock_hz", "boost_clock_hz", "peak_per_cycle", "peak_per_cycle_sparse",
                 "sparse_classes", "dram_peak_per_cycle", "dram_clock_hz", "process_id", "process_name", "device",
                 "device_index", "compute_capability", "launch_id", "stream", "grid", "block", "waves", "op", "op_shapes",
                 "op_types", "flops_owner", "notes", "rules")

    index: int  # order in the file, from 0
    name: str  # as the file gives it (demangled by ncu's default), never shortened
    range: tuple[str, ...]  # NVTX push/pop ranges or record_function annotations, outermost first
    duration_s: float | None
    duration_source: str
    dram_bytes: float | None
    bytes_source: str  # how dram_bytes was obtained, or why it is unknown
    dram_read_bytes: float | None
    dram_write_bytes: float | None
    flops_by_class: dict[str, float]  # precision class -> FLOPs (int classes: ops)
    flops_source: str  # how the FLOPs were obtained, or why they are unknown
    flops_counted: bool  # True: hardware counters; False: a model (shapes) or unknown
    model_bytes: float | None  # a trace: the op's inputs and output once, from shapes (a lower bound)
    gemm_flops: float | None  # matrix-multiply FLOPs (tensor pipe; or matmul/attention from shapes)
    attention_flops: float | None  # a trace: the attention part of gemm_flops
    sol: dict[str, float]  # speed-of-light %: sm, memory, dram (0..100)
    sm_clock_hz: float | None  # the SM clock the kernel ran at (ncu)
    boost_clock_hz: float | None  # ncu: device__attribute_clock_rate, the device's highest SM clock
    # ncu's own per-cycle peaks of the device (`*.sum.peak_sustained`), per precision class: FLOPs
    # (integer classes: ops) per SM-clock cycle over the whole GPU, dense work (`_sparsity_off`
    # where ncu has it) and sparse work; times a clock they bound what a kernel can do.
    peak_per_cycle: dict[str, float]
    peak_per_cycle_sparse: dict[str, float]
    sparse_classes: set[str]  # tensor classes with sparse ops counted (_sparsity_on > 0)
    dram_peak_per_cycle: float | None  # ncu: dram__bytes.sum.peak_sustained, bytes per DRAM cycle
    dram_clock_hz: float | None  # the DRAM clock: the higher of the measured and the device attribute
    process_id: str
    process_name: str
    device: str  # the device's name where the file gives it
    device_index: str
    compute_capability: str
    launch_id: str  # ncu's ID column; a trace's correlation id
    stream: str
    grid: str
    block: str
    waves: float | None  # ncu: blocks over what all SMs hold at once (launch__waves_per_multiprocessor)
    op: str  # a trace: the aten op the kernel belongs to (through External id)
    op_shapes: list[Any]
    op_types: list[str]
    flops_owner: int | None  # a trace: the kernel whose FLOPs include this one's op
    notes: list[str]
    rules: list[dict[str, str]]  # ncu's own findings (details page)

    def __init__(
        self,
        index: int,
        name: str,
        range: tuple[str, ...] = (),
        duration_s: float | None = None,
        duration_source: str = "",
        dram_bytes: float | None = None,
        bytes_source: str = "",
        dram_read_bytes: float | None = None,
        dram_write_bytes: float | None = None,
        flops_by_class: dict[str, float] | None = None,
        flops_source: str = "",
        flops_counted: bool = False,
        model_bytes: float | None = None,
        gemm_flops: float | None = None,
        attention_flops: float | None = None,
        sol: dict[str, float] | None = None,
        sm_clock_hz: float | None = None,
        boost_clock_hz: float | None = None,
        peak_per_cycle: dict[str, float] | None = None,
        peak_per_cycle_sparse: dict[str, float] | None = None,
        sparse_classes: set[str] | None = None,
        dram_peak_per_cycle: float | None = None,
        dram_clock_hz: float | None = None,
        process_id: str = "",
        process_name: str = "",
        device: str = "",
        device_index: str = "",
        compute_capability: str = "",
        launch_id: str = "",
        stream: str = "",
        grid: str = "",
        block: str = "",
        waves: float | None = None,
        op: str = "",
        op_shapes: list[Any] | None = None,
        op_types: list[str] | None = None,
        flops_owner: int | None = None,
        notes: list[str] | None = None,
        rules: list[dict[str, str]] | None = None,
    ) -> None:
        self.index = index
        self.name = name
        self.range = range
        self.duration_s = duration_s
        self.duration_source = duration_source
        self.dram_bytes = dram_bytes
        self.bytes_source = bytes_source
        self.dram_read_bytes = dram_read_bytes
        self.dram_write_bytes = dram_write_bytes
        self.flops_by_class = {} if flops_by_class is None else flops_by_class
        self.flops_source = flops_source
        self.flops_counted = flops_counted
        self.model_bytes = model_bytes
        self.gemm_flops = gemm_flops
        self.attention_flops = attention_flops
        self.sol = {} if sol is None else sol
        self.sm_clock_hz = sm_clock_hz
        self.boost_clock_hz = boost_clock_hz
        self.peak_per_cycle = {} if peak_per_cycle is None else peak_per_cycle
        self.peak_per_cycle_sparse = {} if peak_per_cycle_sparse is None else peak_per_cycle_sparse
        self.sparse_classes = set() if sparse_classes is None else sparse_classes
        self.dram_peak_per_cycle = dram_peak_per_cycle
        self.dram_clock_hz = dram_clock_hz
        self.process_id = process_id
        self.process_name = process_name
        self.device = device
        self.device_index = device_index
        self.compute_capability = compute_capability
        self.launch_id = launch_id
        self.stream = stream
        self.grid = grid
        self.block = block
        self.waves = waves
        self.op = op
        self.op_shapes = [] if op_shapes is None else op_shapes
        self.op_types = [] if op_types is None else op_types
        self.flops_owner = flops_owner
        self.notes = [] if notes is None else notes
        self.rules = [] if rules is None else rules

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


class Capture(Record):
    """A profile file as read."""

    __slots__ = ("path", "format", "format_label", "kernels", "metric_set", "bytes_how", "devices", "device_clock_hz",
                 "processes", "notes", "warnings", "other_gpu_time_s", "other_gpu_events", "record_shapes")

    path: str
    format: str  # "ncu-raw", "ncu-details", "torch-trace"
    format_label: str  # what a person reads: "Nsight Compute CSV (--page raw)"
    kernels: list[Kernel]
    metric_set: str  # ncu: "counters", "roofline", "speed-of-light only", "durations only"
    bytes_how: str  # how the DRAM bytes were had when they are not counters ("derived: ..."), for the totals
    devices: list[str]
    device_clock_hz: float | None  # ncu: device__attribute_clock_rate (the boost clock)
    processes: list[tuple[str, str]]  # (pid, name)
    notes: list[str]  # facts about the file, said once
    warnings: list[str]
    other_gpu_time_s: float  # a trace: memcpy / memset time on the GPU, not kernels
    other_gpu_events: int
    record_shapes: bool | None  # a trace: recorded with record_shapes=True

    def __init__(
        self,
        path: str,
        format: str,
        format_label: str,
        kernels: list[Kernel],
        metric_set: str = "",
        bytes_how: str = "",
        devices: list[str] | None = None,
        device_clock_hz: float | None = None,
        processes: list[tuple[str, str]] | None = None,
        notes: list[str] | None = None,
        warnings: list[str] | None = None,
        other_gpu_time_s: float = 0.0,
        other_gpu_events: int = 0,
        record_shapes: bool | None = None,
    ) -> None:
        self.path = path
        self.format = format
        self.format_label = format_label
        self.kernels = kernels
        self.metric_set = metric_set
        self.bytes_how = bytes_how
        self.devices = [] if devices is None else devices
        self.device_clock_hz = device_clock_hz
        self.processes = [] if processes is None else processes
        self.notes = [] if notes is None else notes
        self.warnings = [] if warnings is None else warnings
        self.other_gpu_time_s = other_gpu_time_s
        self.other_gpu_events = other_gpu_events
        self.record_shapes = record_shapes
