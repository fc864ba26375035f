"""`studytui glossary [TERM] [--json]` (issue 28): the app's glossary in a shell."""

from __future__ import annotations

import json

import pytest

from studytui.cli import COMMAND_MODULES, COMMANDS, main
from studytui.guide import load_guide


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_registered_as_a_command_module() -> None:
    assert "studytui.cli.commands.glossary" in COMMAND_MODULES
    assert COMMANDS["glossary"] == "studytui.cli.commands.glossary"


def test_lists_every_term_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    guide = load_guide(None)
    code, out, _ = cli(capsys, "glossary")
    assert code == 0
    positions = [out.index(t.term) for t in guide.glossary]
    assert positions == sorted(positions)
    assert f"{len(guide.glossary)} terms" in out


@pytest.mark.parametrize("query", ["TP", "tp", "tensor parallelism", "Tensor-Parallelism", "tensor-parallelism"])
def test_one_term_by_name_alias_or_id(capsys: pytest.CaptureFixture[str], query: str) -> None:
    code, out, _ = cli(capsys, "glossary", *query.split())
    assert code == 0
    assert out.startswith("Tensor parallelism")
    # Issue 28: one all-reduce after attention and one after the MLP, two per layer.
    text = " ".join(out.split())
    assert "one after the MLP block: two per layer" in text and "per forward pass" not in text
    assert "studytui show megatron-lm" in text


def test_wgmma_is_not_aliased_as_warpgroup(capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(cli(capsys, "glossary", "wgmma", "--json")[1])
    assert data["id"] == "wgmma" and "warpgroup" not in data["aliases"]
    assert data["see"][0] == {"id": "hopper-tuning-guide", "title": "Hopper Tuning Guide"}


def test_json_lists_every_term(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "glossary", "--json")
    data = json.loads(out)
    assert code == 0 and len(data) == len(load_guide(None).glossary)
    assert set(data[0]) == {"id", "term", "aliases", "definition", "see"}


@pytest.mark.parametrize("query, close", [("tensr parallelism", "Tensor parallelism"), ("parallelism", "Pipeline parallelism")])
def test_unknown_term_is_one_line_exit_2_with_close_matches(capsys: pytest.CaptureFixture[str], query: str, close: str) -> None:
    for extra in ((), ("--json",)):
        code, out, err = cli(capsys, "glossary", *query.split(), *extra)
        assert code == 2 and out == "" and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1 and close in err and "did you mean" in err


def test_an_empty_term_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "glossary", "  ")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_fits_80_columns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    from studytui.cli.output import console

    console.cache_clear()
    try:
        for argv in (("glossary",), ("glossary", "wgmma")):
            code, out, _ = cli(capsys, *argv)
            assert code == 0
            assert all(len(line) <= 80 for line in out.splitlines()), argv
    finally:
        console.cache_clear()
