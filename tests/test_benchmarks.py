"""The benchmarks themselves (benchmarks/): what they measure, how they judge it, and that a run
touches nothing of the learner's.

- every benchmark answers --help without running;
- a run reads and writes only temporary directories of its own (data, cache, XDG homes), removed
  at the end: never ~/.cache/studytui, never the checkout's progress/;
- whole processes are timed by CPU (the child's user + system time) beside wall time, and judged
  by the CPU ratio to a yardstick measured in the same run, median and minimum of the rounds;
- what the docs say about the method agrees with the code.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
# The speed benchmarks, and the GPU folder's scripts that run without PyTorch.
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name != "_timing.py") + [
    BENCH / "gpu" / name for name in ("check_measure_clusters.py", "read_variants.py", "summarize_truth.py")
]


def _bench(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


def _bare_env(tmp_path: Path) -> dict[str, str]:
    """An environment with a fresh HOME and TMPDIR and none of the variables that would point
    studytui elsewhere: whatever a benchmark leaves behind shows up under tmp_path."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("STUDYTUI_", "XDG_")) and k not in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
    (tmp_path / "home").mkdir()
    (tmp_path / "tmp").mkdir()
    env.update(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmp"))
    return env


def _left_behind(tmp_path: Path) -> list[str]:
    return sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "home").rglob("*")) + sorted(
        str(p.relative_to(tmp_path)) for p in (tmp_path / "tmp").iterdir()
    )


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(BENCH)))
def test_help_prints_usage_and_runs_nothing(script: Path, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60,
                          env=_bare_env(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage:"), proc.stdout[:300]
    assert _left_behind(tmp_path) == []


@pytest.mark.parametrize("script", [p for p in SCRIPTS if p.name.startswith(("bench_", "stress_")) or p.name == "summarize_truth.py"],
                         ids=lambda p: p.name)
def test_every_benchmark_isolates_its_run(script: Path) -> None:
    """Each benchmark that runs studytui calls isolate() (checked by behaviour for bench_cli and
    bench_practice below; this keeps a new benchmark from forgetting it)."""
    assert re.search(r"\bisolate\(", script.read_text(encoding="utf-8")), f"{script.name} does not call isolate()"


def test_isolate_points_everything_at_a_temporary_folder_removed_at_exit(tmp_path: Path) -> None:
    code = (
        "import json, os, sys; sys.path.insert(0, sys.argv[1]); import _timing\n"
        "root = _timing.isolate()\n"
        "print(json.dumps([str(root), {k: os.environ.get(k) for k in _timing.ISOLATED_VARS}, _timing.isolated_env()]))\n"
    )
    import json

    proc = subprocess.run([sys.executable, "-c", code, str(BENCH)], capture_output=True, text=True, env=_bare_env(tmp_path),
                          check=True)
    root, values, passed_on = json.loads(proc.stdout)
    assert set(values) == {"STUDYTUI_DATA_DIR", "STUDYTUI_CACHE_DIR", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                           "XDG_STATE_HOME", "PYTHONPYCACHEPREFIX"}
    for name, value in values.items():
        assert value is not None and Path(value).is_relative_to(root), (name, value)
    assert passed_on == values
    assert not Path(root).exists(), "the run's folder is removed at exit"


def test_run_process_counts_cpu_apart_from_waiting() -> None:
    timing = _bench("_timing")
    asleep = timing.run_process([sys.executable, "-c", "import time; time.sleep(0.4)"])
    busy = timing.run_process([sys.executable, "-c", "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"])
    assert not isinstance(asleep, str) and not isinstance(busy, str)
    assert asleep.wall >= 0.4 and asleep.cpu < 0.25  # waiting is wall time, not CPU
    assert busy.cpu >= 0.3
    failed = timing.run_process([sys.executable, "-c", "import sys; sys.exit('no such entry')"])
    assert failed == "exit 1: no such entry"


def test_instructions_are_counted_by_valgrind_or_refused_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """`bench_cli.py --instructions`: a count that the machine's load does not move, or a reason."""
    import shutil

    timing = _bench("_timing")
    if shutil.which("valgrind"):
        small = timing.instructions([sys.executable, "-c", "pass"])
        more = timing.instructions([sys.executable, "-c", "sum(range(300_000))"])
        assert isinstance(small, int) and isinstance(more, int) and more > small + 2_000_000
        assert timing.instructions([sys.executable, "-c", "raise SystemExit(3)"]).startswith("exit 3")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert "valgrind is not installed" in timing.instructions([sys.executable, "-c", "pass"])


def test_ratios_are_medians_and_minimums_judged_by_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    timing = _bench("_timing")
    samples = {
        "yardstick": [(0.30, 0.10), (0.40, 0.12), (0.20, 0.09)],
        # Slow on the wall clock only (it waited for a core): within the limit by CPU.
        "waits": [(0.90, 0.12), (1.00, 0.13), (0.80, 0.11)],
        # Over by CPU, although its wall time looks like the yardstick's.
        "burns": [(0.30, 0.20), (0.40, 0.21), (0.20, 0.14)],
    }
    yard, waits, burns = timing.figures(samples, "yardstick")
    assert (yard.cpu_ratio, yard.wall_ratio) == (1.0, 1.0)
    assert waits.wall_ratio == pytest.approx(0.90 / 0.30) and waits.cpu_ratio == pytest.approx(0.12 / 0.10)
    assert waits.wall_min_ratio == pytest.approx(0.80 / 0.20) and waits.cpu_min_ratio == pytest.approx(0.11 / 0.09)
    assert burns.cpu_ratio == pytest.approx(2.0) and burns.cpu_min_ratio == pytest.approx(0.14 / 0.09)
    assert not waits.over(1.5) and burns.over(1.5)
    over = timing.print_ratios([yard, waits, burns], {"broken": "exit 2: bad"}, rounds=3, warmup=1, limit=1.5)
    out = capsys.readouterr().out
    assert over == ["burns", "broken"]
    assert re.search(r"burns .*<< OVER 1\.5x \(CPU\)", out)
    assert "OVER" not in next(line for line in out.splitlines() if line.strip().startswith("waits"))
    assert "broken" in out and "FAILED (exit 2: bad)" in out
    assert "load average after:" in out
    table = timing.markdown([yard, waits, burns], prefix="studytui ")
    assert table.splitlines()[0].startswith("| Command | CPU ratio (median) | CPU ratio (min) | Wall ratio (median)")
    assert "| `studytui burns` | 2.00x | 1.56x | 1.00x | 1.00x |" in table


def _run_bench(tmp_path: Path, *args: str, timeout: int = 240) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=_bare_env(tmp_path),
                          cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr  # 1: a figure over its limit on this machine, not an error
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_bench_cli_prints_cpu_and_wall_ratios_and_touches_nothing(tmp_path: Path) -> None:
    before = sorted((ROOT / "progress").rglob("*")) if (ROOT / "progress").exists() else []
    out = _run_bench(tmp_path, str(BENCH / "bench_cli.py"), "--rounds", "1", "--warmup", "0", "--only", "mark").stdout
    assert "load average before:" in out and "load average after:" in out
    assert re.search(r"CPU median .* wall median", out)
    assert re.search(r"mark gqa learning +\d+\.\d ms +\d+\.\d\dx +\d+\.\d\dx +\d+\.\d ms", out), out
    assert _left_behind(tmp_path) == []  # no ~/.cache/studytui, no temporary folder left
    assert (sorted((ROOT / "progress").rglob("*")) if (ROOT / "progress").exists() else []) == before


def test_bench_practice_uses_ratios_and_its_own_cache(tmp_path: Path) -> None:
    """It used to time the commands against absolute 200 ms targets and write the guide cache to
    ~/.cache/studytui/guide."""
    out = _run_bench(tmp_path, str(BENCH / "bench_practice.py"), "--rounds", "1", "--warmup", "0", "--runs", "1").stdout
    assert 'yardstick: python -c "import rich.console"' in out
    assert re.search(r"practice show +\d+\.\d ms +\d+\.\d\dx", out), out
    assert "target < 200 ms" not in out
    assert _left_behind(tmp_path) == []


@pytest.mark.parametrize("name", ["bench_practice", "bench_calc", "bench_occupancy", "bench_guide_diff", "bench_takealong"])
def test_whole_commands_are_timed_against_the_yardstick(name: str) -> None:
    """No whole-process figure against an absolute millisecond target: they go through the
    interleaved yardstick comparison."""
    source = (BENCH / f"{name}.py").read_text(encoding="utf-8")
    assert "time_process" not in source and "WALL_TARGET" not in source
    assert "compare_commands(" in source or "interleave(" in source
    assert not hasattr(_bench("_timing"), "time_process")


def test_docs_state_bench_cli_default_rounds() -> None:
    rounds, warmup = _bench("bench_cli").ROUNDS, _bench("bench_cli").WARMUP
    for doc in ("README.md", "docs/performance.md"):
        text = " ".join((ROOT / doc).read_text(encoding="utf-8").split())
        stated = re.findall(r"(\d+) interleaved rounds", text)
        assert stated and set(stated) == {str(rounds)}, (doc, stated)
        assert f"after {warmup} unmeasured" in text or ("after one unmeasured" in text and warmup == 1), doc


def test_profile_benchmark_states_the_full_set_file_size(tmp_path: Path) -> None:
    """The 10,000-kernel full-set export's size, estimated from 110 kernels (10 of each of the 11
    distinct rows), is what the docstring and docs/profiles.md say."""
    bench = _bench("bench_profile")
    source = bench.H200 / "ops-full-raw.csv"
    empty = bench.ncu_export(source, tmp_path / "0.csv", 0)
    some = bench.ncu_export(source, tmp_path / "110.csv", 110)
    estimate_mb = (empty + (some - empty) / 110 * bench.KERNELS) / 1e6
    stated = re.search(r"about (\d+) MB: what `ncu --set full`", bench.__doc__ or "")
    assert stated, bench.__doc__
    assert abs(int(stated.group(1)) - estimate_mb) / estimate_mb < 0.02, (stated.group(1), estimate_mb)
    docs = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
    assert f"full set (2,240 columns), 10,000 kernels, {stated.group(1)} MB" in docs
