"""A cluster stepped by hand: N state machines on in-memory FIFO links, and nothing else.

In the spirit of h11's ConnectionPair and etcd raft's InteractionEnv: no trio, no clock,
no delays. The caller (a test, usually) says which link's head is delivered next and
which timer fires, so an interleaving is stated, not pinned by timing. Nodes are hosted
exactly as the trio cluster hosts them (host.py: FIFO links, drops at down nodes, timer
generations) and the trace is stamped and judged by the same code (trace.py, with the
monitor), so what holds here holds there.

    h = Harness("classic", 3)
    h.boot()
    h.deliver_all()          # every message in flight, link by link, until none is left
    h.crash(3); h.suspect(2)
    h.deliver(2, 3)          # 2's Election reaches 3, which is down: dropped
    h.fire(2, "answer_wait")
    ...

Time stands still unless the caller moves it (`at`): the trace's times are the caller's,
and moving time on ends the instant, so the monitor judges it. There is no SLE2 deadline:
liveness is the caller's to state.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol import ALGORITHMS, Config, Message, Node

from ..core.config import to_seconds, to_us
from ..core.events import Event, SendEvent
from ..core.host import NodeHost
from ..core.links import Links
from ..core.monitor import Monitor
from ..core.trace import Trace
from ..core.work import COMMAND, DELIVERY, TIMER, Boot, Crash, Fire, Recover, Suspect, Work


class Harness:
    def __init__(self, algorithm: type[Node] | str, nodes: int | Iterable[int] = 3, config: Config | None = None):
        self.algorithm = ALGORITHMS[algorithm] if isinstance(algorithm, str) else algorithm
        self.ids = tuple(range(1, nodes + 1)) if isinstance(nodes, int) else tuple(sorted(nodes))
        self.links = Links()
        self.hosts = {i: NodeHost(i, self.algorithm, self.ids, config or Config()) for i in self.ids}
        self.monitor = Monitor(self.ids, settle=lambda: None)
        self.trace = Trace(self.monitor)
        self.events: list[Event] = []  # the whole trace so far
        self.trace.subscribe(self.events.extend)
        self.now_us = 0
        self._msg_id = 0

    # --- time -------------------------------------------------------------------------------

    def at(self, t: float) -> Harness:
        """Move time on to t (never back); the instant left behind is over."""
        t_us = to_us(t)
        if t_us < self.now_us:
            raise ValueError(f"time runs forward: it is {to_seconds(self.now_us)}, not {t}")
        if t_us > self.now_us:
            self.trace.end_instant(to_seconds(self.now_us))
            self.now_us = t_us
        return self

    # --- what the caller does -------------------------------------------------------------------

    def boot(self, *nodes: int) -> list[Event]:
        """Start these nodes (all, if none named) as at t=0, lowest id first."""
        return [e for node in (nodes or self.ids) for e in self._run(node, COMMAND, Boot())]

    def crash(self, node: int) -> list[Event]:
        return self._run(node, COMMAND, Crash())

    def recover(self, node: int) -> list[Event]:
        return self._run(node, COMMAND, Recover())

    def suspect(self, node: int) -> list[Event]:
        """The node's failure detector fires (the `elect` command)."""
        return self._run(node, COMMAND, Suspect())

    def deliver(self, src: int, dst: int) -> list[Event]:
        """The message at the head of the link src->dst arrives."""
        return self._run(dst, DELIVERY, self.links.take_head(src, dst))

    def fire(self, node: int, name: str) -> list[Event]:
        """The node's running timer `name` fires now."""
        running = self.hosts[node].timers.get(name)
        if running is None:
            raise ValueError(f"node {node} has no timer {name!r} running (it has: {', '.join(self.timers(node)) or 'none'})")
        return self._run(node, TIMER, Fire(name, running[1]))

    def deliver_all(self, limit: int = 100_000) -> list[Event]:
        """Deliver until nothing is in flight, each round taking the head of every busy
        link in (src, dst) order. Timers do not fire. One interleaving of many: a test
        that cares about the order says it with `deliver`."""
        events: list[Event] = []
        while waiting := self.links.waiting():
            for src, dst in waiting:
                events += self.deliver(src, dst)
                limit -= 1
                if limit <= 0:
                    raise RuntimeError("messages keep coming: the nodes never fall quiet")
        return events

    # --- what the caller looks at -------------------------------------------------------------

    def in_flight(self) -> dict[tuple[int, int], list[Message]]:
        """(src, dst) -> the messages on that link, head first."""
        return {link: [msg for _, msg in queue] for link, queue in self.links.waiting().items()}

    def timers(self, node: int) -> list[str]:
        return sorted(self.hosts[node].timers)

    def state(self, node: int) -> tuple[str, int | None]:
        """(status, leader), as the node last reported them."""
        status, leader, _ = self.hosts[node].state
        return status, leader

    def leaders(self) -> dict[int, int | None]:
        """Each node's leader (None for a down node or one without a leader)."""
        return {i: host.state[1] for i, host in self.hosts.items()}

    def machine(self, node: int) -> Node | None:
        return self.hosts[node].machine

    # --- one step -------------------------------------------------------------------------

    def _run(self, node: int, rank: int, item: Work) -> list[Event]:
        host = self.hosts[node]
        host.run([(self.now_us, rank, 0, item)], window_end=0)  # no window: every timer waits for the caller
        events = host.records
        for e in events:
            if type(e) is SendEvent:  # no delays here: it arrives when the caller says
                e.id, e.arrives = self._msg_id, e.t
                self.links.send(e.src, e.dst, self._msg_id, e.msg, self.now_us)
                self._msg_id += 1
        self.trace.publish(events)
        return events
