"""Headless throughput: messages delivered per second in worst-case elections.

    python bench/throughput.py [--repeat 3] [--nodes 10 100 300]

Scenario per N (PROTOCOLS.md's worst case): constant delay 1, T = 4, no probing; every
node starts at t=0 (the start-up election), leader N crashes at t=20 and node 1, the
lowest, detects it. The transcript is written to disk, as a real run would.

Faults (issue 33): for the largest N, the same scenario lossless, then with loss and
duplication of 1e-9 and unordered links (every draw made, nothing lost or copied: the
same run, event for event, through the faults' path), then with --loss 0.1 --duplicate
0.1 and unordered links (a run of its own, with more messages). The figure is messages
arrived (delivered, or dropped: a lost one is work too) per second; the faulty runs
should keep within 10% of the lossless one's. (With one delay, unordered links overtake
nothing, which is why the command line refuses --reorder then; here it is their path
that is measured, through the API. A delay range is no comparison: with any jitter the
classic Bully's storm at N = 300 runs to millions of messages and gigabytes.)

Baseline, measured in the same process: a bare trio producer task handing the same
number of items to a consumer task through a memory channel (buffer 0, a hand-off, the
yardstick of docs/benchmarks.md). Each figure is the best of --repeat runs (this machine is noisy;
the median is printed too). Finally whole processes, `bully-tui --headless` for the
largest N and for N = 1000 (about three million messages), are timed from outside,
start-up included, with their peak resident memory (`--whole-only`: only these): the
worst case above, and the start-up with the defaults but one delay (`--delay 1 --until
10`: probing on, so each node also sets its probe timer again for each of the N - 1
Coordinators at t = 2, all due at t = 7). The goal at N = 1000: under 300 MB.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.core.commands import Crash, Elect, Scheduled  # noqa: E402
from playground.core.config import ClusterConfig  # noqa: E402
from playground.run.session import Session  # noqa: E402
from playground.run.wiring import run_headless  # noqa: E402

UNTIL = 60.0


WORST = ClusterConfig(timeout=4, probe_interval=0, delay_min=1, delay_max=1)
EVERY_DRAW = WORST.with_faults(loss=1e-9, duplicate=1e-9, reorder=True)  # (the same run, through the faults' path)
FAULTS = WORST.with_faults(loss=0.1, duplicate=0.1, reorder=True)


def worst_case(nodes: int, transcript: str, config: ClusterConfig | None = None) -> Session:
    commands = (Scheduled(20, Crash(nodes), "bench"), Scheduled(20, Elect(1), "bench"))
    config = config or WORST
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


def arrivals_run(nodes: int, config: ClusterConfig) -> tuple[float, int]:
    """(seconds, messages arrived: delivered or dropped) for one in-process run."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        start = time.perf_counter()
        run_headless(worst_case(nodes, str(path), config), UNTIL)
        elapsed = time.perf_counter() - start
        arrived = sum(line.count(b'"kind":"deliver"') + line.count(b'"kind":"drop"') for line in path.open("rb"))
    return elapsed, arrived


def faults_table(nodes: int, repeat: int) -> None:
    print(f"| N = {nodes} | messages arrived | arrived/s (best / median) | of the lossless |")
    print("|---|---|---|---|")
    lossless = None
    for name, config in (("lossless FIFO", WORST), ("every draw made, nothing lost (p = 1e-9, unordered)", EVERY_DRAW),
                         ("loss 0.1, duplicate 0.1, unordered", FAULTS)):
        runs = [arrivals_run(nodes, config) for _ in range(repeat)]
        arrived = runs[0][1]
        best = arrived / min(t for t, _ in runs)
        median = arrived / statistics.median(t for t, _ in runs)
        lossless = lossless or best
        print(f"| {name} | {arrived:,} | {best:,.0f} / {median:,.0f} | {best / lossless:.0%} |")


def baseline_run(items: int) -> float:
    start = time.perf_counter()
    trio.run(hand_off, items)
    return time.perf_counter() - start


WHOLE = {  # the runs timed as whole processes: name -> their arguments for N nodes
    "worst case": lambda n: ["--delay", "1", "--timeout", "4", "--probe-interval", "0", "--at", f"20 crash {n}",
                             "--at", "20 elect 1", "--until", str(UNTIL)],
    "start-up, probing": lambda n: ["--delay", "1", "--until", "10"],
}


def whole_process(nodes: int, run: str = "worst case") -> tuple[float, float]:
    """(seconds, peak resident MB) of one `bully-tui --headless` process."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-m", "playground.cli", "--headless", "--nodes", str(nodes), *WHOLE[run](nodes),
                "--transcript", str(Path(tmp) / "t.jsonl")]
        start = time.perf_counter()
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, cwd=Path(__file__).resolve().parent.parent)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        if status != 0:
            raise SystemExit(f"bully-tui failed with status {status}")
        return elapsed, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nodes", type=int, nargs="+", default=[10, 100, 300])
    parser.add_argument("--big", type=int, nargs="*", default=[1000], help="whole-process runs only, once each")
    parser.add_argument("--faults-only", action="store_true", help="only the faults' table, for the largest N")
    parser.add_argument("--whole-only", action="store_true", help="only the whole processes' times and memory")
    args = parser.parse_args()
    if args.faults_only:
        faults_table(max(args.nodes), args.repeat)
        return
    if args.whole_only:
        whole_processes(args)
        return

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
    print()
    faults_table(max(args.nodes), args.repeat)
    print()
    whole_processes(args)


def whole_processes(args: argparse.Namespace) -> None:
    for n in sorted({max(args.nodes), *args.big}):
        for run in WHOLE:
            runs = [whole_process(n, run) for _ in range(args.repeat if n not in args.big else 1)]
            times = [t for t, _ in runs]
            print(f"whole process, `bully-tui --headless` N={n}, {run}, with transcript: best {min(times):.2f} s, "
                  f"median {statistics.median(times):.2f} s, worst {max(times):.2f} s; "
                  f"peak memory {max(m for _, m in runs):.0f} MB")


if __name__ == "__main__":
    main()
