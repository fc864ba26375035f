"""Shared fixtures. Every test gets its own data directory: no test touches a real user's data."""

from __future__ import annotations

import gc
import os
import shutil
import sys
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import settings

# Property tests: CI (which sets CI=true) runs a fixed, derandomized set of examples so a run can
# never fail by chance; locally hypothesis explores freely and remembers what it found.
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI", "").lower() == "true" else "dev"))


_CACHE_DIR: list[Path] = []


def _use_a_cache_dir_of_the_run() -> None:
    """The caches (issue 27: the guide, the problems, the catalogs, the schedule) in a folder of
    the test run's, never the user's ~/.cache: one per process (each xdist worker), shared by its
    tests (a cache is keyed by its sources and their stamps). Set before collection, so what test
    modules load at import or in a module's fixture uses it too."""
    import tempfile

    _CACHE_DIR.append(Path(tempfile.mkdtemp(prefix="studytui-cache-")))
    os.environ["STUDYTUI_CACHE_DIR"] = str(_CACHE_DIR[0])


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _CACHE_DIR:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def isolated_cache_dir() -> Path:
    return _CACHE_DIR[0]


@pytest.fixture(autouse=True)
def isolated_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                      isolated_cache_dir: Path) -> Path:
    data = tmp_path_factory.mktemp("studytui-data")
    monkeypatch.setenv("STUDYTUI_DATA_DIR", str(data))
    monkeypatch.setenv("STUDYTUI_CACHE_DIR", str(isolated_cache_dir))  # (back, if a test moved it)
    monkeypatch.delenv("STUDYTUI_CONTENT_DIR", raising=False)
    return data


# -- toy calculators (issue 25) ----------------------------------------------------------------
# A calculator is one module, added to studytui.calc.registry.MODULES; these register toys the
# same way, for one test, so tests can find them everywhere (tests/test_calc_registry.py, the
# command line, `check` and practice; tests/tui/test_calc_registry_app.py, the app).
TOY_DATA = Path(__file__).parent / "data"
TOY_PACKAGE = "toycalcs"


def _register_toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, name: str) -> Iterator[str]:
    package = tmp_path / TOY_PACKAGE
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    shutil.copy(TOY_DATA / source, package / f"{name}.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    from studytui.calc import registry

    monkeypatch.setattr(registry, "MODULES", (*registry.MODULES, f"{TOY_PACKAGE}.{name}"))
    monkeypatch.setattr(registry, "_loaded", dict(registry._loaded))  # the toy's spec is forgotten afterwards
    yield name
    for module in (f"{TOY_PACKAGE}.{name}", TOY_PACKAGE):
        sys.modules.pop(module, None)


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The toy calculator (tests/data/toy_calculator.py) as `toycalcs.toy`, added to the registry
    (for this test only); its name, "toy"."""
    yield from _register_toy(tmp_path, monkeypatch, "toy_calculator.py", "toy")


@pytest.fixture
def toy_roofline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The roofline-plotted toy (tests/data/toy_roofline.py) as `toycalcs.toyroof`, added to the
    registry after any other toy; its name, "toyroof"."""
    yield from _register_toy(tmp_path, monkeypatch, "toy_roofline.py", "toyroof")


# -- running in parallel ---------------------------------------------------------------------
# The suite runs on pytest-xdist workers (`-n auto` in pyproject.toml). App tests spend part of
# their time waiting (timers, real terminals, subprocesses), so one worker more than there are
# CPUs keeps them busy. Measured on 2 CPUs: 3 workers as fast as 4 and faster than 2; each
# worker also pays for collecting the whole suite (about 5 s of CPU).
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(2, min(8, cpus + 1))


# Tests that take several seconds (pytest --durations=40 -n 0 lists them), by node id prefix.
SLOW = (
    "tests/tui/test_key_bursts.py",
    "tests/tui/test_study_keys_terminal.py",
    "tests/test_store_durability.py::test_kill_9",
    "tests/tui/test_calc_screens.py::test_every_screen",
    "tests/test_serve.py::test_app_in_a_browser",
    "tests/tui/test_hangup_terminal.py",
    "tests/tui/test_notes.py::test_steady_typing",
    "tests/tui/test_notes.py::test_sighup",
    "tests/tui/test_notes.py::test_autosave_waits",
    "tests/tui/test_search_and_screens.py::test_palette_entry_and_section_jump",
    "tests/tui/test_practice_screen.py::test_wrong_then_hints_then_right",
    "tests/tui/test_calc_screens.py::test_the_command_palette_opens",
    "tests/tui/test_calc_screens.py::test_gpu_",
    "tests/tui/test_settings.py::test_palette_theme",
    "tests/tui/test_registry.py::test_a_registered_screen",
    "tests/test_guide_diff.py::test_random_removals",
    "tests/test_calc_honest.py::test_every_calculator_is_finite",
    "tests/test_check.py::test_clean_content_passes",
    "tests/tui/test_flow.py::test_f1_shows",
    "tests/test_store_safety.py::test_read_only_data_directory",
    "tests/test_store_transfer.py::test_merging_keeps",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Longest first, so no worker is left with a long test at the end while the others idle.
    items.sort(key=lambda item: not item.nodeid.startswith(SLOW))


# -- test ids --------------------------------------------------------------------------------
# Hostile-input tests take huge or odd values as parameters. Left to pytest, a 9 MiB value became
# a 9 MiB test id, escaped at every collection and sent between the workers and the controller in
# every report. Long values get a short id: their start, their length and a digest (unique).
LONGEST_ID = 40


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    if isinstance(val, (str, bytes)) and len(val) > LONGEST_ID:
        import hashlib

        raw = val.encode("utf-8", "surrogatepass") if isinstance(val, str) else val
        head = raw[:20].decode("ascii", "backslashreplace").encode("unicode_escape").decode("ascii")
        return f"{head}...{len(val)}-{hashlib.sha1(raw).hexdigest()[:8]}"
    return None


# -- byte code for the command-line tests -----------------------------------------------------
# Many tests run `python -m studytui.cli` in a subprocess. Where PYTHONDONTWRITEBYTECODE is set
# (CI images often set it), each of those compiled the whole package from source again: 8 s of a
# parallel run. Compile it once, into the usual __pycache__ folders (ignored by git), before the
# workers start; reading byte code is allowed either way.
def pytest_configure(config: pytest.Config) -> None:
    _use_a_cache_dir_of_the_run()
    if sys.dont_write_bytecode and not hasattr(config, "workerinput"):
        import compileall

        compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "studytui"), quiet=2)


# -- garbage collection ------------------------------------------------------------------------
# A test process holds Textual, hypothesis and every test module: with the default thresholds a
# third of the app tests' CPU time went to full collections walking that heap (measured with
# gc.callbacks). Collect less often, and leave what collection loaded out of the walk.
gc.set_threshold(50_000, 20, 20)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()
