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
from collections import Counter
from pathlib import Path

import pytest
import yaml

from studytui.calc import mma

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
