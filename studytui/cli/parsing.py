"""Building only the parsers a command line needs (issue 27).

argparse builds every argument of every command up front; for `studytui next` that was a tenth of
the whole command's time. `only_named` wraps a group's subparsers: a command the command line does
not name gets a bare parser (listed in `--help` and in "invalid choice" messages, as before) and
its arguments are not built. A command line that names none of the group's commands (`--help`,
a typo) gets every command in full. The command that runs is always named (argparse matches
command names exactly), so it always has all its arguments.
"""

from __future__ import annotations

import argparse
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


class _OnlyNamed:
    def __init__(self, sub: argparse._SubParsersAction, named: frozenset[str]) -> None:
        self._sub = sub
        self._named = named

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name in self._named:
            return self._sub.add_parser(name, **kwargs)
        self._sub.add_parser(name, help=kwargs.get("help"))
        return _Unbuilt()


def only_named(sub: argparse._SubParsersAction, named: frozenset[str] | None, commands: Iterable[str]) -> Any:
    """`sub` itself when every command of the group is to be built (`named` None: the whole
    parser; or a command line naming none of `commands`), else a stand-in building in full only
    the commands among `named`."""
    if named is None or not named.intersection(commands):
        return sub
    return _OnlyNamed(sub, named)
