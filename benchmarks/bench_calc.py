"""Speed of the calculator paths: the whole commands as ratios to `python -c "import rich.console"`
(issue 27: within 1.5x by CPU; interleaved with that yardstick in the same run, median and minimum
of the rounds, see benchmarks/_timing.py), and in-process CalcSpec.run() (CPU < 5 ms: the TUI
calls it on every keystroke). Also checks that these paths never import Textual. Runs in
temporary data, cache and XDG directories.

Run: .venv/bin/python benchmarks/bench_calc.py [--rounds N] [--warmup N] [--runs N] [--limit 1.5]
Exits 1 if a target is missed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import (  # noqa: E402
    Sample,
    clock,
    command_arguments,
    compare_commands,
    isolate,
    machine_line,
    report,
    since,
    studytui_command,
)

COMMANDS: list[tuple[str, list[str]]] = [
    ("calc roofline", ["calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9"]),
    ("calc roofline --json", ["calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9", "--json"]),
    ("calc gemm", ["calc", "gemm", "--gpu", "h100", "--m", "8192", "--n", "8192", "--k", "8192"]),
    ("calc transformer", ["calc", "transformer", "--model", "llama-3.1-70b", "--batch", "8", "--context", "8192"]),
    ("calc transformer --json", ["calc", "transformer", "--model", "deepseek-v3", "--tp", "8", "--batch", "64", "--context", "32k",
                                 "--json"]),
    ("calc collective", ["calc", "collective", "--op", "all_reduce", "--gpus", "8", "--bytes", "1GiB", "--gpu", "h200"]),
    ("calc specdec", ["calc", "specdec", "--alpha", "0.8", "--gamma", "4"]),
    ("gpus --json", ["gpus", "--json"]),
    ("gpus h200", ["gpus", "h200"]),
]
FORM_INPUTS = {
    "roofline": {"gpu": "h200", "flops": "1e12", "bytes": "1GB"},
    "gemm": {"gpu": "h100", "m": "8192", "n": "8192", "k": "8192"},
    "transformer": {"model": "llama-3.1-70b", "batch": "8", "context": "8192", "tp": "4"},
    "collective": {"op": "all_reduce", "gpus": "8", "bytes": "1GiB"},
    "specdec": {"alpha": "0.8", "gamma": "4", "cost_ratio": "0.05"},
    "kv": {"model": "deepseek-v3", "context": "128k"},
    "memory": {"model": "qwen3-235b-a22b", "gpu": "h200", "tp": "8"},
}
RUN_TARGET_S = 0.005


def textual_loaded(argv: list[str]) -> bool:
    code = (
        "import contextlib, io, sys, json\n"
        "from studytui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main({argv!r})\n"
        "print(json.dumps([rc, any(m == 'textual' or m.startswith('textual.') for m in sys.modules)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    rc, loaded = json.loads(out.strip().splitlines()[-1])
    assert rc == 0, (argv, rc)
    return loaded


def time_forms(runs: int) -> dict[str, list[Sample]]:
    from studytui.calc.forms import CALCULATORS

    out = {}
    for name, values in FORM_INPUTS.items():
        spec = CALCULATORS[name]
        spec.run(values)  # first call loads the catalog / presets once per process
        samples = []
        for _ in range(runs):
            start = clock()
            spec.run(values)
            samples.append(since(start))
        out[name] = samples
    return out


def main(argv: list[str] | None = None) -> int:
    args = command_arguments(__doc__, argv, runs=(50, 'each CalcSpec.run'))
    isolate("studytui-bench-calc-")
    print(machine_line(), flush=True)
    base = studytui_command()
    ok = True
    over = compare_commands([(label, base + argv) for label, argv in COMMANDS], rounds=args.rounds, warmup=args.warmup,
                            limit=args.limit)
    ok &= not over
    loaded = [label for label, argv in COMMANDS if textual_loaded(argv)]
    ok &= not loaded
    print(f"import Textual (they must not): {', '.join(loaded)}" if loaded else "no calculator command imports Textual")
    for name, samples in time_forms(args.runs).items():
        ok &= report(f"CalcSpec.run() in process: {name}", samples, RUN_TARGET_S)
    print("\nall targets met" if ok else "\nTARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
