"""The calculator registry: a calculator is one module, found everywhere from one list, loaded
only when asked for.

A toy calculator (tests/data/toy_calculator.py) is registered here the way a new one is, by
adding its module to studytui.calc.registry.MODULES, and the command line finds it: `calc --help`
lists it, `calc toy` runs it with its own flags and --json. The app's side (hub, screen, palette)
is tests/tui/test_calc_registry_app.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator

import pytest

from studytui.calc import registry
from studytui.calc.form_values import GROUPS
from studytui.calc.forms import CALCULATORS, KINDS, PLOTS
from studytui.cli import main

TOY = Path(__file__).parent / "data" / "toy_calculator.py"
CALCULATOR_MODULES = set(registry.MODULES)


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The toy calculator's module, `toycalcs.toy`, added to the registry (for this test only)."""
    package = tmp_path / "toycalcs"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(TOY, package / "toy.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "MODULES", (*registry.MODULES, "toycalcs.toy"))
    monkeypatch.setattr(registry, "_loaded", dict(registry._loaded))  # the toy's spec is forgotten afterwards
    yield "toy"
    for name in ("toycalcs.toy", "toycalcs"):
        sys.modules.pop(name, None)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# --- the registry ---------------------------------------------------------------------------------
def test_names_come_from_the_module_list_in_order() -> None:
    assert registry.names() == tuple(module.rpartition(".")[2] for module in registry.MODULES)
    assert list(CALCULATORS) == list(registry.names())
    assert len(CALCULATORS) == len(registry.MODULES)
    assert "roofline" in CALCULATORS and "nope" not in CALCULATORS
    with pytest.raises(KeyError):
        registry.spec("nope")


def test_every_spec_lives_in_its_own_module_and_is_named_after_it() -> None:
    for module, spec in zip(registry.MODULES, registry.specs()):
        assert sys.modules[module].SPEC is spec
        assert spec.name == registry.name_of(module)
        assert spec.compute.__module__ == module, f"{spec.name}: its run adapter lives in its module"


def test_every_spec_presents_only_what_it_has() -> None:
    """Presentation names real fields, groups and plot kinds: a typo would be silently ignored."""
    group_ids = {group_id for group_id, _title in GROUPS}
    for spec in registry.specs():
        names = [f.name for f in spec.fields]
        assert len(names) == len(set(names)), spec.name
        for f in spec.fields:
            assert f.kind in KINDS, (spec.name, f.name)
            assert f.group is None or f.group in group_ids, (spec.name, f.name, f.group)
            assert not (f.free or f.checked_by_calculator) or f.kind == "choice", (spec.name, f.name)
        assert set(spec.ui_defaults) <= set(names), spec.name
        assert set(spec.title_fields) <= set(names), spec.name
        assert spec.plot is None or spec.plot in PLOTS, spec.name
        assert (spec.plot == "sweep") == (spec.sweep is not None), spec.name
        assert spec.points is None or spec.plot == "roofline", spec.name
        assert not spec.short_name or len(spec.short_name) < len(spec.name), spec.name


def test_a_spec_must_be_named_after_its_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "misnamed"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(TOY, package / "other.py")  # SPEC says "toy"
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "MODULES", ("misnamed.other",))
    monkeypatch.setattr(registry, "_loaded", {})
    try:
        with pytest.raises(RuntimeError, match="named 'toy'"):
            registry.spec("other")
    finally:
        sys.modules.pop("misnamed.other", None)
        sys.modules.pop("misnamed", None)


# --- a new calculator on the command line ----------------------------------------------------------
def test_calc_help_lists_a_new_calculator(toy: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "calc", "--help")
    assert code == 0
    assert "toy          The area of a toy rectangle or triangle" in out  # under "calculators:"
    assert "Toy area" in out  # its title under NAME
    code, out, _ = cli(capsys, "--help")
    assert code == 0 and "tile, toy" in " ".join(out.split())  # the calculators' names in the command list


def test_a_new_calculator_runs_with_its_own_flags(toy: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "calc", "toy", "--help")
    assert code == 0
    for flag in ("--width SIZE", "--height X", "--shape CHOICE", "[rectangle|triangle]", "--json", "--explain"):
        assert flag in out, flag
    code, out, _ = cli(capsys, "calc", "toy", "--width", "4", "--height", "5", "--shape", "triangle", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["calculator"] == "toy" and data["area"] == 10 and data["shape"] == "triangle"
    code, out, _ = cli(capsys, "calc", "toy", "--height", "3", "--explain")
    assert code == 0
    assert "Toy area" in out and "area of the toy shape" in out and "area = width x height = 2 x 3 = 6" in out


def test_a_new_calculator_refuses_bad_flags_in_one_line(toy: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "calc", "toy", "--height", "3", "--shape", "circle")
    assert code == 2 and "--shape: unknown value 'circle'" in err
    code, _, err = cli(capsys, "calc", "toy")
    assert code == 2 and "--height: required" in err


def test_calc_help_before_a_name_still_lists_every_calculator(capsys: pytest.CaptureFixture[str]) -> None:
    # `calc -h gemm` prints the list, although only gemm's own parser was built for this command line.
    code, out, _ = cli(capsys, "calc", "-h", "gemm")
    assert code == 0
    for name in CALCULATORS:
        assert f"  {name} " in out, name
    code, whole, _ = cli(capsys, "calc", "--help")
    assert whole == out


# --- only what is used is imported ---------------------------------------------------------------------
def _modules_after(code: str) -> set[str]:
    script = textwrap.dedent(code) + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def _run_cli(argv: list[str]) -> str:
    return f"""
        import contextlib, io
        from studytui.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                main({argv!r})
            except SystemExit:
                pass
        """


@pytest.mark.parametrize(
    "argv", [["calc", "roofline", "--help"], ["calc", "roofline", "--gpu", "h200", "--intensity", "100", "--json"]]
)
def test_a_calculator_command_imports_that_calculator_only(argv: list[str]) -> None:
    loaded = _modules_after(_run_cli(argv)) & CALCULATOR_MODULES
    assert loaded == {"studytui.calc.roofline"}


def test_other_commands_and_the_apps_registry_import_no_calculator() -> None:
    loaded = _modules_after(_run_cli(["list", "--json"]))
    assert not loaded & CALCULATOR_MODULES and "studytui.calc.forms" not in loaded
    # The palette lists every calculator by title, yet registering them imports none (the first frame waits for it).
    loaded = _modules_after("from studytui.tui.registry import build_registry\nbuild_registry()")
    assert not loaded & CALCULATOR_MODULES and "studytui.calc.forms" not in loaded
