"""The calculator registry: a calculator is one module, found everywhere from one list, loaded
only when asked for.

A toy calculator (tests/data/toy_calculator.py) is registered here the way a new one is, by
adding its module to studytui.calc.registry.MODULES (the `toy` fixture in tests/conftest.py), and
the command line finds it: `calc --help` lists it, `calc toy` runs it with its own flags and
--json, `studytui check` runs a try-it link naming it, and practice grades a problem by it. The
app's side (hub, screen, palette, F-keys, help, groups, the roofline plot) is
tests/tui/test_calc_registry_app.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from studytui.calc import registry
from studytui.calc.form_values import GROUPS
from studytui.calc.forms import CALCULATORS, KINDS, PLOTS
from studytui.cli import main

TOY = Path(__file__).parent / "data" / "toy_calculator.py"
CALCULATOR_MODULES = set(registry.MODULES)


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
    assert code == 0 and "tile, l2, toy" in " ".join(out.split())  # the calculators' names in the command list


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


# --- a new calculator in `studytui check` and in practice --------------------------------------------
def _content_copy(tmp_path: Path) -> Path:
    """A copy of the content without its practice problems (`check` runs each over 12 seeds, and
    this file is about the calculator)."""
    from studytui.core.paths import content_dir

    content = tmp_path / "content"
    shutil.copytree(content_dir(), content, ignore=shutil.ignore_patterns("problems"))
    return content


def _add_try_it(content: Path, args: str) -> str:
    """A try-it link naming the toy on the first entry without one; that entry's id."""
    from studytui.guide import load_guide

    entry = next(e for e in load_guide(content).entries if e.try_it is None)
    source = content / "sections" / Path(entry.source_file).name
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.strip() == f"- id: {entry.id}")
    indent = lines[index][: lines[index].index("-")] + "  "
    lines.insert(index + 1, f"{indent}try_it: {{calc: toy, label: 'A toy triangle', args: {args}}}\n")
    source.write_text("".join(lines), encoding="utf-8")
    return entry.id


def _check_problems(capsys: pytest.CaptureFixture[str], content: Path, entry_id: str) -> list[str]:
    """What `studytui check` says about the entry's try-it link (the rest of the content is not this test's)."""
    _code, out, _ = cli(capsys, "--content", str(content), "check", "--json")
    return [p for p in json.loads(out)["problems"] if f"entry '{entry_id}': try_it" in p]


def test_check_runs_a_try_it_link_through_a_new_calculator(toy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    content = _content_copy(tmp_path)
    entry_id = _add_try_it(content, "{height: '4', shape: triangle}")
    assert _check_problems(capsys, content, entry_id) == []
    bad = _content_copy(tmp_path / "bad")
    entry_id = _add_try_it(bad, "{height: '4', shape: circle}")
    [problem] = _check_problems(capsys, bad, entry_id)
    assert "'toy'" in problem and "circle" in problem and re.search(r"/sections/[^/:]+\.yaml:\d+: entry ", problem)


def test_check_knows_a_calculator_only_once_it_is_registered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    content = _content_copy(tmp_path)
    entry_id = _add_try_it(content, "{height: '4'}")
    [problem] = _check_problems(capsys, content, entry_id)
    assert "unknown calculator 'toy'" in problem


TOY_PROBLEMS = """\
section: {section}
problems:
  - id: toy-triangle-area
    title: Area of a toy triangle
    skill: toy-area
    entries: [{entry}]
    kind: number
    params:
      width: [2, 4]
      height: [3, 5]
    question: What is the area of a triangle with base {{width}} and height {{height}}?
    calc: {{name: toy, args: {{width: '{{width}}', height: '{{height}}', shape: triangle}}, answer: area}}
    by_hand: '{{width}} * {{height}} / 2'
    unit: ''
    hints:
      - Half of the rectangle on the same base and height.
    notice: A triangle is half the rectangle on its base and height.
"""


def test_practice_grades_a_problem_by_a_new_calculator(toy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A problem file naming the toy (the content's own problems set aside: this test is about the toy)."""
    from studytui.guide import load_guide

    content = _content_copy(tmp_path)
    (content / "problems").mkdir()
    section = load_guide(content).sections[0]
    entry = next(e for sub in section.subsections for e in sub.entries)
    (content / "problems" / f"00-{section.id}.yaml").write_text(TOY_PROBLEMS.format(section=section.id, entry=entry.id))
    base = ["--content", str(content), "practice"]
    code, out, err = cli(capsys, *base, "show", "toy-triangle-area", "--seed", "0", "--json")
    assert code == 0, err
    question = json.loads(out)["question"]
    width, height = (float(w) for w in re.findall(r"base (\d+) and height (\d+)", question)[0])
    right = f"{width * height / 2:g}"
    code, out, err = cli(capsys, *base, "answer", "toy-triangle-area", right, "--seed", "0", "--json")
    assert code == 0, err
    graded = json.loads(out)
    assert graded["correct"] is True
    code, out, err = cli(capsys, *base, "answer", "toy-triangle-area", f"{width * height:g}", "--seed", "0", "--json")
    assert code == 0 and json.loads(out)["correct"] is False  # the rectangle: graded by running the toy
