"""The `studytui` command line, the program's entry point. With no subcommand it starts the study
app through `studytui.tui.launch`: the one import from the command line into the app
([tool.importlinter] in pyproject.toml); command modules never import the app.

Each group of subcommands lives in `studytui/cli/commands/<name>.py` and exposes
`register(subparsers)`. Those modules import only what parsing needs; handlers import their heavy
dependencies when they run, so commands start fast and never import Textual.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from studytui import __version__
from studytui.core.errors import StudyError

# Modules that add subcommands, in the order their commands appear in --help.
COMMAND_MODULES = (
    "studytui.cli.commands.guide",
    "studytui.cli.commands.study",
    "studytui.cli.commands.calc",
    "studytui.cli.commands.practice",
    "studytui.cli.commands.plan",
    "studytui.cli.commands.measure",
    "studytui.cli.commands.guide_diff",
    "studytui.cli.commands.takealong",
    "studytui.cli.commands.profile",
)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        from studytui.cli.output import one_line

        sys.stderr.write(f"{self.prog}: error: {one_line(message)} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def build_parser(argv: Sequence[str] | None = None) -> ArgumentParser:
    """The whole parser; given the command line, a command group may leave out the details of
    commands it does not name (the calculators' hundred flags, when the command is not `calc`)."""
    named = None if argv is None else frozenset(argv)
    parser = ArgumentParser(
        prog="studytui",
        description=(
            "Study the AI Performance Engineering reading list in your terminal. "
            "With no command, opens the study app."
        ),
    )
    parser.add_argument("--version", action="version", version=f"studytui {__version__}")
    parser.add_argument("--data-dir", metavar="DIR", help="where progress and notes live (default: see 'studytui where')")
    parser.add_argument("--content", metavar="DIR", help="load the guide from DIR instead of the bundled content")
    parser.add_argument("--readme", metavar="FILE", dest="app_readme",
                        help="with no command: open the app on 'What changed in the guide' for this newer copy of its README")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    for name in COMMAND_MODULES:
        # Every group ships with the package: a missing one is a packaging error, never hidden.
        importlib.import_module(name).register(sub, named)
    return parser


def _app_only_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """The options when `argv` only starts the app (no command), else None.

    Starting the app skips building every subcommand's parser: that is tens of milliseconds
    before the first frame.
    """
    if any(a in ("-h", "--help", "--version") for a in argv):
        return None
    quick = ArgumentParser(prog="studytui", add_help=False)
    quick.add_argument("--data-dir")
    quick.add_argument("--content")
    quick.add_argument("--readme", dest="app_readme")
    args, rest = quick.parse_known_args(list(argv))
    if rest:
        return None
    args.command = None
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    from studytui.cli.output import console

    console.cache_clear()  # each run sizes its output for the terminal (COLUMNS, NO_COLOR) as it is now
    args = _app_only_args(argv)
    if args is None:
        args = build_parser(argv).parse_args(argv)
    if args.command is not None and getattr(args, "app_readme", None):
        sys.stderr.write("studytui: error: --readme opens the app on what changed in the guide; "
                         "with a command, use 'studytui guide diff FILE' instead\n")
        return 2
    try:
        if args.command is None:
            from studytui.tui.launch import launch

            return launch(args)
        return int(args.func(args) or 0)
    except StudyError as exc:
        _error_line(str(exc))
        return exc.exit_code
    except RecursionError:
        _error_line("the input is nested too deeply to read; nothing was changed")
        return 2
    except BrokenPipeError:
        # `studytui list | head`: the reader went away; that is not an error worth a traceback.
        # (Dropping stdout cannot fail; a `return` in a `finally` here swallowed any exception.)
        sys.stdout = None  # type: ignore[assignment]
        return 0
    except OSError as exc:
        # A path the system refuses (a component over 255 bytes, a loop of links...) wherever it
        # was given: one line naming it, never a traceback. Nothing was written before this.
        _error_line(_os_error_message(exc))
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("studytui: interrupted\n")
        return 130


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit // 2] + "…" + text[-(limit // 2) :]


def _os_error_message(exc: OSError) -> str:
    what = exc.strerror or exc.__class__.__name__
    if exc.filename is None:
        return f"{what}; nothing was changed"
    name = exc.filename if isinstance(exc.filename, str) else os.fsdecode(exc.filename)
    return f"{_shorten(name)}: {what}; nothing was changed"


def _error_line(message: str) -> None:
    """Errors are one line on stderr whatever they quote: control characters (an id with a
    newline or an escape sequence) are shown escaped, never passed to the terminal."""
    from studytui.cli.output import one_line

    sys.stderr.write(f"studytui: error: {one_line(message)}\n")
