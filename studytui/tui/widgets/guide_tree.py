"""The whole guide as one Tree: sections > subsections > entries.

One widget for every entry (a Tree draws only the lines on screen), and a section's entries are
added only when it is first expanded, so startup does not grow with the size of the guide.
"""

from __future__ import annotations

from typing import Mapping, Union

from rich.style import Style
from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from studytui.guide.model import Entry, Guide, Section, Subsection
from studytui.tui.compat import lay_out_tree
from studytui.tui.format import state_glyph

NodeData = Union[Entry, Section, Subsection]

# Colour is a hint; glyphs carry the meaning. Styles come from these component classes (rules in
# studytui.tcss, with the rest of the main screen's styling), so a theme or CSS can change them.
STATE_CLASSES = {
    "learning": "guide-tree--learning",
    "done": "guide-tree--done",
    "skipped": "guide-tree--skipped",
    "covered": "guide-tree--covered",
    "mastered": "guide-tree--mastered",
}


class GuideTree(Tree[NodeData]):
    """Navigable guide. `states` maps entry id -> state name (missing means pending)."""

    COMPONENT_CLASSES = Tree.COMPONENT_CLASSES | set(STATE_CLASSES.values())

    def __init__(
        self,
        guide: Guide,
        states: Mapping[str, str],
        section_counts: Mapping[str, tuple[int, int]],
        *,
        id: str | None = None,
    ) -> None:
        # A Text label: a str would be parsed as console markup (and load Rich's emoji table)
        # for a root that is never shown.
        super().__init__(Text(guide.title), id=id)
        self.guide = guide
        self.states: dict[str, str] = dict(states)
        # section id -> (covered, total), from studytui.study.flow.progress_summary.
        self.section_counts: dict[str, tuple[int, int]] = dict(section_counts)
        self.show_root = False
        # section id -> (mastered, problems): practice mastery, shown once the learner has practised.
        self.mastery: dict[str, tuple[int, int]] = {}
        self.guide_depth = 2
        self._section_nodes: dict[str, TreeNode[NodeData]] = {}
        self._entry_nodes: dict[str, TreeNode[NodeData]] = {}
        self._populated: set[str] = set()
        for section in guide.sections:
            node = self.root.add(self.section_label(section), data=section, expand=False)
            self._section_nodes[section.id] = node

    # --- labels -------------------------------------------------------------------------------
    def entry_label(self, entry: Entry) -> Text:
        state = self.states.get(entry.id, "pending")
        label = Text(no_wrap=True, overflow="ellipsis")
        label.append(state_glyph(state), style=self._state_style(state))
        label.append(" ")
        label.append(entry.title, style="dim" if state == "skipped" else "")
        return label

    def section_label(self, section: Section) -> Text:
        covered, total = self.section_counts.get(section.id, (0, len(section.entries)))
        label = Text(no_wrap=True, overflow="ellipsis")
        # Counts first so a long title cut at the pane's edge never hides them.
        label.append(f"{covered}/{total} ", style=self._state_style("covered") if total and covered == total else "dim")
        if section.id in self.mastery:
            mastered, problems = self.mastery[section.id]
            label.append(f"◆{mastered}/{problems} ", style=self._state_style("mastered") if mastered else "dim")
        label.append(section.title, style="bold")
        return label

    def set_mastery(self, mastery: Mapping[str, tuple[int, int]]) -> None:
        """Practice mastery per section (empty: not shown); redraws the section rows."""
        self.mastery = dict(mastery)
        for section in self.guide.sections:
            self._section_nodes[section.id].set_label(self.section_label(section))

    def render_label(self, node: TreeNode[NodeData], base_style: Style, style: Style) -> Text:
        """The label cut to the pane with an ellipsis, so a long title never just stops."""
        text = super().render_label(node, base_style, style)
        depth = 0
        parent = node.parent
        while parent is not None:
            depth += 1
            parent = parent.parent
        room = self.scrollable_content_region.width - max(0, depth - 1) * self.guide_depth  # no root row
        if room > 1 and text.cell_len > room:
            text.truncate(room, overflow="ellipsis")
        return text

    def _state_style(self, name: str) -> Style | str:
        component = STATE_CLASSES.get(name)
        if component is None:
            return ""
        # Before mount the stylesheet is not applied yet: plain, and on_mount draws them again.
        return self.get_component_rich_style(component, partial=True, default=Style.null())

    def on_mount(self) -> None:
        self._relabel()

    def _relabel(self) -> None:
        for section in self.guide.sections:
            self._section_nodes[section.id].set_label(self.section_label(section))
        for node in self._entry_nodes.values():
            if isinstance(node.data, Entry):
                node.set_label(self.entry_label(node.data))

    def get_label_width(self, node: TreeNode[NodeData]) -> int:
        # Tree measures every line on each rebuild by rendering its label; ours are plain
        # one-line Text, so their length is enough (and keeps large sections cheap).
        label = node.label
        assert isinstance(label, Text)
        return label.cell_len + (2 if node.allow_expand else 0)

    # --- structure ----------------------------------------------------------------------------
    def _populate(self, section: Section) -> None:
        """Add a section's subsections and entries (once)."""
        if section.id in self._populated:
            return
        self._populated.add(section.id)
        parent = self._section_nodes[section.id]
        for sub in section.subsections:
            target = parent
            if sub.title:
                target = parent.add(Text(sub.title, style="italic"), data=sub, expand=True)
            for entry in sub.entries:
                self._entry_nodes[entry.id] = target.add_leaf(self.entry_label(entry), data=entry)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[NodeData]) -> None:
        data = event.node.data
        if isinstance(data, Section):
            self._populate(data)

    def section_node(self, section_id: str) -> TreeNode[NodeData]:
        return self._section_nodes[section_id]

    def entry_node(self, entry: Entry) -> TreeNode[NodeData]:
        """The node for `entry`, creating its section's nodes first if needed."""
        self._populate(self.guide.section_of(entry))
        return self._entry_nodes[entry.id]

    # --- navigation ---------------------------------------------------------------------------
    def reveal(self, node: TreeNode[NodeData]) -> None:
        """Expand every ancestor of `node` and put the cursor on it."""
        data = node.data
        if isinstance(data, Section):
            self._populate(data)
        parent = node.parent
        while parent is not None and not parent.is_root:
            parent.expand()
            parent = parent.parent
        # Tree lays out lines lazily; build them now so the node has a line to move to.
        lay_out_tree(self)
        self.move_cursor(node)
        self.scroll_to_node(node, animate=False)

    def reveal_entry(self, entry: Entry) -> None:
        self.reveal(self.entry_node(entry))

    @property
    def current(self) -> NodeData | None:
        node = self.cursor_node
        return None if node is None else node.data

    # --- state changes ------------------------------------------------------------------------
    def set_state(self, entry: Entry, state: str, section_counts: Mapping[str, tuple[int, int]]) -> None:
        """Record a new state for `entry` and redraw its row and its section's row."""
        self.states[entry.id] = state
        self.section_counts = dict(section_counts)
        node = self._entry_nodes.get(entry.id)
        if node is not None:
            node.set_label(self.entry_label(entry))
        section = self.guide.section_of(entry)
        self._section_nodes[section.id].set_label(self.section_label(section))
