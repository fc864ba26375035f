from typing import Any
from .test_profile_screen import profile_app, open_file, RAW, _plot_rows
from .support import screen_text, wait_until

async def test_dump(make_app: Any) -> None:
    app = profile_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_file(pilot, app, RAW)
        await pilot.press("m")
        assert await wait_until(pilot, lambda: screen.profile == "measured" and screen.report.ceilings.profile == "measured")
        await pilot.pause(0.3)
        open("/tmp/fx/measured.txt", "w").write(screen_text(app))
