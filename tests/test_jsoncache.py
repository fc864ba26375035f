"""The shared JSON cache (studytui/core/jsoncache.py, issue 27): a kept value is served only while
nothing it was built from changed, comes back exactly as it went in, and is never trusted blindly."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from studytui.core import jsoncache

CODE = ("core/jsoncache.py",)


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STUDYTUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(jsoncache, "RACY_S", 0.0)
    path = tmp_path / "source.yaml"
    path.write_text("a: 1\n")
    return path


def _keep(path: Path, value: object, name: str = "test:one") -> bool:
    taken = jsoncache.now() + 1  # (RACY_S is 0 here: any stamp before now is settled)
    return jsoncache.put(name, value, jsoncache.stamps_of([path]), CODE, taken)


def test_a_kept_value_comes_back_while_its_file_is_unchanged(source: Path) -> None:
    value = {"a": [1, 2.5, "x", None, True, {"b": []}]}
    assert _keep(source, value)
    got = jsoncache.get("test:one", CODE)
    assert got is not None
    kept, stamps = got
    assert jsoncache.same(kept, value) and stamps == jsoncache.stamps_of([source])
    assert jsoncache.get("test:another", CODE) is None  # another name: nothing


def test_a_changed_file_is_never_served_stale(source: Path) -> None:
    assert _keep(source, {"a": 1})
    time.sleep(0.05)  # past the file system's coarse clock tick (the cache's 2 s settle time does it for real)
    source.write_text("a: 2\n")  # (the same size)
    assert jsoncache.get("test:one", CODE) is None


def test_a_replaced_file_with_the_same_size_and_time_is_never_served_stale(source: Path, tmp_path: Path) -> None:
    assert _keep(source, {"a": 1})
    st = source.stat()
    other = tmp_path / "other.yaml"
    other.write_text("a: 3\n")  # the same size
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, source)  # a new inode and ctime
    assert jsoncache.get("test:one", CODE) is None


def test_a_missing_file_is_never_served(source: Path) -> None:
    assert _keep(source, {"a": 1})
    source.unlink()
    assert jsoncache.get("test:one", CODE) is None


@pytest.mark.parametrize("value", [
    {1: "a"},  # a key JSON turns into text
    {"t": (1, 2)},  # a tuple comes back as a list
    float("nan"),
    {"d": __import__("datetime").date(2026, 1, 1)},
    {"s": {1, 2}},
])
def test_a_value_that_would_not_come_back_exactly_is_not_kept(source: Path, value: object) -> None:
    assert not _keep(source, value)
    assert jsoncache.get("test:one", CODE) is None


def test_one_one_point_oh_and_true_stay_three_values(source: Path) -> None:
    assert _keep(source, [1, 1.0, True])
    got = jsoncache.get("test:one", CODE)
    assert got is not None and [type(v) for v in got[0]] == [int, float, bool]


def test_a_value_built_from_a_file_changed_just_now_is_not_kept(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsoncache, "RACY_S", 2.0)
    assert not jsoncache.put("test:one", {"a": 1}, jsoncache.stamps_of([source]), CODE, jsoncache.now())
    assert not jsoncache.put("test:one", {"a": 1}, [], CODE, jsoncache.now() + 10)  # built from nothing: never


def _file() -> Path:
    return jsoncache.value_file("test:one")


@pytest.mark.parametrize("damage", ["truncate", "flip", "header", "garbage", "empty", "version", "name"])
def test_a_damaged_or_tampered_cache_file_is_not_trusted(source: Path, damage: str) -> None:
    assert _keep(source, {"a": "kept"})
    raw = _file().read_bytes()
    head, _, payload = raw.partition(b"\n")
    header = json.loads(head)
    if damage == "truncate":
        raw = raw[:-3]
    elif damage == "flip":
        raw = head + b"\n" + payload.replace(b"kept", b"kepT")
    elif damage == "header":
        raw = b"{not json\n" + payload
    elif damage == "garbage":
        raw = os.urandom(200)
    elif damage == "empty":
        raw = b""
    elif damage == "version":
        header["studytui"] = "0.0.0"
        raw = json.dumps(header).encode() + b"\n" + payload
    elif damage == "name":  # a file written for another name, copied over this one's
        header["name"] = "test:other"
        raw = json.dumps(header).encode() + b"\n" + payload
    _file().write_bytes(raw)
    assert jsoncache.get("test:one", CODE) is None
    assert _keep(source, {"a": "kept"})  # and it is written anew
    assert jsoncache.get("test:one", CODE) is not None


def test_a_cache_file_others_can_write_or_a_link_is_not_read(source: Path, tmp_path: Path) -> None:
    assert _keep(source, {"a": 1})
    path = _file()
    path.chmod(0o666)
    assert jsoncache.get("test:one", CODE) is None
    path.chmod(0o600)
    assert jsoncache.get("test:one", CODE) is not None
    target = tmp_path / "elsewhere.json"
    path.rename(target)
    path.symlink_to(target)
    assert jsoncache.get("test:one", CODE) is None


def test_a_cache_file_over_the_size_limit_is_not_read(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _keep(source, {"a": "x" * 100})
    monkeypatch.setattr(jsoncache, "MAX_BYTES", 50)
    assert jsoncache.get("test:one", CODE) is None


def test_a_cache_directory_that_cannot_be_written_only_means_building_again(source: Path, tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("a file where the folder would be")
    assert not _keep(source, {"a": 1})
    assert jsoncache.get("test:one", CODE) is None


def test_an_edit_of_the_code_that_builds_the_value_invalidates_it(source: Path, tmp_path: Path) -> None:
    assert _keep(source, {"a": 1})
    got = jsoncache.get("test:one", ("core/jsoncache.py", "core/filestate.py"))
    assert got is None  # kept under other code


def test_a_value_asked_for_with_its_files_is_served_only_when_built_from_exactly_those(source: Path, tmp_path: Path) -> None:
    assert _keep(source, {"a": 1})
    assert jsoncache.get("test:one", CODE, [str(source)]) is not None
    assert jsoncache.get("test:one", CODE, [str(source), str(tmp_path / "another.yaml")]) is None
    assert jsoncache.get("test:one", CODE, []) is None
