"""Which tensor-core MMA instructions exist: shapes, data types and kinds per architecture.

The rules `calc tile` checks a tile against, kept apart from the tile arithmetic so that the
validity test (tests/test_tile_validity.py) can hold them against every row ptxas judged
(tests/data/ptxas-mma-validity.yaml, ptxas 13.0).

- wgmma.mma_async (compute capability 9.0, target sm_90a): M = 64 per instruction and warpgroup;
  N a multiple of 8 from 8 to 256 for the floating-point types, 8, 16, 24, 32 and then multiples
  of 16 up to 256 for the integer types (s8, u8, b1); K fixed by the type (f16/bf16 16, tf32 8,
  e4m3/e5m2 32, s8/u8 32, b1 256). Source: PTX ISA 9.0, "Asynchronous Warpgroup Level Matrix
  Shape"; every shape checked with ptxas.
- tcgen05.mma (10.0 = sm_100a, 10.3 = sm_103a): kinds f16, tf32, f8f6f4, i8 (sm_100a only) and
  the block-scaled mxf8f6f4, mxf4, mxf4nvf4, with cta_group::1 or ::2. M and N live in the run-time
  instruction descriptor, which ptxas does not decode, so the shape rules are the PTX ISA's
  tcgen05 "Matrix shape" table as CUTLASS restates it in static_asserts
  (include/cute/arch/mma_sm100_umma.hpp): cta_group::1 M 64 or 128 (block-scaled kinds: 128),
  N a multiple of 8 up to 256 (i8: 8 or a multiple of 16); cta_group::2 M 128 or 256 (mxf8f6f4:
  256), N a multiple of 16 up to 256 (i8: of 32).
- mma.sync (warp-level; 7.x, 8.x, 12.0, and fp64 as DMMA on 8.0, 9.0 and 10.0): m16n8kK shapes,
  K by type (PTX ISA 9.0, "Warp-level Matrix Multiply-Accumulate Instructions"). Targets as
  ptxas 13.0 takes them: e4m3/e5m2 mma.sync assembles for plain sm_89, sm_90, sm_100 and sm_120;
  only kind::f8f6f4 and the block-scaled kinds need sm_120a (or sm_120f). mma.sync .f64 m8n8k4
  assembles from sm_80, m16n8k4/k8/k16 from sm_90; ptxas accepts them for sm_103a and sm_120 too but
  expands m16n8k16 there into several times the instructions it emits for sm_90 and sm_100a, and the
  catalog has no FP64 tensor-core gain for those parts (B300: 1.2 TFLOPS on both pipes; RTX 5090:
  none), so the model takes DMMA as a tensor-core path on 8.0, 9.0 and 10.0 only
  (tests/test_tile_validity.py re-runs ptxas when it is installed). int4 (mma.sync .s4) likewise:
  m16n8k64 .s4 assembles to the same code size as s8 m16n8k32 on sm_80, sm_86 and sm_89 (one
  tensor-core instruction), and to several times that on sm_90, sm_100a, sm_103a, sm_120 and
  sm_120a, where ptxas emulates it (s8 m16n8k32 stays one instruction everywhere); so int4 is a
  tensor-core type on 7.5 and 8.x only (tests/test_tile_validity.py re-runs ptxas when it is installed).
- fp4/fp6 operands of kind::f8f6f4 and kind::mxf8f6f4 sit unpacked in shared memory (one byte
  each); TMA loads them with CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B / 16U6_ALIGN16B, whose boxDim[0]
  must be 128 (cuda.h, cuTensorMapEncodeTiled), and CUTLASS requires TileShape_K % 128 == 0 for
  them (include/cutlass/gemm/collective/builders/sm1xx_common.inl).
"""

from __future__ import annotations

from studytui.calc.units import FieldError
from studytui.core.records import FrozenRecord

PTX_ISA = "PTX ISA 9.0 (https://docs.nvidia.com/cuda/parallel-thread-execution/)"
CUTLASS_UMMA = "CUTLASS include/cute/arch/mma_sm100_umma.hpp static_asserts (the PTX ISA tcgen05 shape table)"
PTXAS_RECORD = "tests/data/ptxas-mma-validity.yaml (ptxas 13.0, sm_90a and sm_100a)"
UNPACKED_K = 128  # boxDim[0] of the 16U4_ALIGN16B / 16U6_ALIGN16B tensor-map types
UNPACKED_K_SOURCE = ("cuda.h, cuTensorMapEncodeTiled: boxDim[0] must be 128 for 16U4_ALIGN16B and 16U6_ALIGN16B; "
                     "CUTLASS sm1xx_common.inl: TileShape_K % 128 == 0")

# ---- wgmma (sm_90a) ------------------------------------------------------------------------

WGMMA_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32, "b1": 256}
WGMMA_INT_TYPES = frozenset({"s8", "u8", "b1"})
WGMMA_FLOAT_N = tuple(range(8, 257, 8))
WGMMA_INT_N = (8, 16, 24) + tuple(range(32, 257, 16))
WGMMA_TARGETS = frozenset({"sm_90a"})


def wgmma_valid_n(a_type: str) -> tuple[int, ...]:
    return WGMMA_INT_N if a_type in WGMMA_INT_TYPES else WGMMA_FLOAT_N


def wgmma_types_ok(a_type: str, b_type: str, d_type: str) -> str:
    """'' when wgmma takes A, B and the accumulator D in these types; else the rule."""
    fp8 = {"e4m3", "e5m2"}
    if a_type in fp8 or b_type in fp8:
        if not (a_type in fp8 and b_type in fp8):
            return "fp8 wgmma takes e4m3/e5m2 for both A and B"
        return "" if d_type in ("f16", "f32") else "fp8 wgmma accumulates in f16 or f32"
    if a_type != b_type:
        if {a_type, b_type} <= {"s8", "u8"}:
            return "" if d_type == "s32" else "integer wgmma accumulates in s32"
        return f"wgmma has no {a_type} x {b_type} form"
    if a_type == "f16":
        return "" if d_type in ("f16", "f32") else "f16 wgmma accumulates in f16 or f32"
    if a_type in ("bf16", "tf32"):
        return "" if d_type == "f32" else f"{a_type} wgmma accumulates in f32"
    if a_type in ("s8", "u8", "b1"):
        return "" if d_type == "s32" else "integer wgmma accumulates in s32"
    return f"wgmma has no {a_type} type (its types: f16, bf16, tf32, e4m3, e5m2, s8, u8, b1)"


def wgmma_accumulator_registers(n: int, d_type: str) -> int:
    """Registers per thread for one m64nN accumulator: 64 x N values over a warpgroup's 128
    threads, two f16 values to a register."""
    return n // 4 if d_type == "f16" else n // 2


def wgmma_rule(target: str, a_type: str, b_type: str, d_type: str, m: int, n: int, k: int,
               accumulator_registers: int | None = None) -> str:
    """'' when ptxas assembles this wgmma.mma_async; else the rule it breaks."""
    if target not in WGMMA_TARGETS:
        return f"wgmma.mma_async needs the arch-specific target sm_90a (not {target}); Blackwell has tcgen05.mma instead"
    types = wgmma_types_ok(a_type, b_type, d_type)
    if types:
        return types
    if m != 64:
        return f"wgmma M is 64 per instruction (got {m}); a tile's M is 64 x the instructions (or warpgroups) along M"
    valid_n = wgmma_valid_n(a_type)
    if n not in valid_n:
        what = ("8, 16, 24, 32, then multiples of 16 up to 256" if a_type in WGMMA_INT_TYPES
                else "a multiple of 8 from 8 to 256")
        return f"wgmma N for {a_type} is {what} (got {n})"
    if k != WGMMA_K[a_type]:
        return f"wgmma K for {a_type} is {WGMMA_K[a_type]} per instruction (got {k})"
    if accumulator_registers is not None and accumulator_registers != wgmma_accumulator_registers(n, d_type):
        return (f"an m64n{n} {d_type} accumulator is {wgmma_accumulator_registers(n, d_type)} registers per thread "
                f"(got {accumulator_registers})")
    return ""


# ---- tcgen05 (sm_100a / sm_103a / sm_110a and the family targets) --------------------------------

TCGEN05_PLAIN_KINDS = ("f16", "tf32", "f8f6f4", "i8")
TCGEN05_SCALED_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")
TCGEN05_K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}
# Kinds each target assembles (ptxas 13.0; tests/data/ptxas-mma-validity.yaml). The family
# targets (sm_100f, ...) take the block-scaled kinds only in the .block16/.block32 spelling.
TCGEN05_KINDS_BY_TARGET: dict[str, frozenset[str]] = {
    "sm_100a": frozenset(TCGEN05_PLAIN_KINDS + TCGEN05_SCALED_KINDS),
    "sm_103a": frozenset(("f16", "tf32", "f8f6f4") + TCGEN05_SCALED_KINDS),
    "sm_110a": frozenset(TCGEN05_PLAIN_KINDS + TCGEN05_SCALED_KINDS),
    "sm_100f": frozenset(("f16", "tf32", "f8f6f4") + TCGEN05_SCALED_KINDS),
    "sm_103f": frozenset(("f16", "tf32", "f8f6f4") + TCGEN05_SCALED_KINDS),
    "sm_110f": frozenset(("f16", "tf32", "f8f6f4") + TCGEN05_SCALED_KINDS),
}
FAMILY_TARGETS = frozenset({"sm_100f", "sm_103f", "sm_110f"})
# Elements per scale factor a block-scaled kind allows (scale_vec::NX means K / N per scale).
TCGEN05_SCALE_VECTORS = {"mxf8f6f4": (32,), "mxf4": (32,), "mxf4nvf4": (16, 32)}
# The vector size .block_scale means when none is written; mxf4nvf4 must name one.
TCGEN05_DEFAULT_SCALE_VECTOR = {"mxf8f6f4": 32, "mxf4": 32}


def tcgen05_kind_rule(target: str, kind: str, *, block_scale: bool | None = None, scale_spelling: str = "") -> str:
    """'' when `target` assembles tcgen05.mma of this kind; else the rule.

    block_scale: whether .block_scale is written (None: as the kind needs it); scale_spelling:
    'scale_vec' (.scale_vec::NX), 'block' (.block16/.block32) or '' (none written)."""
    kinds = TCGEN05_KINDS_BY_TARGET.get(target)
    if kinds is None:
        return (f"tcgen05.mma needs a datacenter-Blackwell target (sm_100a, sm_103a, sm_110a or the family "
                f"targets sm_100f, ...), not {target}")
    if kind not in TCGEN05_K:
        return f"tcgen05.mma has no kind::{kind} (kinds: {', '.join(TCGEN05_K)})"
    scaled = kind in TCGEN05_SCALED_KINDS
    if block_scale is not None and block_scale != scaled:
        return (f"kind::{kind} needs .block_scale" if scaled else f"kind::{kind} takes no .block_scale (only the mx kinds do)")
    if kind not in kinds:
        return f"{target} has no tcgen05.mma kind::{kind} (ptxas 13.0)"
    if scaled and target in FAMILY_TARGETS and scale_spelling == "scale_vec":
        return f"{target} takes the block-scale vector size as .block16/.block32, not .scale_vec::NX"
    return ""


def tcgen05_scale_vector_rule(kind: str, vector: int | None) -> str:
    """'' when a block-scaled kind takes one scale per `vector` elements (None: not written)."""
    if vector is None:
        return "" if kind in TCGEN05_DEFAULT_SCALE_VECTOR else f"kind::{kind} must name its scale vector size"
    allowed = TCGEN05_SCALE_VECTORS[kind]
    if vector not in allowed:
        return (f"kind::{kind} takes one scale per {' or '.join(str(a) for a in allowed)} elements along K "
                f"(got {vector})")
    return ""


def tcgen05_shape_rules(kind: str, cta_group: int, m: int, n: int) -> list[str]:
    """Every rule M x N breaks in the ISA's tcgen05 shape table for this kind and CTA group (A
    from shared memory); [] when none. ptxas cannot check this (M and N sit in the descriptor)."""
    scaled = kind in TCGEN05_SCALED_KINDS
    rules: list[str] = []
    if cta_group == 1:
        ms = (128,) if scaled else (64, 128)
        if m not in ms:
            rules.append(f"tcgen05.mma cta_group::1 kind::{kind} has M {' or '.join(map(str, ms))} (got {m})"
                         + ("; M = 256 is the CTA pair's shape (cta_group::2)" if m == 256 else ""))
        if kind == "i8":
            ok = n == 8 or (16 <= n <= 256 and n % 16 == 0)
            what = "8 or a multiple of 16 up to 256"
        else:
            ok = 8 <= n <= 256 and n % 8 == 0
            what = "a multiple of 8 from 8 to 256"
    elif cta_group == 2:
        ms = (256,) if kind == "mxf8f6f4" else (128, 256)
        if m not in ms:
            rules.append(f"tcgen05.mma cta_group::2 kind::{kind} has M {' or '.join(map(str, ms))} over the CTA pair (got {m})")
        step = 32 if kind == "i8" else 16
        ok = step <= n <= 256 and n % step == 0
        what = f"a multiple of {step} from {step} to 256"
    else:
        return [f"cta_group is 1 or 2 (got {cta_group})"]
    if not ok:
        rules.append(f"tcgen05.mma cta_group::{cta_group} kind::{kind} has N {what} (got {n})")
    return rules


def tcgen05_shape_rule(kind: str, cta_group: int, m: int, n: int) -> str:
    """'' when the ISA's tcgen05 shape table has M x N for this kind and CTA group; else every
    rule it breaks, joined."""
    return "; ".join(tcgen05_shape_rules(kind, cta_group, m, n))


def tcgen05_k_rule(kind: str, k: int) -> str:
    return "" if k == TCGEN05_K[kind] else f"tcgen05.mma kind::{kind} has K {TCGEN05_K[kind]} per instruction (got {k})"


# ---- the paths a compute capability has, by data type ------------------------------------------


# A plain class, not a dataclass or a typed named tuple: on Python 3.11 their generated code costs up to
# a millisecond each time this module is imported (studytui.core.records, issue 27).
class MmaPath(FrozenRecord):
    """How one data type reaches the tensor cores of one compute capability."""

    __slots__ = ("instruction", "kind", "k", "m_step", "n_step", "smem_bytes", "acc_bytes", "scale_vector", "scale_type",
                 "target", "note", "unpacked_bits")

    instruction: str  # wgmma.mma_async | tcgen05.mma | mma.sync
    kind: str  # tcgen05 kind, or the PTX operand type (wgmma, mma.sync)
    k: int  # K of one instruction
    m_step: int  # tile M must be a multiple of this (wgmma 64, mma.sync 16 or 8)
    n_step: int  # tile N must be a multiple of this (before the per-instruction N rule)
    smem_bytes: float  # bytes one A/B element takes in shared memory
    acc_bytes: int  # bytes per accumulator element (fp32/s32 4, fp64 8)
    scale_vector: int | None  # block-scaled kinds: elements per scale factor along K
    scale_type: str
    target: str  # the compile target the instruction needs
    note: str
    unpacked_bits: int  # fp4/fp6 stored unpacked (one byte each): 4 or 6; 0 otherwise

    def __init__(
        self,
        instruction: str,
        kind: str,
        k: int,
        m_step: int,
        n_step: int,
        smem_bytes: float,
        acc_bytes: int,
        scale_vector: int | None = None,
        scale_type: str = "",
        target: str = "",
        note: str = "",
        unpacked_bits: int = 0,
    ) -> None:
        object.__setattr__(self, "instruction", instruction)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "m_step", m_step)
        object.__setattr__(self, "n_step", n_step)
        object.__setattr__(self, "smem_bytes", smem_bytes)
        object.__setattr__(self, "acc_bytes", acc_bytes)
        object.__setattr__(self, "scale_vector", scale_vector)
        object.__setattr__(self, "scale_type", scale_type)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "note", note)
        object.__setattr__(self, "unpacked_bits", unpacked_bits)


_F16 = {"fp16": "f16", "bf16": "bf16"}


def _refuse(cc: str, dtype: str, why: str) -> FieldError:
    return FieldError("dtype", f"{dtype} has no tensor-core path on compute capability {cc}: {why}")


def mma_path(cc: str, dtype: str) -> MmaPath:
    """The tensor-core instruction a `dtype` GEMM uses on compute capability `cc`; FieldError
    ('dtype') with the rule when the architecture has none."""
    major = int(cc.split(".")[0])
    scaled = dtype in ("nvfp4", "mxfp8", "mxfp6", "mxfp4", "mxint8")
    if dtype == "fp32":
        raise _refuse(cc, dtype, "tensor cores take fp32 data as tf32 (10-bit mantissa); choose tf32")
    if cc in ("10.0", "10.3"):
        return _tcgen05_path(cc, dtype)
    if cc == "9.0":
        if scaled:
            raise _refuse(cc, dtype, "Hopper has no block-scaled MMA (wgmma takes no scale factors; the mx and nvfp4 kinds are "
                                     "tcgen05's, cc 10.x)")
        if dtype in ("fp4", "fp6"):
            raise _refuse(cc, dtype, "wgmma's types are f16, bf16, tf32, e4m3/e5m2, s8/u8 and b1; fp6 and fp4 arrive with "
                                     "Blackwell (kind::f8f6f4)")
        if dtype == "int4":
            raise _refuse(cc, dtype, "wgmma's integer types are s8/u8 (and b1); int4 is not a Hopper tensor-core type; "
                                     + INT4_TENSOR_RULE + ": ptxas 13.0 emulates it for sm_90")
        if dtype == "fp64":
            return fp64_path(cc)
        kind = {"fp16": "f16", "bf16": "bf16", "tf32": "tf32", "fp8": "e4m3", "int8": "s8"}[dtype]
        from studytui.calc.dtypes import dtype_bytes

        return MmaPath("wgmma.mma_async", kind, WGMMA_K[kind], 64, 8, dtype_bytes(dtype), 4, target="sm_90a")
    # mma.sync generations
    if scaled and cc != "12.0":
        raise _refuse(cc, dtype, "block-scaled MMA (mx kinds, nvfp4) is a Blackwell feature (tcgen05 on 10.x, mma.sync on 12.0)")
    if major == 7:
        if cc == "7.0":
            if dtype != "fp16":
                later = {"bf16": "bf16 tensor cores arrive with 8.0", "tf32": "tf32 arrives with 8.0",
                         "int8": "int8 MMA arrives with 7.2/7.5", "int4": "int4 MMA arrives with 7.5",
                         "fp8": "fp8 arrives with 8.9", "fp64": FP64_TENSOR_RULE}
                raise _refuse(cc, dtype, later.get(dtype, "Volta's tensor cores take fp16 only"))
            return MmaPath("mma.sync", "f16", 4, 8, 8, 2.0, 4, target="sm_70", note="mma.sync.m8n8k4 (Volta quad-pair HMMA)")
        table = {"fp16": ("f16", 8, 16, 2.0), "int8": ("s8", 16, 8, 1.0), "int4": ("s4", 32, 8, 0.5)}
        if dtype not in table:
            later = {"bf16": "bf16 tensor cores arrive with 8.0", "tf32": "tf32 arrives with 8.0", "fp8": "fp8 arrives with 8.9",
                     "fp64": FP64_TENSOR_RULE}
            raise _refuse(cc, dtype, later.get(dtype, "Turing's tensor cores take fp16, int8 and int4"))
        kind, k, m_step, size = table[dtype]
        return MmaPath("mma.sync", kind, k, m_step, 8, size, 4, target="sm_75")
    # 8.x and 12.0
    table8 = {"fp16": ("f16", 16, 2.0), "bf16": ("bf16", 16, 2.0), "tf32": ("tf32", 8, 4.0), "int8": ("s8", 32, 1.0),
              "int4": ("s4", 64, 0.5)}
    if dtype == "fp64":
        return fp64_path(cc)
    if dtype == "fp8":
        if cc in ("8.0", "8.6"):
            raise _refuse(cc, dtype, "fp8 (e4m3/e5m2) MMA arrives with 8.9 (Ada) and 9.0 (Hopper)")
        # ptxas 13.0 assembles mma.sync.m16n8k32 e4m3 for plain sm_89 and sm_120: no 'a' target needed
        return MmaPath("mma.sync", "e4m3", 32, 16, 8, 1.0, 4, target=f"sm_{cc.replace('.', '')}")
    if dtype in ("fp6", "fp4"):
        if cc != "12.0":
            raise _refuse(cc, dtype, "fp6 and fp4 MMA arrive with Blackwell (kind::f8f6f4: tcgen05 on 10.x, mma.sync on 12.0)")
        return MmaPath("mma.sync", "f8f6f4", 32, 16, 8, 1.0, 4, target="sm_120a",
                       note="mma.sync kind::f8f6f4 (sm_120a: plain sm_120 has no kind::f8f6f4): fp6/fp4 operands unpacked, "
                            "one per byte", unpacked_bits=6 if dtype == "fp6" else 4)
    if scaled:  # 12.0
        return _scaled_path(cc, dtype, "mma.sync", 16, 8, "sm_120a")
    if dtype == "int4" and major >= 9:
        raise _refuse(cc, dtype, INT4_TENSOR_RULE + f"; ptxas 13.0 assembles mma.sync.m16n8k64 .s4 for sm_{cc.replace('.', '')} "
                                 "but expands it into several times the instructions it emits for sm_80 and sm_89 (and for s8 "
                                 "m16n8k32 on every target): an emulation, not one tensor-core instruction; int4 runs as int8 "
                                 "or on the CUDA cores here")
    if dtype not in table8:
        raise _refuse(cc, dtype, f"no MMA form for {dtype}")
    kind, k, size = table8[dtype]
    return MmaPath("mma.sync", kind, k, 16, 8, size, 4, target=f"sm_{cc.replace('.', '')}")


INT4_TENSOR_RULE = "int4 MMA (mma.sync .s4) is one tensor-core instruction on 7.5 and 8.x only (Turing, Ampere, Ada)"
FP64_TENSOR_RULE = "FP64 tensor cores (DMMA) are on 8.0, 9.0 and 10.0 only (the catalog's A100, H100/H200 and B200/GB200)"


def fp64_path(cc: str) -> MmaPath:
    """fp64 as DMMA (mma.sync .f64, register accumulators): tcgen05 and wgmma have no f64 kind.
    m8n8k4 on 8.0; m16n8k16 on 9.0 and 10.0 (ptxas 13.0: the m16n8k* f64 shapes need sm_90+)."""
    if cc == "8.0":
        return MmaPath("mma.sync", "f64", 4, 8, 8, 8.0, 8, target="sm_80",
                       note="DMMA: mma.sync.m8n8k4.f64 (m16n8k* f64 shapes need sm_90)")
    if cc in ("9.0", "10.0"):
        other = "wgmma" if cc == "9.0" else "tcgen05"
        return MmaPath("mma.sync", "f64", 16, 16, 8, 8.0, 8, target=f"sm_{cc.replace('.', '')}",
                       note=f"DMMA: mma.sync.m16n8k16.f64 (warp-level, register accumulators); {other} has no f64 kind")
    why = FP64_TENSOR_RULE
    if cc == "10.3":
        why += "; the catalog's B300 has 1.2 TFLOPS for fp64 on both pipes, no tensor-core gain"
    if cc in ("10.3", "12.0"):
        target = {"10.3": "sm_103a", "12.0": "sm_120"}[cc]
        why += (f"; ptxas 13.0 assembles mma.sync .f64 for {target} but expands m16n8k16 into several times the "
                "instructions it emits for sm_100a, not one tensor-core instruction")
    raise _refuse(cc, dtype="fp64", why=why + "; fp64 runs on the CUDA cores here")


def _scaled_path(cc: str, dtype: str, instruction: str, m_step: int, n_step: int, target: str) -> MmaPath:
    if dtype == "mxint8":
        raise _refuse(cc, dtype, "no block-scaled integer kind (the mx kinds are mxf8f6f4, mxf4 and mxf4nvf4)")
    if dtype in ("mxfp8", "mxfp6"):
        return MmaPath(instruction, "mxf8f6f4", 32, m_step, n_step, 1.0, 4, 32, "ue8m0", target,
                       note="kind::mxf8f6f4: elements unpacked, one per byte in shared memory; one E8M0 scale per 32 along K",
                       unpacked_bits=6 if dtype == "mxfp6" else 0)
    if dtype == "mxfp4":
        return MmaPath(instruction, "mxf4", 64, m_step, n_step, 0.5, 4, 32, "ue8m0", target,
                       note="kind::mxf4: fp4 packed two per byte; one E8M0 scale per 32 along K")
    return MmaPath(instruction, "mxf4nvf4", 64, m_step, n_step, 0.5, 4, 16, "ue4m3", target,
                   note="kind::mxf4nvf4 (.block16): fp4 packed two per byte; one UE4M3 scale per 16 along K")


def _tcgen05_path(cc: str, dtype: str) -> MmaPath:
    target = {"10.0": "sm_100a", "10.3": "sm_103a"}[cc]
    if dtype in ("nvfp4", "mxfp8", "mxfp6", "mxfp4", "mxint8"):
        return _scaled_path(cc, dtype, "tcgen05.mma", 64, 8, target)
    if dtype in _F16:
        return MmaPath("tcgen05.mma", "f16", 16, 64, 8, 2.0, 4, target=target)
    if dtype == "tf32":
        return MmaPath("tcgen05.mma", "tf32", 8, 64, 8, 4.0, 4, target=target)
    if dtype in ("fp8", "fp6", "fp4"):
        return MmaPath("tcgen05.mma", "f8f6f4", 32, 64, 8, 1.0, 4, target=target,
                       note="kind::f8f6f4 operands sit unpacked in shared memory, one element per byte (16 values in 16 B); "
                            "packed fp4 (0.5 B) is the mxf4 kinds' (input precision mxfp4 or nvfp4)",
                       unpacked_bits={"fp6": 6, "fp4": 4}.get(dtype, 0))
    if dtype == "int8":
        rule = tcgen05_kind_rule(target, "i8")
        if rule:
            raise _refuse(cc, dtype, rule)
        return MmaPath("tcgen05.mma", "i8", 32, 64, 8, 1.0, 4, target=target)
    if dtype == "int4":
        raise _refuse(cc, dtype, "tcgen05 has no int4 kind (kinds: f16, tf32, f8f6f4, i8, mxf8f6f4, mxf4, mxf4nvf4); "
                                 f"{INT4_TENSOR_RULE}: ptxas 13.0 emulates it for {target}")
    if dtype == "fp64":
        return fp64_path(cc)
    raise _refuse(cc, dtype, f"no tcgen05 kind for {dtype}")
