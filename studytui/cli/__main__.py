"""`python -m studytui.cli`: the program, run as the installed `studytui` script runs it
(studytui/__main__.py: the collector off before the first import, and `finish`)."""

import gc

gc.disable()

from studytui.cli import finish, main  # noqa: E402  (after the collector is off)

raise SystemExit(finish(main()))
