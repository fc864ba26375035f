"""Practice attempts as the store keeps them, and their validation on import."""

from __future__ import annotations

import math
from typing import Any

from studytui.core.errors import UsageError
from studytui.core.tuples import Tuple
from studytui.store.model import check_text, normalize_time

SEED_LIMIT = 2**31 - 1
ANSWER_LIMIT = 200  # characters kept of a typed answer


class Attempt(Tuple):
    at: str
    problem_id: str
    seed: int
    answer: str
    correct: bool
    relative_error: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at, "problem_id": self.problem_id, "seed": self.seed, "answer": self.answer,
            "correct": self.correct, "relative_error": self.relative_error,
        }


def check_attempt(
    problem_id: Any, seed: Any, answer: Any, correct: Any, relative_error: Any, where: str = "attempt"
) -> tuple[str, int, str, bool, float | None]:
    if not isinstance(problem_id, str) or not problem_id.strip():
        raise UsageError(f"{where}.problem_id must be a non-empty string")
    check_text(problem_id, f"{where}.problem_id")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_LIMIT:
        raise UsageError(f"{where}.seed must be a whole number from 0 to {SEED_LIMIT}")
    if not isinstance(answer, str):
        raise UsageError(f"{where}.answer must be a string")
    answer = check_text(answer[:ANSWER_LIMIT], f"{where}.answer")
    if not isinstance(correct, bool):
        raise UsageError(f"{where}.correct must be true or false")
    if relative_error is not None:
        if isinstance(relative_error, bool) or not isinstance(relative_error, (int, float)) or not math.isfinite(relative_error):
            raise UsageError(f"{where}.relative_error must be a finite number or null")
        relative_error = float(relative_error)
    return problem_id, seed, answer, correct, relative_error


def parse_attempts(raw: Any) -> list[Attempt]:
    """The `attempts` list of an export, validated before anything is written."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise UsageError("'attempts' must be a list")
    out = []
    for i, item in enumerate(raw):
        where = f"attempts[{i}]"
        if not isinstance(item, dict):
            raise UsageError(f"{where} must be an object")
        at = normalize_time(item.get("at"), f"{where}.at")
        if at is None:
            raise UsageError(f"{where}.at is missing")
        fields = check_attempt(
            item.get("problem_id"), item.get("seed"), item.get("answer"), item.get("correct"), item.get("relative_error"), where
        )
        out.append(Attempt(at, *fields))
    return out
