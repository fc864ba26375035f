"""Calculators in the TUI: how long a calculator screen takes to open, and a recompute to show.

Runs the real study app headless (Textual's pilot, 120x40) on the real guide, opens each
calculator screen repeatedly and prints medians:

- open: from asking for the screen (what `c` does) to its first frame painted, results included
  (the roofline plot is drawn one frame later on purpose and is timed separately as "plot");
  the first opening of a session also imports the calculator modules: reported once, apart;
- recompute: one changed field -> calculator run -> every result widget updated (synchronous);
- keystroke to frame: a typed character until the frame showing the new numbers is painted.

Each figure: wall and CPU (time.process_time), median and minimum. Targets (issues 6 and 27,
absolute because they are what a learner waits for on screen, not a process start): open under
150 ms, recompute within one frame (16 ms), judged on the CPU median; the opening is also printed
as a ratio to the bare screen's, opened the same way in the same run. Runs in temporary data,
cache and XDG directories. Exits 1 if a target is missed.

Usage: python benchmarks/bench_calc_tui.py [--runs N] [CALC ...]
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import Sample, argument_parser, clock, isolate, machine_line, report, since  # noqa: E402

SETTLE_S = 0.2  # quiet time between measurements, so one run's leftover work is not billed to the next
FIELD_TO_TYPE = {"roofline": "flops", "gemm": "m", "transformer": "batch", "collective": "gpus", "specdec": "gamma", "kv": "context",
                 "memory": "batch", "occupancy": "threads", "tile": "threads", "l2": "reuse"}
# Where appending "1" would make the input invalid (81 GPUs past an 8-GPU domain, 2561 threads),
# the field starts from this value and the keystroke completes it to a valid one.
FIELD_START = {"collective": ("", "4"), "occupancy": ("12", "8"), "tile": ("12", "8")}


async def settle(pilot) -> None:
    """Between measurements: let the main screen finish coming back, and collect the garbage the
    previous run left, so a collection it caused is not billed to the next one (a learner opens
    a calculator now and then, not nine times in a row)."""
    await pilot.pause(SETTLE_S)
    gc.collect()


async def _after_next_frame(screen) -> None:
    done = asyncio.Event()
    screen.call_after_refresh(done.set)
    await done.wait()


async def baseline(app, pilot, runs: int) -> list[Sample]:
    """The floor on this machine: a bare screen with one Input, opened and typed into the same way."""
    from textual.screen import Screen
    from textual.widgets import Input, Static

    class Bare(Screen[None]):
        def compose(self):
            yield Static("bare")
            yield Input("1", compact=True)

    opens, keys = [], []
    for i in range(runs + 1):
        start = clock()
        screen = Bare()
        app.push_screen(screen)
        while not screen.is_mounted:
            await asyncio.sleep(0)
        await _after_next_frame(screen)
        opened = since(start)
        screen.query_one(Input).focus()
        await pilot.pause()
        t2 = clock()
        await pilot.press("1")
        await _after_next_frame(screen)
        typed = since(t2)
        if i:
            opens.append(opened)
            keys.append(typed)
        app.pop_screen()
        await settle(pilot)
    report("baseline: bare screen with one Input, open", opens)
    report("baseline: keystroke to painted frame", keys)
    return opens


async def bench(calcs: list[str], runs: int) -> bool:
    from textual.widgets import Input

    from studytui.calc.registry import spec as calc_spec
    from studytui.guide import load_guide
    from studytui.store import open_store
    from studytui.tui.app import StudyApp
    from studytui.tui.calc import SCREEN_ID, register
    from studytui.tui.calc.plot import RooflinePlot
    from studytui.tui.calc.screens import CalculatorScreen
    from studytui.tui.registry import build_registry

    registry = build_registry()
    if SCREEN_ID not in registry.screens:
        register(registry)
    ok = True
    with tempfile.TemporaryDirectory() as data:
        store = open_store(Path(data))
        store.set_note("warm-up", "x")  # the first store write pays the schema setup: not ours
        app = StudyApp(load_guide(), store, registry=registry, cursor_blink=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            bare_opens = await baseline(app, pilot, runs)
            bare_cpu, bare_wall = statistics.median(c for _, c in bare_opens), statistics.median(w for w, _ in bare_opens)
            for calc in calcs:
                opens: list[Sample] = []
                plots: list[Sample] = []
                recomputes: list[Sample] = []
                keys: list[Sample] = []
                for i in range(runs + 1):  # the first opening imports modules: not counted
                    start = clock()
                    app.open_screen(SCREEN_ID, calc=calc)
                    screen = app.screen
                    assert isinstance(screen, CalculatorScreen)
                    while not screen.is_mounted:
                        await asyncio.sleep(0)
                    await _after_next_frame(screen)
                    opened = since(start)
                    if screen.query(RooflinePlot):
                        await _after_next_frame(screen)
                        await _after_next_frame(screen)
                    plotted = since(start)
                    field = FIELD_TO_TYPE[calc]
                    control = screen.form.rows[field].control
                    assert isinstance(control, Input), f"{calc}: {field} is not a text field"
                    control.focus()
                    await pilot.pause()
                    t0 = clock()
                    screen.recompute(force=True)
                    recomputed = since(t0)
                    await pilot.pause()
                    # A keystroke: the digit goes through the Input, its Changed event, the
                    # calculator and the widgets, then a frame is painted.
                    start_value, key = FIELD_START.get(calc, (None, "1"))
                    if start_value is not None:
                        control.value = start_value
                        await pilot.pause()
                    control.cursor_position = len(control.value)
                    t2 = clock()
                    await pilot.press(key)
                    await _after_next_frame(screen)
                    typed = since(t2)
                    assert screen.result is not None, f"{calc}: {screen.error}"
                    if not i and calc == calcs[0]:
                        report("first opening in a session (imports included)", [opened])
                    if i:
                        opens.append(opened)
                        plots.append(plotted)
                        recomputes.append(recomputed)
                        keys.append(typed)
                    app.pop_screen()
                    await settle(pilot)
                ok &= report(f"{calc}: open (first frame with results)", opens, 0.150)
                print(f"{'':<52} {statistics.median(c for _, c in opens) / bare_cpu:.2f}x the bare screen's CPU, "
                      f"{statistics.median(w for w, _ in opens) / bare_wall:.2f}x its wall")
                if calc_spec(calc).plot == "roofline":
                    report(f"{calc}: open until the plot is drawn", plots)
                ok &= report(f"{calc}: recompute (run + widget updates)", recomputes, 0.016)
                report(f"{calc}: keystroke to painted frame", keys)
        store.close()
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--runs", type=int, default=9, help="measured openings per calculator (default 9)")
    parser.add_argument("calcs", nargs="*", metavar="CALC", help="calculators to open (default: all)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    isolate("studytui-bench-calc-tui-")
    from studytui.calc.registry import names

    unknown = sorted(set(args.calcs) - set(names()))
    if unknown:
        parser.error(f"unknown calculator(s): {', '.join(unknown)} (known: {', '.join(names())})")
    print(f"{machine_line()}\nbench_calc_tui: headless pilot, 120x40, {args.runs} runs per figure", flush=True)
    ok = asyncio.run(bench(args.calcs or list(names()), args.runs))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
