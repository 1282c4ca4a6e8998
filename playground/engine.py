"""The engine: a run's virtual time, in one pure object (no trio, no clock).

It owns the nodes' hosts (host.py), the links (links.py), the delays (network.py), the
agenda of due work (agenda.py), the commands, the monitor and the numbering of the
trace. It says what is due next and hands out node work in windows; whoever drives it
runs each window's work on the hosts, then hands the window back (`finish`). Two
drivers do that: the trio cluster (cluster.py: a task per node, on trio's clock) and
`run_sync` below (the hosts called in turn). They give the same trace, event for event.

Rules:
  1. Order at one instant: every node boots at t=0 first; then the commands due, in
     the order given; then the node work due (deliveries before timers, work.py); then
     the monitor's end of the instant.
  2. A command given live runs at the current virtual time, but never at or before an
     instant that has already run: a live run and a re-run of its transcript (commands
     at their times) do the same thing.
  3. Merged order: the nodes' records of one window are merged by (time, node id, order
     within the node). Message ids, delays (one seeded RNG) and agenda places are
     handed out in that order, then the monitor's reports go in, then every event gets
     its `seq`. Nothing depends on which host ran first, so the same seed, settings and
     commands give the same trace.
  4. Windows. Nothing a node does at t reaches another node before t + min delay, so
     with `lookahead` every node runs all its work in [t, t + min delay) at once
     (SIMULATION-NOTES.md): fewer hand-offs. Without it (the live UI, where nothing
     may show before its time) a window is one instant. Both give the same trace.
     Windows also end at the next command, at the monitor's deadline and at `until`.
  5. An instant is over when nothing more can happen at it: the monitor judges it then.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter

from protocol import Node

from .agenda import Agenda, Entry
from .commands import ChangeDelay, ChangeTimeout, Command, Elect, Recover, Request, Scheduled, SetDelay, SetTimeout
from .commands import Crash as CrashCommand
from .config import ClusterConfig, to_seconds, to_us
from .events import CommandEvent, Event, SendEvent
from .host import Internals, NodeHost
from .links import Links
from .monitor import Monitor
from .network import Network
from .trace import Observer, Trace
from .work import COMMAND, Boot, Crash, Suspect
from .work import Recover as RecoverWork

_time = attrgetter("t")
_NODE_WORK = {CrashCommand: Crash(), Recover: RecoverWork(), Elect: Suspect()}


@dataclass(frozen=True, slots=True)
class Window:
    """Node work to run: each node's entries, all before `end` (microseconds)."""

    time: int
    end: int
    work: dict[int, list[Entry]]


class Engine:
    def __init__(self, algorithm: type[Node], ids: Iterable[int], config: ClusterConfig, seed: int,
                 *, lookahead: bool = True):
        self.algorithm = algorithm
        self.ids = tuple(sorted(ids))
        self.config = config
        self.seed = seed
        self.lookahead = lookahead
        self.links = Links()
        self.network = Network(seed, to_us(config.delay_min), to_us(config.delay_max))
        self.hosts = {i: NodeHost(i, algorithm, self.ids, config.protocol, self.links) for i in self.ids}
        self.agenda = Agenda()
        self.monitor = Monitor(self.ids, self.settle_time)
        self.trace = Trace(self.monitor)
        self.now_us = -1  # the latest instant at which anything ran (-1: not booted)
        self._commands: list[tuple[int, int, Request, str]] = []  # (time, order, request, source), sorted
        self._command_order = 0
        self._msg_id = 0

    # --- wiring -------------------------------------------------------------------------

    def subscribe(self, observer: Observer) -> None:
        """`observer(events)` is called with each batch of new events, in order."""
        self.trace.subscribe(observer)

    def settle_time(self) -> float:
        """SLE2's c: --settle, or as long as the algorithm says it needs."""
        c = self.config
        if c.settle is not None:
            return c.settle
        return self.algorithm.settle_time(len(self.ids), c.protocol, c.delay_max)

    def schedule(self, commands: Iterable[Scheduled]) -> None:
        """Commands to run at their virtual times; same-time commands keep their order."""
        for s in commands:
            self._insert(to_us(s.at), s.command, s.source)

    def submit(self, request: Request, source: str, clock_us: int) -> None:
        """A live command, asked for when the clock says `clock_us` (rule 2)."""
        due = self.due()
        at = clock_us if due is None else min(clock_us, due)
        self._insert(max(at, self.now_us + 1), request, source)

    def _insert(self, at: int, request: Request, source: str) -> None:
        if at <= self.now_us:
            raise ValueError(f"a command at {to_seconds(at)} s, but {to_seconds(self.now_us)} s has already run")
        self._command_order += 1
        bisect.insort(self._commands, (at, self._command_order, request, source), key=lambda c: c[:2])

    def internals(self, node: int) -> Internals:
        return self.hosts[node].internals()

    @property
    def now(self) -> float:
        return to_seconds(max(self.now_us, 0))

    # --- what is due, and running it ---------------------------------------------------------

    def due(self) -> int | None:
        """When anything is next due (microseconds), or None: work, or the monitor's
        deadline, which is due at the end of its instant."""
        if self.now_us < 0:
            return 0  # the boot
        due = self._work_due()
        deadline = self.monitor.deadline
        if deadline is not None and (due is None or deadline < due):
            due = deadline
        return due

    def _work_due(self) -> int | None:
        """When a command or node work is next due."""
        due = self.agenda.next_time()
        if self._commands and (due is None or self._commands[0][0] < due):
            due = self._commands[0][0]
        return due

    def step(self, until_us: int | None = None) -> Window | None:
        """Run what is due now (rule 1): a command or the monitor's check here, or hand
        back the node work to run, as a window to `finish` once the hosts have run it."""
        t = self.due()
        if t is None:
            return None
        booted = self.now_us >= 0
        self.now_us = t
        if not booted:
            return Window(0, 1, {i: [(0, COMMAND, 0, Boot())] for i in self.ids})
        if self._commands and self._commands[0][0] == t:
            _, _, request, source = self._commands.pop(0)
            window = self._command(request, source)
            if window is None:
                self._after_step()
            return window
        if self.agenda.next_time() == t:
            end = self._window_end(t, until_us)
            return Window(t, end, self.agenda.take(end))
        self._after_step()  # only the monitor's deadline was due
        return None

    def finish(self, window: Window) -> None:
        """The hosts have run `window`: merge, route and publish what they did (rule 3)."""
        hosts = [self.hosts[n] for n in sorted(window.work)]
        if len(hosts) == 1:
            events = hosts[0].records
        else:
            events = [e for host in hosts for e in host.records]
            events.sort(key=_time)  # stable, and the records are already in node order
        self.now_us = window.end - 1  # every instant of the window has run
        self._route(events, hosts)
        self.trace.publish(events)
        self._after_step()

    def _window_end(self, start: int, until_us: int | None) -> int:
        span = self.network.delay_min_us if self.lookahead else 0
        end = start + max(1, span)  # at least the instant `start` itself
        if self._commands:
            end = min(end, self._commands[0][0])
        deadline = self.monitor.deadline
        if deadline is not None and deadline > start:
            end = min(end, deadline)
        if until_us is not None:
            end = min(end, until_us + 1)
        return end

    def _command(self, request: Request, source: str) -> Window | None:
        command = self._resolve(request)
        if command is None:
            return None
        name, args = command.words()
        self.trace.publish([CommandEvent(0, to_seconds(self.now_us), name, args, source)])
        match command:
            case SetTimeout(seconds):
                self._reconfigure(self.config.with_timeout(seconds))
            case SetDelay(low, high):
                self._reconfigure(self.config.with_delay(low, high))
            case _:
                t = self.now_us
                return Window(t, t + 1, {command.node: [(t, COMMAND, 0, _NODE_WORK[type(command)])]})
        return None

    def _resolve(self, request: Request) -> Command | None:
        """A relative request as the absolute command it is now; None if it changes nothing."""
        c = self.config
        match request:
            case ChangeTimeout(by):
                timeout = c.timeout + by
                return SetTimeout(timeout) if timeout >= abs(by) else None
            case ChangeDelay(by):
                low = max(0.0, c.delay_min + by)
                high = max(low, c.delay_max + by)
                return SetDelay(low, high) if (low, high) != (c.delay_min, c.delay_max) else None
        return request

    def _reconfigure(self, config: ClusterConfig) -> None:
        """New settings: for timers set and messages sent from now on, and for the next
        quiet period's c (the monitor asks for it)."""
        self.config = config
        self.network.set_delay(to_us(config.delay_min), to_us(config.delay_max))
        for host in self.hosts.values():
            host.reconfigure(config.protocol)

    # --- one window's records into the trace ----------------------------------------------------

    def _route(self, events: list[Event], hosts: list[NodeHost]) -> None:
        """Hand out message ids and arrival times in merged order, and queue what is due later."""
        links, agenda, delay = self.links, self.agenda, self.network.delay
        msg_id = self._msg_id
        for e in events:
            if type(e) is SendEvent:
                e.id = msg_id
                arrives = links.push(e.src, e.dst, msg_id, e.msg, to_us(e.t) + delay())
                msg_id += 1
                e.arrives = to_seconds(arrives)
                agenda.deliver(arrives, e.dst, e.src)
        self._msg_id = msg_id
        for host in hosts:  # a node's timers in its own order; nodes' timers never meet
            for timer in host.pending:
                agenda.fire(timer.fires, timer.node, timer.item)

    def _after_step(self) -> None:
        """The instant just run is over if nothing more can happen at it (rule 5)."""
        due = self._work_due()
        if due is None or due > self.now_us:
            self.trace.end_instant(to_seconds(self.now_us))


def run_sync(engine: Engine, until: float) -> None:
    """Drive the engine without trio, each host called in turn, up to `until` (inclusive)."""
    until_us = to_us(until)
    while (due := engine.due()) is not None and due <= until_us:
        window = engine.step(until_us)
        if window is not None:
            for node, entries in window.work.items():
                engine.hosts[node].run(entries, window.end)
            engine.finish(window)
