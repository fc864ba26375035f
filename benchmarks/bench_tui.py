"""Speed of the study app, in a real terminal.

First paint: start `studytui` inside tmux (120x40) and poll `tmux capture-pane` until the guide's
first section title is on screen; the time from launching the tmux session to that frame is one
run. The same is measured for a bare Textual app (one Static) as a yardstick, and for the app on
a synthetic guide of 5,000 entries (STUDYTUI_SYNTHETIC=5000, a benchmark-only switch).

Search: per keystroke at 5,000 entries, in a headless pilot: the filter (SearchIndex + the result
list update) alone, and a whole keystroke (key event to idle, including the redraw).

Keys in a burst (issue 23): 30 study keys (`n` x 29, then `d`) queued at once, as one terminal
read delivers them, until the 30th entry is marked in the store; the yardstick is a bare Textual
app whose Tree moves its cursor 30 times on the same burst. Both are reported per key.

Targets (issue 4): first paint < 300 ms (about twice the bare app), 5,000 entries < 600 ms,
search < 30 ms per keystroke. Run: python benchmarks/bench_tui.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import report, studytui_command  # noqa: E402

BARE_APP = (
    "from textual.app import App\n"
    "from textual.widgets import Static\n"
    "class Bare(App):\n"
    "    def compose(self):\n"
    "        yield Static('bare textual app ready')\n"
    "Bare().run()\n"
)
TIMEOUT_S = 20.0
# Poll resolution 10 ms: each capture-pane is a process; polling harder slows the app it times.


def first_paint(command: str, marker: str, env: dict[str, str], size: tuple[int, int] = (120, 40)) -> float:
    """Seconds from starting `command` in a new tmux session until `marker` is on its screen."""
    session = f"studytui-bench-{os.getpid()}"
    env_prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    start = time.perf_counter()
    subprocess.run(
        # -u PYTHONDONTWRITEBYTECODE: time the app as installed, with compiled bytecode cached
        # (the warm-up run writes it), not recompiling every module on every start.
        [
            "tmux", "new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]),
            f"env -u PYTHONDONTWRITEBYTECODE {env_prefix} {command}",
        ],
        check=True,
    )
    try:
        while True:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout
            if marker in screen:
                return time.perf_counter() - start
            if time.perf_counter() - start > TIMEOUT_S:
                raise SystemExit(f"'{marker}' never appeared; the screen was:\n{screen}")
            time.sleep(0.010)  # polling spawns processes: do not starve the app of CPU
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


async def search_keystrokes(n_entries: int, query: str) -> tuple[list[float], list[float], list[float]]:
    """Seconds per keystroke for each prefix of `query`: the filter alone, a whole pilot
    keystroke (key event to idle, redraw included), and the same pilot keystroke with filtering
    switched off (the pilot's and the Input's own cost, for comparison)."""
    from studytui.guide.synthetic import synthetic_guide
    from studytui.store import open_store
    from studytui.tui.app import StudyApp
    from studytui.tui.screens.search import SearchScreen

    guide = synthetic_guide(n_entries=n_entries)
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(tmp)
        app = StudyApp(guide, store, environ={"DISPLAY": ":0"}, cursor_blink=False)
        filter_times: list[float] = []
        key_times: list[float] = []
        baseline_times: list[float] = []
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("slash")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            app.search_index  # built once, as the app does after its first frame  # noqa: B018
            for _repeat in range(3):
                for i in range(1, len(query) + 1):
                    start = time.perf_counter()
                    screen.filter(query[:i])
                    filter_times.append(time.perf_counter() - start)
                await pilot.pause()
            screen.query_one("Input").value = ""
            await pilot.pause()
            for _repeat in range(3):
                for ch in query:
                    start = time.perf_counter()
                    await pilot.press(ch if ch != " " else "space")
                    await pilot.pause()
                    key_times.append(time.perf_counter() - start)
                screen.query_one("Input").value = ""
                await pilot.pause()
            screen.filter = lambda query: 0  # type: ignore[method-assign]
            for _repeat in range(3):
                for ch in query:
                    start = time.perf_counter()
                    await pilot.press(ch if ch != " " else "space")
                    await pilot.pause()
                    baseline_times.append(time.perf_counter() - start)
                screen.query_one("Input").value = ""
                await pilot.pause()
        store.close()
    return filter_times, key_times, baseline_times


BURST = 30


async def study_key_burst(rounds: int = 4) -> tuple[list[float], list[float]]:
    """Seconds per key for a burst of BURST keys: the study app (moves, then a mark, each applied
    to what the key before left on screen) and a bare Tree app (cursor moves only)."""
    from textual import events
    from textual.app import App
    from textual.widgets import Tree

    from studytui.guide import load_guide
    from studytui.store import open_store
    from studytui.tui.app import StudyApp

    class BareTree(App[None]):
        def compose(self):
            tree: Tree[None] = Tree("root")
            for i in range(200):
                tree.root.add_leaf(f"leaf {i}")
            tree.root.expand()
            yield tree

    async def settle(pilot, check, timeout: float = 20.0) -> None:
        deadline = time.perf_counter() + timeout
        while not check():
            if time.perf_counter() > deadline:
                raise SystemExit("a burst never settled")
            await asyncio.sleep(0.001)

    guide = load_guide()
    study: list[float] = []
    bare: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(tmp)
        app = StudyApp(guide, store, environ={"DISPLAY": ":0"}, cursor_blink=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, lambda: app.main_screen is not None and app.main_screen.detail.ready)
            for round_ in range(rounds):
                app.jump_to(guide.entries[round_ * (BURST + 1)].id)
                await pilot.pause()
                target = guide.entries[round_ * (BURST + 1) + BURST - 1].id
                start = time.perf_counter()
                for key in ["n"] * (BURST - 1) + ["d"]:
                    app.post_message(events.Key(key, key))
                await settle(pilot, lambda: store.progress(target).state == "done")
                study.append((time.perf_counter() - start) / BURST)
        store.close()
    tree_app = BareTree()
    async with tree_app.run_test(size=(120, 40)) as pilot:
        tree = tree_app.query_one(Tree)
        tree.focus()
        await pilot.pause()
        for _ in range(rounds):
            tree.move_cursor(tree.root.children[0])
            await pilot.pause()
            first = tree.cursor_line
            start = time.perf_counter()
            for _ in range(BURST):
                tree_app.post_message(events.Key("down", None))
            await settle(pilot, lambda: tree.cursor_line == first + BURST)
            bare.append((time.perf_counter() - start) / BURST)
    return study, bare


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is needed (apt-get install -y tmux)")
    ok = True
    cores = os.cpu_count()
    # One idle session keeps the tmux server up between runs: otherwise each kill-session stops
    # the server and the next new-session can race its shutdown ("server exited unexpectedly").
    keepalive = f"studytui-bench-keepalive-{os.getpid()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", keepalive, "sleep 3600"], check=True)
    try:
        return _run(args, ok, cores)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", keepalive], capture_output=True)


def _run(args, ok: bool, cores: int | None) -> int:
    from studytui.guide import load_guide
    from studytui.guide.synthetic import synthetic_guide

    print(f"studytui TUI benchmark: {args.runs} runs each, median, {cores} CPU cores, tmux 120x40", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_APP)
        data = Path(tmp) / "data"
        base_env = {"TERM": "xterm-256color", "STUDYTUI_DATA_DIR": str(data)}
        app_cmd = " ".join(shlex.quote(part) for part in studytui_command())
        marker = load_guide().sections[0].title[:20]
        synthetic_marker = synthetic_guide(n_entries=10).sections[0].title
        cases = {
            "bare": (f"{shlex.quote(sys.executable)} {bare}", "bare textual app ready", base_env),
            "app": (app_cmd, marker, base_env),
            "synthetic": (app_cmd, synthetic_marker, {**base_env, "STUDYTUI_SYNTHETIC": "5000"}),
        }
        # Interleaved, so a burst of load from other processes hits every case alike.
        times: dict[str, list[float]] = {name: [] for name in cases}
        for run in range(args.runs + 1):
            for name, (command, mark, env) in cases.items():
                elapsed = first_paint(command, mark, env)
                if run > 0:  # the first round warms caches and writes bytecode
                    times[name].append(elapsed)
        report("bare Textual app: first paint", times["bare"])
        ok &= report("studytui: first paint (real guide)", times["app"], 0.300)
        ratio = statistics.median(times["app"]) / statistics.median(times["bare"])
        print(f"{'':<48} ratio to the bare app: {ratio:.2f}x (issue: about 2x)")
        ok &= report("studytui: first paint (5,000 synthetic entries)", times["synthetic"], 0.600)
    filter_times, key_times, baseline_times = asyncio.run(search_keystrokes(5000, "attention tiling"))
    ok &= report("search: filter + list update per keystroke (5,000)", filter_times, 0.030)
    report("search: whole pilot keystroke to idle (5,000)", key_times)
    report("  same keystroke, filtering off (pilot overhead)", baseline_times)
    study, bare = asyncio.run(study_key_burst())
    report(f"study keys in a burst of {BURST} (n..., d), per key", study)
    report(f"  bare Textual Tree, {BURST} cursor moves in a burst, per key", bare)
    print(f"{'':<48} ratio to the bare Tree: {statistics.median(study) / statistics.median(bare):.2f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
