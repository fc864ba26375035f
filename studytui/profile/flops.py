"""FLOPs (and the least bytes) of an aten op from the shapes a PyTorch trace recorded.

`torch.profiler.profile(record_shapes=True)` gives each cpu_op its "Input Dims", "Input type" and
"Concrete Inputs" (scalars as text). From these:

- mm [M,K]x[K,N], addmm (bias, [M,K], [K,N]), _scaled_mm (fp8): 2*M*N*K;
- bmm [b,M,K]x[b,K,N], baddbmm: 2*b*M*N*K; matmul: the same after broadcasting its batch dims;
- linear (x[..., K], W[N, K]): 2*rows*N*K, rows = the product of x's leading dims;
- scaled_dot_product_attention and its _flash / _efficient / _cudnn forms (q [..., L, E],
  k [..., S, E], v [..., S, Ev], query heads in q's leading dims, so GQA counts the query heads):
  QK^T and PV, 2*prod(q[:-2])*L*S*(E + Ev), times the causal share: 1/2 when L == S (the
  calculators' convention: half the square), else the positions a top-left causal mask keeps,
  sum over rows i of min(i + 1, S), as torch documents is_causal.

Always 2 FLOPs per multiply-add; bias adds, softmax and scaling are not counted (they are not
matrix-multiply work). Anything else is None: unknown, never guessed.
"""

from __future__ import annotations

import math
from typing import Any

from studytui.core.records import Record

# torch's dtype names in "Input type" -> (precision class, bytes per element)
DTYPES = {
    "c10::BFloat16": ("tensor_bf16", 2), "c10::Half": ("tensor_fp16", 2), "float": ("fp32", 4), "double": ("tensor_fp64", 8),
    "c10::Float8_e4m3fn": ("tensor_fp8", 1), "c10::Float8_e5m2": ("tensor_fp8", 1),
    "c10::Float8_e4m3fnuz": ("tensor_fp8", 1), "c10::Float8_e5m2fnuz": ("tensor_fp8", 1),
    "c10::Float8_e8m0fnu": ("tensor_fp8", 1),
}
MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear", "aten::_scaled_mm")
# Where is_causal sits in each attention op's arguments (its schema in aten's native_functions.yaml;
# checked on traces from torch 2.11: "Concrete Inputs" holds 'True' / 'False' there).
ATTENTION_CAUSAL_ARG = {
    "aten::scaled_dot_product_attention": 5,  # (q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    "aten::_scaled_dot_product_flash_attention": 4,  # (q, k, v, dropout_p, is_causal, return_debug_mask, scale)
    "aten::_scaled_dot_product_efficient_attention": 6,  # (q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, scale)
    "aten::_scaled_dot_product_cudnn_attention": 6,  # (q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, ...)
}
ATTENTION_MASK_ARG = {"aten::scaled_dot_product_attention": 3, "aten::_scaled_dot_product_efficient_attention": 3,
                      "aten::_scaled_dot_product_cudnn_attention": 3}
KNOWN_OPS = MATMUL_OPS + tuple(ATTENTION_CAUSAL_ARG)


# A plain class, not a dataclass: on Python 3.11 a dataclass's generated methods cost about a
# millisecond each time its module is imported (issue 27).
class OpWork(Record):
    __slots__ = ("flops", "precision_class", "kind", "formula", "model_bytes", "note")

    flops: float
    precision_class: str | None
    kind: str  # "matmul" or "attention"
    formula: str
    model_bytes: float | None
    note: str

    def __init__(
        self,
        flops: float,
        precision_class: str | None,
        kind: str,
        formula: str,
        model_bytes: float | None = None,
        note: str = "",
    ) -> None:
        self.flops = flops
        self.precision_class = precision_class
        self.kind = kind
        self.formula = formula
        self.model_bytes = model_bytes
        self.note = note


def _prod(values: Any) -> int:
    return math.prod(int(v) for v in values)


def _dims(args: dict[str, Any]) -> list[list[int]] | None:
    dims = args.get("Input Dims")
    if not isinstance(dims, list):
        return None
    out = []
    for d in dims:
        if isinstance(d, list) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in d):
            out.append(d)
        else:
            out.append([])
    return out


def _types(args: dict[str, Any]) -> list[str]:
    types = args.get("Input type")
    return [str(t) for t in types] if isinstance(types, list) else []


def _concrete(args: dict[str, Any], i: int) -> str:
    values = args.get("Concrete Inputs")
    if isinstance(values, list) and i < len(values):
        return str(values[i])
    return ""


def _class_and_size(types: list[str], i: int) -> tuple[str | None, int | None]:
    if i < len(types) and types[i] in DTYPES:
        return DTYPES[types[i]]
    return None, None


def op_work(name: str, args: dict[str, Any]) -> tuple[OpWork | None, str]:
    """(work, "") for an op whose FLOPs the shapes give, else (None, why not)."""
    dims = _dims(args)
    if dims is None:
        return None, "recorded without shapes (record_shapes=True)"
    types = _types(args)
    try:
        if name in ATTENTION_CAUSAL_ARG:
            return _attention(name, dims, types, args)
        if name in MATMUL_OPS:
            return _matmul(name, dims, types)
    except (IndexError, ValueError):
        return None, f"{name} with shapes {dims!r} that do not fit its formula"
    return None, f"{name} is not a matrix multiply or attention op"


def _gemm(m: int, n: int, k: int, batch: int = 1) -> float:
    return 2.0 * batch * m * n * k


def _matmul(name: str, dims: list[list[int]], types: list[str]) -> tuple[OpWork | None, str]:
    if name in ("aten::mm", "aten::_scaled_mm"):
        a, b, ia = dims[0], dims[1], 0
    elif name == "aten::addmm":
        a, b, ia = dims[1], dims[2], 1
    elif name == "aten::bmm":
        a, b, ia = dims[0], dims[1], 0
    elif name == "aten::baddbmm":
        a, b, ia = dims[1], dims[2], 1
    elif name == "aten::linear":
        x, w = dims[0], dims[1]
        if len(x) < 1 or len(w) != 2 or x[-1] != w[1]:
            return None, f"aten::linear with shapes {dims[:2]!r} that do not fit x[..., K] W[N, K]"
        rows, n, k = _prod(x[:-1]), w[0], w[1]
        cls, size = _class_and_size(types, 0)
        flops = _gemm(rows, n, k)
        nbytes = None if size is None else float(size * (rows * k + n * k + rows * n))
        return OpWork(flops, cls, "matmul", f"2 x rows {rows} x N {n} x K {k}", nbytes), ""
    else:  # aten::matmul
        return _general_matmul(dims, types)
    cls, size = _class_and_size(types, ia)
    if name in ("aten::mm", "aten::addmm", "aten::_scaled_mm"):
        if len(a) != 2 or len(b) != 2 or a[1] != b[0]:
            return None, f"{name} with shapes {[a, b]!r} that do not fit [M,K] x [K,N]"
        m, k, n = a[0], a[1], b[1]
        flops = _gemm(m, n, k)
        nbytes = None if size is None or name == "aten::_scaled_mm" else float(size * (m * k + k * n + m * n))
        note = "the output's dtype is not in the trace, so no least-bytes figure" if name == "aten::_scaled_mm" else ""
        return OpWork(flops, cls, "matmul", f"2 x M {m} x N {n} x K {k}", nbytes, note), ""
    if len(a) != 3 or len(b) != 3 or a[2] != b[1] or a[0] != b[0]:
        return None, f"{name} with shapes {[a, b]!r} that do not fit [b,M,K] x [b,K,N]"
    batch, m, k, n = a[0], a[1], a[2], b[2]
    nbytes = None if size is None else float(size * batch * (m * k + k * n + m * n))
    return OpWork(_gemm(m, n, k, batch), cls, "matmul", f"2 x batch {batch} x M {m} x N {n} x K {k}", nbytes), ""


def _broadcast(a: list[int], b: list[int]) -> list[int] | None:
    out = []
    for i in range(max(len(a), len(b))):
        x = a[-1 - i] if i < len(a) else 1
        y = b[-1 - i] if i < len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return out[::-1]


def _general_matmul(dims: list[list[int]], types: list[str]) -> tuple[OpWork | None, str]:
    a, b = dims[0], dims[1]
    cls, size = _class_and_size(types, 0)
    if not a or not b:
        return None, "aten::matmul of a scalar"
    a2 = [1] + a if len(a) == 1 else a  # a vector is a row (then dropped from the result)
    b2 = b + [1] if len(b) == 1 else b  # ... or a column
    if a2[-1] != b2[-2]:
        return None, f"aten::matmul with shapes {[a, b]!r} whose inner dimensions differ"
    batch_dims = _broadcast(a2[:-2], b2[:-2])
    if batch_dims is None:
        return None, f"aten::matmul with shapes {[a, b]!r} that do not broadcast"
    batch, m, k, n = _prod(batch_dims), a2[-2], a2[-1], b2[-1]
    nbytes = None if size is None else float(size * (_prod(a) + _prod(b) + batch * m * n))
    return OpWork(_gemm(m, n, k, batch), cls, "matmul", f"2 x batch {batch} x M {m} x N {n} x K {k}", nbytes), ""


def causal_share(rows: int, keys: int) -> float:
    """The share of the rows x keys scores a causal mask keeps: 1/2 when square (the calculators'
    convention), else sum of min(i + 1, keys) over rows, over rows x keys (top-left aligned)."""
    if rows <= 0 or keys <= 0:
        return 0.0
    if rows == keys:
        return 0.5
    full = min(rows, keys)  # rows 0 .. full-1 keep i + 1 keys; the rest keep all of them
    kept = full * (full + 1) // 2 + max(0, rows - keys) * keys
    return kept / (rows * keys)


def _attention(name: str, dims: list[list[int]], types: list[str], args: dict[str, Any]) -> tuple[OpWork | None, str]:
    q, k, v = dims[0], dims[1], dims[2]
    if len(q) < 2 or len(k) < 2 or len(v) < 2 or q[-1] != k[-1] or k[-2] != v[-2]:
        return None, f"{name} with shapes {[q, k, v]!r} that do not fit q[..., L, E] k[..., S, E] v[..., S, Ev]"
    cls, size = _class_and_size(types, 0)
    leading, rows, e = _prod(q[:-2]), q[-2], q[-1]
    keys, ev = k[-2], v[-1]
    causal_text = _concrete(args, ATTENTION_CAUSAL_ARG[name])
    causal = causal_text == "True"
    mask_index = ATTENTION_MASK_ARG.get(name)
    masked = mask_index is not None and mask_index < len(dims) and bool(dims[mask_index])
    share = causal_share(rows, keys) if causal else 1.0
    flops = 2.0 * leading * rows * keys * (e + ev) * share
    how = "causal, half the square" if causal and rows == keys else (f"causal, {share:.4g} of the scores" if causal else "not causal")
    note = ""
    if masked:
        note = "an explicit attention mask: counted as the full score matrix (the mask's zeros are not known)"
    if causal_text not in ("True", "False"):
        note = "is_causal was not recorded: counted as not causal"
    nbytes = None if size is None else float(size * (_prod(q) + _prod(k) + _prod(v) + leading * rows * ev))
    formula = f"2 x {leading} (batch x query heads) x L {rows} x S {keys} x (E {e} + Ev {ev}), {how}"
    return OpWork(flops, cls, "attention", formula, nbytes, note), ""
