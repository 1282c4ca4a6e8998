"""Running a cluster in tests: virtual time on trio's autojump MockClock, no real sleeps."""

from __future__ import annotations

import io
from dataclasses import replace

import trio
import trio.testing

from playground.core.command_lines import parse_at, parse_command
from playground.core.commands import Scheduled
from playground.core.config import ClusterConfig
from playground.core.engine import Engine, run_sync
from playground.core.events import Event
from playground.record.recorder import Recorder
from playground.record.transcript import Header
from playground.run.cluster import Cluster
from protocol import Send, StatusRole, machine

# The worst-case configuration of PROTOCOLS.md: constant delay 1, T = 4, no probing.
WORST_CASE = ClusterConfig(timeout=4, probe_interval=0, delay_min=1, delay_max=1)


def at(*lines: str, ids: tuple[int, ...] = tuple(range(1, 101))) -> list[Scheduled]:
    """Scheduled commands from 'TIME COMMAND ARGS' lines (ranks are ids here: ids 1..N)."""
    return [replace(s, source="test") for s in parse_at(list(lines), ids)]


def unchecked(*lines: str, ids: tuple[int, ...] = tuple(range(1, 101))) -> list[Scheduled]:
    """Commands as `at` lines say them, without the parser's refusal of those that can do
    nothing (a crash of a down node): what two keys pressed before the screen shows the
    first one's effect can hand the engine."""
    return [Scheduled(float(t), parse_command(words, ids), "test") for t, *words in (line.split() for line in lines)]


def make_engine(nodes: int, config: ClusterConfig = WORST_CASE, commands=(), seed: int = 1,
                algorithm: str = "classic", **options) -> tuple[Engine, list[Event]]:
    """An engine for nodes 1..N whose events are collected in the returned list."""
    engine = Engine(machine(algorithm), range(1, nodes + 1), config, seed, **options)
    events: list[Event] = []
    engine.subscribe(events.extend)
    engine.schedule(commands)
    return engine, events


def run(nodes: int, until: float, config: ClusterConfig = WORST_CASE, commands=(), **kw) -> tuple[Engine, list[Event]]:
    """Run the cluster to `until` with the plain driver (engine.run_sync): the trio cluster
    gives the same events (tests/test_runtime.py holds the two to it over random
    schedules of every algorithm), at about a quarter of the cost. What the tests of an
    algorithm's runs need; `run_on_trio` for what is trio's."""
    engine, events = make_engine(nodes, config, commands, **kw)
    run_sync(engine, until)
    return engine, events


def recorded(algorithm: str, engine: Engine, events: list[Event], config: ClusterConfig, workload=None) -> bytes:
    """A run's events as its transcript's bytes (a header of seed 1: what two runs compared
    by their bytes differ in is their events)."""
    out = io.BytesIO()
    Recorder(out, Header(algorithm, list(engine.ids), 1, config, workload=workload))(events)
    return out.getvalue()


def run_on_trio(nodes: int, until: float, config: ClusterConfig = WORST_CASE, commands=(),
                **kw) -> tuple[Engine, list[Event]]:
    """Run the trio cluster to `until` on an autojump clock."""
    engine, events = make_engine(nodes, config, commands, **kw)
    trio.run(Cluster(engine).run, until, clock=trio.testing.MockClock(autojump_threshold=0))
    return engine, events


def sends(events: list[Event], after: float = 0.0, before: float = float("inf")) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in events:
        if e.kind == "send" and after <= e.t < before:
            counts[e.msg.type] = counts.get(e.msg.type, 0) + 1
    return counts


def sent(outputs, msg_type=None) -> list[tuple[int, type]]:
    """(destination, message class) of a step's Send outputs, optionally of one class."""
    return [(o.dst, type(o.msg)) for o in outputs if isinstance(o, Send) and (msg_type is None or type(o.msg) is msg_type)]


def rules_of(outputs, msg_type=None) -> set[str | None]:
    """The rules a step's outputs carry (protocol/interface.py, "Rules, as data"): all of
    them, or only those of its Sends of one message class."""
    return {o.rule for o in outputs if msg_type is None or (isinstance(o, Send) and type(o.msg) is msg_type)}


def final_states(engine: Engine) -> dict[int, tuple[str, int | None, bool]]:
    """Each node's (status, leader, normal), as last reported."""
    return {i: (h.state[0], h.state[1], h.state[0].role is StatusRole.NORMAL) for i, h in engine.hosts.items()}


__all__ = ["WORST_CASE", "at", "final_states", "make_engine", "rules_of", "run", "sends", "sent"]
