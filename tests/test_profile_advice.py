"""What the app shows of a profile, without the app (issue 30): the guide entries each limiter leads
to (content/profile-advice.yaml and its `studytui check`), the rows of one kernel shared with
`studytui profile FILE --kernel N`, the GEMM calculator's inputs from a trace's shapes, and the
profile screen's plain-text parts (header, table cells, plot data) on the shipped H200 records.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.guide import load_guide
from studytui.profile import analyze, load
from studytui.profile.model import Capture, Kernel
from studytui.profile.report import check_advice, gemm_try_it, kernel_rows, load_advice, parse_advice, ridge_side
from studytui.tui.profile import view

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "content" / "profiles" / "h200"
RAW = H200 / "ops-full-raw.csv"
DEFAULT_RAW = H200 / "ops-default-raw.csv"
TRACE = H200 / "llama8b-layer-prefill-decode.trace.json.gz"


@pytest.fixture(scope="module")
def guide():
    return load_guide(None)


@pytest.fixture(scope="module")
def book():
    book, problems = load_advice(ROOT / "content")
    assert problems == []
    return book


@pytest.fixture(scope="module")
def raw():
    return analyze(load(RAW))


@pytest.fixture(scope="module")
def trace():
    return analyze(load(TRACE))


def by_range(report, name):
    return next(r for r in report.kernels if r.range_name == name)


# -- the guide entries of each limiter -------------------------------------------------------------
def test_the_shipped_advice_names_only_guide_entries_and_covers_every_case(guide):
    assert check_advice(ROOT / "content", guide) == []


def test_each_kind_of_kernel_gets_the_reading_that_teaches_what_to_do(raw, trace, book):
    """The issue's list: fusion and FlashAttention for memory-bound elementwise and attention;
    tiling, Stream-K and wave quantization for GEMMs that miss the compute roof; occupancy for
    latency-bound kernels."""
    def read(r):
        rule = book.rule_for(r)
        return book.kind_of(r.kernel), r.bound, rule.entries, rule.advice, rule.try_it

    kind, bound, entries, advice, try_it = read(by_range(raw, "gemm_bf16_8192x8192x8192"))
    assert (kind, bound) == ("gemm", "compute") and entries[0] == "stream-k" and "cute-gemm-tutorial" in entries
    assert "wave quantization" in advice and try_it == "gemm"
    kind, bound, entries, advice, _t = read(by_range(raw, "add_fp32_67108864"))
    assert (kind, bound) == ("elementwise", "memory") and "Fuse" in advice and "triton-repository" in entries
    kind, bound, entries, _a, _t = read(by_range(raw, "sum_fp32_134217728"))
    assert (kind, bound, entries[0]) == ("reduction", "memory", "parallel-reduction-cuda")
    kind, bound, entries, _a, _t = read(by_range(raw, "softmax_bf16_8192x8192"))
    assert (kind, entries[0]) == ("softmax", "online-softmax")
    assert book.kind_of(by_range(raw, "layernorm_bf16_16384x4096").kernel) == "norm"
    kind, bound, entries, _a, _t = read(by_range(raw, "sdpa_causal_prefill_b1_h32_s2048_d128"))
    assert (kind, bound) == ("attention", "latency") and entries[:2] == ("flashattention-2", "flashattention-3")
    decode = [r for r in raw.kernels if r.range_name.startswith("sdpa_decode")]
    assert {book.kind_of(r.kernel) for r in decode} == {"attention"}  # cuDNN's lean_reduction is part of it
    kind, bound, entries, advice, _t = read(by_range(raw, "gemm_bf16_16x8192x8192"))
    assert (kind, bound, ridge_side(by_range(raw, "gemm_bf16_16x8192x8192"))) == ("gemm", "memory", "memory")
    assert "transformer-inference-arithmetic" in entries and "fewer bits" in advice
    # The trace: elementwise kernels have no bytes (unknown limiter): still the fusion reading.
    mul = next(r for r in trace.kernels if r.kernel.op == "aten::mul")
    kind, bound, entries, _a, _t = read(mul)
    assert (kind, bound) == ("elementwise", "unknown") and "triton-repository" in entries
    attention = next(r for r in trace.kernels if "scaled_dot_product_attention" in r.kernel.op and r.kernel.flops)
    assert book.kind_of(attention.kernel) == "attention" and ridge_side(attention) in ("compute", "memory")


def kernel(name: str, flops: float, nbytes: float, seconds: float, op: str = "") -> Kernel:
    return Kernel(index=0, name=name, duration_s=seconds, dram_bytes=nbytes, flops_by_class={"tensor_bf16": flops},
                  flops_counted=True, gemm_flops=flops, op=op)


def test_memory_bound_attention_reads_flashattention_and_latency_bound_kernels_read_occupancy(book):
    # 1 GB in 250 us is 4 TB/s, 83% of the H200's 4.8 TB/s, at 1 FLOP/B: memory-bound.
    cap = Capture("x.csv", "ncu-raw", "ncu", [kernel("fmha_fwd_kernel", 1e9, 1e9, 250e-6),
                                              kernel("my_custom_kernel", 1e9, 1e9, 50e-3)])
    report = analyze(cap, gpu="h200")
    attention, custom = report.kernels
    assert attention.bound == "memory" and book.rule_for(attention).entries[0] == "flashattention"
    assert custom.bound == "latency" and book.kind_of(custom.kernel) == "other"
    rule = book.rule_for(custom)
    assert rule.entries[0] == "cuda-best-practices-guide" and "occupancy" in rule.advice


def test_check_names_the_line_of_a_bad_id_an_unknown_kind_and_a_gap(tmp_path, guide):
    (tmp_path / "profile-advice.yaml").write_text(
        "kinds:\n"
        "  - {id: gemm, label: GEMM, match: [gemm]}\n"
        "rules:\n"
        "  - when: {kind: gemm}\n"
        "    advice: Tile it.\n"
        "    entries: [stream-k, no-such-entry]\n"
        "  - when: {kind: gmem, bound: slow}\n"
        "    advice: x\n"
        "    entries: [roofline-paper]\n"
        "    try_it: occupancy\n"
    )
    problems = check_advice(tmp_path, guide)
    text = "\n".join(problems)
    assert "profile-advice.yaml:6: entry 'no-such-entry' is not in the guide" in text
    assert "profile-advice.yaml:7: unknown kind 'gmem'" in text and "unknown bound 'slow'" in text
    assert "profile-advice.yaml:10: try_it may name gemm" in text
    assert "no rule for other/compute/compute" in text and "'when' is empty" in text
    (tmp_path / "profile-advice.yaml").write_text("rules: [\n")
    assert any("profile-advice.yaml:" in p and "invalid YAML" in p for p in check_advice(tmp_path, guide))
    assert check_advice(tmp_path / "none", guide) == []  # a content directory without one: nothing to check
    book, problems = parse_advice({"kinds": [], "rules": []}, lambda path: "f:1")
    assert book.rules == () and problems


def test_studytui_check_runs_the_advice_check(tmp_path, capsys):
    content = tmp_path / "content"
    # Without the practice problems: not this test's check, and the slowest part of `check`.
    shutil.copytree(ROOT / "content", content, ignore=shutil.ignore_patterns("profiles", "hardware", "problems"))
    shutil.copytree(ROOT / "content" / "hardware", content / "hardware")
    advice = content / "profile-advice.yaml"
    advice.write_text(advice.read_text().replace("entries: [nsight-compute, roofline-paper]", "entries: [nsight-compute, nope]"))
    assert main(["--content", str(content), "check"]) == 1
    captured = capsys.readouterr()
    assert "profile-advice.yaml:" in captured.out + captured.err
    assert "entry 'nope' is not in the guide" in captured.out + captured.err


def test_a_content_directory_without_advice_uses_the_shipped_one(tmp_path):
    book, problems = load_advice(tmp_path)
    assert problems == [] and book.source.endswith("profile-advice.yaml") and book.rules


# -- one kernel, as both front ends show it ---------------------------------------------------------
@pytest.mark.parametrize("path,index", [(RAW, 1), (RAW, 8), (TRACE, 69), (TRACE, 136), (DEFAULT_RAW, 4)])
def test_the_cli_kernel_view_prints_the_shared_rows(path, index, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "2000")
    assert main(["profile", str(path), "--kernel", str(index)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    rows = kernel_rows(analyze(load(path)), index)
    assert rows[0][0] == "kernel" and rows[-1][0] != "kernel"
    for label, value in rows:
        assert " ".join(f"{label}: {value}".split()) in out


def test_the_gemm_calculator_gets_a_trace_kernels_own_shape(trace, capsys):
    prefill_up = next(r for r in trace.kernels if r.kernel.index == 69)
    args, label = gemm_try_it(trace, 69)
    assert args == {"m": "2048", "n": "14336", "k": "4096", "dtype": "bf16", "gpu": "h200-sxm", "time": "300.3us"}
    assert prefill_up.kernel.flops == 2 * 2048 * 14336 * 4096 and "M 2,048, N 14,336, K 4,096" in label
    decode = gemm_try_it(trace, 153)
    assert decode is not None and decode[0]["m"] == "8" and decode[0]["k"] == "14336"
    assert gemm_try_it(trace, 72) is None  # aten::mul: not a matrix multiply
    assert gemm_try_it(analyze(load(RAW)), 1) is None  # an ncu export has no shapes
    argv = ["calc", "gemm", "--json", *[x for key, value in args.items() for x in (f"--{key}", value)]]
    assert main(argv) == 0, capsys.readouterr().err


# -- the screen's words and numbers -----------------------------------------------------------------
@pytest.mark.parametrize("path", [RAW, TRACE, DEFAULT_RAW])
def test_the_header_fits_80_columns_in_three_lines(path):
    report = analyze(load(path))
    lines = view.header_lines(report, 78, narrow=True)
    assert len(lines) <= 3 and all(len(line) <= 78 for line in lines), lines
    wide = view.header_lines(report, 118)
    assert len(wide) <= 4 and all(len(line) <= 118 for line in wide), wide
    assert any("DRAM" in line for line in lines) and any("%" in line for line in lines)


def test_table_cells_and_sorting(raw, trace):
    shown = view.shown_kernels(raw)
    assert [r.kernel.index for r in shown[:3]] == [1, 6, 4]  # longest first
    cells = view.table_cells(shown[0], view.total_time(shown))
    assert cells | {"kernel": ""} == {"index": "1", "kernel": "", "range": "gemm_bf16_8192x8192x8192", "time": "1.37 ms",
                                      "share": "56%", "intensity": "809", "flops": "814", "bw": "1,010", "bound": "compute"}
    assert view.shown_kernels(raw, sort="intensity")[0].kernel.index == 3  # fp8 GEMM, 1,830 FLOP/B
    assert [r.kernel.index for r in view.shown_kernels(raw, sort="index")] == list(range(11))
    bounds = [r.bound for r in view.shown_kernels(raw, sort="bound")]
    assert bounds == sorted(bounds, key=["compute", "memory", "latency", "unknown"].index)
    decode = next(r for r in trace.ranges if r.name == "decode")
    assert {r.range_name for r in view.shown_kernels(trace, decode)} == {"decode"} and len(view.shown_kernels(trace, decode)) == 81
    up = view.table_cells(next(r for r in trace.kernels if r.kernel.index == 69), 1.0)
    assert up["intensity"] == "≤1,250" and up["bw"] == "?"  # a trace: intensity of the shapes, no bytes


def test_plot_data_draws_the_longest_kernels_and_says_what_it_leaves_out(raw, trace):
    data = view.plot_data(raw, view.shown_kernels(raw))
    assert len(data.dots) == 11 and data.not_drawn == 0 and data.cut == 0
    assert [r.label for r in data.roofs] == ["fp8", "bf16", "fp32"] and not any(r.measured for r in data.roofs)
    assert max(data.dots, key=lambda d: d.share).share == pytest.approx(1.37e-3 / 2.45e-3, rel=0.01)
    tdata = view.plot_data(trace, view.shown_kernels(trace))
    assert len(tdata.dots) == 16 and tdata.not_drawn == 140 and tdata.from_shapes
    assert "140 without FLOPs not drawn" in view.plot_notes(tdata, trace)
    measured = analyze(load(RAW), profile="measured")
    roofs = view.roofs_of(measured)
    assert [r.measured for r in roofs] == [False, True] * 3 and roofs[1].peak < roofs[0].peak
    # past MAX_POINTS: the longest drawn, the rest counted
    many = [kernel(f"k{i}", 1e9, 1e8, (i + 1) * 1e-6) for i in range(2500)]
    for i, k in enumerate(many):
        k.index = i
    report = analyze(Capture("many.csv", "ncu-raw", "ncu", many), gpu="h200")
    big = view.plot_data(report, view.shown_kernels(report))
    assert len(big.dots) == 2000 and big.cut == 500 and min(big.drawn) == 500
    assert view.plot_notes(big, report)[0].startswith("only the 2,000 longest drawn (")


def test_without_counters_nothing_is_drawn_but_the_bf16_roof(book):
    report = analyze(load(DEFAULT_RAW))
    data = view.plot_data(report, view.shown_kernels(report))
    assert data.dots == () and data.not_drawn == 11 and [r.label for r in data.roofs] == ["bf16"]
    assert book.rule_for(report.kernels[1]).entries[0] == "stream-k"  # the limiter from speed of light still leads somewhere
