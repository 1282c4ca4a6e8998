"""Replaying a big transcript: first screen, the whole file read, jumps, memory.

    python bench/replay.py [FILE]

Without FILE it first records a transcript of about a million events (Stoller at
N = 12 for 7,000 virtual seconds, with crashes, recoveries and a partition: many
instants and markers), to a temporary file. Then, in this process, headless through
Textual's test driver at 120x40, as `bully-tui replay FILE` does:

1. the first screen: from opening the file to the first frame the app draws;
2. all read: until the status bar stops saying "reading n%";
3. jumps: home, end, and { } , between markers, while the re-run of the recipe works
   in the background, each from the key to the frame that shows the new moment;
4. memory: the process's peak resident size.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.cli.live import replay_app  # noqa: E402
from playground.ui import app as _  # noqa: E402, F401  (imported before the clock starts, as before)

RECORD = ["--headless", "--algorithm", "stoller", "--nodes", "12", "--until", "7000",
          "--at", "500 crash 12", "--at", "900 recover 12", "--at", "1500 partition 1,2,3", "--at", "1800 heal",
          "--at", "3000 crash 5", "--at", "3100 recover 5"]
KEYS = ["home", "end", "left_curly_bracket", "left_curly_bracket", "comma", "right_curly_bracket", "home", "end"]


async def replay(path: str) -> None:
    start = time.perf_counter()
    app = replay_app(path)  # as `bully-tui replay` opens it: the first block read
    timeline = app.timeline
    frames: list[float] = []  # when the app composited a frame: what "on screen" means here
    display = app._display
    app._display = lambda *args: (frames.append(time.perf_counter()), display(*args))[1]
    async with app.run_test(size=(120, 40)):
        while not frames:
            await asyncio.sleep(0.001)
        print(f"first screen: {frames[0] - start:.2f} s", flush=True)
        while timeline.loading is not None:
            await asyncio.sleep(0.01)
        print(f"all read:     {time.perf_counter() - start:.2f} s ({timeline.history.count:,} events, "
              f"{timeline.history.instants:,} instants, {len(timeline.history.markers)} markers)")
        latencies = []
        for key in KEYS:
            shown = timeline.shown
            pressed = time.perf_counter()
            app.simulate_key(key)  # (pilot.press would wait for an idle app: not while it re-runs)
            while timeline.shown == shown and time.perf_counter() - pressed < 2:  # (a key may have nowhere to go)
                await asyncio.sleep(0.001)
            if timeline.shown == shown:
                print(f"  {key:>20}: nowhere to go from instant {shown:,}")
                continue
            moved = time.perf_counter()
            while (not frames or frames[-1] < moved) and time.perf_counter() - moved < 2:
                await asyncio.sleep(0.001)
            latencies.append((frames[-1] - pressed) * 1000)
            print(f"  {key:>20}: {latencies[-1]:6.1f} ms (instant {timeline.shown:,})")
        print(f"jumps: median {statistics.median(latencies):.0f} ms, worst {max(latencies):.0f} ms")
        await app.action_quit()
    print(f"peak memory:  {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def main() -> None:
    if len(sys.argv) > 1:
        asyncio.run(replay(sys.argv[1]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "big.jsonl")
        subprocess.run([sys.executable, "-c", "import sys; from playground.cli import main; sys.exit(main(sys.argv[1:]))",
                        *RECORD, "--transcript", path],
                       check=True, stdout=subprocess.DEVNULL)
        asyncio.run(replay(path))


if __name__ == "__main__":
    main()
