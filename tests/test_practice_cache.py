"""The kept practice problems (issue 27): used while nothing changed, never stale, never trusted blindly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studytui.core import jsoncache
from studytui.core.errors import ContentError
from studytui.core.paths import content_dir
from studytui.practice import cache, loader
from studytui.practice.loader import load_problems, parse_problems
from studytui.practice.model import GivenSpec, Problem
from tests.support import corrupt_cache_file

CONTENT = content_dir()
FIRST = "00-start-here.yaml"


@pytest.fixture()
def content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped problems, cached at once in this process (RACY_S: 0; a new process
    sees the copy as just changed and does not write the cache, but reads it)."""
    root = tmp_path / "content"
    root.mkdir()
    shutil.copytree(CONTENT / "problems", root / "problems")
    monkeypatch.setattr(jsoncache, "RACY_S", 0.0)
    loader._LOADED.clear()
    yield root.resolve()
    loader._LOADED.clear()


def _kept_file(root: Path) -> Path:
    return jsoncache.value_file(cache.value_name(root))


def _fresh_process_load(root: Path) -> dict:
    """Load the problems in a new process: ids, the first title, and whether the YAML reader loaded."""
    code = (
        "import sys, json; from studytui.practice.loader import load_problems; s = load_problems(sys.argv[1]); "
        "print(json.dumps({'ids': [p.id for p in s.problems], 'title': s.problems[0].title, "
        "'yaml': 'yaml' in sys.modules or 'studytui.core.yamlio' in sys.modules}))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _set_first_title(root: Path, title: str) -> None:
    path = root / "problems" / FIRST
    old = parse_problems(root).problems[0].title
    text = path.read_text(encoding="utf-8")
    assert f"title: {old}\n" in text
    path.write_text(text.replace(f"title: {old}\n", f"title: {title}\n", 1), encoding="utf-8")


def test_the_schema_names_every_field_of_the_model() -> None:
    assert [name for name, _ in cache.PROBLEM_SCHEMA] == list(Problem._fields)
    assert [name for name, _ in cache.GIVEN_SCHEMA] == list(GivenSpec._fields)
    from studytui.practice.given import SOURCES

    assert cache.GIVEN_SOURCES == SOURCES  # kept here so a warm load need not import the figures' module


def test_a_cold_cache_parses_and_keeps_the_problems_then_a_warm_one_reads_no_yaml(content: Path) -> None:
    assert not _kept_file(content).exists()
    cold = load_problems(content)
    assert _kept_file(content).is_file()
    parsed = parse_problems(content)
    assert cold.problems == parsed.problems and not cold.errors
    kept = cache.read(content)
    assert kept is not None and kept[0] == parsed.problems  # every field rebuilt as the loader built it
    warm = _fresh_process_load(content)
    assert warm == {"ids": [p.id for p in parsed.problems], "title": parsed.problems[0].title, "yaml": False}


def test_a_warm_set_keeps_where_each_problem_came_from(content: Path) -> None:
    parsed = parse_problems(content)
    load_problems(content)
    loader._LOADED.clear()
    warm = load_problems(content)
    assert not warm.files  # from the cache: no YAML was read
    for cold, kept in zip(parsed.problems, warm.problems):
        assert (kept.source_file, kept.index) == (cold.source_file, cold.index)
        # what `check` turns into FILE:LINE when a problem needs a message
        assert parsed.files[kept.source_file].line_of(("problems", kept.index, "id")) > 0


def test_the_same_set_while_nothing_changed_in_this_process(content: Path) -> None:
    first = load_problems(content)
    assert load_problems(content) is first
    os.utime(content / "problems" / FIRST)
    assert load_problems(content) is not first


def test_an_edited_problem_is_never_served_stale(content: Path) -> None:
    load_problems(content)
    _set_first_title(content, "A title edited by an author")
    assert load_problems(content).problems[0].title == "A title edited by an author"  # in this process
    assert _fresh_process_load(content)["title"] == "A title edited by an author"  # and in the next


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(content: Path) -> None:
    path = content / "problems" / FIRST
    before = load_problems(content).problems[0].title
    # The file system stamps ctime from a coarse clock (a few ms on ext4): let it tick past the
    # copy's ctime, as the cache's 2 s settle time (RACY_S, 0 in these tests) does for real.
    time.sleep(0.05)
    st = path.stat()
    swapped = before[::-1] if before[::-1] != before else before.upper()
    path.write_text(path.read_text(encoding="utf-8").replace(f"title: {before}\n", f"title: {swapped}\n", 1), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the mtime put back: the ctime still moved
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert load_problems(content).problems[0].title == swapped
    assert _fresh_process_load(content)["title"] == swapped


NEW_FILE = """\
section: start-here
problems:
  - id: zz-added-later
    title: Added after the cache was written
    entries: [roofline-paper]
    question: Ridge point of the H100?
    calc: {name: roofline, args: {gpu: h100, intensity: 1}, answer: ridge_point}
    unit: FLOP/B
    notice: Peaks over bandwidth.
    skill: ridge-point
    by_hand: '989e12 / 3.35e12'
"""


def test_an_added_or_removed_problem_file_is_seen(content: Path) -> None:
    before = [p.id for p in load_problems(content).problems]
    (content / "problems" / "99-added.yaml").write_text(NEW_FILE, encoding="utf-8")
    added = [p.id for p in load_problems(content).problems]
    assert added == [*before, "zz-added-later"]
    assert _fresh_process_load(content)["ids"] == added
    (content / "problems" / "99-added.yaml").unlink()
    removed = sorted((content / "problems").glob("*.yaml"))[-1]
    removed.unlink()
    gone = {p.id for p in parse_problems(content).problems}
    assert [p.id for p in load_problems(content).problems] == [i for i in before if i in gone]
    assert _fresh_process_load(content)["ids"] == [i for i in before if i in gone]


def test_a_file_replaced_by_a_rename_is_seen(content: Path) -> None:
    load_problems(content)
    path = content / "problems" / FIRST
    new = path.with_name("new.tmp")
    old = parse_problems(content).problems[0].title
    new.write_text(path.read_text(encoding="utf-8").replace(f"title: {old}\n", "title: Renamed into place\n", 1), encoding="utf-8")
    os.replace(new, path)
    assert _fresh_process_load(content)["title"] == "Renamed into place"


def test_a_problem_with_an_error_is_never_kept_and_check_names_its_line(content: Path) -> None:
    load_problems(content)
    path = content / "problems" / FIRST
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("    skill: ", "    skil: ", 1), encoding="utf-8")
    with pytest.raises(ContentError) as raised:
        load_problems(content)
    assert any(f"problems/{FIRST}:" in message and "unknown field 'skil'" in message for message in raised.value.problems)
    assert cache.read(content) is None  # the kept set no longer matches the files, and no new one was written
    with pytest.raises(ContentError):
        load_problems(content)


@pytest.mark.parametrize("how", ["truncated", "a flipped byte", "garbage", "empty"])
def test_a_corrupt_cache_file_is_rebuilt_not_trusted(content: Path, how: str) -> None:
    good = load_problems(content).problems
    corrupt_cache_file(_kept_file(content), how)
    assert cache.read(content) is None
    loader._LOADED.clear()
    assert load_problems(content).problems == good
    assert cache.read(content) is not None  # written again, valid


def _forge(path: Path, change, table: str = "columns") -> None:
    """Rewrite the payload with `change` applied and a correct digest: what a hostile writer could do."""
    head, _, payload = path.read_bytes().partition(b"\n")
    header = json.loads(head)
    data = json.loads(payload)
    change(data[table])
    payload = json.dumps(data).encode()
    header["bytes"], header["blake2b"] = len(payload), jsoncache.digest_hex(payload)
    path.write_bytes(json.dumps(header).encode() + b"\n" + payload)


def _first_with(columns: dict, name: str) -> int:
    return next(i for i, v in enumerate(columns[name]) if v)


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c["title"].__setitem__(0, "\x1b]0;owned\x07 title"),  # a terminal escape
        lambda c: c["hints"][_first_with(c, "hints")].__setitem__(0, "\x9b2J"),  # a C1 control
        lambda c: c["tolerance"].__setitem__(0, "0.05"),  # the wrong type
        lambda c: c["tolerance"].__setitem__(0, 5.0),  # out of the loader's range
        lambda c: c["index"].__setitem__(0, True),
        lambda c: c["entries"].__setitem__(0, [1, 2]),
        lambda c: c["kind"].__setitem__(0, "essay"),  # outside the loader's vocabulary
        lambda c: c["unit"].__setitem__(0, "furlongs"),
        lambda c: c["id"].__setitem__(1, c["id"][0]),  # an id used twice
        lambda c: c["params"][_first_with(c, "params")].__setitem__("gpu", []),  # a parameter with no values
        lambda c: c["calc_args"].__setitem__(0, {"gpu": [1]}),
        lambda c: c["given"][_first_with(c, "given")].__setitem__(0, ["gpu", "x", [], "", "", ""]),
        lambda c: c.pop("notice"),  # a field missing
        lambda c: c["title"].pop(),  # a column of the wrong length
        lambda c: c.__setitem__("extra", []),
    ],
    ids=["escape", "c1", "type", "range", "bool-index", "list-type", "kind", "unit", "duplicate-id", "no-values",
         "nested-arg", "given-shape", "missing", "length", "extra-key"],
)
def test_a_hostile_cache_with_a_valid_digest_is_rebuilt(content: Path, change) -> None:
    good = load_problems(content).problems
    _forge(_kept_file(content), change)
    assert cache.read(content) is None
    loader._LOADED.clear()
    assert load_problems(content).problems == good


def test_a_non_finite_number_in_a_forged_cache_is_refused(content: Path) -> None:
    load_problems(content)
    path = _kept_file(content)
    head, _, payload = path.read_bytes().partition(b"\n")
    data = json.loads(payload)
    data["columns"]["tolerance"][0] = float("nan")  # json.dumps writes NaN, which json.loads reads back
    payload = json.dumps(data).encode()
    header = json.loads(head)
    header["bytes"], header["blake2b"] = len(payload), jsoncache.digest_hex(payload)
    path.write_bytes(json.dumps(header).encode() + b"\n" + payload)
    assert cache.read(content) is None


def test_problems_changed_in_the_last_seconds_are_not_kept(content: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsoncache, "RACY_S", 2.0)
    os.utime(content / "problems" / FIRST)  # just now
    load_problems(content)
    assert not _kept_file(content).exists()
    assert load_problems(content) is not load_problems(content)  # not kept in the process either: parsed each time


def test_no_problems_folder_is_an_empty_set(tmp_path: Path) -> None:
    loader._LOADED.clear()
    assert load_problems(tmp_path).problems == ()
    (tmp_path / "problems").mkdir()
    (tmp_path / "problems" / "00-one.yaml").write_text(NEW_FILE, encoding="utf-8")
    assert [p.id for p in load_problems(tmp_path).problems] == ["zz-added-later"]


def test_a_cache_directory_that_cannot_be_written_only_costs_speed(content: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the cache directory would go")
    monkeypatch.setenv("STUDYTUI_CACHE_DIR", str(blocked))
    assert load_problems(content).problems == parse_problems(content).problems


def test_the_code_that_builds_the_set_is_part_of_its_key() -> None:
    for name in ("practice/loader.py", "practice/model.py", "practice/answers.py", "practice/given.py",
                 "practice/cache.py", "core/yamlio.py"):
        assert name in cache.CODE_FILES
        assert (Path(loader.__file__).parent.parent / name).is_file()


# -- the heads (what the lists read), kept beside the whole set --------------------------------------


def _heads_file(root: Path) -> Path:
    return jsoncache.value_file(cache.index_name(root))


def test_the_heads_are_kept_with_the_set_and_a_warm_list_decodes_no_question(content: Path) -> None:
    whole = load_problems(content).problems
    assert _heads_file(content).is_file()
    kept = cache.read_heads(content)
    assert kept is not None and kept[0] == tuple(p.head for p in whole)
    loader._LOADED.clear()
    warm = load_problems(content)
    assert warm._problems is None  # started from the heads alone
    assert warm.heads == tuple(p.head for p in whole)
    assert warm.heads_for_section(whole[0].section_id) == [p.head for p in whole if p.section_id == whole[0].section_id]
    assert warm.head(whole[-1].id) == whole[-1].head and warm.head("no-such-problem") is None
    assert warm._problems is None
    assert warm.problems == whole and warm.get(whole[-1].id) == whole[-1]  # the whole set, when asked


def test_the_list_commands_read_only_the_heads(content: Path, tmp_path: Path, capsys) -> None:
    from studytui.cli import main

    guide_copy = tmp_path / "guide"
    shutil.copytree(CONTENT, guide_copy, ignore=shutil.ignore_patterns("problems"))
    shutil.copytree(content / "problems", guide_copy / "problems")
    common = ["--content", str(guide_copy), "--data-dir", str(tmp_path / "d")]
    assert main([*common, "practice"]) == 0  # the first run parses the YAML and keeps the set and its heads
    for argv in (["practice"], ["practice", "due"], ["progress"], ["practice", "--json"], ["practice", "due", "--json"]):
        loader._LOADED.clear()
        assert main([*common, *argv]) == 0, argv
        assert capsys.readouterr().out.strip()
        kept = loader._LOADED[str(guide_copy.resolve())][1]
        assert kept._problems is None, argv


def test_an_edited_title_is_never_listed_stale(content: Path) -> None:
    load_problems(content)
    _set_first_title(content, "A title edited after the heads were kept")
    loader._LOADED.clear()
    assert cache.read_heads(content) is None
    assert load_problems(content).heads[0].title == "A title edited after the heads were kept"


@pytest.mark.parametrize("how", ["truncated", "a flipped byte", "garbage", "empty", "another version"])
def test_corrupt_heads_are_not_trusted_and_are_written_again(content: Path, how: str) -> None:
    good = load_problems(content).problems
    corrupt_cache_file(_heads_file(content), how)
    assert cache.read_heads(content) is None
    loader._LOADED.clear()
    again = load_problems(content)
    assert again.problems == good and again.heads == tuple(p.head for p in good)
    assert cache.read_heads(content) is not None  # written again from the whole set


def _forge_heads(path: Path, change) -> None:
    _forge(path, change, table="heads")


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c["title"].__setitem__(0, "\x1b]0;owned\x07 title"),
        lambda c: c["skill"].__setitem__(0, "\x9b2J"),
        lambda c: c["kind"].__setitem__(0, "essay"),
        lambda c: c["id"].__setitem__(1, c["id"][0]),
        lambda c: c["entries"].__setitem__(0, [1]),
        lambda c: c["title"].pop(),
        lambda c: c.pop("skill"),
        lambda c: c.__setitem__("question", []),
    ],
    ids=["escape", "c1", "kind", "duplicate-id", "entries-type", "length", "missing", "extra-key"],
)
def test_forged_heads_with_a_valid_digest_are_refused(content: Path, change) -> None:
    good = load_problems(content).problems
    _forge_heads(_heads_file(content), change)
    assert cache.read_heads(content) is None
    loader._LOADED.clear()
    assert load_problems(content).heads == tuple(p.head for p in good)


def test_heads_from_other_files_than_the_whole_set_send_it_to_the_yaml(content: Path, monkeypatch) -> None:
    """The whole set is used with heads only when both were kept from the same files; else the
    YAML is parsed again (never a list of one version and a question of another)."""
    good = load_problems(content).problems
    loader._LOADED.clear()
    warm = load_problems(content)
    real_read = cache.read
    monkeypatch.setattr(cache, "read", lambda root: (lambda found: (found[0], found[1][:-1]) if found else None)(real_read(root)))
    parsed = []
    real_parse = loader.parse_problems
    monkeypatch.setattr(loader, "parse_problems", lambda root: parsed.append(root) or real_parse(root))
    assert warm.problems == good and parsed == [content]


def test_one_problem_is_rebuilt_from_its_row_and_checked_against_its_head(content: Path, monkeypatch) -> None:
    good = load_problems(content).problems
    for problem in (good[0], good[len(good) // 2], good[-1]):
        found = cache.read_one(content, problem.id)
        assert found is not None and found[0] == problem
    assert cache.read_one(content, "no-such-problem")[0] is None
    loader._LOADED.clear()
    warm = load_problems(content)
    assert warm.get(good[-1].id) == good[-1] and warm._problems is None  # one row, not the whole set
    assert warm.get("no-such-problem") is None and warm._problems is None


def test_a_row_that_disagrees_with_its_head_is_not_served(content: Path) -> None:
    """The whole set's file forged (a valid digest) with another title in one row: `get` sees the
    row disagree with the kept head and reads the set again from the YAML."""
    good = load_problems(content).problems
    _forge(_kept_file(content), lambda c: c["title"].__setitem__(0, "A forged but printable title"))
    loader._LOADED.clear()
    warm = load_problems(content)
    assert warm.get(good[0].id) == good[0]
    assert warm.heads == tuple(p.head for p in good)


def test_heads_follow_the_problems_read_after_the_files_changed(content: Path) -> None:
    """A set that started from its heads and then reads its problems after an edit: the heads
    are those of the problems read, never the older ones."""
    load_problems(content)
    loader._LOADED.clear()
    warm = load_problems(content)
    _set_first_title(content, "Edited after the set was opened")
    assert warm.problems[0].title == "Edited after the set was opened"
    assert warm.heads[0].title == "Edited after the set was opened" == warm.head(warm.problems[0].id).title
