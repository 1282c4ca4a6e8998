"""The engine stepped by hand: a test says when each message arrives and each timer fires.

In the spirit of h11's ConnectionPair and etcd raft's InteractionEnv. This is the real
Engine (core/engine.py) in its by-hand mode (engine rule 6): the same hosts, links,
commands, routing, trace and monitor as a headless run or the app, with no trio and no
clock. What the engine would leave to delays and timers, the test decides:

    h = Harness("classic", 3)
    h.boot()
    h.deliver_all()          # every message in flight, link by link, until none is left
    h.at(10)                 # time moves on: the instant left behind is over
    h.crash(3); h.elect(2)   # commands, through the engine's own command path
    h.deliver(2, 3)          # 2's Election reaches 3, which is down: dropped
    h.fire(2, "answer_wait")
    ...

Rules:
  1. Nothing happens by itself. A message waits in its link, in order, until the test
     delivers the link's head; a timer that is set waits until the test fires it (at
     any time, before or after it would be due: timing is the test's to state, as the
     order is). Every step returns the trace events it made.
  2. Time stands still until the test moves it (`at`). Everything the test does at one
     time happens at one instant, in the order the test says, and the instant is over
     when time moves on: only then does the monitor judge it (monitor rule 1).
  3. Moving time on runs what the engine has due on the way: the monitor's SLE2 checks
     (c after the last fault), each at its own instant.
  4. Commands (crash, recover, elect, join, leave, hold, release, partition, heal,
     timeout, delay) go through the engine's command path, as the app's keys do
     (`Engine.submit`), so they are resolved, recorded and run exactly as there. A
     released link delivers what waited on it at once, as in any run.
  5. With a mutex beside the election, the workload is a run's (host rule 7: the
     default Workload unless the test gives one): its timers, `cs_think` (the node
     asks for the critical section) and `cs_hold` (it leaves), are set as in a run
     and, like any timer, fire when the test says (`fire 2 cs_hold`); `want` asks at once.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol import CsState, Message, Node, Status, machine

from ..core.command_lines import parse_command
from ..core.commands import (
    Crash,
    Elect,
    Heal,
    HoldLink,
    Join,
    Leave,
    LiveCommand,
    Partition,
    Recover,
    ReleaseLink,
    SetDelay,
    SetTimeout,
)
from ..core.config import ClusterConfig, Workload, to_seconds, to_us
from ..core.engine import Engine, step_sync
from ..core.events import Event
from ..core.host import NodeHost
from ..core.work import Fire

DELIVER_ALL_LIMIT = 100_000  # deliveries before deliver_all gives up: the nodes never fall quiet


class Harness:
    def __init__(self, algorithm: type[Node] | str, nodes: int | Iterable[int] = 3,
                 config: ClusterConfig | None = None, seed: int = 1, workload: Workload | None = None):
        algorithm = machine(algorithm) if isinstance(algorithm, str) else algorithm
        ids = range(1, nodes + 1) if isinstance(nodes, int) else nodes
        if algorithm.mutex is not None:  # rule 5
            workload = workload or Workload()
        self.engine = Engine(algorithm, ids, config or ClusterConfig(), seed, lookahead=False, by_hand=True,
                             workload=workload)
        self.events: list[Event] = []  # the whole trace so far
        self.engine.subscribe(self.events.extend)
        self.now_us = 0

    @property
    def now(self) -> float:
        return to_seconds(self.now_us)

    @property
    def hosts(self) -> dict[int, NodeHost]:
        return self.engine.hosts

    # --- time (rules 2, 3) ------------------------------------------------------------------

    def boot(self) -> list[Event]:
        """Every node starts, at t=0 (engine rule 1)."""
        if self.engine.now_us >= 0:
            raise ValueError("the cluster has booted already")
        start = len(self.events)
        step_sync(self.engine, 0)
        self._run()  # the boot's other slices, if it is crowded
        return self.events[start:]

    def at(self, t: float) -> list[Event]:
        """Move time on to t (never back): the instant left behind is over, and the
        monitor's checks due on the way run, each at its instant."""
        t_us = to_us(t)
        if t_us < self.now_us:
            raise ValueError(f"time runs forward: it is {self.now:g} s, not {t:g} s")
        self._booted()
        start = len(self.events)
        if t_us > self.now_us:
            trace = self.engine.trace
            trace.end_instant(self.now)  # rule 2
            while (due := self.engine.due()) is not None and due < t_us:  # rule 3: only a deadline comes due by itself
                self.engine.step()
                trace.end_instant(to_seconds(due))
            self.now_us = t_us
        return self.events[start:]

    # --- what the network and the timers do (rule 1) -------------------------------------------

    def deliver(self, src: int, dst: int) -> list[Event]:
        """The message at the head of the link src->dst arrives now."""
        self._booted()
        self.engine.links.bring_forward(src, dst, self.now_us)  # rule 1
        return self._run()

    def deliver_all(self, leave: tuple[int, int] | None = None) -> list[Event]:
        """Deliver until nothing is in flight, each round taking the head of every busy
        link in (src, dst) order. Timers do not fire. One interleaving of many: a test
        that cares about the order says it with `deliver`. `leave`: a link (src, dst)
        whose messages stay in flight, such as a token that never rests (delivered, it
        would be passed on for ever)."""
        start, limit = len(self.events), DELIVER_ALL_LIMIT
        while busy := [link for link in self.in_flight() if link != leave]:
            for src, dst in busy:
                self.deliver(src, dst)
                limit -= 1
                if limit <= 0:
                    raise RuntimeError("messages keep coming: the nodes never fall quiet")
        return self.events[start:]

    def fire(self, node: int, name: str) -> list[Event]:
        """The node's running timer `name` fires now."""
        self._booted()
        running = self.hosts[node].timers.get(name)
        if running is None:
            raise ValueError(f"node {node} has no timer {name!r} running (it has: {', '.join(self.timers(node)) or 'none'})")
        self.engine.agenda.fire(self.now_us, node, Fire(name, running[1]))  # rule 1
        return self._run()

    # --- commands (rule 4) -------------------------------------------------------------------

    def command(self, request: LiveCommand | str) -> list[Event]:
        """A command now, as the engine takes it from the app: a Request, or its words
        as a scenario line has them (`crash 3`: nodes by rank)."""
        self._booted()
        if isinstance(request, str):
            request = parse_command(request.split(), self.engine.ids, self.engine.seed)
        self.engine.submit(request, "test", self.now_us)  # rule 4
        return self._run()

    def crash(self, node: int) -> list[Event]:
        return self.command(Crash(node))

    def recover(self, node: int) -> list[Event]:
        return self.command(Recover(node))

    def elect(self, node: int) -> list[Event]:
        """The node's failure detector fires: it starts an election."""
        return self.command(Elect(node))

    def join(self) -> list[Event]:
        """A new node joins, with the next id."""
        return self.command(Join())

    def leave(self, node: int) -> list[Event]:
        return self.command(Leave(node))

    def hold(self, src: int, dst: int) -> list[Event]:
        return self.command(HoldLink(src, dst))

    def release(self, src: int, dst: int) -> list[Event]:
        return self.command(ReleaseLink(src, dst))

    def partition(self, *group: int) -> list[Event]:
        return self.command(Partition(tuple(sorted(group))))

    def heal(self) -> list[Event]:
        return self.command(Heal())

    def timeout(self, seconds: float) -> list[Event]:
        """T for timers set from now on (and the monitor's c at the next fault)."""
        return self.command(SetTimeout(seconds))

    def delay(self, low: float, high: float) -> list[Event]:
        """The delay bounds: recorded, and the monitor's c follows them; the test is the
        network, so no message takes them."""
        return self.command(SetDelay(low, high))

    # --- what the test looks at -----------------------------------------------------------

    def in_flight(self) -> dict[tuple[int, int], list[Message]]:
        """(src, dst) -> the messages in flight on that link, head first (not those
        waiting at a held link's end)."""
        return {link: [msg for _, msg in queue] for link, queue in self.engine.links.in_flight().items()}

    def timers(self, node: int) -> list[str]:
        return sorted(self.hosts[node].timers)

    def due(self, node: int) -> dict[str, float]:
        """The node's running timers, and when each would fire in a run with a clock."""
        return {name: to_seconds(fires) for name, (fires, _) in sorted(self.hosts[node].timers.items())}

    def state(self, node: int) -> tuple[Status, int | None]:
        """(status, leader), as the node last reported them."""
        status, leader = self.hosts[node].state
        return status, leader

    def cs(self, node: int) -> CsState:
        """Where the node is with respect to the critical section, as last reported (rule 5)."""
        return self.hosts[node].cs

    def leaders(self) -> dict[int, int | None]:
        """Each node's leader (None for a down node or one without a leader)."""
        return {i: host.state[1] for i, host in self.hosts.items()}

    def machine(self, node: int) -> Node | None:
        return self.hosts[node].machine

    # --- running what the test made due ---------------------------------------------------------

    def _run(self) -> list[Event]:
        """Run everything due now (what the test just made due, and what that gives at
        once: a released link's messages), as the plain driver does; the instant stays open."""
        start = len(self.events)
        engine = self.engine
        while (due := engine.work_due()) is not None and due <= self.now_us:
            step_sync(engine, self.now_us)
        return self.events[start:]

    def _booted(self) -> None:
        if self.engine.now_us < 0:
            raise ValueError("boot the cluster first")
