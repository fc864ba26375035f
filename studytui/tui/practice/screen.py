"""The practice screen: a list of problems on the left, the current one on the right.

Type an answer and press Enter: it is graded by the calculator for exactly the variant on screen
and recorded. Feedback says right, or how far off, then the next hint. Ctrl+S shows the worked
solution, Ctrl+O opens the calculator prefilled with this variant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from studytui.core.errors import StudyError
from studytui.practice.answers import answer_format, answer_line
from studytui.practice.grading import miss_text
from studytui.tui.format import visible_controls
from studytui.tui.host import StudyHost, cursor_blink_of, study_host
from studytui.tui.practice import practice_state, refresh_views
from studytui.tui.practice.state import PracticeState
from studytui.tui.widgets.footer import StudyFooter
from studytui.tui.widgets.inputs import OrderedInput

if TYPE_CHECKING:
    from studytui.practice.service import Practice

CALC_SCREEN = "calculators"
DUE_HEADING = "due for review"  # the heading of the reviews opened as due (drawn with their live count)


def _plain(text: str) -> Content:
    """Content text as text: never markup, never control sequences."""
    return Content(visible_controls(text))


class AnswerInput(OrderedInput):
    """The answer field: its keys land in the order typed (C-u, arrows, BSpace in one read), and
    Enter grades here, in the field's own queue, so keys typed after Enter in the same read are
    not mixed into the answer being graded (studytui.tui.keyroute)."""

    async def action_submit(self) -> None:
        screen = self.screen
        if isinstance(screen, PracticeScreen):
            screen.grade(self.value)


class PracticeScreen(Screen[None]):
    DEFAULT_CSS = """
    PracticeScreen { layout: vertical; }
    #practice-title { height: 1; padding: 0 1; background: $panel; text-style: bold; text-wrap: nowrap; text-overflow: ellipsis; }
    #practice-body { height: 1fr; }
    #practice-list { width: 32%; min-width: 22; max-width: 40; height: 1fr; border: none; border-right: vkey $panel-lighten-2; }
    #practice-right { width: 1fr; padding: 0 1; }
    #practice-question { height: auto; margin-bottom: 1; }
    #practice-meta { height: auto; color: $text-muted; }
    #practice-answer { margin: 1 0 0 0; }
    #practice-feedback { height: auto; margin-top: 1; }
    #practice-feedback.-right { color: $success; text-style: bold; }
    #practice-feedback.-wrong { color: $warning; }
    #practice-solution { height: auto; margin-top: 1; }
    """

    BINDINGS = [
        Binding("escape", "close", "Back", id="practice-back"),
        Binding("ctrl+s", "solution", "Solution", id="practice-solution", tooltip="Show the worked solution"),
        Binding("ctrl+o", "open_calculator", "Calculator", id="practice-calculator", tooltip="Open the calculator with this variant"),
        Binding("ctrl+n,pagedown", "move(1)", "Next", id="practice-next", tooltip="Next problem"),
        # Not ctrl+p: the App's command palette takes that key first, everywhere (an answer typed
        # after it went into the palette, and Enter jumped to some entry).
        Binding("ctrl+b,pageup", "move(-1)", "Prev", id="practice-previous", tooltip="Previous problem"),
    ]

    def __init__(self, state: PracticeState, problem_ids: list[str], heading: str, notice: str = "") -> None:
        super().__init__()
        self.state = state
        self.problem_ids = problem_ids
        self.heading = heading
        self.notice = notice
        self.variant: Any = None
        self.solved = False
        self.solution_shown = False

    @property
    def practice(self) -> Practice:
        return self.state.practice

    @property
    def host(self) -> StudyHost:
        return study_host(self.app)

    # --- building -----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="practice-title")
        with Horizontal(id="practice-body"):
            yield OptionList(*[self._option(pid) for pid in self.problem_ids], id="practice-list")
            with VerticalScroll(id="practice-right"):
                yield Static(id="practice-question")
                yield Static(id="practice-meta")
                answer = AnswerInput(placeholder="your answer", id="practice-answer")
                answer.cursor_blink = cursor_blink_of(self.app)  # off in tests: stable snapshots
                yield answer
                yield Static(id="practice-feedback")
                yield Static(id="practice-solution")
        yield StudyFooter()

    def _option(self, problem_id: str) -> Option:
        mark = self.practice.mark(problem_id)  # ✓ mastered, ~ right after a miss, ✗ missed, · not tried
        return Option(_plain(f"{mark} {self.practice.get(problem_id).title}"), id=problem_id)

    def on_mount(self) -> None:
        self._draw_title()
        if self.state.changed is not None:  # a review come due, an answer: the header's count follows
            self.state.changed.subscribe(self, lambda _state: self._draw_title())
        self.query_one(Footer).compact = self.size.width < 100
        if self.notice:
            self.notify(self.notice, timeout=4)
        if self.problem_ids:
            self.query_one(OptionList).highlighted = 0
            self.show_problem(self.problem_ids[0])
            self._focus_answer()
        else:
            self.query_one("#practice-question", Static).update(_plain("No problems here yet."))

    def _focus_answer(self) -> None:
        """Typing goes to the answer field, without scrolling to it: the pane shows the title and
        the question from their start (at 80x24 the field is below them; scrolling, or the
        feedback after Enter, brings it into view)."""
        self.set_focus(self.query_one(Input), scroll_visible=False)

    def on_resize(self) -> None:
        self.query_one(Footer).compact = self.size.width < 100

    def on_screen_resume(self) -> None:
        # Back from the calculator: typing goes to the answer box again at once.
        if self.problem_ids:
            self._focus_answer()

    def _draw_title(self) -> None:
        state = self.state
        sections = {self.practice.get(pid).section_id for pid in self.problem_ids}
        if len(sections) == 1:
            (sid,) = sections
            mastered, total = state.mastery.get(sid, (0, 0))
        else:
            mastered = sum(m for m, _ in state.mastery.values())
            total = sum(n for _, n in state.mastery.values())
        if self.heading == DUE_HEADING:  # the reviews: their live count is the heading (not the count when opened)
            text = f"Practice · {state.due_text()} · mastery {mastered}/{total}"
        else:
            text = f"Practice · {self.heading} · mastery {mastered}/{total} · {state.due} due"
        self.query_one("#practice-title", Static).update(_plain(text))

    # --- showing a problem --------------------------------------------------------------------
    def show_problem(self, problem_id: str) -> None:
        self.variant = self.practice.variant(problem_id)
        self.solved = False
        self.solution_shown = False
        v = self.variant
        p = v.problem
        question = f"{p.title}\n\n{v.question}"
        given = self._given(v)
        if given:
            question += "\n\nGiven:\n" + "\n".join(f"- {line}" for line in given)
        self.query_one("#practice-question", Static).update(_plain(question))
        if p.kind == "choice":
            meta = "Choices: " + "   ".join(f"{i}) {c}" for i, c in enumerate(v.choices, 1)) + "  (type a name or its number)"
        else:
            meta = answer_line(p.unit, p.tolerance)
        meta += f"\nVariant {v.seed} · practises: {', '.join(p.entries)}"
        self.query_one("#practice-meta", Static).update(_plain(meta))
        answer = self.query_one(Input)
        answer.value = ""
        # A format, never a value: an example number could be the key (12 ms for 12.08 ms).
        answer.placeholder = "1, 2 or a name" if p.kind == "choice" else answer_format(p.unit)
        self._feedback("", None)
        self.query_one("#practice-solution", Static).update("")
        self.query_one("#practice-right", VerticalScroll).scroll_home(animate=False)  # a new question from its start

    @staticmethod
    def _given(variant: Any) -> list[str]:
        from studytui.practice.given import GivenError, facts

        try:
            return [f.text for f in facts(variant)]
        except GivenError as exc:  # a content bug 'studytui check' reports; the question still shows
            return [f"(a figure could not be read: {exc})"]

    def _feedback(self, text: str, right: bool | None) -> None:
        widget = self.query_one("#practice-feedback", Static)
        widget.set_class(right is True, "-right")
        widget.set_class(right is False, "-wrong")
        widget.update(_plain(text))

    def _show_solution(self, lines: list[str]) -> None:
        self.solution_shown = True
        body = "\n".join(lines)
        self.query_one("#practice-solution", Static).update(_plain(f"Solution (by hand, for this variant):\n{body}"))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and (self.variant is None or event.option.id != self.variant.problem.id):
            self.show_problem(event.option.id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._focus_answer()

    # --- grading ------------------------------------------------------------------------------
    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.grade(event.value)

    def grade(self, value: str) -> None:
        """Grade `value` as the answer to the variant on screen."""
        if self.variant is None:
            return
        text = value.strip()
        if not text:
            return
        v = self.variant
        p = v.problem
        try:
            result = self.practice.answer(p.id, text, v.seed)
        except StudyError as exc:
            self._feedback(str(exc), False)
            return
        if not result.counted:
            verdict = "Right" if result.correct else "Not right"
            self._feedback(f"{verdict}, but not counted: this variant's solution was shown. The problem comes back with new "
                           "numbers; Ctrl+N for the next problem.", result.correct)
        elif result.correct:
            self.solved = True
            close = "" if result.relative_error is None else f" (off by {result.relative_error:.1%})"
            after = " Right after a miss: not counted for mastery; it comes back soon with new numbers." if result.after_miss else ""
            self._feedback(f"Right{close}: {result.expected.display(p.unit)}.{after} Ctrl+N for the next problem.", True)
            self._show_solution(result.solution)
        else:
            how = miss_text(result, p.tolerance)
            hint = f"\nHint: {result.hint}" if result.hint else ""
            self._feedback(f"{how}{hint}\nCtrl+S shows the solution (this variant then no longer counts).", False)
            # The answer stays on screen, selected: the next one typed replaces it (a learner
            # retyping after a miss got "146584.4" graded).
            self.query_one("#practice-answer", AnswerInput).select_all()
        self._after_attempt(p.id)
        # Once laid out (its new height known): the whole verdict and hint in view.
        feedback = self.query_one("#practice-feedback", Static)
        self.call_after_refresh(feedback.scroll_visible, animate=False)

    def _after_attempt(self, problem_id: str) -> None:
        refresh_views(self.host)
        option_list = self.query_one(OptionList)
        index = self.problem_ids.index(problem_id)
        option_list.replace_option_prompt_at_index(index, self._option(problem_id).prompt)
        self._draw_title()

    # --- actions ------------------------------------------------------------------------------
    def action_solution(self) -> None:
        if self.variant is None or self.solution_shown:
            return
        v = self.variant
        try:
            lines = self.practice.reveal(v.problem.id, v.seed)
        except StudyError as exc:
            self.notify(visible_controls(str(exc)), severity="error", markup=False)
            return
        self._show_solution(lines)
        if not self.solved:
            self._after_attempt(v.problem.id)

    def action_open_calculator(self) -> None:
        if self.variant is None:
            return
        app = self.host
        if CALC_SCREEN not in app.registry.screens:
            self.notify("The calculators are not available here.", severity="warning")
            return
        from studytui.calc.forms import CALCULATORS

        v = self.variant
        # Every field set: the calculator's default where the problem names none, so neither the
        # form's starting example nor a remembered GPU or precision changes the variant shown.
        args = {f.name: f.default or "" for f in CALCULATORS[v.problem.calc_name].fields}
        args.update(v.args(v.choices[0] if v.problem.pick else None))
        app.open_screen(CALC_SCREEN, calc=v.problem.calc_name, args=args, label=f"Practice {v.problem.id}, variant {v.seed}")

    def action_move(self, step: int) -> None:
        if not self.problem_ids:
            return
        option_list = self.query_one(OptionList)
        current = option_list.highlighted or 0
        if self.variant is not None and self.variant.problem.id in self.problem_ids:
            current = self.problem_ids.index(self.variant.problem.id)
        target = (current + step) % len(self.problem_ids)
        option_list.highlighted = target
        self.show_problem(self.problem_ids[target])
        self._focus_answer()

    def action_close(self) -> None:
        self.dismiss(None)


def practice_screen_for(app: StudyHost, section: str | None = None, entry: str | None = None, due: bool = False) -> Screen[Any]:
    """The screen `x` or the palette opens: due reviews, a section's problems, or those of the
    entry (else its section) the learner is on."""
    state = practice_state(app)
    if state is None:
        from textual.widgets import Static as _Static

        class _Unavailable(Screen[None]):
            BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

            def compose(self) -> ComposeResult:
                yield _Static("No practice problems could be loaded (run 'studytui check'). Esc goes back.")

        return _Unavailable()
    practice = state.practice
    state.recompute()
    if due:
        items = [r.problem_id for r in practice.due()]
        if items:
            return PracticeScreen(state, items, DUE_HEADING)
        ids = [p.id for p in practice.problems]
        return PracticeScreen(state, ids, "all problems", notice="Nothing is due for review; here are all problems.")
    if section is None and entry is None:
        current = app.current_entry()
        if current is not None:
            entry = current.id
        else:
            on_screen = app.current_section()
            section = on_screen.id if on_screen is not None else None
    notice = ""
    if entry is not None:
        found = app.guide.get(entry)
        ids = [p.id for p in practice.for_entry(found.id)] if found is not None else []
        if found is not None and ids:
            return PracticeScreen(state, ids, f"{found.title}")
        if found is not None:
            section = found.section_id
            notice = "No problems practise this entry yet; here are its section's."
    if section is not None:
        found_section = next((s for s in app.guide.sections if s.id == section), None)
        ids = [p.id for p in practice.for_section(section)]
        if ids and found_section is not None:
            return PracticeScreen(state, ids, found_section.title, notice=notice)
    first = next((s for s in app.guide.sections if practice.for_section(s.id)), None)
    ids = [p.id for p in practice.for_section(first.id)] if first is not None else []
    return PracticeScreen(state, ids, first.title if first else "practice", notice=notice or "No problems for this section yet.")
