"""Summarise the truth-check records against the calculators (runs here, no GPU needed).

For every shape in records/*truth*.json: the calculator's lower bound with vendor peaks and with
the shipped measured profile (`studytui calc gemm|roofline ... --json`, whole process), the
measured times over all records (median of the per-record medians, the spread of those medians,
and the fastest single repetition), and bound / measured. Prints a Markdown table.

    .venv/bin/python benchmarks/gpu/summarize_truth.py > /tmp/table.md
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _timing import argument_parser, isolate  # noqa: E402

STUDYTUI = [sys.executable, "-m", "studytui.cli"]


def calc(args: list[str]) -> dict:
    out = subprocess.run(STUDYTUI + ["calc", *args, "--json"], capture_output=True, text=True, check=True, cwd=HERE.parents[1])
    return json.loads(out.stdout)


def bound_args(rec: dict) -> list[str]:
    if rec["kind"] == "gemm":
        s = rec["shape"]
        args = ["gemm", "--gpu", "h200", "--m", str(s["m"]), "--n", str(s["n"]), "--k", str(s["k"]), "--dtype", rec["precision"]]
        if rec["precision"] == "fp8":
            args += ["--c-dtype", "bf16"]
        return args
    return [
        "roofline",
        "--gpu",
        "h200",
        "--dtype",
        rec["precision"],
        "--flops",
        repr(float(rec["flops"])),
        "--bytes",
        repr(float(rec["bytes"])),
    ]


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4f}"


def main(argv: list[str] | None = None) -> None:
    argument_parser(__doc__).parse_args(argv)
    isolate("studytui-summarize-truth-")  # the calculator commands run in temporary data and cache directories
    files = sorted(HERE.glob("records/*truth*.json"))
    by_id: dict[str, list[dict]] = {}
    order: list[str] = []
    for f in files:
        doc = json.loads(f.read_text())
        for rec in doc["records"]:
            if "time_s" not in rec:
                continue
            if rec["id"] not in by_id:
                order.append(rec["id"])
            by_id.setdefault(rec["id"], []).append(rec)
    print(
        "| shape | precision | FLOPs | bytes | bound, vendor (ms) | bound, measured profile (ms) | measured median (ms) | spread of run "
        "medians (ms) | fastest rep (ms) | vendor bound / median | vendor bound / fastest | measured-profile bound / fastest | max error "
        "(tol) | runs |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    flagged = []
    for rid in order:
        recs = by_id[rid]
        first = recs[0]
        vendor = calc(bound_args(first))
        measured = calc(bound_args(first) + ["--profile", "measured"])
        medians = [r["time_s"]["median"] for r in recs]
        fastest = min(r["time_s"]["min"] for r in recs)
        med = statistics.median(medians)
        worst_err = max(r["correctness"]["error"] for r in recs)
        tol = first["correctness"]["tolerance"]
        passed = all(r["correctness"]["passed"] for r in recs)
        vb, mb = vendor["time_s"], measured["time_s"]
        if vb / fastest > 1:
            flagged.append(f"VENDOR bound beaten: {rid}")
        if mb / fastest > 1:
            flagged.append(f"measured-profile bound beaten: {rid} ({mb / fastest:.3f})")
        print(
            f"| {rid} | {first['precision']} | {first['flops']:.3g} | {first['bytes']:.3g} | {fmt_ms(vb)} | {fmt_ms(mb)} | {fmt_ms(med)} | "
            f"{fmt_ms(min(medians))}-{fmt_ms(max(medians))} | {fmt_ms(fastest)} | {vb / med:.3f} | {vb / fastest:.3f} | "
            f"{mb / fastest:.3f} | "
            f"{worst_err:.1e} ({tol:g}){'' if passed else ' FAIL'} | {len(recs)} |"
        )
    print()
    for line in flagged or ["no bound beaten"]:
        print(f"- {line}")


if __name__ == "__main__":
    main()
