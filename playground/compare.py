"""`bully-tui --headless --compare`: one scenario, every algorithm, N = 4 to 64, one table.

The scenario is the one every election algorithm exists for: the cluster starts, agrees
on a leader, and then the leader crashes. Each algorithm notices with its own failure
detector (probes every P, Stoller's heartbeats) and elects again. The table gives the
messages sent from the crash until every up node is normal under the new highest node,
by type, and that time. Both are measured on the trace, by the same observer for every
algorithm: it knows nothing of any of them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import trio
import trio.testing

from protocol import ALGORITHMS

from .cluster import Cluster
from .commands import Command, Scheduled
from .config import ClusterConfig
from .events import CrashEvent, Event, RecoverEvent, SendEvent, StartEvent, StateEvent
from .session import fewer_gc_passes

SIZES = (4, 8, 16, 32, 64)


@dataclass(frozen=True, slots=True)
class Result:
    algorithm: str
    nodes: int
    fault_at: float | None  # when the leader crashed (None: the start-up never agreed)
    agreed_after: float | None  # seconds from the crash to agreement (None: not in time)
    messages: dict[str, int]  # sent from the crash to agreement, by type

    @property
    def total(self) -> int:
        return sum(self.messages.values())


class _Watcher:
    """Trace observer: crash the leader once all agree, then time the agreement again."""

    def __init__(self, cluster: Cluster, cancel: trio.CancelScope):
        self.cluster = cluster
        self.cancel = cancel
        self.up: set[int] = set()
        self.follows: dict[int, int | None] = {}  # up node -> its leader while normal
        self.fault_at: float | None = None
        self.agreed_after: float | None = None
        self.sent: Counter[str] = Counter()

    def __call__(self, events: list[Event]) -> None:
        for e in events:
            kind = type(e)
            if kind is SendEvent:
                if self.fault_at is not None:
                    self.sent[e.msg.type] += 1
                continue
            if kind is StateEvent:
                self.follows[e.node] = e.leader if e.normal else None
            elif kind is StartEvent or kind is RecoverEvent:
                self.up.add(e.node)
            elif kind is CrashEvent:
                self.up.discard(e.node)
                self.follows.pop(e.node, None)
            else:
                continue
            if self.up and all(self.follows.get(i) == max(self.up) for i in self.up):
                self._agreed(e.t)

    def _agreed(self, t: float) -> None:
        if self.fault_at is None:
            # Crash the leader just after the moment of agreement (at the next instant
            # the dispatcher has not yet run), so the run stays one deterministic trace.
            self.fault_at = t + 1e-6
            leader = max(self.up)
            self.cluster.schedule([Scheduled(self.fault_at, Command("crash", (leader,)), "compare")])
        elif self.agreed_after is None and t >= self.fault_at:
            self.agreed_after = round(t - self.fault_at, 6)
            self.cancel.cancel()


def run_one(algorithm: str, nodes: int, config: ClusterConfig, seed: int) -> Result:
    """The scenario for one algorithm and size, in virtual time."""
    limit = 2 * config.settle_time(nodes)  # start-up, then the election after the crash

    async def main() -> _Watcher:
        # One instant per batch (no lookahead): the crash is scheduled from inside a
        # batch, and must come after everything that batch ran.
        cluster = Cluster(ALGORITHMS[algorithm], range(1, nodes + 1), config, seed, lookahead=False)
        with trio.CancelScope() as scope:
            watcher = _Watcher(cluster, scope)
            cluster.subscribe(watcher)
            await cluster.run(limit)
        return watcher

    with fewer_gc_passes():
        w = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return Result(algorithm, nodes, w.fault_at, w.agreed_after, dict(w.sent))


def compare(config: ClusterConfig, seed: int, sizes: tuple[int, ...] = SIZES) -> list[Result]:
    return [run_one(name, n, config, seed) for n in sizes for name in ALGORITHMS]


def table(results: list[Result], config: ClusterConfig) -> str:
    """A Markdown table, readable in a terminal and pasteable into the README."""
    rows = [
        (f"Leader crashes once all agree; T = {config.timeout:g} s, P = {config.probe_interval:g} s, "
         f"delay {config.delay_min:g}..{config.delay_max:g} s. Messages from the crash to agreement."),
        "",
        "| algorithm | N | fault → agreement | messages | by type |",
        "|---|---:|---:|---:|---|",
    ]
    for r in results:
        if r.fault_at is None:
            time, total, by_type = "start-up never agreed", "–", "–"
        else:
            time = "not within the limit" if r.agreed_after is None else f"{r.agreed_after:.1f} s"
            total = f"{r.total:,}"
            by_type = ", ".join(f"{name} {count:,}" for name, count in sorted(r.messages.items(), key=lambda kv: -kv[1]))
        rows.append(f"| {r.algorithm} | {r.nodes} | {time} | {total} | {by_type} |")
    return "\n".join(rows)
