"""Building only the parsers a command line needs (issue 27).

argparse builds every argument of every command up front; for `studytui next` that was a tenth of
the whole command's time. `only_named` wraps a group's subparsers: a command the command line does
not name stands on one shared placeholder parser (`placeholder`: still a choice, named in "invalid
choice" messages) and its arguments are not built. A command line that names none of the group's
commands (`--help`, a typo) gets every command in full. The command that runs is always named (argparse matches
command names exactly), so it always has all its arguments.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, Iterable


class _Unbuilt:
    """Stands in for the parser of a command this command line does not run: takes the calls
    that would build its arguments and builds nothing."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None

    def add_mutually_exclusive_group(self, *args: Any, **kwargs: Any) -> _Unbuilt:
        return self

    def add_argument_group(self, *args: Any, **kwargs: Any) -> _Unbuilt:
        return self

    def set_defaults(self, **kwargs: Any) -> None:
        return None


_PLACEHOLDER: list[argparse.ArgumentParser] = []


def placeholder() -> argparse.ArgumentParser:
    """The one parser every command this command line does not run stands on: building a bare
    parser for each of twenty names took more than the command that runs (issue 27). Argparse
    only reaches it if it reads the command word differently from `studytui.cli.named_command`;
    then it takes the rest of the line and marks the result `unplanned`, and the whole parser is
    built and run instead."""
    if not _PLACEHOLDER:
        bare = argparse.ArgumentParser(prog="studytui", add_help=False, formatter_class=HelpFormatter)
        bare.add_argument("rest", nargs=argparse.REMAINDER)
        bare.set_defaults(unplanned=True)
        _PLACEHOLDER.append(bare)
    return _PLACEHOLDER[0]


def add_placeholder(sub: argparse._SubParsersAction, name: str) -> None:
    """`name` known to `sub` (listed among the choices argparse names), standing on `placeholder()`."""
    sub.choices.setdefault(name, placeholder())  # type: ignore[union-attr]  # (the subparsers' name map)


class _OnlyNamed:
    def __init__(self, sub: argparse._SubParsersAction, named: frozenset[str]) -> None:
        self._sub = sub
        self._named = named

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name in self._named:
            return self._sub.add_parser(name, **kwargs)
        add_placeholder(self._sub, name)
        return _Unbuilt()


def only_named(sub: argparse._SubParsersAction, named: frozenset[str] | None, commands: Iterable[str]) -> Any:
    """`sub` itself when every command of the group is to be built (`named` None: the whole
    parser; or a command line naming none of `commands`), else a stand-in building in full only
    the commands among `named`."""
    if named is None or not named.intersection(commands):
        return sub
    return _OnlyNamed(sub, named)


# -- help text --------------------------------------------------------------------------------------


def help_lines(text: str, width: int) -> list[str]:
    """An option's help filled to `width`, broken only at spaces, and inside a list of choices
    (`[fp64|fp32|...|int8]`) only after a `|`: never inside a word ("int" / "8"), never at a
    hyphen ("block-" / "scaled"). A word that fits on no line is left whole on its own."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        sep = " " if line else ""
        if len(line) + len(sep) + len(word) <= width:
            line += sep + word
            continue
        if len(word) <= width or "|" not in word:
            if line:
                lines.append(line)
            line = word
            continue
        # Longer than a line: a choice list, continued after one of its bars.
        for i, piece in enumerate(p for p in re.findall(r"[^|]*\|?", word) if p):
            joiner = sep if i == 0 else ""
            if line and len(line) + len(joiner) + len(piece) > width:
                lines.append(line)
                line = piece
            else:
                line += joiner + piece
    if line:
        lines.append(line)
    return lines


class ChoiceSafeHelp:
    """A mixin for an argparse help formatter: option help wrapped by `help_lines`."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return help_lines(text, width)


def terminal_columns() -> int:
    """The width argparse would give its help: COLUMNS when set to a number, else the terminal's
    width, else 80 (what `shutil.get_terminal_size` returns, read without importing shutil:
    argparse makes a formatter for every argument added, and shutil brings bz2 and lzma)."""
    import os
    import sys

    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]  # as shutil asks
        except (AttributeError, ValueError, OSError):  # (no stdout, closed, detached, not a terminal)
            columns = 0
    return columns if columns > 0 else 80


class HelpFormatter(ChoiceSafeHelp, argparse.HelpFormatter):
    """argparse's formatter with option help wrapped by `help_lines` (every studytui parser)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
        if width is None:
            width = terminal_columns() - 2  # argparse's own margin
        super().__init__(prog, indent_increment, max_help_position, width)
