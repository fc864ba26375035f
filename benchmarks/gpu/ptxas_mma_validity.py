"""Which tensor-core MMA shapes and kinds does ptxas accept? (wgmma on sm_90a, tcgen05.mma on sm_100a)

Needs no GPU: ptxas assembles PTX for any target it knows. For each case this writes one small kernel
holding one matrix instruction, runs `ptxas -arch=<target>` on it and records whether it was
accepted and, if not, ptxas's first error lines. The result is tests/data/ptxas-mma-validity.yaml.

    python3 benchmarks/gpu/ptxas_mma_validity.py --out tests/data/ptxas-mma-validity.yaml

What ptxas can and cannot tell:
- wgmma.mma_async names its shape in the opcode (.m64nNkK), so ptxas checks M, N and K per type,
  the accumulator vector length and the operand forms.
- tcgen05.mma does not: M and N live in the 32-bit instruction descriptor (idesc), a run-time
  operand. ptxas checks the kind, the CTA group, the block-scale qualifiers, the operand list and
  the target, but not the shape (the script also assembles a descriptor of all ones to show it).
  Shape rules for tcgen05 therefore come from the PTX ISA / CUTLASS, not from this run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

PTX_VERSION = "9.0"  # PTX ISA of CUDA 13.0; sm_100f/103a/110a need >= 8.8

# -- wgmma (sm_90a) ------------------------------------------------------------------------------
# (label, dtype, atype, btype, K, operand form, accumulator register type, accumulator regs for N)
WGMMA_TYPES = [
    ("f16->f32", "f32", "f16", "f16", 16, "trans", "f32", lambda n: n // 2),
    ("f16->f16", "f16", "f16", "f16", 16, "trans", "b32", lambda n: n // 4),
    ("bf16->f32", "f32", "bf16", "bf16", 16, "trans", "f32", lambda n: n // 2),
    ("tf32->f32", "f32", "tf32", "tf32", 8, "scale", "f32", lambda n: n // 2),
    ("e4m3->f32", "f32", "e4m3", "e4m3", 32, "scale", "f32", lambda n: n // 2),
    ("e5m2->f32", "f32", "e5m2", "e5m2", 32, "scale", "f32", lambda n: n // 2),
    ("e4m3xe5m2->f16", "f16", "e4m3", "e5m2", 32, "scale", "b32", lambda n: n // 4),
    ("s8->s32", "s32", "s8", "s8", 32, "int", "s32", lambda n: n // 2),
    ("u8xs8->s32", "s32", "u8", "s8", 32, "int", "s32", lambda n: n // 2),
    ("b1->s32", "s32", "b1", "b1", 256, "b1", "s32", lambda n: n // 2),
]
WGMMA_N_VALID_RANGE = list(range(8, 257, 8))
WGMMA_N_INVALID = [4, 12, 20, 36, 100, 260, 264, 272, 512]


@dataclass
class Case:
    arch: str
    instruction: str
    kind: str
    m: int | None
    n: int | None
    k: int | None
    cta_group: int | None
    ptx: str
    note: str = ""
    extra: dict = field(default_factory=dict)


def _kernel(arch: str, body: str, regs: str) -> str:
    return (
        f".version {PTX_VERSION}\n.target {arch}\n.address_size 64\n\n"
        ".visible .entry probe(.param .u64 out)\n{\n"
        f"{regs}"
        "  .reg .b64 %da, %db;\n  .reg .b32 %dt, %sa, %sb, %z, %at;\n  .reg .pred %p;\n"
        "  mov.b64 %da, 0;\n  mov.b64 %db, 0;\n  mov.b32 %dt, 0;\n  mov.b32 %sa, 0;\n  mov.b32 %sb, 0;\n"
        "  mov.b32 %z, 0;\n  mov.b32 %at, 0;\n  setp.ne.b32 %p, %z, 0;\n"
        f"{body}"
        "  ret;\n}\n"
    )


def wgmma_case(arch: str, t: tuple, n: int, m: int = 64, k: int | None = None, nregs: int | None = None,
               note: str = "") -> Case:
    label, dtype, atype, btype, k0, form, rtype, regs_for = t
    k = k0 if k is None else k
    count = regs_for(n) if nregs is None else nregs
    count = max(count, 1)
    if rtype == "f32":
        decl, name = f"  .reg .f32 %d<{count}>;\n", "%d"
        init = "".join(f"  mov.f32 %d{i}, 0f00000000;\n" for i in range(count))
    else:
        decl, name = f"  .reg .{rtype} %d<{count}>;\n", "%d"
        init = "".join(f"  mov.{'b32' if rtype == 'b32' else 's32'} %d{i}, 0;\n" for i in range(count))
    vec = "{" + ", ".join(f"{name}{i}" for i in range(count)) + "}"
    shape = f".m{m}n{n}k{k}"
    if form == "trans":
        ops = f"{vec}, %da, %db, %p, 1, 1, 0, 0"
        opcode = f"wgmma.mma_async.sync.aligned{shape}.{dtype}.{atype}.{btype}"
    elif form == "scale":
        ops = f"{vec}, %da, %db, %p, 1, 1"
        opcode = f"wgmma.mma_async.sync.aligned{shape}.{dtype}.{atype}.{btype}"
    elif form == "int":
        ops = f"{vec}, %da, %db, %p"
        opcode = f"wgmma.mma_async.sync.aligned{shape}.{dtype}.{atype}.{btype}"
    else:  # b1: AND + population count
        ops = f"{vec}, %da, %db, %p"
        opcode = f"wgmma.mma_async.sync.aligned{shape}.{dtype}.{atype}.{btype}.and.popc"
    body = (init + "  wgmma.fence.sync.aligned;\n"
            f"  {opcode} {ops};\n"
            "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n")
    # keep the accumulators live: store the first one
    body += "  {\n  .reg .b64 %o;\n  ld.param.u64 %o, [out];\n"
    body += f"  st.global.{'f32' if rtype == 'f32' else 'b32'} [%o], %d0;\n  }}\n"
    return Case(arch, "wgmma.mma_async", label, m, n, k, None, _kernel(arch, body, decl), note,
                {"opcode": opcode, "accumulator_regs": count})


# -- tcgen05.mma (sm_100a) -----------------------------------------------------------------------
# idesc for .kind::f16/tf32/f8f6f4/i8 (PTX ISA, "Instruction descriptor"): bits 4-5 D type, 7-9 A
# type, 10-12 B type, 17-22 N>>3, 24-28 M>>4. ptxas does not decode it (see the module docstring);
# the block-scaled kinds use the same N/M fields here for illustration only.
TC_KINDS = {
    # kind: (K of one instruction, D type code, A/B type code, block-scale qualifier or None)
    "f16": (16, 1, 0, None),
    "tf32": (8, 1, 2, None),
    "f8f6f4": (32, 1, 0, None),
    "i8": (32, 2, 1, None),
    "mxf8f6f4": (32, 1, 0, "scale_vec::1X"),
    "mxf4": (64, 1, 1, "scale_vec::2X"),
    "mxf4nvf4": (64, 1, 1, "scale_vec::4X"),
}


def idesc(m: int, n: int, dcode: int, abcode: int) -> int:
    return (dcode << 4) | (abcode << 7) | (abcode << 10) | (((n >> 3) & 0x3F) << 17) | (((m >> 4) & 0x1F) << 24)


def tcgen05_case(arch: str, kind: str, cta: int, m: int, n: int, *, scale: str | None = "default",
                 form: str = "ss", lanes: int | None = None, scale_d: bool = False, desc: int | None = None,
                 ws: bool = False, note: str = "", label: str | None = None) -> Case:
    k, dcode, abcode, default_scale = TC_KINDS.get(kind, (0, 1, 0, None))
    scale = default_scale if scale == "default" else scale
    d = idesc(m, n, dcode, abcode) if desc is None else desc
    a = "[%at]" if form == "ts" else "%da"
    qual = f".kind::{kind}" + (f".block_scale.{scale}" if scale else "") if scale != "block_scale" else f".kind::{kind}.block_scale"
    opcode = f"tcgen05.mma{'.ws' if ws else ''}.cta_group::{cta}{qual}"
    ops = f"[%dt], {a}, %db, {d:#010x}"
    if scale:
        ops += ", [%sa], [%sb]"
    if lanes:
        ops += ", {" + ", ".join(["%z"] * lanes) + "}"
    ops += ", %p"
    if scale_d:
        ops += ", 1"
    body = f"  {opcode} {ops};\n"
    return Case(arch, "tcgen05.mma" + (".ws" if ws else ""), label or kind, m, n, k, cta, _kernel(arch, body, ""), note,
                {"opcode": opcode, "idesc": f"{d:#010x}", "a_operand": "tmem" if form == "ts" else "smem descriptor"})


# -- running ptxas -------------------------------------------------------------------------------
def ptxas_version(ptxas: str) -> str:
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=False).stdout
    lines = [ln for ln in out.splitlines() if ln.strip()]
    return "; ".join(lines[-2:])


_LINE = re.compile(r"^ptxas [^,]+, line \d+; ")


def run_case(ptxas: str, case: Case, workdir: str, index: int) -> dict:
    path = os.path.join(workdir, f"c{index}.ptx")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(case.ptx)
    proc = subprocess.run([ptxas, f"-arch={case.arch}", path, "-o", os.devnull], capture_output=True, text=True, check=False)
    msgs = [_LINE.sub("", ln).strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    errors = [m for m in msgs if m.startswith("error") or "fatal" in m]
    warnings = [m for m in msgs if m.startswith("warning")]
    row: dict = {"arch": case.arch, "instruction": case.instruction, "kind": case.kind, "M": case.m, "N": case.n,
                 "K": case.k}
    if case.cta_group is not None:
        row["cta_group"] = case.cta_group
    row["accepted"] = proc.returncode == 0
    errors = [re.sub(r"^error\s*:\s*", "", e) for e in errors]
    warnings = [re.sub(r"^warning\s*:\s*", "", w) for w in warnings]
    if errors:
        row["error"] = " | ".join(dict.fromkeys(re.sub(r"\s+", " ", e) for e in errors if "aborted due to errors" not in e))[:300]
    if warnings:
        row["warning"] = " | ".join(dict.fromkeys(re.sub(r"\s+", " ", w) for w in warnings))[:300]
    if case.note:
        row["note"] = case.note
    if case.instruction == "wgmma.mma_async" or case.note:  # tcgen05 shape-sweep rows: the opcode is the kind's, idesc the shape
        row["opcode"] = case.extra.get("opcode")
    for key in ("idesc", "accumulator_regs"):
        if key in case.extra:
            row[key] = case.extra[key]
    if case.extra.get("a_operand") == "tmem":
        row["a_operand"] = "tmem"
    return row


def build_cases() -> list[Case]:
    cases: list[Case] = []
    # wgmma on sm_90a: every N from the sweep and a few invalid N, per type
    for t in WGMMA_TYPES:
        for n in sorted(set(WGMMA_N_VALID_RANGE + WGMMA_N_INVALID)):
            cases.append(wgmma_case("sm_90a", t, n))
    # wgmma: wrong K, wrong M, wrong accumulator length, other targets
    f16, tf32, e4m3, s8 = WGMMA_TYPES[0], WGMMA_TYPES[3], WGMMA_TYPES[4], WGMMA_TYPES[7]
    for t, ks in ((f16, (8, 32)), (tf32, (16, 4)), (e4m3, (16, 64)), (s8, (16, 64))):
        for k in ks:
            cases.append(wgmma_case("sm_90a", t, 64, k=k, note="K other than the type's"))
    for m in (32, 128):
        cases.append(wgmma_case("sm_90a", f16, 64, m=m, note="M other than 64"))
    cases.append(wgmma_case("sm_90a", f16, 64, nregs=16, note="accumulator vector too short (16 regs for N=64 f32)"))
    cases.append(wgmma_case("sm_90a", f16, 64, nregs=64, note="accumulator vector too long (64 regs for N=64 f32)"))
    for arch in ("sm_90", "sm_100a", "sm_100f", "sm_120a"):
        for t in (f16, WGMMA_TYPES[2], tf32, e4m3, s8):
            cases.append(wgmma_case(arch, t, 64, note="other target"))

    # tcgen05.mma on sm_100a: the shape sweep (ptxas does not look at it) for every kind and CTA group
    n_list = [8, 16, 24, 32, 40, 48, 64, 96, 128, 136, 192, 248, 256, 264, 512]
    for kind in TC_KINDS:
        for cta in (1, 2):
            for m in (64, 128, 256):
                for n in n_list:
                    cases.append(tcgen05_case("sm_100a", kind, cta, m, n))
    cases.append(tcgen05_case("sm_100a", "f16", 1, 0, 0, desc=0xFFFFFFFF, note="idesc of all ones (M, N fields garbage)"))
    cases.append(tcgen05_case("sm_100a", "f16", 2, 0, 0, desc=0x00000000, note="idesc of zero (M = N = 0)"))
    # tcgen05 syntax rules ptxas does check, at M=128 N=128
    syntax = [
        dict(kind="f16", scale_d=True, note="scale-input-d immediate (f16/tf32 only)"),
        dict(kind="tf32", scale_d=True, note="scale-input-d immediate (f16/tf32 only)"),
        dict(kind="f8f6f4", scale_d=True, note="scale-input-d on f8f6f4"),
        dict(kind="i8", scale_d=True, note="scale-input-d on i8"),
        dict(kind="f16", form="ts", note="A from tensor memory"),
        dict(kind="i8", form="ts", note="A from tensor memory"),
        dict(kind="mxf8f6f4", scale="scale_vec::2X", note="mxf8f6f4 with scale_vec::2X"),
        dict(kind="mxf8f6f4", scale="scale_vec::4X", note="mxf8f6f4 with scale_vec::4X"),
        dict(kind="mxf4", scale="scale_vec::1X", note="mxf4 with scale_vec::1X"),
        dict(kind="mxf4", scale="scale_vec::4X", note="mxf4 with scale_vec::4X"),
        dict(kind="mxf4nvf4", scale="scale_vec::1X", note="mxf4nvf4 with scale_vec::1X"),
        dict(kind="mxf4nvf4", scale="scale_vec::2X", note="mxf4nvf4 with scale_vec::2X"),
        dict(kind="mxf4nvf4", scale="block16", note="mxf4nvf4 with .block16"),
        dict(kind="mxf4nvf4", scale="block32", note="mxf4nvf4 with .block32"),
        dict(kind="mxf8f6f4", scale="block32", note="mxf8f6f4 with .block32"),
        dict(kind="mxf4", scale="block32", note="mxf4 with .block32"),
        dict(kind="mxf8f6f4", scale="block16", note="mxf8f6f4 with .block16"),
        dict(kind="mxf4", scale="block16", note="mxf4 with .block16"),
        dict(kind="mxf4", scale=None, note="block-scaled kind without .block_scale"),
        dict(kind="f16", scale="scale_vec::1X", note="f16 with .block_scale"),
        dict(kind="mxf8f6f4", scale="block_scale", note="mxf8f6f4 .block_scale with no vector size"),
        dict(kind="mxf4", scale="block_scale", note="mxf4 .block_scale with no vector size"),
        dict(kind="mxf4nvf4", scale="block_scale", note="mxf4nvf4 .block_scale with no vector size"),
    ]
    for cta in (1, 2):
        for s in syntax:
            s = dict(s)
            note = s.pop("note")
            cases.append(tcgen05_case("sm_100a", m=128, n=128, cta=cta, note=note, **s))
        lanes_ok = 4 if cta == 1 else 8
        for lanes in (4, 8):
            which = "expected" if lanes == lanes_ok else "wrong"
            cases.append(tcgen05_case("sm_100a", "f16", cta, 128, 128, lanes=lanes,
                                      note=f"disable-output-lane vector of {lanes} ({which} length)"))
        cases.append(tcgen05_case("sm_100a", "f16", cta, 128, 128, ws=True, note=".ws (weight-stationary) form"))
    # every kind on other targets
    for arch in ("sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_100", "sm_120a", "sm_90a"):
        for kind in TC_KINDS:
            for cta in (1, 2):
                cases.append(tcgen05_case(arch, kind, cta, 128, 128, note="other target"))
    # the block-scaled kinds in the .block16 / .block32 spelling, on every Blackwell target
    for arch in ("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"):
        for kind, scale in (("mxf8f6f4", "block32"), ("mxf4", "block32"), ("mxf4nvf4", "block32"), ("mxf4nvf4", "block16")):
            cases.append(tcgen05_case(arch, kind, 1, 128, 128, scale=scale, note=f"other target, .block_scale.{scale}",
                                      label=kind))
    return cases


def _fmt(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value))  # a JSON string is a valid YAML double-quoted scalar


def summarize(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        key = f"{r['instruction']} {r['arch']}"
        s = out.setdefault(key, {"accepted": 0, "rejected": 0})
        s["accepted" if r["accepted"] else "rejected"] += 1
    return out


def wgmma_valid_n(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        if r["instruction"] == "wgmma.mma_async" and r["arch"] == "sm_90a" and not r.get("note"):
            out.setdefault(r["kind"], []).append((r["N"], r["accepted"]))
    return {k: sorted(n for n, ok in v if ok) for k, v in out.items()}


def tcgen05_by_arch(rows: list[dict]) -> dict:
    """Per target: which kinds ptxas accepted at M=128 N=128 in the default form (and which it refused)."""
    out: dict = {}
    for r in rows:
        default_form = (r["arch"] == "sm_100a" and "note" not in r) or r.get("note") == "other target"
        if r["instruction"] == "tcgen05.mma" and r["M"] == 128 and r["N"] == 128 and default_form:
            entry = out.setdefault(r["arch"], {"accepted": set(), "rejected": set()})
            entry["accepted" if r["accepted"] else "rejected"].add(f"{r['kind']}/cta_group::{r['cta_group']}")
    return {a: {k: sorted(v) for k, v in e.items()} for a, e in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tests/data/ptxas-mma-validity.yaml")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "ptxas")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", help="folder to keep the generated PTX in")
    args = ap.parse_args(argv)

    cases = build_cases()
    workdir = args.keep or tempfile.mkdtemp(prefix="ptxas-mma-")
    os.makedirs(workdir, exist_ok=True)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda ic: run_case(args.ptxas, ic[1], workdir, ic[0]), enumerate(cases)))
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)

    version = ptxas_version(args.ptxas)
    valid_n = wgmma_valid_n(rows)
    summary = summarize(rows)
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [
        "# Which tensor-core MMA instructions ptxas accepts: written by benchmarks/gpu/ptxas_mma_validity.py.",
        "# One row per assembled kernel (one instruction each). 'accepted' is ptxas's exit status; 'error' its",
        "# first error lines (file and line number removed).",
        "schema: studytui-ptxas-mma-validity/1",
        f"date: {_fmt(now)}",
        "hardware:",
        "  name: none (ptxas assembles for a target without the GPU; run on an x86-64 CPU host)",
        "  targets: [sm_90a (H100/H200 wgmma), sm_100a (B200/GB200 tcgen05), and others as rows say]",
        "software:",
        f"  ptxas: {_fmt(version)}",
        f"  ptx_isa_version_used: {_fmt(PTX_VERSION)}",
        f"  command: {_fmt('python3 benchmarks/gpu/ptxas_mma_validity.py --out tests/data/ptxas-mma-validity.yaml')}",
        "workload: 'one .entry kernel per row holding one wgmma.mma_async (with wgmma.fence, commit_group and",
        "  wait_group around it, accumulators zeroed and the first stored) or one tcgen05.mma with zero",
        "  descriptors and an immediate instruction descriptor; ptxas -arch=<target> FILE -o /dev/null'",
        "precision: per row (kind); K is the K of one instruction for that type",
        "baseline: 'the PTX ISA 9.0 operand tables (wgmma .shape lists; tcgen05 .kind / .cta_group /",
        "  .block_scale lists), cross-checked against CUDA 13.0 CCCL cuda/__ptx/instructions/generated/tcgen05_mma.h'",
        "correctness:",
        "  method: 'ptxas exit status 0 = accepted; every rejection carries its message. Controls: known-good",
        "    shapes (m64n256k16 f16) are accepted, known-bad ones (m64n4k16, m128n64k16) rejected'",
        "  caveat: 'tcgen05.mma takes M and N from the run-time instruction descriptor (idesc). ptxas does",
        "    not decode it: idesc 0xffffffff and 0x00000000 are accepted too. So tcgen05 rows with out-of-range",
        "    M or N being accepted says nothing about the hardware; the shape rules for tcgen05 are the ISA''s",
        "    (see tcgen05_shape_rules_documented), enforced, if at all, at run time on a Blackwell GPU (not run).'",
        "wgmma_valid_n_by_type_sm_90a:",
    ]
    for kind, ns in valid_n.items():
        lines.append(f"  {_fmt(kind)}: [{', '.join(str(n) for n in ns)}]")
    lines += [
        "tcgen05_shape_rules_documented:",
        "  source: 'CUTLASS cute/arch/mma_sm100_umma.hpp static_asserts (mirroring the PTX ISA tcgen05 shape table); not checked by ptxas'",
        "  cta_group_1_smem_a: 'M in {64, 128}; N a multiple of 8 from 8 to 256 (f16, tf32)'",
        "  cta_group_1_tmem_a: 'M = 64: N multiple of 8 in 8..256; M = 128: N multiple of 16 in 16..256'",
        "  cta_group_2_smem_a: 'M in {128, 256} (the pair of CTAs; 64 or 128 rows each); N a multiple of 16 from 16 to 256'",
        "  cta_group_2_tmem_a: 'M in {128, 256}; N a multiple of 32 from 32 to 256'",
        "  k_per_instruction: 'f16/bf16 16, tf32 8, f8f6f4 32, i8 32, mxf8f6f4 32, mxf4 64, mxf4nvf4 64 (dense)'",
        "tcgen05_kinds_by_target_at_m128_n128:",
    ]
    for arch, e in tcgen05_by_arch(rows).items():
        acc, rej = (", ".join(_fmt(x) for x in e[key]) for key in ("accepted", "rejected"))
        lines.append(f"  {arch}: {{accepted: [{acc}], rejected: [{rej}]}}")
    lines += [
        "summary:",
    ]
    for key, s in summary.items():
        lines.append(f"  {_fmt(key)}: {{accepted: {s['accepted']}, rejected: {s['rejected']}}}")
    lines.append("rows:")
    order = ["arch", "instruction", "kind", "M", "N", "K", "cta_group", "accepted", "error", "warning", "note", "opcode",
             "idesc", "a_operand", "accumulator_regs"]
    lines.append("# tcgen05 rows without a note are the shape sweep: opcode tcgen05.mma.cta_group::<cta_group>.kind::<kind>")
    lines.append("# (block-scaled kinds: .block_scale.scale_vec::1X mxf8f6f4, ::2X mxf4, ::4X mxf4nvf4), M and N only in idesc.")
    for r in rows:
        parts = [f"{k}: {_fmt(r[k])}" for k in order if k in r]
        lines.append("- {" + ", ".join(parts) + "}")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"{len(rows)} cases, ptxas {version}")
    for key, s in summary.items():
        print(f"  {key}: accepted {s['accepted']}, rejected {s['rejected']}")
    for kind, ns in valid_n.items():
        print(f"  wgmma {kind}: valid N {ns[0]}..{ns[-1]} ({len(ns)} values)" if ns else f"  wgmma {kind}: none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
