"""The tile model's instruction rules (studytui.calc.mma) against every row ptxas judged.

tests/data/ptxas-mma-validity.yaml holds 1,262 kernels, one MMA instruction each, assembled with
ptxas 13.0 for sm_90a, sm_100a and other targets (benchmarks/gpu/ptxas_mma_validity.py). Each row
is put to the model and classified:

- judged by ptxas: wgmma shapes, types, K and accumulator-vector length; tcgen05 kinds per target,
  the block-scale spelling and vector size, .block_scale with the kinds that take it. The model
  must agree with ptxas on every one of them (the match rate below, reported in docs/calculators.md).
- shape rows ptxas cannot judge: tcgen05 M and N sit in the run-time instruction descriptor, which
  ptxas does not decode, so it accepts every M and N; these rows are checked against the PTX ISA
  shape table instead (as CUTLASS restates it), and the count the ISA refuses is reported.
- operand forms outside the tile model (scale-input-d, disable-output-lane vectors, the .ws form,
  garbage descriptors): listed, not judged.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from studytui.calc import mma
from studytui.calc.units import FieldError

DATA = Path(__file__).parent / "data" / "ptxas-mma-validity.yaml"
OUTSIDE = ("scale-input-d", "disable-output-lane", ".ws (weight-stationary)", "idesc of")
# The figures docs/calculators.md and README.md quote (the test keeps them true).
EXPECTED = {"rows": 1262, "judged": 1246, "agree": 1246, "isa_only": 630, "isa_refuses": 395, "outside": 16}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))["rows"]


def _wgmma_types(kind: str) -> tuple[str, str, str]:
    ab, d = kind.split("->")
    a, _, b = ab.partition("x")
    return a, b or a, d


def _scale_spelling(row: dict) -> tuple[bool, str, int | None]:
    """(block_scale written, spelling, vector size) of a tcgen05 row's opcode; sweep rows carry no
    opcode and use the default spelling (scale_vec::1X mxf8f6f4, ::2X mxf4, ::4X mxf4nvf4)."""
    kind = row["kind"]
    opcode = row.get("opcode")
    if opcode is None:
        if kind not in mma.TCGEN05_SCALED_KINDS:
            return False, "", None
        n = {"mxf8f6f4": 1, "mxf4": 2, "mxf4nvf4": 4}[kind]
        return True, "scale_vec", mma.TCGEN05_K[kind] // n
    if ".block_scale" not in opcode:
        return False, "", None
    vec = re.search(r"scale_vec::(\d)X", opcode)
    if vec:
        return True, "scale_vec", mma.TCGEN05_K[kind] // int(vec.group(1))
    blk = re.search(r"\.block(16|32)\b", opcode)
    if blk:
        return True, "block", int(blk.group(1))
    return True, "", None


def verdict(row: dict) -> tuple[str, bool | None, str]:
    """(class, the model's verdict, the rule): class is 'ptxas', 'isa' or 'outside'."""
    note = row.get("note", "")
    if row["instruction"] == "wgmma.mma_async":
        a, b, d = _wgmma_types(row["kind"])
        rule = mma.wgmma_rule(row["arch"], a, b, d, row["M"], row["N"], row["K"], row.get("accumulator_regs"))
        return "ptxas", rule == "", rule
    if any(note.startswith(o) for o in OUTSIDE):
        return "outside", None, note
    written, spelling, vector = _scale_spelling(row)
    rule = mma.tcgen05_kind_rule(row["arch"], row["kind"], block_scale=written, scale_spelling=spelling)
    if not rule and row["kind"] in mma.TCGEN05_SCALED_KINDS:
        rule = mma.tcgen05_scale_vector_rule(row["kind"], vector)
    return "ptxas", rule == "", rule


def isa_shape(row: dict) -> str:
    """The ISA's word on a tcgen05 sweep row's M x N x K (ptxas accepts them all)."""
    return mma.tcgen05_shape_rule(row["kind"], row["cta_group"], row["M"], row["N"]) or mma.tcgen05_k_rule(row["kind"], row["K"])


def test_every_row_is_classified_and_the_model_agrees_with_ptxas_on_every_judged_one(rows) -> None:
    counts: Counter[str] = Counter()
    disagree = []
    for row in rows:
        cls, model, rule = verdict(row)
        counts[cls] += 1
        if cls == "ptxas":
            if model == row["accepted"]:
                counts["agree"] += 1
            else:
                disagree.append((row, rule))
    assert disagree == [], f"{len(disagree)} rows differ from ptxas, e.g. {disagree[:3]}"
    judged = counts["ptxas"]
    summary = {"rows": len(rows), "judged": judged, "agree": counts["agree"], "outside": counts["outside"]}
    sweep = [r for r in rows if r["instruction"] == "tcgen05.mma" and "note" not in r]
    refused = [r for r in sweep if isa_shape(r)]
    summary.update(isa_only=len(sweep), isa_refuses=len(refused))
    print(f"\nptxas-judged rows: {counts['agree']} of {judged} agree ({counts['agree'] / judged:.1%}); "
          f"tcgen05 shape rows ptxas cannot judge: {len(sweep)} (the ISA refuses {len(refused)}, ptxas accepts all); "
          f"outside the tile model: {counts['outside']}")
    assert summary == EXPECTED


def test_ptxas_accepts_every_tcgen05_shape_so_the_isa_is_the_judge(rows) -> None:
    sweep = [r for r in rows if r["instruction"] == "tcgen05.mma" and "note" not in r]
    assert sweep and all(r["accepted"] for r in sweep)
    refused = {(r["cta_group"], r["M"]) for r in sweep if isa_shape(r)}
    # M = 256 is a CTA pair's; M = 64 has no cta_group::2 form; the block-scaled kinds take M = 128 alone.
    assert (1, 256) in refused and (2, 64) in refused
    assert not isa_shape({"kind": "f16", "cta_group": 2, "M": 256, "N": 256, "K": 16})
    assert isa_shape({"kind": "f16", "cta_group": 2, "M": 256, "N": 512, "K": 16})


def test_wgmma_valid_n_lists_are_the_ones_ptxas_found(rows) -> None:
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))["wgmma_valid_n_by_type_sm_90a"]
    for kind, found in data.items():
        a, _b, _d = _wgmma_types(kind)
        assert list(mma.wgmma_valid_n(a)) == found, kind


def test_kinds_per_target_are_the_ones_ptxas_found() -> None:
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))["tcgen05_kinds_by_target_at_m128_n128"]
    for target, found in data.items():
        for item in found["accepted"] + found["rejected"]:
            kind = item.split("/")[0]
            scaled = kind in mma.TCGEN05_SCALED_KINDS
            ok = not mma.tcgen05_kind_rule(target, kind, block_scale=scaled, scale_spelling="scale_vec" if scaled else "")
            assert ok == (item in found["accepted"]), (target, item)


def test_the_docs_quote_these_figures() -> None:
    root = Path(__file__).resolve().parents[1]
    docs = " ".join((root / "docs" / "calculators.md").read_text(encoding="utf-8").split())
    readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    e = EXPECTED
    assert f"{e['agree']:,} of {e['judged']:,} agree (100%)" in docs
    assert f"accepted all {e['isa_only']} shape rows" in docs and f"refuses {e['isa_refuses']} of the {e['isa_only']}" in docs
    assert f"{e['outside']} rows are operand forms outside the tile model" in docs
    assert f"all {e['agree']:,} of the {e['rows']:,} recorded MMA kernels that ptxas can judge (100%" in readme


# ---- mma.sync facts the model rests on, re-checked with ptxas when it is installed ---------------

PTXAS = shutil.which("ptxas")
_PTX = """.version 9.0
.target {target}
.address_size 64
.visible .entry k(.param .u64 p){{
 .reg .f64 fd<24>; .reg .b32 r<8>; .reg .f32 f<8>; .reg .u64 rd<2>;
 ld.param.u64 rd1, [p];
 {loads}
 {mma}
 st.global.v2.f64 [rd1], {{fd0,fd1}}; st.global.v2.f64 [rd1+16], {{fd2,fd3}};
 st.global.v4.f32 [rd1+32], {{f0,f1,f2,f3}};
 ret;
}}
"""
_LOADS = " ".join([f"ld.global.f64 fd{i}, [rd1+{8 * i}];" for i in range(4, 20)]
                  + [f"ld.global.b32 r{i}, [rd1+{4 * i}];" for i in range(6)]
                  + [f"ld.global.f32 f{i}, [rd1+{4 * i}];" for i in range(4, 8)])
MMA_SYNC = {
    "e4m3": "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {f0,f1,f2,f3}, {r0,r1,r2,r3}, {r4,r5}, {f4,f5,f6,f7};",
    "f8f6f4": ("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e2m1.f32 {f0,f1,f2,f3}, {r0,r1,r2,r3}, {r4,r5}, "
               "{f4,f5,f6,f7};"),
    "f64_k16": ("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {fd0,fd1,fd2,fd3}, {fd4,fd5,fd6,fd7,fd8,fd9,fd10,fd11}, "
                "{fd12,fd13,fd14,fd15}, {fd16,fd17,fd18,fd19};"),
    "f64_k4": "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {fd0,fd1}, {fd4}, {fd5}, {fd6,fd7};",
}


# Integer mma.sync (s4 m16n8k64, s8 m16n8k32): A, B, C loaded, D stored, so none is optimised away.
_PTX_INT = """.version 9.0
.target {target}
.address_size 64
.visible .entry k(.param .u64 p){{
 .reg .b32 r<8>; .reg .s32 s<8>; .reg .u64 rd<2>;
 ld.param.u64 rd1, [p];
 {loads}
 {mma}
 st.global.v4.s32 [rd1], {{s0,s1,s2,s3}};
 ret;
}}
"""
_LOADS_INT = " ".join([f"ld.global.b32 r{i}, [rd1+{4 * i}];" for i in range(6)]
                      + [f"ld.global.s32 s{i}, [rd1+{4 * i}];" for i in range(4, 8)])
MMA_SYNC_INT = {
    "s4": "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {s0,s1,s2,s3}, {r0,r1,r2,r3}, {r4,r5}, {s4,s5,s6,s7};",
    "s8": "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {s0,s1,s2,s3}, {r0,r1,r2,r3}, {r4,r5}, {s4,s5,s6,s7};",
}


def _text_bytes(cubin: bytes) -> int:
    """Size of the kernel's .text section in an ELF64 cubin (16 bytes a SASS instruction)."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    def header(i: int) -> tuple[int, int, int]:
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize)
        return name, offset, size
    _n, str_off, _s = header(shstrndx)
    for i in range(shnum):
        name, _off, size = header(i)
        end = cubin.index(b"\0", str_off + name)
        if cubin[str_off + name:end] == b".text.k":
            return size
    raise AssertionError("no .text.k section")


def _assemble(tmp_path: Path, target: str, which: str) -> int | None:
    """.text bytes when ptxas assembles one mma.sync for `target`; None when it refuses."""
    src = tmp_path / f"{which}-{target}.ptx"
    out = tmp_path / f"{which}-{target}.cubin"
    if which in MMA_SYNC_INT:
        text = _PTX_INT.format(target=target, loads=_LOADS_INT, mma=MMA_SYNC_INT[which])
    else:
        text = _PTX.format(target=target, loads=_LOADS, mma=MMA_SYNC[which])
    src.write_text(text, encoding="utf-8")
    done = subprocess.run([PTXAS, f"-arch={target}", str(src), "-o", str(out)], capture_output=True, text=True, timeout=60)
    return _text_bytes(out.read_bytes()) if done.returncode == 0 else None


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
def test_ptxas_agrees_with_the_mma_sync_targets_and_fp64_paths(tmp_path: Path) -> None:
    # e4m3 mma.sync needs no 'a' target; kind::f8f6f4 does (mma.py gives sm_120 and sm_120a).
    assert _assemble(tmp_path, "sm_120", "e4m3") and _assemble(tmp_path, "sm_89", "e4m3")
    assert _assemble(tmp_path, "sm_120", "f8f6f4") is None and _assemble(tmp_path, "sm_120a", "f8f6f4")
    # f64: m8n8k4 from sm_80, m16n8k16 from sm_90 (the shapes fp64_path uses).
    assert _assemble(tmp_path, "sm_80", "f64_k4") and _assemble(tmp_path, "sm_80", "f64_k16") is None
    found = {t: _assemble(tmp_path, t, "f64_k16") for t in ("sm_90", "sm_100a", "sm_103a", "sm_120")}
    dmma = {t: size for t, size in found.items() if size}
    assert len(dmma) == len(found), found
    # sm_103a and sm_120 accept the instruction but expand it: several times the code of sm_90 and sm_100a.
    assert min(dmma["sm_103a"], dmma["sm_120"]) >= 3 * max(dmma["sm_90"], dmma["sm_100a"]), dmma
    from studytui.calc.mma import mma_path

    assert mma_path("12.0", "fp8").target == "sm_120" and mma_path("12.0", "fp4").target == "sm_120a"
    assert mma_path("10.0", "fp64").target == "sm_100" and mma_path("9.0", "fp64").k == 16 and mma_path("8.0", "fp64").k == 4
    for cc in ("10.3", "12.0"):
        with pytest.raises(FieldError, match="expands m16n8k16"):
            mma_path(cc, "fp64")


INT4_NATIVE = ("sm_80", "sm_86", "sm_89")
INT4_EMULATED = ("sm_90", "sm_100a", "sm_103a", "sm_120", "sm_120a")


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
def test_ptxas_emulates_int4_mma_sync_from_sm_90_so_the_model_refuses_it_there(tmp_path: Path) -> None:
    # s8 m16n8k32 is the same kernel size on every target: one tensor-core instruction.
    s8 = {t: _assemble(tmp_path, t, "s8") for t in INT4_NATIVE + INT4_EMULATED}
    assert all(s8.values()) and len(set(s8.values())) == 1, s8
    # s4 m16n8k64 matches it where int4 is native (8.x) and is several times larger from sm_90 on
    # (ptxas 13.0: 24 against 216 instruction slots in this kernel), an emulation.
    s4 = {t: _assemble(tmp_path, t, "s4") for t in INT4_NATIVE + INT4_EMULATED}
    assert all(s4.values()), s4
    one = next(iter(s8.values()))
    assert all(s4[t] == one for t in INT4_NATIVE), (s4, one)
    assert all(s4[t] >= 3 * one for t in INT4_EMULATED), (s4, one)
    from studytui.calc.mma import mma_path

    for cc in ("8.0", "8.6", "8.9"):
        assert mma_path(cc, "int4").kind == "s4"
    for cc in ("9.0", "10.0", "10.3", "12.0"):
        with pytest.raises(FieldError, match="one tensor-core instruction on 7.5 and 8.x only"):
            mma_path(cc, "int4")
