"""One node as the runtime hosts it: its state machine, its safe storage, its timers and
whether it is up. Pure: no trio, no clock. The trio cluster runs each host in a task of
its own, and the test harness (harness.py) steps hosts by hand; both get the model's
rules from here.

Rules of the model, for one node (links.py has those of the links):
  1. A message arrives when the links hand it over, in their FIFO order; one that
     reaches the end of a held link is only noted (it waits there).
  2. A message that reaches a down node is dropped, with the reason "receiver down".
  3. A timer fires only if it is still the one set under its name (its generation): a
     timer set again, cancelled or lost in a crash never fires.
  4. Crash throws the machine and its timers away; safe storage survives, and recovery
     starts a new machine from it. Crashing a down node or recovering an up one does
     nothing.
  5. A node's work runs in (time, rank, order) order (work.py); a timer it sets that
     falls due before the window it is running ends runs in that window, after the
     work queued before the window at the same time and rank (as it would, had it gone
     through the engine's queue).
  6. A node starts, recovers and joins with the members as the roster has them now (the
     runtime's registry: one that was down when a Join or Leave went round would
     otherwise never hear of it). One that leaves tells the others (its machine's last
     outputs), then is down for good: its status is "left", messages to it are dropped
     ("receiver left"), and nothing starts it again.
  7. With a mutex beside the election, each change of the node's place with respect to
     the critical section is reported (released, wanted, held; a node that recovers is
     released again). The workload is the runtime's, not the protocol's: an up node
     asks for the CS a think time after it starts or leaves the CS, and leaves it a hold
     time after it enters, each drawn from the node's own generator (seeded by the
     run's seed and the node's id, so the draws do not depend on the order nodes run
     in). These are timers of the host's ("cs_think", "cs_hold"): traced like the
     protocol's, lost in a crash like them.
  8. A timer the machine sets with a range (SetTimer's `longest`: Raft's randomized
     election timeout) fires after a delay drawn uniformly in it, from a generator of
     the node's own for timers (seeded by the run's seed and the node's id, like rule
     7's), so the machine stays pure and the draws do not depend on the order nodes
     run in. The trace's timer_set records when it will fire.

The host records trace events in the order things happened at this node, unstamped:
the engine numbers events and messages when it merges every node's records, so nothing
depends on which host ran first.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass

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
    TimerFired,
    Want,
)
from protocol import Suspect as SuspectInput

from .config import Workload, to_seconds, to_us
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
from .work import TIMER, Boot, Crash, Deliver, Fire, Held, Join, Leave, Recover, Suspect, WantCs, Work

DROPPED_RECEIVER_DOWN = "receiver down"
DROPPED_RECEIVER_LEFT = "receiver left"
THINK, HOLD = "cs_think", "cs_hold"  # the workload's timers (rule 7): what each gives the machine
WORKLOAD_INPUTS = {THINK: Want(), HOLD: Exit()}
WORKLOAD_AFTER = {CsState.HELD: HOLD, CsState.RELEASED: THINK}  # the timer each reported state starts (rule 7)


def workload_span(workload: Workload | None, name: str) -> tuple[float, float] | None:
    """The range the workload's timer `name` is drawn from; None if it has none (no
    workload, or a think time of "none": only `want` asks). Real nodes (real/node.py) too."""
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


@dataclass(frozen=True, slots=True)
class PendingTimer:
    """A timer that falls due after the window: the engine queues its firing."""

    node: int
    fires: int  # microseconds
    item: Fire
    set_event: TimerSetEvent  # orders it: timers are queued in trace order


@dataclass(frozen=True, slots=True)
class Internals:
    """What the trace does not say about a node: its algorithm's own variables (empty
    while down: they were lost in the crash) and its safe storage."""

    up: bool
    variables: dict[str, object]
    storage: dict[str, object]


class NodeHost:
    def __init__(self, node_id: int, algorithm: type[Node], roster: Roster | tuple[int, ...], config: Config,
                 workload: Workload | None = None, seed: int = 1):
        """`roster`: the engine's, or for a host on its own, the cluster's ids.
        `workload`: when a mutex runs, who wants the critical section when (rule 7)."""
        self.id = node_id
        self.algorithm = algorithm
        self.roster = roster if isinstance(roster, Roster) else Roster.of(roster)
        self.config = config
        self.storage = algorithm.storage_class()  # survives crashes; the machine does not
        self.machine: Node | None = None
        self.timers: dict[str, tuple[int, int]] = {}  # name -> (fires at, generation)
        self.records: list[Event] = []
        self.pending: list[PendingTimer] = []  # set in this run, due after its window
        self.state: tuple[Status, int | None] = _DOWN  # (status, leader) as last reported
        self._generation = 0
        self._local_order = 0
        self._local: list[tuple] = []
        self._now = -1
        self._t = 0.0
        self._window_end = 0
        self.mutex = algorithm.mutex is not None
        self.cs: CsState = CsState.RELEASED  # as last reported (rule 7)
        self.workload = workload if self.mutex else None
        self._draws = random.Random(f"{seed}/{node_id}") if self.workload is not None else None
        self._seed = seed
        self._timer_draws: random.Random | None = None  # rule 8: made when first needed

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

    def run(self, items: list[tuple[int, int, int, Work]], window_end: int) -> None:
        """Run work entries (time, rank, order, item), sorted, all before window_end,
        with the timers this node sets and runs inside the window (rule 5). What it
        did is in `records`, and the timers due later are in `pending`."""
        self.records = []
        self.pending = []
        self._window_end = window_end
        local = self._local
        for entry in items:
            while local and local[0] < entry:
                self._run(heapq.heappop(local))
            self._run(entry)
        while local:
            self._run(heapq.heappop(local))

    def reconfigure(self, config: Config) -> None:
        """New knobs for timers set from now on."""
        self.config = config
        if self.machine is not None:
            self.machine.reconfigure(config)

    def internals(self) -> Internals:
        m = self.machine
        return Internals(m is not None, m.variables() if m is not None else {}, self.storage.as_dict())

    # --- one entry ------------------------------------------------------------------------

    def _run(self, entry: tuple) -> None:
        now, _, _, item = entry
        if now != self._now:
            self._now, self._t = now, to_seconds(now)
        try:
            self._handle(item)
        except Exception as e:  # a protocol bug: say where it happened
            e.add_note(f"{self.algorithm.name} node {self.id} at t={self._t:g}, handling {item!r}")
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
                # The epoch rides along, but a change of epoch alone is not reported: nodes
                # adopt epochs from nearly every message of an election, and a state event
                # for each would add half again to the trace.
                self._report((m.status, m.leader))
            if self.mutex and m.cs.state is not self.cs:  # rule 7
                self._cs_changed(m.cs.state)

    def _cs_changed(self, state: CsState) -> None:
        self.cs = state
        self.records.append(CsEvent(UNSET, self._t, self.id, state, self.machine.cs.stamp()))
        if state in WORKLOAD_AFTER:
            self._workload_timer(WORKLOAD_AFTER[state])

    def _workload_timer(self, name: str) -> None:
        """The next think or hold time of the workload, if there is one (rule 7)."""
        span = workload_span(self.workload, name)
        if span is not None:
            self._set_timer(name, self._now + to_us(self._draws.uniform(*span)))

    def _report(self, state: tuple[Status, int | None]) -> None:
        self.state = state
        status, leader = state
        self.records.append(StateEvent(UNSET, self._t, self.id, status, leader, status.role, self.storage.epoch))

    def _handle(self, item: Work) -> None:
        kind = type(item)
        record = self.records.append
        if kind is Deliver:  # rule 1
            if self.machine is None:  # rule 2
                why = DROPPED_RECEIVER_LEFT if self.left else DROPPED_RECEIVER_DOWN
                record(DropEvent(UNSET, self._t, item.msg_id, item.src, self.id, why))
                return
            record(DeliverEvent(UNSET, self._t, item.msg_id, item.src, self.id))
            self._apply(self.machine.step(Receive(item.src, item.msg)))
        elif kind is Held:  # rule 1
            record(HeldEvent(UNSET, self._t, item.msg_id, item.src, self.id))
        elif kind is Fire:
            running = self.timers.get(item.name)
            if running is not None and running[1] == item.generation:  # rule 3 (a crash cleared them all)
                del self.timers[item.name]
                record(TimerEvent(UNSET, self._t, self.id, item.name))
                given = WORKLOAD_INPUTS.get(item.name) if self.mutex else None  # rule 7
                self._apply(self.machine.step(TimerFired(item.name) if given is None else given))
        elif kind is Join:
            if self.machine is None and not self.left:  # rule 6
                self.machine = self._machine()
                record(JoinEvent(UNSET, self._t, self.id))
                self._apply(self.machine.step(Joining()))
                self._started()
        elif kind is Leave:
            if self.machine is not None:  # rule 6
                self._apply(self.machine.step(Leaving()))
                self.machine = None
                self.timers.clear()
                record(LeaveEvent(UNSET, self._t, self.id))
        elif kind is Boot or kind is Recover:
            if self.machine is None and not self.left:  # rule 4
                self.machine = self._machine()
                record((StartEvent if kind is Boot else RecoverEvent)(UNSET, self._t, self.id))
                self._apply(self.machine.step(Start()))
                self._started()
        elif kind is Crash:
            if self.machine is not None:  # rule 4
                self.machine = None
                self.timers.clear()
                record(CrashEvent(UNSET, self._t, self.id))
        elif kind is Suspect:
            if self.machine is not None:
                self._apply(self.machine.step(SuspectInput()))
        elif kind is WantCs:
            if self.machine is not None and self.mutex:
                self._apply(self.machine.step(Want()))
        else:
            raise TypeError(f"not work for a node: {item!r}")

    def _machine(self) -> Node:
        """A new machine, from safe storage and the members now (rule 6)."""
        return self.algorithm(self.id, tuple(sorted(self.roster.members)), self.config, self.storage)

    def _started(self) -> None:
        """The workload's first think time (rule 7), unless the report that the node is
        released again (it crashed wanting or holding the CS) sets it."""
        if self.mutex and self.cs is CsState.RELEASED:
            self._workload_timer(THINK)

    def _apply(self, outputs: list) -> None:
        record = self.records.append
        for out in outputs:
            kind = type(out)
            if kind is Send:
                if out.dst not in self.roster.every or out.dst == self.id:
                    raise ValueError(f"{self.algorithm.name} node {self.id} sent to unknown node {out.dst}")
                record(SendEvent(UNSET, self._t, self.id, out.dst, UNSET, out.msg, UNSET))
            elif kind is SetTimer:
                delay = out.delay if out.longest is None else self._timer_draw(out.delay, out.longest)  # rule 8
                self._set_timer(out.name, self._now + to_us(delay))
            elif kind is CancelTimer:
                if self.timers.pop(out.name, None) is not None:
                    record(TimerCancelEvent(UNSET, self._t, self.id, out.name))
            elif kind is ElectionStarted:
                record(ElectionStartEvent(UNSET, self._t, self.id))
            else:
                raise TypeError(f"{self.algorithm.name} node {self.id} returned {out!r}")

    def _timer_draw(self, low: float, high: float) -> float:
        if self._timer_draws is None:
            self._timer_draws = random.Random(f"{self._seed}/{self.id}/timers")
        return self._timer_draws.uniform(low, high)

    def _set_timer(self, name: str, fires: int) -> None:
        self._generation += 1
        self.timers[name] = (fires, self._generation)
        event = TimerSetEvent(UNSET, self._t, self.id, name, to_seconds(fires))
        self.records.append(event)
        item = Fire(name, self._generation)
        if fires < self._window_end:  # rule 5
            self._local_order += 1
            heapq.heappush(self._local, (fires, TIMER, self._local_order, item))
        else:
            self.pending.append(PendingTimer(self.id, fires, item, event))
