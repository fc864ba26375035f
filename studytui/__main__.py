"""The program: the installed `studytui` script runs `run`, and so does `python -m studytui`."""

import gc


def run() -> int:
    # Off before anything is imported: a command that prints and exits frees everything when it
    # exits, and the cyclic collector's passes over what the imports make were about a twelfth of
    # an everyday command's start-up (issue 27). `studytui.cli.main` turns it on again for the
    # app and the commands that run until stopped (serve, measure).
    gc.disable()
    from studytui.cli import finish, main

    return finish(main())


if __name__ == "__main__":
    raise SystemExit(run())
