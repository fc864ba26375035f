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
from typing import Any, Sequence

from studytui import __version__
from studytui.core.errors import StudyError
from studytui.core.imports import import_pathlib

# Before anything imports pathlib (nothing above does): pathlib without urllib.parse and ipaddress.
import_pathlib()

# Modules that add subcommands, in the order their commands appear in --help.
COMMAND_MODULES = (
    "studytui.cli.commands.guide",
    "studytui.cli.commands.glossary",
    "studytui.cli.commands.study",
    "studytui.cli.commands.calc",
    "studytui.cli.commands.practice",
    "studytui.cli.commands.plan",
    "studytui.cli.commands.measure",
    "studytui.cli.commands.guide_diff",
    "studytui.cli.commands.serve",
    "studytui.cli.commands.profile",
)

# Which module registers each command. A command line that names one builds only that group's
# parsers: building every group's took tens of milliseconds, a third of what a whole command may
# take (issue 27). tests/test_cli_speed.py keeps this equal to what the modules register; a command
# missing here still works (its line then builds every group, as --help does).
COMMANDS = {
    **dict.fromkeys(("list", "show", "search", "open", "where", "check"), "studytui.cli.commands.guide"),
    "glossary": "studytui.cli.commands.glossary",
    **dict.fromkeys(("next", "mark", "note", "progress", "export", "import", "history"), "studytui.cli.commands.study"),
    **dict.fromkeys(("calc", "gpus"), "studytui.cli.commands.calc"),
    "practice": "studytui.cli.commands.practice",
    "plan": "studytui.cli.commands.plan",
    "measure": "studytui.cli.commands.measure",
    "guide": "studytui.cli.commands.guide_diff",
    "serve": "studytui.cli.commands.serve",
    "profile": "studytui.cli.commands.profile",
}
# The global options that take a value (the word after them is never the command).
_VALUED_OPTIONS = ("--data-dir", "--content", "--readme", "--profile-file")


def named_command(argv: Sequence[str]) -> str | None:
    """The command `argv` names, read as argparse reads it (global options and their values
    skipped); None for help, the version, no command or one not in COMMANDS."""
    words = iter(argv)
    for word in words:
        if word in ("-h", "--help", "--version", "--"):
            return None
        if word.startswith("--") and "=" not in word and len(word) > 2 and any(o.startswith(word) for o in _VALUED_OPTIONS):
            next(words, None)  # its value (argparse takes unambiguous prefixes: --data DIR)
            continue
        if word.startswith("-"):
            continue
        return word if word in COMMANDS else None
    return None


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2, and option help broken only at spaces
    and after a choice list's "|" (studytui.cli.parsing.HelpFormatter)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "formatter_class" not in kwargs:
            from studytui.cli.parsing import HelpFormatter

            kwargs["formatter_class"] = HelpFormatter
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        from studytui.cli.output import one_line

        sys.stderr.write(f"{self.prog}: error: {one_line(message)} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _translate_once() -> None:
    """argparse passes each of its own strings through gettext, which looks for a message catalogue
    on disk at every call (a few stats each, hundreds of calls to build the parser: a tenth of a
    command's time, and the `locale` module loaded to name the places to look). Where no catalogue
    for gettext's domain exists at all, every string translates to itself, so argparse is given
    that directly; else each string is looked up once per process. The translations are the same."""
    translate = getattr(argparse, "_", None)
    if translate is None or hasattr(translate, "cache_info") or translate is _untranslated:
        return
    if not _catalogues_exist():
        argparse._ = _untranslated  # type: ignore[attr-defined]
        return
    from functools import lru_cache

    argparse._ = lru_cache(maxsize=None)(translate)  # type: ignore[attr-defined]


def _untranslated(message: str) -> str:
    return message


def _catalogues_exist() -> bool:
    """Whether gettext could find any catalogue for its current domain (`messages` unless a
    program set another) in that domain's folder, in any language: `<dir>/<lang>/LC_MESSAGES/
    <domain>.mo`, the only files gettext reads. A folder that cannot be listed counts as holding one."""
    import gettext

    domain = gettext.textdomain()
    folder = gettext.bindtextdomain(domain)  # (asks; changes nothing)
    try:
        languages = os.listdir(folder)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return any(os.path.isfile(os.path.join(folder, lang, "LC_MESSAGES", f"{domain}.mo")) for lang in languages)


def build_parser(argv: Sequence[str] | None = None) -> ArgumentParser:
    """The whole parser; given the command line, only the group of the command it names (every
    group when it names none, or asks for help), and a group may leave out the details of
    commands it does not name (the calculators' hundred flags, when the command is not `calc`)."""
    _translate_once()
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
    parser.add_argument("--profile-file", metavar="FILE", dest="app_profile_file",
                        help="with no command: open the app on this profile, an Nsight Compute CSV export or a PyTorch "
                             "profiler trace ('studytui profile --help' says how to make one)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    command = None if argv is None else named_command(argv)
    for name in (COMMANDS[command],) if command is not None else COMMAND_MODULES:
        # Every group ships with the package: a missing one is a packaging error, never hidden.
        importlib.import_module(name).register(sub, named)
    if command is not None:  # the other groups' commands still exist, as names (their modules not imported)
        from studytui.cli.parsing import add_placeholder

        for other, module in COMMANDS.items():
            if module != COMMANDS[command]:
                add_placeholder(sub, other)
    return parser


def _app_only_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """The options when `argv` only starts the app (no command), else None.

    Starting the app skips building every subcommand's parser: that is tens of milliseconds
    before the first frame.
    """
    if any(a in ("-h", "--help", "--version") for a in argv) or named_command(argv) is not None:
        return None  # (a command line that names a command never starts the app: no parser to build for that)
    quick = ArgumentParser(prog="studytui", add_help=False)
    quick.add_argument("--data-dir")
    quick.add_argument("--content")
    quick.add_argument("--readme", dest="app_readme")
    quick.add_argument("--profile-file", dest="app_profile_file")
    args, rest = quick.parse_known_args(list(argv))
    if rest:
        return None
    args.command = None
    return args


# Commands that run until the learner stops them: the cyclic garbage collector runs for these
# (and for the app), as in any long-lived process. Every other command is over in a fraction of a
# second, and runs without it (see `main`).
LONG_RUNNING = frozenset({"serve", "measure"})

# Whether the last command main() ran may end with os._exit once main returns (studytui/__main__):
# every command but the app and the LONG_RUNNING ones, and only once it has finished.
_quick_exit = False


def quick_exit_allowed() -> bool:
    """Whether the command main() last ran is one that has finished all of its work by the time
    main returns, so the process may skip the interpreter's teardown (`finish`)."""
    return _quick_exit


def finish(code: int) -> int:
    """The end of the program (the installed script, `python -m studytui`, `python -m
    studytui.cli`): `code` returned for the ordinary exit, or, after a command that has finished
    (`quick_exit_allowed`), its output flushed and then `os._exit(code)`. A command's work is done
    when `main` returns: each store it opened closed, each file written and renamed into place,
    no thread of its own left. What an ordinary exit would add is tearing down every module and
    object one by one and a last pass of the cyclic collector: about an eighth of the yardstick's
    time (issue 27), for memory the system takes back at once. Output that cannot be written (a
    full disk) is said in one line and the status is 1, never 0; a reader that went away (`| head`)
    is not an error. The app, `serve` and `measure` exit the ordinary way."""
    if not _quick_exit:
        return code
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away (`studytui list | head`): nothing to tell it
            pass
        except (OSError, ValueError) as exc:  # a full disk, a quota, a closed stream: the output is not all there
            if stream is sys.stdout:
                what = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
                os.write(2, f"studytui: error: the output could not be written ({what})\n".encode("utf-8", "replace"))
                code = code or 1
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line: the exit status (0, 1, 2 for usage, 130 when interrupted)."""
    import gc

    # A command that prints and exits frees everything when it exits: the collector's passes over
    # what the imports and the caches make cost time for nothing (issue 27). Off for the command
    # (the installed script turns it off before the first import: studytui.__main__), and as it
    # was before afterwards, for a process that calls main() itself.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _main(argv)
    finally:
        if collecting:
            gc.enable()


def _main(argv: Sequence[str] | None) -> int:
    import gc

    argv = sys.argv[1:] if argv is None else list(argv)
    _encodable_output()
    from studytui.cli.output import console

    console.cache_clear()  # each run sizes its output for the terminal (COLUMNS, NO_COLOR) as it is now
    args = _app_only_args(argv)
    if args is None:
        args = build_parser(argv).parse_args(argv)
        if getattr(args, "unplanned", False):  # argparse read another command word than we did
            args = build_parser(None).parse_args(argv)
    if args.command is not None and getattr(args, "app_readme", None):
        sys.stderr.write("studytui: error: --readme opens the app on what changed in the guide; "
                         "with a command, use 'studytui guide diff FILE' instead\n")
        return 2
    if args.command is not None and getattr(args, "app_profile_file", None):
        sys.stderr.write("studytui: error: --profile-file opens the app on a profile; "
                         "with a command, use 'studytui profile FILE' instead\n")
        return 2
    global _quick_exit
    _quick_exit = False
    if args.command is None or args.command in LONG_RUNNING:
        gc.enable()
    try:
        if args.command is None:
            from studytui.tui.launch import launch

            return launch(args)
        code = int(args.func(args) or 0)
        _quick_exit = args.command not in LONG_RUNNING
        return code
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
        if _output_failed(exc):
            # Writing the output failed (a full disk, a quota): say so, and not that nothing was
            # changed (a mark is stored before it is printed). What is left is dropped, so the
            # exit does not fail a second time.
            _error_line(f"the output could not be written ({exc.strerror or type(exc).__name__})")
            _drop_output()
            _quick_exit = True
            return 1
        # A path the system refuses (a component over 255 bytes, a loop of links...) wherever it
        # was given: one line naming it, never a traceback. Nothing was written before this.
        _error_line(_os_error_message(exc))
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("studytui: interrupted\n")
        return 130


def _encodable_output() -> None:
    """Output to a terminal or pipe whose encoding is not UTF-8 (PYTHONIOENCODING=latin-1, an old
    locale) writes what that encoding lacks as backslash escapes (an em dash as \\u2014) instead of
    stopping the command with UnicodeEncodeError: every character still reaches the reader, and
    nothing is lost. A UTF-8 stream is left as it is."""
    from studytui.cli.output import is_utf8

    for stream in (sys.stdout, sys.stderr):
        if is_utf8(stream) or getattr(stream, "errors", None) == "backslashreplace":
            continue
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # not a text stream (a test's stand-in)
            pass


def _output_failed(exc: OSError) -> bool:
    """Whether `exc` is a write that failed for want of room or a failing device with no file
    named: standard output on a full disk (`studytui list --json > file`). studytui's own file
    writes name their file when they fail (core/fileio), so this is what is left; it is said as
    such, never as "nothing was changed"."""
    import errno

    return exc.filename is None and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG)


def _drop_output() -> None:
    from studytui.cli.output import stdout_to_null

    stdout_to_null()
    sys.stdout = None  # type: ignore[assignment]


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
