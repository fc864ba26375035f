"""Which read-only formulation streams HBM fastest through PyTorch? (Exploration, 4 GiB buffers.)

Used once to choose the read benchmark of `studytui measure`: SDPA decode attention read its KV
cache at a higher rate than torch.sum, so the measured memory ceiling was not the highest rate
the chip reaches. Prints bytes read / median time for each formulation.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

GiB = 1 << 30


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    import torch

    from studytui.measure.stats import spread
    from studytui.measure.torch_backend import time_with_events

    n32 = 4 * GiB // 4
    x = torch.rand(n32, device="cuda")
    out0 = torch.empty((), device="cuda")
    wb = torch.randn(4 * GiB // 2 // 8192, 8192, device="cuda", dtype=torch.bfloat16)  # bf16 matrix, 4 GiB
    vb = torch.randn(8192, device="cuda", dtype=torch.bfloat16)
    ob = torch.empty(wb.shape[0], device="cuda", dtype=torch.bfloat16)
    variants = {
        "sum flat fp32": (lambda: torch.sum(x, dim=0, out=out0), 4 * GiB),
        "rowsum 4096 fp32": (lambda: x.view(-1, 4096).sum(dim=1), 4 * GiB),
        "rowsum 65536 fp32": (lambda: x.view(-1, 65536).sum(dim=1), 4 * GiB),
        "colsum (4096 rows) fp32": (lambda: x.view(4096, -1).sum(dim=0), 4 * GiB),
        "amax rows 4096 fp32": (lambda: x.view(-1, 4096).amax(dim=1), 4 * GiB),
        "vector_norm fp32": (lambda: torch.linalg.vector_norm(x), 4 * GiB),
        "dot fp32 (two 2 GiB halves)": (lambda: torch.dot(x[: n32 // 2], x[n32 // 2:]), 4 * GiB),
        "gemv bf16 W@x (mv)": (lambda: torch.mv(wb, vb, out=ob), 4 * GiB),
        "gemv bf16 x@W^T": (lambda: torch.matmul(vb.view(1, -1), wb.t()), 4 * GiB),
        "sum bf16 rows 8192": (lambda: wb.sum(dim=1), 4 * GiB),
    }
    for name, (fn, nbytes) in variants.items():
        try:
            t = spread(time_with_events(fn, 3, 20))
            print(f"{name:32s} {nbytes / t['median'] / 1e9:8.1f} GB/s  (best {nbytes / t['min'] / 1e9:8.1f})", flush=True)
        except Exception as exc:  # noqa: BLE001
            print(f"{name:32s} failed: {type(exc).__name__}: {str(exc)[:120]}", flush=True)


if __name__ == "__main__":
    main()
