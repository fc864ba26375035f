"""studytui.core.imports: the command line imports pathlib without urllib.parse (issue 27), and
nothing that needs urllib.parse notices."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_command_line_loads_pathlib_without_urllib_parse_or_ipaddress() -> None:
    got = _run(
        """
        import json, sys
        import studytui.cli
        print(json.dumps({m: m in sys.modules for m in ("pathlib", "urllib.parse", "ipaddress")}))
        """
    )
    assert got == {"pathlib": True, "urllib.parse": False, "ipaddress": False}


def test_as_uri_and_a_later_import_get_the_real_urllib_parse() -> None:
    got = _run(
        r"""
        import json, sys
        import studytui.cli
        from pathlib import Path, PurePosixPath
        uri = Path("/tmp/a b/ü#?").as_uri()  # quote_from_bytes, through the stand-in
        import urllib.parse
        real = urllib.parse
        print(json.dumps({
            "uri": uri,
            "real": hasattr(real, "urlsplit") and real.__spec__ is not None and real is sys.modules["urllib.parse"],
            "quote": real.quote("a b"),
            "again": PurePosixPath("/x y").as_uri(),
        }))
        """
    )
    assert got == {"uri": "file:///tmp/a%20b/%C3%BC%23%3F", "real": True, "quote": "a%20b", "again": "file:///x%20y"}


def test_nothing_is_done_where_pathlib_or_urllib_parse_is_already_imported() -> None:
    got = _run(
        """
        import json, sys
        import urllib.parse
        before = sys.modules["urllib.parse"]
        from studytui.core.imports import import_pathlib
        import_pathlib()
        import pathlib
        print(json.dumps({"same": sys.modules["urllib.parse"] is before,
                          "real": pathlib.urlquote_from_bytes is before.quote_from_bytes}))
        """
    )
    assert got == {"same": True, "real": True}
