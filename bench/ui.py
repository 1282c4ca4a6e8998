"""The live app's responsiveness, CPU and memory, on a real clock.

    python bench/ui.py

1. Key latency, during classic's start-up Election storm (default delays): N = 32 at
   the highest speed (x64), with the log as text and as the space-time diagram; and
   N = 64 at x1 for every algorithm (classic's storm is 5.2 million messages, far more
   than the app can show as they come, so the run slows down and says at what speed it runs).
   A key that crashes or recovers the selected node, timed until its card and the node
   panel show the change and the screen has been redrawn.
2. Paused: N = 7, paused, CPU seconds used over 5 s of wall time.
3. Memory: N = 10 at x64 for 90 s of wall time: the log fills to its cap and stays
   there, and the process's resident memory stays flat.
Runs headless through Textual's test driver, at 200x50.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.cli.live import release  # noqa: E402
from playground.core.config import Workload  # noqa: E402
from playground.run.session import Session  # noqa: E402
from playground.ui.app import SPEEDS, BullyApp  # noqa: E402
from protocol import ALGORITHMS  # noqa: E402

SIZE = (200, 50)


async def key_latency(nodes: int, speed: float, presses: int = 20, diagram: bool = False,
                      algorithm: str = "classic") -> tuple[list[float], float]:
    """Latencies in ms, and the speed the run kept at the end if it could not keep up (None: it did); with
    `diagram`, the log drawn as the space-time diagram."""
    with tempfile.TemporaryDirectory() as tmp:
        workload = Workload((2, 10), (1, 3)) if "+" in algorithm else None  # a mutex: a busy workload
        app = BullyApp(Session(algorithm, nodes=nodes, workload=workload), speed=speed, save_dir=tmp)
        latencies = []
        async with app.run_test(size=SIZE) as pilot:
            frames = []  # when the app composited a frame: what "on screen" means here
            display = app._display
            app._display = lambda *args: (frames.append(time.perf_counter()), display(*args))[1]
            if diagram:
                app.screen.action_toggle_diagram()
            await pilot.pause(2.0)  # into the storm
            for i in range(presses):
                node = nodes - i // 2
                app.screen.action_select(node)  # (pilot.press would wait for an idle app: never, here)
                want_up = i % 2 == 1  # crash, then recover
                start = time.perf_counter()
                app.simulate_key("r" if want_up else "c")
                while ("✖" not in app.grid.node_text(node)) == (not want_up) or \
                        ("✖" not in app.panel.shown_text()) == (not want_up):  # the grid and the panel took it
                    await asyncio.sleep(0.0005)
                changed = time.perf_counter()
                while not frames or frames[-1] < changed:  # ... and a frame showed it
                    await asyncio.sleep(0.0005)
                latencies.append((frames[-1] - start) * 1000)
                await asyncio.sleep(0.05)
            kept = app.live.running_at()
            await app.action_quit()
    return latencies, kept


async def paused_cpu(seconds: float = 5.0) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        app = BullyApp(Session(nodes=7), speed=1.0, save_dir=tmp)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(1.0)
            await pilot.press("space")
            await pilot.pause(0.5)
            before = time.process_time()
            await asyncio.sleep(seconds)
            used = time.process_time() - before
            await app.action_quit()
    return used


def resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


async def memory(seconds: float = 90.0) -> list[tuple[int, float, int, int, float]]:
    """(wall s, virtual s, lines logged, lines kept, resident MB) every 15 s."""
    samples = []
    with tempfile.TemporaryDirectory() as tmp:
        app = BullyApp(Session(nodes=10), speed=max(SPEEDS), save_dir=tmp)
        async with app.run_test(size=SIZE) as pilot:
            start = time.perf_counter()
            while time.perf_counter() - start < seconds:
                await pilot.pause(15.0)
                model = app.model
                wall = round(time.perf_counter() - start)
                samples.append((wall, app.live.cluster.engine.now, model.logged, len(model.log), resident_mb()))
            await app.action_quit()
    return samples


def main() -> None:
    # Memory first, while the process has held nothing bigger: Python keeps the heap the
    # N = 64 runs below grew to (142 MB here after them), which is not the app's.
    print("memory, N=10 at x64: wall s | virtual s | lines logged | lines kept | resident MB")
    for wall, virtual, logged, kept, mb in asyncio.run(memory()):
        print(f"  {wall:>4} | {virtual:>9.0f} | {logged:>12} | {kept:>10} | {mb:.1f}", flush=True)
    release()
    runs = [("classic", 32, max(SPEEDS), False), ("classic", 32, max(SPEEDS), True),
            *((algorithm, 64, 1.0, False) for algorithm in ALGORITHMS), ("classic+lamport", 32, max(SPEEDS), False)]
    for algorithm, nodes, speed, diagram in runs:
        latencies, kept = asyncio.run(key_latency(nodes, speed, diagram=diagram, algorithm=algorithm))
        release()  # as bully-tui does between two apps (the palette's switch)
        print(f"key latency, {algorithm} N={nodes} at x{speed:g}{' with the diagram' if diagram else ''}: "
              f"median {statistics.median(latencies):.1f} ms, max {max(latencies):.1f} ms over {len(latencies)} presses; "
              + ("keeping up" if kept is None else f"running at x{kept:.2g} at the end"), flush=True)
    used = asyncio.run(paused_cpu())
    release()
    print(f"paused, N=7: {used:.3f} CPU seconds in 5 s of wall time ({used / 5 * 100:.1f}% of a core)")


if __name__ == "__main__":
    main()
