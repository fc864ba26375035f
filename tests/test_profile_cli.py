"""`studytui profile FILE` (issue 30): readable at 80 columns, the JSON keys the issue names, and
every kind of bad input refused with one line and exit status 2. Hostile input is normal input:
control characters in kernel names never reach the terminal."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import pytest
from rich.cells import cell_len

from studytui.cli import main
from studytui.profile import source
from test_profile_ncu import DATA, H200, elementwise, gemm, raw_csv, write


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


SAMPLES = sorted(DATA.glob("*.gz")) + sorted(p for p in H200.glob("*") if p.suffix in (".csv", ".gz"))


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_readable_at_the_terminal_width(capsys, monkeypatch, path, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, err = run(capsys, "profile", str(path), "--top", "0")
    assert code == 0, err
    too_wide = [line for line in out.splitlines() if cell_len(line) > columns]
    assert not too_wide, too_wide[:3]
    assert "Kernels, longest first" in out and "metrics:" in out


def test_the_table_and_the_why(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    path = write(tmp_path, raw_csv([gemm(8192, 8192, 8192, 2 * 8192**3 / (0.8 * 989.4e12)),
                                    elementwise(1 << 26, 12.0 * (1 << 26) / (0.9 * 4.8e12))]))
    code, out, _err = run(capsys, "profile", str(path))
    assert code == 0
    assert "GPU: NVIDIA H200" in out and "vendor peaks" in out
    assert "compute: intensity" in out and "80% of the bf16 peak" in out
    assert "memory: intensity" in out and "90% of DRAM bandwidth" in out
    assert "Ranges" in out and "gemm" in out


def test_json_has_the_keys_the_issue_names(capsys):
    code, out, _err = run(capsys, "profile", str(DATA / "attention-variants.trace.json.gz"), "--json")
    assert code == 0
    data = json.loads(out)
    for k in data["kernels"]:
        assert {"name", "range", "duration_s", "dram_bytes", "flops", "intensity", "bound"} <= set(k)
        assert k["bound"] in ("compute", "memory", "latency", "unknown") and k["bound_reason"]
    for r in data["ranges"]:
        assert {"name", "duration_s", "gemm_flops"} <= set(r)
        inside = [k for k in data["kernels"] if k["range"] == r["name"] or k["range"].startswith(r["name"] + " > ")]
        assert r["duration_s"] == pytest.approx(sum(k["duration_s"] for k in inside))
    assert data["gpu"]["id"] == "h200-sxm" and data["schema"] == "studytui-profile/1"


def test_one_kernel_in_full(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _err = run(capsys, "profile", str(DATA / "nested-nvtx-2proc-raw.csv.gz"), "--kernel", "2")
    assert code == 0
    assert "nvjet_sm90" in out and "outer:with:colons > inner q" in out and "physics floor" in out
    assert all(cell_len(line) <= 80 for line in out.splitlines())
    code, out, _err = run(capsys, "profile", str(DATA / "nested-nvtx-2proc-raw.csv.gz"), "--kernel", "2", "--json")
    assert json.loads(out)["index"] == 2


def test_measured_ceilings_and_another_gpu(capsys, tmp_path):
    path = write(tmp_path, raw_csv([gemm(4096, 4096, 4096, 200e-6)]))
    code, out, _err = run(capsys, "profile", str(path), "--profile", "measured", "--json")
    assert code == 0
    kern = json.loads(out)["kernels"][0]
    assert kern["peak_flops_source"].startswith("measured") and kern["physically_possible"] is True
    code, out, _err = run(capsys, "profile", str(path), "--gpu", "h100", "--json")
    data = json.loads(out)
    assert code == 0 and data["gpu"]["id"] != "h200-sxm" and "recorded on NVIDIA H200" in data["gpu_note"]


# -- hostile input ----------------------------------------------------------------------------
HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J\u202etxt.exe\x9b31m"


def test_control_characters_in_kernel_names_are_escaped(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    k = gemm(256, 256, 256, 2e-6, rng=("range\x1b[31m",))
    k["name"] = HOSTILE
    path = write(tmp_path, raw_csv([k]))
    code, out, _err = run(capsys, "profile", str(path))
    assert code == 0
    for raw in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert raw not in out
    assert "\\x1b" in out and "\\x9b" in out  # the table cuts the name in its middle, never inside an escape
    code, out, _err = run(capsys, "profile", str(path), "--kernel", "0")
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J\\u202etxt.exe\\x9b31m" in out and "\x1b" not in out
    code, out, _err = run(capsys, "profile", str(path), "--json")
    for raw in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert raw not in out  # JSON escapes them (\u001b, \u202e): the text decodes to the name unchanged
    assert json.loads(out)["kernels"][0]["name"] == HOSTILE


# -- bad input: one line, exit 2 ----------------------------------------------------------------
def refused(capsys, path: Path | str, fragment: str, *extra: str) -> str:
    code, out, err = run(capsys, "profile", str(path), *extra)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("studytui: error: "), err
    assert fragment in err, err
    return err


def test_a_missing_file(capsys, tmp_path):
    refused(capsys, tmp_path / "nope.csv", "no such file")


def test_a_directory_and_a_fifo(capsys, tmp_path):
    refused(capsys, tmp_path, "not a regular file")
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    refused(capsys, fifo, "not a regular file")


def test_an_empty_file(capsys, tmp_path):
    (tmp_path / "empty.csv").write_bytes(b"")
    refused(capsys, tmp_path / "empty.csv", "empty file")


def test_binary_data(capsys, tmp_path):
    (tmp_path / "blob.csv").write_bytes(bytes(range(256)) * 64)
    refused(capsys, tmp_path / "blob.csv", "binary data")
    (tmp_path / "latin1.csv").write_bytes(b'"ID","Process ID","Kernel Name"\n' + "caf\xe9".encode("latin-1") * 10)
    refused(capsys, tmp_path / "latin1.csv", "binary data")


def test_a_truncated_export(capsys, tmp_path):
    text = raw_csv([gemm(256, 256, 256, 2e-6), gemm(512, 512, 512, 3e-6, idx="1")])
    refused(capsys, write(tmp_path, text[: len(text) - 40], "cut.csv"), "truncated")
    refused(capsys, write(tmp_path, text[:-3], "cut2.csv"), "truncated")  # inside the last field: no line end
    lines = text.splitlines(keepends=True)
    refused(capsys, write(tmp_path, "".join(lines[:1]), "header-only.csv"), "truncated")
    details = (DATA / "nested-nvtx-2proc-details.csv.gz").read_bytes()
    whole = gzip.decompress(details)
    (tmp_path / "details-cut.csv").write_bytes(whole[: len(whole) // 2])
    refused(capsys, tmp_path / "details-cut.csv", "truncated")
    (tmp_path / "cut.csv.gz").write_bytes(details[: len(details) // 2])
    refused(capsys, tmp_path / "cut.csv.gz", "truncated")


def test_a_csv_that_is_not_ncus(capsys, tmp_path):
    refused(capsys, write(tmp_path, "name,time\ngemm,1.0\n", "other.csv"), "not an Nsight Compute CSV export")
    nsys = '"Time (%)","Total Time (ns)","Instances","Avg (ns)","Name"\n"50.0","1,000","2","500.0","gemm"\n'
    refused(capsys, write(tmp_path, nsys, "nsys.csv"), "not an Nsight Compute CSV export")
    no_units = raw_csv([gemm(64, 64, 64, 1e-6)]).splitlines(keepends=True)
    refused(capsys, write(tmp_path, no_units[0] + "".join(no_units[2:]), "nounits.csv"), "no units row")


def test_json_that_is_not_a_trace(capsys, tmp_path):
    (tmp_path / "config.json").write_text('{"model": "llama", "layers": 32}')
    refused(capsys, tmp_path / "config.json", 'no "traceEvents"')
    (tmp_path / "t.json").write_text('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1}]}')
    refused(capsys, tmp_path / "t.json", "no GPU kernels")


def test_a_1_gib_file_is_streamed_and_refused_without_reading_it_all(capsys, tmp_path):
    big = tmp_path / "huge.csv"
    with big.open("wb") as f:
        f.write(raw_csv([gemm(64, 64, 64, 1e-6)]).encode())
        f.truncate(1 << 30)  # a sparse GiB: a valid export, then zeros
    start = time.monotonic()
    refused(capsys, big, "binary data")
    assert time.monotonic() - start < 10
    zeros = tmp_path / "zeros.json"
    with zeros.open("wb") as f:
        f.truncate(1 << 30)
    refused(capsys, zeros, "binary data")


def test_a_file_over_the_limit_is_refused_by_its_size(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(source, "PROFILE_LIMIT", 1000)
    path = write(tmp_path, raw_csv([gemm(64, 64, 64, 1e-6)] * 5))
    refused(capsys, path, "larger than 1,000 bytes")
    small = gzip.compress(raw_csv([gemm(64, 64, 64, 1e-6, idx=str(i)) for i in range(10)]).encode())
    (tmp_path / "small.csv.gz").write_bytes(small)
    assert len(small) < 1000
    refused(capsys, tmp_path / "small.csv.gz", "decompressed data is larger than")


def test_a_gzip_bomb_is_stopped(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(source, "GZIP_RATIO_AFTER", 1 << 20)
    bomb = gzip.compress(b'{"traceEvents": [' + b" " * (64 << 20), 9)
    assert len(bomb) < (1 << 20)
    (tmp_path / "bomb.json.gz").write_bytes(bomb)
    refused(capsys, tmp_path / "bomb.json.gz", "gzip bomb")
    (tmp_path / "notgzip.json.gz").write_bytes(b"\x1f\x8b" + b"garbage" * 100)
    refused(capsys, tmp_path / "notgzip.json.gz", "gzip")


def test_bad_options(capsys, tmp_path):
    path = write(tmp_path, raw_csv([gemm(64, 64, 64, 1e-6)]))
    refused(capsys, path, "--kernel 5: the file has 1 kernels", "--kernel", "5")
    refused(capsys, path, "unknown GPU", "--gpu", "nonesuch")
    details = DATA / "nested-nvtx-2proc-details.csv.gz"  # names no GPU
    refused(capsys, details, "--profile measured needs --gpu", "--profile", "measured")
    refused(capsys, path, "--profile must be", "--profile", str(tmp_path / "missing.yaml"), "--gpu", "h200")


def _cyclic_garbage_of(argv: list[str], capsys) -> int:
    """How many objects in reference cycles one in-process run leaves (commands run with the
    cyclic collector off, so these would stay until the process ends)."""
    import gc

    main(argv)  # the first run imports and fills caches
    capsys.readouterr()
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        main(argv)
        capsys.readouterr()
        return gc.collect()
    finally:
        if enabled:
            gc.enable()


def test_json_output_leaves_no_cycle_per_kernel(capsys, tmp_path):
    """`profile --json` of 100 MB traces grew by 60 MiB with the collector off: json.dumps with an
    indent leaves a cycle per call, and it was called per kernel. The garbage a run leaves (the
    argument parser's own) is the same for 3 kernels and for 34."""
    few = _cyclic_garbage_of(["--data-dir", str(tmp_path), "profile", str(DATA / "no-shapes.trace.json.gz"), "--json"], capsys)
    many = _cyclic_garbage_of(["--data-dir", str(tmp_path), "profile", str(DATA / "nested-nvtx-2proc-raw.csv.gz"), "--json"], capsys)
    assert few == many


def test_a_file_name_that_is_not_utf8_stays_valid_utf8_json(capsysbinary, tmp_path):
    """A name's bytes that are not UTF-8 (kept by Python as lone surrogates) are written as
    \\udcXX escapes: the output is UTF-8, and json.loads gives back the name os.fsencode takes."""
    import shutil

    odd = os.fsdecode(b"trace-\xff\xfe.json.gz")
    target = tmp_path / odd
    shutil.copy(DATA / "no-shapes.trace.json.gz", target)
    assert main(["--data-dir", str(tmp_path / "d"), "profile", str(target), "--json"]) == 0
    out = capsysbinary.readouterr().out
    doc = json.loads(out.decode("utf-8"))  # strict: raises if the output is not UTF-8
    assert os.fsencode(doc["file"]).endswith(b"trace-\xff\xfe.json.gz")
