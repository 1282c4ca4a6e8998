"""`bully-tui serve` as a browser meets it, on a real clock: the page's websocket and a
terminal emulator (tests/serve_client.py: what the page's script does, without drawing).

    python bench/serve.py [--back-to-back]

1. First screen: a tab opened (the page's websocket) until the bytes of the live app's
   first screen at N = 7 have come (the log's title, the timeline, the status line), 5
   tabs one after another (each a process started ahead, ui/held_driver.py).
2. Key to screen at N = 32 (x1, 200x50): `c` and `r` on the selected node, 20 times,
   each timed from the key sent until the bytes that draw its line of the grid down,
   then up, have come, during the start-up election (classic's storm, 97,000 messages).
   (The bytes' text, escapes taken out: pyte drawing 200x50 screens costs this client
   more CPU than the tab it measures, on the same two cores.)
3. Eight tabs of N = 7 at once (100x30), a classroom: each crashes and recovers its
   node 10 times, a key a second at most (KEY_EVERY: a student's pace, not a script's
   back to back, which `--back-to-back` measures: a storm of 40 keys a second), each
   key timed until the bytes that draw node 7's card down, then up, have come
   (eight screens drawn by pyte would be this client's work, not the tabs'); and whether
   each tab kept up. A tab's run that cannot keep up is held back (run/live.py): its
   virtual clock waits for the work, so the time on its status line falls behind the
   wall clock, and the line says "running at xS" (the speed it keeps over 2 s, when
   below 0.8 of the speed asked for). So, per tab: its virtual time over the wall
   time of its keys (x1.00 kept pace; a tab that falls behind shows less), its app's
   CPU over that time, and when its status lines said "running at"; a tab
   falls behind if it went slower than KEEPS_PACE or any line said so. The window
   starts once every tab's status line has said it keeps up, and 2 s later (the span
   a status line judges) says so again: eight tabs opened at once start up at once,
   which holds each back for its first seconds (printed).
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
from dataclasses import dataclass
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.serve_client import Page, Served, children, gone

TIME = re.compile(r"t=([0-9.]+)s")
HELD_BACK = re.compile(r"t=([0-9.]+)s ▶ ×[0-9.]+ (?:running )?at ×[0-9.]+")  # the status line: it cannot keep up
KEEPS_PACE = 0.95  # a tab whose virtual time goes at least this fast against the wall clock keeps pace
KEY_EVERY = 1.0  # seconds from one key to the next in a classroom's tab, at least


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


async def crash_and_recover(page: Page, node: int, times: int, said: list[str] | None = None,
                            every: float = 0.0) -> list[float]:
    """`c` then `r` on the selected node, `times` times each: each key's time until the
    bytes that draw the node's card (or its line of the grid) down, then up, have come.
    `said`: where to keep what the status lines said of a run held back ("running at");
    `every`: seconds from one key to the next at least (0: each as soon as the last has shown)."""
    down, up = (re.compile(rf"(?<![→\d]){node} {glyphs}") for glyphs in ("✖", "[●◆◇]"))
    took = []
    for _ in range(times):
        for key, drawn in (("c", down), ("r", up)):
            if said is not None:
                said += HELD_BACK.findall(page.text)
            page.forget()
            start = time.monotonic()
            await page.keys(key)
            await page.until(lambda p, drawn=drawn: drawn.search(p.text), f"the effect of {key}")
            took.append(time.monotonic() - start)
            await asyncio.sleep(max(0.0, every - took[-1]))  # (a student's pace, not a condition)
    return took


def virtual_time(page: Page) -> float:
    """The latest time the page was shown (an alert's "since t=" is earlier, never later)."""
    return max(map(float, TIME.findall(page.text)), default=0.0)


def cpu_seconds(pid: int) -> float:
    """The CPU the process has used so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Tab:
    took: list[float]  # each key's time to screen
    pace: float  # virtual seconds per wall second
    cpu: float  # of a core, its app's process
    held_back: list[float]  # the times of the status lines that said "running at", from the first key's


async def keys_at_32(served: Served) -> list[float]:
    async with aiohttp.ClientSession() as http:
        page = await Page(http, served.url, 200, 50, draw=False).open()
        await page.shows("node 32", "● normal")  # (it has booted: the start-up election goes on)
        took = await crash_and_recover(page, 32, 20)
        await page.close()
    return took


async def keeps_up(page: Page) -> None:
    """Until a status line of the page's says its run keeps up (it judges the last 2 s)."""
    for _ in range(1000):
        page.forget()
        await page.until(lambda p: virtual_time(p) > 0, "the status line")
        if not HELD_BACK.search(page.text):
            return
    raise AssertionError(f"the tab never kept up:\n{page.text}")


async def eight_tabs(served: Served, every: float, settling: list[float]) -> list[Tab]:
    """`settling`: where to keep each tab's seconds from its opening until it kept up."""
    async with aiohttp.ClientSession() as http:
        pages = [await Page(http, served.url, draw=False).open() for _ in range(8)]
        all_up = asyncio.Barrier(len(pages))

        async def one(page: Page, number: int) -> Tab:
            process = await served.tab(number)
            opened = time.monotonic()
            await page.shows("7 ● normal")
            await keeps_up(page)  # (eight start-ups at once hold each tab back for its first seconds)
            settling.append(time.monotonic() - opened)
            # The classroom's window starts once every tab has kept up, and each has said so
            # again: a status line judges the last 2 s, which would hold the others' start-ups.
            await all_up.wait()
            await asyncio.sleep(2.0)
            await keeps_up(page)
            wall, then, cpu = time.monotonic(), virtual_time(page), cpu_seconds(process)
            said: list[str] = []
            took = await crash_and_recover(page, 7, 10, said, every)
            said += HELD_BACK.findall(page.text)
            page.forget()
            await page.until(lambda p: virtual_time(p) > 0, "the status line")
            elapsed = time.monotonic() - wall
            pace, cpu = (virtual_time(page) - then) / elapsed, (cpu_seconds(process) - cpu) / elapsed
            await page.close()
            said += HELD_BACK.findall(page.text)
            return Tab(took, pace, cpu, sorted(round(float(t) - then, 1) for t in set(said)))

        return await asyncio.gather(*(one(page, number) for number, page in enumerate(pages, 1)))


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
        every = 0.0 if "--back-to-back" in sys.argv[1:] else KEY_EVERY
        print(f"eight tabs, a key every {every:g} s at most" if every else "eight tabs, keys back to back")
        settling: list[float] = []
        tabs = asyncio.run(eight_tabs(served, every, settling))
    print(f"opened at once, each tab kept up {min(settling):.1f}–{max(settling):.1f} s after it opened")
    for number, tab in enumerate(tabs, 1):
        held = f"status lines said 'running at' at {tab.held_back} s" if tab.held_back else "never 'running at'"
        print(f"tab {number} of 8, N = 7: {ms(tab.took)}; virtual time x{tab.pace:.2f} of the wall clock's, "
              f"{tab.cpu:.2f} of a core, {held}")
    behind = [n for n, tab in enumerate(tabs, 1) if tab.pace < KEEPS_PACE or tab.held_back]
    print(f"all eight: {ms([t for tab in tabs for t in tab.took])}; "
          f"{'every tab kept pace' if not behind else f'tabs {behind} fell behind'} "
          f"(x{min(t.pace for t in tabs):.2f}–{max(t.pace for t in tabs):.2f}), "
          f"{sum(t.cpu for t in tabs):.2f} of a core in all")
    for args in (("--nodes", "7"), ("--real", "--nodes", "5")):
        with Served(args=args) as served:
            print(f"closing, {' '.join(args)}: {ms(asyncio.run(closing(served)))}".replace("keys", "tabs"))
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
