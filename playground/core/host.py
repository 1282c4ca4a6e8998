"""One node as the simulation hosts it: the node's runner (runner.py: its state machine,
safe storage, timers, what it reports), which a real node drives too, run on virtual
time in the engine's windows. Pure: no trio, no clock. The trio cluster runs each host
in a task of its own, and the test harness (harness.py) steps hosts by hand; both get
the model's rules from here.

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
  9. A node's clock runs at its own `rate` (1 unless the run's clocks drift, --drift:
     faults.clock_rate), so each timer of d seconds it sets fires d / rate seconds later.
 10. A message the link lost (links.py's Lost) is noted where it would have arrived, as
     a drop with the link's reason: the node never sees it.

The host records trace events in the order things happened at this node, unstamped:
the engine numbers events and messages when it merges every node's records, so nothing
depends on which host ran first.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from protocol import Config, Node

from .config import Workload, to_seconds, to_us
from .events import UNSET, DropEvent, TimerSetEvent
from .runner import (
    DROPPED_RECEIVER_DOWN,
    DROPPED_RECEIVER_LEFT,
    HOLD,
    THINK,
    WORKLOAD_AFTER,
    WORKLOAD_INPUTS,
    Draws,
    HostStatus,
    NodeRunner,
    Roster,
    workload_span,
)
from .work import TIMER, Fire, Lost, Work

__all__ = ["DROPPED_RECEIVER_DOWN", "DROPPED_RECEIVER_LEFT", "HOLD", "THINK", "WORKLOAD_AFTER", "WORKLOAD_INPUTS",
           "HostStatus", "Internals", "NodeHost", "PendingTimer", "Roster", "workload_span"]


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
    rate: float = 1.0  # how fast its clock runs (rule 9: 1 unless clocks drift)


class NodeHost(NodeRunner):
    def __init__(self, node_id: int, algorithm: type[Node], roster: Roster | tuple[int, ...], config: Config,
                 workload: Workload | None = None, seed: int = 1, rate: float = 1.0):
        """`roster`: the engine's, or for a host on its own, the cluster's ids.
        `workload`: when a mutex runs, who wants the critical section when (rule 7).
        `rate`: how fast its clock runs (rule 9)."""
        super().__init__(node_id, algorithm, roster if isinstance(roster, Roster) else Roster.of(roster), config,
                         workload, Draws(f"{seed}/{node_id}", f"{seed}/{node_id}/timers"))  # (rules 7, 8)
        self.rate = rate  # rule 9
        self.pending: list[PendingTimer] = []  # set in this run, due after its window
        self._local_order = 0
        self._local: list[tuple] = []
        self._now = -1
        self._now_t = 0.0
        self._window_end = 0

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

    def internals(self) -> Internals:
        m = self.machine
        return Internals(m is not None, m.variables() if m is not None else {}, self.storage.as_dict(), self.rate)

    def _run(self, entry: tuple) -> None:
        now, _, _, item = entry
        if now != self._now:
            self._now, self._now_t = now, to_seconds(now)
        if type(item) is Lost:  # rule 10
            self.records.append(DropEvent(UNSET, self._now_t, item.msg_id, item.src, self.id, item.reason))
            return
        self.take(item, self._now_t)
        if self.requests:
            rate = self.rate
            for request in self.requests:  # (in the order set: rule 5's order among timers)
                fires = now + to_us(request.delay if rate == 1.0 else request.delay / rate)
                self.due(request, fires)
                request.event.fires = to_seconds(fires)
                fire = Fire(request.name, request.generation)
                if fires < self._window_end:  # rule 5
                    self._local_order += 1
                    heapq.heappush(self._local, (fires, TIMER, self._local_order, fire))
                else:
                    self.pending.append(PendingTimer(self.id, fires, fire, request.event))
            self.requests.clear()
