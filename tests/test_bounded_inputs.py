"""Issue 24: bounded parsing and escapes. A YAML alias bomb (a "billion laughs" of ~400 bytes) in
any file studytui reads is one line and a quick exit, never minutes of CPU; files over their size
limit are refused before they are read; control and bidi characters from files and arguments never
reach the terminal raw."""

from __future__ import annotations

import asyncio
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from studytui.core import fileio, yamlio
from studytui.core.paths import content_dir


def _bomb_value(levels: int = 9, width: int = 9) -> str:
    """A flow sequence holding every level: &a [x*9], &b [*a*9], ... (9^9 values when walked)."""
    names = "abcdefghijklmnop"
    parts = ["&a [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, levels):
        parts.append(f"&{names[i]} [" + ", ".join([f"*{names[i - 1]}"] * width) + "]")
    return "[" + ", ".join(parts) + "]"


BOMB = _bomb_value()
HOSTILE = "\x1b]52;c;SGVsbG8=\x07\u202e"  # an OSC 52 clipboard write, then a right-to-left override
LIMIT_S = 8.0  # a bomb used to run past 20 s; the refusal takes well under a second


def _cli(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[int, str, str, float]:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "studytui.cli", *argv], capture_output=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})}, cwd=cwd)
    return (proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"),
            time.monotonic() - start)


def _one_line(code: int, err: str, elapsed: float, expect: int, needle: str) -> None:
    assert elapsed < LIMIT_S, f"took {elapsed:.1f} s"
    assert "Traceback" not in err, err
    assert code == expect, err
    assert err.count("\n") == 1 and err.startswith("studytui: error: "), err
    assert needle in err, err


# -- the loader ---------------------------------------------------------------------------------


def test_alias_bomb_is_refused_with_its_line() -> None:
    text = "a: 1\nb: " + BOMB + "\n"
    start = time.monotonic()
    with pytest.raises(yamlio.AliasError) as caught:
        yamlio.safe_load(text)
    with pytest.raises(yamlio.AliasError):
        yamlio.load_yaml(text)
    assert time.monotonic() - start < 1.0
    assert caught.value.problem_mark.line + 1 == 2
    assert "expand to more than 100,000 values" in yamlio.error_line(caught.value, "F")


def test_aliases_within_the_budget_load_as_before() -> None:
    text = "gpus: &gpus [h100, h200]\nfirst: {gpu: *gpus}\nsecond: {gpu: *gpus}\n"
    assert yamlio.safe_load(text) == yaml.safe_load(text)
    assert yamlio.load_yaml(text) == yaml.safe_load(text)
    five = _bomb_value(levels=5)  # 9^5 = 59,049 values: within the budget
    assert len(yamlio.safe_load("v: " + five + "\n")["v"]) == 5


def test_alias_loop_is_refused() -> None:
    with pytest.raises(yamlio.AliasError, match="contains it"):
        yamlio.safe_load("a: &x [1, *x]\n")
    with pytest.raises(yamlio.AliasError, match="contains it"):
        yamlio.safe_load("a: &x {b: *x}\n")


def test_shipped_content_has_no_alias_problem() -> None:
    for path in sorted(content_dir().rglob("*.yaml")):
        yamlio.safe_load(path.read_text(encoding="utf-8"))


# -- each place that reads YAML ------------------------------------------------------------------


def test_hardware_file_bomb_gpus_and_roofline(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "hardware").mkdir(parents=True)
    (data / "hardware" / "bomb.yaml").write_text(
        f"- id: bombgpu\n  vendor: x\n  name: {BOMB}\n  peak_tflops: {{bf16: 1}}\n  memory_bw_tbs: 1\n", encoding="utf-8")
    for argv in (["gpus"], ["calc", "roofline", "--gpu", "h200", "--flops", "1e12", "--bytes", "1e9"]):
        code, _out, err, elapsed = _cli(["--data-dir", str(data), *argv])
        _one_line(code, err, elapsed, 2, "bomb.yaml:3: YAML aliases here expand")


def _content_copy(tmp_path: Path) -> Path:
    target = tmp_path / "content"
    shutil.copytree(content_dir(), target)
    return target


def test_content_bomb_in_a_section(tmp_path: Path) -> None:
    content = _content_copy(tmp_path)
    section = sorted((content / "sections").glob("*.yaml"))[0]
    text = section.read_text(encoding="utf-8")
    changed = re.sub(r"(\n(\s+)- id: [^\n]+\n)", lambda m: m.group(1) + m.group(2) + "  tags: " + BOMB + "\n", text, count=1)
    assert changed != text
    section.write_text(changed, encoding="utf-8")
    code, _out, err, elapsed = _cli(["--content", str(content), "list"])
    _one_line(code, err, elapsed, 1, "YAML aliases here expand")
    assert section.name in err


def test_content_bomb_in_a_practice_file(tmp_path: Path) -> None:
    content = _content_copy(tmp_path)
    problems = sorted((content / "problems").glob("*.yaml"))[0]
    problems.write_text(problems.read_text(encoding="utf-8") + f"bomb: {BOMB}\n", encoding="utf-8")
    code, _out, err, elapsed = _cli(["--content", str(content), "--data-dir", str(tmp_path / "data"), "practice"])
    assert elapsed < LIMIT_S and "Traceback" not in err and code in (1, 2), err
    assert err.count("\n") == 1 and "YAML aliases here expand" in err and problems.name in err, err


def test_measured_profile_bomb(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(f"schema: studytui-measured-profile/1\nruns: {BOMB}\n", encoding="utf-8")
    code, _out, err, elapsed = _cli(["calc", "roofline", "--gpu", "h200-sxm", "--flops", "1e12", "--bytes", "1e9",
                                     "--profile", str(profile)], env={"STUDYTUI_DATA_DIR": str(tmp_path / "data")})
    _one_line(code, err, elapsed, 2, "p.yaml:2: YAML aliases here expand")


def test_vault_front_matter_bomb(tmp_path: Path) -> None:
    data, vault = tmp_path / "data", tmp_path / "vault"
    env = {"STUDYTUI_DATA_DIR": str(data)}
    from studytui.guide import load_guide

    first = load_guide().entries[0].id
    assert _cli(["note", first, "--text", "hello"], env)[0] == 0
    assert _cli(["export", str(vault), "--format", "vault"], env)[0] == 0
    note = next(p for p in vault.rglob("*.md") if f"\nid: {first}\n" in p.read_text(encoding="utf-8"))
    text = note.read_text(encoding="utf-8")
    note.write_text(text.replace("\nid: ", f"\nbomb: {BOMB}\nid: ", 1), encoding="utf-8")
    before = (data / "studytui.db").read_bytes()
    code, _out, err, elapsed = _cli(["import", str(vault)], env)
    _one_line(code, err, elapsed, 2, note.name)
    assert (data / "studytui.db").read_bytes() == before


def test_keys_yaml_bomb_is_one_line_at_a_terminal(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "keys.yaml").write_text(f"next: {BOMB}\n", encoding="utf-8")
    master, slave = pty.openpty()
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "studytui.cli", "--data-dir", str(data)],
                            stdin=slave, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    try:
        _, raw = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("keys.yaml with an alias bomb: the app neither started nor refused it")
    finally:
        os.close(master)
    err = raw.decode("utf-8", "replace")
    _one_line(proc.returncode, err, time.monotonic() - start, 2, "keys.yaml:1: YAML aliases here expand")


def test_keys_yaml_warnings_in_the_app_are_escaped_and_it_paints(tmp_path: Path) -> None:
    """A keys.yaml the app starts with (aliases within the budget, an id carrying an OSC 52 escape
    and a bidi override): the first screen paints in time, and the warnings it shows (on stderr
    and as notifications) carry no raw control character and no markup."""
    import io

    from studytui.guide import load_guide
    from studytui.store import open_store
    from studytui.tui.app import StudyApp
    from studytui.tui.launch import checked_keymap, show_key_warnings
    from studytui.tui.registry import build_registry

    data = tmp_path / "data"
    data.mkdir()
    (data / "keys.yaml").write_text(
        '"nxt\\e]52;c;SGVsbG8=\\a\\u202e[bold]": j\n'
        f"previous: {_bomb_value(levels=5)}\n"
        "search: slash\n", encoding="utf-8")
    registry = build_registry(plugin_modules=())
    start = time.monotonic()
    keymap, warnings = checked_keymap(data, registry)
    assert time.monotonic() - start < 2.0
    assert len(warnings) == 2 and all(len(w) < 400 for w in warnings), warnings
    store = open_store(data)
    shown: list[str] = []
    try:
        app = StudyApp(load_guide(), store, registry=registry, keymap=keymap, cursor_blink=False)
        stderr = io.StringIO()
        show_key_warnings(app, warnings, stderr)
        real_notify = app.notify

        def notify(message: str, **kw: object) -> None:
            assert kw.get("markup") is False
            shown.append(message)
            real_notify(message, **kw)

        app.notify = notify  # type: ignore[method-assign]

        async def run() -> None:
            async with app.run_test(size=(100, 30)) as pilot:
                deadline = time.monotonic() + 10
                while len(shown) < 2 and time.monotonic() < deadline:
                    await pilot.pause(0.05)
                from tests.tui.support import screen_text

                assert screen_text(app).strip(), "the first screen did not paint"

        start = time.monotonic()
        asyncio.run(run())
        assert time.monotonic() - start < 20
    finally:
        store.close()
    assert len(shown) == 2, shown
    for text in [*shown, stderr.getvalue()]:
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text, ascii(text)
    assert "\\x1b]52;c;SGVsbG8=\\x07\\u202e[bold]" in shown[0]


# -- size limits --------------------------------------------------------------------------------


def test_json_import_over_the_limit_is_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:  # sparse: 64 MiB + 1 byte without writing them
        handle.truncate(fileio.JSON_IMPORT_LIMIT + 1)
    data = tmp_path / "data"
    code, _out, err, elapsed = _cli(["import", str(big)], {"STUDYTUI_DATA_DIR": str(data)})
    _one_line(code, err, elapsed, 2, "larger than 64 MiB")
    assert "nothing was changed" in err


def test_json_import_limit_holds_for_stdin_and_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys) -> None:
    from studytui.cli import main

    monkeypatch.setattr(fileio, "JSON_IMPORT_LIMIT", 1024)
    monkeypatch.setenv("STUDYTUI_DATA_DIR", str(tmp_path / "data"))
    path = tmp_path / "export.json"
    path.write_text('{"format": "studytui-progress", "version": 1, "entries": []' + " " * 2000 + "}", encoding="utf-8")
    assert main(["import", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "larger than 1 KiB" in err, err
    monkeypatch.setattr(sys, "stdin", open(path, encoding="utf-8"))
    try:
        assert main(["import", "-"]) == 2
    finally:
        sys.stdin.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stdin" in err and "larger than 1 KiB" in err, err


def test_read_bounded_stops_past_the_limit_without_a_size(tmp_path: Path) -> None:
    """A device (no size to stat) is refused unread, also through a symlink (only regular files
    are read); a file that grew after the stat: the read stops at limit + 1."""
    with pytest.raises(fileio.NotRegularFileError, match="/dev/zero: not a regular file; not read"):
        fileio.read_bounded("/dev/zero", 1024, "a test file")
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(fileio.NotRegularFileError, match="zero.json: not a regular file; not read"):
        fileio.read_bounded(link, 1024, "a test file")
    small = tmp_path / "s.txt"
    small.write_bytes(b"x" * 1024)
    assert fileio.read_bounded(small, 1024, "a test file") == b"x" * 1024
    small.write_bytes(b"a\r\nb\rc\n")
    assert fileio.read_text_bounded(small, 1024, "a test file") == small.read_text(encoding="utf-8")


def test_yaml_file_over_the_limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(fileio, "YAML_LIMIT", 64 * 1024)  # the shipped files (26 KB at most) still fit
    data = tmp_path / "data"
    (data / "hardware").mkdir(parents=True)
    (data / "hardware" / "big.yaml").write_text("# " + "x" * 70_000 + "\n", encoding="utf-8")
    from studytui.calc.hardware import load_catalog
    from studytui.core.errors import UsageError

    with pytest.raises(UsageError, match=r"big.yaml: a hardware file is larger than 64 KiB"):
        load_catalog(data)


# -- escapes at a terminal ----------------------------------------------------------------------


def _at_pty(argv: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    """Run the CLI with stdout and stderr on a pseudo-terminal; (exit status, every byte it wrote)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "studytui.cli", *argv], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **env})
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=10)
    finally:
        os.close(master)
    return code, out


def _no_raw_controls(out: bytes) -> None:
    text = out.decode("utf-8", "replace")
    assert "\x07" not in text and "\u202e" not in text, ascii(text)
    assert "\x1b]" not in text, ascii(text)  # no OSC (Rich adds no colour: NO_COLOR)
    assert "\\x1b]52;c;SGVsbG8=\\x07\\u202e" in text, ascii(text)


def test_where_escapes_a_hostile_data_dir_at_a_terminal(tmp_path: Path) -> None:
    data = tmp_path / f"x{HOSTILE}"
    code, out = _at_pty(["--data-dir", str(data), "where"], {})
    assert code == 0, out
    _no_raw_controls(out)


def test_gpus_escapes_a_hostile_hardware_name_at_a_terminal(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "hardware").mkdir(parents=True)
    (data / "hardware" / "mine.yaml").write_text(
        '- id: mygpu\n  vendor: "v\\e]52;c;SGVsbG8=\\a\\u202e"\n  name: "x\\e]52;c;SGVsbG8=\\a\\u202e[blink]"\n'
        "  aliases: [\"al\\u202e\"]\n  peak_tflops: {bf16: 1}\n  memory_bw_tbs: 1\n", encoding="utf-8")
    for argv in (["gpus"], ["gpus", "mygpu"]):
        code, out = _at_pty(["--data-dir", str(data), *argv], {})
        assert code == 0, out
        _no_raw_controls(out)
        assert b"[blink]" in out  # shown as written, not read as markup


def test_one_escape_for_cli_and_app() -> None:
    from studytui.cli.output import one_line, visible
    from studytui.tui.format import control_pictures, visible_controls

    text = "a\tb\nc\x1b\x9b\x7f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069d"
    escaped = "c\\x1b\\x9b\\x7f\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069d"
    assert visible(text) == "a\tb\n" + escaped
    assert visible_controls(text) == "a\tb\n" + escaped
    assert one_line(text) == "a\\x09b\\x0a" + escaped
    assert len(control_pictures(text)) == len(text) and "\u202e" not in control_pictures(text)
