"""Tile model v2 (`calc tile`): the issue's cases, refused with the rule or budgeted right.

Shapes and kinds per architecture (wgmma on 9.0, tcgen05 1-CTA and 2-CTA on 10.x, mma.sync
elsewhere), data types the hardware lacks, fp4/fp6 unpacked in shared memory, block-scale
factors, accumulator double-buffering in tensor memory, the epilogue sub-tile, warp
specialisation and setmaxnreg. The rules themselves are held against ptxas in
tests/test_tile_validity.py.
"""

from __future__ import annotations

import json

import pytest

from studytui.calc.occupancy import get_cc
from studytui.calc.tile import tile_budget
from studytui.calc.units import FieldError
from studytui.cli import main


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["calc", "tile", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---- the issue's tiles that no hardware issues: exit 2, one line, the rule --------------------

REFUSED = [
    (["--cc", "10.0", "--tile", "256x512x64", "--epilogue", "none"], "--tile", "N a multiple of 16 from 16 to 256 (got 512)"),
    (["--cc", "9.0", "--tile", "256x256x64", "--threads", "128"], "--tile", "512 registers per thread"),
    (["--tile", "100x100x30"], "--tile", "M is a multiple of 64 (got 100)"),
    (["--tile", "7x13x5", "--dtype", "fp8"], "--tile", "K is a multiple of the 32"),
    (["--cc", "9.0", "--tile", "128x256x64", "--threads", "384", "--regs", "168"], "--threads", "warp specialization"),
    (["--cc", "9.0", "--tile", "128x128x64", "--dtype", "fp4"], "--dtype", "fp6 and fp4 arrive with Blackwell"),
    (["--cc", "9.0", "--tile", "128x128x64", "--dtype", "fp6"], "--dtype", "wgmma's types"),
    (["--cc", "9.0", "--tile", "128x128x64", "--dtype", "int4"], "--dtype", "int4"),
    (["--cc", "10.0", "--tile", "128x128x64", "--dtype", "int4"], "--dtype", "no int4 kind"),
    (["--cc", "12.0", "--tile", "128x128x128", "--dtype", "int4"], "--dtype", "expands it into several times the instructions"),
    (["--cc", "10.3", "--tile", "128x128x64", "--dtype", "fp64"], "--dtype", "on 8.0, 9.0 and 10.0 only"),
    (["--cc", "12.0", "--tile", "128x128x64", "--dtype", "fp64"], "--dtype", "on 8.0, 9.0 and 10.0 only"),
    (["--cc", "8.6", "--tile", "128x128x64", "--dtype", "fp64"], "--dtype", "on 8.0, 9.0 and 10.0 only"),
    (["--cc", "10.0", "--tile", "128x128x64", "--dtype", "fp4"], "--tile", "K is a multiple of 128 for fp4"),
    (["--cc", "10.0", "--tile", "128x128x32", "--dtype", "fp6"], "--tile", "16U6_ALIGN16B"),
    (["--cc", "10.0", "--tile", "128x128x64", "--dtype", "mxfp6"], "--tile", "boxDim[0] must be 128"),
    (["--cc", "12.0", "--tile", "128x128x64", "--dtype", "fp4"], "--tile", "TileShape_K % 128"),
    (["--cc", "9.0", "--tile", "128x128x64", "--warp-specialized", "--threads", "256", "--regs", "240", "--setmaxnreg", "40/232"],
     "--setmaxnreg", "consumer 232 is below the 240 registers per thread at launch"),
    (["--cc", "9.0", "--tile", "128x128x64", "--warp-specialized", "--threads", "256", "--regs", "32", "--setmaxnreg", "40/232"],
     "--setmaxnreg", "producer 40 is above the 32 registers per thread at launch"),
    (["--cc", "10.0", "--tile", "128x256x64", "--epilogue-tile", "128x256"], "--epilogue-tile", "at most 255"),
    (["--cc", "8.0", "--tile", "128x128x64", "--dtype", "fp8"], "--dtype", "arrives with 8.9"),
    (["--cc", "7.0", "--tile", "128x128x64", "--dtype", "bf16"], "--dtype", "bf16 tensor cores arrive with 8.0"),
    (["--cc", "7.5", "--tile", "128x128x64", "--dtype", "tf32"], "--dtype", "tf32 arrives with 8.0"),
    (["--cc", "10.3", "--tile", "128x128x64", "--dtype", "int8"], "--dtype", "sm_103a has no tcgen05.mma kind::i8"),
    (["--cc", "10.0", "--tile", "64x128x64", "--cta-group", "2"], "--tile", "cta_group::2"),
    (["--cc", "10.0", "--tile", "64x128x128", "--dtype", "nvfp4"], "--tile", "M 128 (got 64)"),
    (["--cc", "9.0", "--tile", "128x128x64", "--cta-group", "2"], "--cta-group", "tcgen05"),
    (["--cc", "9.0", "--tile", "128x128x64", "--dtype", "fp32"], "--dtype", "tf32"),
    (["--cc", "9.0", "--tile", "128x256x64", "--warp-specialized", "--threads", "384", "--setmaxnreg", "40/240"],
     "--setmaxnreg", "over the 64,512"),
    (["--cc", "9.0", "--tile", "128x256x64", "--warp-specialized", "--threads", "384", "--setmaxnreg", "20/232"],
     "--setmaxnreg", "24 to 256"),
    (["--cc", "9.0", "--tile", "128x256x64", "--setmaxnreg", "40/232"], "--setmaxnreg", "warp-specialized Hopper kernel"),
    (["--cc", "10.0", "--tile", "128x128x32", "--dtype", "mxfp8"], "--tile", "K is a multiple of 128 for kind::mxf8f6f4"),
    (["--cc", "10.0", "--tile", "128x128x192", "--dtype", "mxfp4"], "--tile", "Blk_SF = 4"),
    (["--cc", "10.0", "--tile", "128x128x96", "--dtype", "nvfp4"], "--tile", "K is a multiple of 64 for kind::mxf4nvf4"),
    (["--cc", "10.0", "--tile", "128x256x64", "--warp-specialized", "--setmaxnreg", "40/232"], "--setmaxnreg",
     "Hopper's producer/consumer warpgroups only"),
    (["--cc", "9.0", "--tile", "128x256x64", "--threads", "256", "--epilogue-tile", "48x32"], "--epilogue-tile", "does not divide"),
    (["--cc", "9.0", "--tile", "128x128x64", "--epilogue", "none", "--epilogue-tile", "64x32"], "--epilogue-tile", "not used"),
    (["--cc", "9.0", "--tile", "128x128x64", "--threads", "auto5"], "--threads", "auto"),
]


@pytest.mark.parametrize("argv, flag, hint", REFUSED, ids=[" ".join(a) for a, _f, _h in REFUSED])
def test_impossible_tiles_exit_2_with_the_rule(capsys, argv: list[str], flag: str, hint: str) -> None:
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and hint in lines[0], err


def test_every_rule_a_tile_breaks_is_named() -> None:
    with pytest.raises(FieldError) as info:
        tile_budget(get_cc("9.0"), 7, 13, 5, "fp8")
    text = info.value.message
    assert "M is a multiple of 64 (got 7)" in text and "(got 13)" in text and "(got 5)" in text and "16 bytes" in text


def test_flashattention3_tile_is_legitimate_not_a_power_of_two() -> None:
    v = tile_budget(get_cc("9.0"), 128, 176, 64, "bf16", threads=384, warp_specialized=True).values
    assert v["accumulator_registers_per_thread"] == 128 * 176 // 256 == 88 and v["instruction"] == "wgmma.mma_async"


# ---- 2-CTA tiles on 10.x ----------------------------------------------------------------------

def test_256x256x64_on_b200_is_a_cta_pair_with_room_for_two_accumulators() -> None:
    v = tile_budget(get_cc("10.0"), 256, 256, 64, "bf16").values
    assert v["cta_group"] == 2 and v["tile_per_cta"] == {"m": 128, "n": 256, "k": 64}
    assert v["a_bytes_per_stage"] == 128 * 64 * 2 and v["b_bytes_per_stage"] == 128 * 64 * 2  # 16 KiB each, 32 KiB a stage
    assert v["stage_bytes_per_cta"] == 32 * 1024 + 16
    assert v["tmem_columns"] == 256 and v["tmem_accumulator_buffers"] == 2 and v["tmem_columns_allocated"] == 512
    # the epilogue stages CUTLASS's default 128x32 bf16 sub-tile twice, not the whole 128x256 C tile
    assert v["epilogue_bytes"] == 2 * 128 * 32 * 2
    assert v["stages"] == (232448 - 2 * 128 * 32 * 2) // (32 * 1024 + 16) == 6


def test_cta_group_2_at_m128_splits_a_into_64_rows() -> None:
    v = tile_budget(get_cc("10.0"), 128, 256, 64, "bf16", cta_group=2).values
    assert v["tile_per_cta"]["m"] == 64 and v["a_bytes_per_stage"] == 64 * 64 * 2 and v["b_bytes_per_stage"] == 128 * 64 * 2


def test_f8f6f4_operands_are_unpacked_one_byte_and_mxf4_packed() -> None:
    fp6 = tile_budget(get_cc("10.0"), 128, 256, 128, "fp6").values
    assert fp6["mma_kind"] == "f8f6f4" and fp6["operand_bytes_per_element"] == 1.0
    assert fp6["a_bytes_per_stage"] == 128 * 128 and fp6["b_bytes_per_stage"] == 256 * 128
    fp4 = tile_budget(get_cc("10.0"), 128, 256, 128, "fp4").values
    assert fp4["a_bytes_per_stage"] == 128 * 128  # still one byte each under kind::f8f6f4
    nv = tile_budget(get_cc("10.0"), 128, 256, 128, "nvfp4").values
    assert nv["mma_kind"] == "mxf4nvf4" and nv["a_bytes_per_stage"] == 128 * 128 // 2


def test_block_scale_factors_in_shared_memory_and_tensor_memory() -> None:
    v = tile_budget(get_cc("10.0"), 128, 256, 256, "nvfp4").values  # one UE4M3 scale per 16 along K
    assert v["scale_factor_bytes_per_stage"] == (128 + 256) * 256 // 16
    assert v["tmem_scale_factor_columns"] == (256 // 16 // 4) * (1 + 2)  # A's 128 rows, B's 256 rows in two lane groups
    n192 = tile_budget(get_cc("10.0"), 128, 192, 256, "nvfp4").values  # B's scales padded to 256 columns (MMA_N_SFB)
    assert n192["scale_factor_bytes_per_stage"] == (128 + 256) * 256 // 16 and n192["tmem_scale_factor_columns"] == 4 * (1 + 2)
    mx = tile_budget(get_cc("10.0"), 128, 128, 128, "mxfp8").values  # one E8M0 scale per 32
    assert mx["mma_kind"] == "mxf8f6f4" and mx["scale_factor_bytes_per_stage"] == (128 + 128) * 128 // 32
    assert tile_budget(get_cc("10.0"), 128, 128, 128, "fp8").values["scale_factor_bytes_per_stage"] == 0


def test_a_cta_pair_needs_b_scale_factors_for_all_of_n(capsys) -> None:
    # cta_group::2: each CTA computes M/2 rows across the full N, so it holds B's scale factors for
    # every column (CUTLASS deduce_smem_layoutSFB uses the whole tile N), A's for its own rows only.
    v = tile_budget(get_cc("10.0"), 256, 256, 256, "nvfp4").values
    assert v["cta_group"] == 2 and v["b_bytes_per_stage"] == 128 * 256 // 2  # B's data is split ...
    assert v["scale_factor_bytes_per_stage"] == 128 * 256 // 16 + 256 * 256 // 16 == 6144  # ... its scales are not
    assert v["stage_bytes_per_cta"] == 16384 + 16384 + 6144 + 16
    assert v["tmem_scale_factor_columns"] == 4 * (1 + 2)
    code, out, _ = cli(capsys, "--cc", "10.0", "--tile", "256x256x256", "--dtype", "nvfp4", "--explain")
    text = " ".join(out.split())
    assert code == 0 and "scale factors = (A 128 rows + B 256 columns (all of N" in text and "= 2,048 + 4,096 = 6,144 B" in text


def test_accumulator_buffers_fall_to_one_with_a_warning_when_two_do_not_fit() -> None:
    result = tile_budget(get_cc("10.0"), 256, 256, 256, "nvfp4")
    assert result.values["tmem_accumulator_buffers"] == 1
    assert any("one accumulator buffer" in w for w in result.warnings)
    with pytest.raises(FieldError, match="acc_buffers|over the 512"):
        tile_budget(get_cc("10.0"), 256, 256, 256, "nvfp4", acc_buffers=2)


# ---- warp specialisation ------------------------------------------------------------------------

def test_warp_specialized_accumulators_sit_in_the_consumers_only() -> None:
    result = tile_budget(get_cc("9.0"), 128, 256, 64, "bf16", threads=384, regs=168, warp_specialized=True)
    v = result.values
    assert v["accumulator_registers_per_thread"] == 128 and v["consumer_threads"] == 256  # not 86 over all 384
    ws = v["setmaxnreg"]
    assert (ws["producer"], ws["consumer"]) == (40, 232)
    assert ws["registers_needed"] == 40 * 128 + 232 * 256 == ws["registers_in_block"] == 384 * 168
    assert v["blocks_per_sm"] == 1  # one block per SM by design


def test_setmaxnreg_split_is_checked_against_the_accumulators() -> None:
    with pytest.raises(FieldError, match="do not fit in 120"):
        tile_budget(get_cc("9.0"), 128, 256, 64, "bf16", threads=384, regs=96, warp_specialized=True, setmaxnreg=(40, 120))


def test_setmaxnreg_inc_raises_and_dec_lowers_from_the_launch_count() -> None:
    # PTX ISA setmaxnreg: .inc raises a warp's count from its current value, .dec lowers it, so
    # producer <= launch registers <= consumer.
    cc = get_cc("9.0")
    with pytest.raises(FieldError, match="consumer 232 is below the 240"):
        tile_budget(cc, 128, 128, 64, "bf16", threads=256, regs=240, warp_specialized=True, setmaxnreg=(40, 232))
    with pytest.raises(FieldError, match="producer 40 is above the 32"):
        tile_budget(cc, 128, 128, 64, "bf16", threads=256, regs=32, warp_specialized=True, setmaxnreg=(40, 232))
    with pytest.raises(FieldError, match="the launch count assumed here"):  # 255 assumed at launch for 256 threads
        tile_budget(cc, 128, 128, 64, "bf16", threads=256, warp_specialized=True, setmaxnreg=(40, 232))
    ok = tile_budget(cc, 128, 128, 64, "bf16", threads=256, regs=168, warp_specialized=True, setmaxnreg=(40, 232)).values
    assert (ok["setmaxnreg"]["producer"], ok["setmaxnreg"]["consumer"]) == (40, 232)
    auto = tile_budget(cc, 64, 64, 64, "bf16", threads=256, regs=32, warp_specialized=True).values["setmaxnreg"]
    assert auto["producer"] <= 32 <= auto["consumer"]


def test_epilogue_sub_tile_replaces_the_whole_c_tile() -> None:
    whole = tile_budget(get_cc("9.0"), 128, 256, 64, "bf16", threads=256).values
    assert whole["epilogue_bytes"] == 128 * 256 * 2 and whole["max_stages"] == 3
    sub = tile_budget(get_cc("9.0"), 128, 256, 64, "bf16", threads=256, epilogue_tile=(64, 32)).values
    assert sub["epilogue_bytes"] == 64 * 32 * 2 * 2
    assert sub["max_stages"] == (232448 - 8192) // (16384 + 32768 + 16) == 4


def test_json_has_the_issue_keys(capsys) -> None:
    code, out, _ = cli(capsys, "--gpu", "b200", "--tile", "256x256x64", "--json")
    assert code == 0
    data = json.loads(out)
    for key in ("stage_bytes_per_cta", "a_bytes_per_stage", "b_bytes_per_stage", "cta_group", "accumulator_registers_per_thread",
                "tmem_columns"):
        assert key in data, key
    assert data["cta_group"] == 2 and data["tmem_columns"] == 256


def test_mma_sync_architectures() -> None:
    a100 = tile_budget(get_cc("8.0"), 128, 128, 32, "bf16").values
    assert a100["instruction"] == "mma.sync" and a100["tmem_columns"] is None and a100["accumulator_registers_per_thread"] == 128
    fp64 = tile_budget(get_cc("8.0"), 64, 64, 16, "fp64").values
    assert fp64["mma_kind"] == "f64" and fp64["accumulator_registers_per_thread"] == 64 * 64 * 2 // 128
    ada = tile_budget(get_cc("8.9"), 128, 128, 64, "fp8").values
    assert ada["mma_kind"] == "e4m3"
    rtx = tile_budget(get_cc("12.0"), 128, 128, 128, "fp4").values
    assert rtx["mma_kind"] == "f8f6f4" and rtx["operand_bytes_per_element"] == 1.0 and rtx["compile_target"] == "sm_120a"
    # plain e4m3 mma.sync needs no arch-specific target on 12.0 (ptxas 13.0 assembles it for sm_120)
    assert tile_budget(get_cc("12.0"), 128, 128, 64, "fp8").values["compile_target"] == "sm_120"
    assert tile_budget(get_cc("12.0"), 128, 128, 128, "mxfp8").values["compile_target"] == "sm_120a"
    # fp64 runs as DMMA on 10.0 as on 9.0 (mma.sync m16n8k16 .f64, register accumulators)
    b200 = tile_budget(get_cc("10.0"), 64, 64, 16, "fp64").values
    assert b200["instruction"] == "mma.sync" and b200["mma_kind"] == "f64" and b200["compile_target"] == "sm_100"
    assert b200["tmem_columns"] is None and b200["accumulator_registers_per_thread"] == 64 * 64 * 2 // 128


def test_unpacked_fp4_fp6_take_k_in_multiples_of_128() -> None:
    cc = get_cc("10.0")
    for dtype in ("fp4", "fp6", "mxfp6"):
        for k in (32, 64, 96):
            with pytest.raises(FieldError, match="K is a multiple of 128"):
                tile_budget(cc, 128, 128, k, dtype)
        assert tile_budget(cc, 128, 128, 128, dtype).values["stages"] >= 1
    assert tile_budget(cc, 128, 128, 64, "fp8").values["stages"] >= 1  # 8-bit loads as plain bytes
    assert tile_budget(cc, 128, 128, 128, "mxfp8").values["stages"] >= 1
    assert tile_budget(cc, 128, 128, 128, "mxfp4").values["stages"] >= 1  # packed fp4: 64 B rows, no unpacking


def test_every_tcgen05_shape_rule_is_listed() -> None:
    with pytest.raises(FieldError) as info:
        tile_budget(get_cc("10.0"), 100, 100, 30, "bf16")
    text = info.value.message
    assert "M 64 or 128 (got 100)" in text and "N a multiple of 8 from 8 to 256 (got 100)" in text
    assert "(got 30)" in text and "60 B" in text


def test_blackwell_epilogue_reads_tensor_memory_in_32_column_chunks() -> None:
    for m, n in ((128, 256), (256, 256), (128, 128)):
        result = tile_budget(get_cc("10.0"), m, n, 64, "bf16")
        v = result.values
        assert v["epilogue_registers_per_thread"] == 32 and v["epilogue_chunk"] == [128, 32], (m, n)
        assert "32 per thread for a 128x32 chunk" in " ".join(r[1] for r in result.rows)
        assert all(row[1].count("256 per thread") == 0 for row in result.rows)
    sub = tile_budget(get_cc("10.0"), 128, 256, 64, "bf16", epilogue_tile=(128, 64)).values
    assert sub["epilogue_registers_per_thread"] == 64 and sub["epilogue_chunk"] == [128, 64]
    with pytest.raises(FieldError, match="a thread addresses at most 255"):
        tile_budget(get_cc("10.0"), 128, 256, 64, "bf16", epilogue_tile=(128, 256))


def test_two_blocks_per_sm_are_refused_when_tensor_memory_holds_one(capsys) -> None:
    v = tile_budget(get_cc("10.0"), 256, 256, 64, "bf16").values
    assert v["tmem_columns_allocated"] == 512 and v["blocks_per_sm"] == 1
    assert v["stages_for_two_blocks"] == 0 and v["two_blocks_prevented_by"] == ["tensor memory"]
    code, out, _ = cli(capsys, "--cc", "10.0", "--tile", "256x256x64")
    text = " ".join(out.split())
    assert code == 0 and "stages for 2 blocks per SM none at any stage count: tensor memory" in text
    assert "one accumulator buffer would halve the allocation" in text
    two = tile_budget(get_cc("10.0"), 128, 128, 64, "bf16").values  # 256 of 512 columns: two CTAs fit
    assert two["stages_for_two_blocks"] >= 1 and two["two_blocks_prevented_by"] == []


def test_tile_messages_name_fields_not_flags() -> None:
    # The app shows these rows too: no command-line flag names in them.
    result = tile_budget(get_cc("9.0"), 128, 128, 64, "bf16")
    assert "registers not counted (give registers per thread)" in " ".join(r[1] for r in result.rows)
    assert not any("--" in r[1] for r in result.rows)


# ---- second review ------------------------------------------------------------------------------

def test_block_scaled_k_is_a_multiple_of_four_scale_vectors() -> None:
    # CUTLASS Sm1xxBlockScaledConfig: the scale layout's K extent is TileK / SFVecSize / 4, so K is a
    # multiple of 128 for the mx kinds (one scale per 32) and of 64 for nvfp4 (one per 16).
    for cc in ("10.0", "12.0"):
        for dtype, bad, good in (("mxfp8", (32, 64, 96, 192), 128), ("mxfp4", (64, 192), 256), ("nvfp4", (32, 96), 64)):
            for k in bad:
                with pytest.raises(FieldError, match=r"scales come in blocks of 4 along K .*Blk_SF = 4"):
                    tile_budget(get_cc(cc), 128, 128, k, dtype)
            assert tile_budget(get_cc(cc), 128, 128, good, dtype).values["stages"] >= 1, (cc, dtype)
    v = tile_budget(get_cc("10.0"), 128, 128, 128, "mxfp8").values
    assert v["tmem_scale_factor_columns"] == (128 // 32 // 4) * 2  # whole 4-scale granules, A and B


def test_setmaxnreg_off_hopper_is_refused_for_the_true_reason() -> None:
    # ptxas 13.0 assembles setmaxnreg for sm_100a and sm_120a; the model's split is Hopper's only.
    for cc, target in (("10.0", "sm_100a"), ("10.3", "sm_103a")):
        with pytest.raises(FieldError) as info:
            tile_budget(get_cc(cc), 128, 256, 64, "bf16", warp_specialized=True, setmaxnreg=(40, 232))
        text = info.value.message
        assert "Hopper's producer/consumer warpgroups only" in text and target in text, text
        assert "turn on" not in text
    with pytest.raises(FieldError) as info:
        tile_budget(get_cc("12.0"), 128, 128, 64, "bf16", setmaxnreg=(40, 232))
    assert "sm_120a" in info.value.message and "turn on" not in info.value.message
    with pytest.raises(FieldError, match="needs cc 9.0 or later"):
        tile_budget(get_cc("8.0"), 128, 128, 64, "bf16", setmaxnreg=(40, 232))
    with pytest.raises(FieldError, match="turn on warp specialized"):  # on 9.0 it is the missing switch
        tile_budget(get_cc("9.0"), 128, 128, 64, "bf16", threads=256, setmaxnreg=(40, 232))


def test_sm100_default_epilogue_stages_cutlass_sub_tiles(capsys) -> None:
    # CUTLASS sm100 EpilogueTileAuto without a C source: 4096 elements / 128 rows = 128x32, and
    # StagesD = min(EpiTiles, 2) buffers of it; the register chunk is the same sub-tile.
    result = tile_budget(get_cc("10.0"), 128, 256, 64, "bf16")
    v = result.values
    assert v["epilogue_tile"] == [128, 32] and v["epilogue_buffers"] == 2 and v["epilogue_bytes"] == 16384
    assert v["epilogue_chunk"] == [128, 32] and v["epilogue_tile_source"] == "CUTLASS sm100 default"
    assert v["stages"] == (232448 - 16384) // (16384 + 32768 + 16) == 4
    rows = " ".join(r[1] for r in result.rows)
    assert "the whole" not in rows and "128x32 bf16 sub-tile x 2 buffer(s), as CUTLASS's default sm100 epilogue" in rows
    code, out, _ = cli(capsys, "--cc", "10.0", "--tile", "128x256x64", "--explain")
    text = " ".join(out.split())
    assert code == 0 and "StagesD = min(8 sub-tiles in 128x256, 2)" in text and "sm100_builder.inl" in text
    # 2-CTA M = 128: 2x2 epilogue warps, 64 rows each, 4096 / 64 = 64 columns
    pair = tile_budget(get_cc("10.0"), 128, 128, 64, "bf16", cta_group=2).values
    assert pair["epilogue_tile"] == [64, 64] and pair["epilogue_bytes"] == 2 * 64 * 64 * 2
    # block-scaled with N = 256: M x 128 (CUTLASS's OverlappingAccum case)
    assert tile_budget(get_cc("10.0"), 128, 256, 128, "nvfp4").values["epilogue_tile"] == [128, 128]
    # one sub-tile in the tile: one buffer
    one = tile_budget(get_cc("10.0"), 128, 32, 64, "bf16").values
    assert one["epilogue_buffers"] == 1 and one["epilogue_bytes"] == 128 * 32 * 2
    # no epilogue via shared memory: nothing staged, tensor memory still read in 128x32 chunks
    none = tile_budget(get_cc("10.0"), 128, 256, 64, "bf16", epilogue="none").values
    assert none["epilogue_bytes"] == 0 and none["epilogue_chunk"] == [128, 32]
    with pytest.raises(FieldError, match="CTA tile too small"):
        tile_budget(get_cc("10.0"), 128, 8, 64, "bf16", c_dtype="fp8")


def test_int4_on_blackwell_geforce_is_refused_like_fp64() -> None:
    with pytest.raises(FieldError, match="7.5 and 8.x only"):
        tile_budget(get_cc("12.0"), 128, 128, 128, "int4")
    assert tile_budget(get_cc("8.9"), 128, 128, 128, "int4").values["mma_kind"] == "s4"


def test_the_block_scaled_kinds_are_choices_of_the_form() -> None:
    from studytui.calc.tile import SPEC

    field = next(f for f in SPEC.fields if f.name == "dtype")
    assert {"nvfp4", "mxfp8", "mxfp6", "mxfp4"} <= set(field.choices or ())
