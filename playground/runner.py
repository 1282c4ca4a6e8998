"""One node's trio task: it owns the node's state machine, timers and up/down flag.

The cluster hands the task a batch of work items, all before `window_end`, in
(time, rank, seq) order. The task runs them through the state machine and records trace
events in the order things happened at this node. It does not number events or messages,
draw delays or touch other nodes: the cluster does that when it merges every node's
records, so nothing depends on which task trio happened to run first.

A timer the node sets that fires inside the window is run here, in order, because
nothing from another node can reach this one before the window ends (the window is no
longer than the minimum link delay). Later timers go back to the cluster's queue.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

import trio

from protocol import CancelTimer, Config, ElectionStarted, Node, Receive, Send, SetTimer, Start, Suspect, TimerFired

from .config import to_seconds, to_us
from .events import (
    CrashEvent,
    DeliverEvent,
    DropEvent,
    ElectionStartEvent,
    Event,
    RecoverEvent,
    SendEvent,
    StartEvent,
    StateEvent,
    TimerCancelEvent,
    TimerEvent,
    TimerSetEvent,
)

# Ranks order the work due at one instant: a message that arrives exactly when a
# timeout expires is in time ("answered within T" includes T), so deliveries go first.
DELIVERY, TIMER = 0, 1

# Timers set and run inside one window sort after everything queued before the window
# (whose seqs are all smaller), exactly as they would had they gone through the queue.
_LOCAL_SEQ_BASE = 1 << 62

DROPPED_RECEIVER_DOWN = "receiver down"

_UNSET = 0  # seq, id and arrival of a recorded event until the cluster stamps them


class NodeRunner:
    def __init__(self, node_id: int, algorithm: type[Node], ids: tuple[int, ...], config: Config):
        self.id = node_id
        self.algorithm = algorithm
        self.ids = ids
        self._peers = frozenset(ids) - {node_id}
        self.config = config
        self.storage = algorithm.storage_class()  # survives crashes; the machine does not
        self.machine: Node | None = None
        self.timers: dict[str, tuple[int, int]] = {}  # name -> (fires at, generation)
        self.records: list[Event] = []
        # Timers that fire after the window: (their TimerSetEvent, name, generation).
        self.late_timers: list[tuple[TimerSetEvent, str, int]] = []
        self._generation = 0
        self._local_seq = _LOCAL_SEQ_BASE
        self._local: list[tuple] = []
        self._state = (algorithm.down_status, None, False)
        self._now = 0
        self._t = 0.0
        self._window_end = 0
        self.mailbox, self._inbox = trio.open_memory_channel[tuple[list[tuple], int]](math.inf)

    @property
    def up(self) -> bool:
        return self.machine is not None

    @property
    def state(self) -> tuple[str, int | None, bool]:
        """(status, leader, normal), as last reported."""
        return self._state

    @property
    def epoch(self) -> int:
        return self.storage.epoch

    async def serve(self, finished: Callable[[], None]) -> None:
        async for items, window_end in self._inbox:
            self.run_batch(items, window_end)
            finished()

    def run_batch(self, items: list[tuple], window_end: int) -> None:
        """Run work items (time, rank, seq, payload), sorted, all before window_end,
        merged with the timers this node sets and runs inside the window."""
        self.records = []
        self.late_timers = []
        self._window_end = window_end
        local = self._local
        for item in items:
            while local and local[0] < item:
                self._run(heapq.heappop(local))
            self._run(item)
        while local:
            self._run(heapq.heappop(local))

    def _run(self, item: tuple) -> None:
        now, _, _, payload = item
        if now != self._now:
            self._now, self._t = now, to_seconds(now)
        try:
            self._handle(payload)
        except Exception as e:  # a protocol bug: say where it happened
            e.add_note(f"{self.algorithm.name} node {self.id} at t={self._t:g}, handling {payload!r}")
            raise
        m = self.machine
        state = (m.status, m.leader, m.normal) if m is not None else (self.algorithm.down_status, None, False)
        if state != self._state:
            # The epoch rides along, but a change of epoch alone is not reported: nodes
            # adopt epochs from nearly every message of an election, and a state event
            # for each would add half again to the trace. The panel shows it live.
            self._state = state
            self.records.append(StateEvent(_UNSET, self._t, self.id, *state, self.storage.epoch))

    def _handle(self, payload: tuple) -> None:
        op = payload[0]
        record = self.records.append
        if op == "deliver":
            _, msg_id, src, msg = payload
            if self.machine is None:
                record(DropEvent(_UNSET, self._t, msg_id, src, self.id, DROPPED_RECEIVER_DOWN))
                return
            record(DeliverEvent(_UNSET, self._t, msg_id, src, self.id))
            self._apply(self.machine.step(Receive(src, msg)))
        elif op == "timer":
            _, name, generation = payload
            if self.machine is not None and self.timers.get(name) == (self._now, generation):
                del self.timers[name]
                record(TimerEvent(_UNSET, self._t, self.id, name))
                self._apply(self.machine.step(TimerFired(name)))
        elif op == "start" or op == "recover":
            if self.machine is None:
                self.machine = self.algorithm(self.id, self.ids, self.config, self.storage)
                record((StartEvent if op == "start" else RecoverEvent)(_UNSET, self._t, self.id))
                self._apply(self.machine.step(Start()))
        elif op == "crash":
            if self.machine is not None:
                self.machine = None
                self.timers.clear()  # volatile; their queued firings no longer match
                record(CrashEvent(_UNSET, self._t, self.id))
        elif op == "elect":
            if self.machine is not None:
                self._apply(self.machine.step(Suspect()))
        elif op == "config":
            self.config = payload[1]
            if self.machine is not None:
                self.machine.reconfigure(self.config)
        else:
            raise ValueError(f"unknown work item {payload!r}")

    def _apply(self, outputs: list) -> None:
        record = self.records.append
        for out in outputs:
            kind = type(out)
            if kind is Send:
                if out.dst not in self._peers:
                    raise ValueError(f"{self.algorithm.name} node {self.id} sent to unknown node {out.dst}")
                record(SendEvent(_UNSET, self._t, self.id, out.dst, _UNSET, out.msg, _UNSET))
            elif kind is SetTimer:
                self._set_timer(out.name, self._now + to_us(out.delay))
            elif kind is CancelTimer:
                if self.timers.pop(out.name, None) is not None:
                    record(TimerCancelEvent(_UNSET, self._t, self.id, out.name))
            elif kind is ElectionStarted:
                record(ElectionStartEvent(_UNSET, self._t, self.id))
            else:
                raise TypeError(f"{self.algorithm.name} node {self.id} returned {out!r}")

    def _set_timer(self, name: str, fires: int) -> None:
        self._generation += 1
        self.timers[name] = (fires, self._generation)
        event = TimerSetEvent(_UNSET, self._t, self.id, name, to_seconds(fires))
        self.records.append(event)
        if fires < self._window_end:
            self._local_seq += 1
            heapq.heappush(self._local, (fires, TIMER, self._local_seq, ("timer", name, self._generation)))
        else:
            self.late_timers.append((event, name, self._generation))

    def snapshot(self) -> dict[str, object]:
        """What a node panel shows: protocol variables, safe storage, running timers."""
        status, leader, normal = self._state
        return {
            "id": self.id,
            "up": self.up,
            "status": status,
            "leader": leader,
            "normal": normal,
            "epoch": self.storage.epoch,
            "variables": self.machine.variables() if self.machine is not None else {},
            "storage": self.storage.as_dict(),
            "timers": {name: to_seconds(fires) for name, (fires, _) in sorted(self.timers.items())},
        }
