"""Common PyTorch operations on one GPU, laid out for Nsight Compute (and, without ncu, listed by kernel).

Each operation is built on fresh random inputs, run once to warm up (cuBLAS handles, lazy module
loading, autotuning), checked against a float64 reference, and then, between
torch.cuda.profiler.start() and stop(), run exactly once inside an NVTX range of its own name. So

    ncu --profile-from-start off --nvtx --clock-control none --set full -o ops_full \
        python3 benchmarks/gpu/capture_ncu_ops.py --mode ncu --out ops.json

profiles those kernels and nothing else (the warm-up and the checks are outside the region).

    python3 benchmarks/gpu/capture_ncu_ops.py --mode list --out ops_kernels.json

runs the same region under torch.profiler instead (not under ncu: both use CUPTI) and writes which
kernels each operation launched, in order: the key from an ncu row back to its operation.

Correctness (the guide's rule): every output is written into a buffer poisoned with NaN where the
operation takes `out=` (matrix products, add), otherwise it is a fresh tensor checked all finite; the
relative Frobenius error against float64 (GEMMs: 64 sampled rows; attention: 4 sampled heads) must be
under the tolerance printed with it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Callable

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    raise SystemExit("needs PyTorch with CUDA (pip install -e '.[measure]'), on a GPU machine") from None

DEV = "cuda"


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    out64, ref64 = out.double(), ref.double()
    if not torch.isfinite(out64).all():
        return float("nan")
    return float(torch.linalg.vector_norm(out64 - ref64) / torch.linalg.vector_norm(ref64))


def rows_sample(m: int, k: int = 64) -> torch.Tensor:
    g = torch.Generator(device="cpu").manual_seed(1234 + m)
    return torch.randperm(m, generator=g)[: min(k, m)].sort().values.to(DEV)


class Op:
    def __init__(self, name: str, what: str, precision: str, run: Callable[[], None], check: Callable[[], tuple[float, float, str]],
                 flops: float, bytes_: float):
        self.name, self.what, self.precision, self.run, self.check = name, what, precision, run, check
        self.flops, self.bytes = flops, bytes_


def gemm_op(m: int, n: int, k: int) -> Op:
    a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
    c = torch.full((m, n), float("nan"), device=DEV, dtype=torch.bfloat16)

    def run() -> None:
        torch.matmul(a, b, out=c)

    def check() -> tuple[float, float, str]:
        c.fill_(float("nan"))
        run()
        rows = rows_sample(m)
        ref = a[rows].double() @ b.double()
        return rel_err(c[rows], ref), 8e-3, "64 sampled rows against a float64 product of the same bf16 inputs; output poisoned with NaN"

    return Op(f"gemm_bf16_{m}x{n}x{k}", f"torch.matmul bf16 [{m},{k}] x [{k},{n}] -> bf16", "bf16 in, fp32 accumulate, bf16 out",
              run, check, 2.0 * m * n * k, 2.0 * (m * k + k * n + m * n))


def fp8_gemm_op(m: int, n: int, k: int) -> Op | None:
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        return None
    a = (torch.randn(m, k, device=DEV) * 0.5).to(torch.float8_e4m3fn)
    w = (torch.randn(n, k, device=DEV) * 0.5).to(torch.float8_e4m3fn)  # (N, K) row-major = B column-major
    sa = torch.tensor(1.0, device=DEV)
    sb = torch.tensor(1.0, device=DEV)
    holder: dict[str, torch.Tensor] = {}

    def run() -> None:
        holder["c"] = torch._scaled_mm(a, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

    def check() -> tuple[float, float, str]:
        run()
        rows = rows_sample(m)
        ref = a.float()[rows].double() @ w.float().double().t()  # upcast first: fp8 tensors have few indexing kernels
        return rel_err(holder["c"][rows], ref), 8e-3, "64 sampled rows against a float64 product of the same e4m3 inputs (unit scales)"

    return Op(f"gemm_fp8_e4m3_{m}x{n}x{k}", f"torch._scaled_mm e4m3 [{m},{k}] x [{k},{n}] (tensor-wise scales) -> bf16",
              "fp8 e4m3 in, fp32 accumulate, bf16 out", run, check, 2.0 * m * n * k, 1.0 * (m * k + k * n) + 2.0 * m * n)


def add_op(numel: int) -> Op:
    x = torch.rand(numel, device=DEV)
    y = torch.rand(numel, device=DEV)
    z = torch.full((numel,), float("nan"), device=DEV)

    def run() -> None:
        torch.add(x, y, out=z)

    def check() -> tuple[float, float, str]:
        z.fill_(float("nan"))
        run()
        exact = bool(torch.equal(z, (x.double() + y.double()).float()))
        return (0.0 if exact else 1.0), 0.0, "every element equal to the float64 sum rounded to float32 (exact); output poisoned with NaN"

    return Op(f"add_fp32_{numel}", f"torch.add fp32, {numel} elements", "fp32", run, check, float(numel), 12.0 * numel)


def sum_op(numel: int) -> Op:
    x = torch.rand(numel, device=DEV)
    holder: dict[str, torch.Tensor] = {}

    def run() -> None:
        holder["s"] = x.sum()

    def check() -> tuple[float, float, str]:
        run()
        ref = x.double().sum()
        return abs(float(holder["s"]) - float(ref)) / abs(float(ref)), 1e-5, "relative error against a float64 sum"

    return Op(f"sum_fp32_{numel}", f"Tensor.sum fp32, {numel} elements to one", "fp32", run, check, float(numel), 4.0 * numel)


def softmax_op(rows: int, cols: int) -> Op:
    x = torch.randn(rows, cols, device=DEV, dtype=torch.bfloat16) * 3
    holder: dict[str, torch.Tensor] = {}

    def run() -> None:
        holder["y"] = torch.softmax(x, dim=-1)

    def check() -> tuple[float, float, str]:
        run()
        r = rows_sample(rows)
        ref = torch.softmax(x[r].double(), dim=-1)
        return rel_err(holder["y"][r], ref), 1e-2, "64 sampled rows against float64 softmax of the same bf16 input; all outputs finite"

    return Op(f"softmax_bf16_{rows}x{cols}", f"torch.softmax bf16 [{rows},{cols}] over the last dim", "bf16 (fp32 inside)", run, check,
              5.0 * rows * cols, 4.0 * rows * cols)


def layernorm_op(rows: int, cols: int) -> Op:
    x = torch.randn(rows, cols, device=DEV, dtype=torch.bfloat16)
    w = torch.randn(cols, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(cols, device=DEV, dtype=torch.bfloat16)
    holder: dict[str, torch.Tensor] = {}

    def run() -> None:
        holder["y"] = F.layer_norm(x, (cols,), w, b, 1e-5)

    def check() -> tuple[float, float, str]:
        run()
        r = rows_sample(rows)
        ref = F.layer_norm(x[r].double(), (cols,), w.double(), b.double(), 1e-5)
        return rel_err(holder["y"][r], ref), 1e-2, "64 sampled rows against float64 layer_norm of the same bf16 inputs; all finite"

    return Op(f"layernorm_bf16_{rows}x{cols}", f"F.layer_norm bf16 [{rows},{cols}] with weight and bias", "bf16 (fp32 inside)", run,
              check, 8.0 * rows * cols, 4.0 * rows * cols)


def attention_ref(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    q64, k64, v64 = q.double(), k.double(), v.double()
    s = q64 @ k64.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        lq, lk = s.shape[-2], s.shape[-1]
        mask = torch.ones(lq, lk, dtype=torch.bool, device=s.device).tril(diagonal=lk - lq)
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v64


def prefill_attention_op(b: int, h: int, s: int, d: int) -> Op:
    q, k, v = (torch.randn(b, h, s, d, device=DEV, dtype=torch.bfloat16) for _ in range(3))
    holder: dict[str, torch.Tensor] = {}

    def run() -> None:
        holder["o"] = F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def check() -> tuple[float, float, str]:
        run()
        heads = torch.tensor([0, h // 3, 2 * h // 3, h - 1], device=DEV)
        ref = attention_ref(q[0, heads], k[0, heads], v[0, heads], causal=True)
        return rel_err(holder["o"][0, heads], ref), 1e-2, "4 sampled heads against float64 causal softmax(q k^T / sqrt(d)) v"

    flops = 4.0 * b * h * s * s * d / 2  # causal: half the score matrix
    return Op(f"sdpa_causal_prefill_b{b}_h{h}_s{s}_d{d}", f"F.scaled_dot_product_attention causal, q=k=v [{b},{h},{s},{d}] bf16",
              "bf16 (fp32 softmax/accumulate)", run, check, flops, 2.0 * 4 * b * h * s * d)


def decode_attention_op(b: int, hq: int, hkv: int, s: int, d: int) -> Op:
    q = torch.randn(b, hq, 1, d, device=DEV, dtype=torch.bfloat16)
    k = torch.randn(b, hkv, s, d, device=DEV, dtype=torch.bfloat16)
    v = torch.randn(b, hkv, s, d, device=DEV, dtype=torch.bfloat16)
    holder: dict[str, torch.Tensor] = {}

    def run() -> None:
        holder["o"] = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    def check() -> tuple[float, float, str]:
        run()
        rep = hq // hkv
        ref = attention_ref(q, k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1), causal=False)
        return rel_err(holder["o"], ref), 1e-2, "every head against float64 softmax(q k^T / sqrt(d)) v with the KV heads expanded"

    return Op(f"sdpa_decode_b{b}_hq{hq}_hkv{hkv}_kv{s}_d{d}",
              f"F.scaled_dot_product_attention(enable_gqa=True), 1 query token, KV {s} tokens, {hq} query / {hkv} KV heads, bf16",
              "bf16", run, check, 4.0 * b * hq * s * d, 2.0 * (2 * b * hkv * s * d + 2 * b * hq * d))


def build_ops(big: bool) -> list[Op]:
    ops = [gemm_op(4096, 4096, 4096)]
    if big:
        ops.append(gemm_op(8192, 8192, 8192))
    ops.append(gemm_op(16, 8192, 8192))
    fp8 = fp8_gemm_op(4096, 4096, 4096)
    if fp8:
        ops.append(fp8)
    ops += [
        add_op(1 << 26),
        sum_op(1 << 27),
        softmax_op(8192, 8192),
        layernorm_op(16384, 4096),
        prefill_attention_op(1, 32, 2048, 128),
        decode_attention_op(1, 32, 8, 4096, 128),
    ]
    return ops


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("ncu", "list", "check"), default="ncu")
    ap.add_argument("--out", required=True, help="JSON file: the operations, their checks and (list mode) their kernels")
    ap.add_argument("--no-big", action="store_true", help="leave out the 8192^3 GEMM")
    args = ap.parse_args(argv)

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    ops = build_ops(big=not args.no_big)
    records = []
    for op in ops:
        op.run()  # warm-up
        torch.cuda.synchronize()
        err, tol, method = op.check()
        torch.cuda.synchronize()
        ok = err == err and err <= tol  # NaN never passes
        records.append({"name": op.name, "what": op.what, "precision": op.precision, "flops": op.flops, "bytes_min": op.bytes,
                        "correctness": {"method": method, "error": err, "tolerance": tol, "passed": ok}})
        print(f"{op.name:45s} err {err:.3e} tol {tol:.0e} {'ok' if ok else 'FAILED'}", flush=True)

    kernels: dict[str, list[str]] = {}
    torch.cuda.synchronize()
    if args.mode == "ncu":
        torch.cuda.profiler.start()
        for op in ops:
            torch.cuda.nvtx.range_push(op.name)
            op.run()
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    elif args.mode == "list":
        from torch.profiler import ProfilerActivity, profile, record_function

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for op in ops:
                with record_function(op.name):
                    op.run()
                    torch.cuda.synchronize()  # so that the operation's kernels finish inside its window
        names = {o.name for o in ops}
        windows = [(e.name, e.time_range.start, e.time_range.end) for e in prof.events()
                   if e.name in names and e.device_type == torch.autograd.DeviceType.CPU]
        for name, _s, _e in windows:
            kernels.setdefault(name, [])
        gpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and e.name not in names]
        for ev in sorted(gpu, key=lambda e: e.time_range.start):
            owner = next((n for n, s, e in windows if s <= ev.time_range.start <= e), "unattributed")
            kernels.setdefault(owner, []).append(ev.name)
        for r in records:
            r["kernels"] = kernels.get(r["name"], [])
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"mode": args.mode, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
                   "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0), "ops": records}, fh, indent=1)
    failed = [r["name"] for r in records if not r["correctness"]["passed"]]
    if failed:
        print("FAILED:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
