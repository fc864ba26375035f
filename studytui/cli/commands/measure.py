"""`studytui measure`: micro-benchmarks of the local GPU, written as a measured profile."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NEEDS_TORCH = "studytui measure needs PyTorch with CUDA: pip install -e '.[measure]'"


def register(subparsers: argparse._SubParsersAction, named: frozenset[str] | None = None) -> None:
    parser = subparsers.add_parser(
        "measure",
        help="measure this machine's GPU (memory bandwidth, matrix throughput, collectives)",
        description=(
            "Measure achieved HBM bandwidth, dense matrix-multiply throughput per precision and, with "
            "several GPUs, NCCL bus bandwidth. Every result is checked against a reference before it "
            "counts. Writes a measured profile (hardware, workload, precision, baseline, correctness); "
            "measuring into an existing profile of the same GPU adds a run. Needs PyTorch with CUDA."
        ),
    )
    add_arguments(parser)
    parser.set_defaults(func=handle)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", metavar="FILE", help="profile file to write (default: <data dir>/hardware/measured/<gpu id>.yaml)")
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repetitions (about a minute)")
    parser.add_argument(
        "--collectives", action="store_true",
        help="sweep all-reduce, all-gather, reduce-scatter and all-to-all from 1 MiB to 8 GiB (several GPUs)",
    )
    parser.add_argument("--collectives-only", action="store_true", help="measure only the collectives (skip HBM and GEMM)")
    parser.add_argument(
        "--gpus", metavar="N[,N...]", type=_gpu_counts,
        help="GPU counts to run the collectives over, e.g. 8,4,2 (default: every local GPU)",
    )
    parser.add_argument(
        "--clusters", action="store_true",
        help="record thread-block cluster capacity (cudaOccupancyMaxActiveClusters for cluster sizes 1-16 and 1-32 blocks "
             "per SM, with a residency check) and the L2 persistence attributes; needs an NVIDIA GPU of compute capability "
             "9.0+ and its driver, not PyTorch",
    )
    parser.add_argument("--json", action="store_true", help="print the run as JSON instead of a table")


def _gpu_counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected GPU counts such as 8,4,2, not {text!r}") from None
    if not counts or any(n < 2 or n > 1024 for n in counts):
        raise argparse.ArgumentTypeError("each GPU count must be between 2 and 1024 (a collective needs two GPUs)")
    return counts


def _backend():
    from studytui.core.errors import UsageError
    from studytui.measure.backend import BackendUnavailable

    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError(NEEDS_TORCH) from None
    try:
        from studytui.measure.torch_backend import make_backend

        return make_backend()
    except BackendUnavailable as exc:
        raise UsageError(f"{NEEDS_TORCH} ({exc})") from None


NEEDS_GPU = "studytui measure --clusters needs an NVIDIA GPU and its CUDA driver (libcuda)"


def _cluster_backend():
    """The CUDA driver through ctypes (tests replace this with a fake)."""
    from studytui.core.errors import UsageError
    from studytui.measure.backend import BackendUnavailable

    try:
        from studytui.measure.cuda_driver import make_cluster_backend

        return make_cluster_backend()
    except BackendUnavailable as exc:
        raise UsageError(f"{NEEDS_GPU}: {exc}") from None


def handle_clusters(args: argparse.Namespace) -> int:
    import platform

    from studytui.core import fileio
    from studytui.core.errors import UsageError
    from studytui.core.paths import data_dir
    from studytui.measure.catalog import default_catalog_paths, load_catalog, match_device
    from studytui.measure.clusters import record_clusters, summary
    from studytui.measure.profile_file import slug

    for flag in ("collectives", "collectives_only", "quick"):
        if getattr(args, flag, False):
            raise UsageError(f"--{flag.replace('_', '-')} measures the benchmarks; --clusters records cluster capacity only")
    if getattr(args, "gpus", None):
        raise UsageError("--gpus is for the collectives; --clusters records one GPU")
    backend = _cluster_backend()
    name = backend.describe()["name"]
    catalog = load_catalog(default_catalog_paths(getattr(args, "content", None), getattr(args, "data_dir", None)))
    vendor = match_device(name, catalog)
    accelerator = vendor.id if vendor else slug(name)
    if args.out:
        out = Path(args.out).expanduser()
        if out.is_dir():
            raise UsageError(f"--out must be a file, not a directory: {out}")
    else:
        out = data_dir(getattr(args, "data_dir", None)) / "hardware" / "measured" / "device" / f"{accelerator}-clusters.yaml"
    def say(line: str) -> None:
        if not args.json:
            sys.stderr.write(line + "\n")

    say(f"recording cluster capacity on {name}" + (f" (catalog entry {vendor.id})" if vendor else ", no catalog entry matched"))
    record = record_clusters(backend, accelerator, software={"python": platform.python_version()}, progress=say)
    import yaml

    out.parent.mkdir(parents=True, exist_ok=True)
    text = "# Thread-block cluster capacity recorded by studytui measure --clusters (cudaOccupancyMaxActiveClusters).\n"
    text += yaml.safe_dump(record, sort_keys=False, default_flow_style=None, width=160)
    fileio.write_atomically(out, text.encode("utf-8"))
    if args.json:
        from studytui.cli.output import print_json

        print_json({"record": str(out), "correctness": record["correctness"], "rows": len(record["rows"]),
                    "device_attributes": record["device_attributes"]})
        return 0
    from studytui.cli.output import console

    c = console()
    c.print(f"{name}: {len(record['rows'])} cluster queries, correctness {'passed' if record['correctness']['passed'] else 'FAILED'}",
            markup=False)
    c.print("at 1 block per SM: " + ", ".join(f"{n} clusters of {size} (bound {bound})" for size, n, bound in summary(record)),
            markup=False, soft_wrap=True)
    l2 = record["device_attributes"]
    if "persistingL2CacheMaxSize" in l2:
        c.print(f"L2 {l2['l2CacheSize']['value']:,} B, persisting max {l2['persistingL2CacheMaxSize']['value']:,} B, "
                f"access-policy window max {l2['accessPolicyMaxWindowSize']['value']:,} B", markup=False)
    c.print(f"record written: {out} (calc occupancy --cluster and calc l2 read it for --gpu {accelerator})", soft_wrap=True, markup=False)
    return 0 if record["correctness"]["passed"] else 1


def handle(args: argparse.Namespace) -> int:
    from studytui.core.errors import UsageError
    from studytui.core.paths import data_dir

    if getattr(args, "clusters", False):
        return handle_clusters(args)
    from studytui.measure.catalog import default_catalog_paths, load_catalog, match_device
    from studytui.measure.plan import make_plan
    from studytui.measure.profile_file import slug, write_run
    from studytui.measure.runner import run_plan

    backend = _backend()
    hardware_name = backend.describe_hardware()["name"]
    catalog = load_catalog(default_catalog_paths(getattr(args, "content", None), getattr(args, "data_dir", None)))
    vendor = match_device(hardware_name, catalog)
    accelerator_id = vendor.id if vendor else None
    if args.out:
        out = Path(args.out).expanduser()
        if out.is_dir():
            raise UsageError(f"--out must be a file, not a directory: {out}")
    else:
        out = data_dir(getattr(args, "data_dir", None)) / "hardware" / "measured" / f"{accelerator_id or slug(hardware_name)}.yaml"

    if (args.collectives_only or args.gpus) and backend.gpu_count() < 2:
        raise UsageError("collectives need at least two GPUs; this machine has one")
    plan = make_plan(
        quick=args.quick,
        device_memory_bytes=backend.device_memory_bytes(),
        collectives_sweep=args.collectives,
        collective_gpus=args.gpus or (),
        collectives_only=args.collectives_only,
    )
    def say(line: str) -> None:
        if not args.json:
            sys.stderr.write(line + "\n")

    what = (
        ("collectives only, " if args.collectives_only else "")
        + ("quick" if args.quick else "full")
        + (" with the collective sweep" if args.collectives else "")
    )
    say(f"measuring {hardware_name} ({what} plan)"
        + (f", compared with catalog entry {accelerator_id}" if accelerator_id else ", no catalog entry matched"))
    run = run_plan(backend, plan, vendor, progress=say)
    profile = write_run(out, run, accelerator_id)
    if args.json:
        from studytui.cli.output import print_json

        print_json({"profile": str(out), "run": profile["runs"][-1], "summary": profile["summary"]})
    else:
        _print_table(profile["runs"][-1], out)
    return 0


def _print_table(run: dict, out: Path) -> None:
    from rich import box
    from rich.table import Table

    from studytui.cli.output import console

    table = Table(title=f"{run['hardware']['name']}: run {run['run']} ({run['date']})", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("result", no_wrap=True)
    table.add_column("median", justify="right", no_wrap=True)
    table.add_column("spread", justify="right", no_wrap=True)
    table.add_column("vendor", justify="right", min_width=6)
    table.add_column("ratio", justify="right", min_width=5)
    table.add_column("check", no_wrap=True)
    for r in run["results"]:
        scale, label = (1e12, "TFLOP/s") if r["achieved"]["unit"] == "FLOP/s" else (1e9, "GB/s")

        def fmt(value: float | None, digits: int = 0, scale: float = scale) -> str:
            return "-" if value is None else f"{value / scale:,.{digits}f}"

        ratio = r["baseline"].get("ratio")
        table.add_row(
            r["id"], f"{fmt(r['achieved']['median'], 1)} {label}", _spread(r["achieved"]),
            fmt(r["baseline"].get("vendor_peak")), "-" if ratio is None else f"{ratio:.2f}",
            "ok" if r["status"] == "accepted" else "REJECTED",
        )
    c = console()
    c.print(table)
    for s in run.get("skipped", []):
        c.print(f"skipped {s['id']}: {s['reason']}", markup=False)
    if run.get("collectives"):
        c.print(run["collectives"])
    c.print(
        "spread: slowest and fastest repetition against the median; ratio: median over the vendor peak; check: output compared with a "
        "reference (error in the file)"
    )
    c.print(f"profile written: {out}", soft_wrap=True, markup=False)


def _spread(achieved: dict) -> str:
    med, low, high = achieved.get("median"), achieved.get("min"), achieved.get("max")
    if not med or low is None or high is None:
        return "-"
    return f"{low / med - 1:+.0%}/{high / med - 1:+.0%}"
