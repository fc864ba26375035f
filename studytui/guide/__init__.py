"""The content layer: model, loader, policy checks and search. Pure Python.

The names below are loaded when first used (PEP 562), so importing `studytui.guide.model` (every
command does) does not import the loader: `load_guide` (cache.py) imports it, and PyYAML, only on a
cold cache.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from studytui.guide.cache import load_guide
    from studytui.guide.loader import parse_content
    from studytui.guide.model import Entry, GlossaryTerm, Guide, Policy, Section, Subsection

__all__ = ["Entry", "GlossaryTerm", "Guide", "Policy", "Section", "Subsection", "load_guide", "parse_content"]

_WHERE = {
    "load_guide": "studytui.guide.cache", "parse_content": "studytui.guide.loader",
    "Entry": "studytui.guide.model", "GlossaryTerm": "studytui.guide.model", "Guide": "studytui.guide.model",
    "Policy": "studytui.guide.model", "Section": "studytui.guide.model", "Subsection": "studytui.guide.model",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
