"""A PyTorch profiler trace of one Llama-3.1-8B-shaped decoder layer: a prefill step and a decode step.

    python3 benchmarks/gpu/capture_trace_layer.py --out-dir DIR

Writes DIR/llama8b-layer-prefill-decode.trace.json.gz (torch.profiler, CPU + CUDA activities,
record_shapes=True, export_chrome_trace, then gzip), DIR/llama8b-layer.json (the five fields:
shapes, timing, the fp32 reference check) and DIR/llama8b-layer-key-averages.txt.

The layer (random weights, bf16): RMSNorm, q/k/v projections (hidden 4096, 32 query heads, 8 KV
heads, head dim 128), rotary embedding (theta 500000), scaled_dot_product_attention with grouped KV
heads, o projection and residual, RMSNorm, SwiGLU MLP (intermediate 14336) and residual.
- prefill: batch 1, 2048 tokens, causal attention; it fills the layer's KV cache.
- decode: batch 8, 1 new token each, against a KV cache of 2048 tokens (random, preallocated for 2049;
  the new token's K and V are written in place at position 2048, then attention over all 2049).
Correctness: the same layer in float32 (weights and inputs upcast, TF32 off) on the same inputs; the
relative Frobenius error of the layer's output and of its update (output minus the residual input,
the part the layer computes) must be under the tolerance. Timing: CUDA events, median of 20 runs
after 5 warm-ups, outside the profiler.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import shutil
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    raise SystemExit("needs PyTorch with CUDA (pip install -e '.[measure]'), on a GPU machine") from None

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTER = 4096, 32, 8, 128, 14336
EPS, THETA = 1e-5, 500000.0


def make_weights(dtype: torch.dtype, gen: torch.Generator) -> dict[str, torch.Tensor]:
    def lin(out_f: int, in_f: int) -> torch.Tensor:
        return (torch.randn(out_f, in_f, generator=gen, device="cuda") / math.sqrt(in_f)).to(dtype)

    return {
        "attn_norm": (1.0 + 0.1 * torch.randn(HIDDEN, generator=gen, device="cuda")).to(dtype),
        "wq": lin(HEADS * HEAD_DIM, HIDDEN),
        "wk": lin(KV_HEADS * HEAD_DIM, HIDDEN),
        "wv": lin(KV_HEADS * HEAD_DIM, HIDDEN),
        "wo": lin(HIDDEN, HEADS * HEAD_DIM),
        "mlp_norm": (1.0 + 0.1 * torch.randn(HIDDEN, generator=gen, device="cuda")).to(dtype),
        "w_gate": lin(INTER, HIDDEN),
        "w_up": lin(INTER, HIDDEN),
        "w_down": lin(HIDDEN, INTER),
    }


def rms_norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    return (y * w.float()).to(x.dtype)


def rope(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """x: [batch, heads, tokens, head_dim]; rotate-half rotary embedding computed in float32."""
    inv = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2, device=x.device, dtype=torch.float32) / HEAD_DIM))
    ang = positions.float()[:, None] * inv[None, :]
    cos = torch.cat([ang.cos(), ang.cos()], dim=-1)
    sin = torch.cat([ang.sin(), ang.sin()], dim=-1)
    xf = x.float()
    x1, x2 = xf[..., : HEAD_DIM // 2], xf[..., HEAD_DIM // 2:]
    rotated = torch.cat([-x2, x1], dim=-1)
    return (xf * cos + rotated * sin).to(x.dtype)


def layer(x: torch.Tensor, w: dict[str, torch.Tensor], cache: tuple[torch.Tensor, torch.Tensor] | None, start: int) -> torch.Tensor:
    """One decoder layer. cache: (k, v) [batch, kv_heads, capacity, head_dim]; new K/V go at `start`."""
    b, s, _ = x.shape
    h = rms_norm(x, w["attn_norm"])
    q = F.linear(h, w["wq"]).view(b, s, HEADS, HEAD_DIM).transpose(1, 2)
    k = F.linear(h, w["wk"]).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
    v = F.linear(h, w["wv"]).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
    pos = torch.arange(start, start + s, device=x.device)
    q, k = rope(q, pos), rope(k, pos)
    if cache is not None:
        kc, vc = cache
        kc[:, :, start:start + s] = k
        vc[:, :, start:start + s] = v
        k, v = kc[:, :, : start + s], vc[:, :, : start + s]
    attn = F.scaled_dot_product_attention(q, k, v, is_causal=(s > 1), enable_gqa=True)
    x = x + F.linear(attn.transpose(1, 2).reshape(b, s, HEADS * HEAD_DIM), w["wo"])
    h2 = rms_norm(x, w["mlp_norm"])
    return x + F.linear(F.silu(F.linear(h2, w["w_gate"])) * F.linear(h2, w["w_up"]), w["w_down"])


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    a64, b64 = a.double(), b.double()
    if not torch.isfinite(a64).all():
        return float("nan")
    return float(torch.linalg.vector_norm(a64 - b64) / torch.linalg.vector_norm(b64))


def time_it(fn, warmup: int = 5, reps: int = 20) -> dict[str, float]:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e-3)
    times.sort()
    return {"median_s": times[len(times) // 2], "min_s": times[0], "max_s": times[-1], "reps": reps, "warmup": warmup}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--prefill-tokens", type=int, default=2048)
    ap.add_argument("--decode-batch", type=int, default=8)
    ap.add_argument("--kv-len", type=int, default=2048)
    args = ap.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    gen = torch.Generator(device="cuda").manual_seed(2024)
    w16 = make_weights(torch.bfloat16, gen)
    w32 = {k: v.float() for k, v in w16.items()}
    S, B, L = args.prefill_tokens, args.decode_batch, args.kv_len

    x_pre = torch.randn(1, S, HIDDEN, generator=gen, device="cuda").to(torch.bfloat16)
    kv_pre = (torch.empty(1, KV_HEADS, S, HEAD_DIM, device="cuda", dtype=torch.bfloat16),
              torch.empty(1, KV_HEADS, S, HEAD_DIM, device="cuda", dtype=torch.bfloat16))
    x_dec = torch.randn(B, 1, HIDDEN, generator=gen, device="cuda").to(torch.bfloat16)
    k_hist = torch.randn(B, KV_HEADS, L, HEAD_DIM, generator=gen, device="cuda").to(torch.bfloat16)
    v_hist = torch.randn(B, KV_HEADS, L, HEAD_DIM, generator=gen, device="cuda").to(torch.bfloat16)
    kv_dec = (torch.empty(B, KV_HEADS, L + 1, HEAD_DIM, device="cuda", dtype=torch.bfloat16),
              torch.empty(B, KV_HEADS, L + 1, HEAD_DIM, device="cuda", dtype=torch.bfloat16))

    def reset_dec() -> None:
        kv_dec[0][:, :, :L] = k_hist
        kv_dec[1][:, :, :L] = v_hist
        kv_dec[0][:, :, L:] = float("nan")  # poison: the layer must write the new token's K and V
        kv_dec[1][:, :, L:] = float("nan")

    def prefill() -> torch.Tensor:
        return layer(x_pre, w16, kv_pre, 0)

    def decode() -> torch.Tensor:
        return layer(x_dec, w16, kv_dec, L)

    # -- correctness: bf16 layer against float32 on the same inputs ----------------------------
    reset_dec()
    y_pre = prefill()
    y_dec = decode()
    kv32_pre = (torch.empty(1, KV_HEADS, S, HEAD_DIM, device="cuda"), torch.empty(1, KV_HEADS, S, HEAD_DIM, device="cuda"))
    kv32_dec = (torch.cat([k_hist.float(), torch.zeros(B, KV_HEADS, 1, HEAD_DIM, device="cuda")], 2),
                torch.cat([v_hist.float(), torch.zeros(B, KV_HEADS, 1, HEAD_DIM, device="cuda")], 2))
    r_pre = layer(x_pre.float(), w32, kv32_pre, 0)
    r_dec = layer(x_dec.float(), w32, kv32_dec, L)
    torch.cuda.synchronize()
    checks = {
        "prefill": {"output_rel_err": rel(y_pre, r_pre), "update_rel_err": rel(y_pre.float() - x_pre.float(), r_pre - x_pre.float()),
                    "kv_cache_rel_err": rel(kv_pre[0], kv32_pre[0])},
        "decode": {"output_rel_err": rel(y_dec, r_dec), "update_rel_err": rel(y_dec.float() - x_dec.float(), r_dec - x_dec.float()),
                   "new_kv_written": bool(torch.isfinite(kv_dec[0][:, :, L]).all() and torch.isfinite(kv_dec[1][:, :, L]).all())},
    }
    tol = 2e-2
    for name, c in checks.items():
        c["tolerance"] = tol
        errs = [v for k, v in c.items() if k.endswith("rel_err")]
        c["passed"] = all(e == e and e <= tol for e in errs) and c.get("new_kv_written", True)
        print(name, json.dumps(c), flush=True)

    # -- timing (outside the profiler) ----------------------------------------------------------
    t_pre = time_it(prefill)
    t_dec = time_it(decode)
    print("prefill", t_pre, "decode", t_dec, flush=True)

    # -- the trace ------------------------------------------------------------------------------
    from torch.profiler import ProfilerActivity, profile, record_function

    for _ in range(3):
        prefill()
        decode()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        with record_function("prefill"):
            prefill()
            torch.cuda.synchronize()
        with record_function("decode"):
            decode()
            torch.cuda.synchronize()
    raw = os.path.join(args.out_dir, "llama8b-layer-prefill-decode.trace.json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    with open(os.path.join(args.out_dir, "llama8b-layer-key-averages.txt"), "w", encoding="utf-8") as fh:
        fh.write(prof.key_averages().table(sort_by="cuda_time_total", row_limit=40))
    kernels = {"prefill": [], "decode": []}
    windows = [(e.name, e.time_range.start, e.time_range.end) for e in prof.events()
               if e.name in kernels and e.device_type == torch.autograd.DeviceType.CPU]
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA and ev.name not in kernels:
            owner = next((n for n, s, e in windows if s <= ev.time_range.start <= e), None)
            if owner:
                kernels[owner].append({"name": ev.name, "us": ev.device_time_total if hasattr(ev, "device_time_total") else None})

    params = sum(v.numel() for k, v in w16.items() if k.startswith("w"))
    flops_pre = 2 * params * S + 2 * 2 * HEADS * HEAD_DIM * S * S / 2
    flops_dec = 2 * params * B + 2 * 2 * HEADS * HEAD_DIM * B * (L + 1)
    info = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "shapes": {"hidden": HIDDEN, "heads": HEADS, "kv_heads": KV_HEADS, "head_dim": HEAD_DIM, "intermediate": INTER,
                   "prefill": {"batch": 1, "tokens": S}, "decode": {"batch": B, "new_tokens": 1, "kv_cache_tokens": L}},
        "layer_weight_params": params,
        "flops_estimate": {"prefill": flops_pre, "decode": flops_dec,
                           "method": ("2 x weight params x tokens + causal attention (4 s^2 d h / 2); "
                                     "decode attention 4 (L+1) d h per token")},
        "timing": {"prefill": t_pre, "decode": t_dec,
                   "method": "CUDA events around one layer call, median of 20 after 5 warm-ups, outside the profiler"},
        "correctness": {"method": "the same layer in float32 (weights and inputs upcast from the bf16 ones, TF32 off, same RoPE and "
                                  "SDPA path in fp32) on the same inputs; relative Frobenius error of the output and of the update "
                                  "(output - residual input); decode: the new token's K/V slots poisoned with NaN before the run "
                                  "and checked written", "results": checks},
        "kernels_in_trace": kernels,
    }
    with open(os.path.join(args.out_dir, "llama8b-layer.json"), "w", encoding="utf-8") as fh:
        json.dump(info, fh, indent=1)
    ok = all(c["passed"] for c in checks.values())
    print("correctness", "passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
