"""The command line at a terminal's default 80 columns (and at 120): nothing a learner needs is cut,
squeezed or broken (issue 23), and the small inconsistencies found on the way."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from studytui.cli import main
from studytui.core import paths
from studytui.guide import load_guide
from studytui.store import open_store

GUIDE = load_guide()
LONG_ID = max((e.id for e in GUIDE.entries), key=len)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(params=["80", "120"])
def columns(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("COLUMNS", request.param)
    return int(request.param)


@pytest.fixture
def at_80(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("COLUMNS", "80")
    return 80


def widest(text: str) -> int:
    return max((cell_len(line.rstrip()) for line in text.splitlines()), default=0)


def flat(text: str) -> str:
    return " ".join(text.split())


# -- history ------------------------------------------------------------------------------------


def test_history_shows_the_full_time_and_the_number_show_takes(capsys, columns) -> None:
    texts = ["first: " + "a long line of note text that cannot fit " * 3, "second", "third\nwith two lines"]
    for text in texts:
        assert run(capsys, "note", LONG_ID, "--text", text)[0] == 0
    code, out, err = run(capsys, "history", LONG_ID)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split()[:2] == ["N", "saved"]  # the header names the column --show N takes
    rows = [re.match(r"^\s*(\d+)\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s+(\d+)\s", line) for line in lines[2:5]]
    assert all(rows), out  # the number, the time to the second, the size: none of them cut
    assert [int(m.group(1)) for m in rows] == [1, 2, 3]
    assert [int(m.group(3)) for m in rows] == [len(t) for t in texts]
    assert "current" in lines[4]
    # The commands are whole on their lines (a terminal may fold them; nothing breaks them).
    assert f"studytui history {LONG_ID} --show N" in out and f"studytui history {LONG_ID} --restore N" in out
    for n, text in enumerate(texts, 1):  # N in the table is the N of --show
        assert run(capsys, "history", LONG_ID, "--show", str(n))[1] == text


# -- show ---------------------------------------------------------------------------------------


def test_show_prints_a_long_url_whole_on_one_line(capsys, columns) -> None:
    entry = max((e for e in GUIDE.entries if e.url), key=lambda e: len(e.url))
    assert len(entry.url) > 80  # the case that broke: a URL longer than the terminal
    code, out, err = run(capsys, "show", entry.id)
    assert code == 0, err
    assert any(entry.url in line for line in out.splitlines()), out
    related = next(e for e in GUIDE.entries if e.related_urls)
    out = run(capsys, "show", related.id)[1]
    for url in (related.url, *related.related_urls):
        assert any(url in line for line in out.splitlines()), url


def test_next_prints_a_long_url_whole_on_one_line(capsys, at_80) -> None:
    entries = list(GUIDE.entries)
    entry = max((e for e in entries if e.url), key=lambda e: len(e.url))
    run(capsys, "mark", entries[entries.index(entry) - 1].id, "done")  # next: the first pending one after it
    code, out, err = run(capsys, "next")
    assert code == 0 and entry.title in out, err
    assert entry.url in out.splitlines()


# -- list ---------------------------------------------------------------------------------------


def test_list_titles_are_not_squeezed(capsys, columns) -> None:
    code, out, err = run(capsys, "list")
    assert code == 0, err
    lines = out.splitlines()
    for e in GUIDE.entries:
        # At least 40 characters of the title on one line, and the id whole on one line.
        assert any(e.title[:40] in line for line in lines), e.title
        assert any(e.id in line.split() for line in lines), e.id
    assert widest(out) <= columns
    if columns >= 120:  # room for a table: an entry is one line with its id, state and title
        e = GUIDE.entries[0]
        assert any(e.id in line and "○ pending" in line and e.title[:30] in line for line in lines)


def test_list_at_80_columns_is_two_lines_an_entry(capsys, at_80) -> None:
    run(capsys, "note", GUIDE.entries[1].id, "--text", "n")
    out = run(capsys, "list", "--section", "0")[1]
    lines = out.splitlines()
    assert lines[0] == GUIDE.sections[0].title
    for e in GUIDE.sections[0].entries:
        i = next(i for i, line in enumerate(lines) if line.split() == [e.id])
        assert lines[i - 1].startswith("○ pending") and e.title[:40] in lines[i - 1]
    second = next(line for line in lines if GUIDE.entries[1].title[:40] in line)
    assert "✎" in second


# -- search -------------------------------------------------------------------------------------


def test_search_titles_are_not_squeezed(capsys, columns) -> None:
    hits = json.loads(run(capsys, "search", "attention", "--json")[1])
    code, out, err = run(capsys, "search", "attention")
    assert code == 0, err
    lines = out.splitlines()
    assert len(hits) == 10 and widest(out) <= columns, out
    assert "…" not in out
    for hit in hits:
        # At least 40 characters of the title on one line (was "Grouped-Qu…" squeezed at 80
        # columns), and the id whole on one line.
        assert any(hit["title"][:40] in line for line in lines), hit["title"]
        assert any(hit["id"] in line.split() for line in lines), hit["id"]
    if columns < 120:
        return
    # Where a table fits with whole titles, it stays a table: one line a hit.
    out = run(capsys, "search", "flashattention")[1]
    assert out.splitlines()[0].split() == ["id", "title", "section", "matched", "in"], out
    for hit in json.loads(run(capsys, "search", "flashattention", "--json")[1]):
        assert any(line.split()[:1] == [hit["id"]] and hit["title"] in line and hit["section"] in line for line in out.splitlines())


def test_search_at_80_columns_is_two_lines_a_hit(capsys, at_80) -> None:
    hits = json.loads(run(capsys, "search", "attention", "--json")[1])
    out = run(capsys, "search", "attention")[1]
    lines = out.splitlines()
    for rank, hit in enumerate(hits, 1):
        i = next(i for i, line in enumerate(lines) if line.split()[:1] == [f"{rank}."])
        assert hit["title"] in lines[i], out  # the rank and the whole title, then under the title
        assert lines[i + 1].split()[0] == hit["id"] and hit["section"] in flat(" ".join(lines[i + 1: i + 3]))
        assert lines[i + 1].index(hit["id"]) == lines[i].index(hit["title"])
    assert "Grouped-Query Attention" in out and "Grouped-Qu…" not in out and "matched in" in out


# -- gpus ---------------------------------------------------------------------------------------


def test_gpus_names_whole_on_one_line_and_nothing_over_the_width(capsys, columns) -> None:
    code, out, err = run(capsys, "gpus")
    assert code == 0, err
    data = json.loads(run(capsys, "gpus", "--json")[1])["accelerators"]
    lines = out.splitlines()
    assert widest(out) <= columns, out
    for acc in data:
        assert any(acc["name"] in line for line in lines), acc["name"]
        row = next(line for line in lines if line.split()[:1] == [acc["id"]])
        assert f"{acc['mem_bw'] / 1e12:g}" in row.split()  # the key figures beside the id
        for alias in acc["aliases"]:
            assert re.search(rf"(^|[ ,(]){re.escape(alias)}([,)]|$)", out, re.M), alias
    assert len(lines) <= 2 * len(data) + 6  # at most two lines a GPU (was 4 to 8 at 80 columns)


def _urls(text: str) -> set[str]:
    return {u.rstrip(".,;:)]}>'\"") for u in re.findall(r"https?://[^\s\"]+", text)}


def test_every_gpu_prints_every_url_whole_on_one_line(capsys, columns) -> None:
    """Every figure comes with its source: no URL in `gpus ID` is cut ("…") or broken across
    lines, at 80 columns and at 120 (the scale-out row cut its source URL at both)."""
    ids = [a["id"] for a in json.loads(run(capsys, "gpus", "--json")[1])["accelerators"]]
    assert len(ids) > 20
    for acc_id in ids:
        code, out, err = run(capsys, "gpus", acc_id)
        assert code == 0, err
        data = json.loads(run(capsys, "gpus", acc_id, "--json")[1])
        known = _urls(json.dumps(data))
        assert "…" not in out, (acc_id, out)
        printed = _urls(out)
        assert printed <= known, (acc_id, printed - known)  # a cut or broken URL is not one of the file's
        lines = out.splitlines()
        for url in [s for s in data["sources"] if s.startswith("https://")] + sorted(_urls(json.dumps(data.get("scale_out")))):
            assert any(url in line for line in lines), (acc_id, url)
        assert widest("\n".join(line for line in lines if "https://" not in line)) <= columns, out


def test_gpu_scale_out_source_is_a_reference_to_the_whole_url(capsys, at_80) -> None:
    out = run(capsys, "gpus", "b200")[1]
    lines = out.splitlines()
    row = next(i for i, line in enumerate(lines) if line.split()[:2] == ["scale-out", "network"])
    assert "source [1] below" in flat(" ".join(lines[row:row + 4]))
    i = next(i for i, line in enumerate(lines) if line.strip() == "- [1] scale-out network:")
    url = "https://docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html"
    assert lines[i + 1] == "    " + url  # whole, on a line of its own under its label
    assert lines.index("Sources") < i


def test_gpu_sources_keep_their_urls_whole(capsys, at_80) -> None:
    out = run(capsys, "gpus", "b300")[1]
    data = json.loads(run(capsys, "gpus", "b300", "--json")[1])
    for source in data["sources"]:
        if source.startswith("https://"):
            assert any(source in line for line in out.splitlines()), source


# -- calculators --------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [("calc", "--help"), ("calc", "kv", "--help"), ("calc", "occupancy", "--help"),
                                  ("calc", "roofline", "--help")])
def test_calc_help_fits_and_no_hint_is_cut(capsys, columns, argv) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    assert widest(out) <= columns, out
    assert "…" not in out
    text = flat(out)  # wrapped lines read back as one: every hint whole
    if argv[1] == "kv":
        assert "instead of a GPU's memory capacity, e.g. 80GiB" in text
        assert "model presets: deepseek-v3," in text and "qwen3-32b" in text
    if argv[1] == "roofline":
        assert "instead of one of flops/bytes" in text
    if argv[1] == "occupancy":
        assert "instead of a GPU: 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 12.0" in text
    assert "Flags the chosen inputs do not use are errors." in text


def test_calc_output_lines_fit_and_wrap_under_their_text(capsys, at_80) -> None:
    code, out, err = run(capsys, "calc", "roofline", "--flops", "1e12", "--bytes", "1e9", "--time", "1us", "--explain")
    assert code == 0, err
    assert widest(out) <= 80 and "…" not in out
    lines = out.splitlines()
    warning = next(i for i, line in enumerate(lines) if line.startswith("warning: physically impossible"))
    assert lines[warning + 1].startswith("  ") and lines[warning + 1].strip()  # continued under the text
    for line, after in zip(lines, lines[1:]):
        if line.startswith("  - ") and after.strip() and not after.startswith("  - "):
            assert after.startswith("    ")  # an assumption continues under its text, not at column 0


def test_calc_errors_are_one_whole_line(capsys, at_80) -> None:
    code, out, err = run(capsys, "calc", "kv", "--model", "llama-3-8b")
    assert code == 2 and err.count("\n") == 1
    assert "did you mean llama-3.1-8b" in err and "qwen3-32b" in err  # the whole message, on one line


def test_kv_puts_the_model_first(capsys, at_80) -> None:
    out = run(capsys, "calc", "kv", "--model", "deepseek-v3")[1]
    labels = [line.split("  ")[0] for line in out.splitlines()[1:4]]
    assert labels[0] == "model" and "equivalent GQA groups" in out
    assert out.index("equivalent GQA groups") > out.index("KV elements per token per layer")


def test_gemm_last_wave_agrees_in_number(capsys, at_80) -> None:
    one = run(capsys, "calc", "gemm", "--m", "128", "--n", "128", "--k", "128")[1]
    assert "last wave 1 tile (" in one
    many = run(capsys, "calc", "gemm", "--m", "4096", "--n", "4096", "--k", "4096")[1]
    assert "last wave 100 tiles (" in many


# -- small inconsistencies ----------------------------------------------------------------------


def test_reveal_without_a_value_shows_the_answer(capsys, at_80) -> None:
    problem = "sh-time-floor"
    code, out, err = run(capsys, "practice", "answer", problem, "--reveal")
    assert code == 0, err
    assert "Expected: " in out and "Solution" in out and "studytui calc " in out
    attempts = open_store().attempts()
    assert len(attempts) == 1 and not attempts[0].correct  # seen before a right answer: a miss, as in the app
    data = json.loads(run(capsys, "practice", "answer", problem, "--reveal", "--json")[1])
    assert data["id"] == problem and data["revealed"] is True and data["correct"] is None
    assert data["expected"]["text"] and data["solution"]


def test_answer_without_a_value_or_reveal_is_one_line_exit_2(capsys) -> None:
    code, out, err = run(capsys, "practice", "answer", "sh-time-floor")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--reveal" in err and "VALUE" in err
    assert open_store().attempts() == []


@pytest.mark.parametrize("key", ["0", "start-here", GUIDE.sections[0].id])
def test_list_section_takes_what_practice_takes(capsys, key) -> None:
    code, out, err = run(capsys, "list", "--section", key, "--json")
    assert code == 0, err
    assert [e["id"] for e in json.loads(out)] == [e.id for e in GUIDE.sections[0].entries]
    assert run(capsys, "practice", key)[0] == 0


def test_list_section_by_number_and_a_bad_one(capsys) -> None:
    code, out, _ = run(capsys, "list", "--section", "1", "--json")
    assert code == 0 and [e["id"] for e in json.loads(out)] == [e.id for e in GUIDE.sections[1].entries]
    code, out, err = run(capsys, "list", "--section", "nowhere")
    assert code == 2 and out == "" and err.count("\n") == 1 and "unknown section 'nowhere'" in err
    assert "0 for the first" in err
    assert "unknown section 'nowhere'" in run(capsys, "practice", "nowhere")[2]  # the same resolver


@pytest.mark.parametrize("name,fmt", [("backup.json", None), ("journal.md", None), ("cards.apkg", None), ("vault", "vault")])
def test_export_reports_the_absolute_path_for_every_format(capsys, tmp_path, monkeypatch, name, fmt) -> None:
    monkeypatch.chdir(tmp_path)
    run(capsys, "note", GUIDE.entries[0].id, "--text", "a note")
    code, out, err = run(capsys, "export", name, *(["--format", fmt] if fmt else []))
    assert code == 0, err
    assert f"Wrote {tmp_path.resolve() / name} (" in err, err


# -- where --------------------------------------------------------------------------------------


@pytest.fixture
def fake_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """studytui running from a source checkout at tmp_path/clone, with no data directory set."""
    clone = tmp_path / "clone"
    (clone / "content").mkdir(parents=True)
    (clone / ".git").mkdir()
    (clone / "pyproject.toml").write_text("[project]\nname = 'studytui'\n")
    monkeypatch.setattr(paths, "CHECKOUT_DIR", clone)
    monkeypatch.delenv(paths.DATA_ENV, raising=False)
    return clone


def test_where_warns_when_notes_live_in_the_checkout(capsys, fake_checkout, at_80) -> None:
    code, out, err = run(capsys, "where")
    assert code == 0, err
    assert f"data:    {fake_checkout / 'progress'}" in out
    # Filled to the width at word boundaries (was one 190-character line the terminal broke
    # mid-word), continued under the text after "warning: ", the command in it whole.
    warning = out[out.index("warning: "):out.index("back up: ")]
    assert flat(warning) == f"warning: {paths.CHECKOUT_WARNING}" and widest(warning) <= 80
    assert all(line.startswith(" " * 9) for line in warning.splitlines()[1:]) and len(warning.splitlines()) > 1
    assert any("`git clean -fdX`" in line for line in warning.splitlines())
    backup = out[out.index("back up: "):].split("\nwarning: ")[0]  # (a permissions warning may follow)
    assert flat(backup) == paths.BACKUP_HINT and widest(backup) <= 80
    assert "deleting the clone or `git clean -fdX` deletes your notes" in paths.CHECKOUT_WARNING
    assert "set STUDYTUI_DATA_DIR or --data-dir to keep them elsewhere" in paths.CHECKOUT_WARNING
    assert "studytui export FILE.json" in out
    data = json.loads(run(capsys, "where", "--json")[1])
    assert data["data_dir"] == str(fake_checkout / "progress")
    assert data["source_checkout"] is True and data["data_dir_in_checkout"] is True
    assert data["data_dir_warning"] == paths.CHECKOUT_WARNING
    # --data-dir inside the clone is just as much at risk
    assert "warning:" in run(capsys, "--data-dir", str(fake_checkout / "mine"), "where")[1]


def test_where_is_quiet_when_notes_live_elsewhere(capsys, fake_checkout, tmp_path) -> None:
    elsewhere = tmp_path / "notes"
    code, out, _ = run(capsys, "--data-dir", str(elsewhere), "where")
    assert code == 0 and "warning" not in out and "git clean" not in out
    data = json.loads(run(capsys, "--data-dir", str(elsewhere), "where", "--json")[1])
    assert data["data_dir_in_checkout"] is False and data["data_dir_warning"] is None


def test_where_outside_a_checkout_never_warns(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(paths, "CHECKOUT_DIR", tmp_path / "not-a-clone")
    assert paths.inside_checkout(tmp_path / "not-a-clone" / "progress") is False
    data = json.loads(run(capsys, "where", "--json")[1])
    assert data["source_checkout"] is False and data["data_dir_in_checkout"] is False


# -- import -------------------------------------------------------------------------------------


def test_import_report_is_filled_to_the_width_at_words(capsys, tmp_path, monkeypatch, at_80) -> None:
    for e in GUIDE.entries[:4]:
        run(capsys, "note", e.id, "--text", "a note on " + e.id)
    run(capsys, "practice", "answer", "sh-time-floor", "--reveal")
    assert run(capsys, "export", str(tmp_path / "backup.json"))[0] == 0
    monkeypatch.setenv(paths.DATA_ENV, str(tmp_path / "elsewhere"))
    code, out, err = run(capsys, "import", str(tmp_path / "backup.json"))
    assert code == 0, err
    lines = out.splitlines()
    # Was one line of about 115 characters; now two, the second under the text, and a count
    # never apart from what it counts.
    assert flat(out) == "Imported backup.json: 4 entries added, 0 states and 0 notes updated, 4 events added, 1 practice attempt added."
    assert widest(out) <= 80 and len(lines) == 2 and lines[1].startswith("  ")
    for phrase in ("4 entries added", "0 states and 0 notes updated", "4 events added", "1 practice attempt added."):
        assert any(phrase in line for line in lines), phrase


# -- guide diff ---------------------------------------------------------------------------------


def _changed_readme(tmp_path: Path) -> Path:
    from test_guide_diff import find, model, render  # the READMEs that file renders from the content

    o = model(GUIDE)
    mm = find(o, "kernel-optimization", "Matrix multiplication")["items"]
    mm.insert(0, {"id": "n", "title": "A New GEMM Paper on Tiles and Warps", "url": "https://arxiv.org/abs/2999.00001", "watch": False})
    deepgemm = next(i for i in mm if i["id"] == "deepgemm")
    mm.remove(deepgemm)
    find(o, "kernel-optimization", "Attention")["items"].append(deepgemm)
    find(o, "gpu-fundamentals", "Compilation and machine code")["title"] = "Compilation, PTX and machine code"
    path = tmp_path / "README.md"
    path.write_text(render(o), encoding="utf-8")
    return path


def test_guide_diff_wraps_each_difference_under_its_references(capsys, tmp_path, monkeypatch, at_80) -> None:
    _changed_readme(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "guide", "diff", "README.md")
    assert code == 1, err
    assert widest(out) <= 80, out  # was about 160 characters a line
    data = json.loads(run(capsys, "guide", "diff", "README.md", "--json")[1])
    lines = out.splitlines()
    for d in data["differences"]:
        # The README line, the content FILE:LINE and the kind whole on the first line; the
        # message under them with a hanging indent, the quoted titles whole.
        i = next(i for i, line in enumerate(lines) if line.split()[:2] == [f"README.md:{d['readme_line']}", d["content"]])
        assert lines[i].split()[2] == d["kind"], lines[i]
        body = []
        for line in lines[i + 1:]:
            if not line.startswith("    "):
                break
            body.append(line)
        assert flat(" ".join(body)) == d["message"]
        for title in re.findall(r"'[^']+'", d["message"]):
            assert any(title in line for line in body), title
    assert "'Compilation and machine code' -> 'Compilation, PTX and machine code'" in flat(out)
    assert "None" not in out
    # Where every difference fits on one line, it is one line with the columns aligned.
    monkeypatch.setenv("COLUMNS", "250")
    wide = run(capsys, "guide", "diff", "README.md")[1].splitlines()
    assert all(line.split()[:1] == [f"README.md:{d['readme_line']}"] for line, d in zip(wide, data["differences"]))


# -- practice, next, show: commands whole --------------------------------------------------------


def test_practice_list_keeps_the_next_command_whole(capsys, at_80) -> None:
    code, out, err = run(capsys, "practice", "0")
    assert code == 0, err
    assert "Next: studytui practice show ID" in out.splitlines()  # was "... Next: studytui practice" / "show ID"
    assert widest(out) <= 80 and "…" not in out


def test_next_and_show_keep_their_commands_whole(capsys, at_80) -> None:
    entry = GUIDE.get(LONG_ID)
    run(capsys, "mark", GUIDE.entries[GUIDE.entries.index(entry) - 1].id, "done")
    out = run(capsys, "next")[1]
    assert entry.title in out
    tail = out.splitlines()[-2:]  # the command whole on its line, the other states under it
    assert tail == [f"When you are done: studytui mark {LONG_ID} done", "(or learning, skipped)"], out
    out = run(capsys, "show", LONG_ID)[1]
    assert any(f"studytui open {LONG_ID})" in line for line in out.splitlines()), out
    assert any(f"studytui note {LONG_ID} --text ... adds one)" in line for line in out.splitlines()), out


def test_solution_steps_continue_under_themselves(capsys, at_80) -> None:
    out = run(capsys, "practice", "answer", "sh-time-floor", "--reveal")[1]
    lines = out.splitlines()
    start = lines.index("Solution")
    steps = [line for line in lines[start + 1:] if not line.startswith("Check it:")]
    assert any(line.startswith("    ") for line in steps)  # a long step continues indented
    assert all(cell_len(line) <= 80 for line in steps if "studytui calc" not in line)


# -- calc occupancy --sweep ---------------------------------------------------------------------


@pytest.mark.parametrize("axis,header", [("regs", "registers"), ("threads", "threads"), ("smem", "dynamic smem")])
def test_occupancy_sweep_is_a_table_that_fits(capsys, at_80, axis, header) -> None:
    code, out, err = run(capsys, "calc", "occupancy", "--cc", "9.0", "--threads", "256", "--regs", "64", "--smem", "0",
                         "--sweep", axis)
    assert code == 0, err
    assert widest(out) <= 80 and "…" not in out
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("Sweep over "))
    assert lines[i + 1].split()[:1] == header.split()[:1] and "limited by" in lines[i + 2]  # headers whole
    points = json.loads(run(capsys, "calc", "occupancy", "--cc", "9.0", "--threads", "256", "--regs", "64", "--smem", "0",
                            "--sweep", axis, "--json")[1])["sweep"]["points"]
    rows = lines[i + 3:i + 3 + len(points)]
    for row, p in zip(rows, points):
        assert row.split()[:4] == [f"{p[axis]:,}", str(p["blocks_per_sm"]), str(p["active_warps"]), f"{p['occupancy']:.1%}"]
        assert row.endswith("<- now") == p["current"]
        assert " ".join(row.removesuffix("<- now").split()[4:]) == p["limited_by"]
    assert not any(line.startswith("sweep ") for line in lines)  # not also as rows of the main table


# -- progress -----------------------------------------------------------------------------------


def test_progress_names_are_whole(capsys, columns) -> None:
    run(capsys, "mark", GUIDE.entries[0].id, "done")
    code, out, err = run(capsys, "progress")
    assert code == 0, err
    assert "…" not in out and widest(out) <= columns
    lines = out.splitlines()
    for section in GUIDE.sections:
        assert any(line.startswith(section.title) for line in lines), section.title  # was "Start here: the minim…"
    done = next(i for i, line in enumerate(lines) if line.startswith(GUIDE.sections[0].title))
    assert "█" in lines[done]  # the bar beside the whole name
    counts = lines[done] if columns >= 120 else lines[done + 1]  # the counts too, or under them at 80
    n = len(GUIDE.sections[0].entries)
    assert counts.split()[-5:] == ["1", "0", "0", str(n - 1), str(n)]
    if columns < 120:
        assert lines[1].split() == ["done", "skipped", "learning", "pending", "total"]


@pytest.mark.parametrize("argv", [("practice",), ("practice", "start here")])
def test_practice_list_never_cuts_an_id_or_a_date(capsys, columns, argv) -> None:
    """Every shipped problem id whole (it is what 'practice show ID' takes), with its date,
    at 80 columns too, where the titles wrap under themselves instead; each answered once, so
    every section has its date column."""
    from studytui.practice.loader import load_problems

    problems = load_problems(GUIDE.content_dir).problems
    store = open_store(paths.data_dir(None))
    for i, p in enumerate(problems):
        store.record_attempt(p.id, 0, "1", i % 2 == 0, 0.5)
    store.close()
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert widest(out) <= columns and "…" not in out
    shown = [p for p in problems if argv[1:] == () or p.section_id == "start-here"]
    assert shown
    tokens = set(out.split())
    for p in shown:
        assert p.id in tokens, p.id
    dates = re.findall(r"next (\S+)$", out, re.M)
    assert len(dates) + len(re.findall(r"  due$", out, re.M)) == len(shown)  # one each, at the end of its line
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d", d) for d in dates), dates


def test_practice_rows_put_a_long_id_on_its_own_line_where_columns_do_not_fit() -> None:
    from studytui.cli.commands.practice import problem_rows

    items = [("✓", "di-latency-bandwidth-crossover", "Where latency stops and bandwidth starts to matter", "next 2026-12-09")]
    wide = [line.plain for line in problem_rows(items, 120)]
    assert wide == ["✓ di-latency-bandwidth-crossover  Where latency stops and bandwidth starts to matter  next 2026-12-09"]
    narrow = [line.plain for line in problem_rows(items, 50)]
    assert narrow[0] == "✓ di-latency-bandwidth-crossover  next 2026-12-09"
    assert all(cell_len(line) <= 50 for line in narrow) and " ".join(" ".join(narrow[1:]).split()) == items[0][2]
    narrower = [line.plain for line in problem_rows(items, 40)]
    assert narrower[:2] == ["✓ di-latency-bandwidth-crossover", "    next 2026-12-09"]
    assert all(cell_len(line) <= 40 for line in narrower)


def test_progress_prints_the_percent_the_app_header_shows(capsys, columns) -> None:
    """Review finding: 4 of 137 covered was 3% in `studytui progress` (rounded) and 2% in the app's
    header (floored). One rule, studytui.core.text.percent, for both."""
    from studytui.core.text import percent
    from studytui.tui.format import percent as header_percent

    for entry in GUIDE.entries[:4]:
        assert run(capsys, "mark", entry.id, "done")[0] == 0
    code, out, err = run(capsys, "progress")
    assert code == 0, err
    total = len(GUIDE.entries)
    expected = percent(4, total)
    assert expected == header_percent(4, total) == f"{100 * 4 // total}%"
    all_row = next(line for line in out.splitlines() if line.startswith("All"))
    assert f" {expected} " in f"{all_row} ", all_row


def _every_parser(parser):
    import argparse

    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from _every_parser(child)


def test_no_help_line_splits_a_choice_or_a_word(at_80) -> None:
    """Review finding: `calc transformer --help` at 80 columns broke `[...|fp4|int` / `8|int4|...]`
    and `block-` / `scaled`. Every parser's help (every command, every calculator): a line ends
    inside a choice list only after a `|`, and never after a hyphen inside a word."""
    from studytui.cli import build_parser

    checked = 0
    for parser in _every_parser(build_parser(None)):
        text = parser.format_help()
        lines = text.splitlines()
        for line, following in zip(lines, lines[1:] + [""]):
            assert cell_len(line) <= 80 or " " not in line.strip(), (parser.prog, line)
            opened = line.rfind("[")
            inside = opened > line.rfind("]") and "|" in line[opened:]
            if inside:  # the list goes on on the next line: broken after a bar, the next choice whole
                assert line.endswith("|"), (parser.prog, line, following)
            assert not re.search(r"\w-$", line) or following.strip().startswith("-"), (parser.prog, line, following)
        checked += 1
    assert checked > 20
    transformer = next(p for p in _every_parser(build_parser(None)) if p.prog.endswith("calc transformer"))
    help_text = transformer.format_help()
    for dtype in ("int8", "int4", "mxint8", "fp16"):
        assert re.search(rf"[\[|]{dtype}[|\]]", help_text), dtype
    assert "block-scaled" in help_text


def test_help_lines_break_only_at_spaces_and_bars() -> None:
    from studytui.cli.parsing import help_lines

    text = "KV precision [fp64|fp32|tf32|bf16|fp16|fp8|fp6|fp4|int8|int4|nvfp4|mxfp8] (default bf16)"
    lines = help_lines(text, 30)
    assert all(len(line) <= 30 for line in lines) and " ".join(lines).replace("| ", "|") == text
    assert all(line.endswith("|") for line in lines if "[" in line and "]" not in line)
    assert help_lines("a weight-dtype that is block-scaled", 12) == ["a", "weight-dtype", "that is", "block-scaled"]


def test_calc_help_neither_points_at_itself_nor_calls_every_figure_a_vendor_peak(at_80) -> None:
    from studytui.cli import build_parser

    for parser in _every_parser(build_parser(None)):
        if " calc " not in f"{parser.prog} ":
            continue
        text = " ".join(parser.format_help().split())
        assert f"see '{parser.prog} --help'" not in text, parser.prog
        if "--profile" in text:
            assert "Every GPU figure is a vendor peak" not in text
            assert "vendor peaks, not measurements, unless --profile gives measured ceilings" in text
    transformer = next(p for p in _every_parser(build_parser(None)) if p.prog.endswith("calc transformer"))
    text = " ".join(transformer.format_help().split())
    assert "preset id (listed under 'model presets' below)" in text and "model presets: " in text


def _at_a_terminal(*argv: str) -> bytes:
    """What `studytui ARGV` writes to a terminal (a pseudo-terminal as its stdout)."""
    import os
    import pty
    import subprocess
    import sys

    main_fd, child_fd = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "studytui", *argv], stdout=child_fd, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "80", "NO_COLOR": "1"})
        os.close(child_fd)
        child_fd = -1
        out = b""
        while True:
            try:
                chunk = os.read(main_fd, 4096)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            out += chunk
        assert proc.wait(timeout=60) == 0
        return out
    finally:
        if child_fd >= 0:
            os.close(child_fd)
        os.close(main_fd)


@pytest.mark.parametrize("text", ["one line, no newline", "two\nlines", "ends with one\n"])
def test_a_note_printed_at_a_terminal_ends_its_line(capsys, text) -> None:
    """Review finding: the shell prompt must not land on the note's last line. At a terminal
    `note ID` and `show ID` end on a new line; a pipe gets the note's bytes as stored."""
    data = str(paths.data_dir(None))
    assert run(capsys, "note", LONG_ID, "--text", text)[0] == 0
    note = _at_a_terminal("--data-dir", data, "note", LONG_ID)
    assert note.replace(b"\r\n", b"\n") == (text if text.endswith("\n") else text + "\n").encode()
    shown = _at_a_terminal("--data-dir", data, "show", LONG_ID)
    assert shown.replace(b"\r\n", b"\n").endswith(text.rstrip("\n").encode() + b"\n")
    assert run(capsys, "note", LONG_ID)[1] == text  # not a terminal: as stored
