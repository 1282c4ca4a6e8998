"""Running a cluster in tests: virtual time on trio's autojump MockClock, no real sleeps."""

from __future__ import annotations

import trio
import trio.testing

from playground.cluster import Cluster
from playground.commands import Command, Scheduled, parse_line
from playground.config import ClusterConfig
from playground.events import Event
from protocol import ALGORITHMS, Send

# The worst-case configuration of PROTOCOLS.md: constant delay 1, T = 4, no probing.
WORST_CASE = ClusterConfig(timeout=4, probe_interval=0, delay_min=1, delay_max=1)


def at(*lines: str, ids: tuple[int, ...] = tuple(range(1, 101))) -> list[Scheduled]:
    """Scheduled commands from 'TIME COMMAND ARGS' lines."""
    return [parse_line(line, ids, "test", line) for line in lines]


def make_cluster(nodes: int, config: ClusterConfig = WORST_CASE, commands=(), seed: int = 1,
                 algorithm: str = "classic", **options) -> tuple[Cluster, list[Event]]:
    """A cluster of nodes 1..N whose events are collected in the returned list."""
    cluster = Cluster(ALGORITHMS[algorithm], range(1, nodes + 1), config, seed, **options)
    events: list[Event] = []
    cluster.subscribe(events.extend)
    cluster.schedule(commands)
    return cluster, events


def run(nodes: int, until: float, config: ClusterConfig = WORST_CASE, commands=(), **kw) -> tuple[Cluster, list[Event]]:
    cluster, events = make_cluster(nodes, config, commands, **kw)
    trio.run(cluster.run, until, clock=trio.testing.MockClock(autojump_threshold=0))
    return cluster, events


def sends(events: list[Event], after: float = 0.0) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in events:
        if e.kind == "send" and e.t >= after:
            counts[e.msg.type] = counts.get(e.msg.type, 0) + 1
    return counts


def sent(outputs, msg_type=None) -> list[tuple[int, type]]:
    """(destination, message class) of a step's Send outputs, optionally of one class."""
    return [(o.dst, type(o.msg)) for o in outputs if isinstance(o, Send) and (msg_type is None or type(o.msg) is msg_type)]


def final_states(cluster: Cluster) -> dict[int, tuple[str, int | None, bool]]:
    return {i: r.state for i, r in cluster.runners.items()}


__all__ = ["WORST_CASE", "Command", "at", "final_states", "make_cluster", "run", "sends", "sent"]
