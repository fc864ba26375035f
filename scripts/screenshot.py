"""Save the README screenshot of the study app as SVG (docs/screenshot.svg).

Runs the real app headless on the bundled guide with a throwaway data directory seeded with a
little progress and a note, a fixed date and no blinking cursor, so the picture only changes
when the app or the content does. Run after changing either:

    python scripts/screenshot.py [--out docs/screenshot.svg] [--size 120x36]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NOTE = (
    "Write the kernel once from memory: grid of blocks, **global index**, bounds check.\n\n"
    "- `cudaMemcpy` is synchronous\n- launches are asynchronous"
)


async def capture(out: Path, size: tuple[int, int]) -> None:
    from studytui.guide import load_guide
    from studytui.store import open_store
    from studytui.tui.app import StudyApp

    guide = load_guide()
    start = guide.sections[0].entries
    with tempfile.TemporaryDirectory(prefix="studytui-shot-") as tmp:
        store = open_store(tmp)
        store.set_state(start[0].id, "done")
        store.set_state(start[1].id, "done")
        current = start[2]
        store.set_state(current.id, "learning")
        store.set_note(current.id, NOTE)
        store.set_last_viewed(current.id)
        app = StudyApp(
            guide,
            store,
            today=lambda: dt.date(2026, 11, 29),
            environ={"DISPLAY": ":0"},
            cursor_blink=False,
        )
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await pilot.pause(0.2)
            out.parent.mkdir(parents=True, exist_ok=True)
            app.save_screenshot(filename=out.name, path=str(out.parent))
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.svg")
    parser.add_argument("--size", default="120x36", help="terminal size, COLSxROWS")
    args = parser.parse_args()
    cols, rows = (int(n) for n in args.size.lower().split("x"))
    asyncio.run(capture(args.out, (cols, rows)))
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
