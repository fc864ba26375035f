"""Calculator output is text, never a terminal command: a GPU name from the learner's hardware
file with escape sequences, bidi marks or Rich markup in it is shown escaped in every row of every
calculator (the app's side: tests/tui/test_calc_text_safety.py). Also: integers too long for Python
to read in any of the learner's YAML files are one line and exit 2, and a --profile that is a FIFO
or a device is named as such."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from studytui.calc.result import Result
from studytui.calc.views import TextTable
from studytui.cli import main
from studytui.core.paths import content_dir
from studytui.core.text import BIDI_CONTROLS, one_line, visible
from studytui.tui.format import visible_controls
from tests.support import app_refusal, deadline

# OSC 52 (write the clipboard), OSC 0 (the window title), clear the screen, a right-to-left
# override and mark, then Rich markup and a Rich link: none may act, each must read as written.
HOSTILE = ("H200\x1b]52;c;ZWNobyBwd25lZA==\x1b\\ \x1b]0;pwned-title\x1b\\ \x1b[2J \u202eevil\u200f\u200e\u061c "
           "\x9b31m [bold red]X[/][link=https://e.x]L[/link]")
# Every character that must not reach the terminal (studytui.core.text.CONTROLS) but the newline.
RAW = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}]")
BIG = "9" * 5000
CALCS = {
    "roofline": ["--flops", "1e12", "--bytes", "1e9"],
    "gemm": ["--m", "4096", "--n", "4096", "--k", "4096"],
    "transformer": ["--model", "llama-3.1-8b"],
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str, *needles: str) -> None:
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.startswith("studytui: error: "), err
    for needle in needles:
        assert needle in err, err


def hardware(data: Path, name: str = "st-name", bw: str = "4.8") -> Path:
    """A data dir with one accelerator of the learner's own, id `st` (the shape of a catalog entry)."""
    folder = data / "hardware"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "x.yaml").write_text(
        f"- id: st\n  name: {json.dumps(name)}\n  vendor: NVIDIA\n  memory_gb: 141\n  memory_unit: GB\n"
        f"  memory_bw_tbs: {bw}\n  peak_tflops:\n    bf16: 989.4\n    fp8: 1978.9\n  sources:\n  - https://example.com\n",
        encoding="utf-8",
    )
    return data


# --- 1. every row of every calculator is text --------------------------------------------------
def assert_shown_as_text(out: str) -> None:
    assert not RAW.search(out), [m.group() for m in RAW.finditer(out)][:5]
    assert "\\x1b]52;c;ZWNobyBwd25lZA==" in out and "\\x1b]0;pwned-title" in out
    assert "\\u202eevil\\u200f\\u200e\\u061c" in out and "\\x9b31m" in out
    flat = "".join(out.split())  # a long name wraps in its column
    assert "[boldred]X[/][link=https://e.x]L[/link]" in flat  # markup shown as written, not applied


@pytest.mark.parametrize("calc", CALCS)
def test_a_hostile_gpu_name_is_text_in_every_calculators_rows(calc: str, tmp_path: Path, capsys) -> None:
    data = hardware(tmp_path / "data", HOSTILE)
    code, out, err = run(capsys, "--data-dir", str(data), "calc", calc, "--gpu", "st", *CALCS[calc], "--explain")
    assert code == 0, err
    assert_shown_as_text(out)


def test_the_result_printer_escapes_rows_tables_warnings_formulas_and_assumptions(capsys) -> None:
    from studytui.cli.commands.calc import _print_result

    bad = "\x1b]0;t\x07\u200f[b]X[/b]"
    result = Result("toy")
    result.row(f"L{bad}", f"V{bad}")
    result.warn(f"W{bad}")
    result.step(f"F{bad}")
    result.assume(f"A{bad}")
    table = TextTable(f"T{bad}", ((f"H{bad}", False),), ((f"C{bad}",),))
    _print_result(f"R{bad}", result, True, (table,))
    out = capsys.readouterr().out
    assert not RAW.search(out)
    for part in "RLVTHCWFA":  # title, label, value, table title, header, cell, warning, formula, assumption
        assert f"{part}\\x1b]0;t\\x07\\u200f[b]X[/b]" in out, part


def test_json_output_writes_c1_and_bidi_controls_as_escapes_and_decodes_the_same(tmp_path: Path, capsys) -> None:
    data = hardware(tmp_path / "data", HOSTILE)
    code, out, err = run(capsys, "--data-dir", str(data), "gpus", "st", "--json")
    assert code == 0, err
    assert not RAW.search(out)
    assert "\\u009b" in out and "\\u202e" in out and "\\u200f" in out and "\\u061c" in out
    assert json.loads(out)["name"] == HOSTILE  # the same text, decoded
    from studytui.core.text import json_escaped

    assert json.loads(json_escaped(json.dumps({"k": HOSTILE}, ensure_ascii=False))) == {"k": HOSTILE}


def test_a_measured_profile_of_the_learners_is_text_in_gpus(tmp_path: Path, capsys) -> None:
    import yaml

    data = hardware(tmp_path / "data")
    profile = yaml.safe_load((content_dir(None) / "hardware" / "measured" / "h200-sxm.yaml").read_text(encoding="utf-8"))
    profile["accelerator"] = "st"
    profile["runs"][0]["hardware"]["name"] = "box \x1b]0;pwned\x07 \u200f [bold]B[/bold]"
    profile["runs"][0]["date"] = "2026-11-29 \x1b[2J"
    (data / "hardware" / "measured").mkdir()
    (data / "hardware" / "measured" / "st.yaml").write_text(yaml.safe_dump(profile, allow_unicode=True), encoding="utf-8")
    code, out, err = run(capsys, "--data-dir", str(data), "gpus", "st")
    assert code == 0, err
    assert not RAW.search(out)
    assert "(run 1, 2026-11-29 \\x1b[2J)" in out and "hardware: box \\x1b]0;pwned\\x07 \\u200f [bold]B[/bold]" in out


@pytest.mark.parametrize("field, value", [("hardware", "one H200 in a box"), ("workload", ["a", "list"]), ("baseline", 3),
                                          ("correctness", ["checked"])])
def test_a_measured_profile_field_of_another_shape_is_shown_as_text(tmp_path: Path, capsys, field: str, value: object) -> None:
    import yaml

    data = hardware(tmp_path / "data")
    profile = yaml.safe_load((content_dir(None) / "hardware" / "measured" / "h200-sxm.yaml").read_text(encoding="utf-8"))
    profile["accelerator"] = "st"
    profile["runs"][0][field] = value
    (data / "hardware" / "measured").mkdir()
    (data / "hardware" / "measured" / "st.yaml").write_text(yaml.safe_dump(profile, allow_unicode=True), encoding="utf-8")
    code, out, err = run(capsys, "--data-dir", str(data), "gpus", "st")
    assert "Traceback" not in err
    assert code == 0 or (code == 2 and len(err.strip().splitlines()) == 1), err
    if code == 0:
        assert str(value)[:10] in out


# --- 3. the bidi marks are in the escape set ---------------------------------------------------------
@pytest.mark.parametrize("mark", ["\u200e", "\u200f", "\u061c", "\u202a", "\u202e", "\u2066", "\u2069"])
def test_bidi_marks_are_escaped_by_the_cli_and_the_app(mark: str) -> None:
    shown = f"\\u{ord(mark):04x}"
    assert visible(f"a{mark}b") == f"a{shown}b"
    assert one_line(f"a{mark}b") == f"a{shown}b"
    assert visible_controls(f"a{mark}b") == f"a{shown}b"


def test_a_bidi_mark_in_a_gpu_name_is_escaped_in_gpus(tmp_path: Path, capsys) -> None:
    data = hardware(tmp_path / "data", "H200 \u200fevil\u061c")
    code, out, err = run(capsys, "--data-dir", str(data), "gpus", "st")
    assert code == 0, err
    assert "\u200f" not in out and "\u061c" not in out and "\\u200fevil\\u061c" in out


# --- 2. an integer too long for Python to read ----------------------------------------------------
def test_a_5000_digit_number_in_a_hardware_file_is_one_line(tmp_path: Path, capsys) -> None:
    data = hardware(tmp_path / "data", bw=BIG)
    for argv in (["gpus"], ["gpus", "st"], ["calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9"]):
        code, out, err = run(capsys, "--data-dir", str(data), *argv)
        assert code == 2, (argv, err)
        one_error_line(err, "x.yaml:6: not valid YAML (number too long to read: 5,000 digits)")
        assert "set_int_max_str_digits" not in err and "4300" not in err


def test_a_4000_digit_number_in_a_hardware_file_is_one_line(tmp_path: Path, capsys) -> None:
    data = hardware(tmp_path / "data", bw="9" * 4000)  # Python reads it; no float holds it
    code, _out, err = run(capsys, "--data-dir", str(data), "gpus")
    assert code == 2
    one_error_line(err, "memory_bw_tbs", "4,000 digits")


def test_a_5000_digit_number_in_plan_yaml_is_one_line(tmp_path: Path, capsys) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "plan.yaml").write_text(f"review_minutes: {BIG}\n", encoding="utf-8")
    code, _out, err = run(capsys, "--data-dir", str(data), "plan")
    assert code == 2
    one_error_line(err, "plan.yaml:1: not valid YAML (number too long to read: 5,000 digits)")


def test_a_5000_digit_number_in_a_measured_profile_is_one_line(tmp_path: Path, capsys) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(f"schema: studytui-measured-profile/1\nruns:\n- mem_bw: {BIG}\n", encoding="utf-8")
    code, _out, err = run(capsys, "calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9",
                          "--profile", str(profile))
    assert code == 2
    one_error_line(err, "p.yaml:3: not valid YAML")


def test_a_5000_digit_number_in_keys_yaml_stops_the_app_with_one_line(tmp_path: Path) -> None:
    """keys.yaml is read when the app starts, so this runs at a (pseudo-)terminal."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "keys.yaml").write_text(f"next: {BIG}\n", encoding="utf-8")
    code, err = app_refusal(data)
    assert code == 2, err
    one_error_line(err, "keys.yaml:1: not valid YAML (number too long to read: 5,000 digits)")


def test_a_calculation_that_fails_in_python_says_so_in_the_projects_words() -> None:
    from studytui.calc.forms import _reason

    assert _reason(ValueError("Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; "
                              "use sys.set_int_max_str_digits() to increase the limit")) == "a number with too many digits"
    assert _reason(OverflowError("int too large to convert to float")) == "a number with too many digits"
    assert _reason(ValueError("math domain error\nsecond line")) == "math domain error"
    assert _reason(ValueError("\x1b]0;x" + "y" * 300)).startswith("\\x1b]0;x") and len(_reason(ValueError("y" * 300))) == 120


# --- 4. a --profile that is not a regular file ------------------------------------------------------
def test_a_profile_that_is_a_fifo_or_a_device_is_not_a_regular_file(tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    ops = content_dir(None) / "profiles" / "h200" / "ops-default-raw.csv"
    with deadline(30):
        for target in (str(fifo), "/dev/zero"):
            for argv in (["profile", str(ops), "--profile", target],
                         ["calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9", "--profile", target]):
                code, _out, err = run(capsys, *argv)
                assert code == 2, (argv, err)
                one_error_line(err, f"{target} is not a regular file")
                assert "not found" not in err
        code, _out, err = run(capsys, "calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9",
                              "--profile", str(tmp_path))
        one_error_line(err, "is a directory")
        code, _out, err = run(capsys, "calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9",
                              "--profile", str(tmp_path / "missing.yaml"))
        one_error_line(err, "not found")
