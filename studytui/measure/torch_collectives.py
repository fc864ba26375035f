"""NCCL all-reduce and all-gather bus bandwidth across the local GPUs, one process per GPU."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from studytui.measure.backend import Check, CollectiveMeasurement


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pattern(count: int, rank: int, device: torch.device) -> torch.Tensor:
    # Small integers: sums of them are exact in fp32, so the check can demand equality.
    return ((torch.arange(count, device=device) % 13) + 1).to(torch.float32) * (rank + 1)


def _worker(rank: int, world: int, port: int, ops: list[str], sizes: list[int], warmup: int, reps: int, out_dir: str) -> None:
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=device)
    records: list[dict[str, Any]] = []
    try:
        for op in ops:
            for nbytes in sizes:
                count = nbytes // 4
                if op == "all_reduce":
                    buf = _pattern(count, rank, device)

                    def fn() -> None:
                        dist.all_reduce(buf)
                else:
                    count -= count % world
                    inp = _pattern(count // world, rank, device)
                    out = torch.empty(count, dtype=torch.float32, device=device)

                    def fn() -> None:
                        dist.all_gather_into_tensor(out, inp)

                for _ in range(warmup):
                    fn()
                torch.cuda.synchronize()
                dist.barrier()
                starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
                ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
                for s, e in zip(starts, ends):
                    s.record()
                    fn()
                    e.record()
                torch.cuda.synchronize()
                times = [s.elapsed_time(e) / 1e3 for s, e in zip(starts, ends)]
                # Correctness: fresh inputs, poisoned output, exact comparison.
                if op == "all_reduce":
                    buf.copy_(_pattern(count, rank, device))
                    fn()
                    torch.cuda.synchronize()
                    expected = _pattern(count, 0, device) * (world * (world + 1) / 2)
                    wrong = (buf != expected).sum().item()
                    method = "every element equal to the exact sum of the ranks' small-integer inputs"
                else:
                    out.fill_(float("nan"))
                    fn()
                    torch.cuda.synchronize()
                    per = count // world
                    wrong = sum(
                        (out[r * per:(r + 1) * per] != _pattern(per, r, device)).sum().item() for r in range(world)
                    )
                    method = "every gathered chunk equal to its rank's input (exact); output poisoned with NaN first"
                records.append({
                    "op": op, "nbytes": count * 4, "world": world, "times": times,
                    "error": wrong / count, "method": method,
                })
                del fn
                torch.cuda.empty_cache()
        if rank == 0:
            Path(out_dir, "rank0.json").write_text(json.dumps(records))
    finally:
        dist.destroy_process_group()


def run_collectives(ops: list[str], sizes: list[int], warmup: int, reps: int, world: int) -> list[CollectiveMeasurement]:
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(_worker, args=(world, _free_port(), ops, sizes, warmup, reps, out_dir), nprocs=world, join=True)
        records = json.loads(Path(out_dir, "rank0.json").read_text())
    return [
        CollectiveMeasurement(
            op=r["op"], nbytes=r["nbytes"], world_size=r["world"], times_s=r["times"],
            check=Check(r["error"], 0.0, r["method"]),
        )
        for r in records
    ]
