"""What a calculator screen is opened with. No Textual here. The starting values themselves
are in the form layer (studytui.calc.form_values), shared with `studytui check`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class EntryContext:
    """The guide entry a calculator was opened from (where "Save to note" writes)."""

    entry_id: str
    title: str


@dataclass(frozen=True)
class Launch:
    """What to open: a calculator, its preset arguments, and the entry it came from."""

    calc: str
    args: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    entry: EntryContext | None = None
