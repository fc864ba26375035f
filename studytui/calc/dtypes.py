"""Numeric precisions: names, storage bytes per element, and the vendor peak each one uses."""

from __future__ import annotations

from studytui.calc.units import FieldError

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

_ALIASES = {
    "float64": "fp64", "double": "fp64", "float32": "fp32", "float": "fp32",
    "bfloat16": "bf16", "float16": "fp16", "half": "fp16",
    "e4m3": "fp8", "e5m2": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "float8": "fp8",
    "mxfp8": "fp8", "mxfp6": "fp6", "mxfp4": "fp4", "nvfp4": "fp4", "float4": "fp4",
}

# Which catalog peak a GEMM in this precision runs at. FP64 GEMMs use the tensor-core rate
# where the vendor publishes one (DGEMM on Hopper/Ampere uses FP64 tensor cores).
_PEAK_KEYS: dict[str, tuple[str, ...]] = {"fp64": ("fp64_tensor", "fp64")}


def parse_dtype(text: str | None, field: str = "dtype") -> str:
    if text is None or str(text).strip() == "":
        raise FieldError(field, f"a precision is required; accepted: {', '.join(DTYPES)}")
    key = str(text).strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in DTYPE_BYTES:
        raise FieldError(field, f"unknown precision {text!r}; accepted: {', '.join(DTYPES)}")
    return key


def dtype_bytes(dtype: str) -> float:
    return DTYPE_BYTES[dtype]


def peak_keys(dtype: str) -> tuple[str, ...]:
    return _PEAK_KEYS.get(dtype, (dtype,))
