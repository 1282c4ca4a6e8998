"""Headless throughput: messages delivered per second in worst-case elections.

    python bench/throughput.py [--repeat 3] [--nodes 10 100 300]

Scenario per N (PROTOCOLS.md's worst case): constant delay 1, T = 4, no probing; every
node starts at t=0 (the start-up election), leader N crashes at t=20 and node 1, the
lowest, detects it. The transcript is written to disk, as a real run would.

Baseline, measured in the same process: a bare trio producer task handing the same
number of items to a consumer task through a memory channel (buffer 0, a hand-off, as in
SIMULATION-NOTES.md). Each figure is the best of --repeat runs (this machine is noisy;
the median is printed too). Finally the whole process, `bully-tui --headless` for the
largest N, is timed from outside, start-up included.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.commands import Command, Scheduled  # noqa: E402
from playground.config import ClusterConfig  # noqa: E402
from playground.session import Session, run_headless  # noqa: E402

UNTIL = 60.0


def worst_case(nodes: int, transcript: str) -> Session:
    commands = (Scheduled(20, Command("crash", (nodes,)), "bench"), Scheduled(20, Command("elect", (1,)), "bench"))
    config = ClusterConfig(timeout=4, probe_interval=0, delay_min=1, delay_max=1)
    return Session("classic", nodes, 1, config, commands, transcript, overwrite=True)


def engine_run(nodes: int) -> tuple[float, int, int]:
    """(seconds, messages delivered, transcript bytes) for one in-process run."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        start = time.perf_counter()
        summary = run_headless(worst_case(nodes, str(path)), UNTIL)
        elapsed = time.perf_counter() - start
        size = path.stat().st_size
        delivered = sum(line.count(b'"kind":"deliver"') for line in path.open("rb"))
    assert summary["messages"]["total"] - summary["dropped"] == delivered
    return elapsed, delivered, size


async def hand_off(items: int) -> None:
    send, receive = trio.open_memory_channel(0)

    async def produce() -> None:
        async with send:
            for i in range(items):
                await send.send(i)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(produce)
        async with receive:
            async for _ in receive:
                pass


def baseline_run(items: int) -> float:
    start = time.perf_counter()
    trio.run(hand_off, items)
    return time.perf_counter() - start


def whole_process(nodes: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-m", "playground.cli", "--headless", "--nodes", str(nodes), "--delay", "1",
                "--timeout", "4", "--probe-interval", "0", "--at", f"20 crash {nodes}", "--at", "20 elect 1",
                "--until", str(UNTIL), "--transcript", str(Path(tmp) / "t.jsonl")]
        start = time.perf_counter()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, cwd=Path(__file__).resolve().parent.parent)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nodes", type=int, nargs="+", default=[10, 100, 300])
    args = parser.parse_args()

    print("| N | messages delivered | transcript | engine msg/s (best / median) | baseline items/s (best) | ratio |")
    print("|---|---|---|---|---|---|")
    for n in args.nodes:
        runs = [engine_run(n) for _ in range(args.repeat)]
        delivered, size = runs[0][1], runs[0][2]
        times = [r[0] for r in runs]
        base = min(baseline_run(delivered) for _ in range(args.repeat))
        best, median = delivered / min(times), delivered / statistics.median(times)
        print(f"| {n} | {delivered:,} | {size / 1e6:.1f} MB | {best:,.0f} / {median:,.0f} | "
              f"{delivered / base:,.0f} | {best * base / delivered:.2f}x |")
    n = max(args.nodes)
    times = [whole_process(n) for _ in range(args.repeat)]
    print(f"\nwhole process, `bully-tui --headless` N={n} with transcript: "
          f"best {min(times):.2f} s, median {statistics.median(times):.2f} s, worst {max(times):.2f} s")


if __name__ == "__main__":
    main()
