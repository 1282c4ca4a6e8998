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
     (docs/benchmarks.md measures it): fewer hand-offs. Without it (the live UI, where nothing
     may show before its time) a window is one instant. Both give the same trace.
     Windows also end at the next command, at the monitor's deadline and at `until`,
     and once they hold WINDOW_ENTRIES items (a storm's: its window is run, published
     and freed in well under a second, and trio stops a run only between windows).
     An instant with more than a slice of work (a broadcast storm: a million messages
     can arrive at once) is its own window, run in slices in merged order (by node,
     then the node's own order), each published before the next runs. A work item can
     give a broadcast, N events, so a slice is SLICE_EVENTS / N items: memory holds
     about SLICE_EVENTS events at most, and the trace is the same.
  5. An instant is over when nothing more can happen at it: the monitor judges it then.
  6. By hand (`by_hand`, the test harness: run/harness.py): the test decides when each
     message arrives and each timer fires, and when an instant is over; the engine
     does all the rest as ever (commands, hosts, routing, the trace, the monitor). So
     a message waits in its link (network.ByHand: it is due at no time the run
     reaches) until the test brings it to the present (Links.bring_forward), a timer
     set is not queued until the test fires it, and a command may still run at the
     present instant, which is over only when the test moves time on.
  7. Faults (config.Faults, `lossy K L P`: faults.py). Each message sent is drawn lost
     with its link's probability, and, if not, duplicated with --duplicate's, in merged
     order (rule 3) from the run's own generator; the links then hand a lost one over as
     lost and a copy as a second arrival (links.py, rule 1). With --reorder the links
     are not FIFO. Each node's clock runs at its own rate (--drift: host rule 9). A run
     without faults draws nothing more than it ever did.
  8. The user as the network (`by-hand` to `by-clock`: by_hand.py). Only commands are
     due: nothing arrives and no timer fires by itself, and the user's deliver, drop,
     duplicate and fire commands say what happens, each at an instant of its own (rule
     2), judged by the monitor as ever. `by-clock` lets what fell due meanwhile arrive
     and fire at once, in the order it was due.
"""

from __future__ import annotations

import bisect
import copy
from collections.abc import Iterable, Iterator
from itertools import chain
from operator import attrgetter

from protocol import Node

from . import by_hand
from .agenda import SUPERSEDED, Agenda
from .commands import (
    ChangeDelay,
    ChangeTimeout,
    Command,
    DeliverMessage,
    DropMessage,
    DuplicateMessage,
    EnterByHand,
    FireTimer,
    Heal,
    HoldLink,
    Join,
    Leave,
    LeaveByHand,
    LiveCommand,
    LossyLink,
    Partition,
    ReleaseLink,
    Scheduled,
    SetDelay,
    SetTimeout,
    delay_refused,
)
from .config import DELAY, TIMEOUT, US, ClusterConfig, Workload, to_seconds, to_us
from .events import CommandEvent, Event, SendEvent
from .faults import FaultDraws, clock_rate, route_faulty
from .host import Internals, NodeHost, Roster
from .ids import next_id
from .links import Links
from .monitor import Monitor
from .network import ByHand, Network
from .settings import Settings
from .trace import Observer, Trace
from .windows import SLICE_EVENTS, WINDOW_ENTRIES, Window, gather, slices
from .work import COMMAND, DELIVERY, TIMER, Boot, Entry

_time = attrgetter("t")


class Engine:
    def __init__(self, algorithm: type[Node], ids: Iterable[int], config: ClusterConfig, seed: int,
                 *, lookahead: bool = True, by_hand: bool = False, workload: Workload | None = None):
        self.algorithm = algorithm
        self.workload = workload  # who wants the critical section when, if a mutex runs (host rule 7)
        # A mutex's traffic that never rests (a token) goes round for ever at one instant
        # without a link delay: no key takes the delay to 0 then (the parser refuses it).
        self._never_rests = delay_refused(algorithm, 0) is not None
        self.ids = tuple(sorted(ids))  # every node the cluster has had, those that left too
        self.config = config
        self.seed = seed
        self.lookahead = lookahead
        self.by_hand = by_hand  # rule 6
        self.hand = False  # rule 8: the user is the network
        self.refusals: list[tuple[float, Command, str]] = []  # (when, what, why): rule 8's commands that could not run
        self.links = Links(fifo=not config.faults.reorder)
        self.network = (ByHand if by_hand else Network)(seed, to_us(config.delay_min), to_us(config.delay_max))
        self.lossy: tuple[tuple[int, int, float], ...] = ()  # the links `lossy` made lossy (Settings.lossy)
        self._draws = FaultDraws(seed)  # rule 7
        self.roster = Roster.of(self.ids)  # shared with the hosts
        self.hosts = {i: self._host(i) for i in self.ids}
        self.agenda = Agenda()
        self.monitor = Monitor.for_algorithm(algorithm, self.ids, self.settle_time)
        self.trace = Trace(self.monitor)
        self.now_us = -1  # the latest instant at which anything ran (-1: not booted)
        self._commands: list[tuple[int, int, LiveCommand, str]] = []  # (time, order, request, source), sorted
        self._command_order = 0
        self._msg_id = 0
        self._crowd: Iterator[Window] | None = None  # the rest of a crowded instant, a slice at a time (rule 4)
        self._slice = max(16, SLICE_EVENTS // len(self.ids))  # work items per slice
        self._faulty = self.settings.draws  # whether a message sent may be lost or duplicated (rule 7)

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

    def replace_commands_until(self, until: float, commands: Iterable[Scheduled]) -> None:
        """The commands due up to `until` are these (what a history says ran), and not
        those this engine had then: a copy taken before a live command was given has not
        heard of it. Commands due later stay."""
        until_us = to_us(until)
        self._commands = [c for c in self._commands if c[0] > until_us]
        self.schedule(commands)

    def submit(self, request: LiveCommand, source: str, clock_us: int) -> None:
        """A live command, asked for when the clock says `clock_us` (rule 2)."""
        due = self.due()
        at = clock_us if due is None else min(clock_us, due)
        self._insert(max(at, self._first_open()), request, source)

    def _first_open(self) -> int:
        """The first instant a command may still run at (rule 2): the one after the latest
        that ran; by hand, that one too, for it is over only when the test says (rule 6)."""
        return self.now_us if self.by_hand else self.now_us + 1

    def _insert(self, at: int, request: LiveCommand, source: str) -> None:
        if at < self._first_open():
            raise ValueError(f"a command at {to_seconds(at)} s, but {to_seconds(self.now_us)} s has already run")
        self._command_order += 1
        bisect.insort(self._commands, (at, self._command_order, request, source), key=lambda c: c[:2])

    @property
    def members(self) -> tuple[int, ...]:
        """The nodes in the cluster now: every node it has had but those that left."""
        return tuple(sorted(self.roster.members))

    def _admit(self, node: int) -> None:
        """A host for a node that joins; it joins the roster."""
        self.ids = tuple(sorted((*self.ids, node)))
        self.roster.every.add(node)
        self.roster.members.add(node)
        self.hosts[node] = self._host(node)
        self._slice = max(16, SLICE_EVENTS // len(self.ids))

    def _host(self, node: int) -> NodeHost:
        return NodeHost(node, self.algorithm, self.roster, self.config.protocol, self.workload, self.seed,
                        clock_rate(self.seed, node, self.config.faults.drift))  # (rule 7)

    @property
    def settings(self) -> Settings:
        """T and the delays, the links held and those made lossy, as commands left them."""
        return Settings(self.config, frozenset(self.links.held), self.lossy)

    def internals(self, node: int) -> Internals:
        return self.hosts[node].internals()

    @property
    def between_instants(self) -> bool:
        """No instant is half run: the engine may be copied."""
        return self._crowd is None and self.trace.open is None

    def copy(self) -> Engine:
        """The run as it stands, to run on separately (looking back, a branch): every
        node, message in flight, timer, command, the delays' RNG, the monitor, the trace's
        numbering; but no observers. Only between instants, never mid-slice."""
        if self._crowd is not None:
            raise RuntimeError("an engine is copied between instants, not in the middle of one")
        observers, self.trace._observers = self.trace._observers, []
        try:
            return copy.deepcopy(self)
        finally:
            self.trace._observers = observers

    @property
    def now(self) -> float:
        return to_seconds(max(self.now_us, 0))

    # --- what is due, and running it ---------------------------------------------------------

    def due(self) -> int | None:
        """When anything is next due (microseconds), or None: work, or the monitor's
        deadline, which is due at the end of its instant."""
        if self.now_us < 0:
            return 0  # the boot
        due = self.work_due()
        deadline = self.monitor.deadline
        if deadline is not None and (due is None or deadline < due):
            due = deadline
        return due

    def work_due(self) -> int | None:
        """When a command or node work is next due (the monitor's deadline apart)."""
        if self._crowd is not None:
            return self.now_us
        if self.hand:  # rule 8: only commands
            return self._commands[0][0] if self._commands else None
        due = self.agenda.next_time()
        arrival = self.links.next_arrival()
        if arrival is not None and (due is None or arrival < due):
            due = arrival
        if self._commands and (due is None or self._commands[0][0] < due):
            due = self._commands[0][0]
        return due

    def step(self, until_us: int | None = None) -> Window | None:
        """Run what is due now (rule 1): a command or the monitor's check here, or hand
        back the node work to run, as a window to `finish` once the hosts have run it."""
        if self._crowd is not None:
            window = next(self._crowd, None)
            if window is not None:
                return window
            self._crowd = None
            if self.work_due() != self.now_us:  # the crowded instant is over
                self._after_step()
                return None
        t = self.due()
        if t is None:
            return None
        booted = self.now_us >= 0
        self.now_us = t
        if not booted:
            return self._crowded(0, ((i, [(0, COMMAND, 0, Boot())]) for i in self.ids))
        if self._commands and self._commands[0][0] == t:
            _, _, request, source = self._commands.pop(0)
            window = self._command(request, source)
            if window is None:
                self._after_step()
            return window
        if not self.hand and t in (self.agenda.next_time(), self.links.next_arrival()):
            return self._node_work(t, until_us)
        self._after_step()  # only the monitor's deadline was due
        return None

    def _node_work(self, start: int, until_us: int | None) -> Window:
        """The window of node work from `start` (rule 4): each node's entries, deliveries
        before timers at each instant; or the first slice of a crowded instant."""
        if self.links.arriving_at(start) > self._slice:
            timers: dict[int, list[Entry]] = {}
            superseded = (start, TIMER, 0, SUPERSEDED)  # (one for all: it only keeps the slices' cuts)
            for time, node, firing in self.agenda.take(start + 1, superseded=True):
                timers.setdefault(node, []).append(superseded if firing is SUPERSEDED else (time, TIMER, 0, firing))
            arrivals = self.links.take_instant(start)
            return self._crowded(start, (
                (node, chain(((start, DELIVERY, 0, d) for d in self.links.deliveries(start, node, arrivals.pop(node, ()))),
                             timers.get(node, ())))
                for node in sorted(arrivals.keys() | timers.keys())))
        return gather(self.links, self.agenda, start, self._window_end(start, until_us), WINDOW_ENTRIES)

    def _crowded(self, time: int, work: Iterable[tuple[int, Iterable[Entry]]]) -> Window:  # rule 4
        """Run one instant's work, given node by node, in slices; return the first."""
        self._crowd = slices(time, work, self._slice)
        return next(self._crowd)

    def finish(self, window: Window) -> None:
        """The hosts have run `window`: merge, route and publish what they did (rule 3)."""
        hosts = [self.hosts[n] for n in sorted(window.work)]
        if len(hosts) == 1:
            events = hosts[0].records
        else:
            events = [e for host in hosts for e in host.records]
            events.sort(key=_time)  # stable, and the records are already in node order
        self.now_us = window.end - 1  # every instant of the window has run (or is running, if sliced)
        self.trace.publish(self._route(events, hosts))
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

    def _command(self, request: LiveCommand, source: str) -> Window | None:
        command = self._resolve(request)
        if command is None:
            return None
        name, args = command.words()
        self.trace.publish([CommandEvent(0, to_seconds(self.now_us), name, args, source)])
        match command:
            case SetTimeout() | SetDelay() | HoldLink() | ReleaseLink() | Partition() | Heal() | LossyLink():
                held = frozenset(self.links.held)
                after = self.settings.after(name, args, self.ids)
                if after.config is not self.config:
                    self._reconfigure(after.config)
                for src, dst in sorted(held - after.held):
                    self.links.release(src, dst, self.now_us)
                for src, dst in sorted(after.held - held):
                    self.links.hold(src, dst)
                self.lossy = after.lossy
                self._faulty = after.draws
            case EnterByHand() | LeaveByHand():  # rule 8
                self.hand = type(command) is EnterByHand
                if not self.hand:
                    self.links.retime(self.now_us)
                    self.agenda.retime(self.now_us)
            case DeliverMessage() | DropMessage() | DuplicateMessage() | FireTimer():
                return by_hand.work(self, command)
            case _:
                if type(command) is Join:
                    self._admit(command.node)
                elif type(command) is Leave:
                    self.roster.members.discard(command.node)
                t = self.now_us
                return Window(t, t + 1, {command.node: [(t, COMMAND, 0, command)]})  # (the command is the node's work)
        return None

    def _resolve(self, request: LiveCommand) -> Command | None:
        """A relative request as the absolute command it is now; None if it changes nothing."""
        c = self.config
        match request:
            case ChangeTimeout(by):
                timeout = c.timeout + by
                return SetTimeout(timeout) if abs(by) <= timeout <= TIMEOUT.high else None
            case ChangeDelay(by):  # a step is taken whole or not at all, so that steps back undo it
                low, high = c.delay_min + by, c.delay_max + by
                if low < 0 or high > DELAY.high or (high == 0 and self._never_rests):
                    return None
                return SetDelay(low, high)
            case Join(node) if node in self.hosts or self.algorithm.fixed_members:
                return None
            case Join(None):
                return Join(next_id(self.ids, self.seed))
            case Leave(node) if node not in self.hosts or not self.hosts[node].up:
                return None  # only an up member can leave gracefully
            case DeliverMessage() | DropMessage() | DuplicateMessage() | FireTimer() if not by_hand.allowed(self, request):
                return None  # (said in `refusals`)
            case EnterByHand() if self.hand:
                return None
            case LeaveByHand() if not self.hand:
                return None
        return request

    def _reconfigure(self, config: ClusterConfig) -> None:
        """New settings: for timers set and messages sent from now on, and for the next
        quiet period's c (the monitor asks for it)."""
        self.config = config
        self.network.set_delay(to_us(config.delay_min), to_us(config.delay_max))
        for host in self.hosts.values():
            host.reconfigure(config.protocol)

    # --- one window's records into the trace ----------------------------------------------------

    def _route(self, events: list[Event], hosts: list[NodeHost]) -> list[Event]:
        """Hand out message ids and arrival times in merged order, and queue what is due
        later; the events to publish (with the links' duplicates, rule 7)."""
        send, delay = self.links.send, self.network.delay
        if self._faulty:  # rule 7
            events, self._msg_id = route_faulty(events, self._msg_id, self.links, delay, self._draws, self.config.faults,
                                                self.lossy)
        else:
            msg_id, t, sent = self._msg_id, None, 0
            for e in events:
                if type(e) is SendEvent:
                    if e.t != t:
                        t, sent = e.t, to_us(e.t)
                    e.id = msg_id
                    e.arrives = send(e.src, e.dst, msg_id, e.msg, sent + delay()) / US
                    msg_id += 1
            self._msg_id = msg_id
        agenda = self.agenda
        queue_timers = not self.by_hand  # by hand, a timer fires when the test says (rule 6)
        for host in hosts:  # a node's timers in its own order; nodes' timers never meet
            if queue_timers:
                for timer in host.pending:
                    agenda.fire(timer.fires, timer.node, timer.item)
            host.records, host.pending = [], []  # merged: a storm's events must not outlive it
        return events

    def _after_step(self) -> None:
        """The instant just run is over if nothing more can happen at it (rule 5); by
        hand, when the test moves time on (rule 6)."""
        if self.by_hand:
            return
        due = self.work_due()
        if due is None or due > self.now_us:
            self.trace.end_instant(to_seconds(self.now_us))


def run_sync(engine: Engine, until: float) -> None:
    """Drive the engine without trio, each host called in turn, up to `until` (inclusive)."""
    for _ in steps(engine, until):
        pass


def steps(engine: Engine, until: float) -> Iterator[None]:
    """run_sync a step at a time: it yields after each, so a caller can do other work
    between them (the app re-creates a replayed run in the background)."""
    until_us = to_us(until)
    while (due := engine.due()) is not None and due <= until_us:
        step_sync(engine, until_us)
        yield


def step_sync(engine: Engine, until_us: int | None = None) -> None:
    """One step, its window's work run on the hosts in turn (the plain driver's step)."""
    window = engine.step(until_us)
    if window is not None:
        for node, entries in window.work.items():
            engine.hosts[node].run(entries, window.end)
        engine.finish(window)
