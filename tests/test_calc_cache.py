"""The calculators' YAML kept parsed between runs (issue 27, studytui/calc/parsed.py): the hardware
catalog, the model presets, the measured profiles and the compute-capability tables are read from
the cache while their files are unchanged, never served stale, and never trusted blindly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from studytui.calc import hardware, models, occupancy, parsed, profiles
from studytui.core import jsoncache
from studytui.core.paths import CHECKOUT_DIR

CONTENT = CHECKOUT_DIR / "content"


def _forget() -> None:
    """Drop what this process keeps of the files (each command is a new process)."""
    hardware._CACHE.clear()
    hardware._BUILTIN.clear()
    models._PRESETS.clear()
    models._ONE.clear()
    profiles._SUMMARIES._kept.clear()
    occupancy._load.cache_clear()
    occupancy._load_cluster_record.cache_clear()


@pytest.fixture()
def content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the calculators' content in its own folder, and a cache folder of its own; in this
    process a file changed just now is kept at once (RACY_S 0)."""
    root = tmp_path / "content"
    root.mkdir()
    shutil.copytree(CONTENT / "hardware", root / "hardware")
    shutil.copytree(CONTENT / "models", root / "models")
    monkeypatch.setenv("STUDYTUI_CONTENT_DIR", str(root))
    monkeypatch.setenv("STUDYTUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(jsoncache, "RACY_S", 0.0)
    _forget()
    yield root.resolve()
    _forget()


def _kept_files() -> list[Path]:
    folder = Path(os.environ["STUDYTUI_CACHE_DIR"]) / jsoncache.SUBDIR
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _fresh_process(code: str) -> dict:
    """Run `code` (which prints one JSON object) in a new process; its object, plus whether PyYAML
    and studytui's YAML module were imported."""
    wrapped = code + ("\nimport sys as _s, json as _j"
                      "\n_j.dump({'yaml': 'yaml' in _s.modules or 'studytui.core.yamlio' in _s.modules}, _s.stderr)")
    out = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    return {**json.loads(out.stdout), **json.loads(out.stderr.strip().splitlines()[-1])}


CATALOG = ("import json; from studytui.calc.hardware import load_catalog; a = load_catalog().get('h200'); "
           "print(json.dumps({'bw': a.mem_bw, 'name': a.name, 'ids': load_catalog().ids()}))")
PRESET = ("import json; from studytui.calc.models import get_preset; p = get_preset('llama-3.1-70b'); "
          "print(json.dumps({'layers': p.params.layers, 'total': p.params.counts().total}))")


def test_a_cold_cache_parses_and_keeps_the_catalog_then_a_warm_one_reads_no_yaml(content: Path) -> None:
    assert not _kept_files()
    cold = hardware.load_catalog()
    assert _kept_files(), "the catalog was not kept"
    warm = _fresh_process(CATALOG)
    assert warm["yaml"] is False
    assert warm["bw"] == cold.get("h200").mem_bw and warm["ids"] == cold.ids()


def test_the_kept_catalog_is_the_parsed_one_value_for_value_and_type_for_type(content: Path) -> None:
    parsed_now = list(hardware.load_catalog())
    _forget()
    kept = list(hardware.load_catalog())  # from the cache now
    assert kept == parsed_now
    for a, b in zip(kept, parsed_now):
        assert a.raw == b.raw
        assert all(type(getattr(a, name)) is type(getattr(b, name)) for name in a.__slots__), a.id


def test_a_changed_hardware_file_is_never_served_stale(content: Path) -> None:
    hardware.load_catalog()
    path = content / "hardware" / "nvidia.yaml"
    text = path.read_text()
    assert "memory_bw_tbs: 4.8" in text
    path.write_text(text.replace("memory_bw_tbs: 4.8", "memory_bw_tbs: 4.9", 1))
    assert _fresh_process(CATALOG)["bw"] == 4.9e12  # a new process: the file changed, parsed again
    _forget()
    assert hardware.load_catalog().get("h200").mem_bw == 4.9e12


def test_an_added_hardware_file_is_read_at_once(content: Path) -> None:
    hardware.load_catalog()
    (content / "hardware" / "zz-extra.yaml").write_text(
        "- id: extra-9000\n  name: Extra 9000\n  peak_tflops: {bf16: 100}\n  memory_bw_tbs: 1\n"
    )
    assert "extra-9000" in _fresh_process(CATALOG)["ids"]


def test_a_user_hardware_file_added_to_the_data_directory_is_read_at_once(content: Path, isolated_data_dir: Path) -> None:
    hardware.load_catalog()
    (isolated_data_dir / "hardware").mkdir()
    (isolated_data_dir / "hardware" / "mine.yaml").write_text(
        "- id: mine-1\n  name: Mine\n  peak_tflops: {bf16: 10}\n  memory_bw_tbs: 1\n"
    )
    assert "mine-1" in _fresh_process(CATALOG)["ids"]


def test_a_broken_file_is_refused_from_the_file_every_time_never_from_a_kept_copy(content: Path) -> None:
    from studytui.core.errors import UsageError

    hardware.load_catalog()
    path = content / "hardware" / "amd.yaml"
    path.write_text(path.read_text() + "\n- id: [unclosed\n")
    for _ in range(2):
        _forget()
        with pytest.raises(UsageError, match="amd.yaml"):
            hardware.load_catalog()


def test_a_corrupt_cache_file_is_rebuilt_not_trusted(content: Path) -> None:
    hardware.load_catalog()
    for kept in _kept_files():
        raw = bytearray(kept.read_bytes())
        raw[-5] ^= 0x01  # one bit of the payload: the digest no longer matches
        kept.write_bytes(bytes(raw))
    warm = _fresh_process(CATALOG)
    assert warm["bw"] == 4.8e12 and warm["yaml"] is True  # parsed from the files again


def test_a_tampered_value_with_a_good_digest_is_rebuilt_from_the_files(content: Path) -> None:
    """A cache file that passes every check of the frame but holds a value of the wrong type (a
    figure as text) is the loader's to refuse: the catalog is parsed from the files."""
    hardware.load_catalog()
    paths = sorted(parsed.yaml_files(content / "hardware"), key=lambda p: (p.name != "nvidia.yaml", p.name))
    batch = parsed.Batch(paths, "accelerators", hardware._KEPT_CODE)
    rows = batch.value
    assert isinstance(rows, list) and rows
    mem_bw = hardware.Accelerator.__slots__.index("mem_bw")
    rows[0][mem_bw] = "4.8e12"  # text where a float belongs
    batch.start()
    assert batch.keep(rows)
    assert hardware._from_kept(parsed.Batch(paths, "accelerators", hardware._KEPT_CODE).value) is None
    _forget()
    assert hardware.load_catalog().get("h100").mem_bw == 3.35e12
    assert type(hardware.load_catalog().get("h100").mem_bw) is float


def test_a_cache_file_others_may_write_is_not_read(content: Path) -> None:
    hardware.load_catalog()
    for kept in _kept_files():
        kept.chmod(0o666)
    assert _fresh_process(CATALOG)["yaml"] is True


def test_model_presets_are_kept_and_a_changed_preset_is_never_stale(content: Path) -> None:
    before = models.get_preset("llama-3.1-70b")
    warm = _fresh_process(PRESET)
    assert warm["yaml"] is False and warm["layers"] == before.params.layers == 80
    path = content / "models" / "llama-3.1-70b.yaml"
    path.write_text(path.read_text().replace("layers: 80", "layers: 81", 1))
    changed = _fresh_process(PRESET)
    assert changed["layers"] == 81 and changed["total"] != warm["total"]


def test_a_yaml_document_json_cannot_carry_exactly_is_parsed_every_time(content: Path, tmp_path: Path) -> None:
    """A date (PyYAML makes a datetime) or a key that is not text would not come back from JSON as
    it went in: such a file is never kept, and parsed on every run."""
    path = tmp_path / "dated.yaml"
    path.write_text("when: 2026-12-01\n1: one\n")
    calls = []

    def parse(p: Path) -> object:
        calls.append(p)
        from studytui.core.yamlio import load_user_yaml

        return load_user_yaml(p, "a test file")

    first = parsed.parsed_yaml(path, "test", parse)
    again = parsed.parsed_yaml(path, "test", parse)
    assert first == again and len(calls) == 2


def test_a_file_grown_past_the_yaml_limit_is_refused_even_when_a_smaller_copy_was_kept(content: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from studytui.core import fileio
    from studytui.core.errors import UsageError

    hardware.load_catalog()
    _forget()
    monkeypatch.setattr(fileio, "YAML_LIMIT", 16 * 1024)  # nvidia.yaml is larger
    with pytest.raises(UsageError, match="larger than"):
        hardware.load_catalog()


MEASURED = ("import json; from studytui.calc.hardware import load_catalog; from studytui.calc.profiles import measured_summary; "
            "m = measured_summary(load_catalog().get('h200')); print(json.dumps({'bw': m['mem_bw'], 'source': m['source'], "
            "'collectives': m['collectives']}))")


def test_a_measured_profile_summary_is_kept_checked_and_never_stale(content: Path) -> None:
    acc = hardware.load_catalog().get("h200")
    cold = profiles.measured_summary(acc)
    assert cold is not None
    warm = _fresh_process(MEASURED)
    assert warm["yaml"] is False
    assert warm["bw"] == cold["mem_bw"] and warm["source"] == cold["source"] and warm["collectives"] == cold["collectives"]
    _forget()
    assert profiles.measured_summary(acc) == cold  # read back, rebuilt with its integer keys
    path = content / "hardware" / "measured" / "h200-sxm.yaml"
    text = path.read_text()
    assert "\nruns:" in text
    path.write_text(text.replace("\nruns:", "\nnotes: changed\nruns:", 1))
    assert _fresh_process(MEASURED)["yaml"] is True  # the file changed: parsed again


def test_a_kept_measured_summary_of_the_wrong_shape_is_built_again(content: Path) -> None:
    acc = hardware.load_catalog().get("h200")
    cold = profiles.measured_summary(acc)
    path = os.path.abspath(content / "hardware" / "measured" / "h200-sxm.yaml")
    name = f"measured-summary:{path}"
    kept = parsed.kept(name, [path], profiles._SUMMARY_CODE)
    kept["summary"]["mem_bw"]["median"] = "fast"  # text where a figure belongs
    assert parsed.keep(name, kept, jsoncache.stamps_of([path]), profiles._SUMMARY_CODE, jsoncache.now())
    with pytest.raises(profiles._Malformed):
        profiles._decoded(parsed.kept(name, [path], profiles._SUMMARY_CODE), Path(path))
    _forget()
    assert profiles.measured_summary(acc) == cold


TABLES = ("import json; from studytui.calc.occupancy import load_tables; t = load_tables(); "
          "print(json.dumps({'ccs': list(t.capabilities), 'warps': t.capabilities['9.0'].max_warps_per_sm}))")


def test_the_compute_capability_tables_are_kept_and_never_stale(content: Path) -> None:
    cold = occupancy.load_tables()
    warm = _fresh_process(TABLES)
    assert warm["yaml"] is False and warm["ccs"] == list(cold.capabilities)
    path = content / "hardware" / "compute-capabilities" / "nvidia.yaml"
    path.write_text(path.read_text() + "\n# a comment changes the file, not the tables\n")
    again = _fresh_process(TABLES)
    assert again["yaml"] is True and again["ccs"] == warm["ccs"]
