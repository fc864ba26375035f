"""Exceptions shared by every layer. The CLI turns them into one-line messages."""

from __future__ import annotations


class StudyError(Exception):
    """Base class: an error the user should see as one line, never as a traceback."""

    exit_code = 1


class UsageError(StudyError):
    """Bad arguments or unknown names (ids, GPUs, states): exit 2."""

    exit_code = 2


class ContentError(StudyError):
    """Content files are broken. `problems` holds `FILE:LINE: message` strings."""

    exit_code = 1

    def __init__(self, problems: list[str]):
        self.problems = problems
        first = problems[0] if problems else "content error"
        more = f" (and {len(problems) - 1} more problem(s): run 'studytui check')" if len(problems) > 1 else ""
        super().__init__(first + more)


class StoreError(StudyError):
    """The progress database cannot be used (corrupt file, newer schema...)."""

    exit_code = 1
