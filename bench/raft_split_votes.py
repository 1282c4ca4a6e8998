"""Raft's Figure 16 (top), in miniature: how long it takes to elect a new leader after
the leader crashes, for the paper's spreads of the randomized election timeout.

    python bench/raft_split_votes.py [--trials 100] [--nodes 5] [--delay 0.001]

The paper's setting (Ongaro & Ousterhout 2014, section 9.3), in its own milliseconds:
five servers, election timeouts drawn from 150-150, 150-151, 150-155, 150-175, 150-200
and 150-300 ms (T = 150 ms, T' the top), heartbeats every T/2, and links far faster
than the timeout. Here every link takes a constant --delay, 1 ms by default (a
broadcast, a round trip, of 2 ms). Constant links restart every follower's timer at the
same instant at each heartbeat, as the paper's test script arranged by broadcasting a
heartbeat just before it killed the leader: the worst case for split votes.

One trial: node 1 stands at once (`elect`), so that the run has a leader whatever the
spread; once every node follows it, it crashes at a moment drawn uniformly within its
heartbeat interval, as in the paper; the time measured is from that crash to the moment
a new leader wins a majority (the paper's "detect the crash and elect a new leader").
A trial that has not elected one 10 s after the crash, the paper's mark for "no
randomness", counts as not elected. The figures are over all trials, those not elected
included, so a median that is one of them reads "> 10 s".
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.core.commands import Crash, Elect, Scheduled  # noqa: E402
from playground.core.config import ClusterConfig  # noqa: E402
from playground.core.engine import Engine  # noqa: E402
from playground.core.events import AgreementEvent, Event, StateEvent  # noqa: E402
from playground.run.cluster import Cluster, MockClock  # noqa: E402
from playground.run.interrupt import run_trio  # noqa: E402
from protocol import Raft  # noqa: E402
from protocol.raft import LEADER  # noqa: E402

T = 0.150
SPREADS = (0.150, 0.151, 0.155, 0.175, 0.200, 0.300)  # T', the paper's 150-150 ... 150-300 ms
LIMIT = 10.0  # seconds after the crash: the paper's "longer than 10 seconds"
STAND_AT = T / 3  # before anyone's first timeout (at least T): node 1 alone stands


class _Trial:
    """Trace observer: crash the leader within its heartbeat interval once all follow it,
    then note when a new leader is elected."""

    def __init__(self, engine: Engine, cancel: trio.CancelScope, rng: random.Random):
        self.engine, self.cancel, self.rng = engine, cancel, rng
        self.leader: int | None = None
        self.crash_at: float | None = None
        self.elected: float | None = None  # seconds from the crash

    def __call__(self, events: list[Event]) -> None:
        for e in events:
            if type(e) is AgreementEvent and e.leader is not None and self.crash_at is None:
                self.leader = e.leader
                # Uniformly within the heartbeat interval (T/2), after this instant.
                self.crash_at = round(e.t + 1e-6 + self.rng.uniform(0, T / 2), 6)
                self.engine.schedule([Scheduled(self.crash_at, Crash(e.leader), "bench")])
            elif (type(e) is StateEvent and self.crash_at is not None and e.t >= self.crash_at
                  and e.node != self.leader and e.status is LEADER):
                self.elected = round(e.t - self.crash_at, 6)
                self.cancel.cancel()


def trial(nodes: int, spread: float, delay: float, seed: int) -> float | None:
    """Seconds from the leader's crash to a new leader (None: none within LIMIT)."""
    config = ClusterConfig(timeout=T, coordinator_timeout=spread, probe_interval=0, delay_min=delay, delay_max=delay)
    engine = Engine(Raft, range(1, nodes + 1), config, seed, lookahead=False)
    engine.schedule([Scheduled(STAND_AT, Elect(1), "bench")])

    async def main() -> _Trial:
        with trio.CancelScope() as scope:
            watcher = _Trial(engine, scope, random.Random(seed))
            engine.subscribe(watcher)
            # The start-up: node 1's term, in a few delays; then the crash and LIMIT.
            await Cluster(engine).run(STAND_AT + 10 * delay + T + LIMIT)
        return watcher

    w = run_trio(main, clock=MockClock(autojump_threshold=0))
    if w.crash_at is None:
        raise SystemExit(f"seed {seed}: node 1's election at {STAND_AT:g} s did not make it everyone's leader")
    # (the run goes on a little past the crash + LIMIT: a leader elected in that slack is too late)
    return w.elected if w.elected is not None and w.elected <= LIMIT else None


def percentile(times: list[float], q: float) -> float:
    """The q-th fraction of the sorted times, nearest rank (inf: not elected)."""
    return times[max(0, math.ceil(q * len(times)) - 1)]


def shown(seconds: float) -> str:
    return f"> {LIMIT:g} s" if math.isinf(seconds) else f"{seconds * 1000:,.0f} ms"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=100, help="trials (seeds 1..N) for each spread")
    p.add_argument("--nodes", type=int, default=5)
    p.add_argument("--delay", type=float, default=0.001, help="every link's delay, seconds (default 0.001)")
    args = p.parse_args()
    print(f"N = {args.nodes}, T = {T * 1000:g} ms, links {args.delay * 1000:g} ms, heartbeats every "
          f"{T * 500:g} ms, {args.trials} trials each: from the leader's crash to a new leader")
    print("| election timeout | elected | median | 90th percentile | worst |")
    print("|---|---:|---:|---:|---:|")
    for spread in SPREADS:
        times = sorted(math.inf if t is None else t
                       for t in (trial(args.nodes, spread, args.delay, seed) for seed in range(1, args.trials + 1)))
        elected = sum(not math.isinf(t) for t in times)
        print(f"| {T * 1000:g}–{spread * 1000:g} ms | {elected:,} of {args.trials:,} | {shown(percentile(times, 0.5))} | "
              f"{shown(percentile(times, 0.9))} | {shown(times[-1])} |", flush=True)


if __name__ == "__main__":
    main()
