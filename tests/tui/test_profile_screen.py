"""The profile screen (issue 30): opened by `studytui --profile-file FILE`, by the palette's "Open
profile…" and by `P`; the selected kernel's limiter and the guide entries that teach what to do;
sorting, ranges, another GPU, measured ceilings; the GEMM calculator with a trace kernel's shape;
the kernel's numbers appended to a note; files studytui refuses; hostile kernel names; Esc while
reading; and snapshots at 80x24 and 120x40 of the shipped H200 records.

Snapshots use the fixed test guide (its Stream-K and FlashAttention entries), so they do not
change when the guide's content does. Update with
`pytest tests/tui/test_profile_screen.py --snapshot-update` after a deliberate change.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from studytui.cli import main
from studytui.guide import load_guide
from studytui.profile import ProfileError, load_cached
from studytui.tui import launch as tui_launch
from studytui.tui.app import StudyApp
from studytui.tui.compat import notifications
from studytui.tui.profile import KEY, SCREEN_ID
from studytui.tui.profile.dialogs import OpenProfileDialog, RangePicker
from studytui.tui.profile.screen import ProfileScreen
from studytui.tui.registry import build_registry
from studytui.tui.screens.main import MainScreen

from .support import screen_text, wait_for_palette, wait_until

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "content" / "profiles" / "h200"
RAW = H200 / "ops-full-raw.csv"
TRACE = H200 / "llama8b-layer-prefill-decode.trace.json.gz"
PROFILE_ONLY = ("studytui.tui.profile",)
WITH_CALCULATORS = ("studytui.tui.calc", "studytui.tui.profile")


def profile_app(make_app: Any, plugins: tuple[str, ...] = PROFILE_ONLY, **kw: Any) -> StudyApp:
    return make_app(registry=build_registry(plugin_modules=plugins), **kw)


def detail_text(screen: ProfileScreen) -> str:
    """The detail pane's words on one line, its wrapping undone: the head, the advice, and every
    row as "label value" (a label and its value are columns there)."""
    from textual.content import Content
    from textual.widgets import Static

    parts = []
    for wid in ("#profile-detail-head", "#profile-detail-advice", "#profile-detail-rows"):
        content = screen.query_one(wid, Static).content
        parts.append(content.plain if isinstance(content, Content) else str(content))
    return " ".join("\n".join(parts).split())


async def loaded(pilot: Any, app: StudyApp, timeout: float = 60) -> ProfileScreen:
    assert await wait_until(pilot, lambda: isinstance(app.screen, ProfileScreen) and app.screen.report is not None,
                            timeout=timeout), f"the profile never loaded: {type(app.screen).__name__}"
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, ProfileScreen)
    return screen


async def open_file(pilot: Any, app: StudyApp, path: Path) -> ProfileScreen:
    app.open_screen(SCREEN_ID, path=str(path))
    return await loaded(pilot, app)


# -- opening ----------------------------------------------------------------------------------------
def test_the_option_reads_the_file_before_the_app_starts(tmp_path: Path) -> None:
    args = argparse.Namespace(app_profile_file=None)
    assert tui_launch._profile_file(args) is None
    args.app_profile_file = str(RAW)
    assert tui_launch._profile_file(args) == str(RAW)
    bad = tmp_path / "raw.csv"
    bad.write_text('"ID","Process ID"\n"0","1"')  # a header and a truncated row
    args.app_profile_file = str(bad)
    with pytest.raises(ProfileError):
        tui_launch._profile_file(args)


@pytest.mark.parametrize("content", [None, b"\x00\x01binary", b"not,an,ncu,export\n"])
def test_a_bad_profile_file_is_one_line_and_exit_2_before_the_app_starts(content: bytes | None, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "bad.csv"
    if content is not None:
        target.write_bytes(content)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)

    def never(self: StudyApp, *a: Any, **k: Any) -> None:
        raise AssertionError("the app started")

    monkeypatch.setattr(StudyApp, "run", never)
    assert main(["--data-dir", str(tmp_path / "d"), "--profile-file", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("studytui: error: ") and "bad.csv" in err


def test_the_option_opens_the_profile_after_the_first_frame(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setattr(StudyApp, "open_screen", lambda self, screen_id, **params: opened.append((screen_id, params)))

    def first_frame_only(self: StudyApp, *a: Any, **k: Any) -> None:
        for callback in list(self.after_first_frame):
            callback()

    monkeypatch.setattr(StudyApp, "run", first_frame_only)
    assert main(["--data-dir", str(tmp_path / "d"), "--profile-file", str(RAW)]) == 0
    assert opened == [(SCREEN_ID, {"path": str(RAW)})]


def test_the_option_with_a_command_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--profile-file", str(RAW), "list"]) == 2
    assert "studytui profile FILE" in capsys.readouterr().err


async def test_the_palette_asks_for_a_path_and_opens_it(make_app: Any) -> None:
    app = profile_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Open profile")
        assert await wait_for_palette(pilot, app, "Open profile")
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: isinstance(app.screen, OpenProfileDialog))
        await pilot.press(*"/no/such/profile.csv", "enter")
        await pilot.pause()
        assert isinstance(app.screen, OpenProfileDialog) and "No such file: /no/such/profile.csv" in screen_text(app)
        field = app.screen.query_one("#profile-path")
        field.value = str(RAW)  # type: ignore[attr-defined]
        await pilot.press("enter")
        screen = await loaded(pilot, app)
        assert screen.path == str(RAW)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        # The dialog starts with the last file opened; the shipped records are listed beside it.
        await pilot.press(KEY)
        assert await wait_until(pilot, lambda: isinstance(app.screen, OpenProfileDialog))
        assert app.screen.query_one("#profile-path").value == str(RAW)  # type: ignore[attr-defined]
        assert "h200/llama8b-layer-prefill-decode.trace.json.gz" in screen_text(app)
        await pilot.press("tab", "down", "enter")  # the examples are listed by name: the second one
        screen = await loaded(pilot, app)
        assert Path(screen.path).parent == H200


async def test_a_file_studytui_refuses_is_a_notice_and_the_screen_closes(make_app: Any, tmp_path: Path) -> None:
    bad = tmp_path / "trace.json"
    bad.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 1}]}))
    app = profile_app(make_app)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_screen(SCREEN_ID, path=str(bad))
        assert await wait_until(pilot, lambda: isinstance(app.screen, MainScreen) and bool(notifications(app)))
        (notice,) = notifications(app)
        assert notice.title == "Profile not opened" and "no GPU kernels" in notice.message


async def test_esc_while_reading_stops_and_goes_back(make_app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    started = threading.Event()

    def slow(path: Any) -> Any:
        started.set()
        release.wait(10)
        return load_cached(path)

    monkeypatch.setattr("studytui.profile.load_cached", slow)
    app = profile_app(make_app)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_screen(SCREEN_ID, path=str(RAW))
        assert await wait_until(pilot, started.is_set)
        assert "Reading" in screen_text(app) and "Esc stops" in screen_text(app)
        screen = app.screen
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        release.set()
        await pilot.pause(0.3)
        assert isinstance(app.screen, MainScreen) and isinstance(screen, ProfileScreen) and screen.report is None
        assert not notifications(app)  # nothing came back to say


async def test_an_unexpected_failure_is_a_notice_not_reading_forever(make_app: Any, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"traceEvents":[' + "[" * 200_000)
    app = profile_app(make_app)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_screen(SCREEN_ID, path=str(deep))
        assert await wait_until(pilot, lambda: isinstance(app.screen, MainScreen) and bool(notifications(app)), timeout=30)
        (notice,) = notifications(app)
        assert notice.title == "Profile not opened" and "nested too deeply" in notice.message
    # Whatever a reader raises (a bug, a file nobody expected), the screen says so in a line and closes.
    for error in (ValueError("bad value"), ZeroDivisionError("division by zero"), OverflowError("too big"), RecursionError()):
        def broken(path: Any, error: BaseException = error) -> Any:
            raise error

        monkeypatch.setattr("studytui.profile.load_cached", broken)
        app = profile_app(make_app)
        async with app.run_test(size=(100, 30)) as pilot:
            app.open_screen(SCREEN_ID, path=str(RAW))
            assert await wait_until(pilot, lambda: isinstance(app.screen, MainScreen) and bool(notifications(app)))
            (notice,) = notifications(app)
            assert notice.title == "Profile not opened" and "ops-full-raw.csv" in notice.message and "\n" not in notice.message
            assert type(error).__name__ in notice.message or "nested too deeply" in notice.message


async def test_a_warning_is_a_notice(make_app: Any) -> None:
    app = profile_app(make_app, plugins=WITH_CALCULATORS)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_file(pilot, app, RAW)
        # The shipped export's one warning: kernel #10's measured clock is above the device's maximum.
        assert await wait_until(pilot, lambda: any(n.title == "Warning" for n in notifications(app)))
        (warning,) = [n for n in notifications(app) if n.title == "Warning"]
        assert "kernel #10: its measured SM clock 2.041 GHz is above the device's maximum 1.98 GHz" in warning.message
        screen._start(gpu="h100-sxm")
        assert await wait_until(pilot, lambda: screen.report.ceilings.accelerator.id == "h100-sxm")  # type: ignore[union-attr]
        await pilot.pause()
        # Another GPU to compare with changes no verdict of the floor: nothing new to say.
        assert len([n for n in notifications(app) if n.title == "Warning"]) == 1


async def test_the_open_dialog_hint_wraps(make_app: Any) -> None:
    app = profile_app(make_app)
    for size in ((120, 40), (80, 24)):
        async with app.run_test(size=size) as pilot:
            await pilot.press(KEY)
            assert await wait_until(pilot, lambda: isinstance(app.screen, OpenProfileDialog))
            text = " ".join(screen_text(app).replace("│", " ").split())
            assert "--page details also works) or a PyTorch profiler trace (.json, .json.gz, recorded with record_shapes=True)." in text
        app = profile_app(make_app)


async def test_no_gpu_is_said_once(make_app: Any) -> None:
    app = profile_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_file(pilot, app, H200 / "ops-full-details.csv")
        text = screen_text(app)
        assert "no GPU chosen: the file does not name its GPU; g chooses one" in text and "no GPU: no GPU" not in text


def _plot_rows(app: StudyApp) -> list[str]:
    """The rows inside the roofline's frame."""
    lines = screen_text(app).splitlines()
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    return [line.split("┌")[0] + line[line.index("│") + 1 if "│" in line else 0:].split("│")[0] for line in lines[top + 1:bottom]]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_each_roof_is_drawn_on_the_row_of_its_label(make_app: Any, size: tuple[int, int]) -> None:
    app = profile_app(make_app)
    async with app.run_test(size=size) as pilot:
        await open_file(pilot, app, RAW)
        await pilot.pause(0.3)
        rows = _plot_rows(app)
        labelled = {label: i for i, row in enumerate(rows) for label in ("fp8 1.98P", "bf16 989T", "fp32 67T") if label in row}
        assert set(labelled) == {"fp8 1.98P", "bf16 989T", "fp32 67T"}, rows
        for label, i in labelled.items():
            after = rows[i].split(label, 1)[1]
            assert "◆─" in after or "◆" in after and "─" in after, (label, rows[i])  # its ridge, then its flat part
        # Nothing above the highest roof: no line across the top of the plot.
        first = min(labelled.values())
        assert all(not re.search("[─⠀-⣿]", row) for row in rows[:first]), rows[:first]


# -- the selected kernel ------------------------------------------------------------------------------
async def test_the_selected_kernels_limiter_and_reading(make_app: Any) -> None:
    app = profile_app(make_app, guide=load_guide(None))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_file(pilot, app, RAW)
        assert screen.selected == 1  # the longest kernel: the bf16 8192^3 GEMM
        text = detail_text(screen)
        assert "GEMM · compute-bound · 1.37 ms (56% of the time)" in text
        assert "82% of the bf16 peak" in text and "wave quantization" in text
        assert "1 ○ Stream-K: Work-centric" in text and "2 ○ CuTe GEMM tutorial" in text
        assert "bound compute: intensity 809 FLOP/B" in text and "ridge point 206.1 FLOP/B" in text  # --kernel's rows
        assert "1 ○ Stream-K: Work-centric" in screen_text(app)  # on screen, not scrolled away
        await pilot.press("down", "down")  # the fp32 add: memory-bound elementwise
        assert await wait_until(pilot, lambda: screen.selected == 4)
        text = detail_text(screen)
        assert "elementwise · memory-bound" in text and "90% of DRAM bandwidth" in text and "Fuse it" in text
        assert "Triton repository" in text
        screen.action_sort()  # by intensity, highest first; the selection stays
        await pilot.pause()
        assert screen.sort == "intensity" and screen.kernels[0].kernel.index == 3 and screen.selected == 4
        row = next(i for i, r in enumerate(screen.kernels) if r.kernel.index == 8)
        screen.query_one("#profile-table").move_cursor(row=row)  # type: ignore[attr-defined]
        assert await wait_until(pilot, lambda: screen.selected == 8)
        text = detail_text(screen)
        assert "attention · latency-bound" in text and "1 ○ FlashAttention-2" in text
        await pilot.press("1")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and app.current_entry().id == "flashattention-2"  # type: ignore[union-attr]
        # Opened again, it comes back to the same kernel, sorted the same way.
        screen = await open_file(pilot, app, RAW)
        assert screen.selected == 8 and screen.sort == "intensity"


async def test_another_gpu_and_measured_ceilings(make_app: Any) -> None:
    app = profile_app(make_app, plugins=WITH_CALCULATORS)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_file(pilot, app, RAW)
        assert screen.report.ceilings.accelerator.id == "h200-sxm"  # type: ignore[union-attr]
        await pilot.press("m")
        assert await wait_until(pilot, lambda: screen.profile == "measured" and screen.report.ceilings.profile == "measured")  # type: ignore[union-attr]
        text = screen_text(app)
        assert "measured ceilings fp8 1.29P, bf16 714T" in text and "m vendor peaks" in text  # the key line: the way back
        await pilot.press("g")
        assert await wait_until(pilot, lambda: type(app.screen).__name__ == "GpuPickerScreen")
        await pilot.press(*"h100 sxm", "enter")
        assert await wait_until(pilot, lambda: screen.report.ceilings.accelerator.id == "h100-sxm")  # type: ignore[union-attr]
        # No measured profile for the H100: its vendor peaks, and a notice saying so.
        assert screen.profile == "vendor" and any(n.title == "No measured ceilings" for n in notifications(app))
        text = screen_text(app)
        assert "NVIDIA H100 SXM5 80GB (h100-sxm, chosen here)" in text
        # The physics floor stays the H200's, the GPU the file was recorded on: faster than an H100
        # can move bytes is no verdict on a kernel an H200 ran (review 2, Q1).
        assert "memory!" not in text and "compute!" not in text
        assert all(r.physically_possible for r in screen.report.kernels)  # type: ignore[union-attr]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_impossible_mark_is_never_clipped(make_app: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    # Review 2, Q2: "compute!" was cut to "compute" by the bound column's width.
    from test_profile_ncu import gemm, raw_csv

    path = tmp_path / "impossible.csv"
    path.write_text(raw_csv([gemm(8192, 8192, 8192, 1e-4)]), encoding="utf-8")  # 11 PFLOP/s on an H200
    app = profile_app(make_app)
    async with app.run_test(size=size) as pilot:
        screen = await open_file(pilot, app, path)
        assert screen.report.kernels[0].physically_possible is False  # type: ignore[union-attr]
        await pilot.pause()
        assert re.search(r"compute!\s*$", screen_text(app), re.M), screen_text(app)


async def test_the_measured_legend_only_names_what_is_drawn(make_app: Any) -> None:
    # Review 2, Q9: "┄ measured" in the legend with no dashed roof drawn (it lay under a vendor roof).
    app = profile_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_file(pilot, app, RAW)
        await pilot.press("m")
        assert await wait_until(pilot, lambda: screen.profile == "measured" and screen.report.ceilings.profile == "measured")  # type: ignore[union-attr]
        assert await wait_until(pilot, lambda: "measured roofs: within a row" in screen_text(app) or "┄ measured" in screen_text(app))
        await pilot.pause(0.3)
        dashed = any("┄" in row for row in _plot_rows(app))
        text = screen_text(app)
        assert ("┄ measured: sustained, not a bound" in text) == dashed
        assert dashed or "measured roofs: within a row of the vendor ones, not drawn" in text
        assert "◆◆" not in "".join(_plot_rows(app))  # no unlabelled second ridge


async def test_ranges_and_the_gemm_calculator_with_the_kernels_shape(make_app: Any) -> None:
    from studytui.tui.calc.screens import CalculatorScreen

    app = profile_app(make_app, plugins=WITH_CALCULATORS)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_file(pilot, app, TRACE)
        assert screen.selected == 69
        assert "c try it: the GEMM calculator with M 2,048, N 14,336, K 4,096, bf16" in detail_text(screen)
        await pilot.press("f")
        assert await wait_until(pilot, lambda: isinstance(app.screen, RangePicker))
        assert "decode: 81 kernels" in screen_text(app)
        await pilot.press("down", "down", "enter")  # All kernels, prefill, decode
        assert await wait_until(pilot, lambda: screen.range is not None and screen.range.name == "decode")
        assert {r.range_name for r in screen.kernels} == {"decode"} and screen.selected == 149
        assert "range decode: 81 of 156 kernels · 267 us of 2.08 ms" in screen_text(app)
        await pilot.press("c")
        assert await wait_until(pilot, lambda: isinstance(app.screen, CalculatorScreen))
        calc = app.screen
        assert calc.spec.name == "gemm"  # type: ignore[attr-defined]
        assert {f: calc.form.text_of(f) for f in ("m", "n", "k", "dtype", "gpu", "time")} == {  # type: ignore[attr-defined]
            "m": "8", "n": "14336", "k": "4096", "dtype": "bf16", "gpu": "h200-sxm", "time": "33.18us"}
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: app.screen is screen)


async def test_the_kernels_numbers_go_to_the_entrys_note(make_app: Any, store: Any) -> None:
    app = profile_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        entry = app.current_entry()
        assert entry is not None
        await open_file(pilot, app, RAW)
        await pilot.press("ctrl+s")
        await pilot.pause()
        text = store.get_note(entry.id)
        assert "### Profiled kernel #1 nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT" in text
        assert "| bound | compute: intensity 809 FLOP/B, ridge 206: 82% of the bf16 peak (93% of the peak at the 1.61 GHz it ran at) |" \
            in text
        assert "| GPU | NVIDIA H200 SXM 141GB (h200-sxm), vendor peaks |" in text


# -- hostile names -------------------------------------------------------------------------------------
def hostile_trace(tmp_path: Path) -> Path:
    """A trace whose kernel, op and range names carry escape sequences, markup and a bidi override."""
    evil = "void evil<\x1b[31mRED\x07, [bold]b[/bold], \u202eint>(int)"
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "[red]range[/red]\x1b]0;pwn\x07", "pid": 1, "tid": 1, "ts": 900, "dur": 300,
         "args": {"External id": 0}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1000, "dur": 10,
         "args": {"External id": 1, "Input Dims": [[512, 1024], [1024, 3072]], "Input type": ["c10::BFloat16"] * 2,
                  "Concrete Inputs": ["", ""]}},
        {"ph": "X", "cat": "kernel", "name": evil, "pid": 0, "tid": 7, "ts": 5000, "dur": 20.0,
         "args": {"External id": 1, "stream": 7, "grid": [132, 1, 1], "block": [384, 1, 1]}},
    ]
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], "record_shapes": 1, "traceEvents": events}
    path = tmp_path / "evil[b]\x1b.json"
    path.write_text(json.dumps(doc))
    return path


async def test_hostile_kernel_names_are_shown_as_text(make_app: Any, tmp_path: Path) -> None:
    app = profile_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_file(pilot, app, hostile_trace(tmp_path))
        text = screen_text(app) + detail_text(screen)
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        full = detail_text(screen)
        assert "full name void evil<\\x1b[31mRED\\x07, [bold]b[/bold], \\u202eint>(int)" in full  # as text, escaped
        assert "range [red]range[/red]\\x1b]0;pwn\\x07" in full
        shown = screen_text(app)
        assert "evil<…>" in shown or "evil<" in shown  # the table's short name
        assert "[red]range[/red]\\x1b]0;pwn\\x07" in shown  # the range column, markup left as text
        assert "evil[b]\\x1b.json" in shown  # the file name in the header


# -- snapshots -----------------------------------------------------------------------------------------
def opened_at(path: Path, keys: tuple[str, ...] = ()) -> Any:
    async def run_before(pilot: Any) -> None:
        app = pilot.app
        # snap_compare runs the app itself (not the settled run_test): wait for the main screen first.
        assert await wait_until(pilot, lambda: app.main_screen is not None and app.main_screen.detail.ready, timeout=30)
        await open_file(pilot, app, path)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.pause(0.2)  # the plot follows the cursor after a short rest
        await pilot.pause()

    return run_before


SIZES = {"80x24": (80, 24), "120x40": (120, 40)}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("name,path", [("ncu-raw", RAW), ("trace", TRACE)])
def test_profile_screen_snapshot(snap_compare: Any, make_app: Any, name: str, path: Path, size: str) -> None:
    assert snap_compare(profile_app(make_app), run_before=opened_at(path), terminal_size=SIZES[size])


def test_profile_detail_snapshot_at_80x24(snap_compare: Any, make_app: Any) -> None:
    # Narrow terminals: `v` shows the selected kernel's detail in place of the plot.
    assert snap_compare(profile_app(make_app), run_before=opened_at(RAW, ("v",)), terminal_size=(80, 24))


def test_points_without_colour_are_the_limiters_initial_and_sizes_follow_the_share() -> None:
    from studytui.tui.profile.plot import marker

    assert [marker("memory", s) for s in (0.001, 0.02, 0.1, 0.5)] == ["·", "•", "●", "⬤"]
    assert [marker(b, 0.01, no_color=True) for b in ("compute", "memory", "latency", "unknown")] == ["c", "m", "l", "?"]
    assert marker("compute", 0.3, no_color=True) == "C"


def test_detail_rows_wrap_beside_their_labels() -> None:
    from studytui.tui.profile.view import row_lines

    lines = row_lines([("least bytes of the shapes", "1.2 GB"), ("full name", "a" * 40 + " \x1b[31m")], 40)
    assert lines[0] == ("least bytes of ", "1.2 GB") and lines[1] == ("the shapes     ", "")
    assert all(len(label) == 15 and len(value) <= 24 for label, value in lines)
    assert "".join(value for _l, value in lines[2:]).endswith("\\x1b[31m")
