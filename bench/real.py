"""Real nodes on one machine (playground/real/): how fast N node processes elect, and
how fast a real election settles once a leader's death is detected.

    python bench/real.py [--nodes 16 64] [--algorithm garcia-molina] [--runs 5]

For each N: the processes start together (RealCluster), and the time from the first
step to the monitor's agreement is measured; then the leader is killed (SIGKILL), and
two times are measured from the merged traces: from the kill to the first election
started (detection: T and P), and from that election to the next agreement (the
election itself, which the issue asks to be under a second at N = 16). Also the
processes' total resident memory once all agree. T = 0.5 s, P = 0.5 s, no injected delay.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.core.commands import Crash  # noqa: E402
from playground.core.config import ClusterConfig  # noqa: E402
from playground.real.cluster import RealCluster  # noqa: E402

CONFIG = ClusterConfig(timeout=0.5, probe_interval=0.5, delay_min=0, delay_max=0)


def agreed(events, leader: int, since: float = 0.0) -> float | None:
    return next((e.t for e in events if e.kind == "agreement" and e.leader == leader and e.t >= since), None)


def wait(cluster: RealCluster, check, within: float, what: str = "the cluster's events"):
    """Until `check(events)` finds something (returned with the events); a cluster that
    does not get there within `within` seconds is one line saying what it did not do,
    and how busy the machine was."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        events = cluster.events()
        found = check(events)
        if found is not None:
            return events, found
        time.sleep(0.1)
    raise SystemExit(f"{what}: not within {within:g} s (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} "
                     f"cores)")


def rss_mb(cluster: RealCluster) -> float:
    total = 0
    for p in cluster.processes.values():
        try:
            with open(f"/proc/{p.pid}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except OSError:
            pass
    return total / 1024


def one(n: int, algorithm: str) -> tuple[float, float, float, float]:
    ids = tuple(range(1, n + 1))
    with tempfile.TemporaryDirectory() as folder, RealCluster(ids, algorithm, CONFIG, folder) as cluster:
        _, first = wait(cluster, lambda ev: agreed(ev, n), within=120)
        memory = rss_mb(cluster)
        cluster.submit(Crash(n))
        events, _ = wait(cluster, lambda ev: agreed(ev, n - 1, since=first + 0.001), within=120)
        crash = next(e.t for e in events if e.kind == "crash")
        began = next(e.t for e in events if e.kind == "election_start" and e.t >= crash)
        return first, began - crash, agreed(events, n - 1, since=crash) - began, memory


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, nargs="+", default=[16, 64])
    p.add_argument("--algorithm", default="garcia-molina")
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    print(f"{args.algorithm}, T = P = 0.5 s, no injected delay, {args.runs} runs each (median, worst)")
    print("| N | start-up to agreement | kill to detection | detection to agreement | memory, all processes |")
    print("|---:|---:|---:|---:|---:|")
    for n in args.nodes:
        runs = [one(n, args.algorithm) for _ in range(args.runs)]
        cols = [[r[i] for r in runs] for i in range(4)]
        cells = [f"{statistics.median(c):.3f} s / {max(c):.3f} s" for c in cols[:3]]
        print(f"| {n} | {' | '.join(cells)} | {statistics.median(cols[3]):.0f} MB |", flush=True)


if __name__ == "__main__":
    main()
