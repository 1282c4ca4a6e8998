"""`bully-tui serve` as a browser meets it, on a real clock: the page's websocket and a
terminal emulator (tests/serve_client.py: what the page's script does, without drawing).

    python bench/serve.py

1. First screen: a tab opened (the page's websocket) until the bytes of the live app's
   first screen at N = 7 have come (the log's title, the timeline, the status line), 5
   tabs one after another (each a process started ahead, ui/held_driver.py).
2. Key to screen at N = 32 (x1, 200x50): `c` and `r` on the selected node, 20 times,
   each timed from the key sent until the bytes that draw its line of the grid down,
   then up, have come, during the start-up election (classic's storm, 97,000 messages).
   (The bytes' text, escapes taken out: pyte drawing 200x50 screens costs this client
   more CPU than the tab it measures, on the same two cores.)
3. Eight tabs of N = 7 at once (100x30): each crashes and recovers its node 10 times,
   each key timed until the bytes that draw node 7's card down, then up, have come
   (eight screens drawn by pyte would be this client's work, not the tabs'); and how far each
   run's virtual time went against the wall clock (x1: a tab that falls behind shows
   less than 1.0).
4. Closing: a tab closed until its process and every process it started (the guardian;
   a real run's five nodes) have ended, 3 tabs each.
Prints the figures (docs/benchmarks.md keeps them, dated).
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import sys
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.serve_client import Page, Served, children, gone

TIME = re.compile(r"t=([0-9.]+)s")


def ms(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    return (f"median {statistics.median(ordered) * 1000:.0f} ms, worst {ordered[-1] * 1000:.0f} ms "
            f"({len(ordered)} keys)")


async def first_screens(served: Served, tabs: int = 5) -> list[float]:
    took = []
    async with aiohttp.ClientSession() as http:
        for _ in range(tabs):
            start = time.monotonic()
            page = await Page(http, served.url, draw=False).open()
            await page.shows("messages", "classic Bully", "t=")  # (the cards, the log, the status line)
            took.append(time.monotonic() - start)
            await page.close()
            await served.said(f"tab {len(took)} closed")  # (one at a time: its process gone first)
    return took


async def crash_and_recover(page: Page, node: int, times: int) -> list[float]:
    """`c` then `r` on the selected node, `times` times each: each key's time until the
    bytes that draw the node's card (or its line of the grid) down, then up, have come."""
    down, up = (re.compile(rf"(?<![→\d]){node} {glyphs}") for glyphs in ("✖", "[●◆◇]"))
    took = []
    for _ in range(times):
        for key, drawn in (("c", down), ("r", up)):
            page.forget()
            start = time.monotonic()
            await page.keys(key)
            await page.until(lambda p, drawn=drawn: drawn.search(p.text), f"the effect of {key}")
            took.append(time.monotonic() - start)
    return took


def virtual_time(page: Page) -> float:
    times = TIME.findall(page.text)
    return float(times[-1]) if times else 0.0


async def keys_at_32(served: Served) -> list[float]:
    async with aiohttp.ClientSession() as http:
        page = await Page(http, served.url, 200, 50, draw=False).open()
        await page.shows("node 32", "● normal")  # (it has booted: the start-up election goes on)
        took = await crash_and_recover(page, 32, 20)
        await page.close()
    return took


async def eight_tabs(served: Served) -> list[tuple[list[float], float]]:
    async with aiohttp.ClientSession() as http:
        pages = [await Page(http, served.url, draw=False).open() for _ in range(8)]

        async def one(page: Page) -> tuple[list[float], float]:
            await page.shows("7 ● normal")
            page.forget()
            await page.until(lambda p: virtual_time(p) > 0, "the status line")
            wall, then = time.monotonic(), virtual_time(page)
            took = await crash_and_recover(page, 7, 10)
            page.forget()
            await page.until(lambda p: virtual_time(p) > 0, "the status line")
            pace = (virtual_time(page) - then) / (time.monotonic() - wall)
            await page.close()
            return took, pace

        return await asyncio.gather(*(one(page) for page in pages))


async def closing(served: Served, tabs: int = 3) -> list[float]:
    took = []
    async with aiohttp.ClientSession() as http:
        for number in range(1, tabs + 1):
            page = await Page(http, served.url, draw=False).open()
            await page.shows("1 ●")
            process = await served.tab(number)
            started = children(process)
            start = time.monotonic()
            await page.close()
            await gone([process, *started])
            took.append(time.monotonic() - start)
    return took


def main() -> None:
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores)")
    with Served(args=("--nodes", "7")) as served:
        print(f"first screen, N = 7: {ms(asyncio.run(first_screens(served)))}".replace("keys", "tabs"))
    with Served(args=("--nodes", "32")) as served:
        print(f"key to screen, N = 32: {ms(asyncio.run(keys_at_32(served)))}")
    with Served(args=("--nodes", "7")) as served:
        results = asyncio.run(eight_tabs(served))
    for number, (took, pace) in enumerate(results, 1):
        print(f"tab {number} of 8, N = 7: {ms(took)}; virtual time x{pace:.2f} of the wall clock's")
    print(f"all eight: {ms([t for took, _ in results for t in took])}")
    for args in (("--nodes", "7"), ("--real", "--nodes", "5")):
        with Served(args=args) as served:
            print(f"closing, {' '.join(args)}: {ms(asyncio.run(closing(served)))}".replace("keys", "tabs"))
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
