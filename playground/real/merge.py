"""A real run's traces merged into one transcript that the monitor, `replay` and `export`
read (the node processes' traces, node.py, the simulation's events each node's runner
made, read and checked by traces.py; the cluster's own log, cluster.py).

Merging. Every node's trace (its wall times, Lamport clocks and events) and the
cluster's log become one list of trace events in wall-time order, the earliest at t = 0:
messages are matched by (sender, number) across traces (a delivery is never put before
its send, whatever the clocks of two machines say) and numbered as the simulation's
are, a message lost with a killed process stays in flight (sent, never delivered), the
crashes (the cluster's log, or a boot that tells of one) are added, and the monitor
reads the result as it reads a simulated run, so its verdicts are of the same kind. The header says the run was real: nothing
re-creates it, so verify and time travel's re-runs refuse it.

Live. A view that merges every half second (the live app, attach) keeps one Merge: the
trace files are read from where the last read ended (TraceFile), and what is older than
SETTLED_AFTER is played once and kept, so a call costs what is new, not the whole run
(64 nodes after two minutes: 10-20 ms a call, against 176 ms and growing when each call
merged everything). Its result is always the merge of everything at once: the tests
compare the two at every step.
"""

from __future__ import annotations

import copy
import math
from collections import ChainMap

from protocol import machine

from ..core.config import ClusterConfig, InputError, to_us
from ..core.events import (
    UNSET,
    CommandEvent,
    CrashEvent,
    CsEvent,
    DeliverEvent,
    DropEvent,
    DuplicateEvent,
    ElectionStartEvent,
    Event,
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
from ..core.host import HostStatus
from ..core.monitor import Monitor
from .traces import STARTS, STOP, Line, stranger

# At one wall time: a command before what it caused, a crash before a start; then each
# node's lines in the order it wrote them.
ORDER = {"command": 0, "crash": 1, **dict.fromkeys(STARTS, 2)}


SETTLED_AFTER = 2.0  # seconds: lines this much older than the newest read are taken as complete (Merge)


def merge(algorithm: str, ids: tuple[int, ...], config: ClusterConfig, log: list[tuple[float, str, tuple]],
          traces: dict[int, list[Line]], sources: dict[int, str] | None = None) -> list[Event]:
    """The nodes' traces (their checked lines, read_trace) and the cluster's log as one
    run's trace events, the monitor's included: a run that has ended, all at once."""
    return Merge(algorithm, ids, config, sources).events(ids, log, traces, final=True)


class Merge:
    """The merge of a run, kept from one call to the next so that a live view's call costs
    what is new, not the whole run again. Lines more than SETTLED_AFTER seconds older
    than the newest line read are settled: played once into the monitor and kept, with
    their events; the newer ones are played again at each call, on a copy. The result is
    always the merge of everything at once: a line that comes late and belongs before
    what is settled (a machine's clock far behind the others', a node killed without a
    word that boots again, a member that joins) makes it start again from the top."""

    def __init__(self, algorithm: str, ids: tuple[int, ...], config: ClusterConfig,
                 sources: dict[int, str] | None = None):
        """`sources`: where each node's trace comes from, to name in an error (its file)."""
        cls = machine(algorithm)
        self.algorithm, self.config, self.cls = algorithm, config, cls
        self.sources = sources or {}
        self.generation = 0  # counts the starts from the top (what a caller built on the events is stale)
        self._start(ids)

    @property
    def settled(self) -> int:
        """How many of the events are settled: they stay as they are (the played ones)."""
        return len(self.play.out)

    @property
    def origin(self) -> float | None:
        """The wall time of t = 0 (the first line's), once there is a line."""
        return self.play.t0 if self.play.t0 is not None else self._first

    def source(self, node: int) -> str:
        return self.sources.get(node, f"node {node}'s trace")

    def _start(self, ids: tuple[int, ...]) -> None:
        self.generation += 1
        self.ids = ids
        self.horizon = -math.inf  # every line before this time is settled, and none after it
        self.taken = dict.fromkeys(ids, 0)  # each node's lines settled
        self.log_taken = 0
        self.latest: dict[int, float] = {}  # each node's last settled time (its own lines never go back)
        self.sent_at: dict[tuple[int, int], float] = {}  # the settled sends' times, by message
        self.orphans: set[tuple[int, int]] = set()  # settled deliveries whose send was not read yet
        self.last_settled: dict[int, Line] = {}  # each node's last line settled, as read
        self.lives = _Lives()
        self.play = _Play(self, ids)
        self._first: float | None = None  # the first line's time while none is settled

    def events(self, ids: tuple[int, ...], log: list[tuple[float, str, tuple]], traces: dict[int, list[Line]],
               final: bool = False) -> list[Event]:
        """Everything so far, as trace events: `ids`, the members (joins add to them); the
        cluster's `log` and each node's lines, which only grow; with `final`, they are all
        there will be."""
        if ids != self.ids or len(log) < self.log_taken or not self._same_lines(traces):
            self._start(ids)  # (new members, or a trace that is not the one read before)
        pending, booted_again = self._pending(log, traces)
        if pending and (pending[0].t < self.horizon or any(r.message in self.orphans for r in pending
                                                           if r.kind == "send")):
            self._start(self.ids)  # (late, before what was settled: once more from the top)
            pending, booted_again = self._pending(log, traces)
        if not pending:
            return self.play.out
        horizon = math.inf if final else max(self.horizon, pending[-1].t - SETTLED_AFTER)
        for crash_t, boot_t in booted_again:  # (a crash nobody logged settles with the boot that tells of it)
            if boot_t >= horizon:
                horizon = min(horizon, crash_t)
        cut = next((i for i, r in enumerate(pending) if r.t >= horizon), len(pending))
        arrived = {r.message: r.t for r in pending if r.kind in ("deliver", "drop")}
        self._settle(pending[:cut], arrived)
        self.last_settled = {node: traces[node][taken - 1] for node, taken in self.taken.items() if taken}
        self.horizon = horizon
        if cut == len(pending):
            self.play.finish(pending[-1].t)
            return self.play.out
        self._first = pending[0].t if self.play.t0 is None else None
        tail = self.play.fork()
        for r in pending[cut:]:
            tail.take(r, arrived)
        tail.finish(pending[-1].t)
        return self.play.out + tail.out

    def _same_lines(self, traces: dict[int, list[Line]]) -> bool:
        """Whether each node's lines still begin with those settled (a node watched again
        after it started afresh elsewhere sends another trace)."""
        return all(len(traces.get(node, ())) >= taken and traces[node][taken - 1] == self.last_settled[node]
                   for node, taken in self.taken.items() if taken)

    def _pending(self, log, traces) -> tuple[list[Line], list[tuple[float, float]]]:
        """The lines not settled yet, in the merge's order, their times made consistent
        with causality; and the crashes nobody logged among them, (its time, the boot's)."""
        per_node = {node: [_copy(r, i) for i, r in enumerate(traces.get(node, [])[self.taken[node]:], self.taken[node])]
                    for node in self.ids}  # (times move: copies)
        for node, lines in per_node.items():  # (a node watched from afar, or a trace edited by hand, may name any)
            for r in lines:
                if why := (f"a line of node {r.node}" if r.node != node else stranger(r, self.ids)):
                    raise InputError(f"{self.source(node)}, its line {r.i + 1}: {why}")
        _causal_times(per_node, self.sent_at, self.latest)
        records = [r for lines in per_node.values() for r in lines]
        for at, (t, name, args) in enumerate(log[self.log_taken:], self.log_taken):
            if name != "start":
                records.append(Line(t, None, "command", log=at, command=(name, tuple(args))))
            if name == "crash":
                records.append(Line(t, args[0], "crash", log=at))
        records.sort(key=_order)
        lives, booted_again = self.lives.copy(), []
        for r in [r for r in records if r.node is not None]:
            crash = lives.step(r)
            if crash is not None:
                records.append(crash)
                booted_again.append((crash.t, r.t))
        if booted_again:
            records.sort(key=_order)
        sends = self.play.sends
        for r in records:  # a settled send's message lands now (its arrow ends at its last landing: a drop
            if r.kind in ("deliver", "drop") and r.message in sends:  # can follow a delivery the sender missed)
                sends[r.message].arrives = max(sends[r.message].arrives, self.play.at(r.t))
        return records, booted_again

    def _settle(self, records: list[Line], arrived: dict[tuple[int, int], float]) -> None:
        """Play `records`, the earliest pending ones, for good."""
        for r in records:
            if r.node is not None and not r.unsaid:
                self.lives.step(r)
            if r.i >= 0:
                self.taken[r.node] += 1
                self.latest[r.node] = r.t
            elif r.log >= 0:
                self.log_taken = r.log + 1
            if r.kind == "send":
                self.sent_at[r.message] = r.t
            elif r.kind == "deliver" and r.message not in self.play.numbers:
                self.orphans.add(r.message)
            self.play.take(r, arrived)


def _copy(line: Line, i: int) -> Line:
    """A node's line to merge (its time may move), numbered among its node's lines. (Made
    anew: copy.copy takes ten times as long, and a live view copies every line not settled.)"""
    return Line(line.t, line.node, line.kind, line.event, line.lamport, i)


def _order(r: Line) -> tuple:
    """The merge's order: time; at one time, a command before what it caused, a crash
    before a start; then each node's lines in the order it wrote them."""
    return r.t, ORDER.get(r.kind, 3), r.node or 0, max(r.i, 0)


class _Play:
    """The merged records played into trace events and the monitor, in order."""

    def __init__(self, merge: Merge, ids: tuple[int, ...]):
        cls, config = merge.cls, merge.config
        self.merge = merge
        self.monitor = Monitor.for_algorithm(cls, ids, lambda: cls.settle_time(len(ids), config.protocol,
                                                                               config.delay_max + 0.05))
        self.out: list[Event] = []
        self.numbers: dict[str, int] = {}  # a message's id in its sender's trace -> its id in the run (as sent)
        self.count = 0  # messages numbered
        self.sends: dict[str, SendEvent] = {}  # each message's send, by its id in its sender's trace
        self.booted: set[int] = set()
        self.down = set(ids)
        self.epochs: dict[int, int] = {}  # each node's epoch at its last state (a crash's state keeps it)
        self.now: float | None = None
        self.t0: float | None = None  # the first line's time: t = 0

    def fork(self) -> _Play:
        """A copy to play what is not settled on: the settled events and numbers are shared."""
        twin = copy.copy(self)
        twin.monitor = copy.deepcopy(self.monitor)
        twin.out, twin.numbers, twin.sends = [], ChainMap({}, self.numbers), {}
        twin.booted, twin.down, twin.epochs = set(self.booted), set(self.down), dict(self.epochs)
        twin.seq = len(self.out)
        return twin

    seq = 0  # the first event's number (a fork's: after the settled ones)

    def at(self, t: float) -> float:
        return round(t - self.t0, 6)

    def _until(self, t: float) -> None:
        """The instant open is over, and so is every moment the monitor had to look at
        before t (core/trace.py's order: the instant's verdicts, then the deadlines)."""
        if self.now is not None and self.now != t:
            self._extend(self.monitor.close(self.now))
            while self.monitor.deadline is not None and self.monitor.deadline < to_us(t):
                self._extend(self.monitor.close(self.monitor.deadline / 1e6))

    def _extend(self, events: list[Event]) -> None:
        for e in events:
            e.seq = self.seq + len(self.out)
            self.out.append(e)

    def _emit(self, e: Event) -> None:
        self._until(e.t)
        self.now = e.t
        self._extend([e])
        self.monitor.observe(e)

    def finish(self, last: float) -> None:
        """The run lasted until its last line (a stop's too): what was due by then is judged."""
        if self.now is not None:
            self._until(self.at(last) + 1e-6)

    def take(self, r: Line, arrived: dict[tuple[int, int], float]) -> None:
        if self.t0 is None:
            self.t0 = r.t
        t, kind, node, e = self.at(r.t), r.kind, r.node, r.event
        if kind in STARTS:  # (a node started afresh a second time starts again: a recovery)
            first = node not in self.booted and kind != RecoverEvent.kind
            self._emit((JoinEvent if kind == JoinEvent.kind else StartEvent)(UNSET, t, node) if first
                       else RecoverEvent(UNSET, t, node))
            self.booted.add(node)
            self.down.discard(node)
        elif kind == "crash" and node not in self.down:
            self._emit(CrashEvent(UNSET, t, node))
            self._emit(StateEvent(UNSET, t, node, HostStatus.DOWN, None, HostStatus.DOWN.role, self.epochs.get(node, 0)))
            self.down.add(node)
        elif kind == "command":
            self._emit(CommandEvent(UNSET, t, *r.command, "real"))
        elif kind == "send":
            number = self.numbers[r.message] = self.count
            self.count += 1
            sent = self.sends[r.message] = SendEvent(UNSET, t, e.src, e.dst, number, e.msg,
                                                     self.at(arrived.get(r.message, r.t)), e.rule)
            self._emit(sent)
        elif kind == "deliver" and r.message in self.numbers:
            self._emit(DeliverEvent(UNSET, t, self.numbers[r.message], e.src, e.dst))
        elif kind == "drop" and r.message in self.numbers:
            self._emit(DropEvent(UNSET, t, self.numbers[r.message], e.src, e.dst, e.reason))
        elif kind == "duplicate" and r.message in self.numbers:  # (its sender sent it twice: a second arrival)
            self._emit(DuplicateEvent(UNSET, t, self.numbers[r.message], e.src, e.dst, t))
        elif kind == "timer_set":
            self._emit(TimerSetEvent(UNSET, t, node, e.name, max(t, self.at(e.fires)), e.rule))
        elif kind == "leave":
            self._emit(LeaveEvent(UNSET, t, node))
            self.down.add(node)  # (its state, left, is its next line)
        elif kind == "state":
            self.epochs[node] = e.epoch
            self._emit(StateEvent(UNSET, t, node, e.status, e.leader, e.role, e.epoch, e.rule))
        elif kind == "cs":
            self._emit(CsEvent(UNSET, t, node, e.state, e.stamp, e.rule))
        elif kind == "timer":
            self._emit(TimerEvent(UNSET, t, node, e.name))
        elif kind == "timer_cancel":
            self._emit(TimerCancelEvent(UNSET, t, node, e.name, e.rule))
        elif kind == "election_start":
            self._emit(ElectionStartEvent(UNSET, t, node, e.rule))


def _causal_times(per_node: dict[int, list[Line]], settled_sends: dict[tuple[int, int], float],
                  latest: dict[int, float]) -> None:
    """Wall times made consistent with causality (two machines' clocks disagree): a
    delivery at least a microsecond after its send, and each node's own lines never
    going back in time (`latest`: each node's last time before these lines); repeated
    until nothing moves (a send moved later can move its delivery in turn)."""
    for _ in range(len(per_node) + 1):
        sends = ChainMap({r.message: r.t for lines in per_node.values() for r in lines if r.kind == "send"},
                         settled_sends)
        moved = False
        for node, lines in per_node.items():
            last = latest.get(node, -math.inf)
            for r in lines:
                t = r.t
                if r.kind == "deliver" and r.message in sends:
                    t = max(t, sends[r.message] + 1e-6)
                t = max(t, last)
                if t != r.t:
                    r.t, moved = t, True
                last = t
        if not moved:
            return


class _Lives:
    """Which nodes are up, as their own lines tell: for the crashes no cluster logged
    (nodes run by hand). A node that boots again with no crash or leave since its last
    boot was killed without a word, and is down from its last line; one stopped
    (SIGTERM) and started again was down from its stop. (A last stop is the end of the
    run: the node was up until then, as a simulated run ends.)"""

    def __init__(self):
        self.alive: set[int] = set()
        self.last: dict[int, float] = {}
        self.stopped: dict[int, float] = {}

    def copy(self) -> _Lives:
        twin = _Lives()
        twin.alive, twin.last, twin.stopped = set(self.alive), dict(self.last), dict(self.stopped)
        return twin

    def step(self, r: Line) -> Line | None:
        """Take a line (in time order); the crash its start tells of, if any."""
        node, kind, crash = r.node, r.kind, None
        if kind in STARTS:
            if node in self.stopped:
                crash = Line(self.stopped.pop(node) + 1e-6, node, "crash", unsaid=True)
            elif node in self.alive:  # (a microsecond after its last line: after it, whatever the sort's ties)
                crash = Line(self.last[node] + 1e-6, node, "crash", unsaid=True)
            self.alive.add(node)
        elif kind == STOP:
            self.stopped[node] = r.t
            self.alive.discard(node)
        elif kind in ("crash", "leave"):
            self.alive.discard(node)
        if kind != "crash":  # (the cluster's crash lines are its own, not the node's)
            self.last[node] = r.t
        return crash
