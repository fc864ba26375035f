"""NCCL collective bus bandwidth across the local GPUs, one process per GPU.

Four operations, counted as nccl-tests counts them (so the figures compare with theirs):
all_reduce and reduce_scatter by their input, all_gather by its gathered output, all_to_all by
one rank's whole buffer. NVLink multicast (NVLS) stays off: on shared machines a program using
it can take the host's GPUs out of service, and the profile records that it was off.
"""

from __future__ import annotations

import json
import os
import re
import socket
import tempfile
from pathlib import Path
from typing import Any, Callable

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from studytui.measure.backend import Check, CollectiveMeasurement

COLLECTIVE_METHODS = {
    "all_reduce": "every element equal to the exact sum of the ranks' small-integer inputs",
    "all_gather": "every gathered chunk equal to its rank's input (exact); output poisoned with NaN first",
    "reduce_scatter": "each rank's chunk equal to the exact sum of that chunk over the ranks; output poisoned with NaN first",
    "all_to_all": "each received chunk equal to the chunk its sender addressed to this rank (exact); output poisoned with NaN first",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pattern(count: int, rank: int, device: torch.device, offset: int = 0) -> torch.Tensor:
    # Small integers: sums of them are exact in fp32, so the check can demand equality.
    return (((torch.arange(count, device=device) + offset) % 13) + 1).to(torch.float32) * (rank + 1)


def _element_count(op: str, nbytes: int, world: int) -> int:
    count = nbytes // 4
    if op != "all_reduce":
        count -= count % world  # the buffer splits into equal per-rank chunks
    return max(count, world)


def _case(op: str, count: int, rank: int, world: int, device: torch.device) -> tuple[Callable[[], None], Callable[[], int]]:
    """The timed call and its correctness check (the number of wrong elements)."""
    per = count // world
    if op == "all_reduce":
        buf = _pattern(count, rank, device)

        def run() -> None:
            dist.all_reduce(buf)

        def check() -> int:
            buf.copy_(_pattern(count, rank, device))
            run()
            torch.cuda.synchronize()
            return int((buf != _pattern(count, 0, device) * (world * (world + 1) / 2)).sum().item())

        return run, check
    if op == "all_gather":
        inp = _pattern(per, rank, device)
        out = torch.empty(count, dtype=torch.float32, device=device)

        def run() -> None:
            dist.all_gather_into_tensor(out, inp)

        def check() -> int:
            out.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            return sum(int((out[r * per:(r + 1) * per] != _pattern(per, r, device)).sum().item()) for r in range(world))

        return run, check
    if op == "reduce_scatter":
        inp = _pattern(count, rank, device)
        out = torch.empty(per, dtype=torch.float32, device=device)

        def run() -> None:
            dist.reduce_scatter_tensor(out, inp)

        def check() -> int:
            out.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            expected = _pattern(per, 0, device, offset=rank * per) * (world * (world + 1) / 2)
            return int((out != expected).sum().item())

        return run, check
    if op == "all_to_all":
        inp = _pattern(count, rank, device)
        out = torch.empty(count, dtype=torch.float32, device=device)

        def run() -> None:
            dist.all_to_all_single(out, inp)

        def check() -> int:
            out.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            # Chunk r of the output is chunk `rank` of rank r's input.
            return sum(
                int((out[r * per:(r + 1) * per] != _pattern(per, r, device, offset=rank * per)).sum().item())
                for r in range(world)
            )

        return run, check
    raise ValueError(f"unknown collective {op!r}")


def _worker(rank: int, world: int, port: int, ops: list[str], sizes: list[int], warmup: int, reps: int, out_dir: str) -> None:
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # never multicast: see the module docstring
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=device)
    records: list[dict[str, Any]] = []
    try:
        for op in ops:
            for nbytes in sizes:
                count = _element_count(op, nbytes, world)
                try:
                    fn, check = _case(op, count, rank, world, device)
                except torch.OutOfMemoryError:
                    records.append({"op": op, "nbytes": count * 4, "world": world, "skipped": "out of device memory"})
                    continue
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
                # Each rank times its own calls; the slowest rank is the collective's time.
                times = torch.tensor([s.elapsed_time(e) / 1e3 for s, e in zip(starts, ends)], device=device)
                dist.all_reduce(times, op=dist.ReduceOp.MAX)
                wrong = torch.tensor([check()], device=device, dtype=torch.float64)
                dist.all_reduce(wrong)
                records.append({
                    "op": op, "nbytes": count * 4, "world": world, "times": times.tolist(),
                    "error": wrong.item() / (count * world), "method": COLLECTIVE_METHODS[op],
                })
                del fn, check
                torch.cuda.empty_cache()
        if rank == 0:
            Path(out_dir, "rank0.json").write_text(json.dumps(records))
    finally:
        dist.destroy_process_group()


def nccl_details(debug_text: str = "") -> dict[str, Any]:
    """NCCL's version and how its algorithm and protocol were chosen (env overrides or its tuner)."""
    try:
        version = ".".join(str(v) for v in torch.cuda.nccl.version())
    except Exception:  # noqa: BLE001 - a build without NCCL still describes itself
        version = "unknown"
    algos = sorted(set(re.findall(r"\bAlgo\s+(\w+)", debug_text)))
    protos = sorted(set(re.findall(r"\bproto(?:col)?\s+(\w+)", debug_text, flags=re.IGNORECASE)))
    return {
        "nccl": version,
        "algorithm": os.environ.get("NCCL_ALGO") or (
            f"chosen by NCCL's tuner per call; seen: {', '.join(algos)}" if algos else "chosen by NCCL's tuner per call (not logged)"
        ),
        "protocol": os.environ.get("NCCL_PROTO") or (
            f"chosen by NCCL's tuner per call; seen: {', '.join(protos)}" if protos else "chosen by NCCL's tuner per call (not logged)"
        ),
        "nvls": "off (NCCL_NVLS_ENABLE=0): NVLink multicast is not used on these shared machines",
    }


def run_collectives(ops: list[str], sizes: list[int], warmup: int, reps: int, world: int) -> list[CollectiveMeasurement]:
    with tempfile.TemporaryDirectory() as out_dir:
        # NCCL's tuning log names the algorithm and protocol it picked; it goes to a file, not the screen.
        os.environ.setdefault("NCCL_DEBUG", "INFO")
        os.environ.setdefault("NCCL_DEBUG_SUBSYS", "TUNING")
        os.environ.setdefault("NCCL_DEBUG_FILE", str(Path(out_dir, "nccl.%h.%p.log")))
        mp.spawn(_worker, args=(world, _free_port(), ops, sizes, warmup, reps, out_dir), nprocs=world, join=True)
        records = json.loads(Path(out_dir, "rank0.json").read_text())
        debug_text = "\n".join(p.read_text(errors="replace") for p in Path(out_dir).glob("nccl.*.log"))[:2_000_000]
    details = nccl_details(debug_text)
    out = []
    for r in records:
        if "skipped" in r:
            continue
        out.append(CollectiveMeasurement(
            op=r["op"], nbytes=r["nbytes"], world_size=r["world"], times_s=r["times"],
            check=Check(r["error"], 0.0, r["method"]), extra={"nccl": details},
        ))
    return out
