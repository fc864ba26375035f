"""Write measured profiles: one file per GPU, one entry in `runs:` per measurement.

Measuring again into an existing profile of the same GPU appends a run, so the spread between
machines and days stays visible. The `summary:` block is derived from the runs (median over runs
of each run's best accepted figures) and rewritten on every write; readers recompute it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from studytui.calc.profiles import SCHEMA, load_profile, summarize, validate_profile
from studytui.core.errors import UsageError
from studytui.core.fileio import write_atomically

LABEL = (
    "measured by studytui measure: what these benchmarks sustained, not vendor peaks. Measured ceilings "
    "are realistic estimates, not physical limits: short bursts before the clocks settle, or a better "
    "kernel, can beat them. The vendor peak is the floor no correct kernel beats."
)


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


def new_profile(accelerator_id: str | None, gpu_name: str) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "accelerator": accelerator_id or slug(gpu_name),
        "gpu_name": gpu_name,
        "label": LABEL,
        "summary": {},
        "runs": [],
    }


def add_run(profile: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """The profile with `run` appended (numbered) and the summary recomputed."""
    runs = list(profile.get("runs") or [])
    numbered = {"run": len(runs) + 1, **{k: v for k, v in run.items() if k != "run"}}
    runs.append(numbered)
    out = dict(profile, runs=runs)
    out["summary"] = summarize(out)
    return out


def dump(profile: dict[str, Any]) -> str:
    import yaml

    header = (
        "# Measured by `studytui measure`: what this GPU achieved, under the guide's rule (hardware,\n"
        "# workload, precision, baseline, correctness). Each run is one machine on one day.\n"
    )
    body: str = yaml.safe_dump(profile, sort_keys=False, allow_unicode=True, width=100)
    return header + body


def write_run(path: Path, run: dict[str, Any], accelerator_id: str | None) -> dict[str, Any]:
    """Append `run` to the profile at `path` (created if missing); returns the profile written."""
    # Plain data only (library version objects and the like become strings), so the dump cannot fail.
    run = json.loads(json.dumps(run, default=str))
    gpu_name = str(run["hardware"]["name"])
    if path.exists():
        existing = load_profile(path)
        if validate_profile(existing):
            raise UsageError(f"{path} exists and is not a valid measured profile; choose another --out")
        if existing.get("gpu_name") != gpu_name:
            raise UsageError(
                f"{path} holds a profile of {existing.get('gpu_name')!r}, not {gpu_name!r}; choose another --out"
            )
        profile = existing
    else:
        profile = new_profile(accelerator_id, gpu_name)
    profile = add_run(profile, run)
    problems = validate_profile(profile)
    if problems:  # a bug here, not the user's fault: say so rather than write a bad file
        raise UsageError(f"refusing to write an invalid profile: {problems[0]}")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, dump(profile).encode("utf-8"))  # the one fsync policy (studytui.core.fileio)
    return profile
