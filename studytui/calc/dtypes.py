"""Numeric precisions: names, storage bytes per element, and the vendor peak each one uses.

Two kinds of name:
- plain element types (`DTYPES`: fp64 ... int4), the precisions whose dense peaks the catalog
  lists; a plain sub-byte weight format may add a group scale of its own (`--quant-group`);
- block-scaled formats (`BLOCK_SCALED`: nvfp4, mxfp8, mxfp6, mxfp4, mxint8), whose layout fixes
  the scale: a block of k elements shares one scale of s bits, so a value costs
  element bits + s / k. Their bytes always include the scale; their math runs at the peak of
  their element type (nvfp4 and mxfp4 at fp4, mxfp8 at fp8).
"""

from __future__ import annotations

from studytui.calc.units import FieldError
from studytui.core.records import FrozenRecord

# Storage size in bytes per element. tf32 is stored as fp32; fp6/fp4/int4 pack below a byte.
DTYPE_BYTES: dict[str, float] = {
    "fp64": 8.0,
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "fp6": 0.75,
    "fp4": 0.5,
    "int8": 1.0,
    "int4": 0.5,
}
DTYPES: tuple[str, ...] = tuple(DTYPE_BYTES)
DEFAULT_DTYPE = "bf16"

OCP_MX = "OCP Microscaling Formats (MX) Specification v1.0 (2023): https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf"
NVIDIA_NVFP4 = (
    "NVIDIA, 'Introducing NVFP4 for Efficient and Accurate Low-Precision Inference' (2025): "
    "https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/; "
    "cuBLAS cublasLtMatmulMatrixScale_t CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3: https://docs.nvidia.com/cuda/cublas/"
)


# A plain class, not a dataclass or a typed named tuple: on Python 3.11 their generated code costs up to
# a millisecond each time this module is imported (studytui.core.records, issue 27).
class BlockFormat(FrozenRecord):
    """A block-scaled format: `block` consecutive elements share one scale."""

    __slots__ = ("name", "element", "base", "element_bits", "block", "scale", "scale_bits", "source", "extra")

    name: str
    element: str  # the element type as the format names it (E2M1, E4M3/E5M2, ...)
    base: str  # the plain precision of an element (its peak and its element size)
    element_bits: int
    block: int
    scale: str  # the scale's type
    scale_bits: int
    source: str
    extra: str  # anything else the layout carries

    def __init__(
        self,
        name: str,
        element: str,
        base: str,
        element_bits: int,
        block: int,
        scale: str,
        scale_bits: int,
        source: str,
        extra: str = "",
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "element", element)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "element_bits", element_bits)
        object.__setattr__(self, "block", block)
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "scale_bits", scale_bits)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "extra", extra)

    @property
    def bits_per_value(self) -> float:
        return self.element_bits + self.scale_bits / self.block

    @property
    def bytes_per_value(self) -> float:
        return self.bits_per_value / 8

    def layout(self) -> str:
        """One line: the block layout and its cost per value."""
        text = (
            f"{self.name}: {self.element} elements ({self.element_bits} bits) in blocks of {self.block} sharing one {self.scale} "
            f"scale ({self.scale_bits} bits): {self.element_bits} + {self.scale_bits}/{self.block} = {self.bits_per_value:g} bits per value"
        )
        return text + (f"; {self.extra}" if self.extra else "")


BLOCK_SCALED: dict[str, BlockFormat] = {
    "nvfp4": BlockFormat(
        "nvfp4", "FP4 E2M1", "fp4", 4, 16, "FP8 E4M3 (UE4M3)", 8, NVIDIA_NVFP4,
        extra="plus one FP32 scale per tensor (a few bytes, not counted)",
    ),
    "mxfp8": BlockFormat("mxfp8", "FP8 E4M3 or E5M2", "fp8", 8, 32, "E8M0", 8, OCP_MX),
    "mxfp6": BlockFormat("mxfp6", "FP6 E2M3 or E3M2", "fp6", 6, 32, "E8M0", 8, OCP_MX),
    "mxfp4": BlockFormat("mxfp4", "FP4 E2M1", "fp4", 4, 32, "E8M0", 8, OCP_MX),
    "mxint8": BlockFormat("mxint8", "INT8", "int8", 8, 32, "E8M0", 8, OCP_MX),
}
# Every name a storage precision (weights, KV cache, GEMM operands) may take.
STORAGE_DTYPES: tuple[str, ...] = DTYPES + tuple(BLOCK_SCALED)

_ALIASES = {
    "float64": "fp64", "double": "fp64", "float32": "fp32", "float": "fp32",
    "bfloat16": "bf16", "float16": "fp16", "half": "fp16",
    "e4m3": "fp8", "e5m2": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "float8": "fp8",
    "float4": "fp4", "e2m1": "fp4",
    "mx_fp8": "mxfp8", "mx_fp6": "mxfp6", "mx_fp4": "mxfp4", "nv_fp4": "nvfp4",
}

# Which catalog peak a GEMM in this precision runs at. FP64 GEMMs use the tensor-core rate
# where the vendor publishes one (DGEMM on Hopper/Ampere uses FP64 tensor cores).
_PEAK_KEYS: dict[str, tuple[str, ...]] = {"fp64": ("fp64_tensor", "fp64")}


def parse_dtype(text: str | None, field: str = "dtype") -> str:
    if text is None or str(text).strip() == "":
        raise FieldError(field, f"a precision is required; accepted: {', '.join(STORAGE_DTYPES)}")
    key = str(text).strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in DTYPE_BYTES and key not in BLOCK_SCALED:
        raise FieldError(field, f"unknown precision {text!r}; accepted: {', '.join(STORAGE_DTYPES)}")
    return key


def block_format(dtype: str) -> BlockFormat | None:
    """The block layout of a block-scaled format; None for a plain precision."""
    return BLOCK_SCALED.get(dtype)


def dtype_bytes(dtype: str) -> float:
    """Bytes per element; for a block-scaled format, its share of the block's scale included."""
    fmt = BLOCK_SCALED.get(dtype)
    if fmt is not None:
        return fmt.bytes_per_value
    return DTYPE_BYTES[dtype]


def peak_keys(dtype: str) -> tuple[str, ...]:
    fmt = BLOCK_SCALED.get(dtype)
    if fmt is not None:
        return _PEAK_KEYS.get(fmt.base, (fmt.base,))
    return _PEAK_KEYS.get(dtype, (dtype,))
