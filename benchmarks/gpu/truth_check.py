"""Truth check on a real GPU: the roofline time must be a lower bound of what the hardware does.

For a set of GEMM shapes and decode-step proxies, time the real operation (CUDA events after
warm-up, median of repetitions), check its output against a float64 reference, and compare with
the roofline lower bound max(FLOPs / peak, bytes / bandwidth), both with vendor peaks and with
the measured profile's ceilings. A measured time below the vendor-peak bound would mean the
calculator (or the byte/FLOP count) is wrong.

Run on the GPU machine from the repository root:
    python3 benchmarks/gpu/truth_check.py --profile PROFILE.yaml --out RESULTS.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

try:
    import torch
except ImportError:
    raise SystemExit("needs PyTorch with CUDA (pip install -e '.[measure]'), on a GPU machine") from None

from studytui.measure.backend import Check  # noqa: E402
from studytui.measure.stats import spread  # noqa: E402
from studytui.measure.torch_backend import GemmCase, TorchCudaBackend, time_with_events  # noqa: E402

# H200 SXM vendor figures (dense), as in content/hardware: the baseline of the calculator.
VENDOR = {"bf16": 989.4e12, "fp16": 989.4e12, "fp8": 1978.9e12, "mem_bw": 4.8e12}
BYTES = {"bf16": 2, "fp16": 2, "fp8": 1}

# Llama-3.1-8B shapes (config.json): hidden 4096, intermediate 14336, 32 heads, 8 KV heads,
# head dim 128, 32 layers, vocab 128256.
L8B = {"layers": 32, "hidden": 4096, "inter": 14336, "heads": 32, "kv_heads": 8, "head_dim": 128, "vocab": 128256}


def roofline(flops: float, nbytes: float, peak: float | None, bw: float | None) -> float | None:
    if not peak or not bw:
        return None
    return max(flops / peak, nbytes / bw)


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    out64 = out.to(torch.float64)
    if bool(torch.isnan(out64).any()):
        return float("nan")
    return (torch.linalg.vector_norm(out64 - ref) / torch.linalg.vector_norm(ref)).item()


class WeightStream:
    """One decode step's linear layers for Llama-3.1-8B at batch B: every weight read once."""

    def __init__(self, gen: torch.Generator, batch: int):
        d, f, kvd, v = L8B["hidden"], L8B["inter"], L8B["kv_heads"] * L8B["head_dim"], L8B["vocab"]
        dev = "cuda"
        shapes = [(d, d), (d, kvd), (d, kvd), (d, d), (d, f), (d, f), (f, d)]  # q k v o gate up down
        self.layers = []
        for _ in range(L8B["layers"]):
            mats = [torch.empty(s, dtype=torch.bfloat16, device=dev).normal_(generator=gen) for s in shapes]
            self.layers.append(mats)
        self.lm_head = torch.empty((d, v), dtype=torch.bfloat16, device=dev).normal_(generator=gen)
        self.x = torch.empty((batch, d), dtype=torch.bfloat16, device=dev).normal_(generator=gen)
        self.h = torch.empty((batch, f), dtype=torch.bfloat16, device=dev).normal_(generator=gen)
        self.outs = [[torch.empty((batch, w.shape[1]), dtype=torch.bfloat16, device=dev) for w in mats] for mats in self.layers]
        self.logits = torch.empty((batch, v), dtype=torch.bfloat16, device=dev)
        self.params = sum(w.numel() for mats in self.layers for w in mats) + self.lm_head.numel()
        self.batch = batch

    def run(self) -> None:
        for mats, outs in zip(self.layers, self.outs):
            for i, (w, o) in enumerate(zip(mats, outs)):
                torch.matmul(self.h if i == 6 else self.x, w, out=o)
        torch.matmul(self.x, self.lm_head, out=self.logits)

    def check(self, gen: torch.Generator, run: Callable[[], None] | None = None) -> Check:
        self.x.normal_(generator=gen)
        self.h.normal_(generator=gen)
        for outs in self.outs:
            for o in outs:
                o.fill_(float("nan"))
        self.logits.fill_(float("nan"))
        (run or self.run)()
        torch.cuda.synchronize()
        if any(bool(torch.isnan(o).any()) for outs in self.outs for o in outs) or bool(torch.isnan(self.logits).any()):
            return Check(float("nan"), 8e-3, "an output was left unwritten")
        worst = 0.0
        x64, h64 = self.x.to(torch.float64), self.h.to(torch.float64)
        for li in (0, len(self.layers) - 1):
            for i, (w, o) in enumerate(zip(self.layers[li], self.outs[li])):
                ref = (h64 if i == 6 else x64) @ w.to(torch.float64)
                worst = max(worst, rel_error(o, ref))
        worst = max(worst, rel_error(self.logits, x64 @ self.lm_head.to(torch.float64)))
        return Check(worst, 8e-3, "every output NaN-poisoned then checked written; first and last layer and lm_head "
                     "against float64 products of the same bf16 inputs (worst relative Frobenius error)")


class DecodeAttention:
    """Decode attention at batch B, context S: one query token per sequence reads the KV cache."""

    def __init__(self, gen: torch.Generator, batch: int, context: int):
        h, kvh, hd = L8B["heads"], L8B["kv_heads"], L8B["head_dim"]
        self.q = torch.empty((batch, h, 1, hd), dtype=torch.bfloat16, device="cuda").normal_(generator=gen)
        self.k = torch.empty((batch, kvh, context, hd), dtype=torch.bfloat16, device="cuda").normal_(generator=gen)
        self.v = torch.empty((batch, kvh, context, hd), dtype=torch.bfloat16, device="cuda").normal_(generator=gen)
        self.out: torch.Tensor | None = None
        self.gqa = True

    def run(self) -> None:
        self.out = torch.nn.functional.scaled_dot_product_attention(self.q, self.k, self.v, enable_gqa=True)

    def check(self, gen: torch.Generator) -> Check:
        for t in (self.q, self.k, self.v):
            t.normal_(generator=gen)
        self.out = None
        self.run()
        torch.cuda.synchronize()
        group = self.q.shape[1] // self.k.shape[1]
        q = self.q[0].to(torch.float64)  # (H, 1, D)
        k = self.k[0].to(torch.float64).repeat_interleave(group, dim=0)
        v = self.v[0].to(torch.float64).repeat_interleave(group, dim=0)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        ref = torch.softmax(scores, dim=-1) @ v
        return Check(rel_error(self.out[0], ref), 1e-2, "sequence 0, all heads, against float64 softmax(q k^T / sqrt(d)) v "
                     "with grouped KV heads expanded (fresh random inputs)")


def as_graph(fn: Callable[[], None]) -> Callable[[], None]:
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", help="measured profile whose ceilings give the second bound")
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()

    backend = TorchCudaBackend()
    measured: dict[str, float] = {}
    if args.profile and Path(args.profile).is_file():
        from studytui.calc.profiles import measured_ceilings

        ceil = measured_ceilings("h200-sxm", args.profile)
        measured = dict(ceil["peak_flops"], mem_bw=ceil["mem_bw"])
    gen = backend.gen
    records: list[dict[str, Any]] = []

    def record(rid: str, kind: str, shape: dict[str, Any], precision: str, flops: float, nbytes: float,
               run: Callable[[], None], check: Callable[[], Check], reps: int, note: str = "") -> None:
        try:
            times = time_with_events(run, 5, reps)
            chk = check()
        except Exception as exc:  # noqa: BLE001 - one failing case must not stop the others
            records.append({"id": rid, "kind": kind, "shape": shape, "precision": precision, "error": f"{type(exc).__name__}: {exc}"[:300]})
            print(f"{rid}: FAILED {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            return
        t = spread(times)
        vb = roofline(flops, nbytes, VENDOR.get(precision), VENDOR["mem_bw"])
        mb = roofline(flops, nbytes, measured.get(precision), measured.get("mem_bw"))
        rec = {
            "id": rid, "kind": kind, "shape": shape, "precision": precision, "flops": flops, "bytes": nbytes,
            "repetitions": reps, "warmup": 5, "time_s": t,
            "correctness": {"method": chk.method, "tolerance": chk.tolerance, "error": chk.error,
                            "passed": bool(math.isfinite(chk.error) and chk.passed)},
            "bound_vendor_s": vb, "bound_measured_s": mb,
            "ratio_vendor": vb / t["median"] if vb else None,
            "ratio_vendor_fastest": vb / t["min"] if vb else None,
            "ratio_measured": mb / t["median"] if mb else None,
            "achieved_flops": flops / t["median"], "achieved_bw": nbytes / t["median"],
            "note": note,
        }
        records.append(rec)
        print(f"{rid:34s} {t['median'] * 1e3:9.4f} ms  vendor bound {vb * 1e3:9.4f} ms  ratio {rec['ratio_vendor']:.3f}"
              f"  fastest ratio {rec['ratio_vendor_fastest']:.3f}  err {chk.error:.2e} {'ok' if rec['correctness']['passed'] else 'FAIL'}",
              flush=True)

    gemms = [
        (4096, 4096, 4096, "bf16"), (8192, 8192, 8192, "bf16"), (8192, 8192, 8192, "fp16"), (8192, 8192, 8192, "fp8"),
        (16384, 16384, 16384, "bf16"), (16384, 16384, 16384, "fp8"),
        (1, 8192, 8192, "bf16"), (16, 8192, 8192, "bf16"), (64, 8192, 8192, "bf16"),
        (1, 28672, 8192, "bf16"), (64, 28672, 8192, "bf16"), (16, 8192, 8192, "fp8"),
        (896, 2432, 8192, "bf16"), (8320, 8320, 8320, "bf16"),
    ]
    for m, n, k, prec in gemms:
        rid = f"gemm-{prec}-{m}x{n}x{k}"
        try:
            case = GemmCase(backend, prec, m, n, k)
        except Exception as exc:  # noqa: BLE001
            records.append({"id": rid, "error": f"{type(exc).__name__}: {exc}"[:300]})
            print(f"{rid}: FAILED to build: {exc}", flush=True)
            continue
        flops = 2 * m * n * k
        nbytes = (m * k + k * n) * BYTES[prec] + m * n * 2
        record(rid, "gemm", {"m": m, "n": n, "k": k}, prec, flops, nbytes, case.run, case.check, args.reps)
        case.release()

    for batch in (1, 8, 32):
        rid = f"decode-weights-llama-3.1-8b-b{batch}"
        try:
            ws = WeightStream(gen, batch)
        except Exception as exc:  # noqa: BLE001
            records.append({"id": rid, "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        flops = 2 * batch * ws.params
        nbytes = 2 * ws.params + 2 * batch * (L8B["hidden"] * 7 * L8B["layers"])  # weights + activations (approx, tiny)
        shape = {"model": "llama-3.1-8b linear layers + lm_head", "batch": batch, "params": ws.params}
        record(rid + "-eager", "decode-weights", shape, "bf16", flops, nbytes, ws.run, lambda: ws.check(gen), 20,
               "eager launches (225 kernels per step)")
        try:
            replay = as_graph(ws.run)
            record(rid + "-graph", "decode-weights", shape, "bf16", flops, nbytes, replay, lambda: ws.check(gen, replay), 20,
                   "CUDA graph replay of the same kernels")
        except Exception as exc:  # noqa: BLE001
            records.append({"id": rid + "-graph", "error": f"{type(exc).__name__}: {exc}"[:300]})
        replay = None  # drop the graph (and its memory pool) with the weights
        ws = None
        torch.cuda.empty_cache()

    for batch, context in ((8, 4096), (8, 32768), (8, 131072), (1, 131072)):
        rid = f"decode-attention-b{batch}-s{context}"
        try:
            att = DecodeAttention(gen, batch, context)
        except Exception as exc:  # noqa: BLE001
            records.append({"id": rid, "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        h, kvh, hd = L8B["heads"], L8B["kv_heads"], L8B["head_dim"]
        flops = 4 * batch * h * context * hd
        nbytes = 2 * batch * kvh * context * hd * 2 + 2 * batch * h * hd * 2
        shape = {"batch": batch, "context": context, "heads": h, "kv_heads": kvh, "head_dim": hd}
        record(rid, "decode-attention", shape, "bf16", flops, nbytes, att.run, lambda: att.check(gen), args.reps,
               "torch scaled_dot_product_attention with enable_gqa")
        att = None
        torch.cuda.empty_cache()

    doc = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "hardware": backend.describe_hardware(),
        "software": backend.describe_software(),
        "vendor_baseline": VENDOR,
        "measured_baseline": measured,
        "timing": "CUDA events around each repetition after 5 warm-up runs; median, min, max",
        "records": records,
    }
    Path(args.out).write_text(json.dumps(doc, indent=1))
    beaten = [r["id"] for r in records if r.get("ratio_vendor_fastest") and r["ratio_vendor_fastest"] > 1]
    print("BOUND BEATEN (calculator bug?):", beaten if beaten else "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
