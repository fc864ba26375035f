"""`python -m studytui`: the program, as the installed `studytui` script runs it."""

from studytui.cli import main

raise SystemExit(main())
