"""The four study states as one type. No dependencies, so the store, the study flow, the CLI and
the app all share it (the store keeps the plain strings)."""

from __future__ import annotations

from enum import Enum


class State(str, Enum):
    """Where the learner is with one entry. A `str`, so it compares equal to the stored word."""

    PENDING = "pending"
    LEARNING = "learning"
    DONE = "done"
    SKIPPED = "skipped"

    @property
    def glyph(self) -> str:
        """One glyph per state: state is never conveyed by colour alone."""
        return _GLYPHS[self]

    @property
    def word(self) -> str:
        return self.value

    @property
    def covered(self) -> bool:
        """Done and skipped both count as covered."""
        return self in (State.DONE, State.SKIPPED)

    @classmethod
    def parse(cls, value: object) -> "State | None":
        """The state named by `value`, or None for anything else (an unknown stored word)."""
        try:
            return cls(value)
        except ValueError:
            return None

    def __str__(self) -> str:  # f"{state}" gives the word on every Python version
        return self.value


_GLYPHS = {State.PENDING: "○", State.LEARNING: "◐", State.DONE: "●", State.SKIPPED: "⊘"}

STATE_VALUES: tuple[str, ...] = tuple(s.value for s in State)
UNKNOWN_GLYPH = "?"


def glyph_of(state: str) -> str:
    found = State.parse(state)
    return found.glyph if found is not None else UNKNOWN_GLYPH
