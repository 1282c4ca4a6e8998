"""One node's state machine, run: what the simulation's host (host.py, on virtual time)
and a real node (real/node.py, on trio's clock and sockets) both drive. Pure: no trio,
no clock; its driver says what time it is.

`take(item, t)` runs one input (work.py's items) at time `t` (seconds, the driver's:
virtual, or wall) and appends what happened to `records`, as the simulation's trace
events, unstamped (the engine or the merge numbers them), and the timers it set to
`requests`. The driver makes each request's timer fire as Fire(name, generation) after
its delay, and writes when into its TimerSetEvent (`fires`, on its own clock).

The node's rules (host.py lists them with the links' and the engine's):
  - A timer fires only if it is still the one set under its name (its generation): a
    timer set again, cancelled or lost in a crash never fires.
  - Crash throws the machine and its timers away; safe storage survives, and a start,
    recovery or join builds a new machine from it with the members the roster has now.
    One that leaves tells the others (its machine's last outputs), then is down for good
    ("left"): nothing starts it again.
  - After each input: the node's status and leader, if they changed, as a state event
    (with the epoch; a change of epoch alone only where `epoch_reported`: a real node's
    trace says it); with a mutex, its place with respect to the critical section.
    What the machine made (a send, a timer set or cancelled, an election begun, a change
    of state) carries the key of the machine's rule that made it (`rule`); what the
    runner makes itself (a crash's "down", the workload's timers) carries None.
  - The workload's timers (cs_think, cs_hold): a think after a start, a recovery or
    leaving the critical section, a hold once inside, drawn from `draws.workload`.
  - A timer set with a range (Raft's) fires after a delay drawn from `draws.timers`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from protocol import (
    CancelTimer,
    Config,
    CsState,
    ElectionStarted,
    Exit,
    Joining,
    Leaving,
    Node,
    Receive,
    Send,
    SetTimer,
    Start,
    Status,
    StatusRole,
    Suspect,
    TimerFired,
    Want,
)

from .commands import Crash, Elect, Join, Leave, Recover, WantCs
from .config import Workload
from .events import (
    UNSET,
    CrashEvent,
    CsEvent,
    DeliverEvent,
    DropEvent,
    ElectionStartEvent,
    Event,
    HeldEvent,
    JoinEvent,
    LeaveEvent,
    RecoverEvent,
    SendEvent,
    StartEvent,
    StateEvent,
    TimerCancelEvent,
    TimerEvent,
    TimerSetEvent,
)
from .work import Boot, Deliver, Fire, Held, Work

DROPPED_RECEIVER_DOWN = "receiver down"
DROPPED_RECEIVER_LEFT = "receiver left"
THINK, HOLD = "cs_think", "cs_hold"  # the workload's timers: what each gives the machine
WORKLOAD_INPUTS = {THINK: Want(), HOLD: Exit()}
WORKLOAD_AFTER = {CsState.HELD: HOLD, CsState.RELEASED: THINK}  # the timer each reported state starts


def workload_span(workload: Workload | None, name: str) -> tuple[float, float] | None:
    """The range the workload's timer `name` is drawn from; None if it has none (no
    workload, or a think time of "none": only `want` asks)."""
    if workload is None:
        return None
    return workload.think if name == THINK else workload.hold


class HostStatus(Status):
    """The statuses the runtime gives a node that has no machine."""

    DOWN = "down", StatusRole.DOWN  # crashed
    LEFT = "left", StatusRole.DOWN  # left the cluster for good


_DOWN = (HostStatus.DOWN, None)
_LEFT = (HostStatus.LEFT, None)


@dataclass(slots=True)
class Roster:
    """Who is in the cluster, as the runtime knows it, shared by the engine and every
    host: `every` node there has been (whom a node may send to), and the `members` now."""

    every: set[int]
    members: set[int]

    @classmethod
    def of(cls, ids: tuple[int, ...]) -> Roster:
        return cls(set(ids), set(ids))


@dataclass(slots=True)
class Draws:
    """Where a node's random draws come from: a generator for the workload's times and
    one for the timers set with a range, each made from its seed when first needed (a
    copy of a run copies no generator it never used). The same seed for both: one
    generator serves both (a real node's)."""

    workload_seed: str
    timer_seed: str
    _workload: random.Random | None = field(default=None, repr=False)
    _timers: random.Random | None = field(default=None, repr=False)

    @property
    def workload(self) -> random.Random:
        if self._workload is None:
            self._workload = random.Random(self.workload_seed)
        return self._workload

    @property
    def untouched(self) -> bool:
        """Whether no generator was made yet: nothing drawn, and what comes next is the seeds'."""
        return self._workload is None and self._timers is None

    @property
    def timers(self) -> random.Random:
        if self.timer_seed == self.workload_seed:
            return self.workload
        if self._timers is None:
            self._timers = random.Random(self.timer_seed)
        return self._timers


@dataclass(frozen=True, slots=True)
class TimerRequest:
    """A timer the runner set: the driver fires it `delay` seconds from now as
    Fire(name, generation), and writes when into `event.fires`."""

    name: str
    delay: float
    generation: int
    event: TimerSetEvent


class NodeRunner:
    def __init__(self, node_id: int, algorithm: type[Node], roster: Roster, config: Config,
                 workload: Workload | None, draws: Draws, storage=None, epoch_reported: bool = False):
        """`roster`: the engine's (shared), or a real node's own. `storage`: what a node
        that starts again had kept (None: a new one)."""
        self.id = node_id
        self.algorithm = algorithm
        self.roster = roster
        self.config = config
        self.storage = storage if storage is not None else algorithm.storage_class()  # survives crashes
        self.machine: Node | None = None
        # name -> (when it fires, on the driver's clock: None until the driver says; the
        # generation it was set as)
        self.timers: dict[str, tuple[float | None, int]] = {}
        self.records: list[Event] = []
        self.requests: list[TimerRequest] = []
        self.state: tuple[Status, int | None] = _DOWN  # (status, leader) as last reported
        self.epoch_reported = epoch_reported
        self._epoch = 0  # the epoch last reported (epoch_reported)
        self._generation = 0
        self._t = 0.0
        self.mutex = algorithm.mutex is not None
        # The place with respect to the critical section as last reported; None: not
        # known (a real node's process that starts again: it may have crashed inside).
        self.cs: CsState | None = CsState.RELEASED
        self.workload = workload if self.mutex else None
        self.draws = draws

    @property
    def left(self) -> bool:
        """Whether it has left for good (the engine takes it off the roster)."""
        return self.id not in self.roster.members

    @property
    def up(self) -> bool:
        return self.machine is not None

    @property
    def epoch(self) -> int:
        return self.storage.epoch

    def due(self, request: TimerRequest, fires: float) -> None:
        """The driver's word on when `request`'s timer fires (on its clock), kept in
        `timers` while it is the one running under its name. (The driver writes its
        TimerSetEvent's `fires` as its trace shows times.)"""
        if self.timers.get(request.name, (None, None))[1] == request.generation:
            self.timers[request.name] = (fires, request.generation)

    def reconfigure(self, config: Config) -> None:
        """New knobs for timers set from now on."""
        self.config = config
        if self.machine is not None:
            self.machine.reconfigure(config)

    def take(self, item: Work, t: float) -> None:
        """One input at time `t`: its events in `records`, its timers in `requests`."""
        self._t = t
        try:
            self._handle(item)
        except Exception as e:  # a protocol bug: say where it happened
            e.add_note(f"{self.algorithm.name} node {self.id} at t={t:g}, handling {item!r}")
            raise
        m = self.machine
        status, leader = self.state
        if m is None:
            if self.left:
                if status is not HostStatus.LEFT:
                    self._report(_LEFT)
            elif status is not HostStatus.DOWN:
                self._report(_DOWN)
        else:
            if m.status is not status or m.leader != leader:
                self._report((m.status, m.leader), m.state_rule)
            elif self.epoch_reported and self.storage.epoch != self._epoch:
                # A change of epoch alone is reported only where asked: nodes adopt epochs
                # from nearly every message of an election, and a state event for each
                # would add half again to the simulation's trace. (No rule made it: a
                # message's epoch did.)
                self._report((m.status, m.leader))
            if self.mutex and m.cs.state is not self.cs:
                self._cs_changed(m.cs.state)

    # --- one input ------------------------------------------------------------------------

    def _handle(self, item: Work) -> None:
        kind = type(item)
        record = self.records.append
        if kind is Deliver:
            if self.machine is None:  # (the simulation's: a real node that is down reads nothing)
                why = DROPPED_RECEIVER_LEFT if self.left else DROPPED_RECEIVER_DOWN
                record(DropEvent(UNSET, self._t, item.msg_id, item.src, self.id, why))
                return
            record(DeliverEvent(UNSET, self._t, item.msg_id, item.src, self.id))
            self._apply(self.machine.step(Receive(item.src, item.msg)))
        elif kind is Held:
            record(HeldEvent(UNSET, self._t, item.msg_id, item.src, self.id))
        elif kind is Fire:
            running = self.timers.get(item.name)
            if running is not None and running[1] == item.generation:  # (a crash cleared them all)
                del self.timers[item.name]
                record(TimerEvent(UNSET, self._t, self.id, item.name))
                given = WORKLOAD_INPUTS.get(item.name) if self.mutex else None
                self._apply(self.machine.step(TimerFired(item.name) if given is None else given))
        elif kind is Join:
            if self.machine is None and not self.left:
                self.machine = self._machine()
                record(JoinEvent(UNSET, self._t, self.id))
                self._apply(self.machine.step(Joining()))
                self._started()
        elif kind is Leave:
            if self.machine is not None:
                self._apply(self.machine.step(Leaving()))
                self.machine = None
                self.timers.clear()
                self.roster.members.discard(self.id)  # (the engine has already: a real node tells its own)
                record(LeaveEvent(UNSET, self._t, self.id))
        elif kind is Boot or kind is Recover:
            if self.machine is None and not self.left:
                self.machine = self._machine()
                record((StartEvent if kind is Boot else RecoverEvent)(UNSET, self._t, self.id))
                self._apply(self.machine.step(Start()))
                self._started()
        elif kind is Crash:
            if self.machine is not None:
                self.machine = None
                self.timers.clear()
                record(CrashEvent(UNSET, self._t, self.id))
        elif kind is Elect:  # (the node's failure detector fires: the elect command)
            if self.machine is not None:
                self._apply(self.machine.step(Suspect()))
        elif kind is WantCs:
            if self.machine is not None and self.mutex:
                self._apply(self.machine.step(Want()))
        else:
            raise TypeError(f"not work for a node: {item!r}")

    def _machine(self) -> Node:
        """A new machine, from safe storage and the members now."""
        return self.algorithm(self.id, tuple(sorted(self.roster.members)), self.config, self.storage)

    def _started(self) -> None:
        """The workload's first think time, unless the report that the node is released
        again (it crashed wanting or holding the CS, or nobody knows) sets it."""
        if self.mutex and self.cs is CsState.RELEASED:
            self._workload_timer(THINK)

    def _apply(self, outputs: list) -> None:
        record = self.records.append
        for out in outputs:
            kind = type(out)
            if kind is Send:
                if out.dst not in self.roster.every or out.dst == self.id:
                    raise ValueError(f"{self.algorithm.name} node {self.id} sent to unknown node {out.dst}")
                record(SendEvent(UNSET, self._t, self.id, out.dst, UNSET, out.msg, UNSET, out.rule))
            elif kind is SetTimer:
                delay = out.delay if out.longest is None else self.draws.timers.uniform(out.delay, out.longest)
                self._set_timer(out.name, delay, out.rule)
            elif kind is CancelTimer:
                if self.timers.pop(out.name, None) is not None:
                    record(TimerCancelEvent(UNSET, self._t, self.id, out.name, out.rule))
            elif kind is ElectionStarted:
                record(ElectionStartEvent(UNSET, self._t, self.id, out.rule))
            else:
                raise TypeError(f"{self.algorithm.name} node {self.id} returned {out!r}")

    # --- what it reports, and its timers ----------------------------------------------------

    def _report(self, state: tuple[Status, int | None], rule: str | None = None) -> None:
        """`rule`: the machine's rule that made the change (None: the runtime's)."""
        self.state = state
        self._epoch = self.storage.epoch
        status, leader = state
        self.records.append(StateEvent(UNSET, self._t, self.id, status, leader, status.role, self._epoch, rule))

    def _cs_changed(self, state: CsState) -> None:
        self.cs = state
        cs = self.machine.cs
        self.records.append(CsEvent(UNSET, self._t, self.id, state, cs.stamp(), cs.state_rule))
        if state in WORKLOAD_AFTER:
            self._workload_timer(WORKLOAD_AFTER[state])

    def _workload_timer(self, name: str) -> None:
        """The next think or hold time of the workload, if there is one."""
        span = workload_span(self.workload, name)
        if span is not None:
            self._set_timer(name, self.draws.workload.uniform(*span))

    def _set_timer(self, name: str, delay: float, rule: str | None = None) -> None:
        """`rule`: the machine's rule that set it (None: the workload's timers)."""
        self._generation += 1
        self.timers[name] = (None, self._generation)
        event = TimerSetEvent(UNSET, self._t, self.id, name, UNSET, rule)
        self.records.append(event)
        self.requests.append(TimerRequest(name, delay, self._generation, event))
