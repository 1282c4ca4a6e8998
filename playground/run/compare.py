"""`bully-tui --headless --compare`: one scenario, every algorithm, N = 4 to 64, one table.

The scenario is the one every election algorithm exists for: the cluster starts, agrees
on a leader, and then the leader crashes. Each algorithm notices with its own failure
detector (probes every P, Stoller's heartbeats, Garcia-Molina's Timeout procedure) and
elects again. Everything is read off the trace by one observer that knows no algorithm:

  detect     from the crash to the first election started
  agree      from the crash to the monitor's next agreement (every up node normal under
             the highest up node, judged at the end of an instant, as the monitor does)
  messages   sent from the crash to that agreement, by type: election traffic, and
             failure-detector traffic (by each message's declared role) apart
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass

import trio

from protocol import ALGORITHMS, MessageRole

from ..core.commands import Crash, Scheduled
from ..core.config import ClusterConfig
from ..core.engine import Engine
from ..core.events import AgreementEvent, ElectionStartEvent, Event, SendEvent
from .cluster import Cluster, MockClock
from .interrupt import run_trio
from .session import fewer_gc_passes

SIZES = (4, 8, 16, 32, 64)
FORMATS = ("markdown", "json")


@dataclass(frozen=True, slots=True)
class Result:
    algorithm: str
    nodes: int
    fault_at: float | None  # when the leader crashed (None: the start-up never agreed)
    detect: float | None  # seconds from the crash to the first election (None: none began)
    agree: float | None  # seconds from the crash to agreement (None: not within the limit)
    messages: dict[str, int]  # election traffic from the crash to agreement, by type
    detector_messages: dict[str, int]  # failure-detector traffic in the same span, by type

    def row(self) -> dict[str, object]:
        """The JSON row: everything but the crash's own time."""
        return {k: v for k, v in asdict(self).items() if k != "fault_at"}


class _Watcher:
    """Trace observer: crash the leader once all agree, then time detection and agreement."""

    def __init__(self, engine: Engine, cancel: trio.CancelScope):
        self.engine = engine
        self.cancel = cancel
        self.fault_at: float | None = None
        self.detect: float | None = None
        self.agree: float | None = None
        self.sent = {True: Counter(), False: Counter()}  # detector traffic? -> type -> count

    def __call__(self, events: list[Event]) -> None:
        for e in events:
            kind = type(e)
            if kind is SendEvent:
                if self.fault_at is not None:
                    self.sent[e.msg.role is MessageRole.DETECTOR][e.msg.type] += 1
            elif kind is ElectionStartEvent:
                if self.fault_at is not None and self.detect is None:
                    self.detect = _since(self.fault_at, e.t)
            elif kind is AgreementEvent and e.leader is not None:
                self._agreed(e.t, e.leader)

    def _agreed(self, t: float, leader: int) -> None:
        if self.fault_at is None:
            # Crash the leader at the next microsecond: the instant of agreement is over,
            # and nothing else can be due before then.
            self.fault_at = t + 1e-6
            self.engine.schedule([Scheduled(self.fault_at, Crash(leader), "compare")])
        else:
            self.agree = _since(self.fault_at, t)
            self.cancel.cancel()


def _since(fault_at: float, t: float) -> float:
    """Seconds from the crash, to the millisecond: the crash comes a microsecond after
    agreement, an artefact of scheduling it, not a result."""
    return round(t - fault_at, 3)


def run_one(algorithm: str, nodes: int, config: ClusterConfig, seed: int) -> Result:
    """The scenario for one algorithm and size, in virtual time."""
    # One instant per window (no lookahead): the crash is scheduled from inside a window.
    engine = Engine(ALGORITHMS[algorithm], range(1, nodes + 1), config, seed, lookahead=False)
    limit = 2 * engine.settle_time()  # the start-up, then the election after the crash

    async def main() -> _Watcher:
        with trio.CancelScope() as scope:
            watcher = _Watcher(engine, scope)
            engine.subscribe(watcher)
            await Cluster(engine).run(limit)
        return watcher

    with fewer_gc_passes():
        w = run_trio(main, clock=MockClock(autojump_threshold=0))
    return Result(algorithm, nodes, w.fault_at, w.detect, w.agree, dict(w.sent[False]), dict(w.sent[True]))


def compare(config: ClusterConfig, seed: int, sizes: tuple[int, ...] = SIZES,
            algorithms: tuple[str, ...] | None = None) -> list[Result]:
    return [run_one(name, n, config, seed) for n in sizes for name in (algorithms or ALGORITHMS)]


def _by_type(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count:,}" for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def table(results: list[Result], config: ClusterConfig) -> str:
    """A Markdown table, readable in a terminal and pasteable into the README."""
    rows = [
        (f"Leader crashes once all agree; T = {config.timeout:g} s, P = {config.probe_interval:g} s, "
         f"delay {config.delay_min:g}..{config.delay_max:g} s. From the crash: time to detect it, time to "
         f"agree again, and the messages sent until then (election, and failure detection apart)."),
        "",
        "| algorithm | N | detect | agree | election msgs | by type | detector msgs | by type |",
        "|---|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in results:
        if r.fault_at is None:
            rows.append(f"| {r.algorithm} | {r.nodes} | start-up never agreed | – | – | – | – | – |")
            continue
        detect = "–" if r.detect is None else f"{r.detect:.1f} s"
        agree = "not within the limit" if r.agree is None else f"{r.agree:.1f} s"
        rows.append(f"| {r.algorithm} | {r.nodes} | {detect} | {agree} | {sum(r.messages.values()):,} | "
                    f"{_by_type(r.messages)} | {sum(r.detector_messages.values()):,} | {_by_type(r.detector_messages)} |")
    return "\n".join(rows)


def json_lines(results: list[Result]) -> str:
    """One JSON object per row."""
    return "\n".join(json.dumps(r.row()) for r in results)
