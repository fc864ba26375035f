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


def test_a_command_runs_without_the_cyclic_collector_and_gives_it_back(capsys, monkeypatch) -> None:
    """An everyday command runs with the cyclic collector off (issue 27); afterwards it is as it
    was, on or off, so a process that calls main() (the tests, a script) keeps its own setting."""
    import gc

    from studytui import cli
    from studytui.cli.commands import guide

    seen = []
    real = guide.cmd_list
    monkeypatch.setattr(guide, "cmd_list", lambda args: seen.append(gc.isenabled()) or real(args))
    assert gc.isenabled()
    assert cli.main(["list", "--json"]) == 0
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        assert cli.main(["list", "--json"]) == 0
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable()
    capsys.readouterr()


def test_the_app_and_the_server_run_with_the_cyclic_collector(monkeypatch) -> None:
    """Long-lived processes (the app, `serve`, `measure`) collect as usual."""
    import gc

    from studytui import cli

    seen = {}
    monkeypatch.setattr("studytui.tui.launch.launch", lambda args: seen.setdefault("app", gc.isenabled()) and 0)
    assert cli.main([]) == 0
    assert seen == {"app": True}
    assert cli.LONG_RUNNING == {"serve", "measure"}
    from studytui.cli.commands import serve

    monkeypatch.setattr(serve, "cmd_serve", lambda args: seen.setdefault("serve", gc.isenabled()) and 0)
    assert cli.main(["serve"]) == 0
    assert seen == {"app": True, "serve": True}


def test_the_installed_script_turns_the_collector_off_before_the_first_import() -> None:
    """`studytui` (the script pip writes runs studytui.__main__:run) and `python -m studytui`:
    the collector is off before studytui.cli is imported, and the command's output is right."""
    from pathlib import Path

    project = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert '[project.scripts]\nstudytui = "studytui.__main__:run"\n' in project
    # run() ends a finished command with os._exit: what it saw goes to stderr as it happens, the
    # command's output to stdout, and the status is the process's.
    code = textwrap.dedent(
        """
        import gc, os, sys
        class Finder:
            def find_spec(self, name, path=None, target=None):
                if name == "studytui.cli":
                    os.write(2, f"collector on: {gc.isenabled()}\\n".encode())
                return None
        sys.meta_path.insert(0, Finder())
        sys.argv = ["studytui", "list", "--json"]
        from studytui.__main__ import run
        run()
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "collector on: False\n", done.stderr
    assert len(json.loads(done.stdout)) > 100
    out = subprocess.run([sys.executable, "-m", "studytui", "show", "gqa", "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and json.loads(out.stdout)["id"] == "gqa"


def test_the_stand_in_has_only_what_pathlib_takes_and_a_pathlib_wanting_more_still_imports() -> None:
    got = _run(
        """
        import builtins, json, sys
        real_import = builtins.__import__
        seen = {}

        def spy(name, globals=None, locals=None, fromlist=(), level=0):
            module = real_import(name, globals, locals, fromlist, level)
            if name == "urllib.parse" and "pathlib" in sys.modules and not hasattr(module, "urlsplit"):
                seen["other name"] = hasattr(module, "urlsplit")
                seen["quote_from_bytes"] = callable(getattr(module, "quote_from_bytes", None))
            return module

        builtins.__import__ = spy
        from studytui.core.imports import import_pathlib
        import_pathlib()
        builtins.__import__ = real_import
        import pathlib
        print(json.dumps({**seen, "uri": pathlib.Path("/a b").as_uri()}))
        """
    )
    assert got == {"other name": False, "quote_from_bytes": True, "uri": "file:///a%20b"}


def test_a_pathlib_that_takes_another_name_is_imported_with_the_real_urllib_parse() -> None:
    got = _run(
        """
        import importlib.abc, importlib.util, json, sys

        class Wanting(importlib.abc.MetaPathFinder, importlib.abc.Loader):
            # a pathlib that also takes urlsplit from urllib.parse
            def find_spec(self, name, path=None, target=None):
                return importlib.util.spec_from_loader(name, self) if name == "pathlib" else None
            def create_module(self, spec):
                return None
            def exec_module(self, module):
                from urllib.parse import quote_from_bytes, urlsplit
                module.quote_from_bytes, module.urlsplit = quote_from_bytes, urlsplit

        sys.meta_path.insert(0, Wanting())
        for name in ("pathlib", "urllib.parse"):  # importlib.abc brought them in
            sys.modules.pop(name, None)
        from studytui.core.imports import import_pathlib
        import_pathlib()
        import pathlib
        print(json.dumps({"real": pathlib.urlsplit("http://x/y").path, "stand-in gone": hasattr(sys.modules["urllib.parse"], "urlsplit")}))
        """
    )
    assert got == {"real": "/y", "stand-in gone": True}


def test_fsrs_is_imported_without_typing_extensions_and_schedules_as_before() -> None:
    got = _run(
        """
        import json, sys
        from studytui.practice import schedule
        scheduler = schedule._scheduler()
        without = "typing_extensions" not in sys.modules
        import typing, typing_extensions, fsrs.card
        print(json.dumps({
            "without": without,
            "real afterwards": hasattr(typing_extensions, "TypedDict") and typing_extensions.__spec__ is not None,
            "same Self": fsrs.card.Self is typing.Self is typing_extensions.Self,
            "scheduler": type(scheduler).__module__,
        }))
        """
    )
    assert got == {"without": True, "real afterwards": True, "same Self": True, "scheduler": "fsrs.scheduler"}


def test_an_fsrs_that_takes_another_name_from_typing_extensions_imports_with_the_real_one() -> None:
    got = _run(
        """
        import importlib.abc, importlib.util, json, sys

        class Wanting(importlib.abc.MetaPathFinder, importlib.abc.Loader):
            def find_spec(self, name, path=None, target=None):
                return importlib.util.spec_from_loader(name, self) if name == "fsrs" else None
            def create_module(self, spec):
                return None
            def exec_module(self, module):
                from typing_extensions import Self, TypeAlias
                module.Self, module.TypeAlias = Self, TypeAlias

        sys.meta_path.insert(0, Wanting())
        sys.modules.pop("typing_extensions", None)
        from studytui.core.imports import import_fsrs
        import_fsrs()
        import fsrs
        print(json.dumps({"alias": fsrs.TypeAlias is not None, "real": hasattr(sys.modules["typing_extensions"], "TypedDict")}))
        """
    )
    assert got == {"alias": True, "real": True}
