"""The profile screen: a profile's kernels on the chosen GPU's roofline.

- **Header:** the file, its format and metric set, the GPU and its ceilings, the totals (time,
  GEMM FLOPs, DRAM bytes, the share of time by limiter) and the range shown.
- **Roofline** (log-log): the GPU's roofs for the precisions the kernels ran at (vendor peaks
  solid; measured ceilings dashed, when chosen), each ridge point, and the kernels as points,
  coloured by limiter, their size standing for their share of the time; the selected kernel ◉.
  Under it: what is not drawn (kernels without FLOPs or bytes; past MAX_POINTS, all but the
  longest).
- **Detail** of the selected kernel: its limiter and why, what to do about it and the guide
  entries that teach it (content/profile-advice.yaml; `1`-`4` or a click reads one), a try-it
  with the kernel's own GEMM shape, then every figure (`studytui profile FILE --kernel N`'s rows).
- **Table** of the kernels, longest first; `s` sorts by another column, `f` shows one range.

From WIDE_FROM columns the plot and the detail sit side by side; below, `v` switches between
them (Enter on a kernel shows its detail). The file is read and analysed in a worker (the first
frame shows "Reading…"; Esc cancels); a file studytui refuses is a notice, and the screen closes.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import os
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Static

from studytui.core.errors import StudyError
from studytui.core.text import one_line
from studytui.profile.report import bound_cell
from studytui.tui.format import STATE_GLYPHS, visible_controls
from studytui.tui.host import data_dir_of, host_of, store_of
from studytui.tui.profile import LAST_FILE_KEY, view
from studytui.tui.profile.plot import BOUND_RICH, BOUND_STYLES, ProfilePlot
from studytui.tui.screens.refuse import RefusesStudyKeys

if TYPE_CHECKING:
    from textual import events
    from textual.timer import Timer
    from textual.worker import Worker

    from studytui.profile import Capture, Report
    from studytui.profile.analyze import KernelResult, RangeResult
    from studytui.profile.report import AdviceBook

WIDE_FROM = 110  # columns: plot and detail side by side from here
DETAIL_WIDTH = 54
BOUND_PAD = 2  # spaces before the limiter in the kernel table
CALCULATORS = "calculators"  # the calculators plug-in's screen id (studytui.tui.calc)
READ_KEYS = 4  # 1..4 read the suggested entries
PLOT_DELAY_S = 0.06  # the plot follows the cursor once it rests this long (plotext redraws every point)
# (key, label, short label, action) of the key line; every entry is clickable.
KEY_ACTIONS = (
    ("esc", "back", "back", "close"),
    ("v", "plot/kernel", "view", "toggle_view"),
    ("s", "sort", "sort", "sort"),
    ("f", "range…", "range", "pick_range"),
    ("g", "GPU…", "GPU", "pick_gpu"),
    ("m", "measured", "meas.", "toggle_measured"),
    ("c", "try it", "calc", "try_it"),
    ("ctrl+s", "to note", "note", "save_note"),
)


@dataclass
class Remembered:
    """What the learner had chosen for a file, kept while the app runs (reading an entry closes
    the screen; opening the file again comes back to the same kernel)."""

    selected: int | None = None
    sort: str = "time"
    range_name: str | None = None
    gpu: str | None = None
    profile: str = "vendor"


# Per app (a test's apps, the browser's tabs, each its own), per file.
_REMEMBERED: weakref.WeakKeyDictionary[Any, dict[str, Remembered]] = weakref.WeakKeyDictionary()


def remembered(app: Any, path: str) -> Remembered:
    return _REMEMBERED.setdefault(app, {}).setdefault(path, Remembered())


def _key_line(narrow: bool, sort: str, range_name: str | None, measured: bool) -> Content:
    parts = []
    for key, label, short, action in KEY_ACTIONS:
        if action == "toggle_view" and not narrow:
            continue
        shown = short if narrow else label
        if action == "sort":
            shown = f"{shown}: {dict((s[0], s[1]) for s in view.SORTS)[sort]}"
        elif action == "pick_range" and range_name is not None and not narrow:
            shown = "range: " + (range_name if len(range_name) <= 16 else range_name[:15] + "…")
        elif action == "toggle_measured":
            shown = ("vendor" if narrow else "vendor peaks") if measured else shown if narrow else "measured ceilings"
        parts.append(Content.from_markup(f"[@click=screen.{action}][b]$key[/b] $label[/]", key=key, label=shown))
    gap = " " if narrow else "  "
    tail = [] if narrow else [Content(f"1-{READ_KEYS} read")]
    return Content(" ") + Content(gap).join([*parts, *tail])


class ProfileScreen(RefusesStudyKeys, Screen[None]):
    """One profile: header, roofline, the selected kernel, the kernels."""

    DEFAULT_CSS = """
    ProfileScreen { layout: vertical; }
    #profile-header { height: auto; max-height: 4; padding: 0 1; background: $panel; }
    ProfileScreen.-narrow #profile-header { max-height: 3; }
    #profile-loading { height: 1fr; padding: 1 2; }
    #profile-top { height: 1fr; }
    #profile-plot-box { width: 1fr; height: 1fr; }
    #profile-plot-note { height: auto; max-height: 3; color: $text-muted; padding: 0 1; }
    ProfileScreen.-narrow #profile-plot-note { max-height: 2; }
    #profile-detail-scroll { width: %d; height: 1fr; border-left: vkey $panel-lighten-2; padding: 0 1; scrollbar-size-vertical: 1; }
    #profile-detail-head, #profile-detail-advice { height: auto; }
    #profile-detail-advice { margin-top: 1; }
    #profile-detail-rows { height: auto; margin-top: 1; }
    #profile-table { height: 14; scrollbar-size-vertical: 1; }
    #profile-keys { height: 1; background: $panel; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    ProfileScreen.-narrow #profile-table { height: 9; }
    ProfileScreen.-narrow #profile-detail-scroll { width: 1fr; border-left: none; }
    ProfileScreen.-narrow #profile-plot-box { display: block; }
    ProfileScreen.-narrow #profile-detail-scroll { display: none; }
    ProfileScreen.-narrow.-detail #profile-plot-box { display: none; }
    ProfileScreen.-narrow.-detail #profile-detail-scroll { display: block; }
    """ % DETAIL_WIDTH

    BINDINGS = [
        Binding("escape", "close", "Back", id="profile-back", tooltip="Back (while reading: stop)"),
        Binding("v", "toggle_view", "Plot/kernel", id="profile-view", tooltip="Narrow terminals: the plot or the kernel's detail"),
        Binding("s", "sort", "Sort", id="profile-sort", tooltip="Sort the kernels by the next column"),
        Binding("f", "pick_range", "Range", id="profile-range", tooltip="Show the kernels of one range"),
        Binding("g,ctrl+g", "pick_gpu", "GPU", id="profile-gpu", tooltip="Another GPU's ceilings"),
        Binding("m", "toggle_measured", "Measured", id="profile-measured", tooltip="Measured ceilings or vendor peaks"),
        Binding("c", "try_it", "Try it", id="profile-try-it", tooltip="The GEMM calculator with this kernel's shape"),
        Binding("ctrl+s", "save_note", "To note", id="profile-note", tooltip="Append this kernel's numbers to the entry's note"),
        *[Binding(str(i + 1), f"read({i})", f"Read {i + 1}", show=False, id=f"profile-read-{i + 1}") for i in range(READ_KEYS)],
        Binding("shift+down", "scroll_detail(1)", "Detail down", show=False, id="profile-detail-down"),
        Binding("shift+up", "scroll_detail(-1)", "Detail up", show=False, id="profile-detail-up"),
    ]

    def __init__(self, path: str, gpu: str | None = None) -> None:
        super().__init__()
        self.path = path
        self.memory = Remembered()  # the app's, once mounted (on_mount)
        self.gpu: str | None = gpu
        self.profile = "vendor"
        self.sort = "time"
        self.range: RangeResult | None = None
        self.capture: Capture | None = None
        self.report: Report | None = None
        self.book: AdviceBook | None = None
        self.book_problems: list[str] = []
        self.kernels: list[KernelResult] = []  # those shown (the range), in the table's order
        self.rows: list[KernelResult] = []  # the table's rows: the first view.MAX_ROWS of them
        self._row_index: dict[int, int] = {}  # kernel index -> row
        self._shown_time = 0.0
        self._plot_data: view.PlotData | None = None
        self._dot_index: dict[int, int] = {}  # kernel index -> its point
        self.selected: int | None = None
        self.show_detail = False  # narrow terminals: the detail instead of the plot
        self.gpu_chosen_here = gpu is not None
        self._worker: Worker[None] | None = None
        self._job = 0
        self._plot_timer: Timer | None = None
        self._suggested: list[view.Suggestion] = []
        self._filling = False

    # --- building -----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(Content(f"Reading {one_line(os.path.basename(self.path))}…"), id="profile-header")
        yield Static(Content(f"Reading {one_line(self.path)}… (Esc stops)"), id="profile-loading")
        with Horizontal(id="profile-top"):
            with Vertical(id="profile-plot-box"):
                yield ProfilePlot(id="profile-plot")
                yield Static("", id="profile-plot-note")
            with VerticalScroll(id="profile-detail-scroll"):
                yield Static("", id="profile-detail-head")
                yield Static("", id="profile-detail-advice")
                yield Static("", id="profile-detail-rows")
        table: DataTable[Any] = DataTable(id="profile-table", cursor_type="row", zebra_stripes=False, cell_padding=0)
        yield table
        yield Static("", id="profile-keys")

    @property
    def narrow(self) -> bool:
        return self.app.size.width < WIDE_FROM

    def on_mount(self) -> None:
        memory = self.memory = remembered(self.app, self.path)
        if self.gpu is None and memory.gpu is not None:
            self.gpu, self.gpu_chosen_here = memory.gpu, True
        self.profile = memory.profile
        self.sort = memory.sort if memory.sort in view.SORT_IDS else "time"
        self.selected = memory.selected
        self.set_class(self.narrow, "-narrow")
        self.query_one(ProfilePlot).on_drawn = self._plot_drawn
        self.query_one("#profile-top").display = False
        self.query_one("#profile-table").display = False
        self._draw_keys()
        self._start()

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < WIDE_FROM
        if narrow != self.has_class("-narrow"):
            self.set_class(narrow, "-narrow")
            if self.report is not None:
                self._fill(keep=self.selected)

    # --- reading and analysing (a worker) -----------------------------------------------------
    def _start(self, gpu: str | None = None, profile: str | None = None) -> None:
        """Read (the first time) and analyse the file for a GPU and ceilings (default: those shown);
        what is shown changes only once the analysis is done."""
        self._job += 1
        gpu = self.gpu if gpu is None else gpu
        profile = self.profile if profile is None else profile
        # What the worker needs from the app is taken here, on the event loop.
        where = (self.capture, self.book, self.book_problems, data_dir_of(self.app), self._content_dir)
        self._worker = self.run_worker(self._work(self._job, gpu, profile, where), name="profile", group="profile",
                                       exit_on_error=False)

    def _compute(self, gpu: str | None, profile: str, where: tuple[Any, ...]) -> tuple[Capture, Report, AdviceBook | None, list[str], str]:
        """In a thread: the file (cached while unchanged), its analysis, the advice book, and why
        measured ceilings gave way to vendor peaks ("" when they did not)."""
        from studytui.core.errors import UsageError
        from studytui.profile import analyze, load_cached

        capture, book, problems, data_dir, content_dir = where
        capture = capture if capture is not None else load_cached(self.path)
        fell_back = ""
        try:
            report = analyze(capture, gpu=gpu, profile=profile, data_dir=data_dir)
        except UsageError as exc:
            if profile == "vendor":
                raise
            # No measured profile for this GPU: its vendor peaks, and a notice saying why.
            report = analyze(capture, gpu=gpu, profile="vendor", data_dir=data_dir)
            fell_back = str(exc)
        if book is None:
            from studytui.profile.report import load_advice

            try:
                book, problems = load_advice(content_dir)
            except StudyError as exc:  # a broken advice file: the profile still shows
                book, problems = None, [str(exc)]
        return capture, report, book, list(problems), fell_back

    async def _work(self, job: int, gpu: str | None, profile: str, where: tuple[Any, ...]) -> None:
        try:
            capture, report, book, problems, fell_back = await asyncio.to_thread(self._compute, gpu, profile, where)
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, the screen says so in a line and never hangs
            if job == self._job and self.is_attached:
                self._failed(_failure(self.path, exc))
            return
        if job != self._job or not self.is_attached:
            return
        first = self.report is None
        shown_before = self.report.warnings if self.report is not None else []
        self.capture, self.report, self.book, self.book_problems = capture, report, book, problems
        if report.warnings and report.warnings != shown_before:  # a kernel faster than the hardware, events left out
            more = f" (and {len(report.warnings) - 1:,} more: studytui profile FILE lists them)" if len(report.warnings) > 1 else ""
            self._say(report.warnings[0] + more, "Warning", "warning")
        if fell_back:
            profile = "vendor"
            self._say(f"{fell_back}; vendor peaks are shown", "No measured ceilings", "warning")
        self.gpu, self.profile = gpu, profile
        if gpu is not None:
            self.gpu_chosen_here = True
        self.memory.gpu = gpu if self.gpu_chosen_here else None
        self.memory.profile = profile
        if first:
            self._remember_file()
            for problem in problems[:1]:
                self._say(f"profile-advice.yaml: {problem}", "No reading suggestions", "warning")
        if self.range is not None:
            self.range = next((r for r in report.ranges if r.name == self.range.name), None)
        elif first and self.memory.range_name is not None:
            self.range = next((r for r in report.ranges if r.name == self.memory.range_name), None)
        self._show()

    def _failed(self, message: str) -> None:
        if self.report is None:
            self._say(message, "Profile not opened", "error")
            self.dismiss(None)
            return
        # A GPU or ceilings the analysis refused (no measured profile for it): keep what is shown.
        self._say(message, "Ceilings not changed", "warning")
        self._draw_keys()

    def _say(self, message: str, title: str, severity: str) -> None:
        host = host_of(self.app)
        if host is not None:
            host.say(message, title=title, severity=severity, timeout=8)  # type: ignore[arg-type]
        else:
            self.notify(visible_controls(message), title=title, severity=severity, timeout=8, markup=False)  # type: ignore[arg-type]

    def _remember_file(self) -> None:
        host = host_of(self.app)
        store = store_of(self.app)
        if host is not None and store is not None:
            host.store_write(store.set_ui, LAST_FILE_KEY, self.path)

    @property
    def _content_dir(self) -> str | None:
        host = host_of(self.app)
        return host.guide.content_dir if host is not None else None

    # --- showing ------------------------------------------------------------------------------
    def _show(self) -> None:
        self.query_one("#profile-loading").display = False
        self.query_one("#profile-top").display = True
        self.query_one("#profile-table").display = True
        self._fill(keep=self.selected)

    def _header(self) -> None:
        assert self.report is not None
        width = max(40, self.app.size.width - 2)
        lines = view.header_lines(self.report, width, self.range, self.gpu_chosen_here, self.narrow)
        head = Content.assemble((lines[0], "bold"), *(("\n" + line) for line in lines[1:]))
        self.query_one("#profile-header", Static).update(head)

    def _fill(self, keep: int | None = None) -> None:
        """Header, table and plot for the kernels shown (range and sort as chosen)."""
        report = self.report
        if report is None:
            return
        self._header()
        self.kernels = view.shown_kernels(report, self.range, self.sort)
        self.rows = self.kernels[: view.MAX_ROWS]
        self._row_index = {r.kernel.index: i for i, r in enumerate(self.rows)}
        self._shown_time = view.total_time(self.kernels)
        self._plot_data = view.plot_data(report, self.kernels)
        self._dot_index = {index: i for i, index in enumerate(self._plot_data.drawn)}
        self._fill_table()
        if keep is None or keep not in self._row_index:
            keep = self.rows[0].kernel.index if self.rows else None
        self.selected = keep
        self._move_cursor()
        self._plot_now()
        self._detail()
        self._draw_keys()

    def _columns(self) -> list[tuple[str, str, int]]:
        """(id, heading, width) of the table's columns for the terminal's width."""
        narrow = self.narrow
        last = max((r.kernel.index for r in self.rows), default=0)
        # Numbers are right-justified in a column one wider than they are: that space separates
        # the columns (the table has no cell padding, so 80 columns leave room for the name).
        # The bound column: two spaces and the longest limiter, its "!" (physically impossible) never clipped.
        bound_w = max([9] + [BOUND_PAD + len(bound_cell(r)) for r in self.rows])
        fixed = [("index", "#", max(2, len(str(last))) + 1), ("time", "time", 9), ("share", "%", 5), ("intensity", "FLOP/B", 8),
                 ("flops", "TFLOP/s", 8), ("bw", "GB/s", 7), ("bound", "bound", bound_w)]
        width = max(60, self.app.size.width - 1)  # the scroll bar
        room = width - sum(w for _i, _h, w in fixed)
        if narrow:
            names = [("kernel", " kernel", max(12, room - 1))]
        else:
            name_w = max(16, min(57, (room - 2) * 3 // 5))
            names = [("kernel", " kernel", name_w), ("range", "range", max(8, room - 2 - name_w))]
        sort_column = {s[0]: s[2] for s in view.SORTS}[self.sort]
        columns = [fixed[0], *names, *fixed[1:]]
        return [(cid, heading + ("▼" if heading.strip() == sort_column and self.sort != "index" else ""), w)
                for cid, heading, w in columns]

    def _fill_table(self) -> None:
        table = self.query_one("#profile-table", DataTable)
        self._filling = True
        table.clear(columns=True)
        columns = self._columns()
        for cid, heading, width in columns:
            heading = " " * BOUND_PAD + heading if cid == "bound" else heading
            table.add_column(Text(heading, justify="left" if cid in ("kernel", "range", "bound") else "right"), width=width, key=cid)
        shown = self._shown_time
        name_width = next(w for cid, _h, w in columns if cid == "kernel") - 2
        range_width = next((w - 1 for cid, _h, w in columns if cid == "range"), None)
        names, ranges = view.table_names(self.rows, name_width, range_width)
        rows = []
        for r in self.rows:
            cells = view.table_cells(r, shown, name_width, names, ranges)
            row = []
            for cid, _heading, _width in columns:
                value = cells[cid]
                if cid == "kernel":
                    row.append(Text(" " + value, no_wrap=True, overflow="ellipsis"))
                elif cid == "range":
                    row.append(Text(value, no_wrap=True, overflow="ellipsis"))
                elif cid == "bound":
                    row.append(Text(" " * BOUND_PAD + value, style=BOUND_RICH.get(r.bound, ""), no_wrap=True))
                else:
                    row.append(Text(value, justify="right"))
            rows.append(row)
        table.add_rows(rows)
        # add_rows keys rows by order; the kernel of row i is self.rows[i]
        self._filling = False

    def _row_of(self, index: int | None) -> int | None:
        return self._row_index.get(index) if index is not None else None

    def _move_cursor(self) -> None:
        row = self._row_of(self.selected)
        table = self.query_one("#profile-table", DataTable)
        if row is not None:
            table.move_cursor(row=row, animate=False)
        table.focus()

    def _plot_now(self) -> None:
        if self._plot_timer is not None:
            self._plot_timer.stop()
            self._plot_timer = None
        report = self.report
        if report is None or not self.is_attached:
            return
        plot = self.query_one(ProfilePlot)
        data = self._plot_data if self._plot_data is not None else view.plot_data(report, self.kernels)
        note = self.query_one("#profile-plot-note", Static)
        note.update(self._legend(data))
        if not data.roofs:
            plot.blank("No GPU ceilings: the file does not say which GPU ran it. g chooses one.")
            return
        at = self._dot_index.get(self.selected) if self.selected is not None else None
        selected = data.dots[at] if at is not None else None
        plot.show(data.roofs, data.dots, selected, no_color=bool(self.app.no_color), labels=not self.narrow)

    def _legend(self, data: view.PlotData) -> Content:
        narrow = self.narrow
        parts: list[Content] = []
        for bound in ("compute", "memory", "latency", "unknown"):
            if any(d.bound == bound for d in data.dots):
                glyph = bound[0] if self.app.no_color else "●"
                parts.append(Content.assemble((glyph, BOUND_STYLES[bound]), f" {bound}"))
        if data.dots:
            parts.append(Content("size: share of time" if not narrow else "size: time"))
            parts.append(Content.assemble(("◉", "bold"), " selected"))
            if any(r.measured for r in data.roofs):
                shown = self.query_one(ProfilePlot).measured_shown
                if shown == 0:  # every measured roof shares a row with a vendor roof: the header lists them
                    parts.append(Content("measured: not drawn" if narrow else "measured roofs: within a row of the vendor ones, not drawn"))
                else:
                    parts.append(Content.assemble(("┄", "green"), " measured" if narrow else " measured: sustained, not a bound"))
        notes = view.plot_notes(data, self.report, narrow) if self.report is not None else []
        if len(self.kernels) > len(self.rows):
            order = dict((sid, label) for sid, label, _c in view.SORTS)[self.sort]
            notes.append(f"table: the first {len(self.rows):,} of {len(self.kernels):,} by {order}")
        return Content("  ").join(parts + [Content(n) for n in notes])

    def _plot_drawn(self) -> None:
        """The plot drew another number of measured roofs: the legend follows."""
        data = self._plot_data
        if data is not None and self.report is not None and self.is_attached:
            self.query_one("#profile-plot-note", Static).update(self._legend(data))

    def _schedule_plot(self) -> None:
        if self._plot_timer is not None:
            self._plot_timer.stop()
        self._plot_timer = self.set_timer(PLOT_DELAY_S, self._plot_now, name="profile-plot")

    # --- the selected kernel ------------------------------------------------------------------
    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if self._filling or not (0 <= event.cursor_row < len(self.rows)):
            return
        index = self.rows[event.cursor_row].kernel.index
        if index == self.selected:
            return
        self.selected = index
        self.memory.selected = index
        self._detail()
        self._schedule_plot()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if self.narrow and not self.show_detail:
            self.action_toggle_view()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        by_column = {"time": "time", "share": "time", "intensity": "intensity", "flops": "flops", "bw": "bw", "bound": "bound",
                     "index": "index"}
        sort = by_column.get(str(event.column_key.value))
        if sort is not None:
            self._sort_by(sort)

    def _result(self) -> KernelResult | None:
        if self.report is None or self.selected is None:
            return None
        return self.report.kernels[self.selected]

    def _detail(self) -> None:
        head = self.query_one("#profile-detail-head", Static)
        advice = self.query_one("#profile-detail-advice", Static)
        rows_widget = self.query_one("#profile-detail-rows", Static)
        r = self._result()
        report = self.report
        if r is None or report is None:
            head.update(Content("No kernels in this range."))
            advice.update("")
            rows_widget.update("")
            self._suggested = []
            return
        from studytui.profile.report import gemm_try_it, kernel_rows

        shown = self._shown_time
        kind = view.kind_label(self.book, r)
        colour = BOUND_STYLES.get(r.bound, "")
        head.update(Content.assemble(
            (view.text(f"#{r.kernel.index} {r.short_name}"), "bold"), "\n",
            (view.text(r.range_name), "dim"), "\n",
            (view.headline(r, kind, shown), f"bold {colour}".strip()), "\n",
            visible_controls(r.bound_reason),
        ))
        rule = self.book.rule_for(r) if self.book is not None else None
        self._suggested = view.suggestions(rule, self._lookup, READ_KEYS)
        parts: list[Content] = [Content.styled("What to do", "bold underline")]
        if rule is not None:
            parts.append(Content(rule.advice))
        room = max(20, self._detail_width() - 4)
        for i, s in enumerate(self._suggested):
            glyph = self._state(s.entry_id)
            line = Content.from_markup(f"[@click=screen.read({i})][b]{i + 1}[/b] {glyph} $title[/]", title=_cut(s.title, room))
            parts.append(line)
        if rule is not None and rule.try_it == "gemm":
            try_it = gemm_try_it(report, r.kernel.index)
            if try_it is not None:
                parts.append(Content.from_markup("[@click=screen.try_it][b]c[/b] try it: the GEMM calculator with $shape[/]",
                                                 shape=try_it[1].split(": ", 1)[1]))
            else:
                parts.append(Content.styled("(no GEMM shape in this file for the calculator: a trace recorded with shapes has one)",
                                            "dim"))
        if not self._suggested and self.book is None:
            parts.append(Content.styled("No reading suggestions: profile-advice.yaml could not be read.", "dim"))
        advice.update(Content("\n").join(parts))
        rows = [(label, value) for label, value in kernel_rows(report, r.kernel.index) if label != "kernel"]
        lines = view.row_lines(rows, self._detail_width())
        rows_widget.update(Content("\n").join(Content.assemble((label, "dim"), " ", value) for label, value in lines))

    def _detail_width(self) -> int:
        """The detail pane's text width (less its padding and scroll bar)."""
        return (self.app.size.width if self.narrow else DETAIL_WIDTH) - 4

    def _lookup(self, entry_id: str) -> tuple[str, str] | None:
        host = host_of(self.app)
        if host is None:
            return None
        entry = host.guide.get(entry_id)
        return (entry.title, entry.section_title) if entry is not None else None

    def _state(self, entry_id: str) -> str:
        """The entry's state glyph (○ pending, ◐ learning, ● done, ⊘ skipped)."""
        host = host_of(self.app)
        return STATE_GLYPHS.get(host.state_of(entry_id), "○") if host is not None else "○"

    # --- keys -----------------------------------------------------------------------------------
    def _draw_keys(self) -> None:
        if self.is_attached:
            self.query_one("#profile-keys", Static).update(
                _key_line(self.narrow, self.sort, self.range.name if self.range else None, self.profile != "vendor"))

    def action_close(self) -> None:
        if self.report is None and self._worker is not None:
            self._worker.cancel()
        self._job += 1  # whatever is still working comes back to nothing
        self.dismiss(None)

    def action_toggle_view(self) -> None:
        if not self.narrow:
            self.notify("The plot and the kernel's detail are both on screen (v switches them on narrow terminals).", timeout=3)
            return
        self.show_detail = not self.show_detail
        self.set_class(self.show_detail, "-detail")

    def action_sort(self) -> None:
        self._sort_by(view.SORT_IDS[(view.SORT_IDS.index(self.sort) + 1) % len(view.SORT_IDS)])

    def _sort_by(self, sort: str) -> None:
        if self.report is None:
            return
        self.sort = self.memory.sort = sort
        self._fill(keep=self.selected)

    def action_pick_range(self) -> None:
        report = self.report
        if report is None:
            return
        from studytui.tui.profile.dialogs import RangePicker

        ranges = report.ranges
        options = [(-1, f"All kernels: {report.total.kernels:,}, {view.time_text(report.total.duration_s)}")]
        for i, rng in enumerate(ranges[:500]):
            name = view.text(rng.name.split(" > ")[-1])
            options.append((i, f"{'  ' * rng.depth}{name}: {rng.kernels:,} kernels, {view.time_text(rng.duration_s)}, "
                               f"{view.share_text(rng.time_by_bound, rng.duration_s)}"))
        current = ranges.index(self.range) if self.range in ranges else -1

        def chosen(index: int | None) -> None:
            if index is None or self.report is None:
                return
            self.range = None if index < 0 else self.report.ranges[index]
            self.memory.range_name = self.range.name if self.range is not None else None
            self._fill(keep=self.selected)

        self.app.push_screen(RangePicker(options, current), chosen)

    def action_pick_gpu(self) -> None:
        if self.report is None:
            return
        from studytui.tui.calc.gpu_picker import GpuPickerScreen

        ce = self.report.ceilings
        current = ce.accelerator.id if ce is not None and ce.accelerator is not None else None

        def chosen(gpu_id: str | None) -> None:
            if gpu_id and gpu_id != current:
                self._start(gpu=gpu_id)

        self.app.push_screen(GpuPickerScreen(current, data_dir_of(self.app)), chosen)

    def action_toggle_measured(self) -> None:
        if self.report is None:
            return
        if self.report.ceilings is None:
            self.notify("No GPU yet: g chooses one.", severity="warning", timeout=3)
            return
        self._start(profile="vendor" if self.profile != "vendor" else "measured")

    def action_scroll_detail(self, lines: int) -> None:
        """Shift+Down / Shift+Up: the detail pane scrolls (the arrows move through the kernels)."""
        self.query_one("#profile-detail-scroll", VerticalScroll).scroll_relative(y=3 * lines, animate=False)

    def action_read(self, n: int) -> None:
        if not (0 <= n < len(self._suggested)):
            self.notify(f"No entry {n + 1} to read for this kernel.", timeout=3)
            return
        host = host_of(self.app)
        if host is not None:
            host.jump_to(self._suggested[n].entry_id)

    def action_try_it(self) -> None:
        report, r = self.report, self._result()
        if report is None or r is None:
            return
        from studytui.profile.report import gemm_try_it

        host = host_of(self.app)
        try_it = gemm_try_it(report, r.kernel.index)
        if try_it is None:
            self.notify("No GEMM shape for this kernel: a trace recorded with record_shapes=True gives M, N and K.",
                        severity="warning", timeout=4)
        elif host is None or CALCULATORS not in host.registry.screens:
            self.notify("The calculators are not part of this app.", severity="warning", timeout=3)
        else:
            args, label = try_it
            host.open_screen(CALCULATORS, calc="gemm", args=args, label=label)

    def action_save_note(self) -> None:
        report, r = self.report, self._result()
        host = host_of(self.app)
        if report is None or r is None:
            return
        entry = host.current_entry() if host is not None else None
        if host is None or entry is None:
            self.notify("No entry to save to: select one in the guide first.", severity="warning", timeout=4)
            return
        from studytui.profile.report import kernel_rows
        from studytui.tui.calc.note_table import calculation_markdown

        ce = report.ceilings
        inputs = [("file", report.capture.path), ("format", report.capture.format_label),
                  ("GPU", (ce.label + (", measured ceilings" if ce.profile != "vendor" else ", vendor peaks")) if ce else report.gpu_note)]
        rows = [(label, value) for label, value in kernel_rows(report, r.kernel.index) if label != "full name"]
        text = calculation_markdown(f"Profiled kernel #{r.kernel.index} {r.short_name}", inputs, rows,
                                    when=_dt.datetime.now().strftime("%Y-%m-%d %H:%M"))
        if host.append_note(entry.id, text):
            self.notify(visible_controls(f"Kernel #{r.kernel.index} saved to the note of '{entry.title}'."), timeout=3, markup=False)


def _failure(path: str, exc: BaseException) -> str:
    """One line for what stopped the reading: studytui's own message, else what kind of failure it
    was (a bug or a file no reader expected: never a screen left on "Reading…")."""
    if isinstance(exc, StudyError):
        return str(exc)
    name = os.path.basename(path) or path
    if isinstance(exc, OSError):
        return f"{name}: {exc.strerror or exc}"
    if isinstance(exc, RecursionError):
        return f"{name}: nested too deeply to read"
    detail = " ".join(str(exc).split())
    return f"{name}: could not be read ({type(exc).__name__}{': ' + detail[:200] if detail else ''})"


def _cut(value: str, width: int) -> str:
    return value if len(value) <= width else value[: max(1, width - 1)] + "…"
