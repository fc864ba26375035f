"""The parsed-guide cache (issue 27): used while nothing changed, never stale, never trusted blindly."""

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
from studytui.core.paths import CHECKOUT_DIR, cache_dir, content_dir
from studytui.guide import cache, loader, model
from studytui.guide.loader import load_guide
from tests.support import corrupt_cache_file

CONTENT = content_dir()


@pytest.fixture()
def content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the guide's content files, cached at once in this process (RACY_S: 0; a new
    process sees the copy as just changed and does not write the cache, but reads it)."""
    root = tmp_path / "content"
    root.mkdir()
    shutil.copy2(CONTENT / "guide.yaml", root)
    shutil.copy2(CONTENT / "glossary.yaml", root)
    shutil.copy2(CONTENT / "policy.yaml", root)
    shutil.copytree(CONTENT / "sections", root / "sections")
    monkeypatch.setattr(jsoncache, "RACY_S", 0.0)
    loader._LOADED.clear()
    return root.resolve()


def _fresh_process_load(root: Path) -> dict:
    """Load the guide in a new process: the first entry's title and whether PyYAML was imported."""
    code = (
        "import sys, json; from studytui.guide import load_guide; g = load_guide(sys.argv[1]); "
        "print(json.dumps({'title': g.entries[0].title, 'n': len(g.entries), 'yaml': 'yaml' in sys.modules}))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _set_first_title(root: Path, title: str) -> None:
    path = root / "sections" / "00-start-here.yaml"
    text = path.read_text()
    old = load_guide(root).entries[0].title
    assert old in text
    path.write_text(text.replace(old, title, 1))


def test_a_cold_cache_parses_and_keeps_the_guide_then_a_warm_one_reads_no_yaml(content: Path) -> None:
    assert not cache.cache_file(content).exists()
    cold = load_guide(content)  # parsed (the copy is old enough here: RACY_S is 0 in this process)
    assert cache.cache_file(content).is_file()
    warm = _fresh_process_load(content)
    assert warm == {"title": cold.entries[0].title, "n": len(cold.entries), "yaml": False}
    parsed = loader.parse_content(content).guide
    hit = cache.read(content)
    assert hit is not None and hit[0] == parsed  # every field rebuilt as the loader built it


def test_changed_content_is_never_served_stale(content: Path) -> None:
    load_guide(content)
    assert cache.cache_file(content).is_file()
    _set_first_title(content, "A title changed by the learner")
    assert load_guide(content).entries[0].title == "A title changed by the learner"  # in this process
    assert _fresh_process_load(content)["title"] == "A title changed by the learner"  # and in the next


def test_a_change_that_keeps_size_and_mtime_is_still_seen(content: Path) -> None:
    path = content / "sections" / "00-start-here.yaml"
    before = load_guide(content).entries[0].title
    # The file system stamps ctime from a coarse clock (a few ms on ext4): let it tick past the
    # copy's ctime, as the cache's 2 s settle time (RACY_S, 0 in these tests) does for real.
    time.sleep(0.05)
    st = path.stat()
    text = path.read_text()
    swapped = before[::-1] if before[::-1] != before else before.upper()
    path.write_text(text.replace(before, swapped, 1))  # the same length
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime put back: the ctime still moved
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert load_guide(content).entries[0].title == swapped
    assert _fresh_process_load(content)["title"] == swapped


def test_a_file_replaced_by_a_rename_is_seen(content: Path) -> None:
    load_guide(content)
    path = content / "sections" / "00-start-here.yaml"
    first = load_guide(content).entries[0].title
    new = path.with_name("new.yaml")
    new.write_text(path.read_text().replace(first, "Renamed into place", 1))
    os.replace(new, path)
    assert _fresh_process_load(content)["title"] == "Renamed into place"


def test_the_same_guide_object_while_nothing_changed(content: Path) -> None:
    first = load_guide(content)
    assert load_guide(content) is first
    os.utime(content / "policy.yaml")
    assert load_guide(content) is not first


@pytest.mark.parametrize("how", ["truncated", "a flipped byte", "garbage", "empty", "another version"])
def test_a_corrupt_or_foreign_cache_file_is_rebuilt_not_trusted(content: Path, how: str) -> None:
    good = load_guide(content)
    path = cache.cache_file(content)
    corrupt_cache_file(path, how)
    assert cache.read(content) is None
    loader._LOADED.clear()
    assert load_guide(content) == good
    assert cache.read(content) is not None  # written again, valid


def _forge(path: Path, change) -> None:
    """Rewrite the payload with `change` applied and a correct digest: what a hostile writer could do."""
    head, _, payload = path.read_bytes().partition(b"\n")
    header = json.loads(head)
    data = json.loads(payload)
    change(data)
    payload = json.dumps(data).encode()
    header["bytes"], header["blake2b"] = len(payload), cache.digest_hex(payload)
    path.write_bytes(json.dumps(header).encode() + b"\n" + payload)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["entries"]["title"].__setitem__(0, "\x1b]0;owned\x07 title"),  # a terminal escape
        lambda d: d["entries"]["title"].__setitem__(0, "two\nlines"),  # a line break in a one-line field
        lambda d: d["entries"]["year"].__setitem__(0, "1999"),  # the wrong type
        lambda d: d["entries"]["tags"].__setitem__(0, [1, 2]),
        lambda d: d["entries"].pop("url"),  # a field missing
        lambda d: d["subsections"]["count"].__setitem__(0, 10**6),  # counts that do not add up
        lambda d: d["entries"]["source_file"].__setitem__(0, 99),
        lambda d: d.__setitem__("extra", []),
    ],
    ids=["escape", "line-break", "type", "list-type", "missing", "counts", "file", "extra-key"],
)
def test_a_hostile_cache_with_a_valid_digest_is_rebuilt(content: Path, change) -> None:
    good = load_guide(content)
    _forge(cache.cache_file(content), change)
    assert cache.read(content) is None
    loader._LOADED.clear()
    assert load_guide(content) == good


def test_a_cache_file_others_can_write_or_a_link_is_not_read(content: Path, tmp_path: Path) -> None:
    load_guide(content)
    path = cache.cache_file(content)
    os.chmod(path, 0o666)
    assert cache.read(content) is None
    os.chmod(path, 0o600)
    assert cache.read(content) is not None
    elsewhere = tmp_path / "elsewhere.json"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)
    assert cache.read(content) is None


def test_content_changed_in_the_last_seconds_is_not_cached(content: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsoncache, "RACY_S", 2.0)
    os.utime(content / "glossary.yaml")  # just now
    load_guide(content)
    assert not cache.cache_file(content).exists()
    assert load_guide(content) is not load_guide(content)  # not kept in the process either: parsed each time


def test_a_cache_directory_that_cannot_be_written_only_costs_speed(content: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the cache directory would go")
    monkeypatch.setenv("STUDYTUI_CACHE_DIR", str(blocked))
    assert load_guide(content).entries


def test_the_cache_lives_in_the_user_cache_directory_not_the_data_directory(monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Path) -> None:
    from platformdirs import user_cache_dir

    from studytui.core.paths import data_dir

    monkeypatch.delenv("STUDYTUI_CACHE_DIR")
    for xdg in (None, str(tmp_path / "xdg"), "relative/xdg"):
        if xdg is None:
            monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", xdg)
        assert cache_dir() == Path(user_cache_dir("studytui", appauthor=False)), xdg
    assert cache_dir() != data_dir()
    monkeypatch.setenv("STUDYTUI_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    assert cache.cache_file(CONTENT.resolve()).parent == tmp_path / "c" / "guide"
    assert cache.cache_file(CONTENT.resolve()).name.startswith("guide-")  # never a data file's name


def test_the_cache_schema_names_every_field_of_the_model_in_order() -> None:
    for name, schema in cache.SCHEMAS.items():
        cls = getattr(model, name)
        names = list(cls._fields if hasattr(cls, "_fields") else cls.FIELDS)
        fields = [n for n in names if not n.startswith("_")]
        if name == "Guide":
            fields.remove("content_dir")  # the cache's own key, not a payload field
        assert [n for n, _ in schema] == fields, name


def test_the_checkout_content_round_trips() -> None:
    """Every value of the shipped guide survives the cache (else it would be parsed every time)."""
    root = CONTENT.resolve()
    parsed = loader.parse_content(root)
    assert parsed.guide is not None
    raw = cache.encode(root, parsed.guide, parsed.stamps, cache.code_stamps())
    assert cache.decode_unchecked(raw, root) == parsed.guide
    assert CHECKOUT_DIR  # (the checkout's content, or the wheel's)


def test_a_warm_load_is_quick() -> None:
    root = CONTENT.resolve()
    parsed = loader.parse_content(root)
    assert parsed.guide is not None
    raw = cache.encode(root, parsed.guide, parsed.stamps, cache.code_stamps())
    best = min(_timed(lambda: cache.decode_unchecked(raw, root)) for _ in range(5))
    parse = min(_timed(lambda: loader.parse_content(root)) for _ in range(2))
    assert best < parse / 3, (best, parse)


def _timed(call) -> float:
    start = time.process_time()
    call()
    return time.process_time() - start


def test_every_code_file_the_cache_is_keyed_by_exists():
    # A module moved away (yamlio.py went to studytui/core) left a stamp that never matched, so
    # every command rebuilt the cache from YAML without a word.
    from studytui.guide import cache

    stamps = cache.code_stamps()
    assert len(stamps) == len(cache.CODE_FILES) and all(stamp is not None for _, stamp in stamps), stamps
