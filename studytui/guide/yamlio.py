"""YAML reading with file:line error reporting.

Loading uses libyaml's C loader when present (fast path). Line numbers are only needed when
something is wrong, so the node tree with positions is built lazily, on the first lookup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import yaml

from studytui.errors import ContentError

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlFile:
    """One parsed YAML file and a way to find the line of any value in it."""

    def __init__(self, path: Path, display: str | None = None):
        self.path = path
        self.display = display or str(path)
        try:
            self.text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ContentError([f"{self.display}:1: cannot read file: {exc}"]) from None
        try:
            self.data: Any = yaml.load(self.text, Loader=_Loader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            line = mark.line + 1 if mark is not None else 1
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ContentError([f"{self.display}:{line}: invalid YAML: {problem}"]) from None
        self._root: yaml.Node | None = None

    def line_of(self, path: Sequence[str | int]) -> int:
        """1-based line of the value at `path` (keys and list indexes); the nearest parent if absent."""
        if self._root is None:
            self._root = yaml.compose(self.text, Loader=yaml.SafeLoader)
        node = self._root
        line = node.start_mark.line + 1 if node is not None else 1
        for step in path:
            child = None
            if isinstance(node, yaml.MappingNode) and isinstance(step, str):
                for key, value in node.value:
                    if key.value == step:
                        # Point at the key: that is where a reader looks for the field.
                        line = key.start_mark.line + 1
                        child = value
                        break
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
                child = node.value[step]
                line = child.start_mark.line + 1
            if child is None:
                break
            node = child
        return line

    def where(self, path: Sequence[str | int]) -> str:
        return f"{self.display}:{self.line_of(path)}"
