"""The main screen: the guide on the left, the selected entry and its note on the right."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static, Tree

from studytui.core.errors import StudyError
from studytui.guide.model import Entry, Section, Subsection
from studytui.tui.compat import key_bindings
from studytui.tui.format import fraction_bar, percent, short_timestamp
from studytui.tui.host import StudyHost, study_host
from studytui.tui.keyroute import focus_now
from studytui.tui.messages import MasteryChanged, PlanChanged
from studytui.tui.widgets.detail_pane import DetailPane, SourceLink
from studytui.tui.widgets.footer import StudyFooter
from studytui.tui.widgets.guide_tree import GuideTree, NodeData

if TYPE_CHECKING:
    from studytui.store.model import NoteVersion
    from studytui.study.flow import Counts
    from studytui.study.session import Change
    from studytui.tui.widgets.note_panel import NoteEditor

Position = Union[Entry, Section, Subsection]
READ_ONLY = "READ-ONLY (nothing is saved)  │  "  # the header's first words when nothing can be saved
LAST_VIEWED_DELAY = 0.5  # seconds: arrowing through the list should not write on every row


class StatusLine(Static):
    """The header line. Fitted to its width again whenever that changes (a resize, also while
    another screen is on top), as well as when what it says changes (MainScreen.update_status)."""

    def on_resize(self) -> None:
        screen = self.screen
        if isinstance(screen, MainScreen):
            screen.update_status()


class MainScreen(Screen[None]):
    """Study the guide in order."""

    BINDINGS = [
        Binding("n", "next", "Next", id="next", tooltip="Next entry in guide order"),
        Binding("p", "previous", "Prev", id="previous", tooltip="Previous entry", show=False),
        Binding("N", "next_pending", "Pending", id="next-pending", tooltip="Next entry still pending", show=False),
        Binding("d", "mark('done')", "Done", id="mark-done", tooltip="Mark done"),
        Binding("l", "mark('learning')", "Learning", id="mark-learning", tooltip="Mark learning", show=False),
        Binding("s", "mark('skipped')", "Skip", id="mark-skipped", tooltip="Mark skipped", show=False),
        Binding("u", "mark('pending')", "Undo", id="mark-pending", tooltip="Back to pending", show=False),
        Binding("o", "open_source", "Open", id="open-source", tooltip="Open the source"),
        Binding("y", "copy_url", "Copy URL", id="copy-url", tooltip="Copy the URL", show=False),
        Binding("e", "edit_note", "Note", id="edit-note", tooltip="Edit the note (autosaved)"),
        Binding("E", "edit_note_external", "$EDITOR", id="edit-note-external", tooltip="Edit the note in $EDITOR", show=False),
        Binding("h", "note_history", "History", id="note-history", tooltip="Versions of the note; restore one", show=False),
        Binding("slash", "search", "Search", id="search", tooltip="Search entries and notes"),
        Binding("escape", "focus_guide", "Back to the guide", id="focus-guide", show=False, tooltip="Back to the guide"),
    ]

    def __init__(self, start: Entry | None) -> None:
        super().__init__()
        self._start = start
        self.position: Position | None = None
        self._last_viewed_timer: Timer | None = None
        self._following_first_frame = False  # _after_first_frame is scheduled (once)
        self._pending_last_viewed: str | None = None
        # "finish ~ DATE at your pace" from the plan plug-in (PlanChanged); "" shows nothing.
        self.plan_label = ""
        # Registered screens (glossary, policy, calculators...) get their keys here, with ids
        # users can remap like any other binding.
        keys = key_bindings(self)
        for spec in self.host.registry.screens.values():
            if spec.key:
                binding = Binding(
                    spec.key, f"app.open_screen('{spec.id}')", spec.title, show=spec.footer, id=spec.id, tooltip=spec.description
                )
                # A new list: the class's binding lists are shared between instances.
                keys[spec.key] = [*keys.get(spec.key, []), binding]

    @property
    def host(self) -> StudyHost:
        return study_host(self.app)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the note editor has focus, a key that types text is text: its binding leaves the
        footer. (Textual hides most of them itself, but not `/ Search`: it does not know that
        "slash" types a character.)"""
        from studytui.tui.widgets.footer import typed_by_focus

        return not typed_by_focus(self, action)

    def compose(self) -> ComposeResult:
        app = self.host
        yield StatusLine(id="status")
        with Horizontal(id="body"):
            states = {entry_id: p.state for entry_id, p in app.session.progress.items()}
            yield GuideTree(app.guide, states, self._section_counts(), id="guide")
            yield DetailPane(app.session.draft, app.flush_note, cursor_blink=app.cursor_blink, id="detail")
        # (The footer is composed with the screen: mounted only after the first frame, it never
        # showed its keys in a browser tab through `studytui serve`.)
        yield StudyFooter()

    def on_mount(self) -> None:
        # Immediate: the rows and the status line are redrawn in the same frame as the change.
        self.host.study_changed.subscribe(self, self.on_study_changed, immediate=True)
        tree = self.tree
        tree.focus()
        if self._start is not None:
            tree.reveal_entry(self._start)
        elif tree.guide.sections:
            tree.reveal(tree.section_node(tree.guide.sections[0].id))
        self.update_status()

    def on_resize(self) -> None:
        self._fit_footer()

    def _fit_footer(self) -> None:
        # Narrow terminals (80 columns) fit every footer key only without the padding. (The
        # header line refits itself: StatusLine.on_resize.)
        for footer in self.query("Footer"):
            footer.compact = self.app.size.width < 100  # type: ignore[attr-defined]

    def on_screen_resume(self) -> None:
        self._fit_footer()  # resized while another screen was on top: this one was not told
        # Now that this screen is current, "after refresh" means after its first frame is on
        # screen: only then mount the heavier half of the detail pane. Once: a dialog opened and
        # closed before then (keys typed at start) resumes this screen again.
        if not self._following_first_frame:
            self._following_first_frame = True
            self.call_after_refresh(self._after_first_frame)

    async def _after_first_frame(self) -> None:
        self.host.first_frame_shown()
        await self.detail.mount_rest()

    # --- parts --------------------------------------------------------------------------------
    @property
    def tree(self) -> GuideTree:  # type: ignore[override]  # DOMNode.tree (a Rich tree of the DOM, for debugging) is not used here
        return self.query_one(GuideTree)

    @property
    def detail(self) -> DetailPane:
        return self.query_one(DetailPane)

    @property
    def current_entry(self) -> Entry | None:
        """The entry on screen, after any cursor move still waiting to be shown (see sync_position)."""
        self.sync_position()
        return self.position if isinstance(self.position, Entry) else None

    def sync_position(self) -> None:
        """Make what is shown follow the tree's cursor now.

        The tree tells us about a cursor move with a message, handled after the keys that were
        already waiting: with `nd` or `Down d` read in one chunk, the `d` ran before the move was
        shown and marked the entry the cursor had left. Every action asks for the position
        through here first, so a key always acts on the entry the previous key left on screen."""
        if not self.is_mounted:
            return
        try:
            node = self.tree.cursor_node
        except NoMatches:  # the tree is not there (yet, or any more): nothing to follow
            return
        if node is not None and node.data is not None and node.data is not self.position:
            self._show_position(node.data)

    def _section_counts(self) -> dict[str, tuple[int, int]]:
        return {s.id: (s.counts.done + s.counts.skipped, s.counts.total) for s in self.host.session.summary.sections}

    @property
    def current_section(self) -> Section | None:
        """The section of what is on screen (an entry's, a subsection's, or the section itself)."""
        self.sync_position()
        return self._section_of_position()

    def _section_of_position(self) -> Section | None:
        position = self.position
        guide = self.host.guide
        if isinstance(position, Section):
            return position
        if isinstance(position, Entry):
            return guide.section_of(position)
        if isinstance(position, Subsection):
            for section in guide.sections:
                if position in section.subsections:
                    return section
        return None

    # --- status line --------------------------------------------------------------------------
    @staticmethod
    def counts_text(counts: Counts, detail: int = 2) -> str:
        """'2/9 covered (22%): 1 done, 1 skipped, 1 learning': covered is done plus skipped, as
        in `studytui progress` (the same percent rule, studytui.core.text.percent). `detail`
        2: every state counted; 1: only the learning count after the share; 0: the share alone.
        Every form says "covered", so a count never reads as entries done."""
        covered = counts.done + counts.skipped
        text = f"{covered}/{counts.total} covered ({percent(covered, counts.total)})"
        if detail >= 2 and (covered or counts.learning):
            parts = [f"{counts.done} done"] + ([f"{counts.skipped} skipped"] if counts.skipped else [])
            if counts.learning:
                parts.append(f"{counts.learning} learning")
            return f"{text}: {', '.join(parts)}"
        if detail >= 1 and counts.learning:
            return f"{text}, {counts.learning} learning"
        return text

    def update_status(self) -> None:
        status = self.query_one("#status", Static)
        # Its own width (inside its padding, 1 a side) once laid out; the terminal's until then.
        width = status.content_size.width or self.app.size.width - 2
        if status.content != (line := Content(self.status_text(width))):
            status.update(line, layout=False)  # one fixed line (studytui.tcss): its height never changes

    def status_text(self, width: int) -> str:
        """The header line, fitted to `width` cells: the counts always whole, the plan's finish
        date last on the line. Where it does not fit (80 columns), the overall bar, the practice
        wording and the section's title give way before the finish date does (see below)."""
        if not self.plan_label:
            return self._progress_text(width)
        whole = self._progress_text(0) + "  │  " + self.plan_label
        if not width or len(whole) <= width:
            return whole
        # The finish date is what the plan adds (issue 29): at 80 columns it keeps its place, and
        # the rest gives way first - the overall bar and words, the wide separators, the practice
        # wording, then the section (its title and count are on its row in the guide), then the
        # label's "at your pace". Only where even the shortest counts leave no room does it go.
        wide, narrow = "  │  ", " │ "
        labels = dict.fromkeys((self.plan_label, self.plan_label.removesuffix(" at your pace")))
        for label in labels:
            for sep in (wide, narrow):
                room = width - len(sep + label)
                for section in (True, False):
                    # (A title cut to a few letters says nothing: then the section goes instead.)
                    shorter = self._progress_text(room, section=section, min_title=10) if room > 0 else ""
                    # One kind of separator along the line (the READ-ONLY prefix aside).
                    body = shorter.removeprefix(READ_ONLY)
                    same = narrow not in body.replace(wide, "") if sep == wide else wide not in body
                    if shorter and len(shorter) <= room and same:
                        return shorter + sep + label
        return self._progress_text(width)

    def _progress_text(self, width: int, section: bool = True, min_title: int = 1) -> str:
        """The header without the plan's label (width 0: everything, uncut). `section` False:
        without the section's title and count either, and with the shortest counts. `min_title`:
        the fewest characters of the title kept where nothing else fits (the line is then longer
        than `width`)."""
        summary = self.host.session.summary
        overall = summary.overall
        covered = overall.done + overall.skipped
        prefix = READ_ONLY if self.host.session.read_only else ""
        overalls = [
            f"Overall {fraction_bar(covered, overall.total)} {self.counts_text(overall)}",
            f"Overall {self.counts_text(overall)}",
            f"Overall {self.counts_text(overall, 1)}",
            f"Overall {self.counts_text(overall, 0)}",
        ]
        practice = self.host.practice_state
        said = practice.status_text() if practice is not None else ""
        tails = [f"  │  {said}", f"  │  {said.replace('Practice ', '◆')}"] if said else [""]
        on_screen = self._section_of_position() if section else None
        head, count, short_count = "", "", ""
        if on_screen is not None:
            c = next((item.counts for item in summary.sections if item.id == on_screen.id), None)
            if c is not None:
                # "covered", as the overall count says: 2/9 is done plus skipped, not 2 done.
                head, count = on_screen.title, f": {c.done + c.skipped}/{c.total} covered"
                short_count = f": {c.done + c.skipped}/{c.total}"
        if not section:
            overalls = overalls[-1:]  # what gives way before the section: the bar, the words
        if not head:
            options = [prefix + o + t for o in overalls for t in tails]
            options += [prefix + overalls[-1] + t.replace("  │  ", " │ ") for t in tails if t]  # narrower separators last
            return next((o for o in options if len(o) <= width or not width), options[-1])
        sep = "  │  "
        best = ""
        room = 0
        for over in overalls:
            for tail in tails:
                room = width - len(prefix + over + sep + count + tail)
                if not width or len(head) <= room:
                    return f"{prefix}{over}{sep}{head}{count}{tail}"
                best = f"{prefix}{over}{sep}{head[: max(room - 1, 10)].rstrip()}…{count}{tail}"
                if room >= 20:  # a title cut this far still says which section it is
                    return best
        if room >= 11:
            return best
        # Narrower than 80 columns: narrower separators, and the section's count without the word
        # (the overall count before it says "covered").
        tail = tails[-1].replace(sep, " │ ")
        room = width - len(prefix + overalls[-1] + " │ " + short_count + tail)
        return f"{prefix}{overalls[-1]} │ {head[: max(room - 1, min_title)].rstrip()}…{short_count}{tail}"

    # --- showing things -----------------------------------------------------------------------
    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[NodeData]) -> None:
        # Stale when the cursor has moved on since (a burst of keys): the position already
        # follows the cursor (sync_position), and going back to this node would undo that.
        if event.node is self.tree.cursor_node and event.node.data is not self.position:
            self._show_position(event.node.data)

    def _show_position(self, data: NodeData | None) -> None:
        app = self.host
        if data is None:
            return
        if isinstance(data, Entry):
            app.switch_note(data.id)  # switching entries saves the note first
            self.position = data
            progress = app.session.progress.get(data.id)
            self.detail.show_entry(data, app.state_of(data.id), progress.last_opened_at if progress else None, app.today())
            self._remember_last_viewed(data.id)
        else:
            app.flush_note()
            self.position = data
            section = self._section_of_position()
            if section is not None:
                sub = data if isinstance(data, Subsection) else None
                counts = next(s.counts for s in app.session.summary.sections if s.id == section.id)
                self.detail.show_section(section, self.counts_text(counts), app.today(), sub)
        self.update_status()

    def show_entry(self, entry: Entry) -> None:
        """Move the cursor to `entry` (expanding the tree to it) and show it."""
        self.tree.reveal_entry(entry)
        focus_now(self.tree)
        self.sync_position()  # shown now, not when the tree's message arrives

    def show_section(self, section: Section) -> None:
        node = self.tree.section_node(section.id)
        self.tree.reveal(node)
        node.expand()
        focus_now(self.tree)
        self.sync_position()

    def _remember_last_viewed(self, entry_id: str) -> None:
        self._pending_last_viewed = entry_id
        if self._last_viewed_timer is not None:
            self._last_viewed_timer.stop()
        self._last_viewed_timer = self.set_timer(LAST_VIEWED_DELAY, self.save_last_viewed)

    def save_last_viewed(self) -> None:
        if self._last_viewed_timer is not None:
            self._last_viewed_timer.stop()
            self._last_viewed_timer = None
        if self._pending_last_viewed is not None:
            entry_id, self._pending_last_viewed = self._pending_last_viewed, None
            self.host.store_write(self.host.store.set_last_viewed, entry_id)

    def on_unmount(self) -> None:
        self.save_last_viewed()

    # --- actions ------------------------------------------------------------------------------
    def _entry_or_hint(self) -> Entry | None:
        entry = self.current_entry
        if entry is None:
            self.notify("Select an entry first (n moves to the next one).", severity="warning", timeout=3)
        return entry

    def action_focus_guide(self) -> None:
        focus_now(self.tree)

    def action_next(self) -> None:
        entries = self.host.guide.entries
        self.sync_position()
        position = self.position
        if isinstance(position, Entry):
            target = entries[position.index + 1] if position.index + 1 < len(entries) else None
        elif isinstance(position, (Section, Subsection)):
            target = position.entries[0] if position.entries else None
        else:
            target = entries[0] if entries else None
        if target is None:
            self.notify("That was the last entry of the guide.", timeout=3)
            return
        self.show_entry(target)

    def action_previous(self) -> None:
        entries = self.host.guide.entries
        self.sync_position()
        position = self.position
        if isinstance(position, Entry):
            target = entries[position.index - 1] if position.index > 0 else None
        elif isinstance(position, (Section, Subsection)) and position.entries:
            first = position.entries[0].index
            target = entries[first - 1] if first > 0 else None
        else:
            target = None
        if target is None:
            self.notify("This is the start of the guide.", timeout=3)
            return
        self.show_entry(target)

    def action_next_pending(self) -> None:
        target = self.host.next_pending(self.current_entry)
        if target is None:
            self.notify("Nothing is pending: every entry is done, skipped or being learned.", timeout=4)
            return
        self.show_entry(target)

    def action_mark(self, state: str) -> None:
        entry = self._entry_or_hint()
        if entry is None:
            return
        self.host.set_state(entry, state)

    def on_study_changed(self, change: Change) -> None:
        """Progress or notes changed (here or in another process): redraw what shows them."""
        if not self.is_running:
            return  # closed since the change was published: nothing of ours is on screen
        guide = self.host.guide
        for entry_id in sorted(change.entries):
            entry = guide.get(entry_id)
            if entry is not None:
                self.refresh_entry(entry)
        current = self.current_entry
        panel = self.detail.query("#note-panel")
        if current is not None and current.id in change.notes and self.detail.ready and panel:
            self.detail.note_panel.draft_changed()
        self.update_status()

    def on_plan_changed(self, message: PlanChanged) -> None:
        """The plan was worked out again (studytui.tui.plan): the finish date in the header."""
        message.stop()  # handed on by the app: it must not bubble back up to it
        if self.plan_label == message.label:
            return
        self.plan_label = message.label
        if self.is_running:
            self.update_status()

    def on_mastery_changed(self, message: MasteryChanged) -> None:
        """Practice mastery changed (studytui.tui.practice posts it): the section rows and the status line."""
        message.stop()  # handed on by the app: it must not bubble back up to it
        if not self.is_running:
            return
        self.tree.set_mastery(message.mastery)
        self.update_status()

    def refresh_entry(self, entry: Entry) -> None:
        """Redraw everything that shows `entry`'s state (row, section row, status, detail)."""
        app = self.host
        self.tree.set_state(entry, app.state_of(entry.id), self._section_counts())
        if self.current_entry is not None and self.current_entry.id == entry.id:
            progress = app.session.progress.get(entry.id)
            self.detail.show_progress(app.state_of(entry.id), progress.last_opened_at if progress else None)
        self.update_status()

    def action_open_source(self) -> None:
        entry = self._entry_or_hint()
        if entry is None:
            return
        self.host.open_source(entry)

    def on_source_link_clicked(self, event: SourceLink.Clicked) -> None:
        self.action_open_source()


    def action_copy_url(self) -> None:
        entry = self._entry_or_hint()
        if entry is None:
            return
        if not entry.url:
            self.host.say(f"No link to copy: {entry.no_url_reason or 'no primary source yet'}", severity="warning")
            return
        from studytui.core.handoff import check_link  # here: nothing before the first frame needs it

        link = check_link(entry.url)
        if not link.allowed:
            self.host.say(f"Not copied: {link.url} ({link.reason}).", severity="warning", timeout=8)
            return
        self.host.copy_text(link.url)
        self.host.say(f"Copied {link.url}", timeout=3)

    def action_edit_note(self) -> None:
        if self._entry_or_hint() is None:
            return
        self.detail.when_ready(lambda: self.detail.note_panel.start_editing())

    def on_note_editor_left(self, event: NoteEditor.Left) -> None:
        if self.is_current:
            focus_now(self.tree)

    def action_edit_note_external(self) -> None:
        entry = self._entry_or_hint()
        if entry is not None:
            self.detail.when_ready(lambda: self._edit_externally(entry))

    def _edit_externally(self, entry: Entry) -> None:
        panel = self.detail.note_panel
        if panel.editing:
            panel.stop_editing()
        if self.host.edit_note_externally(entry) is not None:
            panel.refresh_preview()
            if not self.host.session.draft.dirty and not self.host.session.has_unsaved:
                self.notify("Note saved.", timeout=2)

    def action_note_history(self) -> None:
        entry = self._entry_or_hint()
        if entry is None:
            return
        app = self.host
        if not app.flush_note():
            return  # a note the store refuses cannot be compared or restored yet
        try:
            versions = app.session.note_history(entry.id)
        except StudyError as exc:
            app.say(str(exc), title="No history", severity="error")
            return
        if not versions:
            self.notify("This note has no saved versions yet.", timeout=3)
            return
        from studytui.tui.screens.history import HistoryScreen

        def restore(version: NoteVersion | None) -> None:
            if version is not None and app.run_session(app.session.restore_note, entry.id, version):
                self.notify(f"Restored the version of {short_timestamp(version.at)}.", timeout=4)

        self.app.push_screen(HistoryScreen(entry.title, versions), restore)

    def action_search(self, query: str = "") -> None:
        from studytui.tui.screens.search import SearchScreen

        def jump(entry_id: str | None) -> None:
            if entry_id:
                self.host.jump_to(entry_id)

        self.app.push_screen(SearchScreen(query), jump)
