"""Measured profiles: what a real GPU achieved, read as ceilings the calculators can use.

A profile file (`content/hardware/measured/<accelerator id>.yaml`, or the data directory's
`hardware/measured/`) is written by `studytui measure`. Each run in it carries the guide's five
fields (hardware, workload, precision, baseline, correctness) plus software and date; each result
carries its own precision, workload, baseline and correctness. Only accepted results (those that
passed their correctness check) are used. A run's ceilings are its best accepted medians; the
profile's ceilings are the median of those over runs.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, TypeGuard

from studytui.core.errors import UsageError
from studytui.core.filestate import PerFileState

SCHEMA = "studytui-measured-profile/1"
RUN_FIELDS = ("date", "hardware", "workload", "precision", "baseline", "correctness", "software", "results")
FIVE_FIELDS = ("hardware", "workload", "precision", "baseline", "correctness")
RESULT_FIELDS = ("id", "kind", "precision", "workload", "time_s", "achieved", "baseline", "correctness", "status")
RESULT_KINDS = ("copy", "reduce", "gemm", "all_reduce", "all_gather", "reduce_scatter", "all_to_all")
BANDWIDTH_KINDS = ("copy", "reduce")
LINK_KIND = "all_reduce"
COLLECTIVE_KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")


# -- reading -----------------------------------------------------------------------------------
def load_profile(path: str | Path) -> dict[str, Any]:
    """Parse a profile file; UsageError (one line) if it cannot be read or is not a mapping."""
    import yaml

    from studytui.core import fileio
    from studytui.core.yamlio import AliasError, error_line, safe_load

    path = Path(path)
    try:
        text = fileio.read_text_bounded(path, fileio.YAML_LIMIT, "a measured profile")
    except FileNotFoundError:
        raise UsageError(f"measured profile not found: {path}") from None
    except OSError as exc:
        raise UsageError(f"cannot read measured profile {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"measured profile {path} is not UTF-8 text") from None
    try:
        # libyaml's loader where present: profiles are long, and calculators must answer fast.
        data = safe_load(text)
    except AliasError as exc:
        raise UsageError(error_line(exc, str(path)) + "; not read") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{path}{where}: not valid YAML") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a measured profile must be a mapping with 'runs'")
    return data


# -- validation --------------------------------------------------------------------------------
def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _problems(data: Any) -> list[tuple[tuple[Any, ...], str]]:
    """(path inside the document, message) for every problem; the path locates the line."""
    out: list[tuple[tuple[Any, ...], str]] = []
    if not isinstance(data, dict):
        return [((), "a measured profile must be a mapping with 'runs'")]
    if data.get("schema") != SCHEMA:
        out.append((("schema",), f"field 'schema' must be '{SCHEMA}'"))
    for key in ("accelerator", "gpu_name"):
        if not isinstance(data.get(key), str) or not data.get(key):
            out.append(((key,), f"missing field '{key}'"))
    runs = data.get("runs")
    if not isinstance(runs, list) or not runs:
        out.append((("runs",), "missing field 'runs' (a non-empty list)"))
        return out
    for i, run in enumerate(runs):
        where = f"run {i + 1}"
        rpath: tuple[Any, ...] = ("runs", i)
        if not isinstance(run, dict):
            out.append((rpath, f"{where} is not a mapping"))
            continue
        for key in RUN_FIELDS:
            if run.get(key) in (None, "", [], {}):
                out.append((rpath, f"missing field '{key}' in {where}"))
        hardware = run.get("hardware")
        if isinstance(hardware, dict):
            for key in ("name", "sm_count", "memory_bytes"):
                if hardware.get(key) in (None, ""):
                    out.append((rpath + ("hardware",), f"missing field 'hardware.{key}' in {where}"))
        correctness = run.get("correctness")
        if isinstance(correctness, dict) and not correctness.get("method"):
            out.append((rpath + ("correctness",), f"missing field 'correctness.method' in {where}"))
        results = run.get("results")
        if not isinstance(results, list):
            continue
        for j, result in enumerate(results):
            xpath = rpath + ("results", j)
            if not isinstance(result, dict):
                out.append((xpath, f"{where} / result {j + 1} is not a mapping"))
                continue
            rwhere = f"{where} / result {result.get('id') or j + 1}"
            out.extend(_result_problems(result, rwhere, xpath))
    return out


def _result_problems(result: dict[str, Any], where: str, path: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], str]]:
    out: list[tuple[tuple[Any, ...], str]] = []
    for key in RESULT_FIELDS:
        if result.get(key) in (None, "", {}):
            out.append((path, f"missing field '{key}' in {where}"))
    if result.get("kind") not in (None, *RESULT_KINDS):
        out.append((path + ("kind",), f"unknown kind {result.get('kind')!r} in {where} (expected one of {', '.join(RESULT_KINDS)})"))
    status = result.get("status")
    if status not in (None, "accepted", "rejected"):
        out.append((path + ("status",), f"status must be 'accepted' or 'rejected' in {where}"))
    correctness = result.get("correctness")
    if isinstance(correctness, dict):
        for key in ("method", "tolerance", "passed"):
            if correctness.get(key) is None or correctness.get(key) == "":
                out.append((path + ("correctness",), f"missing field 'correctness.{key}' in {where}"))
        if status == "accepted" and correctness.get("passed") is not True:
            out.append((path + ("status",), f"{where} is accepted but its correctness check did not pass"))
    baseline = result.get("baseline")
    if isinstance(baseline, dict) and "vendor_peak" not in baseline:
        out.append((path + ("baseline",), f"missing field 'baseline.vendor_peak' in {where} (null if the catalog has none)"))
    if status == "accepted":
        times = result.get("time_s")
        if isinstance(times, dict):
            values = [float(v) for v in (times.get(k) for k in ("min", "median", "max")) if _is_number(v) and v > 0]
            if len(values) < 3:
                out.append((path + ("time_s",), f"time_s needs positive min, median and max in {where}"))
            elif not values[0] <= values[1] <= values[2]:
                out.append((path + ("time_s",), f"time_s must satisfy min <= median <= max in {where}"))
        achieved = result.get("achieved")
        if not (isinstance(achieved, dict) and _is_number(achieved.get("median")) and achieved["median"] > 0):
            out.append((path + ("achieved",), f"achieved.median must be a positive number in {where}"))
    return out


def validate_profile(data: Any) -> list[str]:
    """Problems with a parsed profile, one line each; [] when it is valid."""
    return [message for _path, message in _problems(data)]


def _line_of(node: Any, path: tuple[Any, ...]) -> int:
    """1-based line of the deepest node along `path` in a composed YAML tree."""
    import yaml

    line = node.start_mark.line + 1 if node is not None else 1
    for step in path:
        if isinstance(node, yaml.MappingNode):
            found = next((v for k, v in node.value if getattr(k, "value", None) == step), None)
            if found is None:
                break
            node = found
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            break
        line = node.start_mark.line + 1
    return line


def check_profiles(content_dir: str | Path) -> list[str]:
    """'FILE:LINE: message' for every problem in the measured profiles under content_dir."""
    folder = Path(content_dir) / "hardware" / "measured"
    problems: list[str] = []
    if not folder.is_dir():
        return problems
    for path in sorted(folder.glob("*.y*ml")):
        problems.extend(_CHECKED.get(path, _check_profile))
    return problems


# Problems found per profile file state: `check` and the tests check the same 90 KB files often.
_CHECKED: PerFileState[tuple[str, ...]] = PerFileState()


def _check_profile(path: Path) -> tuple[str, ...]:
    import yaml

    from studytui.core import fileio
    from studytui.core.yamlio import AliasError, error_line, safe_load

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # composing only, for line numbers
    try:
        text = fileio.read_text_bounded(path, fileio.YAML_LIMIT, "a measured profile")
        data = safe_load(text)
    except fileio.RefusedFileError as exc:  # too large, or not a regular file (a FIFO)
        return (f"{path}:1: {str(exc).split(': ', 1)[-1]}",)
    except AliasError as exc:
        return (error_line(exc, str(path)) + "; not read",)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return (f"{path}:{mark.line + 1 if mark else 1}: not valid YAML",)
    except OSError as exc:
        return (f"{path}:1: cannot read ({exc.strerror})",)
    except UnicodeDecodeError:
        return (f"{path}:1: cannot read (not UTF-8 text)",)
    found = list(_problems(data))
    if isinstance(data, dict) and isinstance(data.get("accelerator"), str) and data["accelerator"] != path.stem:
        found.append((("accelerator",), f"accelerator '{data['accelerator']}' does not match the file name"))
    if not found:
        return ()
    node = yaml.compose(text, Loader=loader)  # positions, only to point at a problem
    return tuple(f"{path}:{_line_of(node, where)}: {message}" for where, message in found)


# -- ceilings ----------------------------------------------------------------------------------
def run_ceilings(run: dict[str, Any]) -> dict[str, Any]:
    """One run's ceilings: best accepted median per precision, for memory and for the link."""
    peak: dict[str, float] = {}
    mem_bw: float | None = None
    mem_from = None
    link_by_gpus: dict[int, float] = {}
    for result in run.get("results") or []:
        if not isinstance(result, dict) or result.get("status") != "accepted":
            continue
        achieved = result.get("achieved")
        value = achieved.get("median") if isinstance(achieved, dict) else None
        if not _is_number(value):
            continue
        kind = result.get("kind")
        if kind == "gemm":
            dtype = str(result.get("precision"))
            peak[dtype] = max(peak.get(dtype, 0.0), float(value))
        elif kind in BANDWIDTH_KINDS:
            if mem_bw is None or value > mem_bw:
                mem_bw, mem_from = float(value), result.get("id")
        elif kind == LINK_KIND:
            gpus = _gpu_count_of(result, run)
            link_by_gpus[gpus] = max(link_by_gpus.get(gpus, 0.0), float(value))
    # The plain link figure is the smallest group measured (two GPUs: one link's worth); the
    # calculators pick the figure for their own GPU count from link_bw_by_gpus.
    link = link_by_gpus[min(link_by_gpus)] if link_by_gpus else None
    link_gpus = min(link_by_gpus) if link_by_gpus else None
    return {"peak_flops": peak, "mem_bw": mem_bw, "mem_bw_from": mem_from, "link_bw_per_direction": link,
            "link_gpus": link_gpus, "link_bw_by_gpus": link_by_gpus}


def _gpu_count_of(result: dict[str, Any], run: dict[str, Any]) -> int:
    gpus = (result.get("workload") or {}).get("gpus")
    if not isinstance(gpus, int) or isinstance(gpus, bool):
        gpus = (run.get("hardware") or {}).get("gpu_count")
    return gpus if isinstance(gpus, int) and not isinstance(gpus, bool) and gpus > 1 else 2


def collective_table(profile: dict[str, Any]) -> dict[int, dict[str, dict[int, float]]]:
    """Accepted bus bandwidth by GPU count, collective and message size (median over runs)."""
    seen: dict[int, dict[str, dict[int, list[float]]]] = {}
    for run in profile.get("runs") or []:
        if not isinstance(run, dict):
            continue
        for result in run.get("results") or []:
            if not isinstance(result, dict) or result.get("status") != "accepted":
                continue
            achieved, workload = result.get("achieved"), result.get("workload")
            op = result.get("kind")
            value = achieved.get("median") if isinstance(achieved, dict) else None
            size = workload.get("bytes") if isinstance(workload, dict) else None
            if op not in COLLECTIVE_KINDS or not _is_number(value) or not _is_number(size):
                continue
            by_op = seen.setdefault(_gpu_count_of(result, run), {}).setdefault(str(op), {})
            by_op.setdefault(int(size), []).append(float(value))
    return {
        n: {op: {size: _median(vals) for size, vals in sorted(sizes.items())} for op, sizes in ops.items()}
        for n, ops in sorted(seen.items())
    }


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def summarize(profile: dict[str, Any]) -> dict[str, Any]:
    """Ceilings over all runs: the median of each run's figure, with min and max for the spread."""
    per_run = [run_ceilings(r) for r in profile.get("runs") or [] if isinstance(r, dict)]

    def over_runs(values: list[float]) -> dict[str, float] | None:
        if not values:
            return None
        return {"median": _median(values), "min": min(values), "max": max(values), "runs": len(values)}

    dtypes = sorted({d for c in per_run for d in c["peak_flops"]})
    return {
        "runs": len(per_run),
        "peak_flops": {d: over_runs([c["peak_flops"][d] for c in per_run if d in c["peak_flops"]]) for d in dtypes},
        "mem_bw": over_runs([c["mem_bw"] for c in per_run if c["mem_bw"] is not None]),
        "link_bw_per_direction": over_runs([c["link_bw_per_direction"] for c in per_run if c["link_bw_per_direction"] is not None]),
        "link_bw_by_gpus": {
            n: over_runs([c["link_bw_by_gpus"][n] for c in per_run if n in c["link_bw_by_gpus"]])
            for n in sorted({n for c in per_run for n in c["link_bw_by_gpus"]})
        },
    }


# -- lookup for the calculators ----------------------------------------------------------------
def _accelerator_id(accelerator: Any) -> str:
    if isinstance(accelerator, str):
        return accelerator
    ident = getattr(accelerator, "id", None)
    if ident is None and isinstance(accelerator, dict):
        ident = accelerator.get("id")
    if not ident:
        raise UsageError("measured profiles need an accelerator with an id")
    return str(ident)


def find_profile(accelerator: Any, data_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The measured profile for an accelerator: the shipped one first, then the user's own."""
    from studytui.core.paths import content_dir
    from studytui.core.paths import data_dir as default_data_dir

    ident = _accelerator_id(accelerator)
    candidates = [content_dir() / "hardware" / "measured" / f"{ident}.yaml"]
    try:
        base = Path(data_dir) if data_dir is not None else default_data_dir()
        candidates.append(base / "hardware" / "measured" / f"{ident}.yaml")
    except UsageError:  # an unusable data directory only means no user profiles
        pass
    return next((p for p in candidates if p.is_file()), None)


def _load_valid(path: Path) -> dict[str, Any]:
    data = load_profile(path)
    problems = validate_profile(data)
    if problems:
        extra = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UsageError(f"invalid measured profile {path}: {problems[0]}{extra}")
    return data


# Parsed profiles by file state: calculators recompute on every keystroke and a profile is
# ~100 KB of YAML, so each file is parsed once per change.
_SUMMARIES: PerFileState[dict[str, Any]] = PerFileState()


def _summarize_file(path: Path) -> dict[str, Any]:
    """What `_summary_of` gives, kept between runs while the file is unchanged (a profile is
    ~100 KB of YAML, with dates PyYAML turns into datetimes, so the summary is kept, not the
    document): read back, every value is checked (`_decoded`); a wrong shape is built again."""
    from studytui.calc import parsed
    from studytui.core import jsoncache

    where = os.path.abspath(path)
    name = f"measured-summary:{where}"
    found = parsed.kept(name, [where], _SUMMARY_CODE)
    if found is not None:
        try:
            return _decoded(found, path)
        except _Malformed:
            pass
    taken_at = jsoncache.now()
    stamps = jsoncache.stamps_of([where])
    data = _load_valid(path)
    summary = {
        "summary": summarize(data), "vendor": _vendor_baselines(data), "source": _source(path, data),
        "evidence": [_five_fields(r) for r in data.get("runs") or [] if isinstance(r, dict)],
        "collectives": collective_table(data),
    }
    parsed.keep(name, _encoded(summary), stamps, _SUMMARY_CODE, taken_at)
    return summary


# The code that decides what a kept summary holds (the reader, the checks, the summary itself).
_SUMMARY_CODE = ("calc/profiles.py",)


_EVIDENCE_KEYS = ("date", "hardware", "workload", "precision", "baseline", "correctness", "software")  # `_five_fields`


class _Malformed(Exception):
    """A kept summary that is not one `_encoded` wrote: build it from the file again."""


def _encoded(summary: dict[str, Any]) -> dict[str, Any]:
    """`_summarize_file`'s value as plain JSON: maps keyed by GPU count or message size (integers)
    become lists of [key, value] pairs."""
    inner = summary["summary"]
    return {
        "summary": {**inner, "link_bw_by_gpus": [[n, v] for n, v in inner["link_bw_by_gpus"].items()]},
        "vendor": summary["vendor"],
        "source": summary["source"],
        "evidence": summary["evidence"],
        "collectives": [[n, {op: [[size, bw] for size, bw in sizes.items()] for op, sizes in ops.items()}]
                        for n, ops in summary["collectives"].items()],
    }


def _check(ok: bool) -> None:
    if not ok:
        raise _Malformed


def _mapping(value: Any, keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    _check(type(value) is dict and (keys is None or list(value) == list(keys)))
    return value  # type: ignore[no-any-return]


def _float(value: Any) -> float:
    _check(type(value) is float and math.isfinite(value))
    return value  # type: ignore[no-any-return]


def _count(value: Any) -> int:
    _check(type(value) is int)
    return value  # type: ignore[no-any-return]


def _text(value: Any) -> str:
    _check(type(value) is str)
    return value  # type: ignore[no-any-return]


def _spread(value: Any) -> dict[str, Any] | None:
    """An `over_runs` value: None, or median, min, max (floats) and runs (a count)."""
    if value is None:
        return None
    spread = _mapping(value, ("median", "min", "max", "runs"))
    for key in ("median", "min", "max"):
        _float(spread[key])
    _count(spread["runs"])
    return spread


def _pairs(value: Any) -> list[tuple[int, Any]]:
    _check(type(value) is list and all(type(p) is list and len(p) == 2 and type(p[0]) is int for p in value))
    return [(p[0], p[1]) for p in value]


def _decoded(value: Any, path: Path) -> dict[str, Any]:
    """A kept summary rebuilt, every value checked for the type `_summarize_file` gives it."""
    top = _mapping(value, ("summary", "vendor", "source", "evidence", "collectives"))
    inner = _mapping(top["summary"], ("runs", "peak_flops", "mem_bw", "link_bw_per_direction", "link_bw_by_gpus"))
    peaks = {_text(d): _spread(v) for d, v in _mapping(inner["peak_flops"]).items()}
    summary = {
        "runs": _count(inner["runs"]),
        "peak_flops": peaks,
        "mem_bw": _spread(inner["mem_bw"]),
        "link_bw_per_direction": _spread(inner["link_bw_per_direction"]),
        "link_bw_by_gpus": {n: _spread(v) for n, v in _pairs(inner["link_bw_by_gpus"])},
    }
    vendor = {_text(k): _float(v) for k, v in _mapping(top["vendor"]).items()}
    evidence = top["evidence"]
    _check(type(evidence) is list)
    for run in evidence:
        _check(all(type(v) is str for v in _mapping(run, _EVIDENCE_KEYS).values()))
    collectives = {
        n: {_text(op): {size: _float(bw) for size, bw in _pairs(sizes)} for op, sizes in _mapping(ops).items()}
        for n, ops in _pairs(top["collectives"])
    }
    _check(_text(top["source"]).startswith(f"{path.name} ("))
    return {"summary": summary, "vendor": vendor, "source": top["source"], "evidence": evidence, "collectives": collectives}


def _summary_of(path: Path) -> dict[str, Any]:
    """What the calculators read from a valid profile file ("summary", "vendor" baselines,
    "source" line, "evidence", "collectives"), as a copy the caller may keep."""
    import copy

    return copy.deepcopy(_SUMMARIES.get(path, _summarize_file))


def _source(path: Path, profile: dict[str, Any]) -> str:
    runs = [r for r in profile.get("runs") or [] if isinstance(r, dict)]
    dates = sorted(str(r.get("date", ""))[:10] for r in runs if r.get("date"))
    span = dates[0] if dates and dates[0] == dates[-1] else (f"{dates[0]} to {dates[-1]}" if dates else "undated")
    # Not every run measures every figure (a collectives-only run has no GEMM), so each figure is
    # the median over the runs that measured it.
    return f"{path.name} ({span}, {len(runs)} run{'s' if len(runs) != 1 else ''}, medians)"


def measured_ceilings(accelerator: Any, profile: str, data_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Ceilings from a measured profile: "measured" (looked up by accelerator id) or a file path.

    Returns {"peak_flops": {dtype: FLOP/s}, "mem_bw": B/s, "link_bw_per_direction": B/s or None,
    "source": "<file> (<date>, median of N runs)"}.
    """
    if profile == "measured":
        path = find_profile(accelerator, data_dir)
        if path is None:
            ident = _accelerator_id(accelerator)
            raise UsageError(
                f"no measured profile for '{ident}' (run 'studytui measure' on that GPU, or pass --profile FILE)"
            )
    else:
        path = _profile_path(profile)
    parsed = _summary_of(path)
    summary, source = parsed["summary"], parsed["source"]
    if summary["mem_bw"] is None and not summary["peak_flops"]:
        raise UsageError(f"measured profile {path} has no accepted results")
    return {
        "peak_flops": {d: v["median"] for d, v in summary["peak_flops"].items() if v},
        "mem_bw": summary["mem_bw"]["median"] if summary["mem_bw"] else None,
        "link_bw_per_direction": summary["link_bw_per_direction"]["median"] if summary["link_bw_per_direction"] else None,
        "link_bw_by_gpus": {n: v["median"] for n, v in summary["link_bw_by_gpus"].items() if v},
        "link_gpus": min(summary["link_bw_by_gpus"]) if summary["link_bw_by_gpus"] else None,
        "source": source,
    }


def nearest_gpu_count(by_gpus: dict[int, float], gpus: int) -> int:
    """The measured GPU count that stands for `gpus`: itself, else the nearest (the larger on a tie)."""
    return min(by_gpus, key=lambda n: (abs(n - gpus), -n))


def link_for_gpus(by_gpus: dict[int, float], gpus: int) -> tuple[float | None, str]:
    """The measured all-reduce bus bandwidth for a group of `gpus`, and a note saying which was used.

    An exact match is used as it is. Otherwise the measurement from the nearest GPU count stands
    in, and the note says so: NVSwitch, NCCL's algorithm choice and message size change the
    figure with the group size, so a stand-in is an estimate, not a measurement.
    """
    if not by_gpus:
        return None, "no collective measured in this profile"
    nearest = nearest_gpu_count(by_gpus, gpus)
    if nearest == gpus:
        return by_gpus[gpus], f"measured all-reduce bus bandwidth over {gpus} GPUs"
    return by_gpus[nearest], (
        f"no measurement over {gpus} GPUs in this profile; using the {nearest}-GPU all-reduce figure "
        f"(measured: {', '.join(str(n) for n in sorted(by_gpus))} GPUs), which may not hold at {gpus}"
    )


def _profile_path(profile: str) -> Path:
    """A --profile FILE as a Path; any oddity (unknown ~user, NUL byte, too long, not a file) is one UsageError."""
    shown = repr(profile) if any(ord(c) < 32 or c == "\x7f" for c in profile) else profile
    try:
        path = Path(profile).expanduser()
        is_file = path.is_file()
        exists = is_file or path.exists()
    except (RuntimeError, OSError, ValueError) as exc:
        reason = "its home directory is unknown" if isinstance(exc, RuntimeError) else getattr(exc, "strerror", None) or str(exc)
        raise UsageError(f"--profile must be 'vendor', 'measured' or a profile file; cannot use {shown}: {reason}") from None
    if exists and not is_file:  # a FIFO, a device (/dev/zero), a directory: never opened
        what = "a directory" if path.is_dir() else "not a regular file"
        raise UsageError(f"--profile must be 'vendor', 'measured' or a profile file; {shown} is {what}")
    if not is_file:
        raise UsageError(f"--profile must be 'vendor', 'measured' or a profile file; not found: {shown}")
    return path


def _vendor_baselines(profile: dict[str, Any]) -> dict[str, float]:
    """The vendor figures the profile's results were compared with, by precision / 'mem_bw' / 'link'."""
    out: dict[str, float] = {}
    for run in profile.get("runs") or []:
        for result in (run or {}).get("results") or []:
            peak = (result.get("baseline") or {}).get("vendor_peak")
            if not _is_number(peak):
                continue
            kind = result.get("kind")
            key = "mem_bw" if kind in BANDWIDTH_KINDS else "link" if kind == LINK_KIND else str(result.get("precision"))
            out.setdefault(key, float(peak))
    return out


def measured_summary(accelerator: Any, data_dir: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """Measured figures beside the vendor figures they were compared with, or None if unmeasured.

    {"peak_flops": {dtype: FLOP/s}, "mem_bw": B/s, "link_bw_per_direction": B/s or None,
     "ratios": {dtype | "mem_bw" | "link_bw_per_direction": measured / vendor},
     "vendor": {same keys: vendor figure}, "spread": {...min/max over runs...}, "source": str}
    """
    path = find_profile(accelerator, data_dir)
    if path is None:
        return None
    parsed = _summary_of(path)
    summary, vendor, source = parsed["summary"], parsed["vendor"], parsed["source"]
    measured: dict[str, Any] = {
        "peak_flops": {d: v["median"] for d, v in summary["peak_flops"].items() if v},
        "mem_bw": summary["mem_bw"]["median"] if summary["mem_bw"] else None,
        "link_bw_per_direction": summary["link_bw_per_direction"]["median"] if summary["link_bw_per_direction"] else None,
    }
    ratios: dict[str, float] = {}
    vendor_out: dict[str, float] = {}
    for dtype, value in measured["peak_flops"].items():
        if dtype in vendor:
            vendor_out[dtype] = vendor[dtype]
            ratios[dtype] = value / vendor[dtype]
    if measured["mem_bw"] and "mem_bw" in vendor:
        vendor_out["mem_bw"] = vendor["mem_bw"]
        ratios["mem_bw"] = measured["mem_bw"] / vendor["mem_bw"]
    if measured["link_bw_per_direction"] and "link" in vendor:
        vendor_out["link_bw_per_direction"] = vendor["link"]
        ratios["link_bw_per_direction"] = measured["link_bw_per_direction"] / vendor["link"]
    spread = {
        "peak_flops": {d: v for d, v in summary["peak_flops"].items() if v},
        "mem_bw": summary["mem_bw"],
        "link_bw_per_direction": summary["link_bw_per_direction"],
    }
    return dict(measured, ratios=ratios, vendor=vendor_out, spread=spread, source=source,
                evidence=parsed["evidence"],
                # String keys: the same in Python as after a JSON round trip (gpus --json).
                link_bw_by_gpus={str(n): v["median"] for n, v in summary["link_bw_by_gpus"].items() if v},
                collectives={
                    str(n): {op: {str(size): bw for size, bw in sizes.items()} for op, sizes in ops.items()}
                    for n, ops in parsed["collectives"].items()
                })


def _five_fields(run: dict[str, Any]) -> dict[str, str]:
    """One run's five fields (the guide admits no number without them), each as one short line.
    A learner's file may give a field another shape (a string where a mapping belongs): then each
    field is shown as the text it is, never a traceback."""
    try:
        return _five_fields_described(run)
    except (AttributeError, TypeError, KeyError, ValueError):
        return {key: str(run.get(key, "")) for key in _EVIDENCE_KEYS}


def _five_fields_described(run: dict[str, Any]) -> dict[str, str]:
    hw = run.get("hardware") or {}
    clocks = hw.get("clocks") or {}
    hardware = ", ".join(str(x) for x in (
        hw.get("name"), f"{hw['gpu_count']} GPUs" if hw.get("gpu_count") else None,
        f"{hw['sm_count']} SMs" if hw.get("sm_count") else None,
        f"driver {hw['driver']}" if hw.get("driver") else None,
        f"SM clock max {clocks['sm_max_mhz']} MHz" if clocks.get("sm_max_mhz") else None,
        f"power limit {hw['power_limit_w']:g} W" if isinstance(hw.get("power_limit_w"), (int, float)) else None,
    ) if x)
    wl = run.get("workload") or {}
    parts = []
    if wl.get("bandwidth_buffer_bytes"):
        parts.append("copy/reduce buffers " + ", ".join(f"{b / 2**20:g} MiB" for b in wl["bandwidth_buffer_bytes"]))
    if wl.get("gemm_sizes"):
        parts.append("GEMMs " + ", ".join(map(str, wl["gemm_sizes"])))
    if wl.get("collective_bytes"):
        ops = wl.get("collective_ops") or ["all_reduce", "all_gather"]
        gpus = wl.get("collective_gpus") or [(run.get("hardware") or {}).get("gpu_count")]
        algo = wl.get("collective_algorithm") or {}
        parts.append(
            "NCCL " + ", ".join(str(o).replace("_", "-") for o in ops)
            + " over " + ", ".join(str(g) for g in gpus if g) + " GPUs at "
            + ", ".join(f"{b / 2**20:g} MiB" for b in wl["collective_bytes"])
            + "".join(f"; {k} {v}" for k, v in algo.items() if isinstance(v, str))
        )
    if wl.get("warmup") is not None and wl.get("repetitions") is not None:
        parts.append(f"{wl['warmup']} warm-up + {wl['repetitions']} timed runs, median")
    precision = run.get("precision")
    baseline = run.get("baseline") or {}
    correctness = run.get("correctness") or {}
    software = run.get("software") or {}
    return {
        "date": str(run.get("date", "")),
        "hardware": hardware or str(hw),
        "workload": "; ".join(parts) or str(wl),
        "precision": ", ".join(map(str, precision)) if isinstance(precision, list) else str(precision),
        "baseline": baseline.get("what", str(baseline)) + (f" ({baseline['catalog_id']})" if baseline.get("catalog_id") else "")
        if isinstance(baseline, dict) else str(baseline),
        "correctness": (" ".join(str(correctness.get("method", "")).split())
                        + (f" ({correctness['passed']} passed, {correctness.get('failed', 0)} failed)" if "passed" in correctness else ""))
        if isinstance(correctness, dict) else str(correctness),
        "software": ", ".join(f"{k} {v}" for k, v in software.items()) if isinstance(software, dict) else str(software),
    }
