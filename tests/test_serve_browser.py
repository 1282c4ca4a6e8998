"""`bully-tui serve` in a real browser: the system's headless Chromium (tests/browser.py)
opens the served page, xterm.js draws the app with WebGL, a key crashes the leader, and
screenshots show it: not blank, the node cards' green across the top, and the crashed
card's red after the key. Skipped, saying why, where no Chromium is installed
(.ci/run installs Debian's); tests/test_serve.py tests the same server without one."""

from __future__ import annotations

import asyncio
import io
import time
from collections import Counter

import pytest

from tests.browser import WITHIN, Browser, find_chromium
from tests.serve_client import Served

Image = pytest.importorskip("PIL.Image", reason="pillow (the test extra) reads the screenshots")
pytestmark = pytest.mark.skipif(find_chromium() is None, reason="no Chromium installed (.ci/run installs Debian's "
                                "chromium; CHROMIUM=PATH names another): the served page is tested without a "
                                "browser in tests/test_serve.py")

NORMAL = (107, 196, 109)  # the theme's green: "● normal" on a card
CARDS = 0.15  # the top of the screen, where the cards are (7 nodes: one row of them)


def colours(image, top: float = 1.0) -> Counter:
    """How many pixels of each colour, in the top `top` of `image`."""
    width, height = image.size
    part = image.crop((0, 0, width, int(height * top))).convert("RGB")
    return Counter(getattr(part, "get_flattened_data", part.getdata)())  # (getdata: Pillow before 12)


def reds(counts: Counter) -> int:
    return sum(n for (r, g, b), n in counts.items() if r > 180 and g < 110 and b < 110)


async def drawn_until(browser: Browser, ok, what: str):
    """Screenshots until one satisfies `ok` (each waits for the page's next frame); that one."""
    deadline = time.monotonic() + WITHIN
    while True:
        image = Image.open(io.BytesIO(await browser.screenshot()))
        if ok(image):
            return image
        if time.monotonic() > deadline:
            raise AssertionError(f"the page did not show {what} within {WITHIN:g} s")


def test_a_browser_draws_the_served_app_and_a_crash_key_changes_it(tmp_path):
    async def look(served: Served) -> None:
        async with Browser.open(served.url, 1280, 800) as browser:
            assert await browser.evaluate("document.title") == "bully-tui --nodes 7"
            await browser.until("document.body.classList.contains('-first-byte')")
            # Seven cards drawn: the green of "normal" across the top, over 300 pixels of it.
            before = await drawn_until(browser, lambda image: colours(image, CARDS)[NORMAL] > 300, "the cards")
            before.save(tmp_path / "before.png")
            assert len(colours(before)) > 50  # not blank: text in many colours
            assert reds(colours(before, CARDS)) < 40
            await browser.type("x")  # the leader, node 7, crashes: its card turns red ("✖ down")
            after = await drawn_until(browser, lambda image: reds(colours(image, CARDS)) > 80, "the crash")
            after.save(tmp_path / "after.png")
            assert after.tobytes() != before.tobytes()

    with Served(args=("--nodes", "7")) as served:
        asyncio.run(look(served))
