"""YAML reading with file:line error reporting: the one way studytui reads YAML.

Loading uses libyaml's C loader when present (fast path). Line numbers are only needed when
something is wrong, so the node tree with positions is built lazily, on the first lookup.

Every YAML file goes through `load_yaml` (content, with the strict loader) or `safe_load` (the
learner's files: keys.yaml, hardware, measured profiles, vault front matter), so every file gets
the same two bounds:

* size: files are read with `studytui.core.fileio.read_bounded` (YAML_LIMIT) by the callers, which
  also refuses anything that is not a regular file (a FIFO would block for ever);
* aliases: a document whose aliases (`*name`) would expand to more than ALIAS_BUDGET values beyond
  those written out (a "billion laughs" of 400 bytes is 10^9 values to any code that walks it),
  or whose alias refers to a value containing itself, is refused as an AliasError with the line
  of the anchor. Shipped content uses a few anchors (`gpu: &gpus [...]`, `*gpus`), so aliases
  themselves are allowed. libyaml composes the node graph, where an alias is the anchored node
  itself; the graph is walked (in Python) only when the text contains both '*' and '&' (an
  alias and an anchor), which in the shipped content is three practice files, not the guide.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import yaml

from studytui.core.errors import ContentError, UsageError

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Values (nodes) that aliases may add to one document, beyond the nodes written in the file.
ALIAS_BUDGET = 100_000

# Where a value is in a YAML file: the keys and list indexes leading to it (keys may be any scalar).
YamlPath = tuple[object, ...]


# PyYAML has no type information here (types-PyYAML is not a dependency), so its classes are Any.
class AliasError(yaml.MarkedYAMLError):  # type: ignore[misc]  # subclassing Any: see above
    """Aliases that expand past ALIAS_BUDGET, or an alias inside its own anchor's value."""


def _children(node: yaml.Node) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        items: list[Any] = node.value
        return items
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return []


def check_aliases(root: yaml.Node | None, budget: int | None = None) -> None:
    """Raise AliasError when the node graph, expanded as a tree (what walking the loaded value
    visits), has more than `budget` nodes beyond its distinct ones, or has a cycle."""
    if root is None:
        return
    budget = ALIAS_BUDGET if budget is None else budget
    size: dict[int, int] = {}  # id(node) -> nodes in its expanded tree (capped)
    aliased: set[int] = set()  # nodes that contain a shared node
    shared: set[int] = set()  # nodes reached more than once
    open_: set[int] = set()  # nodes on the current path (a cycle comes back to one of them)
    cap = budget * 1000
    culprit: yaml.Node | None = None
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_.discard(key)
            total, has_alias = 1, False
            for child in _children(node):
                child_key = id(child)
                total += size[child_key]
                has_alias = has_alias or child_key in shared or child_key in aliased
            size[key] = min(total, cap)
            if has_alias:
                aliased.add(key)
                if culprit is None and total > budget:
                    culprit = node
            continue
        if key in size:  # already expanded: reached again through an alias
            shared.add(key)
            continue
        if key in open_:
            raise AliasError(None, None, "YAML alias refers to the value that contains it (a loop)", node.start_mark)
        open_.add(key)
        stack.append((node, True))
        children = _children(node)
        seen_here: set[int] = set()
        for child in reversed(children):
            child_key = id(child)
            if child_key in seen_here:
                shared.add(child_key)
            seen_here.add(child_key)
            if child_key in open_:
                raise AliasError(None, None, "YAML alias refers to the value that contains it (a loop)", child.start_mark)
            stack.append((child, False))
    if size[id(root)] - len(size) > budget:
        where = culprit if culprit is not None else root
        raise AliasError(None, None, f"YAML aliases here expand to more than {budget:,} values (an alias bomb?)",
                         where.start_mark)


def _load(text: str, loader: type) -> Any:
    """yaml.load with the alias check between composing and constructing."""
    reader = loader(text)
    try:
        node = reader.get_single_node()
        if node is None:
            return None
        if "*" in text and "&" in text:  # an alias needs '*' and its anchor '&': else nothing to check
            check_aliases(node)
        return reader.construct_document(node)
    except RecursionError:
        raise yaml.YAMLError("nested too deeply to read") from None
    finally:
        reader.dispose()


# _Base is whichever safe loader this PyYAML has (a variable, and Any, to mypy).
class UserLoader(_Base):  # type: ignore[misc, valid-type]
    """The safe loader (C where present), with an integer too long for Python to read (a
    5,000-digit `memory_bw_tbs:`; Python refuses to convert more than 4,300 digits) a YAML error
    at its line, like every other problem in the file, instead of a ValueError from inside PyYAML."""

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        try:
            value: int = super().construct_yaml_int(node)
        except ValueError:
            digits = sum(c.isdigit() for c in str(node.value))
            raise yaml.constructor.ConstructorError(
                None, None, f"number too long to read: {digits:,} digits", node.start_mark
            ) from None
        return value


UserLoader.add_constructor("tag:yaml.org,2002:int", UserLoader.construct_yaml_int)


def safe_load(text: str) -> Any:
    """The safe loader (C where present) with the alias bound and over-long integers refused
    (UserLoader): for the learner's own files. Raises yaml.YAMLError (an AliasError, with a mark,
    for alias bombs and loops; a ConstructorError, with a mark, for an integer too long to read)."""
    return _load(text, UserLoader)


def error_line(exc: yaml.YAMLError, where: str) -> str:
    """'FILE:LINE: problem' for a YAML error (no line when the error has no mark)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = f":{mark.line + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["not valid YAML"])[0]
    return f"{where}{line}: {problem}"


def load_user_yaml(path: Path, what: str) -> Any:
    """A YAML file the learner wrote, read within fileio.YAML_LIMIT and loaded with `safe_load`.
    Every problem is one UsageError line naming the file (and the line, where known)."""
    from studytui.core import fileio

    try:
        text = fileio.read_text_bounded(path, fileio.YAML_LIMIT, what)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: cannot read (not UTF-8 text)") from None
    try:
        return safe_load(text)
    except AliasError as exc:
        raise UsageError(error_line(exc, str(path)) + "; not read") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = str(getattr(exc, "problem", None) or exc)
        if "maximum nesting depth" in problem:  # libyaml's words for what Python reports as recursion
            problem = "nested too deeply to read"
        raise UsageError(f"{path}{line}: not valid YAML ({problem})") from None


class StrictLoader(UserLoader):
    """The safe loader, stricter where silence would hide a mistake in content:
    a key given twice is an error (YAML would silently keep the second `url:`), and (as in
    UserLoader) an integer too long for Python to read (a 5,000-digit `year:`) is an error at its
    line."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
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
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


StrictLoader.add_constructor("tag:yaml.org,2002:map", StrictLoader.construct_yaml_map)


def load_yaml(text: str) -> Any:
    """Parse YAML with the strict loader. Raises yaml.YAMLError (with a mark where known) for
    invalid YAML, duplicate keys, over-long numbers, nesting too deep to read and aliases past
    ALIAS_BUDGET (AliasError)."""
    return _load(text, StrictLoader)


class YamlFile:
    """One parsed YAML file and a way to find the line of any value in it."""

    def __init__(self, path: Path, display: str | None = None) -> None:
        self.path = path
        self.display = display or str(path)
        from studytui.core import fileio

        try:
            self.text = fileio.read_text_bounded(path, fileio.YAML_LIMIT, "a YAML file")
        except fileio.TooLargeError:
            raise ContentError([f"{self.display}:1: larger than {fileio.size_text(fileio.YAML_LIMIT)}, "
                                "the most studytui reads of a YAML file; not read"]) from None
        except fileio.NotRegularFileError:
            raise ContentError([f"{self.display}:1: not a regular file; not read"]) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ContentError([f"{self.display}:1: cannot read file: {exc}"]) from None
        try:
            self.data: Any = load_yaml(self.text)
        except AliasError as exc:
            raise ContentError([error_line(exc, self.display) + "; not read"]) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            line = mark.line + 1 if mark is not None else 1
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ContentError([f"{self.display}:{line}: invalid YAML: {problem}"]) from None
        self._root: yaml.Node | None = None

    def line_of(self, path: Sequence[object]) -> int:
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

    def where(self, path: Sequence[object]) -> str:
        return f"{self.display}:{self.line_of(path)}"
