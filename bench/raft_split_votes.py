"""Raft's Figure 16, in miniature: how long it takes to elect a leader after the leader
crashes, for several spreads of the randomized election timeout.

    python bench/raft_split_votes.py [--seeds 100] [--nodes 5]

Raft draws each election timeout from [T, T'] (here T = 4 s, no probing, and links of a
constant --delay, 0.2 s by default: a round trip a tenth of T, as the paper's 15 ms
broadcast time is of its 150 ms timeout). The paper's spreads, 150-150 ms to 150-300 ms, scaled to T: T' = T (none),
1.007T, 1.033T, 1.167T, 1.333T and 2T. For each, over --seeds seeds: the leader crashes
once all agree (--compare's scenario, run/compare.py), and the time from the crash to
the monitor's next agreement is measured. Without a spread every follower times out at
the same instant after the last heartbeat, every vote splits, and it never ends (the
start-up already cannot elect anyone).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.core.config import ClusterConfig  # noqa: E402
from playground.run.compare import run_one  # noqa: E402

T = 4.0
SPREADS = (1.0, 1.0067, 1.0333, 1.1667, 1.3333, 2.0)  # T' / T: the paper's 150-150 ... 150-300 ms


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=100)
    p.add_argument("--nodes", type=int, default=5)
    p.add_argument("--delay", type=float, default=0.2)
    args = p.parse_args()
    print(f"N = {args.nodes}, T = {T:g} s, links {args.delay:g} s, {args.seeds} seeds each: from the leader's crash "
          "to a new leader followed by all")
    print("| T' (paper) | elected | median | 90th percentile | worst |")
    print("|---|---:|---:|---:|---:|")
    for spread in SPREADS:
        config = ClusterConfig(timeout=T, coordinator_timeout=round(T * spread, 3), probe_interval=0,
                               delay_min=args.delay, delay_max=args.delay)
        times, never_started = [], 0
        for seed in range(1, args.seeds + 1):
            r = run_one("raft", args.nodes, config, seed)
            never_started += r.fault_at is None
            if r.agree is not None:
                times.append(r.agree)
        paper = f"150-{150 * spread:.0f} ms"
        if not times:
            why = f" (the start-up elected nobody in {never_started})" if never_started else ""
            print(f"| {config.coordinator_timeout:g} s ({paper}) | 0 of {args.seeds}{why} | – | – | – |", flush=True)
            continue
        times.sort()
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
        print(f"| {config.coordinator_timeout:g} s ({paper}) | {len(times)} of {args.seeds} | "
              f"{statistics.median(times):.1f} s | {p90:.1f} s | {times[-1]:.1f} s |", flush=True)


if __name__ == "__main__":
    main()
