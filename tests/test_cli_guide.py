"""The read-only commands: list, show, search, open, where, --version, and their errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from studytui import __version__
from studytui.cli import main
from studytui.guide import load_guide

REQUIRED_KEYS = {"id", "title", "url", "kind", "section", "subsection", "summary", "tags"}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_list_json_in_guide_order(capsys):
    code, out, _ = run(capsys, "list", "--json")
    data = json.loads(out)
    assert code == 0
    assert [d["id"] for d in data] == [e.id for e in load_guide().entries]
    assert all(REQUIRED_KEYS <= set(d) for d in data)


def test_list_section_filter(capsys):
    code, out, _ = run(capsys, "list", "--section", "2", "--json")
    data = json.loads(out)
    assert code == 0 and data and {d["section"] for d in data} == {"2. Kernel optimization"}
    code, out, _ = run(capsys, "list", "--section", "frontier", "--json")
    assert {d["section"] for d in json.loads(out)} == {"Frontier"}


def test_list_human(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")  # titles on one line (at 80 columns they wrap in their column)
    code, out, _ = run(capsys, "list")
    assert code == 0 and "Attention Is All You Need" in out and "2. Kernel optimization" in out
    assert "○ pending" in out


def test_show_json_and_human(capsys):
    code, out, _ = run(capsys, "show", "stream-k", "--json")
    data = json.loads(out)
    assert code == 0 and data["url"] == "https://arxiv.org/abs/2301.03598" and data["year"] == 2023
    code, out, _ = run(capsys, "show", "stream-k")
    assert code == 0 and "Stream-K" in out and "https://arxiv.org/abs/2301.03598" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["show", "no-such-entry"], "unknown entry id 'no-such-entry'"),
        (["show", "stream"], "unknown entry id 'stream'"),
        (["open", "no-such-entry"], "unknown entry id"),
        (["list", "--section", "99"], "unknown section '99'"),
        (["search", "roofline", "--limit", "0"], "must be at least 1"),
        (["search", "roofline", "--limit", "ten"], "expected a whole number"),
        (["search", "---"], ""),
        (["nonsense-command"], "invalid choice"),
        (["show"], "required"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, needle):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    if argv == ["search", "---"]:
        # a query with no words is answered, not crashed on
        assert code in (0, 2)
        return
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_unknown_id_suggests_close_match(capsys):
    code, _, err = run(capsys, "show", "flashattention-3x")
    assert code == 2 and "did you mean" in err


def test_search_json_best_first(capsys):
    code, out, _ = run(capsys, "search", "roofline", "--json", "--limit", "3")
    data = json.loads(out)
    assert code == 0 and len(data) <= 3 and data[0]["id"] == "roofline-paper"
    assert REQUIRED_KEYS <= set(data[0])


def test_search_finds_notes(capsys):
    assert main(["note", "gqa", "--text", "zanzibar quokka remark"]) == 0
    capsys.readouterr()
    code, out, _ = run(capsys, "search", "quokka", "--json")
    data = json.loads(out)
    assert code == 0 and data and data[0]["id"] == "gqa" and "notes" in data[0]["matched"]


def test_where(capsys, isolated_data_dir):
    code, out, _ = run(capsys, "where", "--json")
    data = json.loads(out)
    assert code == 0 and data["data_dir"] == str(isolated_data_dir)
    assert data["content_dir"].endswith("content")


def test_where_prefers_flag_over_env(capsys, tmp_path):
    code, out, _ = run(capsys, "--data-dir", str(tmp_path / "mine"), "where")
    assert code == 0 and str(tmp_path / "mine") in out


class FakeBrowser:
    def __init__(self) -> None:
        self.opened: list[str] = []

    def __call__(self, url: str) -> bool:
        self.opened.append(url)
        return True


@pytest.fixture
def fake_browser(monkeypatch):
    import webbrowser

    fake = FakeBrowser()
    monkeypatch.setattr(webbrowser, "open", fake)
    return fake


def test_open_over_ssh_prints_url_never_calls_browser(capsys, monkeypatch, fake_browser):
    monkeypatch.setenv("SSH_CONNECTION", "10.0.0.1 5000 10.0.0.2 22")
    monkeypatch.setenv("DISPLAY", ":0")
    code, out, err = run(capsys, "open", "roofline-paper")
    assert code == 0 and fake_browser.opened == []
    assert "https://www2.eecs.berkeley.edu/Pubs/TechRpts/2008/EECS-2008-134.html" in out
    assert "SSH" in err


def test_open_without_display_on_linux_prints_url(capsys, monkeypatch, fake_browser):
    for var in ("SSH_CONNECTION", "SSH_TTY", "SSH_CLIENT", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    code, out, err = run(capsys, "open", "gqa")
    assert code == 0 and fake_browser.opened == [] and "arxiv.org/abs/2305.13245" in out
    assert "display" in err


def test_open_with_local_browser(capsys, monkeypatch, fake_browser):
    for var in ("SSH_CONNECTION", "SSH_TTY", "SSH_CLIENT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    code, out, _ = run(capsys, "open", "gqa")
    assert code == 0 and fake_browser.opened == ["https://arxiv.org/abs/2305.13245"]
    # opening the source starts learning a pending entry
    assert main(["progress", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["learning"] == 1


def test_open_watchlist_item_without_url(capsys):
    guide = load_guide()
    item = next(e for e in guide.entries if e.url is None)
    code, _, err = run(capsys, "open", item.id)
    assert code == 2 and "has no source URL" in err


def test_module_entry_point_runs_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "studytui.cli", "show", "nope"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_the_calculators_parsers_are_built_only_for_calc(capsys):
    """Start-up: a command other than `calc` does not build the calculators' flags; `calc` and
    the top-level help still have everything."""
    import argparse

    from studytui.cli import build_parser

    def calc_parser(parser):
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return commands.choices["calc"]

    assert calc_parser(build_parser(["progress"])).description is None  # a name and its help only
    assert "roofline" in calc_parser(build_parser(["calc", "roofline"])).format_help()
    assert "roofline" in calc_parser(build_parser()).format_help()
    for argv, shown in ((["--help"], "gpus"), (["calc", "roofline", "--help"], "--gpu")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 0 and shown in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        main(["--data-dir", "calc", "calc", "nosuch"])
    assert stop.value.code == 2 and "nosuch" in capsys.readouterr().err
