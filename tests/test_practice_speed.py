"""Issue 27: each `studytui practice` command loads only what it needs. Checked in a subprocess, as a
learner runs it, with warm caches (the guide's and the problems', tests/test_practice_cache.py).

`benchmarks/bench_cli.py` measures the time; this pins what the time is made of, on any machine:
no YAML on a warm run, FSRS only where due dates are shown (and only once something was practised),
the calculators only where a question's figures are given or an answer is graded.
"""

from __future__ import annotations

import os

import pytest

from tests.support import heavy_modules_loaded

HEAVY = ("yaml", "studytui.core.yamlio", "fsrs", "studytui.calc", "studytui.practice.grading", "studytui.practice.given",
         "studytui.practice.handcalc", "studytui.practice.byhand", "sqlite_utils", "click", "textual", "markdown_it",
         "rich.markdown", "pygments", "genanki", "platformdirs")

SHOWN = {"studytui.calc", "studytui.practice.given"}  # a question's given figures come from the catalogs
GRADED = SHOWN | {"studytui.practice.grading", "studytui.practice.handcalc", "studytui.practice.byhand"}

# command line -> the heavy modules it may load (warm caches, one attempt in the store)
EXPECTED: list[tuple[list[str], set[str]]] = [
    (["practice"], {"fsrs"}),
    (["practice", "--json"], {"fsrs"}),
    (["practice", "start-here"], {"fsrs"}),
    (["practice", "due"], {"fsrs"}),
    (["practice", "due", "--json"], {"fsrs"}),
    (["practice", "show", "sh-ridge-point"], SHOWN),
    (["practice", "show", "sh-ridge-point", "--json"], SHOWN | {"studytui.practice.byhand", "studytui.practice.handcalc"}),
    (["practice", "answer", "sh-ridge-point", "1", "--seed", "0"], GRADED),
    (["practice", "answer", "sh-ridge-point", "--reveal", "--seed", "1"], GRADED),
]


def _loaded(argv: list[str], cache_dir: str) -> tuple[int, set[str]]:
    # The test's own data directory (conftest), the module's cache.
    return heavy_modules_loaded(argv, HEAVY, {**os.environ, "STUDYTUI_CACHE_DIR": cache_dir})


@pytest.fixture(scope="module")
def warm_caches(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A cache folder with the guide's and the problems' caches filled, as on a learner's machine
    after the first run. (A module's fixture is set up before conftest's per-test folders: it
    names its own data and cache folders, never the user's.)"""
    cache_dir = str(tmp_path_factory.mktemp("practice-speed-cache"))
    data_dir = str(tmp_path_factory.mktemp("practice-speed-data"))
    saved = os.environ.get("STUDYTUI_DATA_DIR")
    os.environ["STUDYTUI_DATA_DIR"] = data_dir
    try:
        for _ in range(2):
            assert _loaded(["practice", "--json"], cache_dir)[0] == 0
    finally:
        if saved is None:
            os.environ.pop("STUDYTUI_DATA_DIR", None)
        else:
            os.environ["STUDYTUI_DATA_DIR"] = saved
    return cache_dir


@pytest.mark.parametrize("argv, allowed", EXPECTED, ids=[" ".join(a) for a, _ in EXPECTED])
def test_each_practice_command_loads_only_what_it_needs(argv: list[str], allowed: set[str], warm_caches: str) -> None:
    assert _loaded(["practice", "answer", "sh-ridge-point", "1", "--seed", "0"], warm_caches)[0] == 0  # an attempt to review
    code, loaded = _loaded(argv, warm_caches)
    assert code == 0
    assert loaded <= allowed, f"studytui {' '.join(argv)} loads {sorted(loaded - allowed)}"


@pytest.mark.parametrize("argv", [["practice"], ["practice", "due"]], ids=["list", "due"])
def test_nothing_practised_loads_no_scheduler(argv: list[str], warm_caches: str) -> None:
    code, loaded = _loaded(argv, warm_caches)
    assert code == 0 and not loaded & {"fsrs", "yaml", "studytui.calc"}, sorted(loaded)


def test_a_cold_problem_cache_reads_the_yaml(tmp_path) -> None:
    code, loaded = _loaded(["practice", "due"], str(tmp_path / "cold"))
    assert code == 0 and "studytui.core.yamlio" in loaded
