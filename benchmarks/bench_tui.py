"""Speed of the study app, in a real terminal.

First paint: start `studytui` inside tmux (120x40, a tmux server of this run's own), watched by a
tmux control-mode client: tmux reports every chunk the app writes to its terminal as it reads it
(%output), so no screen is polled. The run ends at the chunk that puts the guide's first section
title on screen: the wall time from asking tmux for the session to that chunk is one run, and
the CPU time the app's process had used at that moment (read from /proc as the chunk arrives,
every thread of the process counted, see cpu_seconds) is its CPU figure. So the work an app
does right after its first frame is not billed to it, for the app and the yardstick alike
(polling the screen every 10 ms, as this benchmark did before, billed up to a poll interval and
a capture-pane process of it; reading the main thread's CPU alone missed Textual's writer
thread and any worker's). The same is measured, interleaved in the same rounds, for a bare
Textual app (one Static) as the yardstick, and for the app on a synthetic guide of 5,000 entries
(STUDYTUI_SYNTHETIC=5000, a benchmark-only switch). Ratios: median over the yardstick's median
and minimum over its minimum, CPU (the criterion on a shared machine) and wall.

Search: per keystroke at 5,000 entries, in a headless pilot: the filter (SearchIndex + the result
list update) alone, and a whole keystroke (key event to idle, including the redraw).

Keys in a burst (issue 23): 30 study keys (`n` x 29, then `d`) queued at once, as one terminal
read delivers them, until the 30th entry is marked in the store; the yardstick is a bare Textual
app whose Tree moves its cursor 30 times on the same burst. Both are reported per key.

Targets: first paint within 1.3x of the bare app by CPU (issue 27); 5,000 entries within 2x of
the real guide's first paint (issue 4 set 600 ms beside 300 ms); search under 30 ms of CPU per
keystroke (in process: a keystroke budget, not a process start). Runs in temporary data, cache
and XDG directories. Linux only (/proc). Exits 1 if a target is missed.

Run: python benchmarks/bench_tui.py [--runs N]
"""

from __future__ import annotations

import asyncio
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import (  # noqa: E402
    Sample,
    argument_parser,
    clock,
    figures,
    isolate,
    isolated_env,
    machine_line,
    print_ratios,
    report,
    since,
    studytui_command,
)

BARE_APP = (
    "from textual.app import App\n"
    "from textual.widgets import Static\n"
    "class Bare(App):\n"
    "    def compose(self):\n"
    "        yield Static('bare textual app ready')\n"
    "Bare().run()\n"
)
TIMEOUT_S = 20.0


APP_LIMIT = 1.3  # issue 27: first paint within 1.3x of a bare Textual app in the same run
SYNTHETIC_LIMIT = 2.0  # 5,000 entries: within twice the real guide's first paint
TMUX = ["tmux", "-L", f"studytui-bench-{os.getpid()}"]  # a server of our own: never the learner's sessions
KEEPALIVE = "keepalive"


def cpu_seconds(pid: int) -> float:
    """CPU time a live process has used, all its threads counted (Textual writes frames from a
    thread of its own; a worker thread would count too): utime + stime of /proc/PID/stat (every
    thread, ended ones included, in clock ticks), or the sum of /proc/PID/task/*/schedstat (the
    live threads, in nanoseconds) where that is more. Both are lower bounds of the true figure:
    the larger is the better one."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    live = 0
    try:
        for task in os.scandir(f"/proc/{pid}/task"):
            try:
                live += int(Path(task.path, "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass  # a thread that ended meanwhile: its time is in the ticks
    except OSError:
        pass
    return max(ticks, live / 1e9)


class ScreenText:
    """The text an application writes to its terminal, escape sequences left out, fed the chunks
    of tmux's %output notifications as they come (a sequence or a UTF-8 character may be split
    between two). Only the printable characters are kept, in the order written: a label drawn in
    one go is found whole whatever styles and cursor moves surround it."""

    def __init__(self) -> None:
        import codecs

        self._decode = codecs.getincrementaldecoder("utf-8")("replace")
        self._state = "text"  # text, esc, csi, string (OSC/DCS/APC/PM, until BEL or ESC \), charset
        self.text: list[str] = []

    def feed(self, data: bytes) -> str:
        """Add a chunk (raw bytes); returns the text it added."""
        out = []
        for ch in self._decode.decode(data):
            state = self._state
            if state == "text":
                if ch == "\x1b":
                    self._state = "esc"
                elif ch >= " " and ch != "\x7f":
                    out.append(ch)
            elif state == "esc":
                self._state = {"[": "csi", "]": "string", "P": "string", "_": "string", "^": "string", "X": "string",
                               "(": "charset", ")": "charset", "*": "charset", "+": "charset"}.get(ch, "text")
            elif state == "csi":
                if "@" <= ch <= "~":
                    self._state = "text"
            elif state == "string":
                if ch == "\x07":
                    self._state = "text"
                elif ch == "\x1b":
                    self._state = "esc"  # ESC \ ends the string; the backslash then reads as ESC's one char
            else:  # charset: one designator character
                self._state = "text"
        added = "".join(out)
        self.text.append(added)
        return added


def unescape_output(data: bytes) -> bytes:
    r"""A %output notification's data: tmux writes bytes below 32 and the backslash as \ooo (octal)."""
    if b"\\" not in data:
        return data
    out = bytearray()
    i = 0
    while i < len(data):
        digits = data[i + 1:i + 4]
        if data[i] == 0x5C and len(digits) == 3 and digits.isdigit():
            out.append(int(digits, 8))
            i += 4
        else:
            out.append(data[i])
            i += 1
    return bytes(out)


class Control:
    """A tmux control-mode client of our server (attached to the keep-alive session), reading its
    stdout line by line with a deadline."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([*TMUX, "-C", "attach", "-t", KEEPALIVE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin = self.proc.stdin
        self._fd = self.proc.stdout.fileno()
        self._buffer = b""
        self.command("display-message -p ready")  # the client is attached and answering

    def send(self, command: str) -> None:
        self._stdin.write(command.encode() + b"\n")

    def line(self, deadline: float) -> bytes:
        import select

        while b"\n" not in self._buffer:
            left = deadline - time.perf_counter()
            if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                raise TimeoutError("tmux said nothing in time")
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                raise SystemExit("the tmux control client ended")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def command(self, command: str, timeout: float = TIMEOUT_S) -> list[bytes]:
        """Run a tmux command; its output lines (notifications meanwhile are dropped)."""
        self.send(command)
        deadline = time.perf_counter() + timeout
        while True:
            line = self.line(deadline)
            # "%begin TIME NUMBER FLAGS": flags 1 for a command this client sent (0: the attach's own)
            if not (line.startswith(b"%begin") and line.endswith(b" 1")):
                continue
            lines = []
            while True:
                line = self.line(deadline)
                if line.startswith((b"%end", b"%error")):
                    break
                lines.append(line)
            if line.startswith(b"%error"):
                raise SystemExit(f"tmux refused {command!r}: {b' '.join(lines).decode(errors='replace')}")
            return lines

    def close(self) -> None:
        self._stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def first_paint(control: Control, script: Path, command: str, marker: str, env: dict[str, str],
                size: tuple[int, int] = (120, 40)) -> Sample:
    """(wall seconds from asking tmux to start `command` in a new session until the chunk of
    output that puts `marker` on its screen, CPU seconds the command had used when tmux passed
    that chunk on)."""
    session = f"studytui-bench-{os.getpid()}"
    env_prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    # -u PYTHONDONTWRITEBYTECODE: time the app as installed, with compiled bytecode cached (the
    # warm-up run writes it), not recompiling every module on every start. `exec` all the way,
    # so the pane's process is the app's. A script: no quoting of the command for tmux's parser.
    script.write_text(f"exec env -u PYTHONDONTWRITEBYTECODE {env_prefix} {command}\n")
    screen = ScreenText()
    tail = ""
    start = time.perf_counter()
    deadline = start + TIMEOUT_S
    # Not detached: the control client follows the new session, so tmux reports its output
    # from the first byte. (Its size stays -x/-y: a control client sets none of its own.)
    pane, pid_text = control.command(
        f"new-session -P -F '#{{pane_id}} #{{pane_pid}}' -s {session} -x {size[0]} -y {size[1]} "
        f"'exec sh {shlex.quote(str(script))}'"
    )[0].decode().split()
    pid = int(pid_text)
    prefix = f"%output {pane} ".encode()
    try:
        while True:
            try:
                line = control.line(deadline)
            except TimeoutError:
                raise SystemExit(f"'{marker}' never appeared; the app wrote:\n{''.join(screen.text)[-2000:]}") from None
            if not line.startswith(prefix):
                continue
            cpu = cpu_seconds(pid)  # first: the moment this chunk reached tmux, as near as we can
            wall = time.perf_counter() - start
            added = screen.feed(unescape_output(line[len(prefix):]))
            if marker in tail + added:  # a marker may straddle two chunks
                break
            tail = (tail + added)[-len(marker):]
        # Check that the screen shows it too (the stream said so; this catches a wrong parse).
        while marker not in b"\n".join(control.command(f"capture-pane -p -t {pane}")).decode(errors="replace"):
            if time.perf_counter() > deadline:
                raise SystemExit(f"'{marker}' was written but is not on the screen")
            time.sleep(0.01)
        return wall, cpu
    finally:
        control.command(f"kill-session -t {session}")


async def search_keystrokes(n_entries: int, query: str) -> tuple[list[Sample], list[Sample], list[Sample]]:
    """Seconds per keystroke for each prefix of `query`: the filter alone, a whole pilot
    keystroke (key event to idle, redraw included), and the same pilot keystroke with filtering
    switched off (the pilot's and the Input's own cost, for comparison)."""
    from textual.widgets import Input

    from studytui.guide.synthetic import synthetic_guide
    from studytui.store import open_store
    from studytui.tui.app import StudyApp
    from studytui.tui.screens.search import SearchScreen

    guide = synthetic_guide(n_entries=n_entries)
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(tmp)
        app = StudyApp(guide, store, environ={"DISPLAY": ":0"}, cursor_blink=False)
        filter_times: list[Sample] = []
        key_times: list[Sample] = []
        baseline_times: list[Sample] = []
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("slash")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            app.search_index  # built once, as the app does after its first frame  # noqa: B018
            for _repeat in range(3):
                for i in range(1, len(query) + 1):
                    start = clock()
                    screen.filter(query[:i])
                    filter_times.append(since(start))
                await pilot.pause()
            screen.query_one("Input", Input).value = ""
            await pilot.pause()
            for _repeat in range(3):
                for ch in query:
                    start = clock()
                    await pilot.press(ch if ch != " " else "space")
                    await pilot.pause()
                    key_times.append(since(start))
                screen.query_one("Input", Input).value = ""
                await pilot.pause()
            screen.filter = lambda query: 0  # type: ignore[method-assign]
            for _repeat in range(3):
                for ch in query:
                    start = clock()
                    await pilot.press(ch if ch != " " else "space")
                    await pilot.pause()
                    baseline_times.append(since(start))
                screen.query_one("Input", Input).value = ""
                await pilot.pause()
        store.close()
    return filter_times, key_times, baseline_times


BURST = 30


async def study_key_burst(rounds: int = 4) -> tuple[list[Sample], list[Sample]]:
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
    study: list[Sample] = []
    bare: list[Sample] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(tmp)
        app = StudyApp(guide, store, environ={"DISPLAY": ":0"}, cursor_blink=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, lambda: app.main_screen is not None and app.main_screen.detail.ready)
            for round_ in range(rounds):
                app.jump_to(guide.entries[round_ * (BURST + 1)].id)
                await pilot.pause()
                target = guide.entries[round_ * (BURST + 1) + BURST - 1].id
                start = clock()
                for key in ["n"] * (BURST - 1) + ["d"]:
                    app.post_message(events.Key(key, key))
                await settle(pilot, lambda: store.progress(target).state == "done")
                wall, cpu = since(start)
                study.append((wall / BURST, cpu / BURST))
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
            start = clock()
            for _ in range(BURST):
                tree_app.post_message(events.Key("down", None))
            await settle(pilot, lambda: tree.cursor_line == first + BURST)
            wall, cpu = since(start)
            bare.append((wall / BURST, cpu / BURST))
    return study, bare


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--runs", type=int, default=9, help="measured interleaved rounds of first paint (default 9)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is needed (apt-get install -y tmux)")
    if not Path("/proc/self/stat").exists():
        raise SystemExit("this benchmark reads CPU time from /proc (Linux)")
    root = isolate("studytui-bench-tui-")
    # One idle session keeps our tmux server up between runs: otherwise each kill-session stops
    # the server and the next new-session can race its shutdown ("server exited unexpectedly").
    subprocess.run([*TMUX, "new-session", "-d", "-s", KEEPALIVE, "sleep 3600"], check=True)
    # Killing the session a control client follows would end the client: it goes back instead.
    subprocess.run([*TMUX, "set-option", "-g", "detach-on-destroy", "off"], check=True)
    control = Control()
    try:
        return _run(args, root, control)
    finally:
        control.close()
        subprocess.run([*TMUX, "kill-server"], capture_output=True)


def _run(args, root: Path, control: Control) -> int:
    from studytui.guide import load_guide
    from studytui.guide.synthetic import synthetic_guide

    print(f"{machine_line()}\nstudytui TUI benchmark: tmux 120x40", flush=True)
    bare = root / "bare.py"
    bare.write_text(BARE_APP)
    # tmux starts panes in its server's environment, not ours: pass the isolated directories on.
    base_env = {"TERM": "xterm-256color", **isolated_env()}
    app_cmd = " ".join(shlex.quote(part) for part in studytui_command())
    marker = load_guide().sections[0].title[:20]
    synthetic_marker = synthetic_guide(n_entries=10).sections[0].title
    labels = {"bare": "bare Textual app: first paint", "app": "studytui: first paint (real guide)",
              "synthetic": "studytui: first paint (5,000 synthetic entries)"}
    cases = {
        "bare": (f"{shlex.quote(sys.executable)} {shlex.quote(str(bare))}", "bare textual app ready", base_env),
        "app": (app_cmd, marker, base_env),
        "synthetic": (app_cmd, synthetic_marker, {**base_env, "STUDYTUI_SYNTHETIC": "5000"}),
    }
    # Interleaved and shuffled, so a burst of load from other processes hits every case alike.
    times: dict[str, list[Sample]] = {labels[name]: [] for name in cases}
    order = list(cases)
    shuffle = random.Random(4)
    for run in range(args.runs + 1):
        shuffle.shuffle(order)
        for name in order:
            command, mark, env = cases[name]
            elapsed = first_paint(control, root / "case.sh", command, mark, env)
            if run > 0:  # the first round warms caches and writes bytecode
                times[labels[name]].append(elapsed)
    results = figures(times, labels["bare"])
    over = print_ratios(results[:2], {}, rounds=args.runs, warmup=1, limit=APP_LIMIT, label_width=48)
    app, synthetic = results[1], results[2]
    ratio = synthetic.cpu / app.cpu
    ok = not over and ratio <= SYNTHETIC_LIMIT
    print(f"  {synthetic.label:<48} CPU median {synthetic.cpu * 1000:.1f} ms, {ratio:.2f}x the real guide's "
          f"(wall {synthetic.wall * 1000:.1f} ms, {synthetic.wall / app.wall:.2f}x; limit {SYNTHETIC_LIMIT}x by CPU)"
          + ("" if ratio <= SYNTHETIC_LIMIT else f"   << OVER {SYNTHETIC_LIMIT}x (CPU)"))
    filter_times, key_times, baseline_times = asyncio.run(search_keystrokes(5000, "attention tiling"))
    ok &= report("search: filter + list update per keystroke (5,000)", filter_times, 0.030)
    report("search: whole pilot keystroke to idle (5,000)", key_times)
    report("  same keystroke, filtering off (pilot overhead)", baseline_times)
    study, bare_tree = asyncio.run(study_key_burst())
    report(f"study keys in a burst of {BURST} (n..., d), per key", study)
    report(f"  bare Textual Tree, {BURST} cursor moves in a burst, per key", bare_tree)
    cpu_ratio = statistics.median(c for _, c in study) / statistics.median(c for _, c in bare_tree)
    wall_ratio = statistics.median(w for w, _ in study) / statistics.median(w for w, _ in bare_tree)
    print(f"{'':<52} ratio to the bare Tree: CPU {cpu_ratio:.2f}x, wall {wall_ratio:.2f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
