"""YAML reading with file:line error reporting.

Loading uses libyaml's C loader when present (fast path). Line numbers are only needed when
something is wrong, so the node tree with positions is built lazily, on the first lookup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import yaml

from studytui.errors import ContentError

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StrictLoader(_Base):  # type: ignore[misc, valid-type]
    """The safe loader, stricter where silence would hide a mistake in content:
    a key given twice is an error (YAML would silently keep the second `url:`), and an integer
    too long for Python to read (a 5,000-digit `year:`) is an error at its line."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[object, yaml.Node] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = (key_node.tag, key_node.value)
                if key in seen:
                    first = seen[key].start_mark.line + 1
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key '{key_node.value}' (first given on line {first})", key_node.start_mark
                    )
                seen[key] = key_node
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            raise yaml.constructor.ConstructorError(
                None, None, f"number too long ({len(node.value)} characters)", node.start_mark
            ) from None


StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.construct_yaml_int)
StrictLoader.add_constructor("tag:yaml.org,2002:map", StrictLoader.construct_yaml_map)


def load_yaml(text: str) -> Any:
    """Parse YAML with the strict loader. Raises yaml.YAMLError (with a mark where known) for
    invalid YAML, duplicate keys, over-long numbers and nesting too deep to read."""
    try:
        return yaml.load(text, Loader=StrictLoader)
    except RecursionError:
        raise yaml.YAMLError("nested too deeply to read") from None


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
            self.data: Any = load_yaml(self.text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            line = mark.line + 1 if mark is not None else 1
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ContentError([f"{self.display}:{line}: invalid YAML: {problem}"]) from None
        self._root: yaml.Node | None = None

    def line_of(self, path: Sequence[str | int]) -> int:
        """1-based line of the value at `path` (keys and list indexes); the nearest parent if absent."""
        if self._root is None:
            try:
                self._root = yaml.compose(self.text, Loader=_Base)
            except (yaml.YAMLError, RecursionError):
                return 1
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
